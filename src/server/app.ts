// The HTTP front end: uWebSockets.js routes, content negotiation, and the
// one path every search takes (spec 5, 7, 8):
//   route -> Accept -> parse (400) -> authenticate (403/401) -> licence
//   (416) -> plan and reserve capacity (503) -> charge (503/429) -> stream
// Nothing is charged for a request refused before the charge, and the
// charge is the last refusal: once it passes, the answer is a 200 stream.
// A stream that the server fails (STREAM_MESSAGES.INTERNAL) before it has
// written any result has its charge handed back.
//
// Everything read from the uWS HttpRequest is read synchronously in the
// handler (the request object dies when it returns), and onAborted is
// registered before the handler returns, as uWS requires for async replies.
//
// Every answer counts itself in the endpoint family's stats
// (serving-stats.ts), and a 503 OVERLOADED in the cause its admission stage
// names; with `metrics` set, a listener of their own serves them
// (metrics-listener.ts) with /healthz and /readyz.

import { LIMITS, checkLimits } from '../config/limits.js';
import { API_ERRORS, ApiError, isApiError, STREAM_MESSAGES, TlsPairError, type ApiErrorCode } from '../errors/catalogue.js';
import { AccessGate, type Grant } from '../auth/access-gate.js';
import { sqliteKeyStoreConfig, type KeyStoreConfig } from '../auth/stores/open-key-store.js';
import { activeFaults } from '../lib/faults.js';
import { turnsTaken } from '../lib/turns.js';
import { applyKey } from '../query/params.js';
import type { SearchBackend } from '../search/backend.js';
import type { PageOutcome } from '../search/paginator.js';
import { LocalBackend } from '../search/local/local-backend.js';
import { ClickHouseBackend } from '../search/clickhouse/clickhouse-backend.js';
import { CONSOLE_PATH, ConsoleFiles, redirectToConsole, serveConsoleFile } from './console-files.js';
import { requireDataDir } from '../shard/manifest.js';
import { Exchange, type AdmissionStage } from './exchange.js';
import { log } from './log.js';
import { metricsRegistry } from './metrics.js';
import { startMetricsListener, type MetricsListener, type ReadinessCheck } from './metrics-listener.js';
import { answerScrapes } from './process-group.js';
import { openApiText } from './openapi.js';
import { acceptsNdjson, route, type Route } from './router.js';
import { SafWriter } from './saf-writer.js';
import { parseSearch, type PlannedSearch, type SearchRequest } from './search-request.js';
import { ServingStats, type Family, type OverloadCause } from './serving-stats.js';
import { setNotSentLowat } from './socket-tuning.js';
import { openTlsApp } from './tls-credentials.js';
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
  /** Wall time a search may take, then it ends with an in-stream failed (default LIMITS.searchTimeoutMs). */
  searchTimeoutMs?: number;
  /** Where keys and their usage live (default: the data directory's SQLite store). */
  keyStore?: KeyStoreConfig;
  /**
   * The metrics and health listener (metrics-listener.ts); none when absent.
   * 'supervisor': this is a member of --processes N, whose supervisor serves
   * the group's listener and asks each member over IPC (process-group.ts).
   */
  metrics?: { host: string; port: number } | 'supervisor';
  /** Answer searches from ClickHouse instead of the data directory's shards (serve --clickhouse-url). */
  clickhouse?: { url: string; database: string };
}

export interface RunningServer {
  readonly port: number;
  readonly url: string;
  /** Shards mapped at start-up (0: every search answers "no results" until some are ingested). */
  readonly shards: number;
  /** Base URL of the metrics listener, when there is one. */
  readonly metricsUrl: string | undefined;
  close(): Promise<void>;
}

const errorOf = (code: ApiErrorCode) => new ApiError(code);

/** The streams this process has open: a bound on them, and a shutdown ends them all with a terminator. */
class OpenStreams {
  private reserved = 0;
  private readonly writers = new Set<SafWriter>();

  /** Streams reserved or open now. */
  get count(): number {
    return this.reserved;
  }

  /** Holds a place for one more stream, or refuses with 503 before anything is charged. */
  reserve(): void {
    if (this.reserved >= LIMITS.searchesInFlightMax) throw errorOf('OVERLOADED');
    this.reserved++;
  }

  release(): void {
    this.reserved--;
  }

  add(w: SafWriter): void {
    this.writers.add(w);
  }

