// Replacing a file whole: the one way the data directory's files are
// written (shard files, manifest.json, verified.json), so that a reader
// sees the old file or the new one, never a torn one, and a failure leaves
// nothing behind.
//
// Contract of atomicWriteFile: the bytes go to a temp file beside the
// target (dot-led, ending .tmp: one pattern for every temp file, which the
// manifest's clean-up knows), are written completely (writeFully), fsynced
// when asked, and the temp file is renamed over the target. Whatever fails
// on the way, the temp file is deleted (no manifest will ever list it, so
// nothing else would) and the error is thrown, as a DiskFullError naming
// the directory and what was being written when the file system said
// ENOSPC or EDQUOT. The directory itself is not synced here: a caller whose
// rename must survive a power cut calls syncDir and decides what its
// failure means (a shard: not published; the manifest: published, but its
// replaced shards are kept).

import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { asDiskFull } from '../errors/catalogue.js';

export interface AtomicWriteOptions {
  /**
   * fsync the file before the rename, so that a power cut cannot leave the
   * new name on an empty or partial file. False only for a file that is
   * advice (verified.json: a lost record costs one more verification, while
   * a flush at every server start would cost every start).
   */
  sync: boolean;
  /**
   * The target's name is this writer's alone (a shard's, made unique when
   * it was chosen): its temp file is `.NAME.tmp`, created exclusively, so a
   * clash is an error rather than another writer's file overwritten. By
   * default a file many runs rewrite: `.NAME.PID.tmp`, so that each process
   * has its own, and one a dead process of that id left is replaced.
   */
  uniqueName?: boolean;
  /** What is being written, for a DiskFullError's message (default: the file's name). */
  writing?: string;
}

/** Replaces `dir`/`name` with `data` (UTF-8 text, or pieces written in order): see the top of this file. */
export async function atomicWriteFile(dir: string, name: string, data: string | readonly Uint8Array[],
  opts: AtomicWriteOptions): Promise<void> {
  const writing = opts.writing ?? name;
  const tmp = path.join(dir, opts.uniqueName ? `.${name}.tmp` : `.${name}.${process.pid}.tmp`);
  // An open that fails created nothing; an exclusive one must not delete the file it found.
  const fh = await fsp.open(tmp, opts.uniqueName ? 'wx' : 'w').catch((err: unknown) => { throw asDiskFull(err, dir, writing); });
  try {
    try {
      await writeFully(fh, typeof data === 'string' ? [Buffer.from(data, 'utf8')] : data);
      if (opts.sync) await fh.sync();
    } finally {
      await fh.close();
    }
    await fsp.rename(tmp, path.join(dir, name));
  } catch (err) {
    await fsp.rm(tmp, { force: true });
    throw asDiskFull(err, dir, writing);
  }
}

/**
 * Writes every byte of `chunks` or throws why not. writev() alone is not
 * enough: libuv stops at the first failed write and reports the bytes
 * written before it, so a disk that fills up part-way shows up as a short
 * count and no error (a shard was then renamed truncated and refused as
 * "corrupt"). Writing the rest again gets the file system's reason (ENOSPC).
 */
async function writeFully(fh: fsp.FileHandle, chunks: readonly Uint8Array[]): Promise<void> {
  const total = chunks.reduce((n, c) => n + c.byteLength, 0);
  let done = (await fh.writev([...chunks])).bytesWritten;
  let at = 0;
  for (const chunk of chunks) {
    const end = at + chunk.byteLength;
    while (done < end) {
      const { bytesWritten } = await fh.write(chunk, done - at, end - done);
      assert.ok(bytesWritten > 0, 'write() wrote nothing and reported no error');
      done += bytesWritten;
    }
    at = end;
  }
  assert.ok(done === total);
}

/** fsyncs a directory: a rename or unlink in it survives a power cut once this returns. */
export async function syncDir(dir: string): Promise<void> {
  const dh = await fsp.open(dir, 'r');
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}
