// Standard-search result lines written as bytes, straight from a shard's
// records: the text lookupLine (result-lines.ts) makes, without a string per
// row. A 1,000-row lookup spent most of its time making strings (the owner
// decoded and reversed, each rdata decoded, numbers, the line joined) and
// then flattening and converting them for the socket (perf on
// `node dist/bench/request-path.js --parts wide`); here the owner's bytes
// are reversed into a scratch buffer, every name and text is copied with
// writeJsonStringBody, and numbers are written as digits.
//
// The line is written a member at a time, in lookupLine's order:
//   begin(sighting)      {"obj":{"count":N and the times it has
//   owner(reversed)      ,"rrname":"NAME"
//   rrtype(t)            ,"rrtype":"TYPE"
//   then either one record (rdata lookups):
//     rdata(text)        ,"rdata":"TEXT"}}\n
//   or the RRset's (rrset lookups):
//     bailiwick(name)    ,"bailiwick":"NAME" (left out when unknown)
//     record(text)...    ,"rdata":["T1","T2",...
//     endRecords()       ]}}\n
// test/unit/render/lookup-line-bytes.test.ts holds it to lookupLine's text.

import { reverseNameBytes } from '../dns/name.js';
import { rrtypeToText } from '../dns/rrtype.js';
import type { Sighting } from '../model/sighting.js';
import { writeJsonStringBody } from './json-text.js';
import { timeJson } from './result-lines.js';

const latin1 = (s: string): Uint8Array => Buffer.from(s, 'latin1');

const BEGIN = latin1('{"obj":{"count":');
const TIME_FIRST = latin1(',"time_first":');
const TIME_LAST = latin1(',"time_last":');
const ZONE_TIME_FIRST = latin1(',"zone_time_first":');
const ZONE_TIME_LAST = latin1(',"zone_time_last":');
const RRNAME = latin1(',"rrname":"');
const BAILIWICK = latin1(',"bailiwick":"');
const RDATA_ONE = latin1(',"rdata":"');
const RDATA_OPEN = latin1(',"rdata":[');
const RECORD_FIRST = latin1(',"rdata":["');
const RECORD_NEXT = latin1(',"');
const ONE_END = latin1('"}}\n');
const RECORDS_END = latin1(']}}\n');
/** Bytes a member's constant parts and a number may take beyond its text. */
const SLACK = 64;
/**
 * A buffer grown past this (RRsets of large records, a long run) is let go
 * at the next take(): a writer lives as long as its thread, and one answer
 * must not leave it holding megabytes.
 */
const KEPT_BYTES_MAX = 1 << 20;

/**
 * A record's end, cut to the bytes it is in: a damaged shard's offsets (a
 * file overwritten under the server, until its checks take it out) must not
 * make the thread copy or allocate whatever they say.
 */
function endIn(src: Uint8Array, end: number): number {
  return end > src.length ? src.length : end;
}

/** `","rrtype":"TYPE"` per rrtype, made once (the quote closes the rrname). */
const rrtypeParts = new Map<number, Uint8Array>();

function rrtypePart(t: number): Uint8Array {
  let part = rrtypeParts.get(t);
  if (part === undefined) {
    part = latin1(`","rrtype":"${rrtypeToText(t)}"`);
    rrtypeParts.set(t, part);
  }
  return part;
}

export class LookupLineBytes {
  private buf: Buffer;
  private used = 0;
  /** An owner reversed back, before it is escaped into buf. */
  private name = new Uint8Array(512);
  /** Records of the current RRset written so far (the first opens the array). */
  private records = 0;
  /** The current line's times as RFC 3339 strings (begin()'s humantime). */
  private humantime = false;

  /** `firstBytes`: the buffer's size until a line needs more (it doubles). */
  constructor(private readonly firstBytes = 1 << 16) {
    this.buf = Buffer.allocUnsafe(firstBytes);
  }

  /** Bytes written since the last take(). */
  get length(): number {
    return this.used;
  }

  /**
   * The lines written since the last take(), as a view of this writer's
   * buffer: valid until the next write (the sink writes or copies what it
   * is given before it returns).
   */
  take(): Uint8Array {
    const lines = this.buf.subarray(0, this.used);
    this.used = 0;
    if (this.buf.length > KEPT_BYTES_MAX) this.buf = Buffer.allocUnsafe(this.firstBytes);
    return lines;
  }

  /**
   * What take() gives, or as a string when it is short (under
   * `textBytesMax`): a sink joins short runs to the text it holds anyway,
   * and one conversion here costs less than the two views and conversion on
   * the way there (an exact lookup's one line; bench/micro/front-end.ts).
   * Lines are ASCII, so latin1 is exact.
   */
  takeLines(textBytesMax: number): string | Uint8Array {
    if (this.used >= textBytesMax) return this.take();
    const text = this.buf.toString('latin1', 0, this.used);
    this.used = 0;
    return text;
  }

