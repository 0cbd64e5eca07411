// SafWriter: the NDJSON "streaming API framing" (SAF) of one 200 response,
// written to a uWS HttpResponse with backpressure.
//
// Contract: the ResultSink of search/sink.ts. begin() commits to status
// 200, the headers and {"cond":"begin"}; text() appends result lines; end()
// writes the one terminator (render/saf.ts holds the framing lines).
// Nothing goes to the socket until the first chunk is full, the response
// ends, or keepAliveMs passes: a small lookup (up to LIMITS.corkPieceBytes)
// leaves in ONE cork and one send (status, headers, Content-Length body)
// instead of three, which is most of what a small request costs the server.
//   Every line ends with "\n"; no blank line is ever written (a widely used
//   C client aborts on one).
// Lines are gathered into chunks of LIMITS.writeChunkBytes, each written
// at once: a uWS write per line measured 2.5-27 MB/s here, 64 KB chunks
// about 1,270 MB/s. A chunk goes to uWS in pieces of at most
// LIMITS.corkPieceBytes, a cork each: uWS 20.30 drops a corked write that
// does not fit its cork buffer when the socket pushes back, which broke
// large answers over TLS (limits.ts says how). When uWS reports
// backpressure, `writable` turns false until onWritable fires; producers
// check it and wait on whenWritable().
// While the response is open and nothing has been written for
// keepAliveMs, what is pending goes out, or a `{}` line when nothing is, so
// that clients see results promptly and proxies do not time the stream out
// during a long scan.
// Ending. A stream whose reader has kept up ends in one corked write
// (status, headers, the last lines and the terminator). A stream whose
// socket has pushed back (a slow reader), and every stream a shutdown ends,
// hands over its terminator only once uWS holds nothing else for it, so that
// the process can tell when the stream has drained: uWS (this build) has no
// drained event, drains its own buffer only when the onWritable callback
// writes (or once the response has ended, out of our sight), and a write()
// returns false whenever its buffer could not be sent first (in a cork too:
// the first bytes written try it). So the last lines, or a `{}` keep-alive
// line once none are left, are written at each writable event until one
// write returns true; in the same cork the terminator and the end of the
// response follow, one send to a socket with nothing queued in uWS. Until
// then the stream is open (`fate` unset); whenFinished() resolves with the
// terminator, or with `cut` or `hangup` when the socket closed first.
// shutdown() ends a stream that way with a `failed` terminator and stops its
// producer as a hang-up would; cut() closes one still draining when the
// shutdown grace is over.
// HTTP/1.0 (`whole`, server/http10.ts): nothing goes out before the end;
// the lines are gathered, up to LIMITS.http10AnswerBytesMax (past it the
// answer ends there with a `failed` terminator and the producer is
// stopped), and the answer goes with Content-Length through tryEnd(), which
// hands uWS only what the socket takes: the last tryEnd tells exactly when
// the answer has drained.
// It counts itself in its request's endpoint family (serving-stats.ts): the
// status line and its time, bytes, keep-alives, the terminator and its time,
// or, for a stream that never gets one, whether it was cut (a slow reader
// uWS gave up on, or the shutdown grace) or the client hung up.

import { LIMITS } from '../config/limits.js';
import { STREAM_MESSAGES } from '../errors/catalogue.js';
import { BEGIN_LINE, KEEPALIVE_LINE, terminatorLine, type Terminator } from '../render/saf.js';
import type { ResultSink } from '../search/sink.js';
import type { FamilyStats } from './serving-stats.js';
import { CLOSE, CONNECTION, CONTENT_TYPE, statusBytes, wire } from './wire.js';
import type { HttpResponse } from '../lib/uws.js';

const STATUS_200 = statusBytes(200);
const NDJSON = wire('application/x-ndjson');

/**
 * Where a stream counts itself: the request's Exchange (its start, its
 * endpoint family's stats, and that its status line has gone out).
 */
export interface StreamMeter {
  readonly started: number;
  readonly family: FamilyStats;
  markAnswered(status: number, nowMs: number): void;
}

/**
 * A stream aborted after its socket had pushed back this long was cut by
 * uWS for a reader that stopped reading (it ends a response after 10 s
 * without progress, checking every 4 s); a client that hangs up is seen
 * at once, so a shorter wait is a hang-up.
 */
const SLOW_READER_CUT_MS = 4_000;

