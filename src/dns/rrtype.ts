// The one rrtype table: mnemonic <-> number, DNSSEC membership, and which
// types flexible rdata search covers. Every other module asks this file;
// nothing else spells out a type number.
//
// Contract: rrtypeFromText accepts a mnemonic in any case or the RFC 3597
// generic form TYPE<n> (0..65535); rrtypeToText gives the mnemonic when we
// know one, otherwise TYPE<n>.

export interface RrtypeInfo {
  readonly name: string;
  readonly code: number;
  /** Member of ANY-DNSSEC (compat.md); left out of ANY. */
  readonly dnssec: boolean;
  /** rdata is names or text, so flexible rdata search covers it (compat.md). */
  readonly flexRdata: boolean;
}

// [name, code, dnssec, flexRdata]
const TABLE: ReadonlyArray<readonly [string, number, boolean, boolean]> = [
  ['A', 1, false, false],
  ['NS', 2, false, true],
  ['MD', 3, false, true],
  ['MF', 4, false, true],
  ['CNAME', 5, false, true],
  ['SOA', 6, false, true],
  ['MB', 7, false, true],
  ['MG', 8, false, true],
  ['MR', 9, false, true],
  ['NULL', 10, false, false],
  ['WKS', 11, false, false],
  ['PTR', 12, false, true],
  ['HINFO', 13, false, true],
  ['MINFO', 14, false, true],
  ['MX', 15, false, true],
  ['TXT', 16, false, true],
  ['RP', 17, false, true],
  ['AFSDB', 18, false, true],
  ['X25', 19, false, true],
  ['ISDN', 20, false, true],
  ['RT', 21, false, true],
  ['NSAP', 22, false, false],
  ['NSAP-PTR', 23, false, true],
  ['SIG', 24, false, false],
  ['KEY', 25, false, false],
  ['PX', 26, false, true],
  ['GPOS', 27, false, false],
  ['AAAA', 28, false, false],
  ['LOC', 29, false, false],
  ['NXT', 30, false, false],
  ['SRV', 33, false, true],
  ['NAPTR', 35, false, true],
  ['KX', 36, false, true],
  ['CERT', 37, false, false],
  ['A6', 38, false, false],
  ['DNAME', 39, false, true],
  ['OPT', 41, false, false],
  ['APL', 42, false, false],
  ['DS', 43, true, false],
  ['SSHFP', 44, false, false],
  ['IPSECKEY', 45, false, false],
  ['RRSIG', 46, true, false],
  ['NSEC', 47, true, false],
  ['DNSKEY', 48, true, false],
  ['DHCID', 49, false, false],
  ['NSEC3', 50, true, false],
  ['NSEC3PARAM', 51, true, false],
  ['TLSA', 52, false, false],
  ['SMIMEA', 53, false, false],
  ['HIP', 55, false, false],
  ['CDS', 59, true, false],
  ['CDNSKEY', 60, true, false],
  ['OPENPGPKEY', 61, false, false],
  ['CSYNC', 62, false, false],
  ['ZONEMD', 63, false, false],
  ['SVCB', 64, false, true],
  ['HTTPS', 65, false, true],
  ['SPF', 99, false, true],
  ['NID', 104, false, false],
  ['L32', 105, false, false],
  ['L64', 106, false, false],
  ['LP', 107, false, true],
  ['EUI48', 108, false, false],
  ['EUI64', 109, false, false],
  ['TKEY', 249, false, false],
  ['TSIG', 250, false, false],
  ['URI', 256, false, true],
  ['CAA', 257, false, true],
  ['AVC', 258, false, true],
  ['TA', 32768, true, false],
  ['DLV', 32769, true, false],
];

const byName = new Map<string, RrtypeInfo>();
const byCode = new Map<number, RrtypeInfo>();
for (const [name, code, dnssec, flexRdata] of TABLE) {
  const info: RrtypeInfo = Object.freeze({ name, code, dnssec, flexRdata });
  byName.set(name, info);
  byCode.set(code, info);
}

export const RRTYPE_MAX = 0xffff;

/** Well-known codes used by name in code paths (zone SOA handling, IP lookups). */
export const RR = Object.freeze({
  A: 1, NS: 2, CNAME: 5, SOA: 6, PTR: 12, MX: 15, TXT: 16, AAAA: 28, SRV: 33,
  OPT: 41, DS: 43, RRSIG: 46, NSEC: 47, DNSKEY: 48, NSEC3: 50, SPF: 99,
});

/** Mnemonic (case-insensitive) or TYPE<n>; undefined when neither. */
export function rrtypeFromText(text: string): number | undefined {
  // Zone files and exports spell mnemonics in upper case: looked up as they come first, no copy made.
  const exact = byName.get(text);
  if (exact) return exact.code;
  const upper = text.toUpperCase();
  const known = byName.get(upper);
  if (known) return known.code;
  const m = /^TYPE(\d{1,5})$/.exec(upper);
  if (!m) return undefined;
  const code = Number(m[1]);
  return code <= RRTYPE_MAX ? code : undefined;
}

export function rrtypeToText(code: number): string {
  return byCode.get(code)?.name ?? `TYPE${code}`;
}

export function rrtypeInfo(code: number): RrtypeInfo | undefined {
  return byCode.get(code);
}

export function isDnssecType(code: number): boolean {
  return byCode.get(code)?.dnssec ?? false;
}

/** Types whose rdata flexible rdata search covers (names or text). */
export function isFlexRdataType(code: number): boolean {
  return byCode.get(code)?.flexRdata ?? false;
}

/**
 * Types that never describe stored data: OPT, TSIG, TKEY, the query-only
 * 251-255, and 0, which is reserved (RFC 6895 section 3.1) and so never a
 * record's type; NDJSON ingest refused it, captures and zone files must too.
 */
export function isMetaType(code: number): boolean {
  return code === 0 || code === 41 || code === 249 || code === 250 || (code >= 251 && code <= 255);
}
