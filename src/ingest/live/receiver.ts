// `rrscan ingest --listen`: a long-running dnstap receiver. It listens on
// every --listen address (unix sockets, TCP), speaks Frame Streams to each
// sender (sender.ts) and publishes what they send as new shards
// (publisher.ts) that a running `rrscan serve` picks up by its manifest
// watch (search/local/shard-set.ts) within about one flush interval.
//
// Limits: LIMITS.liveSendersMax senders at once over all addresses (one
// more is closed at once, logged); each sender's own limits are in
// sender.ts. Backpressure: while the publisher is over its memory budget
// every sender is paused, and new ones start paused; that includes the
// whole time a failed flush (a full disk) waits for its retry (publisher.ts).
//
// Logs (pino, JSON lines on stderr): each sender's connect and disconnect
// (with its reason and its frames, responses, RRsets, refusals and
// rejections), rejected frames (the first few per sender), every flush, and
// running totals every LIMITS.liveTotalsLogMs.
//
// stop() (SIGTERM, SIGINT) stops listening, closes the senders, publishes
// what is held (a failed flush gets one last try) and releases the writer
// lock.

import { existsSync, rmSync } from 'node:fs';
import net from 'node:net';
import { LIMITS } from '../../config/limits.js';
import type { Observation } from '../../model/observation.js';
import { WriterLock } from '../../shard/file-lock.js';
import { newSensorStats, type SensorStats } from '../sensor.js';
import { formatListenAddress, removeStaleSocket, type ListenAddress } from './address.js';
import type { LiveLog } from './log.js';
import { LivePublisher, type PublishTotals } from './publisher.js';
import { Sender, type SenderSink } from './sender.js';

export interface ReceiverOptions {
  dataDir: string;
  listen: readonly ListenAddress[];
  flushSeconds: number;
  memoryRrsets: number;
  log: LiveLog;
}

export interface ReceiverTotals {
  sendersNow: number;
  senders: number;
  /** Connections closed at once because LIMITS.liveSendersMax were connected. */
  refusedConnections: number;
  /** Senders closed for a protocol error, a limit or a malformed frame. */
  sendersFailed: number;
  frames: number;
  responses: number;
  /** RRsets observed (before aggregation). */
  observations: number;
  /** Records refused as outside the response's bailiwick. */
  outOfBailiwick: number;
  rejected: number;
  published: PublishTotals;
}

/** Reasons a sender ends that are not its fault. */
const CLEAN_ENDS = new Set(['finished (STOP)', 'receiver stopping']);

export class LiveReceiver implements SenderSink {
  private readonly servers: net.Server[] = [];
  /** Unix socket files this receiver made (and deletes when it stops). */
  private readonly socketFiles: string[] = [];
  private readonly senders = new Set<Sender>();
  private readonly endedStats: SensorStats = newSensorStats();
  private endedFrames = 0;
  private sendersSeen = 0;
  private refused = 0;
  private failed = 0;
  private paused = false;
  private stopping = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly publisher: LivePublisher;
  /** Where it listens, as --listen spells it, with real TCP ports. */
  readonly addresses: string[] = [];

  private constructor(private readonly opts: ReceiverOptions, private readonly writer: WriterLock) {
    const label = `live ${opts.listen.map((a) => formatListenAddress(a)).join(' ')}`.slice(0, 1000);
    this.publisher = new LivePublisher(opts.dataDir, label, opts.memoryRrsets, writer, opts.log, () => this.drained());
  }

  static async start(opts: ReceiverOptions): Promise<LiveReceiver> {
    const r = new LiveReceiver(opts, WriterLock.acquire(opts.dataDir));
    try {
      for (const a of opts.listen) r.addresses.push(await r.listen(a));
    } catch (err) {
      await r.stop();
      throw err;
    }
    r.timers.push(setInterval(() => {
      if (!r.publisher.busy) void r.publisher.flush('interval');
    }, opts.flushSeconds * 1000));
    r.timers.push(setInterval(() => r.logTotals(), LIMITS.liveTotalsLogMs));
    return r;
  }

