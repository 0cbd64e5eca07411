// NDJSON passive-DNS exports -> Observations.
//
// Contract. One JSON object per line (LF or CRLF; a UTF-8 BOM at the start is
// skipped), in either of two shapes:
//   - DNSDB API v2 result objects, bare or wrapped as {"obj":{...}}: rrname,
//     rrtype (mnemonic or TYPEnnn), rdata, count, time_first/time_last
//     (sensor) and/or zone_time_first/zone_time_last (zone file), bailiwick.
//     An rrset-lookup object carries `rdata` as an array: the RRset's
//     records. An rdata-lookup object carries ONE string: one record of an
//     RRset, which becomes an Observation holding that single record.
//   - COF (draft-dulaunoy-dnsop-passive-dns-cof): the same keys, plus
//     sensor_id (ignored); rrtype may be a number; names may lack the
//     trailing dot ("www.circl.lu" is www.circl.lu.).
// SAF framing lines ({"cond":...}) and {} keep-alives are skipped silently,
// so a saved API stream ingests as it is.
//
// Normalisation. Names become canonical (normalizeName). rdata text is parsed
// and re-printed in our canonical presentation (rdataFromText, then
// rdataToText), with fast paths for A, AAAA, NS, CNAME, PTR, MX, SOA and TXT
// that give the same result (tested against the general path). `raw_rdata`
// is ignored: the text is authoritative.
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
// Errors. A line that is not JSON, lacks rrname/rrtype/rdata, names a bad or
// meta rrtype, has rdata that does not parse, bad times or count, or is longer
// than LIMITS.ingestLineBytesMax goes to ctx.reject as an IngestError naming
// "line N"; the parser then carries on with the next line.
//
// Speed. The file is read by the line reader (lib/line-reader.ts) in reads of
// up to LIMITS.lineReadBufferBytes into one reused buffer; lines are split on
// 0x0A with Buffer.indexOf, decoded one at a time and given to JSON.parse. A
// line cut by the end of a read is moved to the front of the buffer and
// completed by the next read. No closure or intermediate array is made per
// line. Measured on a 2 M-line, 368 MB export
// (2.87 M records) on this 2-core machine: JSON.parse alone is about 1.1 us a
// line, normalising about 1 us more, so one core reads 0.6-0.7 M records/s.
// The fast paths halved the normalising cost (the general SOA path alone was
// 3.9 us a record). A hand-written byte scanner instead of JSON.parse was
// tried: 1.5 times faster at parsing, not worth a second JSON parser.

import { open } from 'node:fs/promises';
import { LIMITS } from '../config/limits.js';
import { ipv4FromText, ipv6FromText, ipv6ToText } from '../dns/ip.js';
import { nameToWire, normalizeName } from '../dns/name.js';
import { rdataFromText, rdataToText } from '../dns/rdata/index.js';
import { isMetaType, RR, RRTYPE_MAX, rrtypeFromText } from '../dns/rrtype.js';
import { hasCode, IngestError } from '../errors/catalogue.js';
import type { Observation, Rdata } from '../model/observation.js';
import { countLines, LineReader, type ByteRange } from '../lib/line-reader.js';
import type { IngestContext } from './context.js';

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

// The mnemonics as exports spell them, looked up before rrtypeFromText (which upper-cases first).
const COMMON_RRTYPES = new Map<string, number>(
  ['A', 'AAAA', 'NS', 'CNAME', 'SOA', 'MX', 'TXT', 'PTR', 'SRV', 'DS', 'RRSIG', 'DNSKEY', 'NSEC', 'NSEC3', 'HTTPS', 'SVCB', 'CAA']
    .map((t) => [t, rrtypeFromText(t)!]),
);

function rrtypeOf(v: unknown): number {
  let code: number | undefined;
  if (typeof v === 'string') code = COMMON_RRTYPES.get(v) ?? rrtypeFromText(v);
  else if (typeof v === 'number' && Number.isInteger(v) && v > 0 && v <= RRTYPE_MAX) code = v;
  if (code === undefined || code === 0) throw new BadLine(`bad rrtype ${shown(v)}`);
  if (isMetaType(code)) throw new BadLine(`rrtype ${shown(v)} is a meta type, never stored data`);
  return code;
}

/**
 * Canonical Rdata of one record's presentation text; throws DnsFormatError
 * when it does not parse. The fast paths cover the types that make up most
 * passive-DNS data and give exactly what the general path (rdataFromText,
 * then rdataToText) gives; anything unusual falls through to it.
 */
