// A shard that leaves the manifest (compaction merged it and unlinked its
// file) is let go by the server: once no search holds it, no thread of the
// server maps it any more, so its disk space and page cache are freed. A
// search that holds it when the manifest changes keeps reading it safely
// until it ends. Checked in /proc/<pid>/maps of the real server.

import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addKey, cli, get, ingestNdjson, removeDir, startServer, tempDir, type Server } from '../helpers/rrscan.js';

const NAMES = 40_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let dir: string;
let server: Server;
let H: Record<string, string>;

const records = (prefix: string) => Array.from({ length: NAMES }, (_, i) => ({
  count: 1, time_first: 1_600_000_000, time_last: 1_600_000_000 + i, rrname: `${prefix}${i}.release.example.`, rrtype: 'A',
  bailiwick: 'example.', rdata: [`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`],
}));

/** Shard files of the data directory that the server process maps, and which of them are unlinked. */
function mappedShards(): { live: string[]; deleted: string[] } {
  const lines = readFileSync(`/proc/${server.proc.pid}/maps`, 'utf8').split('\n').filter((l) => l.includes(dir) && l.includes('.rrs'));
  const files = (deleted: boolean) => [...new Set(lines.filter((l) => l.endsWith('(deleted)') === deleted)
    .map((l) => path.basename(l.replace(/ \(deleted\)$/, '').split(/\s+/).pop()!)))].sort();
  return { live: files(false), deleted: files(true) };
}

const manifestShards = () => (JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { shards: { file: string }[] })
  .shards.map((s) => s.file).sort();

async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}: ${JSON.stringify(mappedShards())}`);
    await sleep(50);
  }
}

beforeAll(async () => {
  dir = tempDir('rrscan-release-');
  ingestNdjson(dir, records('a'), 'a.ndjson');
  ingestNdjson(dir, records('b'), 'b.ndjson');
  H = { 'X-API-Key': addKey(dir, ['--unlimited', '--results-max', '1000000']) };
  server = await startServer(dir);
});

afterAll(async () => {
  await server?.close();
  removeDir(dir);
});

describe.skipIf(process.platform !== 'linux')('shards that left the manifest', () => {
  it('stay mapped while a search reads them, and are let go when it ends', async () => {
    const before = manifestShards();
    expect(before).toHaveLength(2);
    // Every worker attaches both shards.
    for (let i = 0; i < 4; i++) expect((await get(server, '/pdns/v2/regex/rrnames/release?limit=100', H)).status).toBe(200);
    expect(mappedShards().live).toEqual(before);

    // A reader that stops reading a large answer holds its search, and so its shards.
    let paused!: http.IncomingMessage;
    const req = http.get({ port: server.port, host: '127.0.0.1', path: '/pdns/v2/regex/rrnames/release?limit=0', headers: H },
      (res) => { paused = res; res.pause(); });
    await until('the paused search has begun', () => paused !== undefined);

    const compacted = cli(['compact', '--data', dir]);
    expect(compacted.code, compacted.stderr).toBe(0);
    const after = manifestShards();
    expect(after).toHaveLength(1);
    await until('the server has mapped the compacted shard', () => mappedShards().live.includes(after[0]!));
    // The old files are unlinked, but the paused search still holds them.
    expect(mappedShards().deleted).toEqual(before);

    req.destroy();
    await until('no unlinked shard is mapped', () => mappedShards().deleted.length === 0);
    expect(mappedShards()).toEqual({ live: after, deleted: [] });
    // And the server answers from the compacted shard as it did before.
    const r = await get(server, '/pdns/v2/lookup/rrset/name/a7.release.example/A', H);
    expect(r.status).toBe(200);
    expect(r.body).toContain('"rrname":"a7.release.example."');
  });

  it('with no search in flight, an idle server lets go at the reload', async () => {
    ingestNdjson(dir, records('c'), 'c.ndjson');
    await until('the new shard is mapped', () => mappedShards().live.length === 2);
    const compacted = cli(['compact', '--data', dir]);
    expect(compacted.code, compacted.stderr).toBe(0);
    const after = manifestShards();
    const only = JSON.stringify({ live: after, deleted: [] });
    await until('only the compacted shard is mapped', () => JSON.stringify(mappedShards()) === only);
  });
});