  delete(w: SafWriter): void {
    this.writers.delete(w);
  }

  endAll(message: string): void {
    for (const w of this.writers) w.endEarly(message);
  }
}

const FAMILY_OF: Readonly<Record<Route['kind'], Family>> = {
  flex: 'flex', lookup: 'lookup', summarize: 'lookup', rate_limit: 'rate_limit', ping: 'ping', openapi: 'other', not_found: 'other',
};

/** Where a 503 OVERLOADED was raised along the admission path says what was full. */
const OVERLOAD_CAUSE: Readonly<Record<AdmissionStage, OverloadCause>> = {
  admit: 'key_store', plan: 'scan_queue', reserve: 'streams', charge: 'key_store',
};

/** The request handlers, over the backend and the gate this server was started with. */
class FrontEnd {
  closing = false;
  readonly streams = new OpenStreams();

  constructor(private readonly backend: SearchBackend, private readonly gate: AccessGate, private readonly keepAliveMs: number,
    private readonly searchTimeoutMs: number, readonly stats: ServingStats) {}

  async handle(x: Exchange): Promise<void> {
    const r = route(x.url);
    x.family = this.stats.families[FAMILY_OF[r.kind]];
    switch (r.kind) {
      case 'not_found':
        return x.sendError(errorOf('NOT_FOUND'));
      case 'ping':
        return x.sendJson({ ping: 'ok' });
      case 'openapi':
        // No key: partners fetch the description before they have one.
        return x.sendJsonText(openApiText());
      case 'rate_limit':
        return x.sendJson(await this.gate.rateLimit(x.apiKey, x.ip));
      case 'flex':
      case 'lookup':
      case 'summarize': {
        if (!acceptsNdjson(x.accept)) throw errorOf('NOT_ACCEPTABLE');
        const now = Math.floor(Date.now() / 1000);
        return this.search(x, parseSearch(r.kind, r.segments, x.query, x.url, now, this.backend, this.searchTimeoutMs));
      }
    }
  }

  /** Admits, charges and streams one search, in the order of the module comment. */
  private async search(x: Exchange, req: SearchRequest): Promise<void> {
    // Cached keys and unlimited keys answer synchronously: no await, no microtask, on the hot path.
    const found = this.gate.authenticate(x.apiKey, x.ip, req.endpoint);
    const admission = found instanceof Promise ? await found : found;
    x.stage = 'plan';
    const planned = req.plan(applyKey(req.params, admission.limits));
    let grant: Grant;
    try {
      x.stage = 'reserve';
      this.streams.reserve();
    } catch (err) {
      planned.cancel();
      throw err;
    }
    try {
      x.stage = 'charge';
      const charged = this.gate.charge(admission, req.endpoint);
      grant = charged instanceof Promise ? await charged : charged;
    } catch (err) {
      this.streams.release();
      planned.cancel();
      throw err;
    }
    try {
      if (x.aborted) planned.cancel();
      else await this.stream(x, grant, planned, req);
    } finally {
      this.streams.release();
      grant.release();
    }
  }

  /** The 200 stream of an admitted search, to its terminator. */
  private async stream(x: Exchange, grant: Grant, planned: PlannedSearch, req: SearchRequest): Promise<void> {
    const w = new SafWriter(x.res, x, this.keepAliveMs);
    x.writer = w;
    w.begin(grant.headers);
    this.streams.add(w);
    try {
      const outcome = await planned.run(w);
      if (outcome.error !== undefined) log.error({ err: outcome.error }, 'search failed after begin');
      // The server failed this answer before it wrote any result: it costs the key nothing (README "Quotas when a search fails").
      // A summary counts results but writes its one line only when it succeeds, so a failed one has delivered nothing.
      const delivered = req.endpoint !== 'summarize' && outcome.results > 0;
      x.family.results += req.endpoint !== 'summarize' ? outcome.results : outcome.terminator === 'failed' ? 0 : 1;
      if (outcome.terminator === 'failed' && outcome.message === STREAM_MESSAGES.INTERNAL && !delivered) this.refund(grant);
      this.logRequest(x, grant, req, outcome);
    } finally {
      this.streams.delete(w);
    }
  }

  private refund(grant: Grant): void {
    this.gate.refund(grant).catch((err: unknown) => log.warn({ err }, 'quota refund failed; the request stays charged'));
  }