function normalizeRdata(rrtype: number, text: string): Rdata {
  let r: Rdata | undefined;
  switch (rrtype) {
    case RR.A: {
      // ipv4FromText refuses anything but a plain dotted quad, which is already canonical.
      const wire = ipv4FromText(text);
      if (wire !== undefined) return { text, wire };
      break;
    }
    case RR.AAAA: {
      const wire = ipv6FromText(text);
      if (wire !== undefined) return { text: ipv6ToText(wire), wire };
      break;
    }
    case RR.NS:
    case RR.CNAME:
    case RR.PTR:
      if (hasNoSpecials(text)) {
        const name = normalizeName(text);
        return { text: name, wire: nameWire(name) };
      }
      break;
    case RR.MX: r = mxFast(text); break;
    case RR.SOA: r = soaFast(text); break;
    case RR.TXT:
    case RR.SPF: r = txtFast(text); break;
    default:
      break;
  }
  if (r !== undefined) return r;
  const wire = rdataFromText(rrtype, text);
  return { text: rdataToText(rrtype, wire), wire };
}

/**
 * True when `text` holds none of the characters the master-file tokenizer
 * treats specially (blanks, quotes, parentheses, comments, escapes): then a
 * name field is the whole word and normalizeName reads it as the tokenizer
 * would.
 */
function hasNoSpecials(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x20 || c === 0x22 || c === 0x28 || c === 0x29 || c === 0x3b || c === 0x5c) return false;
  }
  return text.length > 0;
}

/**
 * Wire form of a name normalizeName returned. Without a backslash such a
 * name is plain labels of printable ASCII, so its wire is the text with each
 * dot replaced by the next label's length: one pass, no parser. This is
 * about eight times faster than nameToWire here, and names are most of the
 * rdata bytes of an export; names with escapes go to nameToWire.
 */
function nameWire(name: string): Uint8Array {
  const n = name.length;
  if (n === 1 || name.indexOf('\\') >= 0) return nameToWire(name);
  const w = new Uint8Array(n + 1);
  let lenAt = 0;
  let len = 0;
  for (let i = 0; i < n; i++) {
    const c = name.charCodeAt(i);
    if (c === 0x2e) {
      w[lenAt] = len;
      lenAt = i + 1;
      len = 0;
    } else {
      w[i + 1] = c;
      len++;
    }
  }
  w[n] = 0;
  return w;
}

/** Canonical name and its wire, or undefined when `text` needs the general path. */
function nameField(text: string): string | undefined {
  return hasNoSpecials(text) ? normalizeName(text) : undefined;
}

/** MX written the ordinary way ("10 mx.example.com."): preference, one space, a name. Else undefined. */
function mxFast(text: string): Rdata | undefined {
  const sp = text.indexOf(' ');
  if (sp < 1 || sp > 5) return undefined;
  const pref = plainUint(text, 0, sp);
  if (pref < 0 || pref > 0xffff) return undefined;
  const name = nameField(text.slice(sp + 1));
  if (name === undefined) return undefined;
  const nw = nameWire(name);
  const wire = new Uint8Array(2 + nw.length);
  wire[0] = pref >> 8;
  wire[1] = pref & 0xff;
  wire.set(nw, 2);
  return { text: `${pref} ${name}`, wire };
}

/** Decimal digits in text[from, to) without a leading zero, as a number; -1 when not that or above 2^32-1. */
function plainUint(text: string, from: number, to: number): number {
  const len = to - from;
  if (len < 1 || len > 10 || (len > 1 && text.charCodeAt(from) === 0x30)) return -1;
  let v = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return -1;
    v = v * 10 + (c - 0x30);
  }
  return v <= 0xffffffff ? v : -1;
}

/** SOA as exports write it: two names and five plain numbers, single spaces. Else undefined. */
function soaFast(text: string): Rdata | undefined {
  const f = text.split(' ');
  if (f.length !== 7) return undefined;
  const mname = nameField(f[0]!);
  const rname = nameField(f[1]!);
  if (mname === undefined || rname === undefined) return undefined;
  const mw = nameWire(mname);
  const rw = nameWire(rname);
  const wire = new Uint8Array(mw.length + rw.length + 20);
  wire.set(mw, 0);
  wire.set(rw, mw.length);
  let at = mw.length + rw.length;
  for (let i = 2; i < 7; i++) {
    const v = plainUint(f[i]!, 0, f[i]!.length);
    if (v < 0) return undefined;
    wire[at++] = v >>> 24;
    wire[at++] = (v >>> 16) & 0xff;
    wire[at++] = (v >>> 8) & 0xff;
    wire[at++] = v & 0xff;
  }
  const canonical = mname === f[0] && rname === f[1] ? text : `${mname} ${rname} ${f[2]} ${f[3]} ${f[4]} ${f[5]} ${f[6]}`;
  return { text: canonical, wire };
}

