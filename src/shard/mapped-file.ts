// Memory-maps immutable shard files through our small addon (native/mmap.cc).
//
// Why our own addon: the published mmap-io does not build on Node 20 as is
// and is not context-aware (it cannot load in a worker thread), and reading a
// shard into a SharedArrayBuffer costs 1.2 to 1.5 s per GB. The addon maps
// the file once and wraps the mapping in a SharedArrayBuffer, which worker
// threads receive by reference: one mapping serves every thread, RSS counts
// the pages once, and the page cache is shared with other processes.
//
// A mapped file truncated underneath (an operator's `cp` over it, a failing
// disk) no longer kills the process with SIGBUS: the addon turns the fault
// into zero pages over the whole mapping and counts it (mappingFaults), and
// the shard set takes such a shard out of service (search/local/shard-set.ts).

import type { BigIntStats } from 'node:fs';
import { loadAddon } from '../lib/native.js';

interface MmapAddon {
  mapFile(file: string): MappedFile;
  releaseMapping(buffer: SharedArrayBuffer): boolean;
  mappingFaults(buffer: SharedArrayBuffer): number;
  faultsTotal(): number;
}

/** A file's mapping and the identity of the file mapped. */
export interface MappedFile {
  buffer: SharedArrayBuffer;
  /** "dev:ino:size:mtimeNs:ctimeNs" of the file when it was mapped (fileIdentity's form). */
  identity: string;
}

const addon = loadAddon<MmapAddon>('rrscan_mmap');

/** Read-only shared mapping of the whole file. The file must not change while mapped; if it does, see mappingFaults. */
export function mapFile(file: string): MappedFile {
  return addon.mapFile(file);
}

/**
 * Lets go of the file behind a mapping now (its pages become zeros; see
 * native/mmap.cc). Only for a shard nothing reads any more: the caller
 * guarantees it. Buffers that are not file mappings are left alone.
 */
export function releaseMapping(buffer: SharedArrayBuffer): boolean {
  return addon.releaseMapping(buffer);
}

/** Reads of this mapping that faulted (its file shrank underneath); > 0 means it now reads zeros. */
export function mappingFaults(buffer: SharedArrayBuffer): number {
  return addon.mappingFaults(buffer);
}

/** Faults absorbed in any mapping of this process so far: one atomic load, for a cheap "anything new?". */
export function faultsTotal(): number {
  return addon.faultsTotal();
}

/**
 * The identity mapFile reports, of a file stat()ed by path: equal identities
 * are the same bytes as far as the file system can tell (the change time
 * moves on every write, and no user can set it).
 */
export function fileIdentity(st: BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

/** The "dev:ino" part of an identity: the same file, whatever happened to its bytes. */
export function inodeOf(identity: string): string {
  const second = identity.indexOf(':', identity.indexOf(':') + 1);
  return identity.slice(0, second);
}
