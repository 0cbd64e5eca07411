// The manifest: which shard files are live in a data directory.
//
// `<data>/manifest.json` lists the live shards. It is replaced, never edited:
// a new version is written to a temp file, fsynced and renamed over the old
// one (lib/atomic-write.ts), and the directory is fsynced, so a reader sees
// the old list or the new one and never a torn file. Writers (ingest, compact) serialise through a
// flock on manifest.lock (file-lock.ts) so two runs cannot drop each other's
// shards; the kernel frees it when its holder dies. Shard files a manifest
// no longer lists are deleted only after the swap; servers that still map
// them keep reading the unlinked pages until they reload. What a writer that
// died left behind (its written but unpublished shards, its temp files) is
// deleted at the next swap, or by a compaction with nothing to merge
// (removeLeftovers): shard names carry their writer's id, and a dead
// writer's lock is free.

import { existsSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { LIMITS } from '../config/limits.js';
import { asDiskFull, DataDirMissingError, hasCode, ManifestError } from '../errors/catalogue.js';
import { atomicWriteFile, syncDir } from '../lib/atomic-write.js';
import { SHARD_FILE_SUFFIX } from './format.js';
import { FileLock, isNewWriterLock, writerLockFile, writerOfLockName } from './file-lock.js';
import { writerOfShardFile } from './shard-writer.js';

export const MANIFEST_FILE = 'manifest.json';
const LOCK_FILE = 'manifest.lock';
const MANIFEST_VERSION = 1;

export interface ShardEntry {
  file: string;
  rrsets: number;
  bytes: number;
  createdAt: number;
  source: string;
  /**
   * RRsets that ingest runs published and this shard aggregates: set by
   * compaction (the sum over its inputs), absent on shards ingest wrote
   * (their own RRsets). The compaction policy tiers shards by it
   * (compaction-policy.ts weightOf).
   */
  rrsetsIngested?: number;
  /** The input files this shard was made from: the input ledger (ledger.ts, whose top says which shard of a run has them). */
  inputs?: InputRecord[];
}

/** One input file of a published shard. */
export interface InputRecord {
  /** SHA-256 of the file's bytes, lower-case hex: the identity; names and places do not count. */
  sha256: string;
  /** The path it was ingested from (absolute, at most LIMITS.ledgerNameCharsMax characters), for people. */
  name: string;
  bytes: number;
  /** When it was ingested (the run's time, epoch seconds): the oldest are forgotten first. */
  at: number;
}

export interface Manifest {
  version: number;
  generation: number;
  shards: ShardEntry[];
}

export function emptyManifest(): Manifest {
  return { version: MANIFEST_VERSION, generation: 0, shards: [] };
}

/** Reads and checks the manifest (checkManifest); throws ManifestError when it cannot be trusted. */
export function readManifest(dataDir: string): Manifest {
  const file = path.join(dataDir, MANIFEST_FILE);
  if (!existsSync(file)) return emptyManifest();
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    if (err instanceof SyntaxError) throw new ManifestError(file, `not JSON (${err.message})`);
    throw err;
  }
  return checkManifest(file, parsed);
}

/**
 * A shard's manifest entry names a file of the data directory and nothing
 * else: a bare name with the shard suffix, no separator or NUL, not dot-led
 * (temp files are; so are `.` and `..`), within NAME_MAX.
 */
function isShardName(name: string): boolean {
  return name.length > SHARD_FILE_SUFFIX.length && name.length <= 255 && name.endsWith(SHARD_FILE_SUFFIX) &&
    !name.startsWith('.') && !/[/\\\0]/.test(name);
}

/** `parsed` as a Manifest, or ManifestError naming the first thing wrong with it. */
export function checkManifest(file: string, parsed: unknown): Manifest {
  const m = parsed as Partial<Manifest> | null;
  if (typeof m !== 'object' || m === null) throw new ManifestError(file, 'not a JSON object');
  if (m.version !== MANIFEST_VERSION) throw new ManifestError(file, `unsupported manifest version ${String(m.version)}`);
  if (!Number.isSafeInteger(m.generation) || m.generation! < 0) throw new ManifestError(file, 'generation is not a non-negative integer');
  if (!Array.isArray(m.shards)) throw new ManifestError(file, 'shards is not a list');
  if (m.shards.length > LIMITS.shardsMax) throw new ManifestError(file, `${m.shards.length} shards listed, at most ${LIMITS.shardsMax}`);
  const seen = new Set<string>();
  m.shards.forEach((e: Partial<ShardEntry> | null, i) => {
    const name = typeof e?.file === 'string' ? e.file : undefined;
    if (name === undefined) throw new ManifestError(file, `shard ${i}: no file name`);
    if (!isShardName(name)) {
      throw new ManifestError(file, `shard ${i}: ${JSON.stringify(name)} is not a bare shard file name of the data directory`);
    }
    if (seen.has(name)) throw new ManifestError(file, `shard ${i}: ${name} is listed twice`);
    seen.add(name);
  });
  return m as Manifest;
}

/**
 * Throws DataDirMissingError unless `dataDir` is an existing directory.
 * Readers (serve) call it before anything creates files there: writers
 * (ingest, compact, demo) create the directory, a reader must not.
 */
export function requireDataDir(dataDir: string): void {
  let isDir: boolean;
  try {
    isDir = statSync(dataDir).isDirectory();
  } catch (err) {
    if (hasCode(err, 'ENOENT', 'ENOTDIR')) {
      throw new DataDirMissingError(dataDir, 'missing');
    }
    throw err;
  }
  if (!isDir) throw new DataDirMissingError(dataDir, 'not-a-directory');
}

