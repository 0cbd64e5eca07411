// The manifest: which shard files are live in a data directory.
//
// `<data>/manifest.json` lists the live shards. It is replaced, never edited:
// a new version is written to a temp file, fsynced and renamed over the old
// one, and the directory is fsynced, so a reader sees the old list or the new
// one and never a torn file. Writers (ingest, compact) serialise through an
// exclusive lock file so two runs cannot drop each other's shards; a lock
// left by a dead process is taken over. Shard files a manifest no longer
// lists are deleted only after the swap; servers that still map them keep
// reading the unlinked pages until they reload. Files a run that died left
// behind (its written but unpublished shards, its temp files) are deleted
// at the next swap: their names carry the dead writer's pid.

import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { asDiskFull } from '../errors/catalogue.js';
import { syncDir } from './shard-writer.js';

export const MANIFEST_FILE = 'manifest.json';
const LOCK_FILE = 'manifest.lock';
const MANIFEST_VERSION = 1;
/** How long a writer waits for the lock before giving up. */
const lockWaitMs = 60_000;
const lockPollMs = 50;
/** An empty lock older than this was left by a writer that died before writing its pid. */
const lockEmptyStaleMs = 10_000;

export interface ShardEntry {
  file: string;
  rrsets: number;
  bytes: number;
  createdAt: number;
  source: string;
}

export interface Manifest {
  version: number;
  generation: number;
  shards: ShardEntry[];
}

export function emptyManifest(): Manifest {
  return { version: MANIFEST_VERSION, generation: 0, shards: [] };
}

export function readManifest(dataDir: string): Manifest {
  const file = path.join(dataDir, MANIFEST_FILE);
  if (!existsSync(file)) return emptyManifest();
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as Manifest;
  if (parsed.version !== MANIFEST_VERSION || !Array.isArray(parsed.shards)) {
    throw new Error(`${file}: unsupported manifest version ${String(parsed.version)}`);
  }
  return parsed;
}

function readIfExists(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** The lock's modification time; 0 when it is gone (so the caller retries at once). */
function mtimeMs(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function acquireLock(dataDir: string): Promise<() => void> {
  const lock = path.join(dataDir, LOCK_FILE);
  const deadline = Date.now() + lockWaitMs;
  for (;;) {
    try {
      const fd = openSync(lock, 'wx');
      try {
        writeSync(fd, String(process.pid));
      } catch (err) {
        // An empty lock names no holder: every later writer would wait
        // lockEmptyStaleMs before taking it over. A full disk leaves no room
        // for the pid, so take it back now.
        closeSync(fd);
        rmSync(lock, { force: true });
        throw asDiskFull(err, dataDir, LOCK_FILE);
      }
      closeSync(fd);
      return () => rmSync(lock, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const text = readIfExists(lock);
      if (text === undefined) continue; // released between our open and this read
      const holder = Number(text.trim() || '0');
      // A holder that died leaves its lock behind. So does one killed
      // between creating the lock and writing its pid (a lock that stays
      // empty, when a pid takes microseconds to appear).
      const emptyAndOld = holder === 0 && Date.now() - mtimeMs(lock) > lockEmptyStaleMs;
      if ((holder > 0 && !pidAlive(holder)) || emptyAndOld) {
        rmSync(lock, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`${lock}: held by process ${holder} for over ${lockWaitMs} ms`);
      await new Promise((r) => setTimeout(r, lockPollMs));
    }
  }
}

/**
 * Runs `change` on the current manifest under the lock and publishes what it
 * returns atomically. Files listed before and not after are deleted.
 */
export async function updateManifest(dataDir: string, change: (m: Manifest) => ShardEntry[]): Promise<Manifest> {
  mkdirSync(dataDir, { recursive: true });
  const release = await acquireLock(dataDir);
  try {
    const before = readManifest(dataDir);
    const shards = change(before);
    const next: Manifest = { version: MANIFEST_VERSION, generation: before.generation + 1, shards };
    const file = path.join(dataDir, MANIFEST_FILE);
    // Dot-prefixed like a shard's temp file: one pattern for every temp file.
    const tmp = path.join(dataDir, `.${MANIFEST_FILE}.${process.pid}.tmp`);
    try {
      const fh = await fsp.open(tmp, 'w');
      try {
        await fh.writeFile(JSON.stringify(next, null, 2) + '\n');
        await fh.sync();
      } finally {
        await fh.close();
      }
      await fsp.rename(tmp, file);
    } catch (err) {
      // The old manifest is still the live one; a temp file left here (a
      // full disk fails the write) would never be deleted by anything.
      await fsp.rm(tmp, { force: true });
      throw asDiskFull(err, dataDir, MANIFEST_FILE);
    }
    // Published: every reader now sees `next`. Nothing from here on may
    // throw, because callers take a throw for "not published" and delete the
    // new shards, which the live manifest lists. A failed directory fsync
    // means a power cut could still bring the old manifest back, so its
    // shards are then kept; a shard that cannot be deleted is only disk space.
    try {
      await syncDir(dataDir);
    } catch (err) {
      process.emitWarning(`${dataDir}: published manifest generation ${next.generation}, but the directory fsync failed ` +
        `(${(err as Error).message}); the shards it replaced are kept`, { code: 'RRSCAN_MANIFEST_NOT_SYNCED' });
      return next;
    }
    const live = new Set(shards.map((s) => s.file));
    const gone = [...before.shards.map((s) => s.file).filter((f) => !live.has(f)), ...orphans(dataDir, live)];
    for (const file of gone) {
      await fsp.rm(path.join(dataDir, file), { force: true }).catch((err: unknown) => {
        process.emitWarning(`${dataDir}: could not delete ${file} (${(err as Error).message})`, { code: 'RRSCAN_SHARD_NOT_DELETED' });
      });
    }
    return next;
  } finally {
    release();
  }
}

// Names that carry their writer's pid: a shard (shard-writer.ts), its temp
// file, and the manifest's temp file.
const PID_NAMED = /^(?:\.?\d{10}-(\d+)-[0-9a-f]{12}\.rrs(?:\.tmp)?|\.manifest\.json\.(\d+)\.tmp)$/;

/**
 * Files of `dataDir` that a dead process left: pid-named, not listed live,
 * and their writer gone. Called under the lock. A running ingest's shards
 * (written, published only at its end) carry a live pid and are kept; so is
 * anything whose pid is now another process's (rare, and only disk space).
 */
function orphans(dataDir: string, live: ReadonlySet<string>): string[] {
  return readdirSync(dataDir).filter((f) => {
    if (live.has(f)) return false;
    const m = PID_NAMED.exec(f);
    if (m === null) return false;
    const pid = Number(m[1] ?? m[2]);
    return pid !== process.pid && !pidAlive(pid);
  });
}
