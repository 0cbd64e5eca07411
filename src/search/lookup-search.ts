// Standard search: rrset and rdata lookups and their summaries, over the
// snapshot's shards, on the front-end thread.
//
// These are index lookups (binary search on sorted blobs and address keys),
// so their cost follows what they return, not the data set: an exact name is
// a few dozen comparisons per shard. They run here rather than in the pool;
// the pump yields its turn (turns.ts) every `rowsPerSlice` rows and waits
// while the socket is full, so a large wildcard cannot starve other clients.
//
// Order: each shard yields rows sorted by a key (index key, then the RRset's
// own sort key), the shards are merged (merge.ts), and with aggr (the
// default) rows with equal keys from several shards are summed into one.
// Offsets are therefore stable while the data is unchanged.

import { reverseName } from '../dns/name.js';
import { rrtypeToText } from '../dns/rrtype.js';
import { inFence, keepType } from '../model/filters.js';
import { STREAM_MESSAGES } from '../errors/catalogue.js';
import { minNonZero } from '../model/sighting.js';
import { nextTurn } from '../lib/turns.js';
import type { LookupQuery, NameMatch } from '../query/lookup-query.js';
import type { SafWriter } from '../server/saf-writer.js';
import { findExact, isOneLabel, prefixRange } from '../shard/blob.js';
import { ShardReader } from '../shard/shard-reader.js';
import { mergeSorted } from '../lib/merge.js';
import { jsonString } from '../render/json-text.js';
import type { TimeFence } from '../model/filters.js';

/** One result row before aggregation: an RRset, or one record of an RRset (rdata lookups). */
interface Row {
  readonly key: string;
  readonly shard: ShardReader;
  readonly rrset: number;
  /** Rdata row for rdata lookups; -1 for rrset lookups. */
  readonly rdata: number;
}

/**
 * An rrset lookup's row. Its key (owner, then the RRset's sort key) is
 * built only if the merge compares it: an exact name held by one shard
 * never needs it, and building it was a third of that lookup's cost.
 */
class RrsetRow implements Row {
  readonly rdata = -1;
  private built: string | undefined;

  constructor(readonly shard: ShardReader, readonly rrset: number, private readonly keyName: string) {}

  get key(): string {
    return (this.built ??= `${this.keyName}\u0001${rrsetTail(this.shard, this.rrset)}`);
  }
}

interface Totals {
  count: number;
  timeFirst: number;
  timeLast: number;
  zoneTimeFirst: number;
  zoneTimeLast: number;
}

const rowsPerSlice = 512;

function passes(s: ShardReader, i: number, q: LookupQuery, fence: TimeFence, bailiwickId: number): boolean {
  const rs = s.rrsets;
  if (!keepType(q.typeFilter, rs.rrtype[i]!)) return false;
  if (bailiwickId >= 0 && rs.bailiwick[i] !== bailiwickId) return false;
  return inFence(minNonZero(rs.timeFirst[i]!, rs.zoneTimeFirst[i]!), Math.max(rs.timeLast[i]!, rs.zoneTimeLast[i]!), fence);
}

/** The RRset's sort key after its owner (see shard-rrsets.ts rrsetSortKey). */
function rrsetTail(s: ShardReader, i: number): string {
  const rs = s.rrsets;
  let k = `${rs.rrtype[i]!.toString(16).padStart(4, '0')}\u0001${ShardReader.record(s.bailiwicks, rs.bailiwick[i]!)}`;
  for (let j = rs.rdataStarts[i]!; j < rs.rdataStarts[i + 1]!; j++) k += `\u0001${ShardReader.record(s.rdata.text, rs.rdataRows[j]!)}`;
  return k;
}