/**
 * One timer for every open stream with the same keep-alive interval: a
 * setInterval and clearInterval per response cost a small lookup about as
 * much as its own search. The timer stops at the first tick that finds no
 * stream open. A stream joins the ticker's set at the end of the event-loop
 * turn it began in, if it is still open then: most answers end within that
 * turn, and never touch the set (a keep-alive is due keepAliveMs later at
 * the earliest, many turns on).
 */
class KeepAliveTicker {
  private readonly writers = new Set<SafWriter>();
  private timer: NodeJS.Timeout | undefined;
  /** Streams begun in this turn, joining at its end (adopt). */
  private fresh: SafWriter[] = [];

  constructor(private readonly periodMs: number) {}

  add(w: SafWriter): void {
    if (this.fresh.length === 0) setImmediate(this.adopt);
    this.fresh.push(w);
  }

  private readonly adopt = (): void => {
    const fresh = this.fresh;
    this.fresh = [];
    for (const w of fresh) if (w.keepingAlive(this)) this.writers.add(w);
    if (this.writers.size === 0 || this.timer !== undefined) return;
    this.timer = setInterval(() => {
      if (this.writers.size === 0) {
        clearInterval(this.timer);
        this.timer = undefined;
        return;
      }
      for (const writer of this.writers) writer.keepAliveTick();
    }, this.periodMs);
    this.timer.unref();
  };

  /** A stream that no longer needs keep-alives (one still in `fresh` is skipped when the turn ends). */
  delete(w: SafWriter): void {
    this.writers.delete(w);
  }
}

const tickers = new Map<number, KeepAliveTicker>();

function tickerFor(keepAliveMs: number): KeepAliveTicker {
  let t = tickers.get(keepAliveMs);
  if (t === undefined) {
    t = new KeepAliveTicker(Math.max(10, Math.floor(keepAliveMs / 2)));
    tickers.set(keepAliveMs, t);
  }
  return t;
}

/**
 * `chunk` as what one cork may carry: itself when it surely fits (every
 * UTF-16 unit is at most 3 bytes of UTF-8), else its UTF-8 bytes in pieces
 * of LIMITS.corkPieceBytes. Byte pieces, not string slices: a cut may fall
 * inside a line or a character, which chunked framing does not mind.
 */
function corkPieces(chunk: string): (string | Uint8Array)[] {
  if (chunk.length * 3 <= LIMITS.corkPieceBytes) return [chunk];
  const bytes = Buffer.from(chunk, 'utf8');
  if (bytes.length <= LIMITS.corkPieceBytes) return [bytes];
  const pieces: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += LIMITS.corkPieceBytes) pieces.push(bytes.subarray(at, at + LIMITS.corkPieceBytes));
  return pieces;
}

/**
 * The Content-Type value and the header lines after it, as one value for one
 * writeHeader: uWS (20.30) writes `name: value\r\n` for each call and looks
 * at neither, so `application/x-ndjson\r\nX-RateLimit-Limit: unlimited\r\n...`
 * puts the same bytes on the wire as five calls, for a fifth of their cost
 * (0.6 us of a bare uWS answer's 3.6 with an unlimited key's headers, wrk
 * -t1 -c64; issue 22). A header list a grant hands over again and again (an
 * unlimited key's, made once per key by the gate) gets its block as bytes
 * the second time it comes in a row, kept as long as the list lives; a
 * metered key's lists are new each time and are joined as text. The values
 * are the gate's own (quota figures), never the client's.
 */
const HEAD_BLOCKS = new WeakMap<Headers, Buffer>();
let seenOnce: Headers | undefined;

function headBlock(headers: Headers): Buffer | string {
  const block = HEAD_BLOCKS.get(headers);
  if (block !== undefined) return block;
  let text = 'application/x-ndjson';
  for (const [k, v] of headers) text += `\r\n${k}: ${v}`;
  if (headers !== seenOnce) {
    seenOnce = headers;
    return text;
  }
  const made = Buffer.from(text, 'latin1');
  HEAD_BLOCKS.set(headers, made);
  return made;
}

type Headers = ReadonlyArray<readonly [string, string]>;

/** Bytes of a whole (HTTP/1.0) answer handed to the socket in one turn of the event loop: about a millisecond of sends. */
const WHOLE_BYTES_PER_TURN = 1 << 20;

/**
 * How a stream ended: the terminator it handed to the socket, `cut` (the
 * server closed it before its reader had taken what came before the
 * terminator: uWS's slow-reader timeout or the shutdown grace), or `hangup`.
 */
