// An ingest run into ClickHouse: the same parsers as a run into shards
// (run.ts's sourceFor), each observation turned into rows of the four input
// tables (clickhouse/schema.ts; their Distributed tables when init made
// them for a cluster), sent as RowBinary in large INSERTs, at most
// LIMITS.clickhouseInsertRowsMax observations or clickhouseInsertBytesMax
// bytes each, one INSERT per table in flight at a time: parsing waits for
// ClickHouse, so memory stays bounded by one batch.
//
// The engine aggregates (schema.ts), so there is nothing to publish: rows
// are visible when their INSERT returns. A run that fails part way leaves the
// batches it sent (unlike a shard run, which publishes nothing). The input
// ledger (clickhouse/ledger.ts) records each file as started before its
// first batch and done after its last, so a file given again is skipped once
// done, and refused when an earlier run began it and never finished.

import { createHash } from 'node:crypto';
import { LIMITS } from '../config/limits.js';
import { ClickHouse } from '../clickhouse/client.js';
import { RowBinaryWriter } from '../clickhouse/row-binary.js';
import { RDATA_KIND, type InputTable, type Tables } from '../clickhouse/schema.js';
import { findTables } from '../clickhouse/tables.js';
import { reverseName } from '../dns/name.js';
import { rdataTargetName } from '../dns/rdata-names.js';
import { isFlexRdataType, RR } from '../dns/rrtype.js';
import type { Observation, Rdata } from '../model/observation.js';
import { firstSeen, lastSeen } from '../model/sighting.js';
import { ClickHouseLedger, type LedgerState } from '../clickhouse/ledger.js';
import type { InputRecord } from '../shard/manifest.js';
import { RunInputs, sourceFor, type FileRunOptions, type IngestSummary, type LedgerVerdict } from './run.js';

export interface ClickHouseIngestOptions extends FileRunOptions {
  url: string;
  database: string;
}

const TABLES: readonly InputTable[] = ['rrsets_in', 'flex_names_in', 'flex_rdata_in', 'rdata_index_in'];

/** The 16-byte key of an A or AAAA record: IPv6 as it is, IPv4 mapped (::ffff:a.b.c.d), so one byte order ranges both. */
function ipKey(rrtype: number, wire: Uint8Array): Uint8Array | undefined {
  if (rrtype === RR.AAAA && wire.length === 16) return wire;
  if (rrtype !== RR.A || wire.length !== 4) return undefined;
  const key = new Uint8Array(16);
  key[10] = 0xff;
  key[11] = 0xff;
  key.set(wire, 12);
  return key;
}

/** An RRset's records by wire form, duplicates dropped: the shard writer's order (shard/rrset-table.ts). */
function canonicalRdata(rdata: readonly Rdata[]): Rdata[] {
  const sorted = [...rdata].sort((a, b) => Buffer.compare(a.wire, b.wire));
  return sorted.filter((r, i) => i === 0 || Buffer.compare(r.wire, sorted[i - 1]!.wire) !== 0);
}

/** An RRset's record set as 64 bits (md5 of the length-prefixed wire forms): tells RRsets of one owner, type and bailiwick apart. */
function rrsetDigest(rdata: readonly Rdata[]): bigint {
  const h = createHash('md5');
  for (const r of rdata) h.update(Uint8Array.of(r.wire.length >> 8, r.wire.length & 255)).update(r.wire);
  return h.digest().readBigUInt64LE(0);
}

/** The rows one observation adds, in the input tables' column order (schema.ts INPUT_COLUMNS). */
export class ObservationRows {
  readonly writers: Record<InputTable, RowBinaryWriter> = {
    rrsets_in: new RowBinaryWriter(), flex_names_in: new RowBinaryWriter(),
    flex_rdata_in: new RowBinaryWriter(), rdata_index_in: new RowBinaryWriter(),
  };
  observations = 0;

  get bytes(): number {
    return TABLES.reduce((n, t) => n + this.writers[t].bytes, 0);
  }

