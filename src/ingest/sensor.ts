// One DNS response as a sensor saw it -> Observations, with the bailiwick
// inferred from the response itself.
//
// Contract: only responses (QR=1) that were not truncated (TC=0) produce
// observations. Every RR of the answer, authority and additional sections
// counts, except meta types (OPT, TSIG, TKEY, query-only types: isMetaType)
// and classes other than IN. RRs are grouped into RRsets by (owner, type)
// whatever section they came from; each RRset becomes one Observation with
// count 1, timeFirst = timeLast = the packet's time in whole seconds, zone
// times 0, and its rdata deduplicated by wire form.
//
// Bailiwick. DNSDB's sensors sit between recursive resolvers and the
// authoritative servers and "reconstruct" the bailiwick from the resolver's
// delegation state: the zone the queried server was asked as authority for.
// A capture gives us no such state, so we infer the zone Z the answering
// server speaks for from the response alone, taking the first rule that
// applies (names compare label-wise; "encloses q" means q is at or under it):
//   0. dnstap's query_zone, when the sensor recorded it (observeResponse's
//      `bailiwick` argument): it IS the resolver's delegation state.
//   1. An SOA in the authority section whose owner encloses the question
//      name: Z = that owner (NXDOMAIN, NODATA, and negative answers name
//      their zone this way). The deepest one wins.
//   2. A referral: RCODE NOERROR, AA=0, no answers, and an NS RRset in the
//      authority section whose owner encloses the question name and is not
//      the root. The server is authoritative for a proper ancestor of the
//      delegated zone; we take the closest one, Z = the NS owner with its
//      first label removed ("." for a TLD referral from a root server).
//      When the parent is deeper than the real zone cut (the uk. servers
//      delegating example.co.uk. directly) Z is narrower than the truth,
//      which can only drop records, never admit wrong ones.
//   3. Evidence of the zone's apex that encloses the question name: an NS
//      RRset in the authority section; in the answer section an RRset of a
//      type that lives only at an apex (NS, SOA, DNSKEY, NSEC3PARAM, CDS,
//      CDNSKEY, ZONEMD) or an RRSIG, whose signer name is the zone holding
//      the signed data (so a DS answer, signed by the parent, gets the
//      parent). Z = the deepest such name. This covers authoritative answers
//      that carry the zone's NS (AA=1), recursive answers that copy them
//      (8.8.8.8 does), and signed answers.
//   4. Otherwise nothing in the response proves a zone cut. Z = the question
//      name's parent ("." for a TLD or the root): the smallest zone that is
//      plausible for a host name, wrong-but-safe for a zone apex (records
//      of example.com. get bailiwick com.). We chose this over the
//      "registrable domain" because it needs no suffix list and never
//      claims a zone broader than the name's parent.
// A response without a question has no anchor for rules 1-4: it yields
// nothing (counted as noQuestion) unless a bailiwick was given.
//
// Every RRset whose owner is not at or under Z is dropped and counted in
// SensorStats.outOfBailiwick: this is the cache-poisoning defence (glue for
// an unrelated zone in the additional section, a recursive answer's CNAME
// target in another zone). Recursive answers lose their cross-zone CNAME
// targets this way; a sensor above the resolver sees those targets in their
// own authoritative responses, which is where passive DNS should look.
// On the shared captures: the root-server captures get "." (TLD referrals
// and root NXDOMAINs), "arpa." and "root-servers.net." and drop nothing;
// 8.8.8.8's answers get "google.com." and "218.58.216.in-addr.arpa." and
// lose the 68 ns1-4.google.com A records attached to PTR answers.
//
// Also here, shared by pcap/ and dnstap.ts: TimedResponse (a parsed
// response with its time), SensorStats (what a source read and skipped;
// sensorStats(ctx) is the object a run filled, for the summary line) and
// ChunkedFile (the chunked, carry-over file reader).

import assert from 'node:assert/strict';
import { open, type FileHandle } from 'node:fs/promises';
import { LIMITS } from '../config/limits.js';
import type { DnsMessage, DnsRecord } from '../dns/message.js';
import { readWireName } from '../dns/name.js';
import { isMetaType, RR } from '../dns/rrtype.js';
import type { Observation } from '../model/observation.js';
import type { IngestContext } from './context.js';

export interface SensorOptions { /* none yet; reserve for --observed-at override */ }

