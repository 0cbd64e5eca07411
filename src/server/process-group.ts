// serve --processes N: N front-end processes on one port of one machine.
//
// One process runs one event loop, and the front end's own work (HTTP
// parsing, auth, merging, JSON) is single-threaded; N processes use N cores
// for it. Each member is a whole `rrscan serve` (node:cluster re-runs the
// same command line) with its own scan pool, mapping the same shard files
// (the page cache holds them once) and reloading them on its own when the
// manifest changes. They share the port through SO_REUSEPORT: the kernel
// spreads connections over the members' listening sockets, and no process
// sits in the data path. uWS sets SO_REUSEPORT only for a non-zero port, so
// the supervisor turns `--port 0` into a free port before forking.
//
// The supervisor holds no sockets or shards: it starts the members, restarts
// one that dies (a crash loop stops the group), and on SIGTERM or SIGINT asks
// every member to stop, which ends each open stream with its terminator
// once its reader has drained it (--shutdown-grace-ms, which the members
// read from the same command line); the supervisor waits that long and a
// margin before it kills a member still running.
// Members ignore SIGINT (Ctrl-C reaches every process of the terminal's
// process group; the supervisor decides) and stop by themselves when the
// supervisor is gone, so a killed supervisor leaves no front end behind.
//
// With --metrics-port the supervisor serves the group's one metrics
// listener: a scrape asks every member over IPC for its registry (as JSON)
// and its readiness, and prom-client's AggregatorRegistry adds them up
// (a gauge says where it takes the largest or smallest instead, as those of
// the shared data do in search/local/local-metrics.ts). The group is
// ready when every member is running and ready.

import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { AggregatorRegistry, Registry } from 'prom-client';
import { LIMITS } from '../config/limits.js';
import { log } from './log.js';
import { freePort } from '../lib/free-port.js';
import { counter, gauge, one } from '../lib/prometheus.js';
import { startMetricsListener, type MetricsListener, type Readiness, type ReadinessCheck } from './metrics-listener.js';

const MEMBER_ENV = 'RRSCAN_GROUP_MEMBER';
const PORT_ENV = 'RRSCAN_GROUP_PORT';

/** What a member is told by its supervisor. */
export interface Membership {
  /** 0 .. processes-1, stable across restarts of the same slot. */
  readonly index: number;
  /** The port every member listens on. */
  readonly port: number;
}

interface ListeningMessage {
  kind: 'listening';
  url: string;
}

function isListening(m: unknown): m is ListeningMessage {
  return typeof m === 'object' && m !== null && (m as ListeningMessage).kind === 'listening' &&
    typeof (m as ListeningMessage).url === 'string';
}

/** The supervisor asks a member for its metrics (as prom-client JSON) and readiness, or readiness alone. */
interface ScrapeRequest {
  kind: 'scrape';
  id: number;
  metrics: boolean;
}

interface ScrapeReply {
  kind: 'scraped';
  id: number;
  metrics: object[];
  notReady: string | null;
  degraded: string | null;
}

function isScrapeRequest(m: unknown): m is ScrapeRequest {
  return typeof m === 'object' && m !== null && (m as ScrapeRequest).kind === 'scrape' && typeof (m as ScrapeRequest).id === 'number';
}

function isScrapeReply(m: unknown): m is ScrapeReply {
  return typeof m === 'object' && m !== null && (m as ScrapeReply).kind === 'scraped' && typeof (m as ScrapeReply).id === 'number' &&
    Array.isArray((m as ScrapeReply).metrics);
}

/** A member's part of a group scrape: its reply, or why there is none. */
type MemberScrape = ScrapeReply | { missing: string };

// Every log line of a member says which one it is.
if (cluster.isWorker) log.setBindings({ member: Number(process.env[MEMBER_ENV]), pid: process.pid });

/** This process's membership when a supervisor forked it, else undefined. */
export function membership(): Membership | undefined {
  if (!cluster.isWorker) return undefined;
  return { index: Number(process.env[MEMBER_ENV]), port: Number(process.env[PORT_ENV]) };
}