export type StreamFate = Terminator | 'cut' | 'hangup';

export class SafWriter implements ResultSink {
  /** The front end's list of open streams (app.ts OpenStreams): whether this one is on it, and its neighbours there. */
  listed = false;
  openPrev: SafWriter | undefined;
  openNext: SafWriter | undefined;
  /** Lines not yet handed to uWS (a streamed answer). */
  private pending = '';
  /** A whole (HTTP/1.0) answer's lines, kept apart: they are sent part by part, never joined (sendWhole). */
  private parts: (string | Buffer)[] | undefined;
  private pendingBytes = 0;
  private backpressured = false;
  /** Date.now() when the socket last pushed back. */
  private backpressuredAt = 0;
  /** The socket has pushed back at least once: the end waits for uWS's buffer (module comment). */
  private slowed = false;
  private writableHandler = false;
  // Made when first needed: most answers end in the turn they begin, and wait for nothing.
  private waiters: (() => void)[] | undefined;
  private abortListeners: (() => void)[] | undefined;
  private finishWaiters: ((fate: StreamFate) => void)[] | undefined;
  /** Date.now() of the last write (begin() sets it first). */
  private lastWrite = 0;
  private keepAlive: KeepAliveTicker | undefined;
  /** end() was called: nothing more is appended. */
  private ended = false;
  /** The terminator of a drained end, until uWS has sent what is before it. */
  private closing: { line: string; cond: Terminator } | undefined;
  /** The socket closed (uWS's onAborted): the client hung up, uWS gave up on it, or cut() closed it. */
  private gone = false;
  /** The producer was told to stop while the stream ends by itself (shutdown). */
  private stopped = false;
  /** cut() is closing the socket. */
  private cutting = false;
  private fate: StreamFate | undefined;
  /** Headers of the 200, until the first write sends them. */
  private headers: ReadonlyArray<readonly [string, string]> | undefined;
  /**
   * Bytes gathered per write: LIMITS.writeChunkBytes, until the socket first
   * pushes back; then LIMITS.slowWriteChunkBytes. A stalled socket reports
   * writable only once it has drained what uWS holds, and uWS ends a
   * response after 10 s without progress: a 64 KB chunk took a 16 KB/s
   * reader 7 s to drain, a 16 KB one 1 s, and uWS holds less per stalled
   * reader. (It does not save a reader whose own receive window stays
   * closed for 10 s; see README "Known limits".)
   */
  private chunkBytes: number = LIMITS.writeChunkBytes;

  /** `whole`: an HTTP/1.0 answer, gathered and sent whole (module comment). */
  constructor(private readonly res: HttpResponse, private readonly meter: StreamMeter,
    private readonly keepAliveMs: number = LIMITS.keepAliveMs, private readonly whole = false) {}

  /** The producer must stop: the client has gone, or the server is ending the stream (ResultSink). */
  get aborted(): boolean {
    return this.gone || this.stopped;
  }

  /** How the stream ended, once it has (undefined while it is open or draining). */
  get outcome(): StreamFate | undefined {
    return this.fate;
  }

  /** Resolves with the stream's fate once it has one. */
  whenFinished(): Promise<StreamFate> {
    if (this.fate !== undefined) return Promise.resolve(this.fate);
    return new Promise((resolve) => (this.finishWaiters ??= []).push(resolve));
  }

  /** Must be called once the request is known to be aborted (from res.onAborted). */
  markAborted(): void {
    if (this.gone) return;
    this.gone = true;
    if (this.fate === undefined) {
      const family = this.meter.family;
      if (this.cutting) {
        family.shutdownCuts++;
        this.settle('cut');
      } else if (this.backpressured && Date.now() - this.backpressuredAt >= SLOW_READER_CUT_MS) {
        family.slowReaderCuts++;
        this.settle('cut');
      } else {
        family.hangups++;
        this.settle('hangup');
      }
    }
    this.stopKeepAlive();
    this.wake();
  }

  /**
   * Ends the stream with a `failed` terminator carrying `message` (a
   * server shutdown) once what is buffered has drained, and tells the
   * producer to stop as if the client had gone: its abort listeners run and
   * its writes are ignored. Nothing happens to a stream that has ended.
   */
  shutdown(message: string): void {
    if (!this.ended && !this.gone) this.finish('failed', message, true);
    this.stop();
  }

