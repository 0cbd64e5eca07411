// Character-strings (RFC 1035 section 3.3) and the other quoted or tag-like
// text fields: both directions.
//
// Contract: on output a string is double-quoted with `"` and `\` escaped and
// every byte outside 0x20-0x7E written as \DDD, so the text is printable
// ASCII. On input the escapes are decoded and non-ASCII characters are
// written as UTF-8; a character-string above 255 octets throws
// DnsFormatError. The CAA tag is the exception: alphanumerics, unquoted.

import { DnsFormatError } from '../../errors/catalogue.js';
import { decodeEscape, printable, putUtf8 } from '../name.js';
import { cursor, lengthOctet, NOT_CANONICAL, RDATA_OCTETS_MAX } from './wire.js';
import { out, put8, reserveLength8, setLength8 } from './writer.js';

// Strings are escaped into this buffer: 4 characters per byte at most.
const escBuf = Buffer.allocUnsafe(RDATA_OCTETS_MAX * 4 + 2);

/** `"..."` text of bytes [start, end): `"` and `\` escaped, bytes outside 0x20-0x7E as \DDD. */
export function quoted(b: Uint8Array, start: number, end: number): string {
  let p = 0;
  escBuf[p++] = 0x22;
  for (let i = start; i < end; i++) {
    const c = b[i]!;
    if (c === 0x22 || c === 0x5c) {
      escBuf[p++] = 0x5c;
      escBuf[p++] = c;
    } else if (c >= 0x20 && c <= 0x7e) {
      escBuf[p++] = c;
    } else {
      escBuf[p++] = 0x5c;
      escBuf[p++] = 0x30 + ((c / 100) | 0);
      escBuf[p++] = 0x30 + (((c / 10) | 0) % 10);
      escBuf[p++] = 0x30 + (c % 10);
    }
  }
  escBuf[p++] = 0x22;
  return escBuf.toString('latin1', 0, p);
}

/** One character-string at b[p]. Sets cursor.pos. */
export function cstrText(b: Uint8Array, p: number): string {
  const n = lengthOctet(b, p, 'character-string');
  cursor.pos = p + 1 + n;
  return quoted(b, p + 1, p + 1 + n);
}

/** One or more character-strings to the end of the rdata, space-separated. Sets cursor.pos. */
export function cstrsText(b: Uint8Array, p: number): string {
  if (p === b.length) throw NOT_CANONICAL; // at least one string
  let s = '';
  while (p < b.length) {
    const t = cstrText(b, p);
    s += (s.length ? ' ' : '') + t;
    p = cursor.pos;
  }
  return s;
}

/** CAA tag (RFC 8659): a length octet and 1-255 alphanumerics, written unquoted. Sets cursor.pos. */
export function caaTagText(b: Uint8Array, p: number): string {
  const n = lengthOctet(b, p, 'CAA tag');
  if (n === 0) throw NOT_CANONICAL;
  let s = '';
  for (let i = p + 1; i <= p + n; i++) {
    const c = b[i]!;
    const alnum = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
    if (!alnum) throw NOT_CANONICAL;
    s += String.fromCharCode(c);
  }
  cursor.pos = p + 1 + n;
  return s;
}

/** Decodes a string's escapes (and UTF-8 for non-ASCII text) into the rdata; returns its length in octets. */
export function putCharString(raw: string, maxLen: number): number {
  const start = out.pos;
  const n = raw.length;
  for (let i = 0; i < n; i++) {
    const c = raw.charCodeAt(i);
    if (c === 0x5c) {
      const e = decodeEscape(raw, i);
      if (e < 0) i = putUtf8(raw, -1 - e, put8);
      else {
        put8(e >> 3);
        i += e & 7;
      }
    } else if (c >= 0x80) {
      i = putUtf8(raw, i, put8);
    } else {
      put8(c);
    }
  }
  const len = out.pos - start;
  if (len > maxLen) throw new DnsFormatError(`character-string longer than ${maxLen} octets: "${printable(raw)}"`);
  return len;
}

/** A character-string: length octet plus the string. */
export function putCstr(raw: string): void {
  const at = reserveLength8();
  putCharString(raw, 255);
  setLength8(at);
}

export function putCaaTag(tok: string): void {
  if (!/^[A-Za-z0-9]{1,255}$/.test(tok)) throw new DnsFormatError(`bad CAA tag "${printable(tok)}"`);
  put8(tok.length);
  for (let k = 0; k < tok.length; k++) put8(tok.charCodeAt(k));
}
