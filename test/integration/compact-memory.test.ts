// Compaction within a memory bound (compact --memory-mb, "One box, 100
// million RRsets" issue): the bound sizes the output shards (a merge holds
// one output shard's table and arrays at a time), and background compaction
// merges sealed shards in a top tier into shards of that size.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/config/limits.js';
import { BIN, cliOk, ingestNdjson, tempPaths } from '../helpers/rrscan.js';

const paths = tempPaths();
afterAll(() => paths.removeAll());

const record = (i: number) => ({
  count: 1, time_first: 1_600_000_000, time_last: 1_600_000_000 + i, rrname: `n${i}.memory.example.`, rrtype: 'A',
  bailiwick: 'example.', rdata: [`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`],
});
const records = (from: number, n: number) => Array.from({ length: n }, (_, k) => record(from + k));
const shardsOf = (dir: string) =>
  (JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { shards: { rrsets: number }[] }).shards.map((s) => s.rrsets);
/** The smallest budget the flag takes: room for this many RRsets a shard. */
const SMALLEST_MB = Math.ceil(LIMITS.compactBaseBytes / 1_048_576) + 64;
const heldAtSmallest = Math.floor((SMALLEST_MB * 1_048_576 - LIMITS.compactBaseBytes) / LIMITS.mergeBytesPerRrsetHeld);

describe('compact --memory-mb', () => {
  it('cuts the output into shards a merge of that memory can hold', () => {
    const dir = paths.fresh();
    const n = heldAtSmallest * 2 + 1_000;
    ingestNdjson(dir, records(0, Math.floor(n / 2)), 'a.ndjson');
    ingestNdjson(dir, records(Math.floor(n / 2), n - Math.floor(n / 2)), 'b.ndjson');
    cliOk(['compact', '--data', dir, '--workers', '1', '--memory-mb', String(SMALLEST_MB)]);
    expect(shardsOf(dir)).toEqual([heldAtSmallest, heldAtSmallest, n - 2 * heldAtSmallest]);
  }, 120_000);

  it('refuses a budget below what a compaction needs besides its merge', () => {
    const dir = paths.fresh();
    expect(() => cliOk(['compact', '--data', dir, '--memory-mb', '100'])).toThrow(/--memory-mb must be an integer from/);
  });
});

describe('compact --auto: the top tier', () => {
  it('merges sealed shards under half the top shard size, k at a time, into one', async () => {
    const dir = paths.fresh();
    // --merge-rrsets-max 4000: shards of 1,000 RRsets or more are sealed, so no size tier merges these.
    for (let i = 0; i < 4; i++) ingestNdjson(dir, records(i * 2_000, 2_000), `s${i}.ndjson`);
    expect(shardsOf(dir)).toEqual([2_000, 2_000, 2_000, 2_000]);
    const proc = spawn(process.execPath, [BIN, 'compact', '--data', dir, '--auto', '--merge-rrsets-max', '4000',
      '--memory-mb', String(SMALLEST_MB)], { env: { ...process.env, RRSCAN_LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    proc.stderr.on('data', (d: Buffer) => { log += d.toString(); });
    try {
      for (const end = Date.now() + 30_000; shardsOf(dir).length !== 1 && Date.now() < end;) await new Promise((r) => setTimeout(r, 50));
      expect(shardsOf(dir)).toEqual([8_000]);
      for (const end = Date.now() + 5_000; !log.includes('"msg":"compaction merged"') && Date.now() < end;) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const merged = log.split('\n').filter((l) => l.includes('"msg":"compaction merged"')).map((l) => JSON.parse(l) as { tier: unknown });
      expect(merged.map((m) => m.tier)).toEqual(['top']);
    } finally {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
    }
  }, 60_000);
});
