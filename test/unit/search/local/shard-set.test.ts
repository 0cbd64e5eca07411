// The shard set under real damage, in this process: shard files truncated and
// overwritten in place while mapped, replaced by good copies, listed by a
// manifest that cannot be trusted, and rotten where no file time moved (the
// scrub). Each case is a real file operation on real shards written by the
// real `rrscan ingest`; nothing is mocked. The same cases over HTTP, against a
// real server process, are in test/integration/damaged-shards.test.ts; here
// the order of events is exact (no watcher, no timer: check() is called).

import {
  closeSync, copyFileSync, cpSync, openSync, readFileSync, renameSync, statSync, truncateSync, writeFileSync, writeSync,
} from 'node:fs';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { STREAM_MESSAGES } from '../../../../src/errors/catalogue.js';
import type { Log } from '../../../../src/lib/log.js';
import { ShardScrubber } from '../../../../src/search/local/shard-scrub.js';
import { ShardSet } from '../../../../src/search/local/shard-set.js';
import type { ShardReader } from '../../../../src/shard/shard-reader.js';
import { ingestNdjson, tempPaths } from '../../../helpers/rrscan.js';

const paths = tempPaths();
afterAll(() => paths.removeAll());

/** A Log that keeps what it is told, for assertions. */
function recordingLog(): Log & { lines: { level: string; msg: string; fields: object }[] } {
  const lines: { level: string; msg: string; fields: object }[] = [];
  const at = (level: string) => (fields: object, msg: string) => lines.push({ level, msg, fields });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

const records = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({
  count: 1, time_first: 1_600_000_000, time_last: 1_600_000_000 + i, rrname: `${prefix}${i}.damage.example.`, rrtype: 'A',
  bailiwick: 'example.', rdata: [`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`],
}));

interface Fixture {
  dir: string;
  /** Shard file names in manifest order: a's, then b's. */
  files: [string, string];
  /** Pristine copies of both, beside the directory. */
  copies: [string, string];
}

/** Two shards written once by the real ingest; each test damages a copy of them. */
let pristine: string | undefined;

function fixture(): Fixture {
  if (pristine === undefined) {
    pristine = paths.fresh();
    ingestNdjson(pristine, records('a', 20_000), 'a.ndjson');
    ingestNdjson(pristine, records('b', 20_000), 'b.ndjson');
  }
  const dir = paths.fresh();
  cpSync(pristine, dir, { recursive: true });
  const files = (JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { shards: { file: string }[] }).shards
    .map((s) => s.file) as [string, string];
  expect(files).toHaveLength(2);
  const copies = files.map((f) => {
    const copy = paths.keep(path.join(dir, '..', `${path.basename(dir)}-${f}`));
    copyFileSync(path.join(dir, f), copy);
    return copy;
  }) as [string, string];
  return { dir, files, copies };
}

/** Every owner name of a shard, read through its mapping (touches every page of the owners blob). */
const ownerCount = (s: ShardReader): number => [...s.ownersMatching({ mode: 'under', name: '.' })].length;

/** Overwrites 4 KB with 0xAA at each of `offsets`, in place (the same inode, as `dd conv=notrunc` does). */
function overwrite(file: string, offsets: readonly number[]): void {
  const fd = openSync(file, 'r+');
  try {
    for (const at of offsets) writeSync(fd, Buffer.alloc(4096, 0xaa), 0, 4096, at);
  } finally {
    closeSync(fd);
  }
}

let f: Fixture;
let log: ReturnType<typeof recordingLog>;
let set: ShardSet;

beforeEach(async () => {
  f = fixture();
  log = recordingLog();
  set = new ShardSet(f.dir, log);
  await set.open();
  return () => set.close();
});

