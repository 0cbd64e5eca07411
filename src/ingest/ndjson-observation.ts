// One NDJSON passive-DNS object -> one Observation (the reader, ndjson.ts,
// hands each parsed line to observationOfJson).
//
// Contract. Two shapes of object:
//   - DNSDB API v2 result objects, bare or wrapped as {"obj":{...}}: rrname,
//     rrtype (mnemonic or TYPEnnn), rdata, count, time_first/time_last
//     (sensor) and/or zone_time_first/zone_time_last (zone file), bailiwick.
//     An rrset-lookup object carries `rdata` as an array: the RRset's
//     records. An rdata-lookup object carries ONE string: one record of an
//     RRset, which becomes an Observation holding that single record.
//   - COF (draft-dulaunoy-dnsop-passive-dns-cof): the same keys, plus
//     sensor_id (ignored); rrtype may be a number; names may lack the
//     trailing dot ("www.circl.lu" is www.circl.lu.).
// SAF framing objects ({"cond":...}) and {} keep-alives map to no
// Observation, so a saved API stream ingests as it is.
//
// Normalisation. Names become canonical (normalizeName). rdata text is parsed
// and re-printed in our canonical presentation (canonical-rdata.ts, with its
// fast paths). `raw_rdata` is ignored: the text is authoritative.
// `count` defaults to 1. Times are epoch seconds (a number) or RFC 3339 UTC
// strings (humantime exports). With only one of a first/last pair given, it
// stands for both.
//
// Bailiwick. A record without `bailiwick` (every rdata-lookup object, some
// zone_time objects) gets the empty string, meaning "unknown": the bailiwick
// of such a record cannot be recovered from the record (the zone cut is not
// in it), and guessing the parent zone would put wrong data under a
// bailiwick filter. Standard lookups print no bailiwick key for these
// RRsets, as DNSDB does for rdata lookups.
//
// Errors. An object that lacks rrname/rrtype/rdata, names a bad or meta
// rrtype, has rdata that does not parse, or bad times or count is refused
// with a reason (reasonOf) that the reader puts in the line's IngestError.

import { LIMITS } from '../config/limits.js';
import { normalizeName } from '../dns/name.js';
import { isMetaType, RRTYPE_MAX, rrtypeFromText } from '../dns/rrtype.js';
import { hasCode } from '../errors/catalogue.js';
import type { Observation, Rdata } from '../model/observation.js';
import { normalizeRdata } from './canonical-rdata.js';

/** A line we refuse; `reason` becomes the IngestError's reason. Internal to this module. */
class BadLine {
  constructor(readonly reason: string) {}
}

function isDnsFormatError(err: unknown): err is Error {
  return hasCode(err, 'DNS_FORMAT');
}

/** A short, printable rendering of a value for an error message. */
function shown(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v) ?? String(v);
  return JSON.stringify(s.length > 60 ? `${s.slice(0, 60)}...` : s);
}

// RFC 3339 in UTC with a Z or a numeric offset, optional fraction: the form
// DNSDB's humantime output uses. Our own fixed pattern, so V8 RegExp is fine.
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Epoch seconds of a time field; -1 when absent. */
function epochOf(v: unknown, key: string): number {
  if (v === undefined || v === null) return -1;
  let t: number;
  if (typeof v === 'number') t = v;
  else if (typeof v === 'string' && RFC3339.test(v)) t = Date.parse(v.replace(' ', 'T')) / 1000;
  else throw new BadLine(`${key} is not epoch seconds or an RFC 3339 time: ${shown(v)}`);
  if (!Number.isFinite(t) || t < 0 || t > LIMITS.ndjsonEpochSecMax) throw new BadLine(`${key} out of range: ${shown(v)}`);
  return Math.floor(t);
}

function rrtypeOf(v: unknown): number {
  let code: number | undefined;
  if (typeof v === 'string') code = rrtypeFromText(v);
  else if (typeof v === 'number' && Number.isInteger(v) && v > 0 && v <= RRTYPE_MAX) code = v;
  if (code === undefined || code === 0) throw new BadLine(`bad rrtype ${shown(v)}`);
  if (isMetaType(code)) throw new BadLine(`rrtype ${shown(v)} is a meta type, never stored data`);
  return code;
}

/**
 * The last rrname and bailiwick converted. Exports list an owner's RRsets on
 * consecutive lines, so most lines repeat the previous line's names and skip
 * normalising them. (A map of recent rdata was measured as well: on a 2 M
 * line file it cost more in hashing and garbage collection than it saved.)
 */
export class Memo {
  // No string matches before the first line: an empty rrname must reach
  // normalizeName and be refused, not match an initial ''.
  private rrnameRaw: string | undefined = undefined;
  private rrnameNorm = '';
  // An empty bailiwick matches from the start and stays '': unknown, like an absent one.
  private bailiwickRaw = '';
  private bailiwickNorm = '';

  rrname(raw: string): string {
    if (raw !== this.rrnameRaw) {
      this.rrnameNorm = nameOrBad(raw, 'rrname');
      this.rrnameRaw = raw;
    }
    return this.rrnameNorm;
  }

