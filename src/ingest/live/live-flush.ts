// One flush of the live dnstap receiver, on a thread of its own
// (workers/live-flush.ts, started by publisher.ts). The receiver's thread
// hands over the columns of the RRsets it aggregated (their memory
// transferred, not copied); this builds and writes the shard file, which
// the receiver then publishes. Building there keeps the receiver reading
// its senders meanwhile.
//
// A write that fails (a full disk) does not throw: the columns are the only
// copy of those RRsets, so they go back to the receiver, their memory
// transferred again (Piscina.move), and it retries them later.

import { Piscina } from 'piscina';
import { SHARD_HEADER_BYTES } from '../../shard/format.js';
import { dataBuffers, RrsetTable, type RrsetTableData } from '../../shard/rrset-table.js';
import { buildShard, writeShardFile } from '../../shard/shard-writer.js';
import type { WrittenShard } from '../../shard/shard-spiller.js';

/** One flush, for the flush thread. */
export interface LiveFlushTask {
  table: RrsetTableData;
  dataDir: string;
  label: string;
  now: number;
  /** The receiver's WriterLock id, which names the shard file. */
  writer: string;
}

/** What the worker answers: the shard it wrote, or why it failed and the table's memory, handed back. */
export type LiveFlushResult = { written: WrittenShard } | { failed: string; table: RrsetTableData };

/** Builds and writes one flush's shard; a failure hands the table back (see the top of this file). */
export async function liveFlush(t: LiveFlushTask): Promise<LiveFlushResult> {
  try {
    const { body, stats } = buildShard(new RrsetTable(t.table), t.label, t.now);
    const file = await writeShardFile(t.dataDir, body, t.now, t.writer);
    return { written: { file, rrsets: stats.rrsets, bytes: body.byteLength + SHARD_HEADER_BYTES } };
  } catch (err) {
    const failed: LiveFlushResult = { failed: (err as Error).message, table: t.table };
    // Piscina posts the value with the buffers in its transfer list; the caller receives the value itself. Its
    // typings give the two symbols as plain `symbol`, so the object cannot be seen to be its Transferable: cast.
    const moved = { [Piscina.transferableSymbol]: dataBuffers(t.table), [Piscina.valueSymbol]: failed };
    return Piscina.move(moved as unknown as Parameters<typeof Piscina.move>[0]) as unknown as LiveFlushResult;
  }
}