describe('a shard truncated under its mapping', () => {
  it('reads zeros instead of killing the process, fails the searches that held it, and is quarantined', () => {
    const lease = set.lease();
    const a = set.current().shards[0]!;
    expect(ownerCount(a)).toBe(20_000);
    expect(set.damageOf(lease)).toBeUndefined();

    truncateSync(path.join(f.dir, f.files[0]), 4096);
    // Without the addon's SIGBUS handler this read kills the test process (exit 135).
    expect(ownerCount(a)).toBe(0);
    expect(set.damageOf(lease)).toBe(STREAM_MESSAGES.DATA_DAMAGED);

    const now = set.current();
    expect(now.shards.map((s) => s.name)).toEqual([f.files[1]]);
    expect(ownerCount(now.shards[0]!)).toBe(20_000);
    const stats = set.stats();
    expect(stats.faults).toBeGreaterThanOrEqual(1);
    expect(stats.quarantined.map((q) => [q.file, q.reason])).toEqual([
      [f.files[0], 'read past its end: the file shrank under its mapping (truncated in place)'],
    ]);
    expect(set.degraded()).toBe(`1 shard quarantined (${f.files[0]}: read past its end: the file shrank under its mapping ` +
      '(truncated in place))');
    expect(set.notReady()).toBeUndefined();
    expect(log.lines.filter((l) => l.level === 'error').map((l) => l.msg)).toEqual([
      'shard quarantined: out of service until its file changes',
    ]);
    // A search that leased after the quarantine reads healthy shards only.
    expect(set.damageOf(set.lease())).toBeUndefined();
    set.release(lease);
  });

  it('is served again once a good copy is renamed over it, with no manifest change', async () => {
    truncateSync(path.join(f.dir, f.files[0]), 100);
    ownerCount(set.current().shards[0]!);
    expect(set.damageOf(set.lease())).toBe(STREAM_MESSAGES.DATA_DAMAGED);
    expect(await set.check()).toBe(false); // the truncated file fails to verify: still out

    const tmp = path.join(f.dir, '.repair.tmp');
    copyFileSync(f.copies[0], tmp);
    renameSync(tmp, path.join(f.dir, f.files[0]));
    expect(await set.check()).toBe(true);
    expect(set.current().shards.map((s) => s.name)).toEqual(f.files);
    expect(ownerCount(set.current().shards[0]!)).toBe(20_000);
    expect(set.stats().quarantined).toEqual([]);
    expect(set.degraded()).toBeUndefined();
    expect(log.lines.at(-2)?.msg).toBe('shard back in service: it verified');
  });
});

describe('a shard overwritten in place', () => {
  it('is found at the next check, never served again, and searches that held it fail', async () => {
    const lease = set.lease();
    const size = statSync(path.join(f.dir, f.files[1])).size;
    overwrite(path.join(f.dir, f.files[1]), [4096, Math.floor(size / 3), Math.floor(size / 2), size - 8192]);
    expect(await set.check()).toBe(true);
    expect(set.current().shards.map((s) => s.name)).toEqual([f.files[0]]);
    expect(set.damageOf(lease)).toBe(STREAM_MESSAGES.DATA_DAMAGED);
    expect(set.stats().quarantined.map((q) => [q.file, q.reason])).toEqual([
      [f.files[1], `${path.join(f.dir, f.files[1])}: corrupt shard: body checksum mismatch`],
    ]);
    // Checked again with nothing changed: it stays out, and says so once.
    expect(await set.check()).toBe(false);
    expect(log.lines.filter((l) => l.level === 'error')).toHaveLength(1);
    set.release(lease);
  });

  it('is served again when the file is restored in place with its original bytes', async () => {
    const file = path.join(f.dir, f.files[1]);
    overwrite(file, [8192]);
    await set.check();
    expect(set.current().shards).toHaveLength(1);
    writeFileSync(file, readFileSync(f.copies[1])); // the same inode, rewritten: its times move again
    expect(await set.check()).toBe(true);
    expect(set.current().shards.map((s) => s.name)).toEqual(f.files);
  });
});