  private logRequest(x: Exchange, grant: Grant, req: SearchRequest, outcome: PageOutcome): void {
    // Checked first so that a quieter level does not even build the record.
    if (!log.isLevelEnabled('info')) return;
    log.info({
      status: 200, ms: Math.round(performance.now() - x.started), key: grant.limits.fingerprint,
      results: outcome.results, terminator: outcome.terminator, ...(grant.limits.private ? {} : req.logFields()),
    }, 'request');
  }

  /** uWS's handler for every GET. */
  onGet(res: HttpResponse, req: HttpRequest): void {
    const x = new Exchange(res, req.getUrl(), req.getQuery() ?? '', req.getHeader('accept'), req.getHeader('x-api-key') || undefined,
      this.stats.families.other);
    res.onAborted(() => {
      if (!x.answered) x.family.abandoned++;
      x.aborted = true;
      x.writer?.markAborted();
    });
    if (x.url.length > LIMITS.urlBytesMax) return x.sendError(errorOf('EXCEPTION'));
    // Shutting down: a kept-alive connection may still send a request.
    if (this.closing) {
      this.stats.overloads.shutdown++;
      return x.sendError(errorOf('OVERLOADED'));
    }
    this.handle(x).catch((err: unknown) => this.onError(x, err));
  }

  private onError(x: Exchange, err: unknown): void {
    if (x.aborted) return;
    if (x.writer && !x.writer.done) {
      // 200 already sent: the stream must end with a terminator.
      log.error({ err }, 'search failed after begin');
      x.writer.end('failed', STREAM_MESSAGES.INTERNAL);
      return;
    }
    if (isApiError(err)) {
      if (err.code === 'OVERLOADED') this.stats.overloads[OVERLOAD_CAUSE[x.stage]]++;
      // A refusal the environment caused (the key store's disk is full) is
      // the operator's to fix: the client gets the catalogue text, the log
      // gets why.
      const cause = (err as { cause?: unknown }).cause;
      if (cause !== undefined) log.warn({ err: cause, code: err.code }, 'request refused');
      x.sendError(err instanceof ApiError ? err : errorOf(err.code));
      return;
    }
    log.error({ err }, 'internal error');
    x.sendError(errorOf('INTERNAL'));
  }
}

/**
 * /readyz: why this server cannot serve now (shutting down, the data
 * backend's reason, the key store not answering), or undefined. Probes do
 * not pile up: checks that come while one is out share its answer.
 */
function readiness(front: FrontEnd, backend: SearchBackend, gate: AccessGate): ReadinessCheck {
  let probing: Promise<string | undefined> | undefined;
  const keyStore = (): Promise<string | undefined> => gate.probe().then(() => undefined, (err: unknown) => {
    log.warn({ err }, 'readiness: the key store did not answer');
    return 'key store unreachable';
  });
  return () => {
    if (front.closing) return Promise.resolve('shutting down');
    probing ??= Promise.all([backend.notReady(), keyStore()]).then(([data, keys]) => data ?? keys).finally(() => {
      probing = undefined;
    });
    return probing;
  };
}

function createApp(app: TemplatedApp, front: FrontEnd, consoleFiles: ConsoleFiles | undefined): TemplatedApp {
  // uWS matches these more specific patterns before the API's catch-all, whatever the order they are added in.
  app.get(CONSOLE_PATH, (res: HttpResponse) => redirectToConsole(res));
  app.get(`${CONSOLE_PATH}/*`, (res, req) => serveConsoleFile(consoleFiles, res, req));
  app.get('/*', (res, req) => front.onGet(res, req));
  // Every endpoint is GET; other methods get the front end's 404.
  app.any('/*', (res: HttpResponse) => {
    const now = performance.now();
    front.stats.families.other.answered(404, now, now);
    res.cork(() => {
      res.writeStatus('404 Not Found').writeHeader('Content-Type', 'text/html; charset=utf-8').end(API_ERRORS.NOT_FOUND.text);
    });
  });
  return app;
}

async function listen(app: TemplatedApp, host: string, port: number): Promise<us_listen_socket> {
  const sock = await new Promise<us_listen_socket>((resolve, reject) => {
    app.listen(host, port, (s) => (s ? resolve(s) : reject(new Error(`cannot listen on ${host}:${port}`))));
  });
  const bound = uws.us_socket_local_port(sock);
  const tuned = setNotSentLowat(bound, LIMITS.socketNotSentLowatBytes);
  if (tuned !== 1) {
    log.warn({ port: bound, sockets: tuned }, 'TCP_NOTSENT_LOWAT not set on the listening socket; very slow readers may be cut off');
  }
  return sock;
}