  /** Drops what was written since the last take() (a line left half-written by a throw). */
  clear(): void {
    this.used = 0;
  }

  /** A whole line made elsewhere (lookupLine's text, for a source that holds strings), with its newline. */
  line(text: string): void {
    this.reserve(Buffer.byteLength(text) + 1);
    this.used += this.buf.write(text, this.used, 'utf8');
    this.buf[this.used++] = 0x0a;
  }

  /** Starts a line: its count and times, epoch seconds or (humantime) RFC 3339 strings. */
  begin(s: Readonly<Sighting>, humantime: boolean): void {
    this.humantime = humantime;
    this.reserve(5 * SLACK);
    this.put(BEGIN);
    this.number(s.count);
    if (s.timeFirst !== 0) this.time(TIME_FIRST, s.timeFirst);
    if (s.timeLast !== 0) this.time(TIME_LAST, s.timeLast);
    if (s.zoneTimeFirst !== 0) this.time(ZONE_TIME_FIRST, s.zoneTimeFirst);
    if (s.zoneTimeLast !== 0) this.time(ZONE_TIME_LAST, s.zoneTimeLast);
  }

  /** The rrname, from the owner stored with its labels reversed: src[start, end). */
  owner(src: Uint8Array, start: number, end: number): void {
    const to = endIn(src, end), from = Math.min(start, to);
    if (this.name.length < to - from + 1) this.name = new Uint8Array(2 * (to - from + 1));
    const n = reverseNameBytes(src, from, to, this.name, 0);
    this.reserve(SLACK + 2 * n);
    this.put(RRNAME);
    this.used = writeJsonStringBody(this.name, 0, n, this.buf, this.used);
  }

  rrtype(t: number): void {
    this.reserve(SLACK);
    this.put(rrtypePart(t));
    this.records = 0;
  }

  /** An rdata lookup's one record, src[start, end); ends the line. */
  rdata(src: Uint8Array, start: number, end: number): void {
    this.text(RDATA_ONE, src, start, end);
    this.put(ONE_END);
  }

  /** An RRset's bailiwick, src[start, end); the caller leaves an unknown (empty) one out. */
  bailiwick(src: Uint8Array, start: number, end: number): void {
    this.text(BAILIWICK, src, start, end);
    this.buf[this.used++] = 0x22;
  }

  /** The RRset's next record, src[start, end). */
  record(src: Uint8Array, start: number, end: number): void {
    this.text(this.records++ === 0 ? RECORD_FIRST : RECORD_NEXT, src, start, end);
    this.buf[this.used++] = 0x22;
  }

  /** Closes the RRset's records and the line. */
  endRecords(): void {
    this.reserve(SLACK);
    if (this.records === 0) this.put(RDATA_OPEN);
    this.put(RECORDS_END);
  }

  /** `prefix`, then the JSON string body of src[start, end), with room for a closing part after it. */
  private text(prefix: Uint8Array, src: Uint8Array, start: number, end: number): void {
    const to = endIn(src, end), from = Math.min(start, to);
    this.reserve(SLACK + 2 * (to - from));
    this.put(prefix);
    this.used = writeJsonStringBody(src, from, to, this.buf, this.used);
  }

  private time(member: Uint8Array, t: number): void {
    this.put(member);
    if (this.humantime) this.ascii(timeJson(t, true));
    else this.number(t);
  }

  /** A count or time: non-negative integers as digits; anything else as JavaScript writes it (as lookupLine does). */
  private number(n: number): void {
    if (n !== n >>> 0) {
      this.ascii(String(n));
      return;
    }
    // Integer arithmetic (a 32-bit count or time): with Math.floor and %
    // on doubles the digits were the largest cost of a row.
    let digits = 1;
    for (let p = 10; digits < 10 && n >= p; p *= 10) digits++;
    const buf = this.buf;
    let at = this.used + digits;
    this.used = at;
    let x = n;
    do {
      const q = (x / 10) >>> 0;
      buf[--at] = 0x30 + x - q * 10;
      x = q;
    } while (x !== 0);
  }

  private ascii(s: string): void {
    this.reserve(s.length);
    this.used += this.buf.write(s, this.used, 'latin1');
  }

  /** A constant part: a few bytes, which a loop copies faster than TypedArray#set. */
  private put(part: Uint8Array): void {
    const buf = this.buf;
    let at = this.used;
    for (let i = 0; i < part.length; i++) buf[at++] = part[i]!;
    this.used = at;
  }

  private reserve(n: number): void {
    if (this.used + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.used + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    next.set(this.buf.subarray(0, this.used));
    this.buf = next;
  }
}