/** Owners matching a name, as [owner row, key name] in key order. */
function* matchingOwners(s: ShardReader, m: NameMatch): Generator<[number, string]> {
  switch (m.mode) {
    case 'exact': {
      const o = findExact(s.owners, reverseName(m.name));
      if (o >= 0) yield [o, ShardReader.record(s.owners, o)];
      return;
    }
    case 'under':
    case 'one-under': {
      const p = m.name === '.' ? '' : reverseName(m.name);
      const [from, to] = prefixRange(s.owners, p);
      for (let o = from; o < to; o++) {
        const rev = ShardReader.record(s.owners, o);
        if (m.mode === 'one-under' && !isOneLabel(rev.slice(p.length))) continue;
        yield [o, rev];
      }
      return;
    }
    case 'starts':
    case 'one-more': {
      const fn = s.flexNames;
      const [from, to] = prefixRange(fn, m.prefix);
      for (let k = from; k < to; k++) {
        const fwd = ShardReader.record(fn, k);
        if (m.mode === 'one-more' && !isOneLabel(fwd.slice(m.prefix.length))) continue;
        yield [fn.link[k]!, fwd];
      }
    }
  }
}

function* rrsetRows(s: ShardReader, q: LookupQuery, fence: TimeFence): Generator<Row> {
  if (q.value.kind !== 'name') return;
  const bailiwickId = q.bailiwick === undefined ? -1 : findExact(s.bailiwicks, q.bailiwick);
  if (q.bailiwick !== undefined && bailiwickId < 0) return;
  for (const [o, keyName] of matchingOwners(s, q.value.match)) {
    for (let i = s.ownerStarts[o]!; i < s.ownerStarts[o + 1]!; i++) {
      if (passes(s, i, q, fence, bailiwickId)) yield new RrsetRow(s, i, keyName);
    }
  }
}

/** Rdata rows matching the value, as [rdata row, index key], in key order. */
function* matchingRdata(s: ShardReader, q: LookupQuery): Generator<[number, string]> {
  const ix = s.index;
  const v = q.value;
  if (v.kind === 'ip') {
    if (v.family === 4) {
      const lo = Buffer.from(v.low).readUInt32BE(0), hi = Buffer.from(v.high).readUInt32BE(0);
      let a = 0, b = ix.ip4Keys.length;
      while (a < b) { const mid = (a + b) >>> 1; if (ix.ip4Keys[mid]! < lo) a = mid + 1; else b = mid; }
      for (let k = a; k < ix.ip4Keys.length && ix.ip4Keys[k]! <= hi; k++) {
        yield [ix.ip4Rdata[k]!, ix.ip4Keys[k]!.toString(16).padStart(8, '0')];
      }
    } else {
      const n = ix.ip6Rdata.length;
      const key = (k: number) => Buffer.from(ix.ip6Keys.buffer, ix.ip6Keys.byteOffset + k * 16, 16);
      let a = 0, b = n;
      while (a < b) { const mid = (a + b) >>> 1; if (Buffer.compare(key(mid), v.low) < 0) a = mid + 1; else b = mid; }
      for (let k = a; k < n && Buffer.compare(key(k), v.high) <= 0; k++) yield [ix.ip6Rdata[k]!, key(k).toString('hex')];
    }
    return;
  }
  if (v.kind === 'raw') {
    const want = Buffer.from(v.wire);
    const order = ix.wireOrder;
    const wireOf = (k: number) => Buffer.from(s.rdataWire(order[k]!));
    let a = 0, b = order.length;
    while (a < b) { const mid = (a + b) >>> 1; if (Buffer.compare(wireOf(mid), want) < 0) a = mid + 1; else b = mid; }
    for (let k = a; k < order.length && Buffer.compare(wireOf(k), want) === 0; k++) yield [order[k]!, want.toString('hex')];
    return;
  }
  // Names inside rdata: the reversed-key index for exact and left-hand
  // matches, its forward order for right-hand ones.
  const keys = ix.nameKeys;
  const emitKey = function* (k: number, keyText: string): Generator<[number, string]> {
    // Several records (NS x., MX 10 x., ...) may share a name; order them by type and text.
    const rows = Array.from(ix.nameRdata.subarray(ix.nameStarts[k]!, ix.nameStarts[k + 1]!));
    rows.sort((a, b) => s.rdata.rrtype[a]! - s.rdata.rrtype[b]! ||
      (ShardReader.record(s.rdata.text, a) < ShardReader.record(s.rdata.text, b) ? -1 : 1));
    for (const r of rows) yield [r, keyText];
  };
  const m = v.match;
  if (m.mode === 'exact') {
    const k = findExact(keys, reverseName(m.name));
    if (k >= 0) yield* emitKey(k, ShardReader.record(keys, k));
  } else if (m.mode === 'under' || m.mode === 'one-under') {
    const p = m.name === '.' ? '' : reverseName(m.name);
    const [from, to] = prefixRange(keys, p);
    for (let k = from; k < to; k++) {
      const rev = ShardReader.record(keys, k);
      if (m.mode === 'one-under' && !isOneLabel(rev.slice(p.length))) continue;
      yield* emitKey(k, rev);
    }
  } else {
    const order = ix.nameFwdOrder;
    const fwdOf = (j: number) => reverseName(ShardReader.record(keys, order[j]!));
    let a = 0, b = order.length;
    while (a < b) { const mid = (a + b) >>> 1; if (fwdOf(mid) < m.prefix) a = mid + 1; else b = mid; }
    for (let j = a; j < order.length; j++) {
      const fwd = fwdOf(j);
      if (!fwd.startsWith(m.prefix)) break;
      if (m.mode === 'one-more' && !isOneLabel(fwd.slice(m.prefix.length))) continue;
      yield* emitKey(order[j]!, fwd);
    }
  }
}

