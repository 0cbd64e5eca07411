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
// It counts itself in its request's endpoint family (serving-stats.ts): the
// status line and its time, bytes, keep-alives, the terminator and its time,
// or, for a stream that never gets one, whether a slow reader was cut or
// the client hung up.

import { LIMITS } from '../config/limits.js';
import { BEGIN_LINE, KEEPALIVE_LINE, terminatorLine, type Terminator } from '../render/saf.js';
import type { ResultSink } from '../search/sink.js';
import type { FamilyStats } from './serving-stats.js';
import type { HttpResponse } from './uws.js';

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
 * stream open.
 */
class KeepAliveTicker {
  private readonly writers = new Set<SafWriter>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly periodMs: number) {}

  add(w: SafWriter): void {
    this.writers.add(w);
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => {
      if (this.writers.size === 0) {
        clearInterval(this.timer);
        this.timer = undefined;
        return;
      }
      for (const writer of this.writers) writer.keepAliveTick();
    }, this.periodMs);
    this.timer.unref();
  }

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

export class SafWriter implements ResultSink {
  private pending: string[] = [];
  private pendingBytes = 0;
  private backpressured = false;
  /** Date.now() when the socket last pushed back. */
  private backpressuredAt = 0;
  private waiters: (() => void)[] = [];
  private abortListeners: (() => void)[] = [];
  private lastWrite = Date.now();
  private keepAlive: KeepAliveTicker | undefined;
  private ended = false;
  /** Headers of the 200, until the first write sends them. */
  private headers: ReadonlyArray<readonly [string, string]> | undefined;
  aborted = false;
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

  constructor(private readonly res: HttpResponse, private readonly meter: StreamMeter,
    private readonly keepAliveMs: number = LIMITS.keepAliveIntervalMs) {}

  /** Must be called once the request is known to be aborted (from res.onAborted). */
  markAborted(): void {
    if (!this.aborted && !this.ended) {
      const family = this.meter.family;
      if (this.backpressured && Date.now() - this.backpressuredAt >= SLOW_READER_CUT_MS) family.slowReaderCuts++;
      else family.hangups++;
    }
    this.aborted = true;
    this.stopKeepAlive();
    const w = [...this.waiters, ...this.abortListeners];
    this.waiters = [];
    this.abortListeners = [];
    for (const f of w) f();
  }

  /**
   * Ends the stream now with a `failed` terminator (server shutdown), and
   * tells the producer as if the client had gone: its abort listeners run
   * and it stops writing. Nothing happens to a stream that has ended.
   */
  endEarly(message: string): void {
    if (this.done) return;
    this.end('failed', message);
    this.markAborted();
  }

  /** Runs `f` once if the client goes away (at once if it already has). */
  onAbort(f: () => void): void {
    if (this.aborted) f();
    else this.abortListeners.push(f);
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
    this.keepAlive = tickerFor(this.keepAliveMs);
    this.keepAlive.add(this);
  }

  /** Called by the ticker: after keepAliveMs of silence, send what is pending, or a `{}` line. */
  keepAliveTick(): void {
    if (!this.ended && !this.aborted && !this.backpressured && Date.now() - this.lastWrite >= this.keepAliveMs) {
      if (this.pendingBytes === 0) {
        this.pending.push(KEEPALIVE_LINE);
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
    this.res.writeStatus('200 OK');
    this.res.writeHeader('Content-Type', 'application/x-ndjson');
    for (const [k, v] of headers) this.res.writeHeader(k, v);
  }

  /** Appends lines, each ending in a newline. */
  text(lines: string): void {
    if (this.ended || this.aborted || lines.length === 0) return;
    this.pending.push(lines);
    this.pendingBytes += lines.length;
    if (this.pendingBytes >= this.chunkBytes) this.flush();
  }

  /** Writes what is pending: in one cork, or in pieces that each fit uWS's cork buffer (LIMITS.corkPieceBytes says why). */
  flush(): void {
    if (this.pendingBytes === 0 || this.aborted) return;
    const chunk = this.pending.join('');
    this.pending = [];
    this.pendingBytes = 0;
    this.lastWrite = Date.now();
    this.count(chunk);
    let ok = true;
    for (const piece of corkPieces(chunk)) {
      if (this.aborted) return; // an aborted response must not be touched again
      this.res.cork(() => {
        this.writeHead();
        // Every piece is written, pushed back or not: uWS keeps what the socket cannot take, at most this one chunk.
        ok = this.res.write(piece) && ok;
      });
    }
    if (!ok && !this.backpressured) {
      this.backpressured = true;
      this.backpressuredAt = this.lastWrite;
      this.chunkBytes = LIMITS.slowWriteChunkBytes;
      this.res.onWritable(() => {
        this.backpressured = false;
        const w = this.waiters;
        this.waiters = [];
        for (const f of w) f();
        return true;
      });
    }
  }

  /** Resolves when the socket can take more (at once when it can), or when the client has gone. */
  whenWritable(): Promise<void> {
    if (!this.backpressured || this.aborted) return Promise.resolve();
    return new Promise((r) => this.waiters.push(r));
  }

  /** Ends the stream with its terminator line. */
  end(cond: Terminator, msg?: string): void {
    if (this.ended || this.aborted) return;
    const terminator = terminatorLine(cond, msg);
    // A message may quote the client's pattern (RE2's words): its UTF-8 bytes beyond one per character.
    if (msg !== undefined) this.meter.family.streamBytes += Buffer.byteLength(terminator) - terminator.length;
    this.text(terminator);
    this.ended = true;
    this.stopKeepAlive();
    const chunk = this.pending.join('');
    this.pending = [];
    this.pendingBytes = 0;
    this.count(chunk);
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
