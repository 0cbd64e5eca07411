// Piscina entry point: one flexible-search scan over one shard (or a record
// range of it), streaming unique matches back over the task's MessagePort.
//
// Roles (ripgrep's split): the matcher is the compiled RE2 (src/query), the
// searcher drives the blob through it (src/scan), and this file is the sink:
// it filters each matching record by exclude, rrtype and time fences, batches
// the survivors and tells the searcher to stop once it has `want` of them.

import { parentPort } from 'node:worker_threads';
import type RE2 from 're2';
import { LIMITS } from '../src/config/limits.js';
import { inFence, keepType } from '../src/model/filters.js';
import { compilePattern } from '../src/query/pattern.js';
import { everyRecord, makeMatcher, recordMatches, scanRecords } from '../src/search/local/blob-searcher.js';
import { candidates } from '../src/shard/trigram-index.js';
import { ShardReader, type FlexColumns } from '../src/shard/shard-reader.js';
import { BatchBuilder } from '../src/search/local/flex-batch.js';
import {
  CONTROL_CANCEL, CONTROL_CREDITS, type FlexTask, type WorkerMessage,
} from '../src/search/local/scan-protocol.js';

void parentPort;

// Shards this worker has attached to, by file name. Attaching is cheap (no
// copy, no checksum), but reusing saves the FlatBuffer table walk per task.
const shards = new Map<string, ShardReader>();

function shardFor(task: FlexTask): ShardReader {
  let s = shards.get(task.shard.name);
  if (!s) {
    if (shards.size >= LIMITS.workerShardsCachedMax) shards.delete(shards.keys().next().value!);
    s = ShardReader.attach(task.shard.name, task.shard.buffer);
    shards.set(task.shard.name, s);
  }
  return s;
}

interface Compiled {
  re: RE2;
  trigrams: ReturnType<typeof compilePattern>['trigrams'];
  everyRecord: boolean;
}
const patterns = new Map<string, Compiled>();

function compiled(method: 'regex' | 'glob', pattern: string): Compiled {
  const key = `${method}\u0000${pattern}`;
  let c = patterns.get(key);
  if (!c) {
    const p = compilePattern(method, pattern);
    c = { re: makeMatcher(p), trigrams: p.trigrams, everyRecord: p.everyRecord };
    if (patterns.size >= LIMITS.workerPatternsCachedMax) patterns.delete(patterns.keys().next().value!);
    patterns.set(key, c);
  }
  return c;
}

/** First slice of a blob scan, in records (~50 KB of names); later slices follow the measured speed. */
const sliceRecordsFirst = 1_024;
/** Smallest slice: one record can be a 64 KB rdata, and per-slice overhead must stay small. */
const sliceRecordsMin = 16;

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).toUpperCase().padStart(2, '0'));
function hex(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i++) s += HEX[bytes[i]!];
  return s;
}

