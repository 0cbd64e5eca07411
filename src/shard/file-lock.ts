// Advisory locks on files of the data directory, held with flock(2)
// (native/flock.cc). The kernel drops a flock when the process holding it
// dies, in whatever pid namespace it ran, so no liveness here rests on a pid
// written in a file (a pid another container cannot see, or that a reboot
// gave to someone else).
//
// Two uses: the manifest lock, which writers hold while they swap the
// manifest (manifest.ts); and one writer lock per writing run
// (`.writer-<id>.lock`, WriterLock), held until its shards are published or
// deleted, whose id is part of the name of every shard it writes. A later
// run can then tell the unpublished shards of a writer that died (its lock
// is free) from those of a writer still running, whose shards are published
// only at the end of its run.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { closeSync, constants, ftruncateSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { loadAddon } from '../lib/native.js';

interface FlockAddon {
  tryLock(fd: number, exclusive: boolean): boolean;
  unlock(fd: number): void;
}

const addon = loadAddon<FlockAddon>('rrscan_flock');

export class FileLock {
  private constructor(private path: string, private fd: number | undefined) {}

  get file(): string {
    return this.path;
  }

  /**
   * Opens `file` (creating it, empty) and locks it exclusively; undefined
   * when another open file holds the lock, in this process or another.
   */
  static tryAcquire(file: string): FileLock | undefined {
    const fd = openSync(file, constants.O_RDWR | constants.O_CREAT, 0o644);
    let locked = false;
    try {
      locked = addon.tryLock(fd, true);
    } finally {
      if (!locked) closeSync(fd);
    }
    return locked ? new FileLock(file, fd) : undefined;
  }

  /**
   * Locks the directory `dir` itself, exclusively (flock works on a
   * directory's descriptor): a lock that needs no file of its own, so taking
   * it writes nothing, not even on a full disk. Only release() applies.
   */
  static tryAcquireDirectory(dir: string): FileLock | undefined {
    const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
    let locked = false;
    try {
      locked = addon.tryLock(fd, true);
    } finally {
      if (!locked) closeSync(fd);
    }
    return locked ? new FileLock(dir, fd) : undefined;
  }

  /** Sets the file's text (who holds it, for people). Best effort: a full disk leaves it empty. */
  note(text: string): void {
    assert.ok(this.fd !== undefined, 'lock released');
    try {
      ftruncateSync(this.fd);
      writeSync(this.fd, text, 0);
    } catch {
      // Only a diagnostic; the lock is the flock, not the text.
    }
  }

  /** Moves the locked file to `to`; the lock moves with it (it belongs to the open file). */
  rename(to: string): void {
    renameSync(this.path, to);
    this.path = to;
  }

  /** Deletes the file while still holding its lock, then releases. */
  remove(): void {
    rmSync(this.path, { force: true });
    this.release();
  }

  release(): void {
    const fd = this.fd;
    if (fd === undefined) return;
    this.fd = undefined;
    try {
      addon.unlock(fd);
    } finally {
      closeSync(fd);
    }
  }
}

const WRITER_PREFIX = '.writer-';
const WRITER_SUFFIX = '.lock';
/** A writer lock before it is renamed into view (WriterLock.acquire). */
const WRITER_NEW_SUFFIX = '.new';
/** Writer ids: 12 hex digits (see SHARD_NAME in manifest.ts). */
const WRITER_ID = /^[0-9a-f]{12}$/;

export function writerLockFile(dataDir: string, id: string): string {
  return path.join(dataDir, `${WRITER_PREFIX}${id}${WRITER_SUFFIX}`);
}

/** The writer id a `.writer-<id>.lock` name holds, or undefined for any other name. */
export function writerOfLockName(name: string): string | undefined {
  return idBetween(name, WRITER_PREFIX, WRITER_SUFFIX);
}

/** Whether `name` is a writer lock not yet renamed into view (`.writer-<id>.new`). */
export function isNewWriterLock(name: string): boolean {
  return idBetween(name, WRITER_PREFIX, WRITER_NEW_SUFFIX) !== undefined;
}

function idBetween(name: string, prefix: string, suffix: string): string | undefined {
  if (!name.startsWith(prefix) || !name.endsWith(suffix)) return undefined;
  const id = name.slice(prefix.length, -suffix.length);
  return WRITER_ID.test(id) ? id : undefined;
}

/**
 * A writing run's hold on a data directory, from before its first shard is
 * written until every shard it wrote is published or deleted. Its id names
 * those shards. Taken on the main thread; worker threads are handed the id.
 *
 * The lock file is created and locked under a name no scan reads
 * (`.writer-<id>.new`) and only then renamed into view: a scan that sees a
 * writer lock unlocked may rightly take its writer for dead.
 */
export class WriterLock {
  private constructor(readonly id: string, private lock: FileLock | undefined) {}

  static acquire(dataDir: string): WriterLock {
    mkdirSync(dataDir, { recursive: true });
    const id = randomBytes(6).toString('hex');
    const lock = FileLock.tryAcquire(path.join(dataDir, `${WRITER_PREFIX}${id}${WRITER_NEW_SUFFIX}`));
    assert.ok(lock !== undefined, 'a fresh writer lock is held by nobody');
    lock.rename(writerLockFile(dataDir, id));
    return new WriterLock(id, lock);
  }

  /** Ends the run: the file goes, then the lock (a killed run leaves the file, unlocked, for the next swap to delete). */
  release(): void {
    this.lock?.remove();
    this.lock = undefined;
  }
}
