// Standing watches on the ClickHouse tier: the same watches, objects and
// stream as the local shards' (watch-hub.ts), fed by polling.
//
// Every LIMITS.watchClickhousePollMs, while a watch is open, one SELECT per
// target asks for every tuple whose aggregated first time is at or after
// `since` (watch-sql.ts): the earliest `since` of the open watches, but no
// further back than LIMITS.watchClickhouseLagSeconds. The feed remembers
// the tuples of that window it has seen (one map entry each, forgotten once
// the window has moved past them), so a tuple is new when a poll returns it
// for the first time: its first sighting over all data is what the tier
// aggregated, and the watches judge it against their own `since` and fence
// as on the local tier. The rows are matched as they stream in, a chunk at
// a time, against every watch's pattern at once (watch-patterns.ts
// IdPatterns, RE2.Sets, on this thread: a chunk is a few hundred rows), so
// what a poll costs does not grow with the number of watches; the watches'
// objects go out when the poll ends.
//
// Latency: a tuple reaches its watches at the first poll after the INSERT
// that made it visible, so within the poll interval plus the poll's own
// time, which grows with the flex tables (the GROUP BY reads every row; see
// README "Standing watches"). A tuple ingested more than the lag window
// after it was first seen is not found by polls (a catch-up finds it).
//
// A catch-up (time_first_after given) is one SELECT of the watch's own
// tuples, earliest first (watch-sql.ts). A poll or catch-up that fails
// (ClickHouse down, a timeout) ends the watches it served `failed`; clients
// resume from the last time_first they read.

import { errorCode, TIMEOUT_CODE, type ClickHouse, type RunningSelect } from '../../clickhouse/client.js';
import { tsvField } from '../../clickhouse/tab-separated.js';
import type { Tables } from '../../clickhouse/schema.js';
import { LIMITS } from '../../config/limits.js';
import { STREAM_MESSAGES } from '../../errors/catalogue.js';
import { nextTurn } from '../../lib/turns.js';
import type { FlexTarget } from '../../query/flex-query.js';
import type { Effective } from '../../query/params.js';
import type { WatchQuery } from '../../query/watch-query.js';
import type { BlobColumns } from '../../shard/blob.js';
import { catchUpKeep, compileWatch, WatchHub, type Watch, type WatchHubStats, type WatchTuple } from '../watch-hub.js';
import { IdPatterns } from '../watch-patterns.js';
import type { WatchPlan } from '../watch-stream.js';
import { watchCatchUpSql, watchPollSql } from './watch-sql.js';

/** A tuple row of watch-sql.ts as read. */
interface Row {
  type: number;
  first: number;
  last: number;
  hex: string | undefined;
  value: string;
}

function parseRow(target: FlexTarget, line: string): Row {
  const f = line.split('\t');
  const columns = target === 'rrnames' ? 4 : 5;
  if (f.length !== columns || !/^\d+$/.test(f[0]!)) throw new Error(`not a row of a watch's query: ${line.slice(0, 200)}`);
  return {
    type: Number(f[0]), first: Number(f[1]), last: Number(f[2]), hex: target === 'rdata' ? f[3] : undefined,
    value: tsvField(f[columns - 1]!),
  };
}

const tupleOf = (r: Row): WatchTuple => {
  const t: WatchTuple = { value: r.value, type: r.type, first: r.first, last: r.last };
  if (r.hex !== undefined) {
    const hex = r.hex;
    t.rawHex = () => hex;
  }
  return t;
};

/** Values as a blob (shard/blob.ts) the pattern sets can run over: printable ASCII, one per record. */
function blobOf(values: readonly string[]): BlobColumns {
  const offsets = new Uint32Array(values.length + 1);
  let at = 0;
  for (let i = 0; i < values.length; i++) {
    offsets[i] = at;
    at += values[i]!.length + 1;
  }
  offsets[values.length] = at;
  return { blob: Buffer.from(values.map((v) => `${v}\n`).join(''), 'latin1'), offsets };
}

/** What a failed SELECT means for the watches it served. */
const failureOf = (err: unknown): string =>
  (errorCode((err as Error).message) === TIMEOUT_CODE ? STREAM_MESSAGES.SCAN_TIMEOUT : STREAM_MESSAGES.INTERNAL);

export interface ClickHouseWatchStats extends WatchHubStats {
  polls: number;
  /** Rows polls read, tuples new to the feed, and those remembered now. */
  rows: number;
  tuples: number;
  remembered: number;
}

export class ClickHouseWatchFeed {
  readonly hub = new WatchHub();
  private readonly matchers = { rrnames: new IdPatterns(), rdata: new IdPatterns() };
  /** The tuples of the window seen so far ("type\0value"), by target. */
  private readonly seen = { rrnames: new Set<string>(), rdata: new Set<string>() };
  /** The same, by their first time, so that the window's moving on forgets them without a walk over all of them. */
  private readonly seenAt = { rrnames: new Map<number, string[]>(), rdata: new Map<number, string[]>() };
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private closed = false;
  private readonly running = new Set<RunningSelect>();
  private readonly counts = { polls: 0, rows: 0, tuples: 0 };

  constructor(private readonly ch: ClickHouse, private readonly tables: Tables, private readonly querySeconds: number) {}