/** One DNS response read by a sensor source, before it becomes observations. */
export interface TimedResponse {
  msg: DnsMessage;
  /** Packet (pcap) or response (dnstap) time, epoch seconds. */
  timeSec: number;
  /** The zone the sensor recorded for the query (dnstap query_zone); replaces inference. */
  bailiwick?: string;
  /** How the response travelled, when the source knows (pcap does). */
  transport?: 'udp' | 'tcp';
}

const CLASS_IN = 1;
/** RRsets of one response found by linear search before a map pays off. */
const LINEAR_GROUPS_MAX = 16;
const RCODE_NOERROR = 0;

/**
 * What a sensor source read and why it skipped what it skipped. The ingest
 * summary prints these; only `rejected` counts toward --max-errors, every
 * other skip is ordinary traffic (see pcap/outcomes.ts for the choice).
 */
export interface SensorStats {
  /** Packets (pcap) or data frames (dnstap) read. */
  packets: number;
  /** DNS responses that produced observations (possibly none after filtering). */
  responses: number;
  /** DNS queries (QR=0) skipped. */
  queries: number;
  /** Responses with TC=1 skipped: their RRsets may be incomplete; the TCP retry carries the full answer. */
  truncatedResponses: number;
  /** Responses without a question and without a recorded zone: no anchor for the bailiwick. */
  noQuestion: number;
  /** Payloads on port 53 that are not DNS at all (too short, or not parsable and not a response). */
  notDns: number;
  /** Packets cut by the capture's snaplen whose DNS payload could not be parsed. */
  snaplenCut: number;
  /** Frames that are not IPv4/IPv6 UDP/TCP to or from port 53 (ARP, ICMP, other ports, malformed headers). */
  otherTraffic: number;
  /** Packets on a link type we do not decode. */
  unknownLinkType: number;
  /** IP fragments and TCP streams dropped by a reassembly bound or timeout, or never completed. */
  reassemblyDropped: number;
  /** Bad packets or frames reported through ctx.reject. */
  rejected: number;
  /** RRs read from responses (all sections, OPT included). */
  records: number;
  /** RRs dropped as meta types (OPT, TSIG, ...) or class other than IN. */
  metaOrClass: number;
  /** RRs dropped because their owner is outside the inferred bailiwick. */
  outOfBailiwick: number;
  /** Observations produced (RRsets). */
  observations: number;
}

export function newSensorStats(): SensorStats {
  return {
    packets: 0, responses: 0, queries: 0, truncatedResponses: 0, noQuestion: 0, notDns: 0, snaplenCut: 0,
    otherTraffic: 0, unknownLinkType: 0, reassemblyDropped: 0, rejected: 0, records: 0, metaOrClass: 0,
    outOfBailiwick: 0, observations: 0,
  };
}

const statsByContext = new WeakMap<IngestContext, SensorStats>();

/**
 * The stats object pcapObservations / dnstapObservations fill for this
 * context. Read it after the iteration ends (the summary line does); the
 * same context reused across files accumulates.
 */
export function sensorStats(ctx: IngestContext): SensorStats {
  let s = statsByContext.get(ctx);
  if (!s) {
    s = newSensorStats();
    statsByContext.set(ctx, s);
  }
  return s;
}

// --- Names -----------------------------------------------------------------
// Names are lower-case presentation form with the trailing dot. A dot inside
// a label is escaped ("\." or "\046"), so a label boundary is a dot preceded
// by an even number of backslashes.

function isBoundary(name: string, dotIndex: number): boolean {
  let bs = 0;
  for (let i = dotIndex - 1; i >= 0 && name.charCodeAt(i) === 0x5c; i--) bs++;
  return (bs & 1) === 0;
}

/** True when `name` equals `zone` or lies under it. */
export function isAtOrUnder(name: string, zone: string): boolean {
  if (zone === '.') return true;
  if (name.length < zone.length) return false;
  if (name.length === zone.length) return name === zone;
  const dot = name.length - zone.length - 1;
  return name.charCodeAt(dot) === 0x2e && name.endsWith(zone) && isBoundary(name, dot);
}

/** The name with its first label removed; "." for a TLD and for the root. */
export function parentName(name: string): string {
  for (let i = name.indexOf('.'); i >= 0 && i < name.length - 1; i = name.indexOf('.', i + 1)) {
    if (isBoundary(name, i)) return name.slice(i + 1);
  }
  return '.';
}

