// Bit-set fields: the NSEC-style type bitmap (NSEC, NSEC3, CSYNC), NXT's
// older type bitmap and WKS's port bitmap; both directions.
//
// Contract: bit n of a bitmap (most significant bit of octet 0 first) stands
// for type or port n; the text lists the set bits in ascending order,
// types by mnemonic and ports in decimal. Input may list them in any order.
// Wire with trailing zero octets is valid but has no canonical presentation
// (NOT_CANONICAL); broken window framing throws DnsFormatError.

import { DnsFormatError } from '../../errors/catalogue.js';
import { printable } from '../name.js';
import { rrtypeFromText, rrtypeToText } from '../rrtype.js';
import { num } from './numbers.js';
import type { Tokens } from './tokens.js';
import { malformed, NOT_CANONICAL } from './wire.js';
import { put8, putBytes } from './writer.js';

/** Appends to s, space-separated, the text of bit numbers first + k for each set bit k of b[start, end). */
function appendSetBits(s: string, b: Uint8Array, start: number, end: number, first: number, text: (n: number) => string): string {
  for (let i = start; i < end; i++) {
    const byte = b[i]!;
    if (byte === 0) continue;
    for (let bit = 0; bit < 8; bit++) {
      if (byte & (0x80 >> bit)) s += (s.length ? ' ' : '') + text(first + (i - start) * 8 + bit);
    }
  }
  return s;
}

function setBit(bits: Uint8Array, n: number): void {
  bits[n >> 3]! |= 0x80 >> (n & 7);
}

/** A type mnemonic from a bitmap's word list, or undefined when it names no type. */
function bitmapType(toks: Tokens, i: number): number | undefined {
  const t = rrtypeFromText(toks.text[i]!);
  return toks.quoted[i] ? undefined : t;
}

// ---- NSEC-style bitmap (RFC 4034 section 4.1.2): windows of 256 types

export function typeBitmapText(b: Uint8Array, start: number, end: number): string {
  let s = '';
  let p = start;
  let lastWindow = -1;
  while (p < end) {
    if (p + 2 > end) throw malformed('truncated type bitmap window');
    const win = b[p]!, len = b[p + 1]!;
    if (win <= lastWindow) throw malformed('type bitmap windows out of order');
    if (len < 1 || len > 32) throw malformed(`type bitmap window length ${len}`);
    if (p + 2 + len > end) throw malformed('truncated type bitmap');
    if (b[p + 1 + len] === 0) throw NOT_CANONICAL; // trailing zero octet
    s = appendSetBits(s, b, p + 2, p + 2 + len, win * 256, rrtypeToText);
    lastWindow = win;
    p += 2 + len;
  }
  return s;
}

export function putTypeBitmap(toks: Tokens, i: number): void {
  const types: number[] = [];
  for (; i < toks.length; i++) {
    const t = bitmapType(toks, i);
    if (t === undefined) throw new DnsFormatError(`unknown type "${printable(toks.text[i]!)}" in type bitmap`);
    types.push(t);
  }
  types.sort((a, b) => a - b);
  let p = 0;
  while (p < types.length) {
    const win = types[p]! >> 8;
    const bits = new Uint8Array(32);
    let len = 0;
    for (; p < types.length && types[p]! >> 8 === win; p++) {
      const low = types[p]! & 0xff;
      setBit(bits, low);
      len = Math.max(len, (low >> 3) + 1);
    }
    put8(win);
    put8(len);
    putBytes(bits.subarray(0, len));
  }
}

// ---- NXT bitmap (RFC 2535 section 5.2): one bitmap, types 1-127 only

export function nxtBitmapText(b: Uint8Array, p: number): string {
  if (p === b.length) return '';
  if (b[b.length - 1] === 0 || (b[p]! & 0x80) !== 0 || b.length - p > 16) throw NOT_CANONICAL;
  return appendSetBits('', b, p, b.length, 0, rrtypeToText);
}

export function putNxtBitmap(toks: Tokens, i: number): void {
  const bits = new Uint8Array(16);
  let len = 0;
  for (; i < toks.length; i++) {
    const t = bitmapType(toks, i);
    if (t === undefined || t === 0 || t > 127) {
      throw new DnsFormatError(`type "${printable(toks.text[i]!)}" cannot appear in an NXT bitmap`);
    }
    setBit(bits, t);
    len = Math.max(len, (t >> 3) + 1);
  }
  putBytes(bits.subarray(0, len));
}

// ---- WKS ports (RFC 1035 section 3.4.2)

export function wksPortsText(b: Uint8Array, p: number): string {
  if (p < b.length && b[b.length - 1] === 0) throw NOT_CANONICAL;
  return appendSetBits('', b, p, b.length, 0, String);
}

export function putWksPorts(toks: Tokens, i: number): void {
  const ports: number[] = [];
  for (; i < toks.length; i++) ports.push(num(toks.text[i]!, 0xffff, 'WKS port'));
  if (ports.length === 0) return;
  const bits = new Uint8Array((Math.max(...ports) >> 3) + 1);
  for (const p of ports) setBit(bits, p);
  putBytes(bits);
}
