// Flexible-search results in batches, as every data tier hands them to the
// search layer: a local scan worker renders each unique value's output lines
// with a BatchBuilder (and posts the batch: local/scan-protocol.ts), the
// ClickHouse tier builds them from its rows; sources read keys, line text and
// rrtypes back with the functions below and never rebuild a line.

import { LIMITS } from '../config/limits.js';
import { jsonString } from '../render/json-text.js';
import { flexNameLine, flexRdataLine } from '../render/result-lines.js';

/**
 * Unique values in ascending order, already rendered as the stream will
 * write them. Value i is keys[i] (the merge key); its output lines are
 * text[ends[i-1] .. ends[i]) (ends[-1] = 0), one line per rrtype, ascending,
 * each ending in a newline; those rrtypes are types[typeEnds[i-1] ..
 * typeEnds[i]), one per line, for the rare value that several shards hold
 * (the front end unites its lines by rrtype).
 *
 * Why pre-rendered: sent as one small array and a tuple of arrays per
 * value, a 10,000-result answer cost the front end's single thread about
 * 8 ms in structured-clone objects and garbage, and as much again building
 * JSON lines, while the workers sat idle. One string and a few typed arrays
 * per batch move that work to the workers.
 */
export interface FlexBatch {
  keys: string[];
  text: string;
  ends: Uint32Array;
  types: Uint16Array;
  typeEnds: Uint32Array;
}

/** Collects one batch in the worker. */
export class BatchBuilder {
  private keys: string[] = [];
  private text = '';
  private ends: number[] = [];
  private types: number[] = [];
  private typeEnds: number[] = [];
  /** Lines of the value being added, before the line-length cut. */
  private kept = 0;
  private json = '';

  get values(): number {
    return this.keys.length;
  }

  get bytes(): number {
    return this.text.length;
  }

  /** Starts a value; add its rrtypes in ascending order, then call endValue. */
  beginValue(value: string): void {
    this.json = jsonString(value);
    this.kept = 0;
  }

  nameLine(rrtype: number): void {
    this.text += flexNameLine(this.json, rrtype);
    this.types.push(rrtype);
    this.kept++;
  }

  rdataLine(rrtype: number, rawHex: string): void {
    this.kept++;
    const line = flexRdataLine(this.json, rrtype, rawHex);
    // compat.md: keep lines well under 64 KiB; a longer rdata is left out
    // rather than breaking clients (the value still counts as a result).
    if (line.length - 1 > LIMITS.lineBytesMax) return; // its newline aside
    this.text += line;
    this.types.push(rrtype);
  }

  /** Ends the value; false (and nothing kept) when the filters left it no rrtype. */
  endValue(value: string): boolean {
    if (this.kept === 0) return false;
    this.keys.push(value);
    this.ends.push(this.text.length);
    this.typeEnds.push(this.types.length);
    return true;
  }

  /** The batch so far, and a fresh start. */
  take(): FlexBatch {
    const b: FlexBatch = {
      keys: this.keys, text: this.text, ends: Uint32Array.from(this.ends),
      types: Uint16Array.from(this.types), typeEnds: Uint32Array.from(this.typeEnds),
    };
    this.keys = [];
    this.text = '';
    this.ends = [];
    this.types = [];
    this.typeEnds = [];
    return b;
  }
}

/** The output lines of value i of a batch. */
export function valueLines(b: FlexBatch, i: number): string {
  return b.text.slice(i === 0 ? 0 : b.ends[i - 1]!, b.ends[i]!);
}

/** The rrtypes of value i's lines. */
export function batchTypes(b: FlexBatch, i: number): Uint16Array {
  return b.types.subarray(i === 0 ? 0 : b.typeEnds[i - 1]!, b.typeEnds[i]!);
}
