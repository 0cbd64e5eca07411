// Record data: uncompressed wire form <-> master-file presentation text.
//
// Contract (compat.md "Values", DNSDB style):
// - rdataToText gives the canonical presentation: numbers in decimal, names
//   lower-case with a trailing dot, character-strings double-quoted with `"`
//   and `\` escaped and bytes outside 0x20-0x7E as `\DDD`, digests in
//   upper-case hex, keys in base64 as one word, RRSIG times as epoch seconds
//   and the RRSIG signature in base64 chunks of 56 characters. The text holds
//   only bytes 0x20-0x7E (asserted: the search blobs depend on it). Types we
//   have no presentation for, and wire that is valid but has no canonical
//   presentation (a TXT with no strings, a LOC of another version, a bitmap
//   with trailing zero bytes), come out in the RFC 3597 form `\# N HEX`.
//   Malformed wire (truncated fields, trailing bytes) throws DnsFormatError.
// - rdataFromText parses presentation text (any accepted spelling: RRSIG
//   times as YYYYMMDDHHMMSS or epoch seconds, base64 and hex split over
//   several words, algorithm mnemonics, `\# N HEX` for every type) into
//   uncompressed wire with names lower-cased. Relative names are completed
//   with `origin` (the root when there is none).
// - rdataFromMessage copies an rdata out of a DNS message into the same
//   canonical wire: compressed names expanded and lower-cased.
// Round trip: rdataFromText(t, rdataToText(t, w)) equals w for every w in
// canonical form (names lower-cased), and text -> wire -> text is stable.
//
// One table (SCHEMA) lists the fields of each type; three walkers (to text,
// from text, from a message) interpret it. LOC, A6, IPSECKEY and HIP have
// fields that depend on each other and get their own functions.

import assert from 'node:assert/strict';
import { DnsFormatError } from '../errors/catalogue.js';
import { rrtypeFromText, rrtypeToText } from './rrtype.js';
import { ipv4FromText, ipv4ToText, ipv6FromText, ipv6ToText } from './ip.js';
import { copiedNameEnd, copyWireName, decodeEscape, printable, putUtf8, readWireName, writeNameWire } from './name.js';

export const RDATA_OCTETS_MAX = 65_535;

// ---------------------------------------------------------------------------
// Field kinds. Each SCHEMA entry is the ordered list of a type's fields.

const U8 = 1, U16 = 2, U32 = 3, NAME = 4, IPV4 = 5, IPV6 = 6;
/** One character-string; CSTR_OPT may be absent at the end (ISDN). */
const CSTR = 7, CSTR_OPT = 8;
/** One or more character-strings to the end (TXT, SPF, AVC). */
const CSTRS = 9;
/** The rest as upper-case hex / base64 in one word / base64 in 56-character chunks. */
const HEX = 10, B64 = 11, B64_SPLIT = 12;
/** rrtype mnemonic (RRSIG type covered); RRSIG time; NSEC type bitmap to the end. */
const TYPE = 13, TIME = 14, BITMAP = 15;
/** NSEC3 salt (length byte + hex, "-" when empty); NSEC3 next hash (length byte + base32hex). */
const SALT = 16, HASH32 = 17;
const SVCPARAMS = 18;
/** The rest as one quoted string (CAA value, URI target); CAA tag (length byte + alphanumerics, unquoted). */
const STR_REST = 19, CAA_TAG = 20;
/** u8 algorithm / u16 certificate type, accepting mnemonics on input. */
const ALG = 21, CERT_TYPE = 22;
/** u32 that accepts BIND TTL units on input (SOA timers). */
const U32_TTL = 23;
const NSAP_HEX = 24, EUI48 = 25, EUI64 = 26, ILNP64 = 27, APL = 28, WKS_PROTO = 29, WKS_PORTS = 30;
/** NXT's type bitmap (RFC 2535 section 5.2): bit n for type n, types below 128 only. */
const NXT_BITMAP = 31;

const DS_LIKE = [U16, ALG, U8, HEX];
const DNSKEY_LIKE = [U16, U8, ALG, B64];
const RRSIG_LIKE = [TYPE, ALG, U8, U32, TIME, TIME, U16, NAME, B64_SPLIT];
const TLSA_LIKE = [U8, U8, U8, HEX];
const SVCB_LIKE = [U16, NAME, SVCPARAMS];

const SCHEMA = new Map<number, readonly number[]>([
  [1, [IPV4]], // A
  [2, [NAME]], [3, [NAME]], [4, [NAME]], [5, [NAME]], // NS MD MF CNAME
  [6, [NAME, NAME, U32, U32_TTL, U32_TTL, U32_TTL, U32_TTL]], // SOA
  [7, [NAME]], [8, [NAME]], [9, [NAME]], // MB MG MR
  [11, [IPV4, WKS_PROTO, WKS_PORTS]], // WKS
  [12, [NAME]], // PTR
  [13, [CSTR, CSTR]], // HINFO
  [14, [NAME, NAME]], // MINFO
  [15, [U16, NAME]], // MX
  [16, [CSTRS]], // TXT
  [17, [NAME, NAME]], // RP
  [18, [U16, NAME]], // AFSDB
  [19, [CSTR]], // X25
  [20, [CSTR, CSTR_OPT]], // ISDN
  [21, [U16, NAME]], // RT
  [22, [NSAP_HEX]], // NSAP
  [23, [NAME]], // NSAP-PTR
  [24, RRSIG_LIKE], // SIG
  [25, DNSKEY_LIKE], // KEY
  [26, [U16, NAME, NAME]], // PX
  [27, [CSTR, CSTR, CSTR]], // GPOS
  [28, [IPV6]], // AAAA
  [30, [NAME, NXT_BITMAP]], // NXT
  [33, [U16, U16, U16, NAME]], // SRV
  [35, [U16, U16, CSTR, CSTR, CSTR, NAME]], // NAPTR
  [36, [U16, NAME]], // KX
  [37, [CERT_TYPE, U16, ALG, B64]], // CERT
  [39, [NAME]], // DNAME
  [42, [APL]], // APL
  [43, DS_LIKE], // DS
  [44, [U8, U8, HEX]], // SSHFP
  [46, RRSIG_LIKE], // RRSIG
  [47, [NAME, BITMAP]], // NSEC
  [48, DNSKEY_LIKE], // DNSKEY
  [49, [B64]], // DHCID
  [50, [U8, U8, U16, SALT, HASH32, BITMAP]], // NSEC3
  [51, [U8, U8, U16, SALT]], // NSEC3PARAM
  [52, TLSA_LIKE], [53, TLSA_LIKE], // TLSA SMIMEA
  [59, DS_LIKE], [60, DNSKEY_LIKE], // CDS CDNSKEY
  [61, [B64]], // OPENPGPKEY
  [62, [U32, U16, BITMAP]], // CSYNC
  [63, [U32, U8, U8, HEX]], // ZONEMD
  [64, SVCB_LIKE], [65, SVCB_LIKE], // SVCB HTTPS
  [99, [CSTRS]], // SPF
  [104, [U16, ILNP64]], [105, [U16, IPV4]], [106, [U16, ILNP64]], [107, [U16, NAME]], // NID L32 L64 LP
  [108, [EUI48]], [109, [EUI64]],
  [256, [U16, U16, STR_REST]], // URI
  [257, [U8, CAA_TAG, STR_REST]], // CAA
  [258, [CSTRS]], // AVC
  [32768, DS_LIKE], [32769, DS_LIKE], // TA DLV
]);

