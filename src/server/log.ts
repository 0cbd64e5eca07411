// The service log: JSON lines (pino) on stderr, so stdout stays free for
// what a person at `npm start` reads. Keys are never logged, only their
// fingerprint; for keys with query privacy the query text is left out too.
//
// The request log (one `request` line per search answered) is written
// apart, by requestLog below: at tens of thousands of requests a second,
// pino's general serializer and one write to stderr per line cost an
// exact lookup a third of its CPU (bench/request-path.ts, issue 22). Its
// lines have a fixed shape, so they are written out directly as the text
// pino would write (same members, same order, same escaping) and handed to
// pino's destination in batches: when a batch is full, after
// LIMITS.requestLogFlushMs, before any other line is logged (so the file
// stays in order), and when the server closes (flushLog). pino flushes its
// destination synchronously at exit, so a line logged is never lost at a
// clean shutdown.

import { fstatSync } from 'node:fs';
import { pino } from 'pino';
import { LIMITS } from '../config/limits.js';

// The front-end processes of `serve --processes N` share one stderr. A
// write of at most PIPE_BUF (4,096 bytes on Linux) to a pipe, or any write
// to an O_APPEND file, lands whole, and pino's buffer splits writes only
// between lines, so their lines never interleave (a single line longer than
// that is the exception). Members name themselves in every line
// (process-group.ts). When stderr is a regular file, writes may be longer:
// 64 KiB, where a write to stderr costs a request line next to nothing
// (each goes through libuv's thread pool; at 4 KiB, some 15 lines a write,
// the writes were a tenth of an exact lookup's CPU). A batch of request
// lines is at most a write long, and is handed over whole (sonic-boom keeps
// a write within maxWrite).
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

const destination = pino.destination({ dest: 2, sync: false, maxWrite: WRITE_BYTES });

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
  private batch = '';
  /** UTF-8 bytes of `batch` (its characters, unless a line held other than ASCII). */
  private batchBytes = 0;
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
    const bytes = client === '' || ASCII.test(client) ? line.length : Buffer.byteLength(line);
    if (this.batchBytes + bytes > WRITE_BYTES) this.flush();
    this.batch += line;
    this.batchBytes += bytes;
    if (this.timer === undefined) {
      this.timer = setTimeout(this.flush, LIMITS.requestLogFlushMs);
      this.timer.unref();
    }
  }

  /** Hands the lines batched so far to the log's destination (written asynchronously, and at exit at the latest). */
  readonly flush = (): void => {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.batch === '') return;
    const batch = this.batch;
    this.batch = '';
    this.batchBytes = 0;
    destination.write(batch);
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

// pino writes out its destination synchronously in an exit handler added
// when the destination was made (above), which runs before this one: the
// last batch is handed over here and written out synchronously too.
process.on('exit', () => {
  requestLog.flush();
  try {
    destination.flushSync();
  } catch {
    // Not open yet, or already closed: nothing of ours is waiting in it.
  }
});

/** Writes every request line batched so far and whatever pino holds; resolves once written. */
export function flushLog(): Promise<void> {
  requestLog.flush();
  return new Promise((resolve) => log.flush(() => resolve()));
}
