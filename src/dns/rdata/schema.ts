// The per-type table: which fields each rrtype's rdata holds, in order.
//
// Contract: SCHEMA maps a type code to its list of field kinds; three
// walkers interpret it (to-text.ts, from-text.ts, from-message.ts), each
// with one case per kind. Types whose fields depend on each other are not in
// SCHEMA but in SPECIAL, with their own codec pair. A type in neither has
// only the RFC 3597 `\# N HEX` form. The kind tables below say what every
// walker needs to know about a kind beyond its codec.

import { locText, putLoc } from './loc.js';
import { a6Text, hipText, ipseckeyText, putA6, putHip, putIpseckey } from './special-types.js';
import type { Tokens } from './tokens.js';

// ---- Field kinds

export const U8 = 1, U16 = 2, U32 = 3, NAME = 4, IPV4 = 5, IPV6 = 6;
/** One character-string; CSTR_OPT may be absent at the end (ISDN). */
export const CSTR = 7, CSTR_OPT = 8;
/** One or more character-strings to the end (TXT, SPF, AVC). */
export const CSTRS = 9;
/** The rest as upper-case hex / base64 in one word / base64 in 56-character chunks. */
export const HEX = 10, B64 = 11, B64_SPLIT = 12;
/** rrtype mnemonic (RRSIG type covered); RRSIG time; NSEC type bitmap to the end. */
export const TYPE = 13, TIME = 14, BITMAP = 15;
/** NSEC3 salt (length byte + hex, "-" when empty); NSEC3 next hash (length byte + base32hex). */
export const SALT = 16, HASH32 = 17;
export const SVCPARAMS = 18;
/** The rest as one quoted string (CAA value, URI target); CAA tag (length byte + alphanumerics, unquoted). */
export const STR_REST = 19, CAA_TAG = 20;
/** u8 algorithm / u16 certificate type, accepting mnemonics on input. */
export const ALG = 21, CERT_TYPE = 22;
/** u32 that accepts BIND TTL units on input (SOA timers). */
export const U32_TTL = 23;
export const NSAP_HEX = 24, EUI48 = 25, EUI64 = 26, ILNP64 = 27, APL = 28, WKS_PROTO = 29, WKS_PORTS = 30;
/** NXT's type bitmap (RFC 2535 section 5.2): bit n for type n, types below 128 only. */
export const NXT_BITMAP = 31;

/** Octets of the fixed-size kinds; every other kind but NAME and CSTR runs to the end of the rdata. */
export const FIXED_OCTETS: Record<number, number> = {
  [U8]: 1, [ALG]: 1, [WKS_PROTO]: 1, [U16]: 2, [CERT_TYPE]: 2, [TYPE]: 2,
  [U32]: 4, [U32_TTL]: 4, [TIME]: 4, [IPV4]: 4, [IPV6]: 16,
};

const kindFlags = new Uint8Array(32);
const MAY_BE_EMPTY = 1, QUOTABLE = 2, TAKES_REST = 4;
// Kinds that may have no words at all in text: the rest of the rdata is then empty.
for (const k of [CSTR_OPT, HEX, B64, B64_SPLIT, BITMAP, SVCPARAMS, APL, WKS_PORTS, NXT_BITMAP]) kindFlags[k]! |= MAY_BE_EMPTY;
// Kinds that are text, so a quoted word may stand for them.
for (const k of [CSTR, CSTR_OPT, CSTRS, STR_REST]) kindFlags[k]! |= QUOTABLE;
// Kinds whose text is every remaining word (the other kinds take one word each).
for (const k of [CSTRS, HEX, B64, B64_SPLIT, BITMAP, SVCPARAMS, NSAP_HEX, APL, WKS_PORTS, NXT_BITMAP]) kindFlags[k]! |= TAKES_REST;

export function mayBeEmpty(kind: number): boolean {
  return (kindFlags[kind]! & MAY_BE_EMPTY) !== 0;
}

export function isQuotable(kind: number): boolean {
  return (kindFlags[kind]! & QUOTABLE) !== 0;
}

export function takesRest(kind: number): boolean {
  return (kindFlags[kind]! & TAKES_REST) !== 0;
}

// ---- Types

const DS_LIKE = [U16, ALG, U8, HEX];
const DNSKEY_LIKE = [U16, U8, ALG, B64];
const RRSIG_LIKE = [TYPE, ALG, U8, U32, TIME, TIME, U16, NAME, B64_SPLIT];
const TLSA_LIKE = [U8, U8, U8, HEX];
const SVCB_LIKE = [U16, NAME, SVCPARAMS];

export const SCHEMA = new Map<number, readonly number[]>([
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

/** A type with its own codec: the whole rdata to text, and the words from toks[i] to wire. */
export interface SpecialCodec {
  toText(wire: Uint8Array): string;
  fromTokens(toks: Tokens, i: number, origin: string | undefined): void;
  /** Its rdata holds names, which rdataFromMessage must lower-case. */
  hasNames: boolean;
}

export const SPECIAL = new Map<number, SpecialCodec>([
  [29, { toText: locText, fromTokens: (toks, i) => putLoc(toks, i), hasNames: false }], // LOC
  [38, { toText: a6Text, fromTokens: putA6, hasNames: true }], // A6
  [45, { toText: ipseckeyText, fromTokens: putIpseckey, hasNames: true }], // IPSECKEY
  [55, { toText: hipText, fromTokens: putHip, hasNames: true }], // HIP
]);

/** Types whose rdata holds names: rdataFromMessage expands and lower-cases them. */
export const HAS_NAMES = new Set<number>();
for (const [code, fields] of SCHEMA) if (fields.includes(NAME)) HAS_NAMES.add(code);
for (const [code, codec] of SPECIAL) if (codec.hasNames) HAS_NAMES.add(code);
