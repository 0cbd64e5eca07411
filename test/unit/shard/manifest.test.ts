// The manifest swap (src/shard/manifest.ts): its flock, its promise that a
// published manifest is never undone by what fails after it, and the
// cleanup of what dead writers left (src/shard/file-lock.ts).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../../src/config/limits.js';
import { FileLock, WriterLock, writerLockFile } from '../../../src/shard/file-lock.js';
import { readManifest, updateManifest, type ShardEntry } from '../../../src/shard/manifest.js';
import { REPO, tempPaths } from '../../helpers/rrscan.js';

const temp = tempPaths();
afterAll(temp.removeAll);

const entry = (file: string): ShardEntry => ({ file, rrsets: 1, bytes: 1, createdAt: 1_700_000_000, source: 'test' });

function freshDir(): string {
  const dir = temp.fresh();
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Another process holding the flock on `file` until it is killed. */
async function holdInChild(file: string): Promise<{ kill(): Promise<void> }> {
  const script = `import('${path.join(REPO, 'dist/src/shard/file-lock.js')}').then((m) => {
    if (!m.FileLock.tryAcquire(process.argv[1])) process.exit(3);
    console.log('held');
    setInterval(() => {}, 1000);
  });`;
  const child = spawn(process.execPath, ['-e', script, file], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`lock holder exited ${code}`)));
  });
  return {
    kill: () => new Promise<void>((resolve) => {
      child.removeAllListeners('exit');
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    }),
  };
}

describe('manifest lock', () => {
  it('a lock file left behind by an earlier run blocks nobody: the flock, not the file, is the lock', async () => {
    const dir = freshDir();
    writeFileSync(path.join(dir, 'manifest.lock'), '12345\n');
    const m = await updateManifest(dir, () => [entry('a.rrs')]);
    expect(m.generation).toBe(1);
    expect(readFileSync(path.join(dir, 'manifest.lock'), 'utf8')).toBe(`${process.pid}\n`);
  });

  it('waits while another process holds it, and goes on the moment that process dies (no stale lock)', async () => {
    const dir = freshDir();
    const holder = await holdInChild(path.join(dir, 'manifest.lock'));
    let done = false;
    const update = updateManifest(dir, () => [entry('a.rrs')]).then(() => { done = true; });
    await new Promise((r) => setTimeout(r, 300));
    expect(done).toBe(false);
    expect(readManifest(dir).generation).toBe(0);
    await holder.kill();
    await update;
    expect(readManifest(dir).shards.map((s) => s.file)).toEqual(['a.rrs']);
  });
});

describe('after the swap', () => {
  it('a replaced shard that cannot be deleted is a warning, not a failure: the new manifest stands', async () => {
    const dir = freshDir();
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
  });
});

describe('what a dead writer left behind', () => {
  it('is deleted at the next swap; running writers\' shards (another process\'s, our own) and unknown names are kept', async () => {
    const dir = freshDir();
    const dead = 'deaddeaddead'; // its lock file was left, unlocked
    const vanished = '0123456789ab'; // no lock file at all
    const running = 'aaaaaaaaaaaa'; // another process holds its lock
    writeFileSync(writerLockFile(dir, dead), '');
    const holder = await holdInChild(writerLockFile(dir, running));
    const ownRun = WriterLock.acquire(dir);
    const own = ownRun.id;
    const shard = (w: string, r = '111111111111') => `1700000000-${w}-${r}.rrs`;
    const files = {
      dead: shard(dead), deadTemp: `.${shard(dead, '222222222222')}.tmp`, vanished: shard(vanished),
      manifestTemp: '.manifest.json.4242.tmp',
      running: shard(running), own: shard(own),
      published: shard(dead, '333333333333'),
      legacy: '1700000000-0123456789ab.rrs', other: 'notes.txt',
      // A writer killed between creating its lock and renaming it into view.
      deadNew: '.writer-beefbeefbeef.new',
    };
    for (const f of Object.values(files)) writeFileSync(path.join(dir, f), 'x');
    const longAgo = (Date.now() - LIMITS.newWriterLockStaleMs - 1_000) / 1000;
    utimesSync(path.join(dir, files.deadNew), longAgo, longAgo);
    // A live writer between creating its lock file and locking it: too young to be taken for dead.
    const startingNew = '.writer-cafecafecafe.new';
    writeFileSync(path.join(dir, startingNew), '');
    try {
      await updateManifest(dir, () => [entry(files.published)]);
    } finally {
      await holder.kill();
    }
    expect(readdirSync(dir).sort()).toEqual([
      files.running, files.own, files.published, files.legacy, files.other, 'manifest.json', 'manifest.lock',
      path.basename(writerLockFile(dir, own)), path.basename(writerLockFile(dir, running)), startingNew,
    ].sort());
    // Once the other process is gone, its shards go at the next swap; ours stay while our run holds its lock.
    await updateManifest(dir, (m) => m.shards);
    expect(existsSync(path.join(dir, files.running))).toBe(false);
    expect(existsSync(path.join(dir, files.own))).toBe(true);
    expect(FileLock.tryAcquire(writerLockFile(dir, own))).toBeUndefined();
    // A run that ends removes its lock file; a shard it left unpublished then goes too.
    ownRun.release();
    expect(existsSync(writerLockFile(dir, own))).toBe(false);
    await updateManifest(dir, (m) => m.shards);
    expect(existsSync(path.join(dir, files.own))).toBe(false);
  });
});