describe('a manifest that cannot be trusted', () => {
  const manifestFile = () => path.join(f.dir, 'manifest.json');

  it('is refused whole; the last good one serves; fixing it is enough', async () => {
    const good = readFileSync(manifestFile(), 'utf8');
    const m = JSON.parse(good) as { generation: number; shards: { file: string }[] };
    m.shards[0]!.file = `./${m.shards[0]!.file}`;
    m.generation++;
    writeFileSync(manifestFile(), JSON.stringify(m));
    expect(await set.check()).toBe(false);
    expect(set.current().shards.map((s) => s.name)).toEqual(f.files);
    const refused = `${manifestFile()}: manifest refused: shard 0: "./${f.files[0]}" is not a bare shard file name of the data directory`;
    expect(set.degraded()).toBe(`${refused}; serving the last good manifest`);
    expect(set.stats().reloadFailures).toBe(1);
    expect(log.lines.at(-1)).toMatchObject({ level: 'error', msg: 'manifest refused; still serving the last good one' });

    for (const bad of ['{"version":1,', JSON.stringify({ ...m, shards: [{ file: '../x.rrs' }] }),
      JSON.stringify({ ...m, shards: [{ file: f.files[0] }, { file: f.files[0] }] })]) {
      writeFileSync(manifestFile(), bad);
      expect(await set.check()).toBe(false);
      expect(set.current().shards.map((s) => s.name)).toEqual(f.files);
    }

    const fixed = JSON.parse(good) as { generation: number };
    fixed.generation += 5;
    writeFileSync(manifestFile(), JSON.stringify(fixed));
    expect(await set.check()).toBe(true);
    expect(set.current().generation).toBe(fixed.generation);
    expect(set.current().shards.map((s) => s.name)).toEqual(f.files);
    expect(set.degraded()).toBeUndefined();
    expect(log.lines.at(-2)?.msg).toBe('manifest accepted again');
  });

  it('at start-up: nothing is served, and /readyz says why', async () => {
    writeFileSync(manifestFile(), JSON.stringify({ version: 1, generation: 3, shards: [{ file: `/etc/${f.files[0]}` }] }));
    const fresh = new ShardSet(f.dir, recordingLog());
    try {
      expect((await fresh.open()).shards).toEqual([]);
      expect(fresh.notReady()).toBe(`${manifestFile()}: manifest refused: shard 0: "/etc/${f.files[0]}" is not a bare shard ` +
        'file name of the data directory');
    } finally {
      await fresh.close();
    }
  });
});

describe('a corrupt shard at start-up', () => {
  it('is quarantined and the others serve', async () => {
    overwrite(path.join(f.dir, f.files[0]), [4096]);
    const l = recordingLog();
    const fresh = new ShardSet(f.dir, l);
    try {
      expect((await fresh.open()).shards.map((s) => s.name)).toEqual([f.files[1]]);
      expect(fresh.notReady()).toBeUndefined();
      expect(fresh.degraded()).toBe(`1 shard quarantined (${f.files[0]}: ${path.join(f.dir, f.files[0])}: corrupt shard: body checksum mismatch)`);
      expect(l.lines.filter((x) => x.level !== 'info')).toEqual([{
        level: 'error', msg: 'shard quarantined: out of service until its file changes',
        fields: { file: path.join(f.dir, f.files[0]), reason: `${path.join(f.dir, f.files[0])}: corrupt shard: body checksum mismatch` },
      }]);
    } finally {
      await fresh.close();
    }
  });

  it('every shard corrupt or missing: not ready, naming them', async () => {
    overwrite(path.join(f.dir, f.files[0]), [4096]);
    renameSync(path.join(f.dir, f.files[1]), path.join(f.dir, '..', `${path.basename(f.dir)}-moved.rrs`));
    const fresh = new ShardSet(f.dir, recordingLog());
    try {
      expect((await fresh.open()).shards).toEqual([]);
      // The reasons come in file-name order (degraded()), whichever shard the manifest lists first.
      const reasons = [
        `${f.files[0]}: ${path.join(f.dir, f.files[0])}: corrupt shard: body checksum mismatch`,
        `${f.files[1]}: listed in the manifest, but there is no such file`,
      ].sort();
      expect(fresh.notReady()).toBe(`no shards mapped; 2 shards quarantined (${reasons.join('; ')})`);
    } finally {
      await fresh.close();
    }
  });
});

