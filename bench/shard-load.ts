// Shard load time and resident memory with the worker pool (issue 2): the
// shards must be shared by the workers, not copied (target: RSS at most 1.3x
// the shard bytes once every page has been touched).
//
//   npm run build && node dist/bench/shard-load.js [--data bench/out/flex-10000000] [--threads 2]
// (build the data with bench/flex.ts first)

import path from 'node:path';
import { readManifest } from '../src/shard/manifest.js';
import { ShardSet } from '../src/search/local/shard-set.js';
import { ScanPool } from '../src/search/local/scan-pool.js';
import type { WorkerMessage } from '../src/search/local/scan-protocol.js';
import { OUT, arg, environment, fmt } from './common.js';

const dataDir = path.resolve(arg('data', path.join(OUT, 'flex-10000000')));
const threads = Number(arg('threads', '2'));

async function main(): Promise<void> {
  const m = readManifest(dataDir);
  const bytes = m.shards.reduce((a, s) => a + s.bytes, 0);
  console.log(`command: node dist/bench/shard-load.js --data ${dataDir} --threads ${threads}`);
  console.log(`env: ${environment()}`);
  const rss0 = process.memoryUsage().rss;
  const t0 = performance.now();
  const set = new ShardSet(dataDir);
  const snap = await set.open();
  const loadMs = performance.now() - t0;
  const pool = new ScanPool({ threads });
  // Touch every page from every worker: a scan that matches nothing reads each blob end to end.
  const t1 = performance.now();
  await Promise.all(snap.shards.flatMap((s) => Array.from({ length: threads }, () => new Promise<void>((resolve) => {
    const run = pool.run({
      kind: 'flex', shards: [s.handle()], target: 'rrnames', method: 'regex', pattern: 'zz{9}q',
      exclude: undefined, typeFilter: 'all', fence: {}, others: [], from: '', to: undefined, want: 1,
    }, (msg: WorkerMessage) => { if (msg.type !== 'batch') resolve(); });
    void run.done;
  }))));
  const scanMs = performance.now() - t1;
  const rss = process.memoryUsage().rss;
  console.log(`data: ${m.shards.length} shard(s), ${fmt(bytes / 2 ** 20)} MiB`);
  console.log(`load (map + verify checksums): ${fmt(loadMs, 0)} ms (${fmt(bytes / 2 ** 20 / (loadMs / 1000), 0)} MiB/s)`);
  console.log(`full scan by ${threads} workers: ${fmt(scanMs, 0)} ms`);
  console.log(`RSS: ${fmt(rss / 2 ** 20)} MiB (baseline before load ${fmt(rss0 / 2 ** 20)} MiB); ` +
    `RSS/shard bytes = ${fmt(rss / bytes, 2)} (target <= 1.3)`);
  await pool.close();
  await set.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
