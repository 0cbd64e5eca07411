// The HTTP front end: uWebSockets.js routes, content negotiation, and the
// one path every search takes (spec 5, 7, 8):
//   route -> Accept -> parse (400) -> authenticate (403/401) -> licence
//   (416) -> plan and reserve capacity (503) -> charge (503/429) -> stream
// Nothing is charged for a request refused before the charge, and the
// charge is the last refusal: once it passes, the answer is a 200 stream.
// A stream that the server fails (STREAM_MESSAGES.INTERNAL) before it has
// written any result has its charge handed back.
//
// Methods: GET; HEAD, the same answer without its body (on a search, the
// path up to the licence and then the head of the stream: nothing is
// planned, charged or run); OPTIONS, 204 and Allow on any path; anything
// else the front end's 404. HTTP/1.0 requests reach the handlers through
// http10.ts and get whole answers and a closed connection.
//
// Everything read from the uWS HttpRequest is read synchronously in the
// handler (the request object dies when it returns), and onAborted is
// registered before the handler returns, as uWS requires for async replies.
//
// Every answer counts itself in the endpoint family's stats
// (serving-stats.ts), and a 503 OVERLOADED in the cause its admission stage
// names; with `metrics` set, a listener of their own serves them
// (metrics-listener.ts) with /healthz and /readyz.

