// A flexible search's one sorted source: the rows of one ClickHouse SELECT
// (flex-sql.ts), each a value, rendered into batches by the local scan's own
// BatchBuilder (search/flex-batch.ts), so the lines, their length cut
// and the batch layout are the same code on both tiers.
//
// Backpressure: the HTTP answer is paused while LIMITS.clickhouseBatchesBuffered
// batches wait for the merge, and resumed when it has drained them; what
// ClickHouse produces beyond that waits in its socket and then in the server.
// Closing cancels the query (client.ts: KILL QUERY as well as the hang-up).

import { LIMITS } from '../../config/limits.js';
import { tsvField, tsvNumbers, tsvPlainStrings } from '../../clickhouse/tab-separated.js';
import type { FlexTarget } from '../../query/flex-query.js';
import { END, HAS, WAIT, type FlexSource, type SourceEvents, type SourceState } from '../sources.js';
import { BatchBuilder, BatchQueue } from '../flex-batch.js';
import { StreamedSelect } from './streamed-select.js';

/** How every row of flex-sql.ts begins: its array of rrtypes. */
const ROW_START = /^\[(\d+(,\d+)*)?\]\t/;

export class SelectFlexSource extends StreamedSelect implements FlexSource {
  private readonly batches = new BatchQueue();
  private readonly builder = new BatchBuilder();
  bulkCount = 0;

  /** The rows of `sql` (flex-sql.ts) for a search of `target`. */
  constructor(private readonly target: FlexTarget, sql: string, events: SourceEvents) {
    super(sql, events);
  }

  /** Takes a chunk of rows into batches; false asks the client to pause the answer. */
  protected onLines(lines: string[]): boolean {
    if (this.closed) return false;
    try {
      this.addRows(lines);
    } catch (err) {
      return this.refuse(err);
    }
    this.events.ready();
    return this.batches.length < LIMITS.clickhouseBatchesBuffered;
  }

  private addRows(lines: string[]): void {
    const b = this.builder;
    const columns = this.target === 'rrnames' ? 2 : 3;
    for (const line of lines) {
      const f = line.split('\t');
      if (f.length !== columns || !ROW_START.test(line)) throw new Error(`not a row of this search: ${line.slice(0, 200)}`);
      const types = tsvNumbers(f[0]!);
      const value = tsvField(f[f.length - 1]!);
      const hexes = this.target === 'rdata' ? tsvPlainStrings(f[1]!) : undefined;
      // Lines of one value ascend by rrtype, as a shard's entries do; groupArray keeps no order.
      const order = types.map((_, i) => i).sort((i, j) => types[i]! - types[j]!);
      b.beginValue(value);
      for (const i of order) {
        if (hexes === undefined) b.nameLine(types[i]!);
        else b.rdataLine(types[i]!, hexes[i]!);
      }
      b.endValue();
      if (b.values >= LIMITS.batchItemsMax || b.bytes >= LIMITS.writeChunkBytes) this.batches.push(b.take());
    }
    if (b.values > 0) this.batches.push(b.take());
  }

  state(): SourceState {
    if (this.batches.length > 0) return HAS;
    return this.finished ? END : WAIT;
  }

  bulk(max: number): Uint8Array {
    const { lines, drained } = this.batches.take(max);
    this.bulkCount = this.batches.taken;
    if (drained && this.batches.length <= 1) this.running?.resume();
    return lines;
  }
}
