// The scrub of one shard file: its header and every byte of its body
// checked again, read through a file descriptor at a bounded rate.
//
// Why again: a shard is verified when it is opened, but a disk can rot
// under a file that nobody writes (the file's times do not move, so the
// shard set's identity checks see nothing), and a server runs for months.
// Why through a descriptor and not the mapping: the same page cache pages
// are read, but they are not mapped into the server (its RSS does not grow
// by the whole data set as a pass goes by) and a short file is a short
// read, not a SIGBUS. Why at a bounded rate: the scrub shares the disk and
// the page cache with the searches it protects.

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { LIMITS } from '../config/limits.js';
import { checkBodyCrc, checkHeader, SHARD_HEADER_BYTES } from './format.js';
import { fileIdentity, inodeOf } from './mapped-file.js';
import { hasCode } from '../errors/catalogue.js';

export interface ScrubTask {
  file: string;
  /** The identity of the mapping served (mapped-file.ts): another file under the name is not this one's business. */
  identity: string;
  /** 0: as fast as the disk goes. */
  bytesPerSecond: number;
}

export type ScrubResult =
  | { outcome: 'intact'; bytes: number; ms: number }
  | { outcome: 'corrupt'; reason: string; bytes: number; ms: number }
  /** The name now holds another inode (or none): the shard set's own checks deal with that. */
  | { outcome: 'replaced'; bytes: 0; ms: number };

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Blocks this thread for `ms` (a scrub thread has nothing else to do meanwhile). */
function pause(ms: number): void {
  if (ms > 0) Atomics.wait(sleeper, 0, 0, ms);
}

/** Reads and checks one shard file; never throws for what it finds in the file, only for what stops it reading. */
export function scrubShardFile(t: ScrubTask): ScrubResult {
  const started = performance.now();
  const ms = () => performance.now() - started;
  let fd: number;
  try {
    fd = openSync(t.file, 'r');
  } catch (err) {
    if (hasCode(err, 'ENOENT')) return { outcome: 'replaced', bytes: 0, ms: ms() };
    throw err;
  }
  let bytes = 0;
  try {
    const st = fstatSync(fd, { bigint: true });
    // The same inode, whatever its times say: bytes changed in place are exactly what this is for.
    if (inodeOf(fileIdentity(st)) !== inodeOf(t.identity)) return { outcome: 'replaced', bytes: 0, ms: ms() };
    const size = Number(st.size);
    const chunk = Buffer.allocUnsafe(LIMITS.scrubChunkBytes);
    const read = (at: number, want: number): Buffer => {
      const n = readSync(fd, chunk, 0, want, at);
      bytes += n;
      // Paced by what was read so far: a pass never runs ahead of its rate.
      if (t.bytesPerSecond > 0) pause((bytes / t.bytesPerSecond) * 1000 - ms());
      return chunk.subarray(0, n);
    };
    const header = checkHeader(t.file, read(0, Math.min(SHARD_HEADER_BYTES, size)), size);
    let crc = 0;
    for (let at = SHARD_HEADER_BYTES; at < size;) {
      const got = read(at, Math.min(chunk.length, size - at));
      if (got.length === 0) return { outcome: 'corrupt', reason: `short read at byte ${at} of ${size}`, bytes, ms: ms() };
      crc = crc32(got, crc);
      at += got.length;
    }
    checkBodyCrc(t.file, header, crc);
    return { outcome: 'intact', bytes, ms: ms() };
  } catch (err) {
    // EIO: the disk could not give the bytes back, which is what a scrub is for.
    if (hasCode(err, 'SHARD_CORRUPT', 'EIO')) return { outcome: 'corrupt', reason: (err as Error).message, bytes, ms: ms() };
    throw err;
  } finally {
    closeSync(fd);
  }
}
