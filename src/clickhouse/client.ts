// A ClickHouse HTTP client: statements, RowBinary INSERTs and streamed
// SELECTs, over node:http (the interface every ClickHouse version has; no
// driver package is needed for this much).
//
// Every statement carries its settings in the URL (18.16 has no SETTINGS
// clause for every statement kind): max_query_size for inlined literals
// (literal.ts), and for SELECTs a query_id and max_execution_time. Closing
// the HTTP connection does not stop a query on every version, so cancel()
// also sends KILL QUERY for the id.
//
// Errors: a statement refused before its first byte comes back as a non-200
// status with ClickHouse's text; one that fails mid-stream (a timeout, a
// node down) appends "Code: N, e.displayText() = ..." to the body it had
// begun. Streamed rows therefore never begin with "Code: " (their first
// column is a value we wrote, and callers put a number first where that is
// not enough) and such a line ends the stream as an error.

import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { LIMITS } from '../config/limits.js';
import { ClickHouseError, hasCode } from '../errors/catalogue.js';
import { LineReader } from '../lib/line-reader.js';
import { sqlString } from './literal.js';

/** Largest answer exec() keeps (DDL answers, versions, counts). */
const EXEC_ANSWER_BYTES_MAX = 1 << 20;
const ERROR_LINE = 'Code: ';
/** A streamed answer's buffer starts this size; the line reader grows it for a longer row (up to clickhouseRowBytesMax). */
const ANSWER_BUFFER_BYTES = 64 << 10;
/** ClickHouse's code for "Timeout exceeded" (max_execution_time). */
export const TIMEOUT_CODE = 159;

/** The parts of a ClickHouse URL http://[user[:password]@]host:port/ that requests need. */
function endpoint(url: string): { host: string; port: number; auth: string | undefined } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new ClickHouseError(`${url}: not a URL (expected http://HOST:8123)`);
  }
  if (u.protocol !== 'http:') throw new ClickHouseError(`${url}: only http:// is supported`);
  const auth = u.username !== '' ? `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}` : undefined;
  return { host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port === '' ? 8123 : Number(u.port), auth };
}

/** ClickHouse's error code from its message ("Code: 159, ..."), or undefined. */
export function errorCode(message: string): number | undefined {
  const m = /^Code: (\d+)/.exec(message);
  return m ? Number(m[1]) : undefined;
}

/** What a streamed SELECT reports. */
export interface SelectHandlers {
  /** Complete lines (without "\n"), in order; return false to pause until resume(). */
  lines(lines: string[]): boolean;
  end(): void;
  error(err: ClickHouseError): void;
}

/** A running SELECT. */
export interface RunningSelect {
  readonly queryId: string;
  resume(): void;
  /** Stops reading and asks ClickHouse to kill the query; no handler is called afterwards. */
  cancel(): void;
}

