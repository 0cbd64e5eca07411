// The SHA-256 of a file's bytes, read in bounded pieces: how an ingest input
// is known again whatever its name (the input ledger, shard/ledger.ts and
// clickhouse/ledger.ts).

import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { LIMITS } from '../config/limits.js';

export interface FileDigest {
  /** Lower-case hex. */
  sha256: string;
  /** Bytes hashed: the file's size when it was read. */
  bytes: number;
  /** Its modification time then (ms), so a reader can tell a file that changed under it. */
  mtimeMs: number;
}

/** Hashes `file` with one buffer of LIMITS.inputDigestReadBytes, reused for every read. */
export async function digestFile(file: string): Promise<FileDigest> {
  const fh = await open(file, 'r');
  try {
    const st = await fh.stat();
    // A pipe or device read here would leave nothing for the parser to read after.
    if (!st.isFile()) throw new Error(`${file}: not a regular file (ingest hashes each input before reading it: save it to a file first)`);
    const mtimeMs = st.mtimeMs;
    const hash = createHash('sha256');
    const buf = Buffer.allocUnsafe(LIMITS.inputDigestReadBytes);
    let bytes = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, bytes);
      if (bytesRead === 0) break;
      hash.update(buf.subarray(0, bytesRead));
      bytes += bytesRead;
    }
    return { sha256: hash.digest('hex'), bytes, mtimeMs };
  } finally {
    await fh.close();
  }
}