  add(o: Observation): void {
    const w = this.writers;
    const rdata = canonicalRdata(o.rdata);
    const first = firstSeen(o), last = lastSeen(o);
    const reversed = reverseName(o.rrname);
    const texts = rdata.map((r) => r.text);
    let rrsetId = 0n;
    w.rrsets_in.string(reversed).string(o.rrname).uint16(o.rrtype).string(o.bailiwick)
      .strings(texts).strings(rdata.map((r) => r.wire))
      .uint64(o.count).uint32(o.timeFirst).uint32(o.timeLast).uint32(o.zoneTimeFirst).uint32(o.zoneTimeLast).row();
    w.flex_names_in.string(o.rrname).uint16(o.rrtype).uint32(first).uint32(last).row();
    for (const r of rdata) {
      if (isFlexRdataType(o.rrtype)) w.flex_rdata_in.string(r.text).uint16(o.rrtype).string(r.wire).uint32(first).uint32(last).row();
      const target = rdataTargetName(o.rrtype, r.text)?.toLowerCase();
      const ip = target === undefined ? ipKey(o.rrtype, r.wire) : undefined;
      if (target === undefined && ip === undefined) continue;
      if (rrsetId === 0n) rrsetId = rrsetDigest(rdata);
      w.rdata_index_in.uint8(target !== undefined ? RDATA_KIND.NAME : RDATA_KIND.IP)
        .string(target !== undefined ? reverseName(target) : ip!).uint16(o.rrtype).string(reversed).string(o.rrname)
        .string(target ?? '').string(r.text).string(r.wire).string(o.bailiwick).uint64(rrsetId).strings(texts)
        .uint64(o.count).uint32(o.timeFirst).uint32(o.timeLast).uint32(o.zoneTimeFirst).uint32(o.zoneTimeLast).row();
    }
    this.observations++;
  }

  get full(): boolean {
    return this.observations >= LIMITS.clickhouseInsertRowsMax || this.bytes >= LIMITS.clickhouseInsertBytesMax;
  }

  /** Sends the rows so far, one INSERT per table that has any. */
  async flush(ch: ClickHouse, tables: Tables): Promise<void> {
    for (const t of TABLES) {
      const w = this.writers[t];
      if (w.rows > 0) await ch.insertRowBinary(tables.inputs[t], w.take(), tables.distributed);
    }
    this.observations = 0;
  }
}

export async function ingestFilesToClickHouse(files: readonly string[], opts: ClickHouseIngestOptions): Promise<IngestSummary> {
  const started = performance.now();
  const ch = new ClickHouse(opts.url);
  const inputs = await RunInputs.open(files, opts, Math.floor(Date.now() / 1000));
  let observations = 0;
  const rows = new ObservationRows();
  try {
    const tables = await findTables(ch, opts.database);
    const ledger = await ClickHouseLedger.open(ch, opts.database);
    // A file admitted is recorded as started here, before its first batch.
    const check = async (input: InputRecord, again: boolean): Promise<LedgerVerdict> => {
      const v = again ? { kind: 'ingest' as const } : verdict(await ledger.state(input.sha256), opts.database);
      if (v.kind !== 'ingest') return v;
      await ledger.started(input);
      if (again || await ledger.claim(input)) return v;
      return { kind: 'skip', where: `being ingested into ClickHouse database ${opts.database} by another run` };
    };
    await inputs.forEach(check, async (file, format, ctx) => {
      for await (const o of sourceFor(format, file, ctx, { ...opts, dataDir: '' })) {
        rows.add(o);
        observations++;
        if (rows.full) await rows.flush(ch, tables);
      }
      // The file's last batch goes now, not with the next file's rows: `done` must follow it.
      await rows.flush(ch, tables);
    }, (input) => ledger.done(input));
  } finally {
    ch.close();
  }
  return {
    files: files.length, records: observations, observations, rrsets: observations, rejected: inputs.rejected,
    skipped: inputs.skipped, refused: inputs.refused, forgotten: { records: 0, newest: 0 }, shards: [],
    seconds: (performance.now() - started) / 1000,
  };
}

/** What the ledger's latest run of a file means for this run (ledger.ts). */
function verdict(state: LedgerState | undefined, database: string): LedgerVerdict {
  if (state === undefined) return { kind: 'ingest' };
  const when = new Date(state.at).toISOString();
  if (state.state === 'done') return { kind: 'skip', where: `ClickHouse database ${database}, ${when}` };
  return {
    kind: 'refuse',
    reason: `an ingest of it into ClickHouse started at ${when} and has not finished (it died, or still runs), so some of its ` +
      'rows may be there (refused: sending it again would count those twice); give --again to ingest it anyway, or leave it out',
  };
}
