// The manifest swap's lock and its promise that a published manifest is
// never undone by what fails after it (src/shard/manifest.ts).
import { mkdirSync, readFileSync, readdirSync, existsSync, utimesSync, writeFileSync } from 'node:fs';
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
    expect(warnings[0]).toMatch(/^RRSCAN_SHARD_NOT_DELETED: .*could not delete old\.rrs/);
    expect(existsSync(path.join(dir, 'manifest.lock'))).toBe(false);
  });
});

describe('what a dead run left behind', () => {
  it('is deleted at the next swap: pid-named files of dead writers only', async () => {
    const dir = temp.fresh();
    mkdirSync(dir, { recursive: true });
    const dead = 2147483646; // no such process
    const files = {
      deadShard: `1700000000-${dead}-0123456789ab.rrs`,
      deadTemp: `.1700000000-${dead}-0123456789ab.rrs.tmp`,
      deadManifestTemp: `.manifest.json.${dead}.tmp`,
      // A run still going: its spilled shards wait for its own publish.
      runningShard: `1700000000-${process.ppid}-0123456789ab.rrs`,
      ownShard: `1700000000-${process.pid}-0123456789ab.rrs`,
      // Names this rule does not know are never touched.
      legacyShard: '1700000000-0123456789ab.rrs',
      other: 'notes.txt',
    };
    for (const f of Object.values(files)) writeFileSync(path.join(dir, f), 'x');
    await updateManifest(dir, () => [entry('kept.rrs')]);
    expect(readdirSync(dir).sort()).toEqual([
      files.runningShard, files.ownShard, files.legacyShard, 'manifest.json', files.other,
    ].sort());
  });
});
