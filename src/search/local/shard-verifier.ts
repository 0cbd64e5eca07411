// ShardVerifier: checks shard files end to end before they are served, on
// threads of their own: the header and every byte of the body against its
// checksum, read through a file descriptor (shard/scrub.ts, at full speed).
//
// Why through a descriptor and not the mapping the shard is served from:
// the same page cache pages are read, but they are not faulted into the
// server's mapping, so verifying 20 GB neither costs the page-table work of
// mapping it nor shows as 20 GB of RSS; a search later faults in only what
// it reads. The mapping and the descriptor are the same inode (checked), so
// the bytes verified are the bytes served.

import path from 'node:path';
import { availableParallelism } from 'node:os';
import { LIMITS } from '../../config/limits.js';
import { workerPool, type WorkerPool } from '../../lib/threads.js';
import type { ScrubTask } from '../../shard/scrub.js';
import type { ShardHandle } from '../../shard/shard-reader.js';

export class ShardVerifier {
  private readonly pool: WorkerPool<'scrub'>;

  constructor(private readonly dataDir: string) {
    this.pool = workerPool('scrub', {
      minThreads: 0, maxThreads: Math.min(availableParallelism(), LIMITS.shardOpenThreadsMax),
      // A reload verifies at most the manifest's shards at once.
      maxQueue: LIMITS.shardsMax, concurrentTasksPerWorker: 1, idleTimeout: 1_000,
    });
  }

  /** Verifies each shard's file; per shard, undefined when every byte checks out, else why not. */
  verify(shards: readonly ShardHandle[]): Promise<(string | undefined)[]> {
    return Promise.all(shards.map(async (r) => {
      const task: ScrubTask = { file: path.join(this.dataDir, r.name), identity: r.identity, bytesPerSecond: 0 };
      try {
        const result = await this.pool.run(task);
        if (result.outcome === 'intact') return undefined;
        return result.outcome === 'corrupt' ? result.reason : `${task.file}: replaced while it was verified`;
      } catch (err) {
        return `${task.file}: ${(err as Error).message}`;
      }
    }));
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
