// The operator's listener: Prometheus metrics and health checks on a port of
// their own (`serve --metrics-port N`, `ingest --listen --metrics-port N`;
// loopback unless --metrics-host says otherwise), so that partners, who
// reach the public port, never see them. The public port answers these
// paths with its 404 like any other unknown path. Shared by the server
// (server/metrics.ts's registry, through server/metrics-listener.ts) and the
// live receiver (ingest/live/live-metrics.ts), which is why it sits in lib.
//
//   GET /metrics  the registry given, Prometheus text format
//   GET /healthz  200 "ok": the process is up and its event loop turns
//   GET /readyz   200 "ready" when it can serve: the data backend is ready
//                 (shards mapped, or every ClickHouse shard answers) and the
//                 key store answers; "ready; degraded: WHAT" while it serves
//                 without something (a quarantined shard: still 200, since
//                 pulling every server that shares a bad file would take
//                 the whole service down; alert on the metric instead);
//                 otherwise 503 "not ready: REASON"
// Anything else: 404 "not found". Plain HTTP always: it is meant for a
// loopback address or a private network, not for partners.

import type { Registry } from 'prom-client';
import type { Log } from './log.js';
import { uws, type HttpResponse, type us_listen_socket } from './uws.js';

/** Why the server cannot serve now (notReady), or what it serves without (degraded); both undefined when all is well. */
export interface Readiness {
  notReady: string | undefined;
  degraded: string | undefined;
}

export type ReadinessCheck = () => Promise<Readiness>;

/** /readyz's status and body for a readiness. */
export function readinessAnswer(r: Readiness): [status: string, body: string] {
  if (r.notReady !== undefined) return ['503 Service Unavailable', `not ready: ${r.notReady}\n`];
  return ['200 OK', r.degraded !== undefined ? `ready; degraded: ${r.degraded}\n` : 'ready\n'];
}

/** What /metrics prints: a prom-client registry, or the supervisor's aggregate of its members' (process-group.ts). */
export type MetricsText = Pick<Registry, 'contentType' | 'metrics'>;

export interface MetricsListener {
  readonly port: number;
  readonly url: string;
  close(): void;
}

const TEXT = 'text/plain; charset=utf-8';

/** One answer, unless the client has gone (uWS forbids writing to an aborted response). */
function reply(res: HttpResponse, gone: () => boolean, status: string, contentType: string, body: string): void {
  if (gone()) return;
  res.cork(() => {
    res.writeStatus(status).writeHeader('Content-Type', contentType).end(body);
  });
}

/** Registers onAborted (uWS requires it before an asynchronous reply) and answers what `answer` resolves. */
function later(res: HttpResponse, log: Log, answer: () => Promise<[string, string, string]>): void {
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  answer().then(
    ([status, type, body]) => reply(res, () => aborted, status, type, body),
    (err: unknown) => {
      log.error({ err }, 'metrics listener failed to answer');
      reply(res, () => aborted, '500 Internal Server Error', TEXT, 'internal error\n');
    },
  );
}

/** Listens on host:port (0: any free port) until close(); a failure to answer is logged to `log`. */
export async function startMetricsListener(host: string, port: number, registry: MetricsText,
  ready: ReadinessCheck, log: Log): Promise<MetricsListener> {
  const app = uws.App();
  const never = () => false;
  app.get('/metrics', (res) => later(res, log, async () => ['200 OK', registry.contentType, await registry.metrics()]));
  app.get('/healthz', (res) => reply(res, never, '200 OK', TEXT, 'ok\n'));
  app.get('/readyz', (res) => later(res, log, async () => {
    const [status, body] = readinessAnswer(await ready());
    return [status, TEXT, body];
  }));
  app.any('/*', (res) => reply(res, never, '404 Not Found', TEXT, 'not found\n'));
  const sock = await new Promise<us_listen_socket>((resolve, reject) => {
    app.listen(host, port, (s) => (s ? resolve(s) : reject(new Error(`cannot listen on ${host}:${port} for metrics`))));
  });
  const bound = uws.us_socket_local_port(sock);
  const hostForUrl = host.includes(':') ? `[${host}]` : host;
  return {
    port: bound,
    url: `http://${hostForUrl}:${bound}`,
    close: () => uws.us_listen_socket_close(sock),
  };
}