function* rdataRows(s: ShardReader, q: LookupQuery, fence: TimeFence): Generator<Row> {
  for (const [r, indexKey] of matchingRdata(s, q)) {
    const t = s.rdata.rrtype[r]!;
    if (!keepType(q.typeFilter, t)) continue;
    const text = ShardReader.record(s.rdata.text, r);
    for (let j = s.rdata.rrsetStarts[r]!; j < s.rdata.rrsetStarts[r + 1]!; j++) {
      const i = s.rdata.rrsetRows[j]!;
      if (!passes(s, i, q, fence, -1)) continue;
      const owner = ownerOf(s, i);
      yield { key: `${indexKey}\u0001${t.toString(16).padStart(4, '0')}\u0001${text}\u0001${owner}`, shard: s, rrset: i, rdata: r };
    }
  }
}

/** Reversed owner of RRset row i (binary search in owner_starts). */
function ownerOf(s: ShardReader, i: number): string {
  const starts = s.ownerStarts;
  let a = 0, b = starts.length - 1;
  while (b - a > 1) { const mid = (a + b) >>> 1; if (starts[mid]! <= i) a = mid; else b = mid; }
  return ShardReader.record(s.owners, a);
}

const emptyTotals = (): Totals => ({ count: 0, timeFirst: 0, timeLast: 0, zoneTimeFirst: 0, zoneTimeLast: 0 });

/** Adds rows' counts and widens the times; returns `t`. */
function accumulate(t: Totals, rows: readonly Row[]): Totals {
  for (const r of rows) {
    const rs = r.shard.rrsets;
    t.count += rs.count[r.rrset]!;
    t.timeFirst = minNonZero(t.timeFirst, rs.timeFirst[r.rrset]!);
    t.timeLast = Math.max(t.timeLast, rs.timeLast[r.rrset]!);
    t.zoneTimeFirst = minNonZero(t.zoneTimeFirst, rs.zoneTimeFirst[r.rrset]!);
    t.zoneTimeLast = Math.max(t.zoneTimeLast, rs.zoneTimeLast[r.rrset]!);
  }
  return t;
}

/** A time as JSON: epoch seconds, or with humantime an RFC 3339 UTC string. */
function timeJson(t: number, human: boolean): string {
  return human ? `"${new Date(t * 1000).toISOString().replace('.000Z', 'Z')}"` : String(t);
}

/** The time members present, each with its leading comma, in compat.md's order. */
function timeMembers(t: Totals, human: boolean): string {
  let m = '';
  if (t.timeFirst !== 0) m += `,"time_first":${timeJson(t.timeFirst, human)}`;
  if (t.timeLast !== 0) m += `,"time_last":${timeJson(t.timeLast, human)}`;
  if (t.zoneTimeFirst !== 0) m += `,"zone_time_first":${timeJson(t.zoneTimeFirst, human)}`;
  if (t.zoneTimeLast !== 0) m += `,"zone_time_last":${timeJson(t.zoneTimeLast, human)}`;
  return m;
}

/**
 * One result line (compat.md "Result objects (standard search)"), written
 * out directly: building the object, spreading its optional members and
 * JSON.stringify cost a small lookup more than its search.
 */
