// The pool of scan workers (Piscina) and what it takes to run one task.
//
// Size: one thread per core by default; each runs one task at a time
// (concurrentTasksPerWorker 1), because a scan is pure CPU and a worker
// waits (briefly, in Atomics.wait) while its reader is slow. The queue is
// bounded (Piscina's default is unbounded): a query that would overflow it
// is refused with 503 before any byte of its response is sent.
// The bound is kept here, by counting tasks, not by Piscina's maxQueue:
// Piscina parks tasks that carry an AbortSignal (all of ours) in a side
// queue its maxQueue check never looks at, and counts no idle workers, so
// queueSize alone refused every search under `--queue-max 0`.

import { availableParallelism } from 'node:os';
import { MessageChannel } from 'node:worker_threads';
import { LIMITS } from '../../config/limits.js';
import { workerPool, type WorkerPool } from '../../lib/threads.js';
import {
  CONTROL_CANCEL, CONTROL_CREDITS, CONTROL_SLOTS, INITIAL_CREDITS, type FlexTask, type TaskTime, type WorkerMessage,
} from './scan-protocol.js';

export interface ScanPoolOptions {
  threads?: number;
  queueMax?: number;
  /** Wall time a task scans before it lets queued tasks run (LIMITS.scanTurnMs). */
  turnMs?: number;
}

/**
 * The pool's counters since it started, read when the server's metrics are
 * scraped (plain numbers: nothing is computed per task but two additions).
 * queued and running follow the same arithmetic as wouldOverflow: tasks
 * beyond the threads are the ones waiting.
 */
export interface ScanPoolStats {
  threads: number;
  running: number;
  queued: number;
  /** Tasks handed to Piscina (a search's resumed parts each count again). */
  started: number;
  /** Tasks that gave their worker up because their turn (--scan-turn-ms) was used up. */
  turns: number;
  /** Wall time workers were held by tasks, credit waits included. */
  heldSeconds: number;
  /** Of heldSeconds, the time tasks waited for their reader to take batches (credits). */
  creditWaitSeconds: number;
}

/** One running task as the front end sees it. */
export interface RunningScan {
  /** Returns one credit to the worker (call after writing a batch). */
  credit(): void;
  cancel(): void;
  /** Settles when the worker has finished the task (after its last message). */
  readonly done: Promise<void>;
}

export class ScanPool {
  readonly piscina: WorkerPool<'scan'>;
  readonly threads: number;
  private readonly queueMax: number;
  private readonly turnMs: number;
  /** Tasks handed to Piscina whose stream has not ended: running plus waiting. */
  private active = 0;
  private started = 0;
  private turns = 0;
  private heldMs = 0;
  private creditWaitMs = 0;

  constructor(opts: ScanPoolOptions = {}) {
    this.threads = opts.threads ?? availableParallelism();
    this.queueMax = opts.queueMax ?? LIMITS.poolQueueMax;
    this.turnMs = opts.turnMs ?? LIMITS.scanTurnMs;
    this.piscina = workerPool('scan', {
      minThreads: this.threads,
      maxThreads: this.threads,
      // Never reached (see above); kept finite so Piscina is not unbounded either.
      // Not 0: Piscina 5 rejects a task it has already parked when maxQueue is 0.
      maxQueue: Math.max(1, this.queueMax),
      concurrentTasksPerWorker: 1,
      idleTimeout: 60_000,
    });
  }

  /**
   * True when `tasks` more would leave more than queueMax tasks waiting for a
   * worker (answer 503 instead). An idle pool takes any search, so that one
   * with more shards than threads + queueMax is slow rather than impossible.
   */
  wouldOverflow(tasks: number): boolean {
    return this.active > 0 && this.active + tasks - this.threads > this.queueMax;
  }

  /** Starts a task; `credits` batches may be posted before the front end returns any. */
  run(task: Omit<FlexTask, 'port' | 'control' | 'turnMs'>, onMessage: (m: WorkerMessage) => void, credits = INITIAL_CREDITS): RunningScan {
    const { port1, port2 } = new MessageChannel();
    const control = new SharedArrayBuffer(CONTROL_SLOTS * 4);
    const ctl = new Int32Array(control);
    ctl[CONTROL_CREDITS] = credits;
    const abort = new AbortController();
    let ended = false;
    // Our side of the channel is closed when the worker's last message
    // (`end` or `error`) arrives, never later: closing it after Piscina's
    // task promise settled made the messages of LATER tasks on the same
    // worker go missing (reproduced with a bare Piscina pool on Node 20; a
    // search hung on every other query).
    // The task stops counting against the queue when its stream ends, not
    // when Piscina settles its promise a message later: a client that got
    // its answer and at once sent the next search was refused with 503 in
    // between (seen under load with --workers 1 --queue-max 0).
    let counted = true;
    const uncount = () => {
      if (counted) this.active--;
      counted = false;
    };
    const endStream = () => {
      if (ended) return false;
      ended = true;
      uncount();
      port1.close();
      return true;
    };
    port1.on('message', (m: WorkerMessage) => {
      if (m.type === 'end' || m.type === 'error') {
        endStream();
        this.account(m.time);
      }
      onMessage(m);
    });
    const full: FlexTask = { ...task, port: port2, control, turnMs: this.turnMs };
    this.active++;
    this.started++;
    const done = this.piscina.run(full, { transferList: [port2], signal: abort.signal }).then(
      // Not endStream(): the `end` message travels on another channel and may
      // still be on its way; closing the port now would lose it.
      () => uncount(),
      (err: Error) => {
        // Worker crashed, was aborted, or the queue refused the task: the
        // stream must still end, with a failure, unless it already did.
        if (endStream()) {
          onMessage({ type: 'error', code: (err as { code?: string }).code ?? 'WORKER_FAILED', message: err.message });
        }
      },
    );
    return {
      credit() {
        Atomics.add(ctl, CONTROL_CREDITS, 1);
        Atomics.notify(ctl, CONTROL_CREDITS);
      },
      cancel() {
        Atomics.store(ctl, CONTROL_CANCEL, 1);
        Atomics.notify(ctl, CONTROL_CREDITS);
        // The worker sees the flag within one scan slice (LIMITS.scanSliceMs) and ends
        // normally. Aborting (Piscina kills and respawns the thread) is the
        // last resort, for a worker that did not end in time; a task still
        // queued is simply dropped.
        if (!ended) setTimeout(() => { if (!ended) abort.abort(); }, LIMITS.scanAbortGraceMs).unref();
      },
      done,
    };
  }

  stats(): ScanPoolStats {
    const running = Math.min(this.active, this.threads);
    return {
      threads: this.threads, running, queued: this.active - running, started: this.started, turns: this.turns,
      heldSeconds: this.heldMs / 1000, creditWaitSeconds: this.creditWaitMs / 1000,
    };
  }

  /** Adds up a finished task's time (absent when its worker died before saying). */
  private account(time: TaskTime | undefined): void {
    if (time === undefined) return;
    this.heldMs += time.heldMs;
    this.creditWaitMs += time.creditWaitMs;
    if (time.turnOver) this.turns++;
  }

  async close(): Promise<void> {
    await this.piscina.destroy();
  }
}