const LOC = 29, A6 = 38, IPSECKEY = 45, HIP = 55;
/** Types with their own codec functions instead of a SCHEMA entry. */
const SPECIAL = new Set<number>([LOC, A6, IPSECKEY, HIP]);

/** Types whose rdata holds names: rdataFromMessage expands and lower-cases them. */
const HAS_NAMES = new Set<number>([A6, IPSECKEY, HIP]);
for (const [code, fields] of SCHEMA) if (fields.includes(NAME)) HAS_NAMES.add(code);

// DNSSEC algorithm mnemonics (RFC 8624 and the IANA registry), accepted on input.
const ALGORITHMS = new Map<string, number>([
  ['RSAMD5', 1], ['DH', 2], ['DSA', 3], ['RSASHA1', 5], ['DSA-NSEC3-SHA1', 6], ['RSASHA1-NSEC3-SHA1', 7],
  ['RSASHA256', 8], ['RSASHA512', 10], ['ECC-GOST', 12], ['ECDSAP256SHA256', 13], ['ECDSAP384SHA384', 14],
  ['ED25519', 15], ['ED448', 16], ['INDIRECT', 252], ['PRIVATEDNS', 253], ['PRIVATEOID', 254],
]);
// CERT types (RFC 4398 section 2.1), accepted on input.
const CERT_TYPES = new Map<string, number>([
  ['PKIX', 1], ['SPKI', 2], ['PGP', 3], ['IPKIX', 4], ['ISPKI', 5], ['IPGP', 6], ['ACPKIX', 7], ['IACPKIX', 8],
  ['URI', 253], ['OID', 254],
]);
// SVCB parameter keys with names (RFC 9460 section 14.3.2).
const SVC_KEYS = ['mandatory', 'alpn', 'no-default-alpn', 'port', 'ipv4hint', 'ech', 'ipv6hint'];

/**
 * Thrown by the text writers when wire is well-formed but has no canonical
 * presentation; rdataToText answers with the RFC 3597 form instead.
 */
class NotCanonical extends Error {}
const NOT_CANONICAL = new NotCanonical('no canonical presentation');

function malformed(what: string): DnsFormatError {
  return new DnsFormatError(`malformed rdata: ${what}`);
}

// ---------------------------------------------------------------------------
// Wire -> text

// Character-strings are escaped into this buffer: 4 characters per byte at most.
const escBuf = Buffer.allocUnsafe(RDATA_OCTETS_MAX * 4 + 2);