/**
 * TXT already in canonical form: quoted strings of printable ASCII without
 * `"` or `\` inside, at most 255 bytes each, separated by single spaces. The
 * text stays as it is. Else undefined.
 */
function txtFast(text: string): Rdata | undefined {
  const n = text.length;
  let bytes = 0;
  let i = 0;
  while (i < n) {
    if (text.charCodeAt(i) !== 0x22) return undefined;
    let j = i + 1;
    for (; j < n; j++) {
      const c = text.charCodeAt(j);
      if (c === 0x22) break;
      if (c < 0x20 || c > 0x7e || c === 0x5c) return undefined;
    }
    if (j >= n || j - i - 1 > 255) return undefined;
    bytes += j - i;
    i = j + 1;
    if (i === n) break;
    if (text.charCodeAt(i) !== 0x20) return undefined;
    i++;
    if (i === n) return undefined;
  }
  if (bytes === 0) return undefined;
  const wire = new Uint8Array(bytes);
  let w = 0;
  i = 0;
  while (i < n) {
    const lenAt = w++;
    let j = i + 1;
    for (; text.charCodeAt(j) !== 0x22; j++) wire[w++] = text.charCodeAt(j);
    wire[lenAt] = j - i - 1;
    i = j + 2;
  }
  return { text, wire };
}

/**
 * The last rrname and bailiwick converted. Exports list an owner's RRsets on
 * consecutive lines, so most lines repeat the previous line's names and skip
 * normalising them. (A map of recent rdata was measured as well: on a 2 M
 * line file it cost more in hashing and garbage collection than it saved.)
 */
class Memo {
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
function observationOfJson(v: unknown, memo: Memo): Observation | undefined {
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
function reasonOf(err: unknown): string {
  if (err instanceof BadLine) return err.reason;
  if (isDnsFormatError(err)) return err.message;
  throw err;
}

/**
 * Observations of an NDJSON file (or of `range` of it), in file order. Bad
 * lines go to ctx.reject("line N") and are skipped; reject throws once
 * --max-errors is passed, which ends the iteration. Line numbers count from
 * the start of the file, also in a range (the lines before it are counted
 * only when a bad line needs its number).
 */
export async function* ndjsonObservations(file: string, ctx: IngestContext,
  range?: ByteRange): AsyncGenerator<Observation, void, undefined> {
  const fh = await open(file, 'r');
  const startAt = range?.start ?? 0;
  const endAt = range?.end ?? Infinity;
  let linesBefore: number | undefined = startAt === 0 ? 0 : undefined;
  const lineOf = async (n: number): Promise<string> => {
    linesBefore ??= await countLines(fh, startAt);
    return `line ${linesBefore + n}`;
  };
  try {
    const lines = new LineReader({
      lineBytesMax: LIMITS.ingestLineBytesMax, bufferBytes: LIMITS.lineReadBufferBytes, skipBom: startAt === 0,
    });
    let readBytes = 0;
    const memo = new Memo();
    for (;;) {
      const bytesRead = await lines.fill(fh, startAt + readBytes, endAt - startAt - readBytes);
      readBytes += bytesRead;
      while (lines.next()) {
        if (lines.tooLong) {
          ctx.reject(new IngestError(file, await lineOf(lines.lineNo), lines.tooLongReason));
          continue;
        }
        if (lines.end === lines.start) continue;
        let json: unknown;
        try {
          json = JSON.parse(lines.text());
        } catch {
          ctx.reject(new IngestError(file, await lineOf(lines.lineNo), 'not valid JSON'));
          continue;
        }
        let obs: Observation | undefined;
        try {
          obs = observationOfJson(json, memo);
        } catch (err) {
          ctx.reject(new IngestError(file, await lineOf(lines.lineNo), reasonOf(err)));
          continue;
        }
        if (obs !== undefined) yield obs;
      }
      if (bytesRead === 0) break;
      ctx.progress?.(readBytes);
    }
    ctx.progress?.(readBytes);
  } finally {
    await fh.close();
  }
}
