// The service log: JSON lines (pino) on stderr, so stdout stays free for
// what a person at `npm start` reads. Keys are never logged, only their
// fingerprint; for keys with query privacy the query text is left out too.
//
// The request log (one `request` line per search answered) is written
// apart, by requestLog below: at tens of thousands of requests a second,
// pino's general serializer and one write to stderr per line cost an
// exact lookup a third of its CPU (bench/request-path.ts, issue 22). Its
// lines have a fixed shape, so they are written out directly as the text
// pino would write (same members, same order, same escaping), into a
// buffer of whole lines that goes to stderr when full, after
// LIMITS.requestLogFlushMs, before any other line is logged (so the file
// stays in order), and when the server closes (flushLog).
//
// stderr is written by LogWriter, not pino's own destination (sonic-boom):
// pino's lines (strings) and the request log's buffers share its one queue,
// in order, one asynchronous write at a time on libuv's thread pool, so a
// slow reader of stderr never holds the event loop. sonic-boom takes only
// strings and went over each batch three times (its byte count, the write's
// conversion, and a copy once written): a fifth of what a request line cost.
// At exit what is still queued is written synchronously, so a line logged is
// never lost at a clean shutdown.

import { fstatSync, write, writeSync } from 'node:fs';
import { pino } from 'pino';
import { LIMITS } from '../config/limits.js';

// The front-end processes of `serve --processes N` share one stderr. A
// write of at most PIPE_BUF (4,096 bytes on Linux) to a pipe, or any write
// to an O_APPEND file, lands whole, and every write here ends at the end of
// a line, so their lines never interleave (a single line longer than that is
// the exception). Members name themselves in every line (process-group.ts).
// When stderr is a regular file, writes may be longer: 64 KiB, where a
// write costs a request line next to nothing (at 4 KiB, some 15 lines a
// write, the writes were a tenth of an exact lookup's CPU).
const PIPE_BUF_BYTES = 4_096;
const FILE_WRITE_BYTES = 64 << 10;

function stderrIsFile(): boolean {
  try {
    return fstatSync(2).isFile();
  } catch {
    return false;
  }
}

const WRITE_BYTES = stderrIsFile() ? FILE_WRITE_BYTES : PIPE_BUF_BYTES;

/** How long a write that stderr refused for now (EAGAIN: a full non-blocking pipe) waits before it is tried again. */
const RETRY_MS = 10;
/** At exit, how many times a synchronous write refused for now is tried again, RETRY_MS apart. */
const EXIT_RETRIES = 100;

/**
 * stderr, written in order from one queue: strings (pino's lines) and
 * buffers of whole lines (the request log's batches). One write at a time is
 * in flight; a partial write goes on from where it stopped. A stderr that is
 * gone (EPIPE, EBADF) drops what is queued, as pino's own destination did.
 */
class LogWriter {
  private queue: Buffer[] = [];
  private writing = false;
  private broken = false;
  private drained: (() => void)[] = [];

  constructor(private readonly fd: number) {}

  /** pino's destination interface: one line (or several) as a string. */
  write(data: string | Buffer): boolean {
    if (this.broken) return true;
    this.queue.push(typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
    if (!this.writing) this.next();
    return true;
  }

  /** Calls `cb` once everything queued so far has been written (pino's logger.flush). */
  flush(cb: () => void = () => undefined): void {
    if (!this.writing) cb();
    else this.drained.push(cb);
  }

  /** Writes what is queued, synchronously (at exit: no event loop is left to finish it). */
  flushSync(): void {
    let retries = 0;
    while (!this.broken && this.queue.length > 0) {
      const b = this.queue[0]!;
      try {
        const n = writeSync(this.fd, b);
        if (n < b.length) this.queue[0] = b.subarray(n);
        else this.queue.shift();
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN' || ++retries > EXIT_RETRIES) {
          this.broken = true;
          break;
        }
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, RETRY_MS);
      }
    }
  }

  private next(): void {
    const b = this.queue.shift();
    if (b === undefined || this.broken) {
      this.writing = false;
      const waiting = this.drained;
      this.drained = [];
      for (const cb of waiting) cb();
      return;
    }
    this.writing = true;
    write(this.fd, b, 0, b.length, null, (err, n) => {
      if (err !== null) {
        if (err.code === 'EAGAIN') {
          this.queue.unshift(b);
          setTimeout(() => this.next(), RETRY_MS);
          return;
        }
        this.broken = true;
        this.queue = [];
      } else if (n < b.length) {
        this.queue.unshift(b.subarray(n));
      }
      this.next();
    });
  }
}

