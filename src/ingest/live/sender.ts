// One connected dnstap sender: the receiving end of a bidirectional Frame
// Streams connection (fstrm's "reader").
//
//   sender: READY (content types)   ->   we: ACCEPT "protobuf:dnstap.Dnstap"
//   sender: START (content type)
//   sender: data frames ...
//   sender: STOP                    ->   we: FINISH, then close
//
// Only the bidirectional form is accepted: every socket sender we know of
// (BIND, Unbound, Knot Resolver, PowerDNS, dnsdist, CoreDNS, fstrm) starts
// with READY, and a connection that starts otherwise is more likely a
// stranger than a unidirectional writer.
//
// Frames are cut as the file reader cuts them (../frame-streams.ts: the
// same bounds and wording), each data frame is decoded by the file
// reader's decodeDataFrame (../dnstap.ts) and observed by observeResponse
// (../sensor.ts), so the bailiwick rule and its refusals are the same for
// files and sockets.
//
// A sender is closed, with the reason logged, when it breaks the protocol
// (a data frame before START, an unexpected control frame, a content type
// other than dnstap's), when a frame length is beyond
// LIMITS.dnstapFrameBytesMax or a control frame beyond
// LIMITS.dnstapControlFrameBytesMax (we never wait for the bytes of a 1 GB
// frame), when a frame's protobuf is malformed (no later boundary can be
// trusted), or when the handshake takes longer than LIMITS.liveHandshakeMs.
// What it sent before stays: every frame is checked whole before its
// records are kept. A response whose DNS message does not parse is counted
// as rejected and the stream goes on, as the file reader does.
//
// Idleness, for the receiver's sender cap: a started sender is idle for the
// time since its last whole frame (control or data) was read, counting only
// time the receiver was reading it (a sender paused for backpressure is not
// silent; its clock stops). A sender mid-handshake has no idleness: it is
// judged by the handshake timeout alone.

import { performance } from 'node:perf_hooks';

import type { Socket } from 'node:net';
import { LIMITS } from '../../config/limits.js';
import type { Observation } from '../../model/observation.js';
import { DNSTAP_CONTENT_TYPE, FrameRejection, decodeDataFrame } from '../dnstap.js';
import {
  CONTROL_ACCEPT, CONTROL_FINISH, CONTROL_READY, CONTROL_START, CONTROL_STOP, controlName, encodeControl, frameHead, parseControl,
  startRefusal, type ControlFrame,
} from '../frame-streams.js';
import { newSensorStats, observeResponse, type SensorStats } from '../sensor.js';
import type { Log } from '../../lib/log.js';

type Phase = 'ready' | 'start' | 'data' | 'stopped' | 'closed';

export interface SenderSink {
  /** Takes one observation (the receiver pauses every sender while it is over its memory budget). */
  take(o: Observation): void;
  /** The sender finished its handshake (START). */
  started(sender: Sender): void;
  /** The sender's connection ended; `reason` says why. */
  ended(sender: Sender, reason: string): void;
}


export class Sender {
  readonly stats: SensorStats = newSensorStats();
  /** Data frames read (stats.packets counts the same; kept apart for the log's plain name). */
  frames = 0;
  private phase: Phase = 'ready';
  private buf: Buffer = Buffer.allocUnsafe(LIMITS.liveReadBufferBytes);
  /** The same memory as a plain Uint8Array: parseMessage copies rdata out of one, and must (see ChunkedFile.bytes). */
  private bytes = new Uint8Array(this.buf.buffer, this.buf.byteOffset, this.buf.length);
  private start = 0;
  private end = 0;
  private readonly handshakeTimer: NodeJS.Timeout;
  private rejectsLogged = 0;
  private paused = false;
  private eof = false;
  private socketClosed = false;
  private closeReason: string | undefined;
  /** performance.now() of the last whole frame read, or of the connect; moved on by the time spent paused. */
  private lastFrameAt = performance.now();
  private pausedAt = 0;
  /** Closed by the receiver to admit another connection (not the sender's fault). */
  evicted = false;

