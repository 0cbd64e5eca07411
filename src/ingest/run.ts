// An ingest run: source files in, new shards published, or nothing at all.
//
// Each file is read by its source parser (zone, pcap, dnstap, ndjson) and
// every observation goes to a ShardSpiller (shard/shard-spiller.ts), whose
// --memory-rrsets budget, not the input size, bounds peak memory. The shard
// files are published in ONE manifest swap at the end; a run that fails (too many bad records, a
// full disk, a crash) leaves the published data exactly as it was and
// deletes its unpublished files.

import { existsSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import { LIMITS } from '../config/limits.js';
import { WriterLock } from '../shard/file-lock.js';
import { ShardSpiller, type WrittenShard } from '../shard/shard-spiller.js';
import { readManifest, removeLeftovers, type InputRecord } from '../shard/manifest.js';
import { ledgerOf, type Recorded } from '../shard/ledger.js';
import { digestFile, type FileDigest } from '../lib/file-digest.js';
import type { Observation } from '../model/observation.js';
import type { IngestContext } from './context.js';
import { zoneObservations, type ZoneOptions } from './zone.js';
import { pcapObservations } from './pcap/index.js';
import { dnstapObservations } from './dnstap.js';
import { ndjsonObservations } from './ndjson.js';
import { ingestNdjsonParallel } from './parallel.js';
import { threadsFor } from '../lib/threads.js';

export type SourceFormat = 'zone' | 'pcap' | 'dnstap' | 'ndjson';
export const SOURCE_FORMATS: readonly SourceFormat[] = ['zone', 'pcap', 'dnstap', 'ndjson'];

export interface IngestOptions {
  dataDir: string;
  format: SourceFormat | 'auto';
  origin?: string;
  observedAt?: number;
  /** --include-root: directories besides each zone file's own that its $INCLUDEs may read (zone.ts). */
  includeRoots?: readonly string[];
  /** Bad records skipped and counted before the run fails (--max-errors). */
  maxErrors: number;
  /** RRsets held in memory before spilling a shard (--memory-rrsets). */
  memoryRrsets?: number;
  /** Progress callback: bytes read so far across all files, total bytes. */
  onProgress?: (done: number, total: number) => void;
  /** Called for each rejected record that was skipped. */
  onReject?: (err: Error) => void;
  /** Threads for a big NDJSON file (--workers; default one per core). */
  threads?: number;
  /** NDJSON files from this size up are ingested in parallel (LIMITS.ndjsonParallelBytesMin; tests lower it). */
  parallelBytesMin?: number;
  now?: number;
  /** --again: ingest every file given, even one the input ledger records (and one given twice). */
  again?: boolean;
  /** Called for each file that is not ingested because the ledger records it (or this run has it already). */
  onSkip?: (skip: SkippedInput) => void;
}

/** The options of a run of input files that every target takes (ingest-target.ts): what to read and how, not where to write. */
export type FileRunOptions = Omit<IngestOptions, 'dataDir' | 'memoryRrsets' | 'threads' | 'parallelBytesMin'>;

/** A file the input ledger says was ingested already. */
export interface SkippedInput {
  file: string;
  sha256: string;
  /** Where it is recorded: "shard S", "earlier in this run as F", a ClickHouse ledger's words. */
  where: string;
}

/** The line `rrscan ingest` prints for a skipped file (one copy for both tiers). */
export function skippedLine(s: SkippedInput): string {
  return `${s.file}: already ingested (sha256 ${s.sha256.slice(0, 12)}…, ${s.where}); skipped`;
}

/**
 * What a tier's ledger says of a file before it is read: ingest it, skip it
 * (already ingested), or refuse it (ClickHouse: an earlier run began it and
 * did not finish; the run goes on with the other files and fails at the end).
 */
export type LedgerVerdict = { kind: 'ingest' } | { kind: 'skip'; where: string } | { kind: 'refuse'; reason: string };

export interface IngestSummary {
  files: number;
  records: number;
  observations: number;
  rrsets: number;
  rejected: number;
  /** Files not ingested because the input ledger records them. */
  skipped: number;
  /** Files refused (ClickHouse: an earlier ingest of them did not finish), with why. */
  refused: string[];
  /** Ledger records forgotten to keep it within LIMITS.ledgerInputsMax, and the newest one's ingest time. */
  forgotten: { records: number; newest: number };
  shards: string[];
  seconds: number;
}

/** Detects a file's format from its first bytes. */
export async function detectFormat(file: string): Promise<SourceFormat> {
  const fh = await open(file, 'r');
  try {
    const head = Buffer.alloc(64);
    const { bytesRead } = await fh.read(head, 0, 64, 0);
    const b = head.subarray(0, bytesRead);
    if (b.length >= 4) {
      const magic = b.readUInt32LE(0);
      if ([0xa1b2c3d4, 0xd4c3b2a1, 0xa1b23c4d, 0x4d3cb2a1, 0x0a0d0d0a].includes(magic)) return 'pcap';
      // Frame Streams: a data-frame length of 0 escapes a control frame.
      if (magic === 0 && b.length >= 12) return 'dnstap';
    }
    const text = b.toString('latin1').trimStart();
    if (text.startsWith('{')) return 'ndjson';
    return 'zone';
  } finally {
    await fh.close();
  }
}

/** The observations of one file, by its format's parser. */
export function sourceFor(format: SourceFormat, file: string, ctx: IngestContext, opts: IngestOptions): AsyncIterable<Observation> {
  switch (format) {
    case 'zone': {
      const zoneOpts: ZoneOptions = {
        ...(opts.origin !== undefined ? { origin: opts.origin } : {}),
        ...(opts.observedAt !== undefined ? { observedAt: opts.observedAt } : {}),
        ...(opts.includeRoots !== undefined ? { includeRoots: opts.includeRoots } : {}),
      };
      return zoneObservations(file, ctx, zoneOpts);
    }
    case 'pcap': return pcapObservations(file, ctx);
    case 'dnstap': return dnstapObservations(file, ctx);
    case 'ndjson': return ndjsonObservations(file, ctx);
  }
}

/**
 * One writing run: `fill` adds observations to a fresh ShardSpiller, and
 * everything it wrote is published in one manifest swap, or deleted if
 * anything failed; the run holds its WriterLock throughout.
 */
async function publishRun(dataDir: string, label: string, now: number, memoryRrsets: number,
  fill: (spiller: ShardSpiller) => Promise<void>, ledger?: { inputs: readonly InputRecord[]; again: boolean }):
Promise<{ spiller: ShardSpiller; shards: string[] }> {
  const writer = WriterLock.acquire(dataDir);
  const spiller = new ShardSpiller(dataDir, label, now, Math.min(memoryRrsets, LIMITS.shardRrsetsMax), writer.id);
  try {
    await fill(spiller);
    return { spiller, shards: await spiller.publish(ledger) };
  } catch (err) {
    await spiller.abort();
    throw err;
  } finally {
    writer.release();
  }
}

type InputOptions = Pick<IngestOptions, 'format' | 'maxErrors' | 'onProgress' | 'onReject' | 'again' | 'onSkip'>;

/**
 * The input files of one run, in order: each one's format, and a context
 * that counts skipped records against --max-errors (across all the files)
 * and reports progress in bytes over all of them; and the input ledger's
 * rules: each file is hashed before it is read, skipped when the tier's
 * ledger records its digest or an earlier file of the run had the same
 * bytes (unless --again), and refused when the ledger says so. One copy of
 * these rules for every place ingest writes to (shards, ClickHouse).
 */
export class RunInputs {
  rejected = 0;
  skipped = 0;
  readonly refused: string[] = [];
  /** The files read, one record per digest: what the run's ledger records. */
  readonly ingested: InputRecord[] = [];
  private done = 0;

  private constructor(readonly files: readonly string[], readonly sizes: readonly number[], readonly totalBytes: number,
    private readonly opts: InputOptions, private readonly now: number) {}

  static async open(files: readonly string[], opts: InputOptions, now: number): Promise<RunInputs> {
    const sizes = await Promise.all(files.map(async (f) => (await stat(f)).size));
    return new RunInputs(files, sizes, sizes.reduce((a, b) => a + b, 0), opts, now);
  }

  /**
   * Calls `read` for each file in turn that `check` (the tier's ledger; told
   * whether --again was given) and this run admit, with its format, context
   * and ledger record, then `finished` once the file is known unchanged
   * since it was hashed; progress moves past the file then, or when it is
   * skipped.
   */
  async forEach(check: (input: InputRecord, again: boolean) => Promise<LedgerVerdict>,
    read: (file: string, format: SourceFormat, ctx: IngestContext, input: InputRecord) => Promise<void>,
    finished: (input: InputRecord) => Promise<void> = () => Promise.resolve()): Promise<void> {
    const opts = this.opts;
    const inRun = new Map<string, string>();
    for (let i = 0; i < this.files.length; i++) {
      const file = this.files[i]!;
      const digest = await digestFile(file);
      const input: InputRecord = { sha256: digest.sha256, name: path.resolve(file).slice(0, LIMITS.ledgerNameCharsMax),
        bytes: digest.bytes, at: this.now };
      const earlier = inRun.get(input.sha256);
      const again = opts.again ?? false;
      const verdict: LedgerVerdict = earlier !== undefined && !again ? { kind: 'skip', where: `earlier in this run as ${earlier}` }
        : await check(input, again);
      if (verdict.kind === 'ingest') {
        await this.readOne(file, input, digest, read);
        await finished(input);
        if (earlier === undefined) this.ingested.push(input);
        inRun.set(input.sha256, file);
      } else if (verdict.kind === 'skip') {
        this.skipped++;
        opts.onSkip?.({ file, sha256: input.sha256, where: verdict.where });
      } else {
        this.refused.push(`${file}: ${verdict.reason}`);
      }
      this.done += this.sizes[i]!;
      opts.onProgress?.(this.done, this.totalBytes);
    }
  }

  private async readOne(file: string, input: InputRecord, digest: FileDigest,
    read: (file: string, format: SourceFormat, ctx: IngestContext, input: InputRecord) => Promise<void>): Promise<void> {
    const opts = this.opts;
    const format = opts.format === 'auto' ? await detectFormat(file) : opts.format;
    const base = this.done;
    const ctx: IngestContext = {
      file,
      reject: (err: Error) => {
        this.rejected++;
        if (this.rejected > opts.maxErrors) throw err;
        opts.onReject?.(err);
      },
      progress: (bytes: number) => opts.onProgress?.(base + bytes, this.totalBytes),
    };
    await read(file, format, ctx, input);
    // The digest must name the bytes that were read: a file written to meanwhile (a capture still
    // growing) would be recorded as content it did not have.
    const now = await stat(file);
    if (now.size !== digest.bytes || now.mtimeMs !== digest.mtimeMs) {
      throw new Error(`${file}: changed while it was ingested (${digest.bytes} bytes when hashed, ${now.size} now); ` +
        'ingest it once it is complete');
    }
  }
}

export async function ingestFiles(files: readonly string[], opts: IngestOptions): Promise<IngestSummary> {
  const started = performance.now();
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  const label = `ingest ${files.map((f) => path.basename(f)).join(' ')}`.slice(0, 1000);
  const inputs = await RunInputs.open(files, opts, now);
  // The ledger as the run starts; publish() looks again under the manifest lock.
  const recorded = existsSync(opts.dataDir) ? ledgerOf(readManifest(opts.dataDir)) : new Map<string, Recorded>();
  const check = (input: InputRecord, again: boolean): Promise<LedgerVerdict> => {
    const r = again ? undefined : recorded.get(input.sha256);
    return Promise.resolve(r === undefined ? { kind: 'ingest' } : { kind: 'skip', where: `shard ${r.shard}` });
  };
  const ledger = { inputs: inputs.ingested, again: opts.again ?? false };
  const { spiller, shards } = await publishRun(opts.dataDir, label, now, opts.memoryRrsets ?? LIMITS.ingestRrsetsInMemoryMax,
    (spiller) => inputs.forEach(check, async (file, format, ctx, input) => {
      const threads = threadsFor(opts.threads);
      if (format === 'ndjson' && threads > 1 && input.bytes >= (opts.parallelBytesMin ?? LIMITS.ndjsonParallelBytesMin)) {
        // The threads take the whole memory budget: write out what this one holds first.
        await spiller.spill();
        const p = await ingestNdjsonParallel(file, {
          threads, dataDir: opts.dataDir, label, now, memoryRrsets: spiller.memoryRrsets, writer: spiller.writer,
          maxErrors: opts.maxErrors - inputs.rejected,
          onProgress: (bytes) => ctx.progress?.(bytes),
          ...(opts.onReject ? { onReject: opts.onReject } : {}),
          discard: (written) => spiller.discard(written),
        });
        spiller.adopt(p.written, p.records, p.observations);
        inputs.rejected += p.rejected;
      } else {
        for await (const o of sourceFor(format, file, ctx, opts)) await spiller.add(o);
      }
    }), ledger);
  // No swap (every file skipped, or empty) to clean up after a dead writer, so clean up here: this is
  // the run that follows an ingest killed after its swap, which now skips the files that one published.
  if (shards.length === 0) await removeLeftovers(opts.dataDir);
  return {
    files: files.length, records: spiller.records, observations: spiller.observations, rrsets: spiller.rrsets,
    rejected: inputs.rejected, skipped: inputs.skipped, refused: inputs.refused, forgotten: spiller.ledgerForgotten,
    shards, seconds: (performance.now() - started) / 1000,
  };
}

/** Observations from any iterable (the demo generator) into shards, published at once. */
export async function ingestObservations(source: Iterable<Observation>, dataDir: string, label: string,
  onProgress?: (observations: number) => void, now = Math.floor(Date.now() / 1000)): Promise<IngestSummary> {
  const started = performance.now();
  const run = await publishRun(dataDir, label, now, LIMITS.ingestRrsetsInMemoryMax, async (spiller) => {
    let n = 0;
    for (const o of source) {
      await spiller.add(o);
      if ((++n & 0xffff) === 0) onProgress?.(n);
    }
  });
  return generatedSummary(run, started);
}

/**
 * What a run whose shards other threads write gives them: its time, the
 * memory they share, its writer id, and a way to delete what they wrote.
 */
export interface ThreadsRun {
  now: number;
  /** The run's in-memory RRsets: the threads share them. */
  memoryRrsets: number;
  /** The run's WriterLock id (file-lock.ts), which this thread holds. */
  writer: string;
  /** Deletes shards the threads wrote, when the run fails. */
  discard(shards: readonly WrittenShard[]): Promise<void>;
}

/** What the threads of such a run wrote and read. */
export interface ThreadsWritten {
  written: WrittenShard[];
  records: number;
  observations: number;
}

/**
 * A run of observations generated on other threads (the demo on one thread
 * per core: demo/parallel.ts): `write` starts them, each writing its own
 * shards, and returns what they wrote, which is published in one manifest
 * swap; when it throws, it has deleted what they wrote (run.discard) and
 * nothing is published.
 */
export async function ingestOnThreads(dataDir: string, label: string, write: (run: ThreadsRun) => Promise<ThreadsWritten>,
  now = Math.floor(Date.now() / 1000)): Promise<IngestSummary> {
  const started = performance.now();
  const run = await publishRun(dataDir, label, now, LIMITS.ingestRrsetsInMemoryMax, async (spiller) => {
    const w = await write({ now, memoryRrsets: spiller.memoryRrsets, writer: spiller.writer, discard: (s) => spiller.discard(s) });
    spiller.adopt(w.written, w.records, w.observations);
  });
  return generatedSummary(run, started);
}

function generatedSummary({ spiller, shards }: { spiller: ShardSpiller; shards: string[] }, started: number): IngestSummary {
  return { files: 0, records: spiller.records, observations: spiller.observations, rrsets: spiller.rrsets, rejected: 0,
    skipped: 0, refused: [], forgotten: spiller.ledgerForgotten, shards, seconds: (performance.now() - started) / 1000 };
}