  plan(q: WatchQuery, eff: Effective): WatchPlan {
    const compiled = compileWatch(q);
    if (compiled.error !== undefined) {
      // runWatch answers a bad pattern in-stream and opens nothing; nothing was reserved.
      return { error: compiled.error, open: () => Promise.reject(new Error(compiled.error)), cancel: () => undefined };
    }
    this.hub.reserve();
    let placed = true;
    return {
      error: undefined,
      open: (events) => {
        placed = false;
        const w = this.hub.create(q, eff.fence, eff.limit, compiled, events);
        this.hub.add(w);
        this.timer ??= setInterval(() => void this.poll(), LIMITS.watchClickhousePollMs).unref();
        if (w.catchingUp) void this.catchUp(w);
        return w;
      },
      cancel: () => {
        if (placed) this.hub.unreserve();
        placed = false;
      },
    };
  }

  /** One poll of each target some watch is open on; the watches' objects go out when it has read everything. */
  private async poll(): Promise<void> {
    if (this.polling || this.closed) return;
    if (this.hub.watches.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    this.polling = true;
    try {
      for (const target of ['rrnames', 'rdata'] as const) {
        if (this.hub.patterns[target].size > 0) await this.pollTarget(target);
      }
      this.counts.polls++;
      this.hub.commit();
    } catch (err) {
      // ClickHouse down, a timeout, a row of another shape: the watches end; their clients resume.
      this.hub.failAll(failureOf(err), err);
    } finally {
      this.polling = false;
    }
  }

  private async pollTarget(target: FlexTarget): Promise<void> {
    const registry = this.hub.patterns[target];
    const matcher = this.matchers[target];
    if (matcher.version !== registry.version) matcher.sync(registry.version, registry.list());
    // One set compiled per turn, as the local tier's thread would not need to.
    while (!matcher.index.prepare()) await nextTurn();
    const since = Math.max(this.hub.floor(target), Math.floor(Date.now() / 1000) - LIMITS.watchClickhouseLagSeconds);
    const seen = this.seen[target];
    const seenAt = this.seenAt[target];
    for (const [first, keys] of seenAt) {
      if (first >= since) continue;
      for (const k of keys) seen.delete(k);
      seenAt.delete(first);
    }
    await this.select(watchPollSql(target, since, this.tables), (lines) => this.take(target, lines));
  }

  /** A chunk of a poll's rows: the tuples not seen before, matched against every watch of `target`. */
  private take(target: FlexTarget, lines: readonly string[]): void {
    const seen = this.seen[target];
    const seenAt = this.seenAt[target];
    const byValue = new Map<string, Row[]>();
    for (const line of lines) {
      const r = parseRow(target, line);
      this.counts.rows++;
      const key = `${r.type}\u0000${r.value}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const at = seenAt.get(r.first);
      if (at === undefined) seenAt.set(r.first, [key]);
      else at.push(key);
      this.counts.tuples++;
      const rows = byValue.get(r.value);
      if (rows === undefined) byValue.set(r.value, [r]);
      else rows.push(r);
    }
    if (byValue.size === 0) return;
    const values = [...byValue.keys()];
    const cols = blobOf(values);
    const out = { records: [] as number[], starts: [] as number[], ids: [] as number[] };
    this.matchers[target].matchInto(cols, 0, values.length, () => true, out);
    out.starts.push(out.ids.length);
    const registry = this.hub.patterns[target];
    const watches: Watch[] = [];
    for (let k = 0; k < out.records.length; k++) {
      const rec = out.records[k]!;
      registry.watchesOf(out.ids, out.starts[k]!, out.starts[k + 1]!, watches);
      const record = cols.blob.subarray(cols.offsets[rec], cols.offsets[rec + 1]! - 1);
      const taking = watches.filter((w) => !w.excludes(record));
      if (taking.length === 0) continue;
      for (const r of byValue.get(values[rec]!)!) {
        const t = tupleOf(r);
        for (const w of taking) w.offer(t);
      }
    }
  }

  /** A watch's catch-up: its earliest tuples at or after its `since`, sorted, then what polls found meanwhile. */
  private async catchUp(w: Watch): Promise<void> {
    const keep = catchUpKeep(w);
    const rows: Row[] = [];
    try {
      await this.select(watchCatchUpSql(w.q, w.fence, keep, this.tables), (lines) => {
        for (const l of lines) rows.push(parseRow(w.target, l));
      });
    } catch (err) {
      w.fail(failureOf(err), err);
      return;
    }
    w.caughtUp(rows.slice(0, keep).map(tupleOf), rows.length > keep);
  }

  /** Runs a SELECT, handing its lines to `take` a chunk at a time; settles when it has ended. */
  private select(sql: string, take: (lines: string[]) => void): Promise<void> {
    return new Promise((resolve, reject) => {
      let failure: unknown;
      const running = this.ch.select(sql, {
        lines: (lines) => {
          try {
            take(lines);
          } catch (err) {
            failure = err;
            running.cancel();
            this.running.delete(running);
            reject(err);
            return false;
          }
          return true;
        },
        end: () => {
          this.running.delete(running);
          if (failure === undefined) resolve();
        },
        error: (err) => {
          this.running.delete(running);
          reject(err);
        },
      }, this.querySeconds);
      this.running.add(running);
    });
  }

  stats(): ClickHouseWatchStats {
    return { ...this.hub.stats(), ...this.counts, remembered: this.seen.rrnames.size + this.seen.rdata.size };
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    for (const r of this.running) r.cancel();
    for (const w of [...this.hub.watches]) w.close();
  }
}