import { LIMITS } from '../config/limits.js';
import { API_ERRORS, ApiError, isApiError, STREAM_MESSAGES, TlsPairError, type ApiErrorCode } from '../errors/catalogue.js';
import { AccessGate, type Admission, type Grant } from '../auth/access-gate.js';
import type { KeyStoreNotice } from '../auth/key-store.js';
import { sqliteKeyStoreConfig, type KeyStoreConfig } from '../auth/stores/open-key-store.js';
import { activeFaults } from '../lib/faults.js';
import { turnsTaken } from '../lib/turns.js';
import { applyKey } from '../query/params.js';
import type { SearchBackend } from '../search/backend.js';
import type { PageOutcome } from '../search/paginator.js';
import { openBackend, type BackendConfig } from '../search/open-backend.js';
import { CONSOLE_PATH, ConsoleFiles, redirectToConsole, serveConsoleFile, type AnswerShape } from './console-files.js';
import { requireDataDir } from '../shard/manifest.js';
import { Exchange, type AdmissionStage } from './exchange.js';
import { installHttp10, isHttp10 } from './http10.js';
import { flushLog, log, logMember, requestLog } from './log.js';
import { metricsRegistry } from './metrics.js';
import { startMetricsListener, type MetricsListener, type Readiness, type ReadinessCheck } from './metrics-listener.js';
import { answerScrapes } from './process-group.js';
import { openApiText } from './openapi.js';
import { acceptsNdjson, route, type Route } from './router.js';
import { SafWriter, type StreamFate } from './saf-writer.js';
import { parseSearch, type PlannedSearch, type SearchRequest } from './search-request.js';
import { parseWatchRequest } from './watch-request.js';
import { ServingStats, type Family, type OverloadCause } from './serving-stats.js';
import { setNotSentLowat } from './socket-tuning.js';
import { openTlsApp } from './tls-credentials.js';
import { uws, type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from '../lib/uws.js';

export interface ServerOptions {
  /** The data directory: it must exist, and holds the key store unless `keyStore` names another. */
  dataDir: string;
  /** Where searches are answered from (search/open-backend.ts): the data directory's shards, or another tier. */
  backend: BackendConfig;
  host: string;
  port: number;
  tlsCert?: string;
  tlsKey?: string;
  /** Keep-alive `{}` after this long with nothing written (default LIMITS.keepAliveMs). */
  keepAliveMs?: number;
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
  /** How long close() lets open streams drain before it cuts them (serve --shutdown-grace-ms; default LIMITS.shutdownGraceMs). */
  shutdownGraceMs?: number;
}

export interface RunningServer {
  readonly port: number;
  readonly url: string;
  /** The data tier held nothing at start-up: every search answers "no results" until data is ingested. */
  readonly empty: boolean;
  /** Base URL of the metrics listener, when there is one. */
  readonly metricsUrl: string | undefined;
  /**
   * Stops taking connections, ends every open stream with the shutdown
   * terminator once what is buffered before it has drained (cutting those
   * still draining after the grace), then closes the backend and the key store.
   */
  close(): Promise<void>;
}

const errorOf = (code: ApiErrorCode) => new ApiError(code);

/** GET ping's body, made once. */
const PING_BODY = `${JSON.stringify({ ping: 'ok' })}\n`;

/** Stream failures that are the server's, not the query's: before any result is written they cost the key nothing. */
const SERVER_FAULTS: ReadonlySet<string | undefined> = new Set([STREAM_MESSAGES.INTERNAL, STREAM_MESSAGES.DATA_DAMAGED]);

/** What a shutdown did to the streams open during it. */
export interface ShutdownSummary {
  /** Streams that handed over their terminator (the shutdown's, or their own when they were ending anyway). */
  drained: number;
  /** Streams closed without one: the grace ran out, or uWS gave up on a reader that had stopped. */
  cut: number;
  /** Streams whose client hung up meanwhile. */
  hangups: number;
}

/** The streams this process has open: a bound on them, and a shutdown ends them all with a terminator. */
class OpenStreams {
  private reserved = 0;
  /** Of those, HTTP/1.0 answers, which are held whole (LIMITS.http10SearchesInFlightMax). */
  private reservedHttp10 = 0;
  /**
   * The open streams, a list threaded through the writers themselves
   * (SafWriter.openPrev/openNext): a Set's add and delete, with its table
   * grown and shrunk as the streams of each turn came and went, were 5% of a
   * small lookup's own JavaScript (bench/micro/front-end.ts).
   */
  private head: SafWriter | undefined;
  private open = 0;
  /** Set by shutdown(): the terminator message of every stream, those that begin later included. */
  private shutdownMessage: string | undefined;
  private summary: ShutdownSummary = { drained: 0, cut: 0, hangups: 0 };
  private changed: (() => void) | undefined;

  /** Streams reserved or open now. */
  get count(): number {
    return this.reserved;
  }

  /** Holds a place for one more stream, or refuses with 503 before anything is charged. */
  reserve(http10: boolean): void {
    if (this.reserved >= LIMITS.searchesInFlightMax) throw errorOf('OVERLOADED');
    if (http10 && this.reservedHttp10 >= LIMITS.http10SearchesInFlightMax) throw errorOf('OVERLOADED');
    this.reserved++;
    if (http10) this.reservedHttp10++;
  }

  release(http10: boolean): void {
    this.reserved--;
    if (http10) this.reservedHttp10--;
    this.changed?.();
  }

  add(w: SafWriter): void {
    w.openNext = this.head;
    if (this.head !== undefined) this.head.openPrev = w;
    this.head = w;
    w.listed = true;
    this.open++;
    // Admitted before the shutdown, begun after it: ended at once, as the others were.
    if (this.shutdownMessage !== undefined) w.shutdown(this.shutdownMessage);
  }

  /** Once the writer's stream has ended (its fate is known). */
  delete(w: SafWriter): void {
    if (!w.listed) return;
    w.listed = false;
    if (w.openPrev !== undefined) w.openPrev.openNext = w.openNext;
    else this.head = w.openNext;
    if (w.openNext !== undefined) w.openNext.openPrev = w.openPrev;
    w.openPrev = undefined;
    w.openNext = undefined;
    this.open--;
    if (this.shutdownMessage !== undefined) {
      const fate = w.outcome;
      if (fate === 'cut') this.summary.cut++;
      else if (fate === 'hangup') this.summary.hangups++;
      else this.summary.drained++;
    }
    this.changed?.();
  }

  /** The open streams now, as an array: what is done to each may end it. */
  private listed(): SafWriter[] {
    const all: SafWriter[] = [];
    for (let w = this.head; w !== undefined; w = w.openNext) all.push(w);
    return all;
  }

  /**
   * Ends every open stream, and every one that begins from now on, with a
   * `failed` terminator carrying `message` once what is buffered before it
   * has drained (SafWriter.shutdown). Resolves when no stream is open or
   * reserved; at `graceMs` it cuts the streams still draining and resolves
   * once they have closed, without waiting further for requests still being
   * admitted (their key store may not answer).
   */
  shutdown(message: string, graceMs: number): Promise<ShutdownSummary> {
    this.shutdownMessage = message;
    for (const w of this.listed()) w.shutdown(message);
    return new Promise((resolve) => {
      let graceOver = false;
      const check = () => {
        if (this.open > 0 || (this.reserved > 0 && !graceOver)) return;
        clearTimeout(timer);
        this.changed = undefined;
        resolve(this.summary);
      };
      const timer = setTimeout(() => {
        graceOver = true;
        for (const w of this.listed()) w.cut();
        check();
      }, graceMs);
      this.changed = check;
      check();
    });
  }
}

/** What every path answers to (OPTIONS says so in `Allow`). */
const ALLOWED_METHODS = 'GET, HEAD, OPTIONS';

const FAMILY_OF: Readonly<Record<Route['kind'], Family>> = {
  flex: 'flex', lookup: 'lookup', summarize: 'lookup', rate_limit: 'rate_limit', ping: 'ping', openapi: 'other', not_found: 'other',
  // A watch is a flexible search held open: counted with them.
  watch: 'flex',
};

/** Where a 503 OVERLOADED was raised along the admission path says what was full. */
const OVERLOAD_CAUSE: Readonly<Record<AdmissionStage, OverloadCause>> = {
  admit: 'key_store', plan: 'scan_queue', reserve: 'streams', charge: 'key_store', closing: 'shutdown',
};

/** The request handlers, over the backend and the gate this server was started with (exported for bench/micro/front-end.ts). */
export class FrontEnd {
  closing = false;
  readonly streams = new OpenStreams();

  constructor(private readonly backend: SearchBackend, private readonly gate: AccessGate, private readonly keepAliveMs: number,
    private readonly searchTimeoutMs: number, readonly stats: ServingStats) {}

  /**
   * Answers one request: undefined when it was answered (or its stream ended)
   * within this call, else a Promise that settles when it is; a refusal is a
   * throw or a rejection. The common answers (ping, a cached key's lookup that
   * ends in its first turn) make no Promise and wait for no microtask.
   */
  handle(x: Exchange): Promise<void> | undefined {
    const r = route(x.url);
    x.family = this.stats.families[FAMILY_OF[r.kind]];
    switch (r.kind) {
      case 'not_found':
        x.sendError(errorOf('NOT_FOUND'));
        return undefined;
      case 'ping':
        x.sendJsonText(PING_BODY);
        return undefined;
      case 'openapi':
        // No key: partners fetch the description before they have one.
        x.sendJsonText(openApiText());
        return undefined;
      case 'rate_limit':
      {
        const text = this.gate.rateLimitText(x.apiKey, x);
        if (text instanceof Promise) return text.then((t) => x.sendJsonText(t));
        x.sendJsonText(text);
        return undefined;
      }
      case 'flex':
      case 'lookup':
      case 'summarize': {
        if (!acceptsNdjson(x.accept)) throw errorOf('NOT_ACCEPTABLE');
        const now = Math.floor(Date.now() / 1000);
        const req = parseSearch(r.kind, r.segments, x.query, x.url, now, this.backend, this.searchTimeoutMs);
        return x.head ? this.searchHead(x, req) : this.search(x, req);
      }
      case 'watch': {
        if (!acceptsNdjson(x.accept)) throw errorOf('NOT_ACCEPTABLE');
        const started = Math.floor(Date.now() / 1000);
        const req = parseWatchRequest(r.segments, x.query, started, this.backend);
        return x.head ? this.searchHead(x, req) : this.search(x, req);
      }
    }
  }

  /**
   * HEAD on a search: the refusals a GET would get before its charge (400,
   * 401, 403, 415, 416), else the head of its 200 stream. Nothing is
   * planned, charged or run: HEAD is safe, and monitors send it.
   */
  private searchHead(x: Exchange, req: SearchRequest): Promise<void> | undefined {
    const found = this.gate.authenticate(x.apiKey, x, req.endpoint);
    if (found instanceof Promise) {
      return found.then((admission) => {
        applyKey(req.params, admission.limits);
        x.sendStreamHead();
      });
    }
    applyKey(req.params, found.limits);
    x.sendStreamHead();
    return undefined;
  }

  /**
   * Admits, charges and streams one search, in the order of the module
   * comment. Cached keys and unlimited keys answer synchronously: no await,
   * no microtask, on the hot path; each step goes on in a then() only when
   * the one before it had to wait.
   */
  private search(x: Exchange, req: SearchRequest): Promise<void> | undefined {
    const found = this.gate.authenticate(x.apiKey, x, req.endpoint);
    if (found instanceof Promise) return found.then((admission) => this.admitted(x, req, admission));
    return this.admitted(x, req, found);
  }

  private admitted(x: Exchange, req: SearchRequest, admission: Admission): Promise<void> | undefined {
    x.stage = 'plan';
    const planned = req.plan(applyKey(req.params, admission.limits));
    try {
      // Admitted while the server was taking requests, planned after it began to stop: nothing more starts.
      if (this.closing) {
        x.stage = 'closing';
        throw errorOf('OVERLOADED');
      }
      x.stage = 'reserve';
      this.streams.reserve(x.http10);
    } catch (err) {
      planned.cancel();
      throw err;
    }
    x.stage = 'charge';
    const charged = this.gate.charge(admission, req.endpoint);
    if (charged instanceof Promise) {
      return charged.then((grant) => this.granted(x, req, planned, grant), (err: unknown) => {
        this.streams.release(x.http10);
        planned.cancel();
        throw err;
      });
    }
    return this.granted(x, req, planned, charged);
  }

  /** A charged search: its stream, then its slot and its grant released, however it ends. */
  private granted(x: Exchange, req: SearchRequest, planned: PlannedSearch, grant: Grant): Promise<void> | undefined {
    const done = () => {
      this.streams.release(x.http10);
      grant.release();
    };
    let streamed: Promise<void> | undefined;
    try {
      if (x.aborted) planned.cancel();
      else streamed = this.stream(x, grant, planned, req);
    } catch (err) {
      done();
      throw err;
    }
    if (streamed === undefined) {
      done();
      return undefined;
    }
    return streamed.finally(done);
  }

  /** The 200 stream of an admitted search, to its terminator. */
  private stream(x: Exchange, grant: Grant, planned: PlannedSearch, req: SearchRequest): Promise<void> | undefined {
    const w = new SafWriter(x.res, x, Math.max(this.keepAliveMs, req.keepAliveMsMin ?? 0), x.http10);
    x.writer = w;
    w.begin(grant.headers);
    this.streams.add(w);
    let ran: PageOutcome | Promise<PageOutcome>;
    try {
      ran = planned.run(w);
    } catch (err) {
      this.streams.delete(w);
      throw err;
    }
    if (ran instanceof Promise) {
      return ran.then((outcome) => this.ran(x, grant, req, w, outcome), (err: unknown) => {
        this.streams.delete(w);
        throw err;
      });
    }
    return this.ran(x, grant, req, w, ran);
  }

  /** The answer has ended: once its stream has too (a slow reader's terminator waits for what is buffered before it), its bookkeeping. */
  private ran(x: Exchange, grant: Grant, req: SearchRequest, w: SafWriter, outcome: PageOutcome): Promise<void> | undefined {
    const fate = w.outcome;
    if (fate === undefined) {
      return w.whenFinished().then((f) => this.ended(x, grant, req, w, outcome, f), (err: unknown) => {
        this.streams.delete(w);
        throw err;
      });
    }
    this.ended(x, grant, req, w, outcome, fate);
    return undefined;
  }

  private ended(x: Exchange, grant: Grant, req: SearchRequest, w: SafWriter, outcome: PageOutcome, fate: StreamFate): void {
    try {
      if (outcome.error !== undefined) log.error({ err: outcome.error }, 'search failed after begin');
      // The server failed this answer before it wrote any result: it costs the key nothing (README "Quotas when a search fails").
      // A summary counts results but writes its one line only when it succeeds, so a failed one has delivered nothing.
      const delivered = req.endpoint !== 'summarize' && outcome.results > 0;
      x.family.results += req.endpoint !== 'summarize' ? outcome.results : outcome.terminator === 'failed' ? 0 : 1;
      if (outcome.terminator === 'failed' && SERVER_FAULTS.has(outcome.message) && !delivered) this.refund(grant);
      this.logRequest(x, grant, req, outcome, fate);
    } finally {
      this.streams.delete(w);
    }
  }

  private refund(grant: Grant): void {
    this.gate.refund(grant).catch((err: unknown) => log.warn({ err }, 'quota refund failed; the request stays charged'));
  }

  /**
   * The request log's line (server/log.ts): status, ms, key, results, terminator and what the query may
   * show. `terminator` says what the reader got: the answer's terminator, or `cut` when the server closed
   * the stream before it.
   */
  private logRequest(x: Exchange, grant: Grant, req: SearchRequest, outcome: PageOutcome, fate: StreamFate): void {
    // Checked first so that a quieter level does not even build the line.
    if (!requestLog.enabled) return;
    const terminator = fate === 'cut' ? 'cut' : outcome.terminator;
    requestLog.write(`,"status":200,"ms":${Math.round(performance.now() - x.started)}${logMember('key', grant.limits.fingerprint)}` +
      `,"results":${outcome.results},"terminator":"${terminator}"`, grant.limits.private ? '' : req.logMembers());
  }

  /** uWS's handler for every GET, and for every HEAD (`head`: the same answer without its body). */
  onGet(res: HttpResponse, req: HttpRequest, head = false): void {
    const x = new Exchange(res, req.getUrl(), req.getQuery() ?? '', req.getHeader('accept'), req.getHeader('x-api-key') || undefined,
      this.stats.families.other);
    x.head = head;
    x.http10 = isHttp10(req);
    res.onAborted(() => x.abort());
    if (x.url.length > LIMITS.urlBytesMax) return x.sendError(errorOf('EXCEPTION'));
    // Shutting down: a kept-alive connection may still send a request.
    if (this.closing) {
      this.stats.overloads.shutdown++;
      return x.sendError(errorOf('OVERLOADED'));
    }
    let handled: Promise<void> | undefined;
    try {
      handled = this.handle(x);
    } catch (err) {
      this.onError(x, err);
      return;
    }
    handled?.catch((err: unknown) => this.onError(x, err));
  }

  /**
   * OPTIONS on any path (HAProxy's default health check is `OPTIONS /
   * HTTP/1.0`): 204 and the methods served; 503 while shutting down, so that
   * a balancer checking this way stops sending new requests.
   */
  onOptions(res: HttpResponse, req: HttpRequest): void {
    const x = new Exchange(res, req.getUrl(), '', '', undefined, this.stats.families.other);
    x.http10 = isHttp10(req);
    if (this.closing) {
      this.stats.overloads.shutdown++;
      return x.sendError(errorOf('OVERLOADED'), [['Allow', ALLOWED_METHODS]]);
    }
    x.sendNoContent([['Allow', ALLOWED_METHODS]]);
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
 * backend's reason, the key store not answering), or what the backend
 * serves without. Probes do not pile up: checks that come while one is out
 * share its answer.
 */
function readiness(front: FrontEnd, backend: SearchBackend, gate: AccessGate): ReadinessCheck {
  let probing: Promise<Readiness> | undefined;
  const keyStore = (): Promise<string | undefined> => gate.probe().then(() => undefined, (err: unknown) => {
    log.warn({ err }, 'readiness: the key store did not answer');
    return 'key store unreachable';
  });
  return () => {
    if (front.closing) return Promise.resolve({ notReady: 'shutting down', degraded: undefined });
    probing ??= Promise.all([backend.notReady(), keyStore()]).then(([data, keys]) => ({
      notReady: data ?? keys, degraded: backend.degraded?.(),
    })).finally(() => {
      probing = undefined;
    });
    return probing;
  };
}

function createApp(app: TemplatedApp, front: FrontEnd, consoleFiles: ConsoleFiles | undefined): TemplatedApp {
  const shape = (req: HttpRequest, head: boolean): AnswerShape => ({ head, http10: isHttp10(req) });
  // uWS matches these more specific patterns before the API's catch-all, whatever the order they are added in.
  for (const head of [false, true]) {
    const on = head ? app.head.bind(app) : app.get.bind(app);
    on(CONSOLE_PATH, (res, req) => redirectToConsole(res, shape(req, head)));
    on(`${CONSOLE_PATH}/*`, (res, req) => serveConsoleFile(consoleFiles, res, req, shape(req, head)));
    on('/*', (res, req) => front.onGet(res, req, head));
  }
  app.options('/*', (res, req) => front.onOptions(res, req));
  // Every endpoint is GET (and HEAD, OPTIONS); other methods get the front end's 404.
  app.any('/*', (res: HttpResponse, req: HttpRequest) => {
    const now = performance.now();
    front.stats.families.other.answered(404, now, now);
    const http10 = isHttp10(req);
    res.cork(() => {
      res.writeStatus('404 Not Found').writeHeader('Content-Type', 'text/html; charset=utf-8');
      if (http10) res.writeHeader('Connection', 'close');
      res.end(API_ERRORS.NOT_FOUND.text);
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

/**
 * The key store's own news: an upgrade's migration (info), a store file
 * replaced and reopened (warn: someone changed the keys under a running
 * server), a store that cannot be read, so data requests get 503 (error).
 */
function logStoreNotice(notice: KeyStoreNotice): void {
  const fields = notice.err !== undefined ? { err: notice.err } : {};
  if (notice.kind === 'migrated') log.info(fields, notice.message);
  else if (notice.kind === 'reopened') log.warn(fields, notice.message);
  else log.error(fields, notice.message);
}

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  // Before anything below creates files there (the SQLite key store would
  // create the directory): a typo'd path must not serve an empty dataset.
  requireDataDir(opts.dataDir);
  // Before the scan threads start, too: a bad certificate or key is one line and exit 2 (tls-credentials.ts).
  if ((opts.tlsCert === undefined) !== (opts.tlsKey === undefined)) throw new TlsPairError('--tls-cert and --tls-key go together');
  const app = opts.tlsCert !== undefined && opts.tlsKey !== undefined ? openTlsApp(opts.tlsCert, opts.tlsKey) : uws.App();
  const http10 = installHttp10();
  if (http10 !== true) log.warn({ reason: http10 }, 'HTTP/1.0 requests will not be answered (uWS cannot parse them)');
  const faults = activeFaults();
  if (faults !== undefined) log.warn({ faults }, 'RRSCAN_FAULTS is set: failures will be injected on purpose (tests only)');
  const searchTimeoutMs = opts.searchTimeoutMs ?? LIMITS.searchTimeoutMs;
  const backend = await openBackend(opts.backend);
  const gate = AccessGate.open(opts.keyStore ?? sqliteKeyStoreConfig(opts.dataDir), { onStoreNotice: logStoreNotice });
  const keepAliveMs = opts.keepAliveMs ?? LIMITS.keepAliveMs;
  const shutdownGraceMs = opts.shutdownGraceMs ?? LIMITS.shutdownGraceMs;
  const described = backend.describe();
  log.info({ ...described.fields, keepAliveMs }, described.message);
  openApiText(); // built now, not on the thread of the first request that asks for it
  if (described.empty !== undefined) log.warn(described.empty.fields, described.empty.message);
  const front = new FrontEnd(backend, gate, keepAliveMs, searchTimeoutMs, new ServingStats());
  const sock = await listen(createApp(app, front, loadConsole()), opts.host, opts.port);
  let metrics: MetricsListener | undefined;
  try {
    const registry = () => metricsRegistry({
      serving: front.stats, refusals: gate.refusals, backend,
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
    empty: described.empty !== undefined,
    url: `${opts.tlsCert ? 'https' : 'http'}://${hostForUrl}:${port}`,
    metricsUrl: metrics?.url,
    async close() {
      // No new connections; open streams end with a terminator saying why
      // (their searches stop as for a client that hung up) once their
      // readers have taken what was buffered before it, within the grace;
      // then the backend and the key store close. The metrics listener
      // answers until then (/readyz: shutting down).
      front.closing = true;
      uws.us_listen_socket_close(sock);
      const started = performance.now();
      const ended = await front.streams.shutdown(STREAM_MESSAGES.SHUTDOWN, shutdownGraceMs);
      const fields = { ...ended, ms: Math.round(performance.now() - started), graceMs: shutdownGraceMs };
      if (ended.cut > 0) log.warn(fields, 'shutdown: streams cut, their readers had not drained them within the grace');
      else log.info(fields, 'shutdown: open streams ended');
      metrics?.close();
      await backend.close();
      gate.close();
      // Every request line of the streams just ended, written before the process exits.
      await flushLog();
    },
  };
}
