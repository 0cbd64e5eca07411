// An ingest run: source files in, new shards published, or nothing at all.
//
// Each file is read by its source parser (zone, pcap, dnstap, ndjson) and
// every observation goes to a ShardSpiller (shard/shard-spiller.ts), whose
// --memory-rrsets budget, not the input size, bounds peak memory. The shard
// files are published in ONE manifest swap at the end; a run that fails (too many bad records, a
// full disk, a crash) leaves the published data exactly as it was and
// deletes its unpublished files.

import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import { LIMITS } from '../config/limits.js';
import { WriterLock } from '../shard/file-lock.js';
import { ShardSpiller } from '../shard/shard-spiller.js';
import type { Observation } from '../model/observation.js';
import type { IngestContext } from './context.js';
import { zoneObservations } from './zone.js';
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
}

export interface IngestSummary {
  files: number;
  records: number;
  observations: number;
  rrsets: number;
  rejected: number;
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
      const zoneOpts: { origin?: string; observedAt?: number } = {};
      if (opts.origin !== undefined) zoneOpts.origin = opts.origin;
      if (opts.observedAt !== undefined) zoneOpts.observedAt = opts.observedAt;
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
  fill: (spiller: ShardSpiller) => Promise<void>): Promise<{ spiller: ShardSpiller; shards: string[] }> {
  const writer = WriterLock.acquire(dataDir);
  const spiller = new ShardSpiller(dataDir, label, now, Math.min(memoryRrsets, LIMITS.shardRrsetsMax), writer.id);
  try {
    await fill(spiller);
    return { spiller, shards: await spiller.publish() };
  } catch (err) {
    await spiller.abort();
    throw err;
  } finally {
    writer.release();
  }
}

type InputOptions = Pick<IngestOptions, 'format' | 'maxErrors' | 'onProgress' | 'onReject'>;

/**
 * The input files of one run, in order: each one's format, and a context
 * that counts skipped records against --max-errors (across all the files)
 * and reports progress in bytes over all of them. One copy of these rules
 * for every place ingest writes to (shards, ClickHouse).
 */
export class RunInputs {
  rejected = 0;
  private done = 0;

  private constructor(readonly files: readonly string[], readonly sizes: readonly number[], readonly totalBytes: number,
    private readonly opts: InputOptions) {}

  static async open(files: readonly string[], opts: InputOptions): Promise<RunInputs> {
    const sizes = await Promise.all(files.map(async (f) => (await stat(f)).size));
    return new RunInputs(files, sizes, sizes.reduce((a, b) => a + b, 0), opts);
  }

  /** Calls `read` for each file in turn with its format and context; progress moves past the file when it returns. */
  async forEach(read: (file: string, format: SourceFormat, ctx: IngestContext, size: number) => Promise<void>): Promise<void> {
    const opts = this.opts;
    for (let i = 0; i < this.files.length; i++) {
      const file = this.files[i]!;
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
      await read(file, format, ctx, this.sizes[i]!);
      this.done += this.sizes[i]!;
      opts.onProgress?.(this.done, this.totalBytes);
    }
  }
}

export async function ingestFiles(files: readonly string[], opts: IngestOptions): Promise<IngestSummary> {
  const started = performance.now();
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  const label = `ingest ${files.map((f) => path.basename(f)).join(' ')}`.slice(0, 1000);
  const inputs = await RunInputs.open(files, opts);
  const { spiller, shards } = await publishRun(opts.dataDir, label, now, opts.memoryRrsets ?? LIMITS.ingestRrsetsInMemoryMax,
    (spiller) => inputs.forEach(async (file, format, ctx, size) => {
      const threads = threadsFor(opts.threads);
      if (format === 'ndjson' && threads > 1 && size >= (opts.parallelBytesMin ?? LIMITS.ndjsonParallelBytesMin)) {
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
    }));
  return {
    files: files.length, records: spiller.records, observations: spiller.observations, rrsets: spiller.rrsets,
    rejected: inputs.rejected, shards, seconds: (performance.now() - started) / 1000,
  };
}

/** Observations from any iterable (the demo generator) into shards, published at once. */
export async function ingestObservations(source: Iterable<Observation>, dataDir: string, label: string,
  onProgress?: (observations: number) => void, now = Math.floor(Date.now() / 1000)): Promise<IngestSummary> {
  const started = performance.now();
  const { spiller, shards } = await publishRun(dataDir, label, now, LIMITS.ingestRrsetsInMemoryMax, async (spiller) => {
    let n = 0;
    for (const o of source) {
      await spiller.add(o);
      if ((++n & 0xffff) === 0) onProgress?.(n);
    }
  });
  return { files: 0, records: spiller.records, observations: spiller.observations, rrsets: spiller.rrsets, rejected: 0,
    shards, seconds: (performance.now() - started) / 1000 };
}