/** In a member of a group with --metrics-port: answers the supervisor's scrapes from this process's registry. */
export function answerScrapes(registry: Registry, ready: ReadinessCheck): void {
  process.on('message', (m: unknown) => {
    if (!isScrapeRequest(m)) return;
    Promise.all([m.metrics ? registry.getMetricsAsJSON() : [], ready()]).then(
      ([metrics, { notReady, degraded }]) => process.send?.({
        kind: 'scraped', id: m.id, metrics, notReady: notReady ?? null, degraded: degraded ?? null,
      } satisfies ScrapeReply),
      (err: unknown) => log.error({ err }, 'metrics for the supervisor failed'),
    );
  });
}

/** Scan threads per member when the operator gives no --workers: the machine's cores, shared. */
export function scanThreadsPerMember(processes: number): number {
  return Math.max(1, Math.floor(availableParallelism() / processes));
}

/**
 * Called by a member once it listens: tells the supervisor, and arranges for
 * `stop` to run when the supervisor goes away. (SIGINT is the supervisor's:
 * cli/main.ts has members ignore it.)
 */
export function joinGroup(url: string, stop: () => void): void {
  process.once('disconnect', stop);
  process.send?.({ kind: 'listening', url } satisfies ListeningMessage);
}

export interface GroupOptions {
  processes: number;
  host: string;
  /** 0 = a free port, chosen once for the whole group. */
  port: number;
  /** The members' --shutdown-grace-ms (they read it from the same command line): stop() waits that long, and a margin. */
  shutdownGraceMs: number;
}

export class ProcessGroup {
  private readonly members: (Worker | undefined)[];
  /** Members that have said they listen (a restarted one is not ready before). */
  private readonly listening: boolean[];
  private readonly deaths: number[] = [];
  private stopping: Promise<number> | undefined;
  private exitCode = 0;
  private restarts = 0;
  private scrapes = 0;
  /** Scrapes waiting for a member's reply, by request id. */
  private readonly pending = new Map<number, { member: number; done: (r: MemberScrape) => void }>();

  private constructor(processes: number, private readonly port: number, private readonly shutdownGraceMs: number) {
    this.members = new Array<Worker | undefined>(processes).fill(undefined);
    this.listening = new Array<boolean>(processes).fill(false);
  }

  /** Starts every member; resolves with the group's URL once all of them listen. */
  static async start(opts: GroupOptions): Promise<{ group: ProcessGroup; url: string }> {
    const port = opts.port === 0 ? await freePort(opts.host) : opts.port;
    const group = new ProcessGroup(opts.processes, port, opts.shutdownGraceMs);
    try {
      const urls = await Promise.all(group.members.map((_, i) => group.fork(i)));
      log.info({ processes: opts.processes, port }, 'process group listening');
      return { group, url: urls[0]! };
    } catch (err) {
      await group.stop();
      throw err;
    }
  }

