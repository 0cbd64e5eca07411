// Memory-maps immutable shard files through our small addon (native/mmap.cc).
//
// Why our own addon: the published mmap-io does not build on Node 20 as is
// and is not context-aware (it cannot load in a worker thread), and reading a
// shard into a SharedArrayBuffer costs 1.2 to 1.5 s per GB. The addon maps
// the file once and wraps the mapping in a SharedArrayBuffer, which worker
// threads receive by reference: one mapping serves every thread, RSS counts
// the pages once, and the page cache is shared with other processes.

import { loadAddon } from '../lib/native.js';

interface MmapAddon {
  mapFile(file: string): SharedArrayBuffer;
  releaseMapping(buffer: SharedArrayBuffer): boolean;
}

const addon = loadAddon<MmapAddon>('rrscan_mmap');

/** Read-only shared mapping of the whole file. The file must never change while mapped. */
export function mapFile(file: string): SharedArrayBuffer {
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