/** Types that exist only at a zone apex: an answer holding one proves a zone there. DS is not one (the parent serves it). */
const APEX_TYPES = new Set<number>([RR.NS, RR.SOA, RR.DNSKEY, 51 /* NSEC3PARAM */, 59 /* CDS */, 60 /* CDNSKEY */, 63 /* ZONEMD */]);

/** RRSIG rdata: 18 octets of fixed fields, then the signer's name, uncompressed. */
const RRSIG_SIGNER_AT = 18;

/** The signer name of an RRSIG (the zone that holds the signed RRset), or undefined when the rdata is malformed. */
function rrsigSigner(rdata: Uint8Array): string | undefined {
  if (rdata.length <= RRSIG_SIGNER_AT) return undefined;
  try {
    return readWireName(rdata, RRSIG_SIGNER_AT, false).name;
  } catch {
    return undefined;
  }
}

function deeper(a: string | undefined, b: string): string {
  return a === undefined || b.length > a.length ? b : a;
}

/** The zone the answering server speaks for (rules 1-4 above); undefined without a question. */
export function inferBailiwick(msg: DnsMessage): string | undefined {
  const q = msg.questions[0];
  if (!q) return undefined;
  const qname = q.name;
  // Rule 1.
  let soa: string | undefined;
  let authNs: string | undefined;
  for (const rr of msg.authority) {
    if (rr.rrclass !== CLASS_IN || !isAtOrUnder(qname, rr.name)) continue;
    if (rr.rrtype === RR.SOA) soa = deeper(soa, rr.name);
    else if (rr.rrtype === RR.NS) authNs = deeper(authNs, rr.name);
  }
  if (soa !== undefined) return soa;
  // Rule 2.
  if (authNs !== undefined && authNs !== '.' && msg.answers.length === 0 && !msg.aa && msg.rcode === RCODE_NOERROR) {
    return parentName(authNs);
  }
  // Rule 3.
  let apex = authNs;
  for (const rr of msg.answers) {
    if (rr.rrclass !== CLASS_IN) continue;
    if (APEX_TYPES.has(rr.rrtype)) {
      if (isAtOrUnder(qname, rr.name)) apex = deeper(apex, rr.name);
    } else if (rr.rrtype === RR.RRSIG) {
      const signer = rrsigSigner(rr.rdata);
      if (signer !== undefined && isAtOrUnder(qname, signer)) apex = deeper(apex, signer);
    }
  }
  if (apex !== undefined) return apex;
  // Rule 4.
  return parentName(qname);
}

// --- Observations ----------------------------------------------------------

/**
 * Owns the rdata bytes: a view into a packet buffer must not pin (or see
 * reuse of) that buffer. parseMessage already copies rdata out of a plain
 * Uint8Array, so this only catches views: a Buffer (whose slice() is a view)
 * or an offset into something larger. It must not read `.buffer`, which
 * makes V8 move a small on-heap array off the heap (a third of ingest time
 * when we did).
 */
