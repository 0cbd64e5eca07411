// Flexible-search results in batches, as every data tier hands them to the
// search layer: a local scan worker renders each unique value's output lines
// with a BatchBuilder (and transfers the batch: local/scan-protocol.ts), the
// ClickHouse tier builds them from its rows; sources hand runs of the lines
// on as bytes (BatchQueue) and never rebuild a line.

import { LIMITS } from '../config/limits.js';
import { jsonString } from '../render/json-text.js';
import { flexNameLine, flexRdataLine } from '../render/result-lines.js';

/**
 * Unique values in ascending order, already rendered as the stream will
 * write them: value i's output lines (one per rrtype, ascending, each ending
 * in a newline) are bytes[ends[i-1] .. ends[i]) (ends[-1] = 0).
 *
 * Why pre-rendered bytes: the lines go from the scan to the socket as they
 * are. A local scan worker renders them and transfers the buffers (no copy,
 * no per-value object or string on the front end's thread); the front end
 * hands runs of them to uWS. Each tier merges its own data into one sorted
 * source (the local scan task merges its shards, ClickHouse its parts), so
 * nothing needs a value's key or rrtypes after this point.
 *
 * One byte a character: the lines are JSON of presentation text (names and
 * rdata are printable ASCII with other bytes as \DDD escapes, json-text.ts),
 * so latin1 and UTF-8 agree on every byte.
 */
export interface FlexBatch {
  count: number;
  bytes: Uint8Array;
  ends: Uint32Array;
}

/** Collects one batch (in a scan worker, or as the ClickHouse tier reads rows). */
export class BatchBuilder {
  /** The lines so far, written straight into bytes: joining strings and converting them at the end cost twice as much. */
  private buf = Buffer.allocUnsafeSlow(LIMITS.writeChunkBytes * 2);
  private used = 0;
  /** Where each value's lines end in buf. */
  private ends: number[] = [];
  /** Lines of the value being added, before the line-length cut. */
  private kept = 0;
  private json = '';

  get values(): number {
    return this.ends.length;
  }

  get bytes(): number {
    return this.used;
  }

  /** Starts a value; add its rrtypes in ascending order, then call endValue. */
  beginValue(value: string): void {
    this.json = jsonString(value);
    this.kept = 0;
  }

  nameLine(rrtype: number): void {
    this.append(flexNameLine(this.json, rrtype));
    this.kept++;
  }

  rdataLine(rrtype: number, rawHex: string): void {
    this.kept++;
    const line = flexRdataLine(this.json, rrtype, rawHex);
    // compat.md: keep lines well under 64 KiB; a longer rdata is left out
    // rather than breaking clients (the value still counts as a result).
    if (line.length - 1 > LIMITS.lineBytesMax) return; // its newline aside
    this.append(line);
  }

  /** Ends the value; false (and nothing kept) when the filters left it no rrtype. */
  endValue(): boolean {
    if (this.kept === 0) return false;
    this.ends.push(this.used);
    return true;
  }

  /** The batch so far (its buffers its own, not Buffer's shared pool, so a worker can transfer them), and a fresh start. */
  take(): FlexBatch {
    const bytes = new Uint8Array(this.used);
    bytes.set(this.buf.subarray(0, this.used));
    const b: FlexBatch = { count: this.ends.length, bytes, ends: Uint32Array.from(this.ends) };
    this.used = 0;
    this.ends = [];
    return b;
  }

  private append(line: string): void {
    if (this.used + line.length > this.buf.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.used + line.length));
      this.buf.copy(grown, 0, 0, this.used);
      this.buf = grown;
    }
    this.used += this.buf.write(line, this.used, 'latin1');
  }
}

/** The buffers a batch can be transferred with (postMessage's transfer list). */
export function batchTransfer(b: FlexBatch): ArrayBuffer[] {
  return [b.bytes.buffer as ArrayBuffer, b.ends.buffer as ArrayBuffer];
}

/**
 * The batches of one sorted source, read in runs: what a source holds
 * between the tier that fills it and the paginator that drains it.
 */
export class BatchQueue {
  private readonly batches: FlexBatch[] = [];
  /** The current value's index in batches[0]. */
  private at = 0;
  /** Values in the last run taken. */
  taken = 0;

  /** Batches held, the one being read included. */
  get length(): number {
    return this.batches.length;
  }

  push(b: FlexBatch): void {
    if (b.count > 0) this.batches.push(b);
  }

  /**
   * The lines of up to `max` values from the current one, within the first
   * batch (a view, no copy), and moves past them; how many is in `taken`.
   * Returns whether that drained the batch (it is dropped).
   */
  take(max: number): { lines: Uint8Array; drained: boolean } {
    const b = this.batches[0]!;
    const count = Math.min(max, b.count - this.at);
    const lines = b.bytes.subarray(this.at === 0 ? 0 : b.ends[this.at - 1]!, b.ends[this.at + count - 1]);
    this.taken = count;
    this.at += count;
    if (this.at < b.count) return { lines, drained: false };
    this.batches.shift();
    this.at = 0;
    return { lines, drained: true };
  }
}
