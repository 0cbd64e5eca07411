// Piscina entry point: one flush of the live dnstap receiver
// (src/ingest/live/publisher.ts). The receiver's thread hands over the
// columns of the RRsets it aggregated (their memory transferred, not
// copied); this thread builds and writes the shard file, which the
// receiver then publishes. Building here keeps the receiver reading its
// senders meanwhile.

import { SHARD_HEADER_BYTES } from '../src/shard/format.js';
import type { LiveFlushTask } from '../src/ingest/live/publisher.js';
import { RrsetTable } from '../src/shard/rrset-table.js';
import type { WrittenShard } from '../src/shard/shard-spiller.js';
import { buildShardBody, writeShardFile } from '../src/shard/shard-writer.js';

export default async function liveFlush(t: LiveFlushTask): Promise<WrittenShard> {
  const { body, stats } = buildShardBody(new RrsetTable(t.table), t.label, t.now);
  const file = await writeShardFile(t.dataDir, body, t.now, t.writer);
  return { file, rrsets: stats.rrsets, bytes: body.byteLength + SHARD_HEADER_BYTES };
}