  private async listen(a: ListenAddress): Promise<string> {
    if (a.kind === 'unix') await removeStaleSocket(a.path);
    const server = net.createServer((socket) => this.accept(socket, a));
    this.servers.push(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      if (a.kind === 'unix') server.listen(a.path, resolve);
      else server.listen(a.port, a.host, resolve);
    });
    server.on('error', (err) => this.opts.log.error({ err: err.message }, 'listener error'));
    if (a.kind === 'unix') this.socketFiles.push(a.path);
    const bound = server.address();
    return formatListenAddress(a, typeof bound === 'object' && bound !== null ? bound.port : undefined);
  }

  private accept(socket: net.Socket, a: ListenAddress): void {
    const where = formatListenAddress(a);
    const remote = socket.remoteAddress !== undefined ? `${socket.remoteAddress}:${socket.remotePort}` : undefined;
    if (this.senders.size >= LIMITS.liveSendersMax) {
      this.refused++;
      this.opts.log.warn({ listen: where, remote, limit: LIMITS.liveSendersMax }, 'dnstap sender refused: too many senders');
      socket.destroy();
      return;
    }
    const id = `${where}#${++this.sendersSeen}`;
    const sender = new Sender(id, socket, this, this.opts.log);
    this.senders.add(sender);
    if (this.paused) sender.pause();
    this.opts.log.info({ sender: id, ...(remote !== undefined ? { remote } : {}), senders: this.senders.size }, 'dnstap sender connected');
  }

  take(o: Observation): void {
    this.publisher.take(o);
    if (!this.paused && !this.stopping && this.publisher.over) {
      this.paused = true;
      for (const s of this.senders) s.pause();
      this.opts.log.warn({ held: this.publisher.held }, 'memory budget reached: senders paused until the flush is done');
    }
  }

  private drained(): void {
    if (!this.paused || this.publisher.over) return;
    this.paused = false;
    // A resumed sender takes the frames it holds at once and may fill the budget again: the rest then stay
    // paused until the next flush. Each resumed sender moves to the back, so none waits behind the others forever.
    for (const s of [...this.senders]) {
      if (this.paused) break;
      if (!this.senders.delete(s)) continue;
      this.senders.add(s);
      s.resume();
    }
    if (!this.paused) this.opts.log.info({}, 'senders resumed');
  }

  ended(sender: Sender, reason: string): void {
    if (!this.senders.delete(sender)) return;
    const st = sender.stats;
    const e = this.endedStats;
    for (const k of Object.keys(e) as (keyof SensorStats)[]) e[k] += st[k];
    this.endedFrames += sender.frames;
    const clean = CLEAN_ENDS.has(reason);
    if (!clean) this.failed++;
    const fields = {
      sender: sender.id, reason, frames: sender.frames, responses: st.responses, rrsets: st.observations,
      outOfBailiwick: st.outOfBailiwick, rejected: st.rejected, senders: this.senders.size,
    };
    if (clean) this.opts.log.info(fields, 'dnstap sender disconnected');
    else this.opts.log.warn(fields, 'dnstap sender disconnected');
  }

  totals(): ReceiverTotals {
    let frames = this.endedFrames;
    let responses = this.endedStats.responses;
    let observations = this.endedStats.observations;
    let outOfBailiwick = this.endedStats.outOfBailiwick;
    let rejected = this.endedStats.rejected;
    for (const s of this.senders) {
      frames += s.frames;
      responses += s.stats.responses;
      observations += s.stats.observations;
      outOfBailiwick += s.stats.outOfBailiwick;
      rejected += s.stats.rejected;
    }
    return {
      sendersNow: this.senders.size, senders: this.sendersSeen, refusedConnections: this.refused, sendersFailed: this.failed,
      frames, responses, observations, outOfBailiwick, rejected, published: { ...this.publisher.totals },
    };
  }

  private logTotals(): void {
    this.opts.log.info({ event: 'totals', held: this.publisher.held, ...this.totals() }, 'running totals');
  }

  /** Stops listening, closes every sender, publishes what is held; resolves with the final totals. */
  async stop(): Promise<ReceiverTotals> {
    for (const t of this.timers) clearInterval(t);
    // close() waits for the open connections, so they are closed after it is called.
    const closed = Promise.all(this.servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    // Frames already read count as held, paused senders' included: taken past the budget, then published.
    this.stopping = true;
    for (const s of [...this.senders]) {
      s.drain();
      s.fail('receiver stopping');
    }
    await closed;
    for (const p of this.socketFiles) if (existsSync(p)) rmSync(p, { force: true });
    await this.publisher.close();
    this.writer.release();
    const totals = this.totals();
    this.opts.log.info({ event: 'totals', held: this.publisher.held, ...totals }, 'receiver stopped');
    return totals;
  }
}