  /** Forks the member of slot `index`; resolves with its URL once it listens. */
  private fork(index: number): Promise<string> {
    const worker = cluster.fork({ [MEMBER_ENV]: String(index), [PORT_ENV]: String(this.port) });
    this.members[index] = worker;
    log.info({ member: index, pid: worker.process.pid }, 'front-end process started');
    worker.on('exit', (code, signal) => this.onExit(index, worker, code, signal));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`front-end process ${index} did not listen within ` +
        `${LIMITS.groupStartTimeoutMs / 1000} s`)), LIMITS.groupStartTimeoutMs);
      worker.on('message', (m: unknown) => {
        if (isScrapeReply(m)) return this.pending.get(m.id)?.done(m);
        if (!isListening(m)) return;
        clearTimeout(timer);
        this.listening[index] = true;
        resolve(m.url);
      });
      worker.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`front-end process ${index} exited (${signal ?? `code ${code}`}) before it listened`));
      });
    });
  }

  private onExit(index: number, worker: Worker, code: number | null, signal: string | null): void {
    if (this.members[index] === worker) {
      this.members[index] = undefined;
      this.listening[index] = false;
      for (const p of this.pending.values()) if (p.member === index) p.done({ missing: `member ${index} is not running` });
    }
    if (this.stopping !== undefined) {
      if (code !== 0) this.exitCode = 1;
      return;
    }
    const now = Date.now();
    this.deaths.push(now);
    while (this.deaths[0]! < now - LIMITS.groupRestartWindowMs) this.deaths.shift();
    if (this.deaths.length > LIMITS.groupRestartsMax) {
      log.error({ member: index, code, signal, deaths: this.deaths.length }, 'front-end processes keep dying; stopping the group');
      this.exitCode = 1;
      void this.stop().then((c) => process.exit(c));
      return;
    }
    log.error({ member: index, pid: worker.process.pid, code, signal }, 'front-end process died; starting it again');
    this.restarts++;
    setTimeout(() => {
      if (this.stopping !== undefined) return;
      this.fork(index).catch((err: unknown) => log.error({ member: index, err: String(err) }, 'front-end process did not restart'));
    }, LIMITS.groupRestartDelayMs);
  }

  /** Asks every member for its readiness, and its metrics when `metrics`; a member not running or not answering says so. */
  scrape(metrics: boolean): Promise<MemberScrape[]> {
    return Promise.all(this.members.map((worker, i) => {
      if (worker === undefined || !this.listening[i]) return { missing: `member ${i} is not running` };
      const id = ++this.scrapes;
      return new Promise<MemberScrape>((resolve) => {
        const done = (r: MemberScrape): void => {
          clearTimeout(timer);
          this.pending.delete(id);
          resolve(r);
        };
        const timer = setTimeout(() => done({ missing: `member ${i} did not answer within ${LIMITS.groupScrapeTimeoutMs} ms` }),
          LIMITS.groupScrapeTimeoutMs);
        this.pending.set(id, { member: i, done });
        worker.send({ kind: 'scrape', id, metrics } satisfies ScrapeRequest, (err: Error | null) => {
          if (err) done({ missing: `member ${i}: ${err.message}` });
        });
      });
    }));
  }

  /** The group's metrics: its members' added up, and its own (members running, restarts). */
  async metrics(): Promise<string> {
    const replies = await this.scrape(true);
    const answered = replies.flatMap((r) => ('missing' in r ? [] : [r.metrics]));
    const registry = AggregatorRegistry.aggregate<typeof Registry.PROMETHEUS_CONTENT_TYPE>(answered);
    gauge(registry, 'rrscan_group_members_running', 'Front-end processes of the group running and listening', [],
      () => one(answered.length));
    counter(registry, 'rrscan_group_member_restarts_total', 'Front-end processes the supervisor started again after they died', [],
      () => one(this.restarts));
    return registry.metrics();
  }

  /**
   * Why the group cannot serve (the first member not running or not ready),
   * or what its members serve without (each different text once: members
   * map the same files, so they usually agree).
   */
  async readiness(): Promise<Readiness> {
    const degraded = new Set<string>();
    for (const r of await this.scrape(false)) {
      if ('missing' in r) return { notReady: r.missing, degraded: undefined };
      if (r.notReady !== null) return { notReady: r.notReady, degraded: undefined };
      if (r.degraded !== null) degraded.add(r.degraded);
    }
    return { notReady: undefined, degraded: degraded.size > 0 ? [...degraded].join('; ') : undefined };
  }

  /**
   * SIGTERM to every member, which drains its streams within the shutdown
   * grace; SIGKILL to one still there LIMITS.groupStopMarginMs after that.
   * Resolves with the exit code.
   */
  stop(): Promise<number> {
    const killAfterMs = this.shutdownGraceMs + LIMITS.groupStopMarginMs;
    this.stopping ??= Promise.all(this.members.map((w) => (w === undefined ? undefined : stopMember(w, killAfterMs))))
      .then(() => this.exitCode);
    return this.stopping;
  }
}

function stopMember(worker: Worker, killAfterMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (worker.isDead()) return resolve();
    const timer = setTimeout(() => {
      log.error({ pid: worker.process.pid, ms: killAfterMs }, 'front-end process still running past its shutdown grace; killing it');
      worker.process.kill('SIGKILL');
    }, killAfterMs);
    worker.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    worker.process.kill('SIGTERM');
  });
}

/** The supervisor's metrics listener: /metrics and /readyz for the whole group. */
export function startGroupMetrics(group: ProcessGroup, host: string, port: number): Promise<MetricsListener> {
  return startMetricsListener(host, port, { contentType: Registry.PROMETHEUS_CONTENT_TYPE, metrics: () => group.metrics() },
    () => group.readiness());
}
