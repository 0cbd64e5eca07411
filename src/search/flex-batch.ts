// Flexible-search results in batches, as every data tier hands them to the
// search layer: a local scan worker renders each unique value's output lines
// with a BatchBuilder (and transfers the batch: local/scan-protocol.ts), the
// ClickHouse tier builds them from its rows; sources hand runs of the lines
// on as bytes (BatchQueue) and never rebuild a line.

import { LIMITS } from '../config/limits.js';
import { jsonString, writeJsonStringBody } from '../render/json-text.js';
import { flexNameLine, flexRdataLine } from '../render/result-lines.js';

/**
 * A name line's bytes around the name, per rrtype, cut from flexNameLine's
 * own text (so the line's format has one copy): before the name's first
 * byte (opening quote included) and after its last.
 */
interface NameLineParts { before: Buffer; after: Buffer }
const NAME_MARK = '\u0000';
const nameLineParts = new Map<number, NameLineParts>();

function partsOf(rrtype: number): NameLineParts {
  let p = nameLineParts.get(rrtype);
  if (p === undefined) {
    const [before, after] = flexNameLine(`"${NAME_MARK}"`, rrtype).split(NAME_MARK);
    p = { before: Buffer.from(before!, 'latin1'), after: Buffer.from(after!, 'latin1') };
    // Bounded by the 65,536 rrtypes; a search names a handful.
    nameLineParts.set(rrtype, p);
  }
  return p;
}

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
  /** The value's JSON text, once made (beginRecord makes it only for rdata lines). */
  private json: string | undefined = '';
  /** beginRecord's value: bytes [start, end) of src; src undefined after beginValue. */
  private src: Uint8Array | undefined;
  private start = 0;
  private end = 0;

  get values(): number {
    return this.ends.length;
  }

  get bytes(): number {
    return this.used;
  }

  /** Starts a value; add its rrtypes in ascending order, then call endValue. */
  beginValue(value: string): void {
    this.json = jsonString(value);
    this.src = undefined;
    this.kept = 0;
  }

  /**
   * Starts a value held as bytes [start, end) of src (a shard's record:
   * printable ASCII): name lines copy them into the batch, so a value that
   * only one shard holds never becomes a string (a 10,000-row answer's
   * largest cost in the worker was making and writing those strings).
   */
  beginRecord(src: Uint8Array, start: number, end: number): void {
    this.src = src;
    this.start = start;
    this.end = end;
    this.json = undefined;
    this.kept = 0;
  }

  nameLine(rrtype: number): void {
    this.kept++;
    if (this.src === undefined) {
      this.append(flexNameLine(this.json!, rrtype));
      return;
    }
    const { before, after } = partsOf(rrtype);
    this.reserve(before.length + 2 * (this.end - this.start) + after.length);
    const buf = this.buf;
    buf.set(before, this.used);
    const at = writeJsonStringBody(this.src, this.start, this.end, buf, this.used + before.length);
    buf.set(after, at);
    this.used = at + after.length;
  }

  rdataLine(rrtype: number, rawHex: string): void {
    this.kept++;
    this.json ??= jsonString(Buffer.from(this.src!.buffer, this.src!.byteOffset + this.start, this.end - this.start).toString('latin1'));
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
    this.reserve(line.length);
    this.used += this.buf.write(line, this.used, 'latin1');
  }

  /** Room for n more bytes. */
  private reserve(n: number): void {
    if (this.used + n <= this.buf.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.used + n));
    this.buf.copy(grown, 0, 0, this.used);
    this.buf = grown;
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