const destination = new LogWriter(2);

export const log = pino({
  level: process.env['RRSCAN_LOG_LEVEL'] ?? 'info',
  base: undefined,
  timestamp: pino.stdTimeFunctions.isoTime,
  hooks: {
    // Request lines logged before this line go first.
    logMethod(args, method) {
      requestLog.flush();
      method.apply(this, args);
    },
  },
}, destination);

export type Log = typeof log;

/** pino's level number of `info`, which request lines carry. */
const INFO_LEVEL = 30;

/** Characters a JSON string may carry as they are: printable ASCII but `"` and `\`. */
const PLAIN_JSON = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const ASCII = /^[\x00-\x7f]*$/;

/**
 * `,"name":"value"` for a request line, or '' when the value is undefined
 * (pino leaves undefined members out). Values are JSON-escaped; other bytes
 * than printable ASCII go through JSON.stringify, as pino's would. (A value
 * known to need no escaping, a validated parameter, may be written as
 * `,"name":"value"` directly.)
 */
export function logMember(name: string, value: string | number | undefined): string {
  if (value === undefined) return '';
  if (typeof value === 'number') return `,"${name}":${Number.isFinite(value) ? value : 'null'}`;
  return `,"${name}":${PLAIN_JSON.test(value) ? `"${value}"` : JSON.stringify(value)}`;
}

/** The request lines of this process, batched (module comment). */
class RequestLog {
  /** Whole lines not yet handed to the writer, as bytes (handed over, a buffer is never written into again). */
  private batch: Buffer = Buffer.allocUnsafe(WRITE_BYTES);
  private used = 0;
  private timer: NodeJS.Timeout | undefined;
  private isoMs = -1;
  private iso = '';

  /** Whether request lines are logged (the level is info or lower): checked before anything is built for one. */
  get enabled(): boolean {
    return log.isLevelEnabled('info');
  }

  /**
   * Logs one request line: `members` are its members as logMember writes
   * them, each with its leading comma, in the order the line shows them;
   * `client` the members that quote the client (a path, a pattern), which
   * may hold other than ASCII, the others never do.
   */
  write(members: string, client = ''): void {
    const line = `{"level":${INFO_LEVEL},"time":"${this.time()}"${this.bindings()}${members}${client},"msg":"request"}\n`;
    const ascii = client === '' || ASCII.test(client);
    const bytes = ascii ? line.length : Buffer.byteLength(line);
    if (this.used + bytes > WRITE_BYTES) this.flush();
    if (bytes > WRITE_BYTES) {
      // Longer than a write: it goes alone, as a long pino line does.
      destination.write(line);
      return;
    }
    this.used += this.batch.write(line, this.used, ascii ? 'latin1' : 'utf8');
    if (this.timer === undefined) {
      this.timer = setTimeout(this.flush, LIMITS.requestLogFlushMs);
      this.timer.unref();
    }
  }

  /** Hands the lines batched so far to the writer (written asynchronously, and at exit at the latest). */
  readonly flush = (): void => {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.used === 0) return;
    const full = this.batch.subarray(0, this.used);
    this.batch = Buffer.allocUnsafe(WRITE_BYTES);
    this.used = 0;
    destination.write(full);
  };

  /** pino's isoTime, made once per millisecond. */
  private time(): string {
    const now = Date.now();
    if (now !== this.isoMs) {
      this.isoMs = now;
      this.iso = new Date(now).toISOString();
    }
    return this.iso;
  }

  /** The logger's own members (a --processes member's `member` and `pid`), as pino writes them after the time. */
  private bindings(): string {
    return (log as unknown as Record<symbol, string>)[pino.symbols.chindingsSym] ?? '';
  }
}

export const requestLog = new RequestLog();

// At exit no event loop is left to finish the asynchronous writes: the last
// batch and whatever is queued are written here, synchronously.
process.on('exit', () => {
  requestLog.flush();
  destination.flushSync();
});

/** Writes every request line batched so far and whatever pino holds; resolves once written. */
export function flushLog(): Promise<void> {
  requestLog.flush();
  return new Promise((resolve) => log.flush(() => resolve()));
}
