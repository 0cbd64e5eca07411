// Address fields: IPv4, IPv6, APL address prefixes, NSAP, EUI-48/64 and ILNP
// locators; both directions.
//
// Contract: IPv4 dotted quad, IPv6 in RFC 5952 form (ip.ts), APL items as
// `[!]family:address/prefix` with trailing zero octets trimmed on the wire
// (RFC 3123), NSAP as `0x` and upper-case hex, EUI as lower-case hex pairs
// joined by `-`, ILNP locators as four lower-case hex groups joined by `:`.
// An address that does not parse throws DnsFormatError naming the field;
// wire APL that is untrimmed or of another family is NOT_CANONICAL.

import { DnsFormatError } from '../../errors/catalogue.js';
import { ipv4FromText, ipv4ToText, ipv6FromText, ipv6ToText } from '../ip.js';
import { printable } from '../name.js';
import { hexGroups, hexUpper, putHex, putHexGroups } from './encodings.js';
import { joinedRest, type Tokens } from './tokens.js';
import { cursor, malformed, need, NOT_CANONICAL, u16 } from './wire.js';
import { put16, put8, putBytes } from './writer.js';

/** The IPv4 address at b[p]; `what` names it when cut. Sets cursor.pos. */
export function ipv4Text(b: Uint8Array, p: number, what: string): string {
  need(b, p, 4, what);
  cursor.pos = p + 4;
  return ipv4ToText(b, p);
}

/** The IPv6 address at b[p]; `what` names it when cut. Sets cursor.pos. */
export function ipv6Text(b: Uint8Array, p: number, what: string): string {
  need(b, p, 16, what);
  cursor.pos = p + 16;
  return ipv6ToText(b, p);
}

export function putIpv4(tok: string): void {
  const a = ipv4FromText(tok);
  if (!a) throw new DnsFormatError(`bad IPv4 address "${printable(tok)}"`);
  putBytes(a);
}

export function putIpv6(tok: string): void {
  const a = ipv6FromText(tok);
  if (!a) throw new DnsFormatError(`bad IPv6 address "${printable(tok)}"`);
  putBytes(a);
}

// ---- APL (RFC 3123): address prefix lists

/** The address of one APL item: its `afd` stored octets, zero-filled to the family's length. */
function aplAddressText(family: number, prefix: number, b: Uint8Array, p: number, afd: number): string {
  if (family === 1) {
    if (afd > 4 || prefix > 32) throw malformed('APL IPv4 item');
    const a = new Uint8Array(4);
    a.set(b.subarray(p, p + afd));
    return ipv4ToText(a);
  }
  if (family === 2) {
    if (afd > 16 || prefix > 128) throw malformed('APL IPv6 item');
    const a = new Uint8Array(16);
    a.set(b.subarray(p, p + afd));
    return ipv6ToText(a);
  }
  throw NOT_CANONICAL;
}

export function aplText(b: Uint8Array, p: number): string {
  let s = '';
  while (p < b.length) {
    need(b, p, 4, 'APL item');
    const family = u16(b, p), prefix = b[p + 2]!, neg = b[p + 3]! & 0x80, afd = b[p + 3]! & 0x7f;
    need(b, p + 4, afd, 'APL address');
    if (afd > 0 && b[p + 3 + afd] === 0) throw NOT_CANONICAL; // trailing zero octets must be trimmed
    const addr = aplAddressText(family, prefix, b, p + 4, afd);
    s += `${s.length ? ' ' : ''}${neg ? '!' : ''}${family}:${addr}/${prefix}`;
    p += 4 + afd;
  }
  return s;
}

export function putApl(toks: Tokens, i: number): void {
  for (; i < toks.length; i++) {
    const m = /^(!?)(\d+):([^/]+)\/(\d{1,3})$/.exec(toks.text[i]!);
    if (!m) throw new DnsFormatError(`bad APL item "${printable(toks.text[i]!)}"`);
    const family = Number(m[2]), prefix = Number(m[4]);
    const addr = family === 1 ? ipv4FromText(m[3]!) : family === 2 ? ipv6FromText(m[3]!) : undefined;
    if (!addr || prefix > addr.length * 8) throw new DnsFormatError(`bad APL item "${printable(toks.text[i]!)}"`);
    let afd = addr.length;
    while (afd > 0 && addr[afd - 1] === 0) afd--;
    put16(family);
    put8(prefix);
    put8((m[1] ? 0x80 : 0) | afd);
    putBytes(addr.subarray(0, afd));
  }
}

// ---- NSAP (RFC 1706), EUI-48/64 (RFC 7043), ILNP locators (RFC 6742)

export function nsapText(b: Uint8Array, p: number): string {
  if (p === b.length) throw NOT_CANONICAL;
  return `0x${hexUpper(b, p, b.length)}`;
}

/** NSAP from the remaining words: `0x` then hex, dots allowed anywhere. */
export function putNsap(toks: Tokens, i: number): void {
  const s = joinedRest(toks, i).replace(/\./g, '');
  if (!/^0x/i.test(s) || s.length < 4) throw new DnsFormatError(`bad NSAP "${printable(s)}"`);
  putHex(s.slice(2), 'NSAP');
}

/** EUI-48 (octets 6) or EUI-64 (octets 8) at b[p]. Sets cursor.pos. */
export function euiText(b: Uint8Array, p: number, octets: number): string {
  need(b, p, octets, 'EUI');
  cursor.pos = p + octets;
  return hexGroups(b, p, octets, '-', 1);
}

export function putEui(tok: string, octets: number): void {
  putHexGroups(tok, octets, '-', 1, octets === 6 ? 'EUI48' : 'EUI64');
}

/** A 64-bit ILNP locator (NID, L64) at b[p]. Sets cursor.pos. */
export function locatorText(b: Uint8Array, p: number): string {
  need(b, p, 8, 'locator');
  cursor.pos = p + 8;
  return hexGroups(b, p, 8, ':', 2);
}

export function putLocator(tok: string): void {
  putHexGroups(tok, 8, ':', 2, 'locator');
}
