// The manifest swap's lock and its promise that a published manifest is
// never undone by what fails after it (src/shard/manifest.ts).
import { mkdirSync, readFileSync, existsSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readManifest, updateManifest, type ShardEntry } from '../../../src/shard/manifest.js';
import { tempPaths } from '../../helpers/rrscan.js';

const temp = tempPaths();
afterAll(temp.removeAll);

const entry = (file: string): ShardEntry => ({ file, rrsets: 1, bytes: 1, createdAt: 1_700_000_000, source: 'test' });

function lockAged(dir: string, text: string, ageSeconds: number): void {
  const lock = path.join(dir, 'manifest.lock');
  writeFileSync(lock, text);
  const t = Date.now() / 1000 - ageSeconds;
  utimesSync(lock, t, t);
}

describe('manifest lock', () => {
  it('takes over a lock whose holder is gone', async () => {
    const dir = temp.fresh();
    mkdirSync(dir, { recursive: true });
    lockAged(dir, '2147483646', 0); // no such process
    const m = await updateManifest(dir, () => [entry('a.rrs')]);
    expect(m.generation).toBe(1);
    expect(existsSync(path.join(dir, 'manifest.lock'))).toBe(false);
  });

  it('takes over an empty lock left long ago (a writer killed before it wrote its pid)', async () => {
    const dir = temp.fresh();
    mkdirSync(dir, { recursive: true });
    lockAged(dir, '', 60);
    const t = performance.now();
    await updateManifest(dir, () => [entry('a.rrs')]);
    expect(performance.now() - t).toBeLessThan(5_000);
    expect(readManifest(dir).shards.map((s) => s.file)).toEqual(['a.rrs']);
  });
});

describe('after the swap', () => {
  it('a replaced shard that cannot be deleted is a warning, not a failure: the new manifest stands', async () => {
    const dir = temp.fresh();
    mkdirSync(dir, { recursive: true });
    await updateManifest(dir, () => [entry('old.rrs')]);
    // A directory where the old shard file was: rm() without `recursive` refuses it.
    mkdirSync(path.join(dir, 'old.rrs', 'inner'), { recursive: true });
    const warnings: string[] = [];
    const onWarning = (w: Error & { code?: string }) => warnings.push(`${w.code}: ${w.message}`);
    process.on('warning', onWarning);
    try {
      const m = await updateManifest(dir, () => [entry('new.rrs')]);
      expect(m.generation).toBe(2);
      await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
    } finally {
      process.off('warning', onWarning);
    }
    expect(JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')).shards.map((s: ShardEntry) => s.file)).toEqual(['new.rrs']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^RRSCAN_SHARD_NOT_DELETED: .*could not delete replaced shard old\.rrs/);
    expect(existsSync(path.join(dir, 'manifest.lock'))).toBe(false);
  });
});
