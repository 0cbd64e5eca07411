// The HTTP front end: uWebSockets.js routes, content negotiation, auth and
// quota (src/auth), and hand-off to the searches, which stream through a
// SafWriter. One request flows one way:
//   route -> Accept -> parse -> admit (key, quota) -> licence (limit, offset,
//   fence) -> plan -> scan workers -> merge -> SafWriter -> socket
//
// Everything read from the uWS HttpRequest is read synchronously in the
// handler (the request object dies when it returns), and onAborted is
// registered before the handler returns, as uWS requires for async replies.

import { LIMITS, checkLimits } from '../config/limits.js';
import { API_ERRORS, ApiError, isApiError, STREAM_MESSAGES, type ApiErrorCode } from '../errors/catalogue.js';
import { AccessGate, type Grant } from '../auth/access-gate.js';
import { parseFlexQuery } from '../query/flex-query.js';
import { parseLookupQuery } from '../query/lookup-query.js';
import { applyKey } from '../query/params.js';
import { parseQueryString } from '../query/percent.js';
import { compileFlex, planFlex, runFlexSearch } from '../search/flex-search.js';
import { runLookup } from '../search/lookup-search.js';
import { ScanPool } from '../search/local/scan-pool.js';
import { ShardSet } from '../search/local/shard-set.js';
import { log } from './log.js';
import { acceptsNdjson, route } from './router.js';
import { SafWriter } from './saf-writer.js';
import { setNotSentLowat } from './socket-tuning.js';
import { uws, type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from './uws.js';

export interface ServerOptions {
  dataDir: string;
  host: string;
  port: number;
  tlsCert?: string;
  tlsKey?: string;
  threads?: number;
  /** Scan tasks that may wait for a worker before new searches get 503 (default LIMITS.poolQueueMax). */
  queueMax?: number;
  /** Keep-alive `{}` after this long with nothing written (default LIMITS.keepAliveIntervalMs). */
  keepAliveMs?: number;
  /** Wall time a scan task holds a worker before queued tasks get it (serve --scan-turn-ms). */
  scanTurnMs?: number;
}

export interface RunningServer {
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

const REASONS: Record<number, string> = {
  200: 'OK', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found',
  415: 'Unsupported Media Type', 416: 'Range Not Satisfiable', 429: 'Too Many Requests',
  500: 'Internal Server Error', 503: 'Service Unavailable',
};

/** One request: what uWS gave us (read before the handler returns; uWS reuses HttpRequest) and its state. */
class Exchange {
  aborted = false;
  writer: SafWriter | undefined = undefined;
  readonly started = performance.now();
  /** The client's address, read from the socket only when asked (a key with an allow-list). */
  readonly ip = (): string => (this.aborted ? '' : latin1(this.res.getRemoteAddressAsText()));

  constructor(readonly res: HttpResponse, readonly url: string, readonly query: string, readonly accept: string,
    readonly apiKey: string | undefined) {}
}

/** An address as text (ASCII): a JS loop is several times cheaper than TextDecoder for ~15 bytes. */
function latin1(ab: ArrayBuffer): string {
  const b = new Uint8Array(ab);
  let s = '';
  for (let i = 0; i < b.length; i++) s += String.fromCharCode(b[i]!);
  return s;
}

function sendError(x: Exchange, code: ApiErrorCode, headers: ReadonlyArray<readonly [string, string]> = []): void {
  if (x.aborted) return;
  const e = API_ERRORS[code];
  x.res.cork(() => {
    x.res.writeStatus(`${e.status} ${REASONS[e.status] ?? ''}`);
    x.res.writeHeader('Content-Type', `${e.contentType}; charset=utf-8`);
    for (const [k, v] of headers) x.res.writeHeader(k, v);
    x.res.end(e.contentType === 'text/plain' ? `${e.text}\n` : e.text);
  });
}

function sendJson(x: Exchange, body: object, headers: ReadonlyArray<readonly [string, string]> = []): void {
  if (x.aborted) return;
  x.res.cork(() => {
    x.res.writeStatus('200 OK');
    x.res.writeHeader('Content-Type', 'application/json');
    for (const [k, v] of headers) x.res.writeHeader(k, v);
    x.res.end(JSON.stringify(body) + '\n');
  });
}

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  checkLimits();
  const shards = new ShardSet(opts.dataDir, (msg, extra) => log.info(extra ?? {}, msg));
  const snap = shards.load();
  shards.watch();
  const gate = AccessGate.open({ kind: 'sqlite', dataDir: opts.dataDir });
  const pool = new ScanPool({
    ...(opts.threads !== undefined ? { threads: opts.threads } : {}),
    ...(opts.queueMax !== undefined ? { queueMax: opts.queueMax } : {}),
    ...(opts.scanTurnMs !== undefined ? { turnMs: opts.scanTurnMs } : {}),
  });
  const keepAliveMs = opts.keepAliveMs ?? LIMITS.keepAliveIntervalMs;
  let inFlight = 0;
  /** Streams that have begun and not ended: a shutdown ends them with a terminator. */
  const open = new Set<SafWriter>();
  let closing = false;
  log.info({ shards: snap.shards.length, generation: snap.generation, threads: pool.threads, keepAliveMs }, 'shards loaded');

  const app: TemplatedApp = opts.tlsCert && opts.tlsKey
    ? uws.SSLApp({ cert_file_name: opts.tlsCert, key_file_name: opts.tlsKey })
    : uws.App();

  const handleFlex = async (x: Exchange, segments: string[]) => {
    const q = parseQueryString(x.query);
    if (!q) throw new ApiError('UNPARSABLE_REQUEST');
    const now = Math.floor(Date.now() / 1000);
    const fq = parseFlexQuery(segments, q, now);
    // The key's limits apply before the charge, so that an offset the key
    // does not allow (416) costs no quota.
    const admission = await gate.authenticate(x.apiKey, x.ip, 'flex');
    const eff = applyKey(fq, admission.limits);
    const grant = await gate.charge(admission, 'flex');
    try {
      if (x.aborted) return;
      const current = shards.current();
      const patterns = compileFlex(fq);
      const plan = planFlex(fq, patterns, eff.fence, current.shards, pool.threads);
      const tasks = plan.reduce((n, p) => n + p.length, 0);
      if (pool.wouldOverflow(tasks) || inFlight >= LIMITS.searchesInFlightMax) throw new ApiError('OVERLOADED');
      const w = new SafWriter(x.res, keepAliveMs);
      x.writer = w;
      w.begin(grant.headers);
      inFlight++;
      open.add(w);
      try {
        const outcome = await runFlexSearch(fq, patterns, eff, plan, pool, w);
        logRequest(x, grant, 200, {
          results: outcome.results, terminator: outcome.terminator,
          ...(grant.limits.private ? {} : {
            method: fq.method, target: fq.target, pattern: fq.pattern, exclude: fq.exclude, id: fq.id, swclient: fq.swclient, version: fq.version,
          }),
        });
      } finally {
        inFlight--;
        open.delete(w);
      }
    } finally {
      grant.release();
    }
  };

  const handleLookup = async (x: Exchange, segments: string[]) => {
    const q = parseQueryString(x.query);
    if (!q) throw new ApiError('UNPARSABLE_REQUEST');
    const now = Math.floor(Date.now() / 1000);
    const lq = parseLookupQuery(segments, q, now);
    const endpoint = lq.summarize ? 'summarize' : 'lookup';
    const admission = await gate.authenticate(x.apiKey, x.ip, endpoint);
    const eff = applyKey(lq, admission.limits);
    const grant = await gate.charge(admission, endpoint);
    try {
      if (x.aborted) return;
      if (inFlight >= LIMITS.searchesInFlightMax) throw new ApiError('OVERLOADED');
      const w = new SafWriter(x.res, keepAliveMs);
      x.writer = w;
      w.begin(grant.headers);
      inFlight++;
      open.add(w);
      try {
        const outcome = await runLookup(lq, eff, shards.current().shards, w);
        logRequest(x, grant, 200, {
          results: outcome.results, terminator: outcome.terminator,
          ...(grant.limits.private ? {} : { path: x.url, id: lq.id, swclient: lq.swclient, version: lq.version }),
        });
      } finally {
        inFlight--;
        open.delete(w);
      }
    } finally {
      grant.release();
    }
  };

  const handleRateLimit = async (x: Exchange) => {
    const body = await gate.rateLimit(x.apiKey, x.ip);
    sendJson(x, body);
  };

  const handle = async (x: Exchange) => {
    const r = route(x.url);
    switch (r.kind) {
      case 'not_found':
        sendError(x, 'NOT_FOUND');
        return;
      case 'ping':
        sendJson(x, { ping: 'ok' });
        return;
      case 'rate_limit':
        await handleRateLimit(x);
        return;
      case 'flex':
        if (!acceptsNdjson(x.accept)) throw new ApiError('NOT_ACCEPTABLE');
        await handleFlex(x, r.segments);
        return;
      case 'lookup':
      case 'summarize':
        if (!acceptsNdjson(x.accept)) throw new ApiError('NOT_ACCEPTABLE');
        await handleLookup(x, r.segments);
        return;
    }
  };

  const logRequest = (x: Exchange, grant: Grant | undefined, status: number, extra: object) => {
    // Checked first so that a quieter level does not even build the record.
    if (!log.isLevelEnabled('info')) return;
    log.info({ status, ms: Math.round(performance.now() - x.started), key: grant?.limits.fingerprint, ...extra }, 'request');
  };

  app.get('/*', (res: HttpResponse, req: HttpRequest) => {
    const x = new Exchange(res, req.getUrl(), req.getQuery() ?? '', req.getHeader('accept'), req.getHeader('x-api-key') || undefined);
    res.onAborted(() => {
      x.aborted = true;
      x.writer?.markAborted();
    });
    if (x.url.length > LIMITS.urlBytesMax) {
      sendError(x, 'EXCEPTION');
      return;
    }
    // Shutting down: a kept-alive connection may still send a request.
    if (closing) {
      sendError(x, 'OVERLOADED');
      return;
    }
    handle(x).catch((err: unknown) => {
      if (x.aborted) return;
      if (x.writer && !x.writer.done) {
        // 200 already sent: the stream must end with a terminator.
        log.error({ err }, 'search failed after begin');
        x.writer.failed('Internal error');
        return;
      }
      if (isApiError(err)) {
        // A refusal the environment caused (the key store's disk is full)
        // is the operator's to fix: the client gets the catalogue text, the
        // log gets why.
        const cause = (err as { cause?: unknown }).cause;
        if (cause !== undefined) log.warn({ err: cause, code: err.code }, 'request refused');
        sendError(x, err.code);
        return;
      }
      log.error({ err }, 'internal error');
      sendError(x, 'INTERNAL');
    });
  });
  // Every endpoint is GET; other methods get the front end's 404.
  app.any('/*', (res: HttpResponse) => {
    res.cork(() => {
      res.writeStatus('404 Not Found').writeHeader('Content-Type', 'text/html; charset=utf-8').end(API_ERRORS.NOT_FOUND.text);
    });
  });

  const listenSocket = await new Promise<us_listen_socket>((resolve, reject) => {
    app.listen(opts.host, opts.port, (sock) => (sock ? resolve(sock) : reject(new Error(`cannot listen on ${opts.host}:${opts.port}`))));
  });
  const port = uws.us_socket_local_port(listenSocket);
  const tuned = setNotSentLowat(port, LIMITS.socketNotSentLowatBytes);
  if (tuned !== 1) log.warn({ port, sockets: tuned }, 'TCP_NOTSENT_LOWAT not set on the listening socket; very slow readers may be cut off');
  const scheme = opts.tlsCert ? 'https' : 'http';
  const hostForUrl = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    port,
    url: `${scheme}://${hostForUrl}:${port}`,
    async close() {
      // No new connections; open streams end with a terminator saying why
      // (their scans are cancelled as for a client that hung up); then the
      // workers and the key store close.
      closing = true;
      uws.us_listen_socket_close(listenSocket);
      for (const w of open) w.endEarly(STREAM_MESSAGES.SHUTDOWN);
      shards.close();
      await pool.close();
      gate.close();
    },
  };
}