  /** Tells the producer to stop as a hang-up would, while the stream ends by itself. */
  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.wake();
  }

  /**
   * Closes the socket of a stream that has not handed over its terminator
   * (the shutdown grace is over): its reader gets no terminator, and the
   * stream is counted and logged as cut. True when it was cut.
   */
  cut(): boolean {
    if (this.fate !== undefined || this.gone) return false;
    this.cutting = true;
    this.res.close();
    // uWS runs onAborted from close(), which calls markAborted(); this is for a build that would not.
    this.markAborted();
    return true;
  }

  /** Runs `f` once if the client goes away (at once if it already has). */
  onAbort(f: () => void): void {
    if (this.aborted) f();
    else (this.abortListeners ??= []).push(f);
  }

  get writable(): boolean {
    return !this.backpressured && !this.aborted && !this.ended;
  }

  get done(): boolean {
    return this.ended || this.aborted;
  }

  begin(headers: ReadonlyArray<readonly [string, string]>): void {
    if (this.aborted) return;
    this.headers = headers;
    this.text(BEGIN_LINE);
    this.lastWrite = Date.now();
    // A keep-alive line would wait with the rest of a whole answer.
    if (this.whole) return;
    this.keepAlive = tickerFor(this.keepAliveMs);
    this.keepAlive.add(this);
  }

  /** Whether this stream still wants keep-alives from `ticker` (it has not ended meanwhile). */
  keepingAlive(ticker: KeepAliveTicker): boolean {
    return this.keepAlive === ticker;
  }

  /** Called by the ticker: after keepAliveMs of silence, send what is pending, or a `{}` line. */
  keepAliveTick(): void {
    if (!this.ended && !this.aborted && !this.backpressured && Date.now() - this.lastWrite >= this.keepAliveMs) {
      if (this.pendingBytes === 0) {
        this.pending += KEEPALIVE_LINE;
        this.pendingBytes += KEEPALIVE_LINE.length;
        this.meter.family.keepAlives++;
      }
      this.flush();
    }
  }

  /** Status and headers, once, inside the cork of the first write; `nowMs` is performance.now() or undefined to read it. */
  private writeHead(nowMs?: number): void {
    const headers = this.headers;
    if (headers === undefined) return;
    this.headers = undefined;
    this.meter.markAnswered(200, nowMs ?? performance.now());
    this.res.writeStatus(STATUS_200);
    this.res.writeHeader(CONTENT_TYPE, headers.length === 0 ? NDJSON : headBlock(headers));
    if (this.whole) this.res.writeHeader(CONNECTION, CLOSE);
  }

  /** Appends lines, each ending in a newline. */
  text(lines: string): void {
    if (this.ended || this.aborted || lines.length === 0) return;
    if (this.whole && this.pendingBytes + lines.length > LIMITS.http10AnswerBytesMax) {
      // What is gathered goes, and says the answer goes no further.
      this.finish('failed', STREAM_MESSAGES.HTTP10_TOO_LARGE, false);
      this.stop();
      return;
    }
    if (this.whole) (this.parts ??= []).push(lines);
    else this.pending += lines;
    this.pendingBytes += lines.length;
    if (this.pendingBytes >= this.chunkBytes) this.flush();
  }

  /**
   * Appends lines given as bytes (a flexible search's runs, as the tier
   * rendered them: ASCII). A short run joins the pending text and leaves
   * with it (a small answer is still one write with its terminator); a
   * longer one goes to uWS as it is, after what is pending, in pieces that
   * fit a cork: no string is made of it and nothing converts it.
   */
  bytes(lines: Uint8Array): void {
    if (this.ended || this.aborted || lines.length === 0) return;
    if (this.whole || lines.length < LIMITS.corkPieceBytes) {
      this.text(Buffer.from(lines.buffer, lines.byteOffset, lines.length).toString('latin1'));
      return;
    }
    if (this.pendingBytes > 0) this.flush();
    if (this.gone) return;
    this.lastWrite = Date.now();
    this.meter.family.streamBytes += lines.length;
    let ok = true;
    for (let at = 0; at < lines.length; at += LIMITS.corkPieceBytes) {
      if (this.aborted) return; // an aborted response must not be touched again
      const piece = lines.subarray(at, at + LIMITS.corkPieceBytes);
      this.res.cork(() => {
        this.writeHead();
        // As in flush(): every piece is written, pushed back or not; the producer waits for writable before the next run.
        ok = this.res.write(piece) && ok;
      });
    }
    if (!ok) this.pushedBack();
  }

  /**
   * Writes what is pending: in one cork, or in pieces that each fit uWS's
   * cork buffer (LIMITS.corkPieceBytes says why); a stopped stream's last
   * lines too (it is draining).
   */
  flush(): void {
    if (this.pendingBytes === 0 || this.gone || this.whole) return;
    const chunk = this.takePending();
    this.lastWrite = Date.now();
    let ok = true;
    for (const piece of corkPieces(chunk)) {
      if (this.aborted) return; // an aborted response must not be touched again
      this.res.cork(() => {
        this.writeHead();
        // Every piece is written, pushed back or not: uWS keeps what the socket cannot take, at most this one chunk.
        ok = this.res.write(piece) && ok;
      });
    }
    if (!ok) this.pushedBack();
  }

  /** Resolves when the socket can take more (at once when it can), or when the client has gone. */
  whenWritable(): Promise<void> {
    if (!this.backpressured || this.aborted) return Promise.resolve();
    return new Promise((r) => (this.waiters ??= []).push(r));
  }

  /** Ends the stream with its terminator line (after what uWS holds has drained, for a reader that has been slow). */
  end(cond: Terminator, msg?: string): void {
    this.finish(cond, msg, this.slowed);
  }

  private finish(cond: Terminator, msg: string | undefined, drained: boolean): void {
    if (this.ended || this.aborted) return;
    const terminator = terminatorLine(cond, msg);
    // A message may quote the client's pattern (RE2's words): its UTF-8 bytes beyond one per character.
    if (msg !== undefined) this.meter.family.streamBytes += Buffer.byteLength(terminator) - terminator.length;
    if (this.whole) {
      this.ended = true;
      const parts = this.parts ?? [];
      this.count(terminator);
      this.meter.family.streamBytes += this.pendingBytes;
      parts.push(Buffer.from(terminator, 'utf8'));
      this.parts = undefined;
      this.pendingBytes = 0;
      this.sendWhole(parts, cond);
      return;
    }
    if (drained) {
      this.ended = true;
      this.stopKeepAlive();
      this.closing = { line: terminator, cond };
      this.drainStep();
      return;
    }
    this.text(terminator);
    this.ended = true;
    this.stopKeepAlive();
    const chunk = this.takePending();
    // One clock read for both: a small answer's status line and terminator leave in this one cork.
    const now = performance.now();
    // end() queues whatever uWS cannot send now and completes it on its own.
    const pieces = corkPieces(chunk);
    if (pieces.length === 1) {
      this.res.cork(() => {
        this.writeHead(now);
        this.res.end(pieces[0]);
      });
    } else {
      for (const piece of pieces) {
        if (this.aborted) break;
        this.res.cork(() => {
          this.writeHead(now);
          this.res.write(piece);
        });
      }
      if (!this.aborted) this.res.cork(() => this.res.end());
    }
    this.meter.family.terminated(cond, this.meter.started, now);
    this.settle(cond);
  }

  /**
   * One step of a drained end (module comment): in one cork, the pending
   * lines (or a keep-alive line when none are left, or when they are too
   * many for one cork) and, if uWS took them without buffering, the
   * terminator and the end of the response. Runs again from onWritable while
   * the socket pushes back. The first step does not wait for onWritable: uWS
   * may hold nothing although the last write pushed back, and the kernel may
   * take a small write all the same (measured: of two streams whose 30 KB/s
   * readers would have made the next writable event wait 8.7 s, one ended at
   * once).
   */
  private drainStep(): void {
    const closing = this.closing;
    if (closing === undefined || this.gone || this.fate !== undefined) return;
    if (this.pendingBytes > LIMITS.corkPieceBytes) {
      this.flush();
      if (this.backpressured) return;
    }
    const probe = this.pendingBytes > 0 ? this.takePending() : this.keepAliveLine();
    this.lastWrite = Date.now();
    let ok = false;
    const now = performance.now();
    this.res.cork(() => {
      this.writeHead(now);
      ok = this.res.write(probe);
      if (!ok) return;
      this.count(closing.line);
      this.res.end(closing.line);
    });
    if (!ok) {
      this.pushedBack();
      return;
    }
    this.meter.family.terminated(closing.cond, this.meter.started, now);
    this.settle(closing.cond);
  }

  /**
   * A whole answer with Content-Length: its parts (the gathered lines, which
   * are ASCII, so characters are bytes, and the terminator as UTF-8) go one
   * by one through tryEnd(), which hands uWS only what the socket takes and
   * keeps count; the rest goes at writable events, from the offset uWS
   * reports, until tryEnd says the response is done. Nothing is joined: one
   * 4 MB join and conversion held the thread 14-23 ms. A turn hands over at
   * most WHOLE_BYTES_PER_TURN, then lets other work go first.
   */
  private sendWhole(parts: (string | Buffer)[], cond: Terminator): void {
    const total = parts.reduce((n, p) => n + p.length, 0);
    const started = performance.now();
    let index = 0;
    /** Body offset where parts[index] starts. */
    let partStart = 0;
    const pushed = () => {
      // A reader that stops taking the rest for 10 s is cut by uWS, and counted as a slow reader cut (markAborted).
      this.backpressured = true;
      this.backpressuredAt = Date.now();
    };
    /** Sends from body offset `offset`; true when uWS took all it was given (done, or a turn's worth). */
    const send = (offset: number): boolean => {
      let turn = 0;
      for (;;) {
        if (this.gone) return true;
        while (index < parts.length - 1 && partStart + parts[index]!.length <= offset) partStart += parts[index++]!.length;
        const part = parts[index]!;
        const from = offset - partStart;
        const piece = from === 0 ? part : part.slice(from);
        let result: [boolean, boolean] = [false, false];
        this.res.cork(() => {
          this.writeHead(started);
          result = this.res.tryEnd(piece, total);
        });
        if (result[1]) {
          this.meter.family.terminated(cond, this.meter.started, started);
          this.settle(cond);
          return true;
        }
        if (!result[0]) {
          pushed();
          return false;
        }
        offset += piece.length;
        turn += piece.length;
        if (turn >= WHOLE_BYTES_PER_TURN) {
          setImmediate(() => send(offset));
          return true;
        }
      }
    };
    this.res.onWritable((offset) => {
      this.backpressured = false;
      return send(offset);
    });
    send(0);
  }

  /** The socket took less than it was given: producers wait, and the next chunks are small (chunkBytes). */
  private pushedBack(): void {
    if (this.backpressured) return;
    this.backpressured = true;
    this.backpressuredAt = this.lastWrite;
    this.slowed = true;
    this.chunkBytes = LIMITS.slowWriteChunkBytes;
    if (this.writableHandler) return;
    this.writableHandler = true;
    this.res.onWritable(() => {
      this.backpressured = false;
      // uWS drains its buffer only when this callback writes: a drained end writes here, a producer right after.
      if (this.closing !== undefined) this.drainStep();
      else this.wakeWaiters();
      return true;
    });
  }

  private takePending(): string {
    const chunk = this.pending;
    this.pending = '';
    this.pendingBytes = 0;
    this.count(chunk);
    return chunk;
  }

  private keepAliveLine(): string {
    this.meter.family.keepAlives++;
    this.count(KEEPALIVE_LINE);
    return KEEPALIVE_LINE;
  }

  private settle(fate: StreamFate): void {
    if (this.fate !== undefined) return;
    this.fate = fate;
    const w = this.finishWaiters;
    if (w === undefined) return;
    this.finishWaiters = undefined;
    for (const f of w) f(fate);
  }

  private wakeWaiters(): void {
    const w = this.waiters;
    if (w === undefined) return;
    this.waiters = undefined;
    for (const f of w) f();
  }

  /** Wakes the producer: waiters and abort listeners (the client went, or the server stops it). */
  private wake(): void {
    const w = [...(this.waiters ?? []), ...(this.abortListeners ?? [])];
    this.waiters = undefined;
    this.abortListeners = undefined;
    for (const f of w) f();
  }

  /**
   * Counts a chunk handed to uWS. Every line but a terminator's message is
   * ASCII (render/json-text.ts: presentation text escapes other bytes), so
   * characters are bytes; end() adds what a message's UTF-8 takes beyond.
   * (Buffer.byteLength of each chunk was a third of the metrics' cost per
   * lookup: bench/micro/metrics-hot-path.ts.)
   */
  private count(chunk: string): void {
    this.meter.family.streamBytes += chunk.length;
  }

  private stopKeepAlive(): void {
    this.keepAlive?.delete(this);
    this.keepAlive = undefined;
  }
}