describe('the verified record (DIR/verified.json)', () => {
  const verifiedLog = (l: ReturnType<typeof recordingLog>) => l.lines.filter((x) => x.msg === 'verifying shards before they are served');

  it('lets a restart serve at once, and a file changed since is verified again', async () => {
    expect(verifiedLog(log)).toEqual([
      { level: 'info', msg: 'verifying shards before they are served', fields: expect.objectContaining({ shards: 2 }) },
    ]);
    const record = JSON.parse(readFileSync(path.join(f.dir, 'verified.json'), 'utf8')) as { files: Record<string, string> };
    expect(Object.keys(record.files).sort()).toEqual([...f.files].sort());

    const again = recordingLog();
    const restarted = new ShardSet(f.dir, again);
    try {
      restarted.load();
      expect(restarted.started()).toBeUndefined(); // nothing to verify: served at once
      expect(restarted.current().shards.map((x) => x.name)).toEqual(f.files);
      expect(verifiedLog(again)).toEqual([]);
    } finally {
      await restarted.close();
    }

    overwrite(path.join(f.dir, f.files[1]), [4096]);
    const third = recordingLog();
    const changed = new ShardSet(f.dir, third);
    try {
      changed.load();
      expect(changed.notReady()).toMatch(/^verifying 1 shard \(0\.\d GB\) before serving$/);
      await changed.started();
      expect(changed.current().shards.map((x) => x.name)).toEqual([f.files[0]]);
      expect(changed.stats().quarantined.map((q) => q.file)).toEqual([f.files[1]]);
    } finally {
      await changed.close();
    }
  });
});

describe('the scrub', () => {
  it('finds bytes changed where the identity checks do not look, and takes the shard out of service', async () => {
    const lease = set.lease();
    overwrite(path.join(f.dir, f.files[0]), [statSync(path.join(f.dir, f.files[0])).size - 4096]);
    const scrubber = new ShardScrubber(set, { bytesPerSecond: 0, passIntervalMs: 0 }, log);
    scrubber.start();
    try {
      for (let i = 0; i < 200 && scrubber.stats().passes === 0; i++) await new Promise((r) => setTimeout(r, 25));
      const s = scrubber.stats();
      expect(s.passes).toBeGreaterThanOrEqual(1);
      expect(s.mismatches).toBe(1);
      expect(s.bytes).toBeGreaterThanOrEqual(statSync(path.join(f.dir, f.files[0])).size);
      expect(set.current().shards.map((x) => x.name)).toEqual([f.files[1]]);
      expect(set.damageOf(lease)).toBe(STREAM_MESSAGES.DATA_DAMAGED);
      expect(set.stats().quarantined.map((q) => q.reason)).toEqual([
        `scrub: ${path.join(f.dir, f.files[0])}: corrupt shard: body checksum mismatch`,
      ]);
      expect(log.lines.find((l) => l.msg === 'scrub pass complete')?.fields).toMatchObject({ shards: 2 });
    } finally {
      await scrubber.stop();
      set.release(lease);
    }
  });

  it('reads no faster than its rate', async () => {
    const bytes = statSync(path.join(f.dir, f.files[0])).size + statSync(path.join(f.dir, f.files[1])).size;
    const rate = Math.ceil(bytes / 0.4); // a pass of both shards should take 400 ms
    const scrubber = new ShardScrubber(set, { bytesPerSecond: rate, passIntervalMs: 0 }, log);
    scrubber.start();
    try {
      for (let i = 0; i < 400 && scrubber.stats().passes === 0; i++) await new Promise((r) => setTimeout(r, 25));
      expect(scrubber.stats().mismatches).toBe(0);
      expect(scrubber.stats().lastPassSeconds).toBeGreaterThanOrEqual(0.35);
    } finally {
      await scrubber.stop();
    }
  });
});