function resultLine(rows: readonly Row[], q: LookupQuery): string {
  const r = rows[0]!;
  const s = r.shard;
  const rs = s.rrsets;
  const t = accumulate(emptyTotals(), rows);
  const head = `{"obj":{"count":${t.count}${timeMembers(t, q.humantime)},"rrname":${jsonString(reverseName(ownerOf(s, r.rrset)))},` +
    `"rrtype":"${rrtypeToText(rs.rrtype[r.rrset]!)}"`;
  if (r.rdata >= 0) return `${head},"rdata":${jsonString(ShardReader.record(s.rdata.text, r.rdata))}}}`;
  const bailiwick = ShardReader.record(s.bailiwicks, rs.bailiwick[r.rrset]!);
  let rdata = '';
  for (let j = rs.rdataStarts[r.rrset]!; j < rs.rdataStarts[r.rrset + 1]!; j++) {
    rdata += (rdata === '' ? '' : ',') + jsonString(ShardReader.record(s.rdata.text, rs.rdataRows[j]!));
  }
  return `${head}${bailiwick === '' ? '' : `,"bailiwick":${jsonString(bailiwick)}`},"rdata":[${rdata}]}}`;
}

/**
 * Joins consecutive groups with the same key. Within one shard, rdata rows
 * of several RRsets can share a key (one record seen in RRsets of different
 * bailiwicks or compositions); they are one result, as across shards.
 */
function* coalesce(groups: Generator<Row[]>): Generator<Row[]> {
  let held: Row[] | undefined;
  for (const g of groups) {
    if (held && held[0]!.key === g[0]!.key) held.push(...g);
    else {
      if (held) yield held;
      held = g;
    }
  }
  if (held) yield held;
}

export interface LookupOutcome {
  results: number;
  terminator: 'succeeded' | 'limited' | 'failed';
}


export async function runLookup(q: LookupQuery, eff: { limit: number; offset: number; fence: TimeFence },
  shards: readonly ShardReader[], out: SafWriter): Promise<LookupOutcome> {
  const perShard = shards.map((s) => (q.target === 'rrset' ? rrsetRows(s, q, eff.fence) : rdataRows(s, q, eff.fence)));
  // A shard holds each RRset once, so only rdata rows share keys within a shard.
  const groups = q.target === 'rrset' ? mergeSorted<Row>(perShard) : coalesce(mergeSorted(perShard));
  // aggr=false: every shard's row stands alone (one row per observation batch).
  const results: Generator<Row[]> = q.aggr ? groups : (function* () { for (const g of groups) for (const r of g) yield [r]; })();

  if (q.summarize) {
    const t = emptyTotals();
    let n = 0;
    let limited = false;
    for (const g of results) {
      if (n >= eff.limit || (q.maxCount !== undefined && t.count >= q.maxCount)) { limited = true; break; }
      accumulate(t, g);
      n++;
      if ((n & (rowsPerSlice - 1)) === 0) {
        await nextTurn();
        if (out.aborted) return { results: n, terminator: 'failed' };
      }
    }
    out.line(`{"obj":{"count":${t.count},"num_results":${n}${timeMembers(t, q.humantime)}}}`);
    if (limited) out.limited(STREAM_MESSAGES.LIMITED);
    else out.succeeded();
    return { results: n, terminator: limited ? 'limited' : 'succeeded' };
  }

  let skipped = 0;
  let emitted = 0;
  let slice = 0;
  for (const g of results) {
    if (skipped < eff.offset) { skipped++; continue; }
    if (emitted >= eff.limit) {
      out.limited(STREAM_MESSAGES.LIMITED);
      return { results: emitted, terminator: 'limited' };
    }
    out.line(resultLine(g, q));
    emitted++;
    if (++slice >= rowsPerSlice || !out.writable) {
      slice = 0;
      out.flush();
      await out.whenWritable();
      await nextTurn();
      if (out.aborted) return { results: emitted, terminator: 'failed' };
    }
  }
  if (emitted === 0) out.succeeded(STREAM_MESSAGES.NO_RESULTS);
  else out.succeeded();
  return { results: emitted, terminator: 'succeeded' };
}