/** `"..."` text of bytes [start, end): `"` and `\` escaped, bytes outside 0x20-0x7E as \DDD. */
function quoted(b: Uint8Array, start: number, end: number): string {
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

function hexUpper(b: Uint8Array, start: number, end: number): string {
  return Buffer.from(b.buffer, b.byteOffset + start, end - start).toString('hex').toUpperCase();
}

function base64(b: Uint8Array, start: number, end: number): string {
  return Buffer.from(b.buffer, b.byteOffset + start, end - start).toString('base64');
}

/** Base64 in chunks of 56 characters separated by single spaces (DNSDB's RRSIG style). */
function base64Split(b: Uint8Array, start: number, end: number): string {
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

function u16(b: Uint8Array, p: number): number {
  return (b[p]! << 8) | b[p + 1]!;
}

function u32(b: Uint8Array, p: number): number {
  return ((b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!) >>> 0;
}

/** Type list of an NSEC-style bitmap in b[start, end). */
function bitmapText(b: Uint8Array, start: number, end: number): string {
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
    for (let i = 0; i < len; i++) {
      const byte = b[p + 2 + i]!;
      if (byte === 0) continue;
      for (let bit = 0; bit < 8; bit++) {
        if (byte & (0x80 >> bit)) s += (s.length ? ' ' : '') + rrtypeToText(win * 256 + i * 8 + bit);
      }
    }
    lastWindow = win;
    p += 2 + len;
  }
  return s;
}

// Decoders set this to the position after what they read, so they can
// return their text without allocating a pair.
let dpos = 0;

function need(b: Uint8Array, p: number, n: number, what: string): void {
  if (p + n > b.length) throw malformed(`truncated ${what} at rdata offset ${p}`);
}

function svcValueText(key: number, b: Uint8Array, p: number, len: number): string {
  const end = p + len;
  switch (key) {
    case 0: { // mandatory
      if (len === 0 || len % 2 !== 0) throw malformed('svcb mandatory length');
      const keys: string[] = [];
      for (let i = p; i < end; i += 2) keys.push(svcKeyName(u16(b, i)));
      return `mandatory=${keys.join(',')}`;
    }
    case 1: { // alpn: a comma-separated value list (RFC 9460 appendix A.1)
      if (len === 0) throw malformed('svcb alpn is empty');
      const item: number[] = [];
      for (let i = p; i < end;) {
        const n = b[i]!;
        if (n === 0 || i + 1 + n > end) throw malformed('svcb alpn id');
        if (item.length) item.push(0x2c);
        for (let j = i + 1; j <= i + n; j++) {
          const c = b[j]!;
          if (c === 0x2c || c === 0x5c) item.push(0x5c);
          item.push(c);
        }
        i += 1 + n;
      }
      return `alpn=${quoted(Uint8Array.from(item), 0, item.length)}`;
    }
    case 2:
      if (len !== 0) throw malformed('svcb no-default-alpn has a value');
      return 'no-default-alpn';
    case 3:
      if (len !== 2) throw malformed('svcb port length');
      return `port=${u16(b, p)}`;
    case 4: {
      if (len === 0 || len % 4 !== 0) throw malformed('svcb ipv4hint length');
      const a: string[] = [];
      for (let i = p; i < end; i += 4) a.push(ipv4ToText(b, i));
      return `ipv4hint=${a.join(',')}`;
    }
    case 5:
      return len === 0 ? 'ech=""' : `ech=${base64(b, p, end)}`;
    case 6: {
      if (len === 0 || len % 16 !== 0) throw malformed('svcb ipv6hint length');
      const a: string[] = [];
      for (let i = p; i < end; i += 16) a.push(ipv6ToText(b, i));
      return `ipv6hint=${a.join(',')}`;
    }
    default:
      return len === 0 ? `key${key}` : `key${key}=${quoted(b, p, end)}`;
  }
}

function svcKeyName(key: number): string {
  return key < SVC_KEYS.length ? SVC_KEYS[key]! : `key${key}`;
}

function svcParamsText(b: Uint8Array, p: number): string {
  let s = '';
  let last = -1;
  while (p < b.length) {
    need(b, p, 4, 'svcb parameter');
    const key = u16(b, p), len = u16(b, p + 2);
    if (key <= last) throw malformed('svcb keys not in strictly increasing order');
    if (key === 65535) throw malformed('svcb key 65535 is reserved');
    need(b, p + 4, len, 'svcb parameter value');
    s += (s.length ? ' ' : '') + svcValueText(key, b, p + 4, len);
    last = key;
    p += 4 + len;
  }
  return s;
}

function aplText(b: Uint8Array, p: number): string {
  let s = '';
  while (p < b.length) {
    need(b, p, 4, 'APL item');
    const family = u16(b, p), prefix = b[p + 2]!, neg = b[p + 3]! & 0x80, afd = b[p + 3]! & 0x7f;
    need(b, p + 4, afd, 'APL address');
    if (afd > 0 && b[p + 3 + afd] === 0) throw NOT_CANONICAL; // trailing zero octets must be trimmed
    let addr: string;
    if (family === 1) {
      if (afd > 4 || prefix > 32) throw malformed('APL IPv4 item');
      const a = new Uint8Array(4);
      a.set(b.subarray(p + 4, p + 4 + afd));
      addr = ipv4ToText(a);
    } else if (family === 2) {
      if (afd > 16 || prefix > 128) throw malformed('APL IPv6 item');
      const a = new Uint8Array(16);
      a.set(b.subarray(p + 4, p + 4 + afd));
      addr = ipv6ToText(a);
    } else {
      throw NOT_CANONICAL;
    }
    s += `${s.length ? ' ' : ''}${neg ? '!' : ''}${family}:${addr}/${prefix}`;
    p += 4 + afd;
  }
  return s;
}

function wksPortsText(b: Uint8Array, p: number): string {
  if (p < b.length && b[b.length - 1] === 0) throw NOT_CANONICAL;
  let s = '';
  for (let i = p; i < b.length; i++) {
    const byte = b[i]!;
    for (let bit = 0; bit < 8; bit++) if (byte & (0x80 >> bit)) s += `${s.length ? ' ' : ''}${(i - p) * 8 + bit}`;
  }
  return s;
}

/** Lower-case hex of b[p, p+n) in groups of `groupBytes` octets joined by `sep` (EUI48/64, ILNP locators). */
function hexGroups(b: Uint8Array, p: number, n: number, sep: string, groupBytes: number): string {
  let s = '';
  for (let i = 0; i < n; i += groupBytes) {
    let g = '';
    for (let j = 0; j < groupBytes; j++) g += b[p + i + j]!.toString(16).padStart(2, '0');
    s += (i ? sep : '') + g;
  }
  return s;
}

/** Text of one field at b[p]; sets dpos after it. Empty string = the field has no text (an empty rest). */
function fieldText(kind: number, b: Uint8Array, p: number): string {
  const end = b.length;
  switch (kind) {
    case U8: case ALG: case WKS_PROTO:
      need(b, p, 1, 'u8');
      dpos = p + 1;
      return String(b[p]!);
    case U16: case CERT_TYPE:
      need(b, p, 2, 'u16');
      dpos = p + 2;
      return String(u16(b, p));
    case U32: case U32_TTL: case TIME:
      need(b, p, 4, 'u32');
      dpos = p + 4;
      return String(u32(b, p));
    case TYPE:
      need(b, p, 2, 'type');
      dpos = p + 2;
      return rrtypeToText(u16(b, p));
    case NAME: {
      const r = readWireName(b, p, false);
      dpos = r.end;
      return r.name;
    }
    case IPV4:
      need(b, p, 4, 'IPv4 address');
      dpos = p + 4;
      return ipv4ToText(b, p);
    case IPV6:
      need(b, p, 16, 'IPv6 address');
      dpos = p + 16;
      return ipv6ToText(b, p);
    case CSTR: case CSTR_OPT: {
      if (kind === CSTR_OPT && p === end) {
        dpos = p;
        return '';
      }
      need(b, p, 1, 'character-string');
      const n = b[p]!;
      need(b, p + 1, n, 'character-string');
      dpos = p + 1 + n;
      return quoted(b, p + 1, p + 1 + n);
    }
    case CSTRS: {
      if (p === end) throw NOT_CANONICAL; // at least one string
      let s = '';
      while (p < end) {
        const n = b[p]!;
        need(b, p + 1, n, 'character-string');
        s += (s.length ? ' ' : '') + quoted(b, p + 1, p + 1 + n);
        p += 1 + n;
      }
      dpos = end;
      return s;
    }
    case HEX:
      dpos = end;
      return hexUpper(b, p, end);
    case B64:
      dpos = end;
      return base64(b, p, end);
    case B64_SPLIT:
      dpos = end;
      return base64Split(b, p, end);
    case BITMAP:
      dpos = end;
      return bitmapText(b, p, end);
    case SALT: {
      need(b, p, 1, 'salt');
      const n = b[p]!;
      need(b, p + 1, n, 'salt');
      dpos = p + 1 + n;
      return n === 0 ? '-' : hexUpper(b, p + 1, p + 1 + n);
    }
    case HASH32: {
      need(b, p, 1, 'hash');
      const n = b[p]!;
      need(b, p + 1, n, 'hash');
      if (n === 0) throw NOT_CANONICAL;
      dpos = p + 1 + n;
      return base32hex(b, p + 1, p + 1 + n);
    }
    case SVCPARAMS:
      dpos = end;
      return svcParamsText(b, p);
    case STR_REST:
      dpos = end;
      return quoted(b, p, end);
    case CAA_TAG: {
      need(b, p, 1, 'CAA tag');
      const n = b[p]!;
      need(b, p + 1, n, 'CAA tag');
      if (n === 0) throw NOT_CANONICAL;
      let s = '';
      for (let i = p + 1; i <= p + n; i++) {
        const c = b[i]!;
        const alnum = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
        if (!alnum) throw NOT_CANONICAL;
        s += String.fromCharCode(c);
      }
      dpos = p + 1 + n;
      return s;
    }
    case NSAP_HEX:
      if (p === end) throw NOT_CANONICAL;
      dpos = end;
      return `0x${hexUpper(b, p, end)}`;
    case EUI48: case EUI64: {
      const n = kind === EUI48 ? 6 : 8;
      need(b, p, n, 'EUI');
      dpos = p + n;
      return hexGroups(b, p, n, '-', 1);
    }
    case ILNP64:
      need(b, p, 8, 'locator');
      dpos = p + 8;
      return hexGroups(b, p, 8, ':', 2);
    case APL:
      dpos = end;
      return aplText(b, p);
    case WKS_PORTS:
      dpos = end;
      return wksPortsText(b, p);
    case NXT_BITMAP:
      dpos = end;
      return nxtBitmapText(b, p);
    default:
      assert.fail(`unknown field kind ${kind}`);
  }
}

function genericText(wire: Uint8Array): string {
  return wire.length === 0 ? '\\# 0' : `\\# ${wire.length} ${hexUpper(wire, 0, wire.length)}`;
}

function nxtBitmapText(b: Uint8Array, p: number): string {
  if (p === b.length) return '';
  if (b[b.length - 1] === 0 || (b[p]! & 0x80) !== 0 || b.length - p > 16) throw NOT_CANONICAL;
  let s = '';
  for (let i = p; i < b.length; i++) {
    const byte = b[i]!;
    for (let bit = 0; bit < 8; bit++) if (byte & (0x80 >> bit)) s += (s.length ? ' ' : '') + rrtypeToText((i - p) * 8 + bit);
  }
  return s;
}

// ---- A6 (RFC 2874): prefix length, the address suffix in as few octets as hold it, the prefix name.

function a6Text(b: Uint8Array): string {
  need(b, 0, 1, 'A6 prefix length');
  const prefix = b[0]!;
  if (prefix > 128) throw malformed(`A6 prefix length ${prefix}`);
  const octets = (128 - prefix + 7) >> 3;
  need(b, 1, octets, 'A6 address suffix');
  const addr = new Uint8Array(16);
  addr.set(b.subarray(1, 1 + octets), 16 - octets);
  // Bits of the first suffix octet that belong to the prefix must be zero.
  if (prefix % 8 !== 0 && octets > 0 && (addr[16 - octets]! >> (8 - (prefix % 8))) !== 0) throw NOT_CANONICAL;
  let s = `${prefix} ${ipv6ToText(addr)}`;
  let p = 1 + octets;
  if (prefix > 0) {
    const r = readWireName(b, p, false);
    s += ` ${r.name}`;
    p = r.end;
  }
  if (p !== b.length) throw malformed(`${b.length - p} trailing octets`);
  return s;
}

// ---- LOC (RFC 1876)

const LOC_EQUATOR = 2 ** 31;
const LOC_ALT_BASE_CM = 10_000_000;

function locSizeText(byte: number): string {
  const m = byte >> 4, e = byte & 15;
  if (m > 9 || e > 9 || (m === 0 && e !== 0)) throw NOT_CANONICAL;
  const cm = m * 10 ** e;
  return cm % 100 === 0 ? `${cm / 100}m` : `${Math.floor(cm / 100)}.${String(cm % 100).padStart(2, '0')}m`;
}

function locAngleText(v: number, pos: string, negSide: string, maxDeg: number): string {
  let d = v - LOC_EQUATOR;
  const side = d < 0 ? negSide : pos;
  d = Math.abs(d);
  if (d > maxDeg * 3_600_000) throw NOT_CANONICAL;
  const deg = Math.floor(d / 3_600_000);
  const min = Math.floor((d % 3_600_000) / 60_000);
  const ms = d % 60_000;
  return `${deg} ${min} ${Math.floor(ms / 1000)}.${String(ms % 1000).padStart(3, '0')} ${side}`;
}

function locText(b: Uint8Array): string {
  if (b.length !== 16) throw malformed(`LOC rdata of ${b.length} octets`);
  if (b[0] !== 0) throw NOT_CANONICAL; // only version 0 is defined
  const altCm = u32(b, 12) - LOC_ALT_BASE_CM;
  const a = Math.abs(altCm);
  const alt = `${altCm < 0 ? '-' : ''}${Math.floor(a / 100)}.${String(a % 100).padStart(2, '0')}m`;
  return `${locAngleText(u32(b, 4), 'N', 'S', 90)} ${locAngleText(u32(b, 8), 'E', 'W', 180)} ${alt} ` +
    `${locSizeText(b[1]!)} ${locSizeText(b[2]!)} ${locSizeText(b[3]!)}`;
}

// ---- IPSECKEY (RFC 4025): precedence, gateway type, algorithm, gateway, key.

function ipseckeyText(b: Uint8Array): string {
  need(b, 0, 3, 'IPSECKEY header');
  const gwType = b[1]!;
  let gw: string;
  let p = 3;
  switch (gwType) {
    case 0: gw = '.'; break;
    case 1: need(b, p, 4, 'IPSECKEY gateway'); gw = ipv4ToText(b, p); p += 4; break;
    case 2: need(b, p, 16, 'IPSECKEY gateway'); gw = ipv6ToText(b, p); p += 16; break;
    case 3: { const r = readWireName(b, p, false); gw = r.name; p = r.end; break; }
    default: throw NOT_CANONICAL;
  }
  const key = base64(b, p, b.length);
  return `${b[0]!} ${gwType} ${b[2]!} ${gw}${key ? ` ${key}` : ''}`;
}

// ---- HIP (RFC 8005): HIT length, algorithm, key length, HIT, key, rendezvous servers.

function hipText(b: Uint8Array): string {
  need(b, 0, 4, 'HIP header');
  const hitLen = b[0]!, alg = b[1]!, pkLen = u16(b, 2);
  need(b, 4, hitLen + pkLen, 'HIP HIT and key');
  if (hitLen === 0 || pkLen === 0) throw NOT_CANONICAL;
  let s = `${alg} ${hexUpper(b, 4, 4 + hitLen)} ${base64(b, 4 + hitLen, 4 + hitLen + pkLen)}`;
  let p = 4 + hitLen + pkLen;
  while (p < b.length) {
    const r = readWireName(b, p, false);
    s += ` ${r.name}`;
    p = r.end;
  }
  return s;
}

// Presentation text may hold only these bytes (asserted; a violation is our bug).
const NON_PRINTABLE = /[^\x20-\x7e]/;

/** Canonical presentation of an rdata (see the module comment). */
export function rdataToText(rrtype: number, wire: Uint8Array): string {
  let text: string;
  try {
    text = rdataToTextStrict(rrtype, wire);
  } catch (err) {
    if (err !== NOT_CANONICAL) throw err;
    text = genericText(wire);
  }
  assert.ok(!NON_PRINTABLE.test(text), `rdata text of type ${rrtype} holds a byte outside 0x20-0x7E`);
  return text;
}

function rdataToTextStrict(rrtype: number, wire: Uint8Array): string {
  const fields = SCHEMA.get(rrtype);
  if (fields === undefined) {
    switch (rrtype) {
      case LOC: return locText(wire);
      case A6: return a6Text(wire);
      case IPSECKEY: return ipseckeyText(wire);
      case HIP: return hipText(wire);
      default: return genericText(wire);
    }
  }
  if (wire.length === 0) throw NOT_CANONICAL; // e.g. an empty-rdata update record
  // Single-field types are most records; skip the joining loop for them.
  if (fields.length === 1) {
    const s = fieldText(fields[0]!, wire, 0);
    if (dpos !== wire.length) throw malformed(`${wire.length - dpos} trailing octets`);
    return s;
  }
  let s = '';
  let p = 0;
  for (let i = 0; i < fields.length; i++) {
    const t = fieldText(fields[i]!, wire, p);
    p = dpos;
    if (t.length > 0) s += (s.length ? ' ' : '') + t;
  }
  if (p !== wire.length) throw malformed(`${wire.length - p} trailing octets`);
  return s;
}

// ---------------------------------------------------------------------------
// Text -> wire

/**
 * The tokens of one record or rdata: raw text with escapes kept (names and
 * character-strings interpret them), and whether each was quoted. One
 * instance is reused across records, so `length` counts the live entries.
 */
export class Tokens {
  readonly text: string[] = [];
  readonly quoted: boolean[] = [];
  length = 0;
  clear(): void {
    this.length = 0;
  }
  push(text: string, quoted: boolean): void {
    this.text[this.length] = text;
    this.quoted[this.length] = quoted;
    this.length++;
  }
}

export interface TokenizerState {
  /** Open parentheses; a record continues on the next line while this is above 0. */
  depth: number;
}

/**
 * Splits master-file text into tokens (appended to `out`): whitespace
 * separates; `;` starts a comment to the end of the line; `(` and `)` group
 * lines and separate tokens; `"..."` is one token; a backslash escapes the
 * next character everywhere. Throws DnsFormatError for an unterminated
 * quote or an unmatched `)`.
 */
export function tokenize(text: string, out: Tokens, state: TokenizerState): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a) {
      i++;
    } else if (c === 0x3b /* ; */) {
      const nl = text.indexOf('\n', i);
      if (nl < 0) return;
      i = nl + 1;
    } else if (c === 0x28 /* ( */) {
      state.depth++;
      i++;
    } else if (c === 0x29 /* ) */) {
      if (state.depth === 0) throw new DnsFormatError('")" without a matching "("');
      state.depth--;
      i++;
    } else if (c === 0x22 /* " */) {
      let j = i + 1;
      for (;;) {
        if (j >= n) throw new DnsFormatError('unterminated quoted string');
        const d = text.charCodeAt(j);
        if (d === 0x5c) j += 2;
        else if (d === 0x22) break;
        else j++;
      }
      out.push(text.slice(i + 1, j), true);
      i = j + 1;
    } else {
      let j = i;
      while (j < n) {
        const d = text.charCodeAt(j);
        if (d === 0x5c) {
          j += 2;
          continue;
        }
        if (d === 0x20 || d === 0x09 || d === 0x0d || d === 0x0a || d === 0x3b || d === 0x28 || d === 0x29 || d === 0x22) break;
        j++;
      }
      if (j > n) j = n;
      out.push(text.slice(i, j), false);
      i = j;
    }
  }
}