  bailiwick(raw: string): string {
    if (raw !== this.bailiwickRaw) {
      this.bailiwickNorm = nameOrBad(raw, 'bailiwick');
      this.bailiwickRaw = raw;
    }
    return this.bailiwickNorm;
  }
}

function nameOrBad(raw: string, key: string): string {
  try {
    return normalizeName(raw);
  } catch (err) {
    if (isDnsFormatError(err)) throw new BadLine(`${key} ${shown(raw)}: ${err.message}`);
    throw err;
  }
}

function hasNoKeys(o: object): boolean {
  for (const _ in o) return false;
  return true;
}

/**
 * The Observation one parsed line describes; undefined for SAF framing and
 * keep-alives. Throws BadLine or DnsFormatError for a bad record.
 */
export function observationOfJson(v: unknown, memo: Memo): Observation | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new BadLine('not a JSON object');
  let o = v as Record<string, unknown>;
  const wrapped = o['obj'];
  if (wrapped !== undefined) {
    if (typeof wrapped !== 'object' || wrapped === null || Array.isArray(wrapped)) throw new BadLine('"obj" is not a JSON object');
    o = wrapped as Record<string, unknown>;
  }
  const rrnameV = o['rrname'];
  const rrtypeV = o['rrtype'];
  const rdataV = o['rdata'];
  if (rrnameV === undefined && rrtypeV === undefined && rdataV === undefined) {
    if (o['cond'] !== undefined || hasNoKeys(o)) return undefined;
    throw new BadLine('no rrname, rrtype or rdata');
  }
  if (typeof rrnameV !== 'string') throw new BadLine(rrnameV === undefined ? 'missing rrname' : 'rrname is not a string');
  if (rrtypeV === undefined) throw new BadLine('missing rrtype');
  if (rdataV === undefined) throw new BadLine('missing rdata');
  const rrtype = rrtypeOf(rrtypeV);

  const rrname = memo.rrname(rrnameV);

  let rdata: Rdata[];
  if (typeof rdataV === 'string') {
    rdata = [rdataOrBad(rrtype, rdataV, 'rdata')];
  } else if (Array.isArray(rdataV)) {
    const n = rdataV.length;
    if (n === 0) throw new BadLine('rdata is an empty array');
    if (n > LIMITS.ndjsonRdataPerLineMax) throw new BadLine(`rdata holds ${n} records, more than ${LIMITS.ndjsonRdataPerLineMax}`);
    rdata = new Array<Rdata>(n);
    for (let i = 0; i < n; i++) {
      const t: unknown = rdataV[i];
      if (typeof t !== 'string') throw new BadLine(`rdata[${i}] is not a string`);
      rdata[i] = rdataOrBad(rrtype, t, n === 1 ? 'rdata' : `rdata[${i}]`);
    }
  } else {
    throw new BadLine('rdata is neither a string nor an array of strings');
  }

  let bailiwick = '';
  const bw = o['bailiwick'];
  if (typeof bw === 'string') {
    bailiwick = memo.bailiwick(bw);
  } else if (bw !== undefined && bw !== null) {
    throw new BadLine('bailiwick is not a string');
  }

  let count = 1;
  const c = o['count'];
  if (c !== undefined) {
    if (typeof c !== 'number' || !Number.isSafeInteger(c) || c < 0) throw new BadLine(`count is not a non-negative integer: ${shown(c)}`);
    count = c;
  }

  let tf = epochOf(o['time_first'], 'time_first');
  let tl = epochOf(o['time_last'], 'time_last');
  let zf = epochOf(o['zone_time_first'], 'zone_time_first');
  let zl = epochOf(o['zone_time_last'], 'zone_time_last');
  if (tf < 0 && tl < 0 && zf < 0 && zl < 0) throw new BadLine('no time_first/time_last or zone_time_first/zone_time_last');
  if (tf < 0) tf = tl;
  else if (tl < 0) tl = tf;
  if (zf < 0) zf = zl;
  else if (zl < 0) zl = zf;
  if (tf > tl) throw new BadLine(`time_first ${tf} is after time_last ${tl}`);
  if (zf > zl) throw new BadLine(`zone_time_first ${zf} is after zone_time_last ${zl}`);

  return {
    rrname, rrtype, bailiwick, rdata, count,
    timeFirst: tf < 0 ? 0 : tf, timeLast: tl < 0 ? 0 : tl,
    zoneTimeFirst: zf < 0 ? 0 : zf, zoneTimeLast: zl < 0 ? 0 : zl,
  };
}

function rdataOrBad(rrtype: number, text: string, where: string): Rdata {
  try {
    return normalizeRdata(rrtype, text);
  } catch (err) {
    if (isDnsFormatError(err)) throw new BadLine(`${where} ${shown(text)}: ${err.message}`);
    throw err;
  }
}

/** Reason text for an error thrown while converting a line; rethrows anything that is not about the input. */
export function reasonOf(err: unknown): string {
  if (err instanceof BadLine) return err.reason;
  if (isDnsFormatError(err)) return err.message;
  throw err;
}