export default function scan(task: FlexTask): void {
  const control = new Int32Array(task.control);
  const port = task.port;
  const post = (m: WorkerMessage) => port.postMessage(m);
  let matched = 0;
  try {
    const shard = shardFor(task);
    const cols: FlexColumns = task.target === 'rrnames' ? shard.flexNames : shard.flexRdata;
    const view = { blob: cols.blob, offsets: cols.offsets };
    const recordCount = cols.offsets.length - 1;
    const from = Math.max(0, task.from);
    const to = task.to < 0 ? recordCount : Math.min(task.to, recordCount);
    const main = compiled(task.method, task.pattern);
    const exclude = task.exclude !== undefined ? compiled(task.method, task.exclude).re : undefined;
    const keep = (t: number) => keepType(task.typeFilter, t);

    const batch = new BatchBuilder();
    let lastFlush = performance.now();
    const cancelled = () => Atomics.load(control, CONTROL_CANCEL) !== 0;
    // Set when no credit came in time: the batch in hand still goes out (one
    // batch over the credits, no more), the scan stops, and `end` says where
    // to resume (scan-protocol.ts: waiting longer could deadlock the merge).
    let paused = false;
    let resumeAt: number | undefined;

    const flush = () => {
      if (batch.values === 0) return;
      // Wait for a credit: the socket side returns one per batch it has written.
      const deadline = performance.now() + LIMITS.scanCreditWaitMs;
      for (;;) {
        const credits = Atomics.load(control, CONTROL_CREDITS);
        if (credits > 0 || cancelled()) break;
        const left = deadline - performance.now();
        if (left <= 0) {
          paused = true;
          break;
        }
        Atomics.wait(control, CONTROL_CREDITS, credits, left);
      }
      if (cancelled()) return;
      Atomics.sub(control, CONTROL_CREDITS, 1);
      post({ type: 'batch', batch: batch.take() });
      lastFlush = performance.now();
    };

    const onRecord = (i: number): boolean => {
      if (exclude && recordMatches(exclude, view, i)) return true;
      const value = ShardReader.record(cols, i);
      const e0 = cols.entryStarts[i]!;
      const e1 = cols.entryStarts[i + 1]!;
      batch.beginValue(value);
      for (let e = e0; e < e1; e++) {
        const t = cols.entryType[e]!;
        if (!keep(t)) continue;
        if (!inFence(cols.entryFirst[e]!, cols.entryLast[e]!, task.fence)) continue;
        if (task.target === 'rrnames') batch.nameLine(t);
        else batch.rdataLine(t, hex(shard.rdataWire(cols.link[e]!)));
      }
      if (!batch.endValue(value)) return true;
      matched++;
      if (batch.values >= LIMITS.batchItemsMax || batch.bytes >= LIMITS.writeChunkBytes) flush();
      return matched < task.want && !cancelled() && !paused;
    };

    // Stop the searcher to flush a partial batch every so often, so a slow,
    // selective scan still streams its first results promptly.
    const stale = () => batch.values > 0 && performance.now() - lastFlush > LIMITS.scanFlushStaleMs;
    const shouldStop = () => cancelled() || stale();

    const cand = candidates(cols.trigrams, main.trigrams, recordCount,
      Math.floor(recordCount * LIMITS.trigramCandidateFractionMax));
    if (cand !== 'scan') {
      // Candidates are ascending record ids; take those inside [from, to).
      for (let k = 0; k < cand.length; k++) {
        const i = cand[k]!;
        if (i < from) continue;
        if (i >= to || cancelled()) break;
        if (recordMatches(main.re, view, i) && !onRecord(i)) {
          // Paused, or this task's share of the answer is found: the front
          // end runs the rest of the range if the merge turns out to need it.
          if ((paused || matched >= task.want) && !cancelled() && i + 1 < to) resumeAt = i + 1;
          break;
        }
        if ((k & 1023) === 0 && stale()) {
          flush();
          if (paused) {
            resumeAt = i + 1;
            break;
          }
        }
      }
    } else {
      // Scan in slices of about LIMITS.scanSliceMs, so that the cancel flag
      // is seen that often however slow the pattern makes RE2. The slice
      // size follows the measured speed: it halves (or more) when a slice
      // ran long and at most doubles when it ran short.
      // A task that used up its turn ends and its rest queues behind the
      // tasks waiting for a worker (LIMITS.scanTurnMs): pools are shared.
      let at = from;
      let slice = sliceRecordsFirst;
      const turnEnd = performance.now() + task.turnMs;
      let turnOver = false;
      while (at < to && matched < task.want && !cancelled() && !paused && !turnOver) {
        const t0 = performance.now();
        at = main.everyRecord ? everyRecord(at, Math.min(to, at + slice), onRecord, shouldStop)
          : scanRecords(main.re, view, at, Math.min(to, at + slice), onRecord, shouldStop);
        const ms = performance.now() - t0;
        slice = Math.max(sliceRecordsMin, Math.min(slice * 2, Math.floor(slice * LIMITS.scanSliceMs / Math.max(ms, 0.001))));
        if (stale()) flush();
        turnOver = performance.now() >= turnEnd;
      }
      if ((paused || turnOver || matched >= task.want) && !cancelled() && at < to) resumeAt = at;
    }
    flush();
    post({ type: 'end', cancelled: cancelled(), ...(resumeAt !== undefined ? { resumeAt } : {}) });
  } catch (err) {
    const e = err as { code?: string; message?: string };
    post({ type: 'error', code: e.code ?? 'INTERNAL', message: e.message ?? String(err) });
  } finally {
    port.close();
  }
}
