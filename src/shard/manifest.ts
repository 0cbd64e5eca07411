// The manifest: which shard files are live in a data directory.
//
// `<data>/manifest.json` lists the live shards. It is replaced, never edited:
// a new version is written to a temp file, fsynced and renamed over the old
// one, and the directory is fsynced, so a reader sees the old list or the new
// one and never a torn file. Writers (ingest, compact) serialise through an
// exclusive lock file so two runs cannot drop each other's shards; a lock
// left by a dead process is taken over. Shard files a manifest no longer
// lists are deleted only after the swap; servers that still map them keep
// reading the unlinked pages until they reload.

import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { asDiskFull } from '../errors/catalogue.js';
import { SHARD_FILE_SUFFIX } from './format.js';
import { syncDir } from './shard-writer.js';

export const MANIFEST_FILE = 'manifest.json';
const LOCK_FILE = 'manifest.lock';
const MANIFEST_VERSION = 1;
/** How long a writer waits for the lock before giving up. */
const lockWaitMs = 60_000;
const lockPollMs = 50;

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
        // An empty lock names no holder, so no later writer could ever take
        // it over: each would wait lockWaitMs and fail until an operator
        // deleted it. A full disk leaves no room for the pid, so take it back.
        closeSync(fd);
        rmSync(lock, { force: true });
        throw asDiskFull(err, dataDir, LOCK_FILE);
      }
      closeSync(fd);
      return () => rmSync(lock, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(lock, 'utf8').trim() || '0');
      if (holder > 0 && !pidAlive(holder)) {
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
    // Dot-prefixed like a shard's temp file, so orphanFiles() knows it too.
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
    await syncDir(dataDir);
    const live = new Set(shards.map((s) => s.file));
    for (const old of before.shards) {
      if (!live.has(old.file)) await fsp.rm(path.join(dataDir, old.file), { force: true });
    }
    return next;
  } finally {
    release();
  }
}

/** Shard files and temp files no manifest lists (left by a crash mid-ingest); safe to delete under the lock. */
export function orphanFiles(dataDir: string, m: Manifest): string[] {
  const live = new Set(m.shards.map((s) => s.file));
  return readdirSync(dataDir).filter((f) =>
    (f.endsWith(SHARD_FILE_SUFFIX) && !live.has(f)) || (f.startsWith('.') && f.endsWith('.tmp')));
}
