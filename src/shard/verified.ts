// The record of shard files this machine has verified: DIR/verified.json,
// file name -> the identity (mapped-file.ts: device, inode, size, times)
// the file had when every byte of it checked out.
//
// Why: verifying is reading every byte (CRC-32 at ~5.9 GB/s a thread, and
// the disk's speed when the pages are cold), so a server that verified 20 GB
// of shards at each start would take seconds to minutes to serve. Shards are
// immutable: a file whose identity is the one recorded has not been written
// since it was verified (the change time moves on every write, and no user
// can set it), so a restart trusts the record and serves at once. What the
// record cannot see, a disk rotting a file nobody wrote, is the background
// scrub's to find (search/local/shard-scrub.ts), as it would be for a server
// that never restarted.
//
// The record is advice: missing, unreadable, from another machine (rsync
// copies it; inode numbers differ there) or a different version, it only
// means verifying again. Writes are whole-file replacements (temp file,
// rename: lib/atomic-write.ts, without its fsync), best effort: a server
// that may not write its data directory, or two servers writing at once
// (the last rename wins), costs a verification at the next start, never a
// wrong answer.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { atomicWriteFile } from '../lib/atomic-write.js';

export const VERIFIED_FILE = 'verified.json';
const VERSION = 1;

export type VerifiedFiles = ReadonlyMap<string, string>;

/** What DIR/verified.json records (empty when it is missing or unreadable). */
export function readVerified(dataDir: string): VerifiedFiles {
  try {
    const parsed = JSON.parse(readFileSync(path.join(dataDir, VERIFIED_FILE), 'utf8')) as { version?: unknown; files?: unknown };
    if (parsed.version !== VERSION || typeof parsed.files !== 'object' || parsed.files === null) return new Map();
    return new Map(Object.entries(parsed.files as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return new Map();
  }
}

/**
 * Replaces DIR/verified.json with `files`; rejects when the directory cannot
 * be written (the caller warns once). Not fsynced: the record is advice (see
 * the top of this file), and a flush at every start and reload would cost
 * each of them a disk flush for a record whose loss costs one verification.
 */
export async function writeVerified(dataDir: string, files: VerifiedFiles): Promise<void> {
  await atomicWriteFile(dataDir, VERIFIED_FILE, JSON.stringify({ version: VERSION, files: Object.fromEntries(files) }) + '\n',
    { sync: false });
}
