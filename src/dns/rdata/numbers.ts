// Numbers in presentation text: decimal fields, TTL-style durations, RRSIG
// times, and the mnemonics some numeric fields accept on input.
//
// Contract: every parser takes one word and returns the number or throws
// DnsFormatError naming the field; parseTtl alone answers undefined, because
// the zone reader uses it to tell a TTL from the next field. Output is always
// plain decimal, so the text side needs nothing from here.

import { DnsFormatError } from '../../errors/catalogue.js';
import { printable } from '../name.js';

function isDigits(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/** A decimal field of at most `max`. */
export function num(tok: string, max: number, what: string): number {
  if (!isDigits(tok) || tok.length > 10) throw new DnsFormatError(`bad ${what} "${printable(tok)}"`);
  const v = Number(tok);
  if (v > max) throw new DnsFormatError(`${what} ${tok} is above ${max}`);
  return v;
}

const TTL_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };

/** Seconds of a TTL-style value: digits, or BIND units such as "1h30m"; undefined when it is neither. */
export function parseTtl(tok: string): number | undefined {
  if (isDigits(tok)) return tok.length <= 10 && Number(tok) <= 0xffffffff ? Number(tok) : undefined;
  let total = 0;
  let value = -1;
  for (let i = 0; i < tok.length; i++) {
    const c = tok.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) {
      value = (value < 0 ? 0 : value) * 10 + (c - 0x30);
      if (value > 0xffffffff) return undefined;
    } else {
      const unit = TTL_UNITS[tok[i]!.toLowerCase()];
      if (unit === undefined || value < 0) return undefined;
      total += value * unit;
      value = -1;
    }
  }
  if (value >= 0 || total > 0xffffffff) return undefined;
  return total;
}

/** A u32 given as a number or in TTL units (SOA timers). */
export function ttlField(tok: string): number {
  const v = parseTtl(tok);
  if (v === undefined) throw new DnsFormatError(`bad number "${printable(tok)}"`);
  return v;
}

/** Value of the decimal digits tok[from, from+n); the caller has checked they are digits. */
function digitsAt(tok: string, from: number, n: number): number {
  let v = 0;
  for (let i = from; i < from + n; i++) v = v * 10 + (tok.charCodeAt(i) - 0x30);
  return v;
}

/** Epoch seconds of an RRSIG time given as YYYYMMDDHHMMSS (RFC 4034 section 3.2) or as decimal seconds. */
export function parseTime(tok: string): number {
  if (tok.length === 14 && isDigits(tok)) {
    const y = digitsAt(tok, 0, 4), mo = digitsAt(tok, 4, 2), d = digitsAt(tok, 6, 2);
    const h = digitsAt(tok, 8, 2), mi = digitsAt(tok, 10, 2), s = digitsAt(tok, 12, 2);
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) throw new DnsFormatError(`bad time "${tok}"`);
    const ms = Date.UTC(y, mo - 1, d, h, mi, s);
    if (ms < 0 || new Date(ms).getUTCDate() !== d) throw new DnsFormatError(`bad time "${tok}"`);
    // RFC 4034: the field is serial-number arithmetic modulo 2^32.
    return (ms / 1000) % 2 ** 32;
  }
  return num(tok, 0xffffffff, 'time');
}

// DNSSEC algorithm mnemonics (RFC 8624 and the IANA registry).
const ALGORITHMS = new Map<string, number>([
  ['RSAMD5', 1], ['DH', 2], ['DSA', 3], ['RSASHA1', 5], ['DSA-NSEC3-SHA1', 6], ['RSASHA1-NSEC3-SHA1', 7],
  ['RSASHA256', 8], ['RSASHA512', 10], ['ECC-GOST', 12], ['ECDSAP256SHA256', 13], ['ECDSAP384SHA384', 14],
  ['ED25519', 15], ['ED448', 16], ['INDIRECT', 252], ['PRIVATEDNS', 253], ['PRIVATEOID', 254],
]);
// CERT types (RFC 4398 section 2.1).
const CERT_TYPES = new Map<string, number>([
  ['PKIX', 1], ['SPKI', 2], ['PGP', 3], ['IPKIX', 4], ['ISPKI', 5], ['IPGP', 6], ['ACPKIX', 7], ['IACPKIX', 8],
  ['URI', 253], ['OID', 254],
]);

function mnemonicOrNumber(tok: string, table: Map<string, number>, max: number, what: string): number {
  const known = table.get(tok.toUpperCase());
  return known ?? num(tok, max, what);
}

/** A u8 DNSSEC algorithm: number or mnemonic. */
export function algorithm(tok: string): number {
  return mnemonicOrNumber(tok, ALGORITHMS, 0xff, 'algorithm');
}

/** A u16 CERT type: number or mnemonic. */
export function certType(tok: string): number {
  return mnemonicOrNumber(tok, CERT_TYPES, 0xffff, 'certificate type');
}

/** A u8 IP protocol (WKS): number, "tcp" or "udp". */
export function ipProtocol(tok: string): number {
  return tok.toLowerCase() === 'tcp' ? 6 : tok.toLowerCase() === 'udp' ? 17 : num(tok, 0xff, 'protocol');
}
