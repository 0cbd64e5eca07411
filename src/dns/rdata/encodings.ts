// Binary fields spelled as hex, base64 or base32hex: both directions.
//
// Contract: output is upper-case hex (digests, NSEC3 salt), base64 in one
// word (keys) or in 56-character words (RRSIG signatures, as DNSDB writes
// them), upper-case base32hex without padding (NSEC3 next hash), and
// lower-case hex groups (EUI-48/64, ILNP locators). Input accepts either
// case; the text is validated before it is decoded (Node's decoders skip
// what they do not understand), and bad text throws DnsFormatError.

import { DnsFormatError } from '../../errors/catalogue.js';
import { printable } from '../name.js';
import { cursor, lengthOctet, NOT_CANONICAL } from './wire.js';
import { put8, putEncoded, reserveLength8, setLength8 } from './writer.js';

// ---- Output

export function hexUpper(b: Uint8Array, start: number, end: number): string {
  return Buffer.from(b.buffer, b.byteOffset + start, end - start).toString('hex').toUpperCase();
}

export function base64(b: Uint8Array, start: number, end: number): string {
  return Buffer.from(b.buffer, b.byteOffset + start, end - start).toString('base64');
}

/** Base64 in chunks of 56 characters separated by single spaces (DNSDB's RRSIG style). */
export function base64Split(b: Uint8Array, start: number, end: number): string {
  const s = base64(b, start, end);
  if (s.length <= 56) return s;
  let out = s.slice(0, 56);
  for (let i = 56; i < s.length; i += 56) out += ` ${s.slice(i, i + 56)}`;
  return out;
}

const B32HEX = '0123456789ABCDEFGHIJKLMNOPQRSTUV';

function base32hex(b: Uint8Array, start: number, end: number): string {
  let s = '';
  let acc = 0, bits = 0;
  for (let i = start; i < end; i++) {
    acc = (acc << 8) | b[i]!;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      s += B32HEX[(acc >> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  if (bits > 0) s += B32HEX[(acc << (5 - bits)) & 31];
  return s;
}

/** Lower-case hex of b[p, p+n) in groups of `groupBytes` octets joined by `sep`. */
export function hexGroups(b: Uint8Array, p: number, n: number, sep: string, groupBytes: number): string {
  let s = '';
  for (let i = 0; i < n; i += groupBytes) {
    let g = '';
    for (let j = 0; j < groupBytes; j++) g += b[p + i + j]!.toString(16).padStart(2, '0');
    s += (i ? sep : '') + g;
  }
  return s;
}

/** NSEC3 salt: a length octet and the salt in hex, "-" when empty. Sets cursor.pos. */
export function saltText(b: Uint8Array, p: number): string {
  const n = lengthOctet(b, p, 'salt');
  cursor.pos = p + 1 + n;
  return n === 0 ? '-' : hexUpper(b, p + 1, p + 1 + n);
}

/** NSEC3 next hashed owner: a length octet and the hash in base32hex. Sets cursor.pos. */
export function hashText(b: Uint8Array, p: number): string {
  const n = lengthOctet(b, p, 'hash');
  if (n === 0) throw NOT_CANONICAL;
  cursor.pos = p + 1 + n;
  return base32hex(b, p + 1, p + 1 + n);
}

// ---- Input

// Per char code: 1 for the base64 alphabet (padding is checked separately), 2 for hex digits, 3 for both.
const B64_HEX = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/') B64_HEX[c.charCodeAt(0)] = 1;
for (const c of '0123456789abcdefABCDEF') B64_HEX[c.charCodeAt(0)]! |= 2;

/** Whether s[0, n) holds only characters of the given B64_HEX class. */
function allOfClass(s: string, n: number, cls: number): boolean {
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || (B64_HEX[c]! & cls) === 0) return false;
  }
  return true;
}

/** Whether s is hex digits only (any count, none included). */
export function isHexDigits(s: string): boolean {
  return allOfClass(s, s.length, 2);
}

/** Characters of valid base64 text before its padding, or -1 when it is not valid base64. */
export function base64DataChars(s: string): number {
  let n = s.length;
  if (n % 4 !== 0) return -1;
  if (n > 0 && s.charCodeAt(n - 1) === 0x3d) n -= s.charCodeAt(n - 2) === 0x3d ? 2 : 1;
  return allOfClass(s, n, 1) ? n : -1;
}

export function putHex(s: string, what: string): void {
  if (s.length % 2 !== 0 || !isHexDigits(s)) throw new DnsFormatError(`bad hex in ${what}: "${printable(s)}"`);
  putEncoded(s, s.length / 2, 'hex');
}

export function putBase64(s: string, what: string): void {
  const n = base64DataChars(s);
  if (n < 0) throw new DnsFormatError(`bad base64 in ${what}: "${printable(s)}"`);
  putEncoded(s, (n * 3) >> 2, 'base64');
}

const B32_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 32; i++) {
  B32_VALUE[B32HEX.charCodeAt(i)] = i;
  B32_VALUE[B32HEX.toLowerCase().charCodeAt(i)] = i;
}

function putBase32hex(s: string): void {
  // Valid lengths leave fewer than 5 spare bits, all zero.
  if (s.length === 0 || [1, 3, 6].includes(s.length % 8)) throw new DnsFormatError(`bad base32hex "${printable(s)}"`);
  let acc = 0, bits = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const v = c < 128 ? B32_VALUE[c]! : -1;
    if (v < 0) throw new DnsFormatError(`bad base32hex "${printable(s)}"`);
    acc = ((acc << 5) | v) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      put8((acc >> bits) & 0xff);
    }
  }
  if ((acc & ((1 << bits) - 1)) !== 0) throw new DnsFormatError(`bad base32hex "${printable(s)}" (non-zero padding bits)`);
}

/** `bytes` octets written as hex groups of `groupBytes` octets joined by `sep`; "-" groups must be whole. */
export function putHexGroups(tok: string, bytes: number, sep: string, groupBytes: number, what: string): void {
  const parts = tok.split(sep);
  const digits = groupBytes * 2;
  const exact = sep === '-';
  if (parts.length !== bytes / groupBytes) throw new DnsFormatError(`bad ${what} "${printable(tok)}"`);
  for (const part of parts) {
    if (part.length === 0 || !isHexDigits(part) || part.length > digits || (exact && part.length !== digits)) {
      throw new DnsFormatError(`bad ${what} "${printable(tok)}"`);
    }
    putHex(part.padStart(digits, '0'), what);
  }
}

export function putSalt(tok: string): void {
  if (tok === '-') return put8(0);
  if (tok.length > 510) throw new DnsFormatError('NSEC3 salt longer than 255 octets');
  put8(tok.length / 2);
  putHex(tok, 'salt');
}

export function putHash(tok: string): void {
  const at = reserveLength8();
  putBase32hex(tok);
  if (setLength8(at) > 255) throw new DnsFormatError('NSEC3 hash longer than 255 octets');
}
