// ShardSpiller: the shards one writing run (an ingest, or one thread's part
// of it) builds from observations. Observations are aggregated in an
// RrsetTable; whenever it holds `memoryRrsets` RRsets it is written out as a
// shard file and replaced, so that budget, not the input, bounds memory.
// Nothing is visible to readers until publish() lists every file in ONE
// manifest swap; abort() deletes them instead.

import { mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { Observation } from '../model/observation.js';
import { SHARD_HEADER_BYTES } from './format.js';
import { IngestedMeanwhileError } from '../errors/catalogue.js';
import { boundLedger, ledgerOf, recordOnLast } from './ledger.js';
import { updateManifest, type InputRecord, type ShardEntry } from './manifest.js';
import { RrsetTable } from './rrset-table.js';
import { buildShard, writeShardFile } from './shard-writer.js';

/** A shard file an ingest run has written and not yet published. */
export interface WrittenShard {
  file: string;
  rrsets: number;
  bytes: number;
}

/**
 * Holds the aggregator of one run (or of one thread's part of a run) and the
 * shard files it has written but not yet published. publish() lists them all
 * in one manifest swap; abort() deletes them.
 */
export class ShardSpiller {
  private table = new RrsetTable();
  private readonly written: WrittenShard[] = [];
  records = 0;
  rrsets = 0;
  /** Observations added, before aggregation, over every table of the run. */
  observations = 0;
  /** Ledger records publish() forgot to keep the ledger in its bound, and the newest one's ingest time. */
  ledgerForgotten = { records: 0, newest: 0 };

  /** `writer`: the run's WriterLock id (file-lock.ts), taken by the thread that publishes. */
  constructor(private readonly dataDir: string, private readonly label: string, readonly now: number,
    readonly memoryRrsets: number, readonly writer: string) {
    mkdirSync(dataDir, { recursive: true });
  }

  async add(o: Observation): Promise<void> {
    this.records += o.rdata.length;
    this.observations++;
    this.table.add(o);
    if (this.table.size >= this.memoryRrsets) await this.spill();
  }

  /**
   * Adds without ever spilling, for a caller that publishes on its own
   * schedule (the live receiver, src/ingest/live/): returns the RRsets now
   * held, which that caller bounds.
   */
  hold(o: Observation): number {
    this.records += o.rdata.length;
    this.observations++;
    this.table.add(o);
    return this.table.size;
  }

  /** RRsets held in memory, not yet written. */
  get held(): number {
    return this.table.size;
  }

  async spill(): Promise<void> {
    if (this.table.size === 0) return;
    const { body, stats } = buildShard(this.table, this.label, this.now);
    this.table = new RrsetTable();
    const file = await writeShardFile(this.dataDir, body, this.now, this.writer);
    this.written.push({ file, rrsets: stats.rrsets, bytes: body.byteLength + SHARD_HEADER_BYTES });
    this.rrsets += stats.rrsets;
  }

  /**
   * spill() with the shard built and written by `write` instead of here (the
   * live receiver writes on a worker thread, so that building does not hold
   * the thread that reads its senders). `write` owns the table it is given.
   */
  async spillWith(write: (table: RrsetTable) => Promise<WrittenShard>): Promise<void> {
    if (this.table.size === 0) return;
    const table = this.table;
    this.table = new RrsetTable();
    const w = await write(table);
    this.written.push(w);
    this.rrsets += w.rrsets;
  }

  /**
   * Takes back the table a spillWith handed to a `write` that failed and
   * returned it (the live receiver's worker hands the memory back), so a
   * later spillWith or publish() writes those RRsets again. Only a spiller
   * that holds nothing else: the table may be one rebuilt from data(), which
   * cannot take more observations, so the caller adds nothing after this.
   */
  restore(table: RrsetTable): void {
    if (this.table.size !== 0) throw new Error('ShardSpiller.restore: the spiller already holds RRsets');
    this.table = table;
  }

  /** RRsets of this run not yet published: those held and those in written, unlisted shards. */
  get unpublished(): number {
    return this.table.size + this.written.reduce((n, w) => n + w.rrsets, 0);
  }

  /** Shards written by another thread for this run: published or deleted with this one's. */
  adopt(shards: readonly WrittenShard[], records: number, observations: number): void {
    for (const w of shards) {
      this.written.push(w);
      this.rrsets += w.rrsets;
    }
    this.records += records;
    this.observations += observations;
  }

  /** Deletes shard files written for this run by another thread that are not (and will not be) adopted. */
  async discard(shards: readonly WrittenShard[]): Promise<void> {
    for (const w of shards) await rm(path.join(this.dataDir, w.file), { force: true });
  }

  /** Writes what is held and returns every shard written, unpublished (the parallel ingest worker's end). */
  async close(): Promise<WrittenShard[]> {
    await this.spill();
    return this.written;
  }

  /**
   * Lists every shard written in one manifest swap, with `ledger.inputs`
   * recorded on the last (shard/ledger.ts). Unless `ledger.again`, throws
   * IngestedMeanwhileError, publishing nothing, when the manifest already
   * records one of those inputs (a run that published it since this one
   * looked). Sets `ledgerForgotten` to the records the ledger's bound dropped.
   */
  async publish(ledger?: { inputs: readonly InputRecord[]; again: boolean }): Promise<string[]> {
    await this.spill();
    if (this.written.length > 0) {
      await updateManifest(this.dataDir, (m) => {
        if (ledger !== undefined && !ledger.again) {
          const recorded = ledgerOf(m);
          for (const input of ledger.inputs) {
            const r = recorded.get(input.sha256);
            if (r !== undefined) throw new IngestedMeanwhileError(input.name, input.sha256, r.shard);
          }
        }
        const mine = this.written.map((w): ShardEntry => ({ ...w, createdAt: this.now, source: this.label }));
        const bounded = boundLedger([...m.shards, ...recordOnLast(mine, ledger?.inputs ?? [])]);
        this.ledgerForgotten = { records: bounded.forgotten, newest: bounded.newestForgotten ?? 0 };
        return bounded.shards;
      });
    }
    return this.written.map((w) => w.file);
  }

  async abort(): Promise<void> {
    await this.discard(this.written);
  }
}