export class ClickHouse {
  private readonly host: string;
  private readonly port: number;
  private readonly auth: string | undefined;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: LIMITS.searchesInFlightMax });

  constructor(readonly url: string) {
    ({ host: this.host, port: this.port, auth: this.auth } = endpoint(url));
  }

  /**
   * POSTs `body`; `timeoutMs` bounds the wait for the answer's headers
   * (ClickHouse sends them with its first block). Answers a handle that
   * destroys the request in flight.
   *
   * A request that fails before any answer on a reused keep-alive socket is
   * sent once more on a new one. ClickHouse closes a connection idle for
   * keep_alive_timeout (10 s on 18.16), and a process whose thread was busy
   * that long (an ingest between batches, a test in spawnSync) has not yet
   * seen the close when it writes the next request on that socket, which
   * then fails with "socket hang up". Such a request never reached
   * ClickHouse (Node's http docs: request.reusedSocket), so sending it again
   * cannot run a statement twice.
   */
  private request(params: Record<string, string>, body: string | Buffer, onResponse: (res: http.IncomingMessage) => void,
    onError: (err: ClickHouseError) => void, timeoutMs: number = LIMITS.clickhouseConnectTimeoutMs): { destroy(): void } {
    const query = new URLSearchParams({ max_query_size: String(LIMITS.clickhouseQueryBytesMax), ...params });
    let current: http.ClientRequest;
    const send = (mayResend: boolean): void => {
      let answered = false;
      const req = http.request({
        host: this.host, port: this.port, method: 'POST', path: `/?${query.toString()}`, agent: this.agent,
        ...(this.auth !== undefined ? { auth: this.auth } : {}), timeout: timeoutMs,
      }, (res) => {
        answered = true;
        onResponse(res);
      });
      current = req;
      req.once('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.once('error', (err: NodeJS.ErrnoException) => {
        if (mayResend && !answered && req.reusedSocket && hasCode(err, 'ECONNRESET')) return send(false);
        onError(new ClickHouseError(`ClickHouse at ${this.url}: ${err.message}`));
      });
      req.end(body);
    };
    send(true);
    return { destroy: () => current.destroy() };
  }

  /** Runs one statement; resolves with its whole answer (at most EXEC_ANSWER_BYTES_MAX bytes). */
  exec(sql: string, body?: Buffer, params: Record<string, string> = {}): Promise<string> {
    return new Promise((resolve, reject) => {
      this.request(body === undefined ? params : { ...params, query: sql }, body ?? sql, (res) => {
        res.setTimeout(0);
        const parts: Buffer[] = [];
        let size = 0;
        res.on('data', (d: Buffer) => {
          size += d.length;
          if (size > EXEC_ANSWER_BYTES_MAX) {
            res.destroy();
            reject(new ClickHouseError(`answer over ${EXEC_ANSWER_BYTES_MAX} bytes to: ${sql.slice(0, 200)}`));
            return;
          }
          parts.push(d);
        });
        res.once('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          if (res.statusCode !== 200 || text.startsWith(ERROR_LINE)) reject(new ClickHouseError(text.trim(), res.statusCode ?? 0));
          else resolve(text);
        });
        res.once('error', (err) => reject(new ClickHouseError(err.message)));
      }, reject);
    });
  }

  /**
   * INSERT INTO `table` FORMAT RowBinary with `rows` as the body: one part,
   * however many rows. `waitForShards`: a Distributed table's INSERT returns
   * once every shard has its rows, not when they are queued to be sent.
   *
   * insert_deduplicate=0: a replicated table drops a block equal to one of
   * its recent ones (replicated_deduplication_window), meant for clients
   * that retry an INSERT. Ours do not retry, and equal blocks are real
   * data: the same sightings seen again (a file ingested twice sums them
   * twice, as local shards do), or two batches whose rows the materialized
   * views aggregate into equal blocks (18.16 dedups the view's output
   * block, not the INSERT's). It is set on the INSERT, so it holds for the
   * views it feeds and, through a Distributed table, on every shard.
   */
  async insertRowBinary(table: string, rows: Buffer, waitForShards = false): Promise<void> {
    await this.exec(`INSERT INTO ${table} FORMAT RowBinary`, rows,
      { insert_deduplicate: '0', ...(waitForShards ? { insert_distributed_sync: '1' } : {}) });
  }

  /** The server's version, e.g. "18.16.1". */
  async version(): Promise<string> {
    return (await this.exec('SELECT version()')).trim();
  }

  /** Asks ClickHouse to stop a query (KILL QUERY ... ASYNC); failures are ignored: the query ends at max_execution_time anyway. */
  kill(queryId: string): void {
    this.exec(`KILL QUERY WHERE query_id = ${sqlString(queryId)} ASYNC`).catch(() => undefined);
  }

  /** Starts a SELECT whose answer streams to `h` line by line, with backpressure. */
  select(sql: string, h: SelectHandlers, maxSeconds: number = LIMITS.clickhouseQuerySecondsMax): RunningSelect {
    const queryId = randomUUID();
    let res: http.IncomingMessage | undefined;
    let done = false;
    let paused = false;
    const finish = (err?: ClickHouseError): void => {
      if (done) return;
      done = true;
      if (err) h.error(err);
      else h.end();
    };
    // readonly=2: a search may change its own settings and nothing else, whatever its text says
    // (literal.ts is the first defence; this is the second). skip_unavailable_shards=0 whatever the
    // server's profile says: through a Distributed table, a shard none of whose replicas answers must
    // fail the search, not leave its rows out.
    const req = this.request({
      query_id: queryId, max_execution_time: String(maxSeconds), readonly: '2', skip_unavailable_shards: '0',
    }, sql, (r) => {
      res = r;
      r.setTimeout(0);
      if (r.statusCode !== 200) {
        r.setEncoding('utf8');
        let text = '';
        r.on('data', (d: string) => { if (text.length < EXEC_ANSWER_BYTES_MAX) text += d; });
        r.once('end', () => finish(new ClickHouseError(text.trim(), r.statusCode ?? 0)));
        return;
      }
      const rows = new LineReader({ lineBytesMax: LIMITS.clickhouseRowBytesMax, bufferBytes: ANSWER_BUFFER_BYTES });
      r.on('data', (d: Buffer) => {
        if (done) return;
        rows.push(d);
        const lines: string[] = [];
        while (rows.next()) {
          if (rows.tooLong) {
            if (lines.length > 0) h.lines(lines);
            finish(new ClickHouseError(`answer line ${rows.lineNo}: ${rows.tooLongReason}`, 200));
            r.destroy();
            return;
          }
          const line = rows.text();
          if (line.startsWith(ERROR_LINE)) {
            // The error, and whatever else came with it, ends the answer.
            if (lines.length > 0) h.lines(lines);
            const error = [line];
            while (rows.next()) error.push(rows.text());
            finish(new ClickHouseError(error.join('\n').trim(), 200));
            r.destroy();
            return;
          }
          lines.push(line);
        }
        if (lines.length === 0) return;
        if (!h.lines(lines) && !done) {
          paused = true;
          r.pause();
        }
      });
      r.once('end', () => {
        rows.finish();
        if (!rows.next()) return finish();
        const rest = rows.text();
        if (rest.startsWith(ERROR_LINE)) return finish(new ClickHouseError(rest.trim(), 200));
        finish(new ClickHouseError(`answer ended inside a row: ${rest.slice(0, 200)}`, 200));
      });
      r.once('error', (err) => finish(new ClickHouseError(err.message)));
      r.once('aborted', () => finish(new ClickHouseError('ClickHouse closed the answer early')));
    }, (err) => finish(err), maxSeconds * 1000 + LIMITS.clickhouseConnectTimeoutMs);
    return {
      queryId,
      resume: () => {
        if (paused && !done) {
          paused = false;
          res?.resume();
        }
      },
      cancel: () => {
        if (done) return;
        done = true;
        req.destroy();
        res?.destroy();
        this.kill(queryId);
      },
    };
  }

  close(): void {
    this.agent.destroy();
  }
}
