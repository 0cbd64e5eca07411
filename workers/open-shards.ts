// Piscina entry point: maps and fully verifies shard files (checksums over
// every byte, ~170 ms per GB) off the thread that answers requests, and
// hands back the mappings, which are shared, not copied
// (src/search/local/shard-set.ts).

import { ShardReader, type ShardHandle } from '../src/shard/shard-reader.js';

export default function openShards(files: readonly string[]): ShardHandle[] {
  return files.map((file) => {
    const r = ShardReader.open(file);
    return { name: r.name, buffer: r.buffer };
  });
}
