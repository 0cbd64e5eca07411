// `rrscan ingest --listen`: a long-running dnstap receiver. It listens on
// every --listen address (unix sockets, TCP), speaks Frame Streams to each
// sender (sender.ts) and publishes what they send as new shards
// (publisher.ts) that a running `rrscan serve` picks up by its manifest
// watch (search/local/shard-set.ts) within about one flush interval.
//
// Admission. A tcp: connection from outside every --allow-cidr range (when
// any is given) is closed at accept, logged and counted; unix sockets are
// guarded by their file's permissions. At most --senders-max senders
// (LIMITS.liveSendersMax) are connected at once over all addresses. At the
// cap a new connection is admitted in place of, first, the started sender
// that has sent no frame for longest, if that is --sender-idle-seconds or
// more, or else the oldest handshake, if more than a sixteenth of the cap
// (LIMITS.liveHandshakesMax at 1,024) are mid-handshake; each closed sender
// is logged with why. Only when neither exists is the new connection closed
// (logged, counted): every connection then is a sender that sent a frame
// lately or one of a few handshakes. So senders that connect and then say
// nothing, before or after their handshake, cannot lock a DNS server out: it
// is admitted within --sender-idle-seconds (plus its own reconnect delay).
// A sender is never closed for silence below the cap (dnstap has no
// keep-alive; a quiet authority may be silent for minutes), nor ever during
// its handshake for silence: that has its own timeout (sender.ts), and a
// sender that just started has --sender-idle-seconds of grace. Choosing
// scans the senders, only at the cap (1,024 comparisons, microseconds).
// Each sender's own limits are in sender.ts.
//
// Backpressure: while the publisher is over its memory budget
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
import { performance } from 'node:perf_hooks';
import { LIMITS } from '../../config/limits.js';
import type { AddressAllowList } from '../../lib/address-allow-list.js';
import type { Observation } from '../../model/observation.js';
import { WriterLock } from '../../shard/file-lock.js';
import { newSensorStats, type SensorStats } from '../sensor.js';
import { formatListenAddress, removeStaleSocket, type ListenAddress } from './address.js';
import type { Log } from '../../lib/log.js';
import { LivePublisher, type PublishTotals } from './publisher.js';
import { Sender, type SenderSink } from './sender.js';

export interface ReceiverOptions {
  dataDir: string;
  listen: readonly ListenAddress[];
  flushSeconds: number;
  memoryRrsets: number;
  log: Log;
  /** --senders-max: senders connected at once (at most LIMITS.liveSendersMax). */
  sendersMax: number;
  /** --sender-idle-seconds, in ms: at the cap, a started sender silent this long may be closed to admit a new one. */
  senderIdleMs: number;
  /** --allow-cidr: tcp: connections from outside it are closed at accept; undefined admits any address. */
  allow?: AddressAllowList;
}

export interface ReceiverTotals {
  sendersNow: number;
  senders: number;
  /** Connections closed at once because --senders-max were connected and none could make room. */
  refusedConnections: number;
  /** tcp: connections closed at accept: their address is outside every --allow-cidr range. */
  notAllowedConnections: number;
  /** Started senders closed at the cap, having sent no frame for --sender-idle-seconds, to admit a new connection. */
  idleSendersClosed: number;
  /** Senders closed mid-handshake at the cap, the oldest of too many handshakes, to admit a new connection. */
  handshakesClosed: number;
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
  /** Senders mid-handshake, oldest first (senders itself is reordered as they resume). */
  private readonly handshaking = new Set<Sender>();
  /** Handshakes under way that no new connection closes: LIMITS.liveHandshakesMax scaled to --senders-max. */
  private readonly handshakesKept: number;
  private readonly endedStats: SensorStats = newSensorStats();
  private endedFrames = 0;
  private sendersSeen = 0;
  private refused = 0;
  private notAllowed = 0;
  private idleClosed = 0;
  private handshakesClosed = 0;
  private failed = 0;
  private paused = false;
  private stopping = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly publisher: LivePublisher;
  /** Where it listens, as --listen spells it, with real TCP ports. */
  readonly addresses: string[] = [];

