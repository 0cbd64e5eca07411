// A standard-search request (lookup/... and summarize/...), validated.
// Shapes from service-spec.md 4.1 and compat.md "Paths" and "Values":
//   {lookup|summarize}/rrset/{name|raw}/VALUE[/RRTYPE[/BAILIWICK]]
//   {lookup|summarize}/rdata/{name|ip|raw}/VALUE[/RRTYPE]
// Pure: no I/O.

import { ApiError } from '../errors/catalogue.js';
import { ipv4FromText, ipv6FromText } from '../dns/ip.js';
import { nameFromWire, normalizeName } from '../dns/name.js';
import { RR, rrtypeFromText } from '../dns/rrtype.js';
import type { TypeFilter } from '../model/filters.js';
import type { NameMatch } from '../model/name-match.js';
import { parseBool, parseCommon, parseCount, type CommonParams } from './params.js';

export type LookupValue =
  | { kind: 'name'; match: NameMatch }
  | { kind: 'ip'; family: 4 | 6; low: Uint8Array; high: Uint8Array }
  | { kind: 'raw'; wire: Uint8Array };

export interface LookupQuery extends CommonParams {
  summarize: boolean;
  target: 'rrset' | 'rdata';
  value: LookupValue;
  typeFilter: TypeFilter;
  bailiwick: string | undefined;
  aggr: boolean;
  humantime: boolean;
  maxCount: number | undefined;
}

const bad = () => new ApiError('UNPARSABLE_REQUEST');

function name(text: string): string {
  try {
    return normalizeName(text);
  } catch {
    throw bad();
  }
}

export function parseNameMatch(value: string, rdata: boolean): NameMatch {
  if (value.startsWith('*.')) return { mode: 'under', name: name(value.slice(2)) };
  if (value.startsWith('+.')) return { mode: 'one-under', name: name(value.slice(2)) };
  if (value.endsWith('.*')) return { mode: 'starts', prefix: prefixOf(value.slice(0, -1)) };
  if (value.endsWith('.+')) return { mode: 'one-more', prefix: prefixOf(value.slice(0, -1)) };
  if (rdata && value.length > 1 && value.startsWith('.')) return { mode: 'under', name: name(value.slice(1)) };
  if (rdata && value.length > 1 && value.endsWith('.') && !value.endsWith('\\.')) {
    return { mode: 'starts', prefix: prefixOf(value) };
  }
  if (value.includes('*') || value.includes('+')) {
    // compat.md: at most one wildcard, leftmost or rightmost only.
    if (/(^|\.)[*+](\.|$)/.test(value)) throw bad();
  }
  return { mode: 'exact', name: name(value) };
}

/** "www.example." -> "www.example." normalised, keeping the trailing dot as the label boundary. */
function prefixOf(labelsWithDot: string): string {
  const n = name(labelsWithDot);
  if (n === '.') throw bad();
  return n;
}

function parseHex(v: string): Uint8Array {
  if (v.length === 0 || v.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(v)) throw bad();
  return Buffer.from(v, 'hex');
}

function address(text: string): { family: 4 | 6; bytes: Uint8Array } {
  const v4 = ipv4FromText(text);
  if (v4) return { family: 4, bytes: v4 };
  const v6 = ipv6FromText(text);
  if (v6) return { family: 6, bytes: v6 };
  throw bad();
}

export function parseIpValue(v: string): LookupValue {
  const comma = v.indexOf(',');
  if (comma >= 0) {
    const { family, bytes } = address(v.slice(0, comma));
    const lenText = v.slice(comma + 1);
    const bits = family === 4 ? 32 : 128;
    if (!/^\d{1,3}$/.test(lenText) || Number(lenText) > bits) throw bad();
    const len = Number(lenText);
    const low = Uint8Array.from(bytes);
    const high = Uint8Array.from(bytes);
    for (let bit = len; bit < bits; bit++) {
      const byte = bit >> 3, mask = 0x80 >> (bit & 7);
      low[byte]! &= ~mask;
      high[byte]! |= mask;
    }
    return { kind: 'ip', family, low, high };
  }
  const dash = v.indexOf('-');
  if (dash > 0) {
    const a = address(v.slice(0, dash));
    const b = address(v.slice(dash + 1));
    if (a.family !== b.family || Buffer.compare(a.bytes, b.bytes) > 0) throw bad();
    return { kind: 'ip', family: a.family, low: a.bytes, high: b.bytes };
  }
  const { family, bytes } = address(v);
  return { kind: 'ip', family, low: bytes, high: bytes };
}

