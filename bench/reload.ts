// Hot reload and the serving thread: the longest a ping waits while a
// running server takes in a new shard (open, map, checksum of every byte).
// The new shard is a copy of the dataset's shard under a new name, published
// by a manifest swap; pings run back to back on one kept-alive connection
// from before the swap until well after it.
//
//   npm run build && node dist/bench/reload.js [--data bench/out/flex-2000000] [--seconds 3]
// (build the data with bench/flex.ts first). Target: no ping waits more than
// a few milliseconds beyond its idle latency (the issue's "nothing may hold
// the front-end thread"); opening on the serving thread cost ~170 ms per GB.

import { copyFileSync, linkSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { OUT, arg, environment, percentile, startServer, timedGet } from './common.js';

interface Entry {
  file: string;
  bytes: number;
}

const data = path.resolve(arg('data', path.join(OUT, 'flex-2000000')));
const seconds = Number(arg('seconds', '3'));
const manifest = JSON.parse(readFileSync(path.join(data, 'manifest.json'), 'utf8')) as { shards: Entry[] };
const shard = manifest.shards[0]!;

/** Back-to-back pings for `ms`; `midway` runs 100 ms in. */
async function pingFor(ms: number, midway: () => void): Promise<number[]> {
  const out: number[] = [];
  const end = performance.now() + ms;
  const timer = setTimeout(midway, 100);
  while (performance.now() < end) out.push((await timedGet(server.port, '/pdns/v2/ping', {})).ms);
  clearTimeout(timer);
  return out.sort((a, b) => a - b);
}

function summary(ms: number[]): string {
  const p = (q: number) => percentile(ms, q).toFixed(2);
  return `${ms.length} pings, p50 ${p(50)} ms, p99 ${p(99)} ms, max ${ms[ms.length - 1]!.toFixed(1)} ms`;
}

const dir = mkdtempSync(path.join(OUT, 'reload-'));
linkSync(path.join(data, shard.file), path.join(dir, shard.file));
writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ version: 1, generation: 1, shards: [shard] }));
const server = await startServer(dir);
try {
  for (let i = 0; i < 50; i++) await timedGet(server.port, '/pdns/v2/ping', {});
  const copy = shard.file.replace(/\.rrs$/, '-copy.rrs');
  copyFileSync(path.join(data, shard.file), path.join(dir, copy));
  const idle = await pingFor(seconds * 1000, () => undefined);
  const during = await pingFor(seconds * 1000, () => {
    const next = JSON.stringify({ version: 1, generation: 2, shards: [shard, { ...shard, file: copy }] });
    writeFileSync(path.join(dir, 'manifest.tmp'), next);
    renameSync(path.join(dir, 'manifest.tmp'), path.join(dir, 'manifest.json'));
  });
  console.log(`command: node dist/bench/reload.js --data ${path.relative(process.cwd(), data)} --seconds ${seconds}`);
  console.log(`env: ${environment()}`);
  console.log(`new shard: ${(shard.bytes / 2 ** 20).toFixed(0)} MiB`);
  console.log(`baseline, no reload:    ${summary(idle)}`);
  console.log(`while the shard loads:  ${summary(during)}`);
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
