// The one definition of what crosses between the front end and the scan
// workers (workers/scan.ts). Both sides import these types; nothing else
// describes the messages.
//
// Flow control: each task gets a control SharedArrayBuffer viewed as
// Int32Array [cancel, credits]. The worker spends one credit per batch it
// posts and waits (Atomics.wait) while it has none; the front end returns a
// credit when it has written a batch to the socket. A slow reader therefore
// stops the scan instead of piling batches up in memory. A worker that gets
// no credit within LIMITS.scanCreditWaitMs posts the batch in hand and ends
// the task with `resumeFrom`, giving its thread back: a slow client must not
// hold a thread that other searches are queued for. The front end runs the
// rest, values [resumeFrom, to), as a new task once it has drained what it
// holds. Setting cancel stops the scan at
// its next check (every LIMITS.scanSliceMs of scanning).

import type { MessagePort } from 'node:worker_threads';
import type { TimeFence, TypeFilter } from '../../model/filters.js';
import type { ShardHandle } from '../../shard/shard-reader.js';
import type { FlexBatch } from '../flex-batch.js';

/**
 * A BroadcastChannel on which the front end posts the identity
 * (ShardHandle.identity) of each shard it has released (it left the manifest and no search holds it): workers drop
 * it from their caches (flex-scan.ts WorkerCache).
 */
export const RETIRED_SHARDS_CHANNEL = 'rrscan:retired-shards';

export const CONTROL_CANCEL = 0;
export const CONTROL_CREDITS = 1;
export const CONTROL_SLOTS = 2;
/** Batches a worker may post ahead of the socket. */
export const INITIAL_CREDITS = 4;

export interface FlexTask {
  kind: 'flex';
  /** The shards to scan, in shard order: one cursor each, merged by value (flex-scan.ts). */
  shards: ShardHandle[];
  target: 'rrnames' | 'rdata';
  method: 'regex' | 'glob';
  pattern: string;
  exclude: string | undefined;
  typeFilter: TypeFilter;
  fence: TimeFence;
  /**
   * Shards that may hold matching values but are not scanned (their times
   * lie outside the fence): a fenced search judges each (value, rrtype) on
   * its times over them too (tuple-times.ts). Empty when the search has no
   * fence.
   */
  others: ShardHandle[];
  /** The values this task covers: [from, to), to undefined = the end. */
  from: string;
  to: string | undefined;
  /** Stop after this many matching unique values. */
  want: number;
  /** Scan for at most this long, then end with resumeFrom (LIMITS.scanTurnMs). */
  turnMs: number;
  port: MessagePort;
  control: SharedArrayBuffer;
}


/**
 * How long a task held its worker (ms, wall time from start to its last
 * message), and how much of that it waited for credits: the pool's metrics
 * add them up (ScanPool.stats). turnOver: the task gave its worker up
 * because its turn (FlexTask.turnMs) was used up.
 */
export interface TaskTime {
  heldMs: number;
  creditWaitMs: number;
  turnOver?: true;
}

export type WorkerMessage =
  | { type: 'batch'; batch: FlexBatch }
  // resumeFrom: the task stopped early (no credits, its `want` found, or its turn over); values [resumeFrom, to) are still to scan.
  | { type: 'end'; cancelled: boolean; resumeFrom?: string; time?: TaskTime }
  | { type: 'error'; code: string; message: string; time?: TaskTime };