/**
 * The rrtype segment of a standard search; `omitted` when there is none:
 * every type on the rrset path (spec 4.1 rule 2), ANY (no DNSSEC types) on
 * the rdata paths, where the spec is silent and DNSDB clients expect ANY.
 */
export function parseStandardType(segment: string | undefined, omitted: TypeFilter): TypeFilter {
  if (segment === undefined || segment === '') return omitted;
  const upper = segment.toUpperCase();
  if (upper === 'ANY') return 'any';
  if (upper === 'ANY-DNSSEC') return 'any-dnssec';
  const code = rrtypeFromText(segment);
  if (code === undefined) throw new ApiError('BAD_RRTYPE');
  return code;
}

/** `segments` start with 'lookup' or 'summarize'. */
export function parseLookupQuery(segments: readonly string[], q: ReadonlyMap<string, string>, now: number): LookupQuery {
  const summarize = segments[0] === 'summarize';
  const target = segments[1];
  if (target !== 'rrset' && target !== 'rdata') throw new ApiError('BAD_WHAT_TO_SEARCH');
  const how = segments[2];
  const allowed = target === 'rrset' ? ['name', 'raw'] : ['name', 'ip', 'raw'];
  if (how === undefined || !allowed.includes(how)) throw new ApiError('BAD_SEARCH_METHOD');
  if (segments.length < 4 || segments[3] === '') throw new ApiError('MISSING_SEGMENT');
  if (segments.length > (target === 'rrset' ? 6 : 5)) throw new ApiError('TOO_MANY_SEGMENTS');
  const raw = segments[3]!;
  let value: LookupValue;
  if (how === 'name') value = { kind: 'name', match: parseNameMatch(raw, target === 'rdata') };
  else if (how === 'ip') value = parseIpValue(raw);
  else if (target === 'rrset') {
    // The owner name in wire form: read it as a name and look it up exactly.
    const wire = parseHex(raw);
    let decoded: { name: string; end: number };
    try {
      decoded = nameFromWire(wire, 0);
    } catch {
      throw bad();
    }
    if (decoded.end !== wire.length) throw bad();
    value = { kind: 'name', match: { mode: 'exact', name: decoded.name } };
  } else value = { kind: 'raw', wire: parseHex(raw) };

  let typeFilter = parseStandardType(segments[4], target === 'rrset' ? 'all' : 'any');
  if (value.kind === 'ip') {
    // compat.md: only A, AAAA and ANY are valid on rdata/ip, and they are
    // interchangeable there: the address says which records hold it.
    if (typeFilter !== 'any' && typeFilter !== RR.A && typeFilter !== RR.AAAA) throw new ApiError('BAD_RRTYPE');
    typeFilter = 'any';
  }
  const bailiwickSeg = segments[5];
  const bailiwick = bailiwickSeg === undefined || bailiwickSeg === '' ? undefined : name(bailiwickSeg);
  const common = parseCommon(q, now);
  if (summarize && q.has('offset')) throw new ApiError('OFFSET_NOT_ALLOWED');
  return {
    // Fields listed, not spread: a spread object is built key by key and was
    // half of this function's time on the lookup hot path.
    limit: common.limit, offset: common.offset, fence: common.fence,
    id: common.id, swclient: common.swclient, version: common.version,
    summarize, target, value, typeFilter, bailiwick,
    aggr: parseBool(q.get('aggr')) ?? true,
    humantime: parseBool(q.get('humantime')) ?? false,
    maxCount: parseCount(q.get('max_count')),
  };
}