  private constructor(private readonly opts: ReceiverOptions, private readonly writer: WriterLock) {
    this.handshakesKept = Math.max(1, Math.floor(opts.sendersMax * LIMITS.liveHandshakesMax / LIMITS.liveSendersMax));
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
    if (a.kind === 'tcp' && this.opts.allow !== undefined && !this.opts.allow.allows(socket.remoteAddress ?? '')) {
      this.notAllowed++;
      this.opts.log.warn({ listen: where, remote }, 'dnstap connection refused: address outside --allow-cidr');
      socket.destroy();
      return;
    }
    if (this.senders.size >= this.opts.sendersMax && !this.makeRoom()) {
      this.refused++;
      this.opts.log.warn({ listen: where, remote, limit: this.opts.sendersMax }, 'dnstap sender refused: too many senders');
      socket.destroy();
      return;
    }
    const id = `${where}#${++this.sendersSeen}`;
    const sender = new Sender(id, socket, this, this.opts.log);
    this.senders.add(sender);
    this.handshaking.add(sender);
    if (this.paused) sender.pause();
    this.opts.log.info({ sender: id, ...(remote !== undefined ? { remote } : {}), senders: this.senders.size }, 'dnstap sender connected');
  }

  /**
   * At the cap: makes room for one more connection (see the top of this
   * file), closing the sender whose slot it takes; false when there is none
   * to take. Senders closed already, whose socket's close event is still to
   * come, hold no connection and count as room.
   */
  private makeRoom(): boolean {
    const now = performance.now();
    let open = 0;
    let idlest: Sender | undefined;
    let idlestMs = -1;
    for (const s of this.senders) {
      if (s.closing) continue;
      open++;
      const idle = s.idleMs(now);
      if (idle !== undefined && idle > idlestMs) {
        idlest = s;
        idlestMs = idle;
      }
    }
    if (open < this.opts.sendersMax) return true;
    const limit = this.opts.sendersMax;
    if (idlest !== undefined && idlestMs >= this.opts.senderIdleMs) {
      this.idleClosed++;
      this.opts.log.warn({ sender: idlest.id, idleMs: Math.round(idlestMs), limit },
        'dnstap sender closed: silent the longest at the sender cap, to admit a new connection');
      idlest.evict(`closed at the sender cap (${limit}) to admit a new connection: no frame for ` +
        `${this.opts.senderIdleMs / 1000} s or more, the longest of all`);
      return true;
    }
    let handshakes = 0;
    let oldest: Sender | undefined;
    for (const s of this.handshaking) {
      if (s.closing) continue;
      handshakes++;
      oldest ??= s;
    }
    if (oldest !== undefined && handshakes > this.handshakesKept) {
      this.handshakesClosed++;
      this.opts.log.warn({ sender: oldest.id, handshakes, limit },
        'dnstap sender closed: the oldest of too many handshakes at the sender cap, to admit a new connection');
      oldest.evict(`closed at the sender cap (${limit}) to admit a new connection: the oldest of more than ` +
        `${this.handshakesKept} handshakes under way`);
      return true;
    }
    return false;
  }

  started(sender: Sender): void {
    this.handshaking.delete(sender);
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
    this.handshaking.delete(sender);
    if (!this.senders.delete(sender)) return;
    const st = sender.stats;
    const e = this.endedStats;
    for (const k of Object.keys(e) as (keyof SensorStats)[]) e[k] += st[k];
    this.endedFrames += sender.frames;
    const clean = CLEAN_ENDS.has(reason);
    if (!clean && !sender.evicted) this.failed++;
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
      sendersNow: this.senders.size, senders: this.sendersSeen, refusedConnections: this.refused,
      notAllowedConnections: this.notAllowed, idleSendersClosed: this.idleClosed, handshakesClosed: this.handshakesClosed,
      sendersFailed: this.failed,
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