function ownWire(w: Uint8Array): Uint8Array {
  return w.byteOffset === 0 && !Buffer.isBuffer(w) ? w : Uint8Array.prototype.slice.call(w);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Observations of one response. `bailiwick`, when given (dnstap query_zone),
 * replaces inference; `stats`, when given, is updated with what was read and
 * dropped. Queries and truncated responses yield [] (and are counted).
 */
export function observeResponse(msg: DnsMessage, timeSec: number, bailiwick?: string, stats?: SensorStats): Observation[] {
  if (!msg.qr) {
    if (stats) stats.queries++;
    return [];
  }
  if (msg.tc) {
    if (stats) stats.truncatedResponses++;
    return [];
  }
  const zone = bailiwick ?? inferBailiwick(msg);
  if (zone === undefined) {
    if (stats) stats.noQuestion++;
    return [];
  }
  const t = Math.floor(timeSec);
  const out: Observation[] = [];
  let index: Map<string, Observation> | undefined;
  let last: Observation | undefined;
  let records = 0;
  let metaOrClass = 0;
  let outOfBailiwick = 0;
  const sections: readonly DnsRecord[][] = [msg.answers, msg.authority, msg.additional];
  for (const section of sections) {
    for (const rr of section) {
      records++;
      if (rr.rrclass !== CLASS_IN || isMetaType(rr.rrtype)) {
        metaOrClass++;
        continue;
      }
      if (!isAtOrUnder(rr.name, zone)) {
        outOfBailiwick++;
        continue;
      }
      // Records of one RRset are nearly always adjacent, and a response holds
      // few RRsets: a linear look-up allocates nothing; big ones (AXFR-like
      // TCP answers) switch to a map.
      let obs = last !== undefined && last.rrtype === rr.rrtype && last.rrname === rr.name ? last : undefined;
      if (obs === undefined) {
        if (index !== undefined) obs = index.get(`${rr.rrtype} ${rr.name}`);
        else {
          for (let i = 0; i < out.length; i++) {
            const o = out[i]!;
            if (o.rrtype === rr.rrtype && o.rrname === rr.name) {
              obs = o;
              break;
            }
          }
        }
        if (obs === undefined) {
          obs = {
            rrname: rr.name, rrtype: rr.rrtype, bailiwick: zone, rdata: [], count: 1,
            timeFirst: t, timeLast: t, zoneTimeFirst: 0, zoneTimeLast: 0,
          };
          out.push(obs);
          if (index !== undefined) index.set(`${rr.rrtype} ${rr.name}`, obs);
          else if (out.length > LINEAR_GROUPS_MAX) {
            index = new Map();
            for (const o of out) index.set(`${o.rrtype} ${o.rrname}`, o);
          }
        }
      }
      last = obs;
      const rdata = obs.rdata;
      let dup = false;
      for (let i = 0; i < rdata.length && !dup; i++) dup = sameBytes(rdata[i]!.wire, rr.rdata);
      if (!dup) rdata.push({ text: rr.text, wire: ownWire(rr.rdata) });
    }
  }
  assert.ok(out.length <= records - metaOrClass - outOfBailiwick, 'an RRset needs at least one record');
  if (stats) {
    stats.responses++;
    stats.records += records;
    stats.metaOrClass += metaOrClass;
    stats.outOfBailiwick += outOfBailiwick;
    stats.observations += out.length;
  }
  return out;
}

/** Observations of one response, bailiwick inferred (rules 1-4 of the module comment). */
export function responseObservations(msg: DnsMessage, timeSec: number): Observation[] {
  return observeResponse(msg, timeSec);
}

// --- Reading capture files -------------------------------------------------

/**
 * A window over a file read in LIMITS.sensorReadChunkBytes pieces, shared by
 * the pcap and dnstap readers. Callers test `avail` synchronously and await
 * fill() only when a record straddles the window's end, so a chunk's records
 * are walked without a promise per record. Bytes before `start` may be
 * overwritten by the next fill(): copy anything kept past it.
 */
export class ChunkedFile {
  buf: Buffer;
  /**
   * The same memory as a plain Uint8Array. Parsers get views of this one:
   * Buffer#slice returns a view where Uint8Array#slice copies, and DNS code
   * that slices rdata out of a message must get copies, not views of a
   * buffer the next read overwrites.
   */
  bytes: Uint8Array;
  /** Cursor into buf. */
  start = 0;
  /** End of valid bytes in buf. */
  end = 0;
  /** File offset of buf[0]. */
  private base = 0;
  eof = false;

  private constructor(private readonly fh: FileHandle, chunkBytes: number, private readonly ctx: IngestContext) {
    this.buf = Buffer.allocUnsafe(chunkBytes);
    this.bytes = new Uint8Array(this.buf.buffer, this.buf.byteOffset, this.buf.length);
  }

  static async open(file: string, ctx: IngestContext): Promise<ChunkedFile> {
    return new ChunkedFile(await open(file, 'r'), LIMITS.sensorReadChunkBytes, ctx);
  }

  get avail(): number {
    return this.end - this.start;
  }

  /** File offset of the cursor. */
  get offset(): number {
    return this.base + this.start;
  }

  /** Makes at least `need` bytes available at the cursor, unless the file ends first. */
  async fill(need: number): Promise<void> {
    if (this.avail >= need || this.eof) return;
    assert.ok(need <= LIMITS.sensorReadChunkBytes, 'records are bounded below the read chunk');
    if (this.start > 0) {
      this.buf.copyWithin(0, this.start, this.end);
      this.base += this.start;
      this.end -= this.start;
      this.start = 0;
    }
    while (this.end < need && !this.eof) {
      const { bytesRead } = await this.fh.read(this.buf, this.end, this.buf.length - this.end, this.base + this.end);
      if (bytesRead === 0) this.eof = true;
      this.end += bytesRead;
    }
    this.ctx.progress?.(this.base + this.end);
  }

  async close(): Promise<void> {
    await this.fh.close();
  }
}