// Rdata is built here, then copied out. Rdata from a message can grow by
// two expanded names over its 65535-octet limit before that is checked.
const wbuf = new Uint8Array(RDATA_OCTETS_MAX + 1024);
const wlimit = wbuf.subarray(0, RDATA_OCTETS_MAX);
const wbufView = Buffer.from(wbuf.buffer, wbuf.byteOffset, wbuf.length);
let wpos = 0;

function room(n: number): void {
  if (wpos + n > RDATA_OCTETS_MAX) throw new DnsFormatError('rdata longer than 65535 octets');
}

function put8(v: number): void {
  room(1);
  wbuf[wpos++] = v;
}

function put16(v: number): void {
  room(2);
  wbuf[wpos++] = v >>> 8;
  wbuf[wpos++] = v & 0xff;
}

function put32(v: number): void {
  room(4);
  wbuf[wpos++] = v >>> 24;
  wbuf[wpos++] = (v >>> 16) & 0xff;
  wbuf[wpos++] = (v >>> 8) & 0xff;
  wbuf[wpos++] = v & 0xff;
}

function putBytes(b: Uint8Array): void {
  room(b.length);
  wbuf.set(b, wpos);
  wpos += b.length;
}

function isDigits(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

function num(tok: string, max: number, what: string): number {
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

/** Value of the decimal digits tok[from, from+n); the caller has checked they are digits. */
function digitsAt(tok: string, from: number, n: number): number {
  let v = 0;
  for (let i = from; i < from + n; i++) v = v * 10 + (tok.charCodeAt(i) - 0x30);
  return v;
}

/** Epoch seconds of an RRSIG time given as YYYYMMDDHHMMSS (RFC 4034 section 3.2) or as decimal seconds. */
function parseTime(tok: string): number {
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

/** Decodes a character-string's escapes (and UTF-8 for non-ASCII text) into wbuf; returns its length. */
function putCharString(raw: string, maxLen: number): number {
  const start = wpos;
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
  const len = wpos - start;
  if (len > maxLen) throw new DnsFormatError(`character-string longer than ${maxLen} octets: "${printable(raw)}"`);
  return len;
}

/** Length byte plus the string. */
function putCstr(raw: string): void {
  const at = wpos;
  put8(0);
  wbuf[at] = putCharString(raw, 255);
}

// Per char code: 1 for the base64 alphabet (padding is checked separately), 2 for hex digits, 3 for both.
const B64_HEX = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/') B64_HEX[c.charCodeAt(0)] = 1;
for (const c of '0123456789abcdefABCDEF') B64_HEX[c.charCodeAt(0)]! |= 2;

function putHex(s: string, what: string): void {
  const n = s.length;
  let ok = n % 2 === 0;
  for (let i = 0; ok && i < n; i++) {
    const c = s.charCodeAt(i);
    ok = c < 128 && (B64_HEX[c]! & 2) !== 0;
  }
  if (!ok) throw new DnsFormatError(`bad hex in ${what}: "${printable(s)}"`);
  room(n / 2);
  wpos += wbufView.write(s, wpos, n / 2, 'hex');
}

function putBase64(s: string, what: string): void {
  // Node's decoder skips characters outside the alphabet, so check first.
  let n = s.length;
  let ok = n % 4 === 0;
  if (ok && n > 0 && s.charCodeAt(n - 1) === 0x3d) n -= s.charCodeAt(n - 2) === 0x3d ? 2 : 1;
  for (let i = 0; ok && i < n; i++) {
    const c = s.charCodeAt(i);
    ok = c < 128 && (B64_HEX[c]! & 1) !== 0;
  }
  if (!ok) throw new DnsFormatError(`bad base64 in ${what}: "${printable(s)}"`);
  const octets = (n * 3) >> 2;
  room(octets);
  wpos += wbufView.write(s, wpos, octets, 'base64');
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

function putBitmap(toks: Tokens, i: number): void {
  const types: number[] = [];
  for (; i < toks.length; i++) {
    const t = rrtypeFromText(toks.text[i]!);
    if (t === undefined || toks.quoted[i]) throw new DnsFormatError(`unknown type "${printable(toks.text[i]!)}" in type bitmap`);
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
      bits[low >> 3]! |= 0x80 >> (low & 7);
      len = Math.max(len, (low >> 3) + 1);
    }
    put8(win);
    put8(len);
    putBytes(bits.subarray(0, len));
  }
}

/** Decodes an SVCB value's escapes into bytes (no 255-octet bound: values are 16-bit sized). */
function svcValueBytes(raw: string): Uint8Array {
  const start = wpos;
  putCharString(raw, RDATA_OCTETS_MAX);
  const v = wbuf.slice(start, wpos);
  wpos = start;
  return v;
}

function svcKeyFromName(name: string): number {
  const k = SVC_KEYS.indexOf(name.toLowerCase());
  if (k >= 0) return k;
  if (name.toLowerCase() === 'dohpath') return 7;
  const m = /^key(\d{1,5})$/i.exec(name);
  if (!m || Number(m[1]) > 65534) throw new DnsFormatError(`unknown SVCB key "${printable(name)}"`);
  return Number(m[1]);
}

function latin1(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.length).toString('latin1');
}

function svcValueWire(key: number, v: Uint8Array | undefined): Uint8Array {
  const text = v === undefined ? '' : latin1(v);
  const list = (what: string) => {
    if (text.length === 0) throw new DnsFormatError(`SVCB ${what} needs a value`);
    return text.split(',');
  };
  switch (key) {
    case 0: {
      const keys = list('mandatory').map(svcKeyFromName);
      const out = new Uint8Array(keys.length * 2);
      keys.forEach((k, i) => { out[2 * i] = k >> 8; out[2 * i + 1] = k & 0xff; });
      return out;
    }
    case 1: { // alpn value list: `\,` and `\\` escape inside an item
      if (!v || v.length === 0) throw new DnsFormatError('SVCB alpn needs a value');
      const out: number[] = [];
      let lenAt = out.length;
      out.push(0);
      for (let i = 0; i < v.length; i++) {
        let c = v[i]!;
        if (c === 0x5c && i + 1 < v.length) c = v[++i]!;
        else if (c === 0x2c) {
          if (out.length - lenAt - 1 === 0) throw new DnsFormatError('empty SVCB alpn id');
          lenAt = out.length;
          out.push(0);
          continue;
        }
        out.push(c);
        if (out.length - lenAt - 1 > 255) throw new DnsFormatError('SVCB alpn id longer than 255 octets');
        out[lenAt] = out.length - lenAt - 1;
      }
      if (out.length - lenAt - 1 === 0) throw new DnsFormatError('empty SVCB alpn id');
      return Uint8Array.from(out);
    }
    case 2:
      if (text.length) throw new DnsFormatError('SVCB no-default-alpn takes no value');
      return new Uint8Array(0);
    case 3: {
      const port = num(text, 0xffff, 'SVCB port');
      return Uint8Array.of(port >> 8, port & 0xff);
    }
    case 4: case 6: {
      const addrs = list(key === 4 ? 'ipv4hint' : 'ipv6hint').map((a) => (key === 4 ? ipv4FromText(a) : ipv6FromText(a)));
      const size = key === 4 ? 4 : 16;
      const out = new Uint8Array(addrs.length * size);
      addrs.forEach((a, i) => {
        if (!a) throw new DnsFormatError(`bad address in SVCB ${key === 4 ? 'ipv4hint' : 'ipv6hint'} "${printable(text)}"`);
        out.set(a, i * size);
      });
      return out;
    }
    case 5:
      if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) throw new DnsFormatError('bad base64 in SVCB ech');
      return Buffer.from(text, 'base64');
    default:
      return v ?? new Uint8Array(0);
  }
}

function putSvcParams(toks: Tokens, i: number): void {
  const params: { key: number; value: Uint8Array }[] = [];
  for (; i < toks.length; i++) {
    const t = toks.text[i]!;
    if (toks.quoted[i]) throw new DnsFormatError(`unexpected quoted string "${printable(t)}" in SVCB parameters`);
    const eq = t.indexOf('=');
    const keyName = eq < 0 ? t : t.slice(0, eq);
    let raw: string | undefined;
    if (eq >= 0) {
      raw = t.slice(eq + 1);
      // key="value": the tokenizer gives the quoted value as the next token.
      if (raw === '' && i + 1 < toks.length && toks.quoted[i + 1]) raw = toks.text[++i]!;
    }
    const key = svcKeyFromName(keyName);
    params.push({ key, value: svcValueWire(key, raw === undefined ? undefined : svcValueBytes(raw)) });
  }
  params.sort((a, b) => a.key - b.key);
  for (let j = 0; j < params.length; j++) {
    const { key, value } = params[j]!;
    if (j > 0 && params[j - 1]!.key === key) throw new DnsFormatError(`SVCB key ${svcKeyName(key)} given twice`);
    put16(key);
    put16(value.length);
    putBytes(value);
  }
}

function putApl(toks: Tokens, i: number): void {
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

function putWksPorts(toks: Tokens, i: number): void {
  const ports: number[] = [];
  for (; i < toks.length; i++) ports.push(num(toks.text[i]!, 0xffff, 'WKS port'));
  if (ports.length === 0) return;
  const bits = new Uint8Array((Math.max(...ports) >> 3) + 1);
  for (const p of ports) bits[p >> 3]! |= 0x80 >> (p & 7);
  putBytes(bits);
}

function putHexGroups(tok: string, bytes: number, sep: string, groupBytes: number, what: string): void {
  const parts = tok.split(sep);
  const digits = groupBytes * 2;
  const exact = sep === '-';
  if (parts.length !== bytes / groupBytes) throw new DnsFormatError(`bad ${what} "${printable(tok)}"`);
  for (const part of parts) {
    if (!/^[0-9A-Fa-f]+$/.test(part) || part.length > digits || (exact && part.length !== digits)) {
      throw new DnsFormatError(`bad ${what} "${printable(tok)}"`);
    }
    putHex(part.padStart(digits, '0'), what);
  }
}

function mnemonicOrNumber(tok: string, table: Map<string, number>, max: number, what: string): number {
  const known = table.get(tok.toUpperCase());
  return known ?? num(tok, max, what);
}

/** All tokens from i on, concatenated (hex and base64 may be split over several words). */
function rest(toks: Tokens, i: number): string {
  let s = '';
  for (; i < toks.length; i++) {
    if (toks.quoted[i]) throw new DnsFormatError(`unexpected quoted string "${printable(toks.text[i]!)}"`);
    s += toks.text[i]!;
  }
  return s;
}

/** Encodes one field from toks[i]; returns the index of the next unread token. */
function putField(kind: number, toks: Tokens, i: number, origin: string | undefined): number {
  const n = toks.length;
  if (i >= n) {
    // Only fields that may be empty can be missing.
    switch (kind) {
      case CSTR_OPT: case HEX: case B64: case B64_SPLIT: case BITMAP: case SVCPARAMS: case APL: case WKS_PORTS: case NXT_BITMAP:
        return i;
      default:
        throw new DnsFormatError('too few fields');
    }
  }
  const tok = toks.text[i]!;
  const q = toks.quoted[i]!;
  const textOnly = kind === CSTR || kind === CSTR_OPT || kind === CSTRS || kind === STR_REST;
  if (q && !textOnly) throw new DnsFormatError(`unexpected quoted string "${printable(tok)}"`);
  switch (kind) {
    case U8: put8(num(tok, 0xff, 'number')); return i + 1;
    case U16: put16(num(tok, 0xffff, 'number')); return i + 1;
    case U32: put32(num(tok, 0xffffffff, 'number')); return i + 1;
    case U32_TTL: {
      const v = parseTtl(tok);
      if (v === undefined) throw new DnsFormatError(`bad number "${printable(tok)}"`);
      put32(v);
      return i + 1;
    }
    case ALG: put8(mnemonicOrNumber(tok, ALGORITHMS, 0xff, 'algorithm')); return i + 1;
    case CERT_TYPE: put16(mnemonicOrNumber(tok, CERT_TYPES, 0xffff, 'certificate type')); return i + 1;
    case WKS_PROTO: {
      const p = tok.toLowerCase() === 'tcp' ? 6 : tok.toLowerCase() === 'udp' ? 17 : num(tok, 0xff, 'protocol');
      put8(p);
      return i + 1;
    }
    case TIME: put32(parseTime(tok)); return i + 1;
    case TYPE: {
      const t = rrtypeFromText(tok);
      if (t === undefined) throw new DnsFormatError(`unknown type "${printable(tok)}"`);
      put16(t);
      return i + 1;
    }
    case NAME:
      wpos = writeNameWire(tok, origin, wlimit, wpos);
      return i + 1;
    case IPV4: case IPV6: {
      const a = kind === IPV4 ? ipv4FromText(tok) : ipv6FromText(tok);
      if (!a) throw new DnsFormatError(`bad ${kind === IPV4 ? 'IPv4' : 'IPv6'} address "${printable(tok)}"`);
      putBytes(a);
      return i + 1;
    }
    case CSTR: case CSTR_OPT: putCstr(tok); return i + 1;
    case CSTRS:
      for (; i < n; i++) putCstr(toks.text[i]!);
      return i;
    case STR_REST:
      putCharString(tok, RDATA_OCTETS_MAX);
      return i + 1;
    case HEX: putHex(rest(toks, i), 'hex field'); return n;
    case B64: case B64_SPLIT: putBase64(rest(toks, i), 'base64 field'); return n;
    case BITMAP: putBitmap(toks, i); return n;
    case SALT: {
      if (tok === '-') {
        put8(0);
        return i + 1;
      }
      if (tok.length > 510) throw new DnsFormatError('NSEC3 salt longer than 255 octets');
      put8(tok.length / 2);
      putHex(tok, 'salt');
      return i + 1;
    }
    case HASH32: {
      const at = wpos;
      put8(0);
      putBase32hex(tok);
      if (wpos - at - 1 > 255) throw new DnsFormatError('NSEC3 hash longer than 255 octets');
      wbuf[at] = wpos - at - 1;
      return i + 1;
    }
    case SVCPARAMS: putSvcParams(toks, i); return n;
    case CAA_TAG: {
      if (!/^[A-Za-z0-9]{1,255}$/.test(tok)) throw new DnsFormatError(`bad CAA tag "${printable(tok)}"`);
      put8(tok.length);
      for (let k = 0; k < tok.length; k++) put8(tok.charCodeAt(k));
      return i + 1;
    }
    case NSAP_HEX: {
      const s = rest(toks, i).replace(/\./g, '');
      if (!/^0x/i.test(s) || s.length < 4) throw new DnsFormatError(`bad NSAP "${printable(s)}"`);
      putHex(s.slice(2), 'NSAP');
      return n;
    }
    case EUI48: putHexGroups(tok, 6, '-', 1, 'EUI48'); return i + 1;
    case EUI64: putHexGroups(tok, 8, '-', 1, 'EUI64'); return i + 1;
    case ILNP64: putHexGroups(tok, 8, ':', 2, 'locator'); return i + 1;
    case APL: putApl(toks, i); return n;
    case WKS_PORTS: putWksPorts(toks, i); return n;
    case NXT_BITMAP: putNxtBitmap(toks, i); return n;
    default:
      assert.fail(`unknown field kind ${kind}`);
  }
}

function putNxtBitmap(toks: Tokens, i: number): void {
  const bits = new Uint8Array(16);
  let len = 0;
  for (; i < toks.length; i++) {
    const t = rrtypeFromText(toks.text[i]!);
    if (t === undefined || toks.quoted[i] || t === 0 || t > 127) {
      throw new DnsFormatError(`type "${printable(toks.text[i]!)}" cannot appear in an NXT bitmap`);
    }
    bits[t >> 3]! |= 0x80 >> (t & 7);
    len = Math.max(len, (t >> 3) + 1);
  }
  putBytes(bits.subarray(0, len));
}

function putA6(toks: Tokens, i: number, origin: string | undefined): void {
  if (toks.length - i < 2) throw new DnsFormatError('too few fields');
  const prefix = num(toks.text[i]!, 128, 'A6 prefix length');
  const addr = ipv6FromText(toks.text[i + 1]!);
  if (!addr) throw new DnsFormatError(`bad IPv6 address "${printable(toks.text[i + 1]!)}"`);
  const octets = (128 - prefix + 7) >> 3;
  for (let k = 0; k < 16 - octets; k++) if (addr[k] !== 0) throw new DnsFormatError('A6 suffix has bits inside the prefix');
  if (prefix % 8 !== 0 && octets > 0 && (addr[16 - octets]! >> (8 - (prefix % 8))) !== 0) {
    throw new DnsFormatError('A6 suffix has bits inside the prefix');
  }
  put8(prefix);
  putBytes(addr.subarray(16 - octets));
  if (prefix > 0) {
    if (toks.length - i < 3) throw new DnsFormatError('A6 needs a prefix name');
    wpos = writeNameWire(toks.text[i + 2]!, origin, wlimit, wpos);
    if (toks.length - i > 3) throw new DnsFormatError('trailing fields after A6');
  } else if (toks.length - i > 2) {
    throw new DnsFormatError('A6 with prefix length 0 has no prefix name');
  }
}

// ---- LOC text

function locAngle(toks: Tokens, i: number, pos: string, neg: string, maxDeg: number): number {
  // d [m [s]] {pos|neg}
  const parts: string[] = [];
  while (i < toks.length && parts.length < 4) {
    const t = toks.text[i++]!;
    const up = t.toUpperCase();
    if (up === pos || up === neg) {
      if (parts.length === 0) break;
      const deg = num(parts[0]!, maxDeg, 'LOC degrees');
      const min = parts.length > 1 ? num(parts[1]!, 59, 'LOC minutes') : 0;
      let ms = 0;
      if (parts.length > 2) {
        const m = /^(\d{1,2})(?:\.(\d{1,3}))?$/.exec(parts[2]!);
        if (!m || Number(m[1]) > 59) throw new DnsFormatError(`bad LOC seconds "${printable(parts[2]!)}"`);
        ms = Number(m[1]) * 1000 + Number((m[2] ?? '').padEnd(3, '0'));
      }
      const total = deg * 3_600_000 + min * 60_000 + ms;
      if (total > maxDeg * 3_600_000) throw new DnsFormatError(`LOC angle beyond ${maxDeg} degrees`);
      dpos = i;
      return up === pos ? LOC_EQUATOR + total : LOC_EQUATOR - total;
    }
    parts.push(t);
  }
  throw new DnsFormatError(`bad LOC ${pos === 'N' ? 'latitude' : 'longitude'}`);
}

/** Centimetres of a LOC distance like "10m", "-2.5m", "0.01". */
function locMetres(tok: string, allowNegative: boolean): number {
  const m = /^(-?)(\d{1,8})(?:\.(\d{1,2}))?m?$/i.exec(tok);
  if (!m || (m[1] && !allowNegative)) throw new DnsFormatError(`bad LOC distance "${printable(tok)}"`);
  const cm = Number(m[2]) * 100 + Number((m[3] ?? '').padEnd(2, '0'));
  return m[1] ? -cm : cm;
}

/** RFC 1876 size byte: mantissa and power of ten of centimetres, rounded down. */
function locSizeByte(cm: number): number {
  let e = 0;
  while (e < 9 && cm >= 10 ** (e + 1)) e++;
  const m = Math.min(9, Math.floor(cm / 10 ** e));
  return m === 0 ? 0 : (m << 4) | e;
}

function putLoc(toks: Tokens, i: number): void {
  const lat = locAngle(toks, i, 'N', 'S', 90);
  const lon = locAngle(toks, dpos, 'E', 'W', 180);
  i = dpos;
  if (i >= toks.length) throw new DnsFormatError('LOC needs an altitude');
  const alt = locMetres(toks.text[i++]!, true) + LOC_ALT_BASE_CM;
  if (alt < 0 || alt > 0xffffffff) throw new DnsFormatError('LOC altitude out of range');
  // Defaults (RFC 1876 section 3): size 1 m, horizontal 10,000 m, vertical 10 m.
  const sizes = [0x12, 0x16, 0x13];
  for (let k = 0; k < 3 && i < toks.length; k++) {
    const cm = locMetres(toks.text[i++]!, false);
    if (cm > 9 * 10 ** 9) throw new DnsFormatError('LOC size out of range');
    sizes[k] = locSizeByte(cm);
  }
  if (i < toks.length) throw new DnsFormatError('trailing fields after LOC');
  put8(0);
  put8(sizes[0]!);
  put8(sizes[1]!);
  put8(sizes[2]!);
  put32(lat);
  put32(lon);
  put32(alt);
}

function putIpseckey(toks: Tokens, i: number, origin: string | undefined): void {
  if (toks.length - i < 4) throw new DnsFormatError('too few fields');
  const prec = num(toks.text[i]!, 0xff, 'precedence');
  const gwType = num(toks.text[i + 1]!, 0xff, 'gateway type');
  const alg = num(toks.text[i + 2]!, 0xff, 'algorithm');
  put8(prec);
  put8(gwType);
  put8(alg);
  const gw = toks.text[i + 3]!;
  switch (gwType) {
    case 0:
      if (gw !== '.') throw new DnsFormatError('gateway type 0 needs "." as the gateway');
      break;
    case 1: case 2: {
      const a = gwType === 1 ? ipv4FromText(gw) : ipv6FromText(gw);
      if (!a) throw new DnsFormatError(`bad gateway address "${printable(gw)}"`);
      putBytes(a);
      break;
    }
    case 3:
      wpos = writeNameWire(gw, origin, wlimit, wpos);
      break;
    default:
      throw new DnsFormatError(`unknown gateway type ${gwType} (use the \\# form)`);
  }
  putBase64(rest(toks, i + 4), 'IPSECKEY key');
}

function putHip(toks: Tokens, i: number, origin: string | undefined): void {
  if (toks.length - i < 3) throw new DnsFormatError('too few fields');
  const alg = num(toks.text[i]!, 0xff, 'algorithm');
  const hit = toks.text[i + 1]!, pk = toks.text[i + 2]!;
  const at = wpos;
  put8(0);
  put8(alg);
  put16(0);
  putHex(hit, 'HIT');
  const hitLen = wpos - at - 4;
  putBase64(pk, 'HIP key');
  const pkLen = wpos - at - 4 - hitLen;
  if (hitLen === 0 || hitLen > 255 || pkLen === 0) throw new DnsFormatError('bad HIP HIT or key length');
  wbuf[at] = hitLen;
  wbuf[at + 2] = pkLen >> 8;
  wbuf[at + 3] = pkLen & 0xff;
  for (let k = i + 3; k < toks.length; k++) wpos = writeNameWire(toks.text[k]!, origin, wlimit, wpos);
}

/** RFC 3597 `\# len hex...`: the wire it spells. */
function genericWire(toks: Tokens, i: number): Uint8Array {
  if (i + 1 >= toks.length) throw new DnsFormatError('\\# needs a length');
  const len = num(toks.text[i + 1]!, RDATA_OCTETS_MAX, '\\# length');
  const hex = rest(toks, i + 2);
  if (hex.length !== len * 2 || !/^[0-9A-Fa-f]*$/.test(hex)) {
    throw new DnsFormatError(`\\# length ${len} does not match its ${hex.length / 2} octets of hex`);
  }
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

function isGeneric(toks: Tokens, i: number): boolean {
  return i < toks.length && !toks.quoted[i] && toks.text[i] === '\\#';
}

/**
 * Wire form of the rdata spelled by toks[start..]. For the zone parser,
 * which tokenizes whole records; rdataFromText tokenizes a string and calls
 * this.
 */
export function rdataFromTokens(rrtype: number, toks: Tokens, start: number, origin?: string): Uint8Array {
  if (isGeneric(toks, start)) {
    const wire = genericWire(toks, start);
    if (!SCHEMA.has(rrtype) && !SPECIAL.has(rrtype)) return wire;
    // A known type spelled generically: check it and make its names lower
    // case, so both spellings of one record give the same wire.
    let text: string;
    try {
      text = rdataToTextStrict(rrtype, wire);
    } catch (err) {
      if (err === NOT_CANONICAL) return wire;
      throw new DnsFormatError(`\\# rdata is not a valid ${rrtypeToText(rrtype)} record: ${(err as Error).message}`);
    }
    return rdataFromText(rrtype, text);
  }
  wpos = 0;
  const fields = SCHEMA.get(rrtype);
  if (fields !== undefined) {
    let i = start;
    for (let f = 0; f < fields.length; f++) i = putField(fields[f]!, toks, i, origin);
    if (i < toks.length) throw new DnsFormatError(`trailing field "${printable(toks.text[i]!)}"`);
  } else if (rrtype === LOC) {
    putLoc(toks, start);
  } else if (rrtype === IPSECKEY) {
    putIpseckey(toks, start, origin);
  } else if (rrtype === A6) {
    putA6(toks, start, origin);
  } else if (rrtype === HIP) {
    putHip(toks, start, origin);
  } else {
    throw new DnsFormatError(`type ${rrtypeToText(rrtype)} needs the \\# generic form`);
  }
  return wbuf.slice(0, wpos);
}

const textTokens = new Tokens();
const textState: TokenizerState = { depth: 0 };

/** Wire form of presentation text (see the module comment). Throws DnsFormatError. */
export function rdataFromText(rrtype: number, text: string, origin?: string): Uint8Array {
  textTokens.clear();
  textState.depth = 0;
  tokenize(text, textTokens, textState);
  if (textState.depth !== 0) throw new DnsFormatError('unbalanced "("');
  // rdataFromTokens may call back here (for `\#`) and reuse textTokens;
  // it has read everything it needs from them by then.
  return rdataFromTokens(rrtype, textTokens, 0, origin);
}

// ---------------------------------------------------------------------------
// Message -> wire

const FIXED_OCTETS: Record<number, number> = {
  [U8]: 1, [ALG]: 1, [WKS_PROTO]: 1, [U16]: 2, [CERT_TYPE]: 2, [TYPE]: 2,
  [U32]: 4, [U32_TTL]: 4, [TIME]: 4, [IPV4]: 4, [IPV6]: 16,
};

/**
 * Uncompressed, canonical wire of the rdata at msg[offset, offset+length):
 * names expanded from compression pointers and lower-cased; other rdata is
 * copied unchanged. Throws DnsFormatError naming the byte offset.
 */
export function rdataFromMessage(rrtype: number, msg: Uint8Array, offset: number, length: number): Uint8Array {
  const end = offset + length;
  if (end > msg.length) throw new DnsFormatError(`rdata at byte offset ${offset} runs past the end of the message`);
  if (!HAS_NAMES.has(rrtype) || length === 0) return msg.slice(offset, end);
  const fields = SCHEMA.get(rrtype);
  if (fields === undefined) {
    // A6, IPSECKEY and HIP: their names are never compressed; lower-case them
    // by a round trip through text.
    const raw = msg.slice(offset, end);
    try {
      const text = rdataToTextStrict(rrtype, raw);
      return rdataFromText(rrtype, text);
    } catch (err) {
      if (err === NOT_CANONICAL) return raw;
      throw new DnsFormatError(`${(err as Error).message} in rdata at byte offset ${offset}`);
    }
  }
  let p = offset;
  let o = 0;
  for (let f = 0; f < fields.length; f++) {
    const kind = fields[f]!;
    if (kind === NAME) {
      if (p >= end) throw new DnsFormatError(`truncated rdata at byte offset ${p}`);
      o = copyWireName(msg, p, wbuf, o);
      const nameEnd = copiedNameEnd;
      if (nameEnd > end) throw new DnsFormatError(`name in rdata runs past the rdata end at byte offset ${p}`);
      p = nameEnd;
      continue;
    }
    let n: number;
    if (kind === CSTR) {
      if (p >= end) throw new DnsFormatError(`truncated rdata at byte offset ${p}`);
      n = 1 + msg[p]!;
    } else {
      n = FIXED_OCTETS[kind] ?? end - p; // anything else runs to the end
    }
    if (p + n > end) throw new DnsFormatError(`truncated rdata at byte offset ${p}`);
    wbuf.set(msg.subarray(p, p + n), o);
    o += n;
    p += n;
  }
  if (p !== end) throw new DnsFormatError(`${end - p} trailing octets in rdata at byte offset ${p}`);
  if (o > RDATA_OCTETS_MAX) throw new DnsFormatError(`rdata at byte offset ${offset} expands beyond 65535 octets`);
  return wbuf.slice(0, o);
}
