// The scratch buffer every text and message parser builds rdata in.
//
// Contract: a parse starts with begin(), appends with the put functions and
// ends with writtenView(), a view of the result that the next parse
// overwrites (a caller that keeps it copies it: rdataFromTokens). The put
// functions refuse to grow the rdata past RDATA_OCTETS_MAX (DnsFormatError
// "rdata longer than 65535 octets").
// rdataFromMessage writes into `out.buf` directly: it can hold two expanded
// names beyond the bound, because that bound is checked only at the end.

import { DnsFormatError } from '../../errors/catalogue.js';
import { writeNameWire } from '../name.js';
import { RDATA_OCTETS_MAX } from './wire.js';

const buf = new Uint8Array(RDATA_OCTETS_MAX + 1024);
/** The buffer and the write position in it. */
export const out = { buf, pos: 0 };
// Names are written through this view, so writeNameWire enforces the bound.
const bounded = buf.subarray(0, RDATA_OCTETS_MAX);
const view = Buffer.from(buf.buffer, buf.byteOffset, buf.length);

export function begin(): void {
  out.pos = 0;
}

/** What was written since begin(), as a view of the scratch buffer: valid until the next parse. */
export function writtenView(): Uint8Array {
  return buf.subarray(0, out.pos);
}

/** Whether `w` is a view of the scratch buffer (writtenView's), not a copy. */
export function isScratch(w: Uint8Array): boolean {
  return w.buffer === buf.buffer;
}

/** A copy of what was written since `start`, which is then forgotten: for values built before their length is known. */
export function takeSince(start: number): Uint8Array {
  const v = buf.slice(start, out.pos);
  out.pos = start;
  return v;
}

function room(n: number): void {
  if (out.pos + n > RDATA_OCTETS_MAX) throw new DnsFormatError('rdata longer than 65535 octets');
}

export function put8(v: number): void {
  room(1);
  buf[out.pos++] = v;
}

export function put16(v: number): void {
  room(2);
  buf[out.pos++] = v >>> 8;
  buf[out.pos++] = v & 0xff;
}

export function put32(v: number): void {
  room(4);
  buf[out.pos++] = v >>> 24;
  buf[out.pos++] = (v >>> 16) & 0xff;
  buf[out.pos++] = (v >>> 8) & 0xff;
  buf[out.pos++] = v & 0xff;
}

export function putBytes(b: Uint8Array): void {
  room(b.length);
  buf.set(b, out.pos);
  out.pos += b.length;
}

/** Decodes `octets` octets of hex or base64 text; the caller has checked the text. */
export function putEncoded(text: string, octets: number, encoding: 'hex' | 'base64'): void {
  room(octets);
  out.pos += view.write(text, out.pos, octets, encoding);
}

/** A presentation name, lower-cased, relative ones completed with origin (the root when undefined). */
export function putName(name: string, origin: string | undefined): void {
  out.pos = writeNameWire(name, origin, bounded, out.pos);
}

/** Writes a placeholder length octet and returns its position, for setLength8 once the field is written. */
export function reserveLength8(): number {
  put8(0);
  return out.pos - 1;
}

/** Octets written after the length octet at `at`, which is set to that count (the caller checks it is below 256). */
export function setLength8(at: number): number {
  const n = out.pos - at - 1;
  buf[at] = n;
  return n;
}
