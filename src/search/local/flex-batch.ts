// Flexible-search results as they cross from a scan worker to the front end
// (the FlexBatch of scan-protocol.ts): the worker renders each unique value's
// output lines with a BatchBuilder; the front end's merge reads keys and
// line text back with the functions below and never rebuilds a line, except
// for a value several shards hold, whose lines it unites by rrtype.

import { LIMITS } from '../../config/limits.js';
import { rrtypeToText } from '../../dns/rrtype.js';
import { jsonString } from '../../render/json-text.js';
import type { FlexBatch } from './scan-protocol.js';

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
    this.text += `{"obj":{"rrname":${this.json},"rrtype":"${rrtypeToText(rrtype)}"}}\n`;
    this.types.push(rrtype);
    this.kept++;
  }

  rdataLine(rrtype: number, rawHex: string): void {
    this.kept++;
    const line = `{"obj":{"rdata":${this.json},"rrtype":"${rrtypeToText(rrtype)}","raw_rdata":"${rawHex}"}}`;
    // compat.md: keep lines well under 64 KiB; a longer rdata is left out
    // rather than breaking clients (the value still counts as a result).
    if (line.length > LIMITS.lineBytesMax) return;
    this.text += line + '\n';
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

/** The line text and rrtypes of one value, for uniting. */
export interface ValueLines {
  text: string;
  types: ArrayLike<number>;
}

export function valueOf(b: FlexBatch, i: number): ValueLines {
  return { text: valueLines(b, i), types: b.types.subarray(i === 0 ? 0 : b.typeEnds[i - 1]!, b.typeEnds[i]!) };
}

/**
 * The lines of one value held by two shards: one line per rrtype, ascending;
 * for an rrtype both hold, the first's line (the lines are equal: one value
 * of one rrtype has one wire form).
 */
export function uniteLines(a: ValueLines, b: ValueLines): ValueLines {
  const la = a.text.split('\n');
  const lb = b.text.split('\n');
  const types: number[] = [];
  let text = '';
  let i = 0;
  let j = 0;
  while (i < a.types.length || j < b.types.length) {
    const ta = i < a.types.length ? a.types[i]! : Infinity;
    const tb = j < b.types.length ? b.types[j]! : Infinity;
    if (ta <= tb) {
      text += la[i]! + '\n';
      types.push(ta);
      i++;
      if (ta === tb) j++;
    } else {
      text += lb[j]! + '\n';
      types.push(tb);
      j++;
    }
  }
  return { text, types };
}