async function acquireLock(dataDir: string): Promise<() => void> {
  const file = path.join(dataDir, LOCK_FILE);
  return waitForLock(() => {
    let lock: FileLock | undefined;
    try {
      lock = FileLock.tryAcquire(file);
    } catch (err) {
      throw asDiskFull(err, dataDir, LOCK_FILE);
    }
    if (lock === undefined) return undefined;
    // The file stays: deleting it would let a waiter lock the unlinked
    // file while a newcomer locks a new one.
    const held = lock;
    held.note(`${process.pid}\n`);
    return () => held.release();
  }, LIMITS.manifestLockWaitMs, () => `${file}: held by process ${readFileSync(file, 'utf8').trim() || 'unknown'}`);
}

/**
 * Calls `tryAcquire` until it returns a lock's release, polling every
 * manifestLockPollMs; after `waitMs` throws, saying `held()` and how long.
 */
export async function waitForLock(tryAcquire: () => (() => void) | undefined, waitMs: number,
  held: () => string): Promise<() => void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const release = tryAcquire();
    if (release !== undefined) return release;
    if (Date.now() > deadline) throw new Error(`${held()} for over ${waitMs} ms`);
    await new Promise((r) => setTimeout(r, LIMITS.manifestLockPollMs));
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
    // The old manifest stays the live one unless this succeeds; it leaves no temp file behind either way.
    await atomicWriteFile(dataDir, MANIFEST_FILE, JSON.stringify(next, null, 2) + '\n', { sync: true });
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
    await removeFiles(dataDir, [...before.shards.map((s) => s.file).filter((f) => !live.has(f)), ...orphans(dataDir, live)]);
    return next;
  } finally {
    release();
  }
}

/**
 * Deletes what dead writers left, as a swap does, without one: for a run
 * that has nothing to publish. A compaction killed after its swap but before
 * deleting the shards it merged leaves them all (the size of the whole data
 * set) and its writer lock; the compaction run next finds one shard and
 * nothing to merge, and would otherwise leave them until some later ingest.
 */
export async function removeLeftovers(dataDir: string): Promise<void> {
  if (!existsSync(dataDir)) return;
  const release = await acquireLock(dataDir);
  try {
    await removeFiles(dataDir, orphans(dataDir, new Set(readManifest(dataDir).shards.map((s) => s.file))));
  } finally {
    release();
  }
}

/**
 * Deletes the shards and temp files writer `writer` left unpublished: a
 * compaction abandoned mid-run (its threads stopped without saying what they
 * had written). Only that writer's files, never a listed one; the caller is
 * that writer, so no swap can publish them meanwhile.
 */
export async function removeUnpublished(dataDir: string, writer: string): Promise<void> {
  const live = new Set(readManifest(dataDir).shards.map((s) => s.file));
  await removeFiles(dataDir, readdirSync(dataDir).filter((f) => writerOfShardFile(f) === writer && !live.has(f)));
}

/** Deletes files of `dataDir`; one that cannot be deleted is only disk space, and a warning. */
async function removeFiles(dataDir: string, files: readonly string[]): Promise<void> {
  for (const file of files) {
    await fsp.rm(path.join(dataDir, file), { force: true }).catch((err: unknown) => {
      process.emitWarning(`${dataDir}: could not delete ${file} (${(err as Error).message})`, { code: 'RRSCAN_SHARD_NOT_DELETED' });
    });
  }
}

const MANIFEST_TEMP = /^\.manifest\.json\.\d+\.tmp$/;

/** Milliseconds since `file` was last modified; 0 when it is gone. */
function ageMs(file: string): number {
  try {
    return Date.now() - statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

function removeIfFree(file: string): void {
  try {
    FileLock.tryAcquire(file)?.remove();
  } catch {
    // Cannot open it: leave it (an empty file).
  }
}

/**
 * Files a dead writer left in `dataDir`: its shards no manifest lists and
 * its temp files, then its writer lock. Called under the manifest lock; a
 * writer is dead when its writer lock is free or gone (file-lock.ts). The
 * manifest's temp files are written only under the manifest lock, so any
 * found here are a dead holder's. Names of no known shape (shards written
 * before writer ids) are never touched.
 */
function orphans(dataDir: string, live: ReadonlySet<string>): string[] {
  // Per writer: its unlisted files, and whether its lock file is there.
  const byWriter = new Map<string, { files: string[]; lockFile: boolean }>();
  const out: string[] = [];
  for (const f of readdirSync(dataDir)) {
    const shardOf = writerOfShardFile(f);
    const lockOf = shardOf === undefined ? writerOfLockName(f) : undefined;
    const writer = shardOf ?? lockOf;
    if (writer === undefined) {
      if (MANIFEST_TEMP.test(f)) out.push(f);
      // A writer killed between creating its lock and renaming it. Only an
      // old one: a live writer creates the file and then locks it, and a
      // sweep between the two would take the free file for a dead one's.
      else if (isNewWriterLock(f) && ageMs(path.join(dataDir, f)) > LIMITS.newWriterLockStaleMs) removeIfFree(path.join(dataDir, f));
      continue;
    }
    let w = byWriter.get(writer);
    if (w === undefined) byWriter.set(writer, (w = { files: [], lockFile: false }));
    if (lockOf !== undefined) w.lockFile = true;
    else if (!live.has(f)) w.files.push(f);
  }
  for (const [writer, { files, lockFile }] of byWriter) {
    // Every shard of a finished run is published: nothing to look at.
    if (files.length === 0 && !lockFile) continue;
    let lock: FileLock | undefined;
    try {
      lock = FileLock.tryAcquire(writerLockFile(dataDir, writer));
    } catch {
      continue; // cannot even open it (a full disk, permissions): assume alive
    }
    if (lock === undefined) continue; // its writer is running
    out.push(...files);
    lock.remove();
  }
  return out;
}