/** The console's files, or undefined (its paths then get 404) when they were not built: the API serves either way. */
function loadConsole(): ConsoleFiles | undefined {
  try {
    return ConsoleFiles.load();
  } catch (err) {
    log.warn({ err }, 'web console not served: its files did not load (run `npm run build`)');
    return undefined;
  }
}

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  checkLimits();
  // Before anything below creates files there (the SQLite key store would
  // create the directory): a typo'd path must not serve an empty dataset.
  requireDataDir(opts.dataDir);
  // Before the scan threads start, too: a bad certificate or key is one line and exit 2 (tls-credentials.ts).
  if ((opts.tlsCert === undefined) !== (opts.tlsKey === undefined)) throw new TlsPairError('--tls-cert and --tls-key go together');
  const app = opts.tlsCert !== undefined && opts.tlsKey !== undefined ? openTlsApp(opts.tlsCert, opts.tlsKey) : uws.App();
  const faults = activeFaults();
  if (faults !== undefined) log.warn({ faults }, 'RRSCAN_FAULTS is set: failures will be injected on purpose (tests only)');
  const searchTimeoutMs = opts.searchTimeoutMs ?? LIMITS.searchTimeoutMs;
  const backend: SearchBackend = opts.clickhouse !== undefined
    // ClickHouse stops a query a second after the answer has timed out, should the hang-up's KILL QUERY be lost.
    ? await ClickHouseBackend.open({ ...opts.clickhouse, querySeconds: Math.ceil(searchTimeoutMs / 1000) + 1 })
    : new LocalBackend({
      dataDir: opts.dataDir,
      log: (msg, extra) => log.info(extra ?? {}, msg),
      ...(opts.threads !== undefined ? { threads: opts.threads } : {}),
      ...(opts.queueMax !== undefined ? { queueMax: opts.queueMax } : {}),
      ...(opts.scanTurnMs !== undefined ? { turnMs: opts.scanTurnMs } : {}),
    });
  const gate = AccessGate.open(opts.keyStore ?? sqliteKeyStoreConfig(opts.dataDir));
  const keepAliveMs = opts.keepAliveMs ?? LIMITS.keepAliveIntervalMs;
  const described = backend.describe();
  log.info({ ...described, keepAliveMs }, opts.clickhouse !== undefined ? 'data backend ready' : 'shards loaded');
  openApiText(); // built now, not on the thread of the first request that asks for it
  const shards = Number(described['shards'] ?? 0);
  if (opts.clickhouse === undefined && shards === 0) {
    log.warn({ dataDir: opts.dataDir }, 'the data directory holds no shards: every search finds nothing until data is ingested');
  }
  const front = new FrontEnd(backend, gate, keepAliveMs, searchTimeoutMs, new ServingStats());
  const sock = await listen(createApp(app, front, loadConsole()), opts.host, opts.port);
  let metrics: MetricsListener | undefined;
  try {
    const registry = () => metricsRegistry({
      serving: front.stats, refusals: gate.refusals, backend: backend instanceof LocalBackend ? () => backend.stats() : undefined,
      openStreams: () => front.streams.count,
      frontEndTurns: turnsTaken,
    });
    if (opts.metrics === 'supervisor') answerScrapes(registry(), readiness(front, backend, gate));
    else if (opts.metrics !== undefined) {
      metrics = await startMetricsListener(opts.metrics.host, opts.metrics.port, registry(), readiness(front, backend, gate));
    }
  } catch (err) {
    uws.us_listen_socket_close(sock);
    await backend.close();
    gate.close();
    throw err;
  }
  const port = uws.us_socket_local_port(sock);
  const hostForUrl = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    port,
    shards,
    url: `${opts.tlsCert ? 'https' : 'http'}://${hostForUrl}:${port}`,
    metricsUrl: metrics?.url,
    async close() {
      // No new connections; open streams end with a terminator saying why
      // (their searches stop as for a client that hung up); then the
      // backend and the key store close.
      front.closing = true;
      uws.us_listen_socket_close(sock);
      metrics?.close();
      front.streams.endAll(STREAM_MESSAGES.SHUTDOWN);
      await backend.close();
      gate.close();
    },
  };
}