  constructor(readonly id: string, private readonly socket: Socket, private readonly sink: SenderSink,
    private readonly log: Log) {
    this.handshakeTimer = setTimeout(() => this.fail(`handshake not finished within ${LIMITS.liveHandshakeMs} ms`),
      LIMITS.liveHandshakeMs);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('end', () => this.onEnd());
    socket.on('error', (err) => this.fail(`socket error: ${err.message}`));
    socket.on('close', () => this.onClose());
  }

  /**
   * Stops taking frames (the receiver is over its memory budget): the rest
   * of the chunk in hand waits in the buffer, the socket stops reading, and
   * the kernel's buffers and then TCP push back on the sender.
   */
  pause(): void {
    if (!this.paused) this.pausedAt = performance.now();
    this.paused = true;
    this.socket.pause();
  }

  /** Takes the frames waiting in the buffer, then reads the socket again (unless that filled the budget once more). */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.lastFrameAt += performance.now() - this.pausedAt;
    this.process();
    if (this.paused) return;
    if (!this.eof) {
      if (this.phase !== 'closed') this.socket.resume();
      return;
    }
    this.atEof();
    if (this.socketClosed) this.ended();
  }

  /** Takes the whole frames already read, paused or not (the receiver is stopping and takes no more). */
  drain(): void {
    this.paused = false;
    this.process();
  }

  /**
   * Milliseconds of reading without a whole frame from a started sender;
   * undefined for a sender mid-handshake, or one closed (its socket, or by
   * us): those are not the receiver's to close for silence.
   */
  idleMs(now: number): number | undefined {
    if ((this.phase !== 'data' && this.phase !== 'stopped') || this.socketClosed) return undefined;
    return (this.paused ? this.pausedAt : now) - this.lastFrameAt;
  }

  /** Mid-handshake (READY / ACCEPT / START not yet done) and not closed. */
  get handshaking(): boolean {
    return this.phase === 'ready' || this.phase === 'start';
  }

  /** Closed by us, its socket's close still to come: it holds no connection any more. */
  get closing(): boolean {
    return this.phase === 'closed';
  }

  /** Closes the connection to admit another one: logged as `reason`, not counted as the sender's failure. */
  evict(reason: string): void {
    this.evicted = true;
    this.fail(reason);
  }

  /** Closes the connection with a logged reason; what was read before stays. */
  fail(reason: string): void {
    if (this.phase === 'closed') return;
    this.closeReason ??= reason;
    this.phase = 'closed';
    this.socket.destroy();
  }

  /** Whether frames are still read (not after STOP or a close); a getter, so the read loop sees fail() take effect. */
  private get reading(): boolean {
    return this.phase !== 'closed' && this.phase !== 'stopped';
  }

  /** The sender's end of the stream; while paused, judged once the frames held are taken. */
  private onEnd(): void {
    this.eof = true;
    if (!this.paused) this.atEof();
  }

  private atEof(): void {
    if (this.phase === 'stopped' || this.phase === 'closed') return;
    const held = this.end - this.start;
    this.fail(held > 0 ? `closed inside a frame (${held} bytes of it dropped)`
      : this.phase === 'data' ? 'closed without STOP' : `closed during the handshake (waiting for ${this.phase.toUpperCase()})`);
  }

  private onClose(): void {
    clearTimeout(this.handshakeTimer);
    this.socketClosed = true;
    // A sender that ended while paused closes at once (no half-open sockets): its frames are still to be taken.
    if (this.paused && this.eof && this.reading) return;
    this.ended();
  }

  private ended(): void {
    if (this.reading) this.closeReason ??= 'connection reset';
    this.phase = 'closed';
    this.sink.ended(this, this.closeReason ?? 'finished (STOP)');
  }

  private onData(chunk: Buffer): void {
    if (!this.reading) return;
    this.append(chunk);
    this.process();
  }

  /** Takes the whole frames in the buffer, until it runs out, the sender is closed or paused. */
  private process(): void {
    let took = false;
    while (this.reading && !this.paused) {
      const head = frameHead(this.bytes, this.start, this.end);
      if (head.kind === 'short') break;
      if (head.kind === 'data' && this.phase !== 'data') {
        this.fail(`data frame before the handshake finished (expected ${this.phase.toUpperCase()})`);
        break;
      }
      if (head.bad !== undefined) {
        this.fail(head.bad);
        break;
      }
      if (this.end - this.start < head.size) {
        // A control frame is small; a data frame may need a larger buffer.
        if (head.kind === 'data') this.reserve(head.size);
        break;
      }
      const from = this.start + head.body;
      const to = this.start + head.size;
      this.start = to;
      took = true;
      if (head.kind === 'data') {
        this.onFrame(from, to);
        continue;
      }
      const control = parseControl(this.bytes, from, to);
      if (typeof control === 'string') this.fail(control);
      else this.onControl(control);
    }
    // Once per chunk, not per frame: the clock is read at most once per socket read.
    if (took) this.lastFrameAt = performance.now();
    // A big frame grew the buffer; an idle sender goes back to the small one.
    if (this.start === this.end && this.buf.length > LIMITS.liveReadBufferBytes) {
      this.setBuffer(Buffer.allocUnsafe(LIMITS.liveReadBufferBytes));
    }
  }

  /** One data frame bytes[from, to). */
  private onFrame(from: number, to: number): void {
    this.frames++;
    const r = decodeDataFrame(this.bytes, from, to, this.stats);
    if (r === undefined) return;
    if (r instanceof FrameRejection) {
      this.stats.rejected++;
      if (r.malformed) this.fail(`frame ${this.frames}: ${r.reason}`);
      else if (this.rejectsLogged++ < LIMITS.liveRejectsLoggedPerSender) {
        this.log.warn({ sender: this.id, frame: this.frames, reason: r.reason }, 'dnstap frame rejected');
      }
      return;
    }
    const obs = observeResponse(r.msg, r.timeSec, r.bailiwick, this.stats);
    for (let i = 0; i < obs.length; i++) this.sink.take(obs[i]!);
  }

  private onControl(c: ControlFrame): void {
    const name = controlName(c.type);
    switch (this.phase) {
      case 'ready':
        if (c.type !== CONTROL_READY) return this.fail(`expected READY, got ${name}`);
        if (!c.contentTypes.includes(DNSTAP_CONTENT_TYPE)) {
          return this.fail(`READY offers ${JSON.stringify(c.contentTypes)}, not "${DNSTAP_CONTENT_TYPE}"`);
        }
        this.socket.write(encodeControl(CONTROL_ACCEPT, DNSTAP_CONTENT_TYPE));
        this.phase = 'start';
        return;
      case 'start': {
        if (c.type !== CONTROL_START) return this.fail(`expected START, got ${name}`);
        const refusal = startRefusal(c, DNSTAP_CONTENT_TYPE);
        if (refusal !== undefined) return this.fail(refusal);
        clearTimeout(this.handshakeTimer);
        this.phase = 'data';
        this.sink.started(this);
        this.log.info({ sender: this.id }, 'dnstap sender started');
        return;
      }
      case 'data':
        if (c.type !== CONTROL_STOP) return this.fail(`unexpected ${name} in a started stream`);
        this.phase = 'stopped';
        this.socket.end(encodeControl(CONTROL_FINISH));
        return;
      case 'stopped':
      case 'closed':
        return;
    }
  }

  /** Appends a chunk after the unread bytes, moving them to the front or growing the buffer first when needed. */
  private append(chunk: Buffer): void {
    this.reserve(this.end - this.start + chunk.length);
    chunk.copy(this.buf, this.end);
    this.end += chunk.length;
  }

  /**
   * Makes room for `need` unread bytes. A frame is at most
   * dnstapFrameBytesMax + 4 bytes, but a chunk may carry the next frame's
   * start too, so the buffer may reach that plus one socket chunk.
   */
  private reserve(need: number): void {
    if (this.start + need <= this.buf.length) return;
    if (need <= this.buf.length) {
      this.buf.copyWithin(0, this.start, this.end);
      this.end -= this.start;
      this.start = 0;
      return;
    }
    let size = this.buf.length;
    while (size < need) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buf.copy(grown, 0, this.start, this.end);
    this.setBuffer(grown);
  }

  /** Replaces the buffer by `b`, which holds the unread bytes at its front. */
  private setBuffer(b: Buffer): void {
    this.end -= this.start;
    this.start = 0;
    this.buf = b;
    this.bytes = new Uint8Array(b.buffer, b.byteOffset, b.length);
  }
}
