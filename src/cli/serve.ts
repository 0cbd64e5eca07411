// `rrscan serve`: the HTTP(S) front end over a data directory (or
// ClickHouse), as one process, as the supervisor of --processes N, or as one
// of its members. `rrscan start` serves through serveUntilSignal too.

import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import cluster from 'node:cluster';
import { redisKeyStoreConfig } from '../auth/stores/open-key-store.js';
import { LIMITS } from '../config/limits.js';
import { hasCode } from '../errors/catalogue.js';
import type { Log } from '../lib/log.js';
import type { BackendConfig } from '../search/open-backend.js';
import { requireDataDir } from '../shard/manifest.js';
import type { MetricsListener } from '../server/metrics-listener.js';
import { CLICKHOUSE_DATABASE_DEFAULT, clickhouseDatabaseOption, dataOption, EXIT_BAD_INPUT, integer } from './flags.js';
import { redisUrlArg } from './keys.js';

export interface ServeFlags {
  data: string;
  host: string;
  port: number;
  tlsCert?: string;
  tlsKey?: string;
  workers?: number;
  queueMax?: number;
  keepaliveMs?: number;
  scanTurnMs?: number;
  searchTimeoutMs?: number;
  redisUrl?: string;
  metricsPort?: number;
  metricsHost?: string;
  clickhouseUrl?: string;
  clickhouseDatabase?: string;
  scrubMibPerS?: number;
  shutdownGraceMs: number;
}

/** The data tier serve's flags name (search/open-backend.ts): ClickHouse with --clickhouse-url, else DIR's shards. */
function backendConfig(opts: ServeFlags, log: Log): BackendConfig {
  if (opts.clickhouseUrl !== undefined) {
    return {
      kind: 'clickhouse', url: opts.clickhouseUrl, database: opts.clickhouseDatabase ?? CLICKHOUSE_DATABASE_DEFAULT,
      // ClickHouse stops a query a second after the answer has timed out, should the hang-up's KILL QUERY be lost.
      querySeconds: Math.ceil((opts.searchTimeoutMs ?? LIMITS.searchTimeoutMs) / 1000) + 1,
    };
  }
  return {
    kind: 'local', dataDir: opts.data, log,
    ...(opts.workers !== undefined ? { threads: opts.workers } : {}),
    ...(opts.queueMax !== undefined ? { queueMax: opts.queueMax } : {}),
    ...(opts.scanTurnMs !== undefined ? { turnMs: opts.scanTurnMs } : {}),
    scrubBytesPerSecond: opts.scrubMibPerS !== undefined ? opts.scrubMibPerS * 1_048_576 : LIMITS.scrubBytesPerSecond,
  };
}

/**
 * Serves until SIGTERM (or SIGINT, unless `member`), then ends every open
 * stream with its terminator (each once its reader has taken what was
 * buffered before it, within --shutdown-grace-ms) and exits 0. `listening` gets the URL and the stop
 * function. A member of `--processes N` leaves SIGINT to its supervisor:
 * Ctrl-C reaches every process of the terminal's group, and a member that
 * stopped on its own before the supervisor heard of it would be restarted.
 */
export async function serveUntilSignal(opts: ServeFlags, listening: (url: string, stop: () => void) => void,
  member = false): Promise<void> {
  const { startServer } = await import('../server/app.js');
  const { log } = await import('../server/log.js');
  const server = await startServer({
    dataDir: opts.data, backend: backendConfig(opts, log), host: opts.host, port: opts.port,
    ...(opts.tlsCert ? { tlsCert: opts.tlsCert } : {}), ...(opts.tlsKey ? { tlsKey: opts.tlsKey } : {}),
    ...(opts.keepaliveMs !== undefined ? { keepAliveMs: opts.keepaliveMs } : {}),
    ...(opts.searchTimeoutMs !== undefined ? { searchTimeoutMs: opts.searchTimeoutMs } : {}),
    ...(opts.redisUrl !== undefined ? { keyStore: redisKeyStoreConfig(opts.redisUrl) } : {}),
    ...(opts.metricsPort !== undefined
      ? { metrics: member ? 'supervisor' as const : { host: opts.metricsHost ?? '127.0.0.1', port: opts.metricsPort } } : {}),
    shutdownGraceMs: opts.shutdownGraceMs,
  });
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    void server.close().then(() => process.exit(0));
  };
  // Before the banner: whoever reads it may signal at once, and without a
  // handler the default action would end the streams without terminators.
  if (member) process.on('SIGINT', () => undefined);
  else process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  // Before the banner: scripts (and the tests) read both once the banner is out.
  if (server.metricsUrl !== undefined) console.log(`rrscan metrics at ${server.metricsUrl}/metrics (health: /healthz, /readyz)`);
  listening(server.url, stop);
  if (server.empty) {
    // Loud on purpose: an empty dataset answers every search with "no results", which looks like a working server.
    console.error(`rrscan serve: WARNING: ${opts.data} holds no shards; every search will find nothing until data is ingested ` +
      `(rrscan ingest --data ${opts.data} FILE...)`);
  }
}

/** serve --processes N > 1, in the supervisor: starts the members and stops them on SIGTERM or SIGINT. */
async function superviseUntilSignal(opts: ServeFlags & { processes: number }, banner: (url: string) => void): Promise<void> {
  const { ProcessGroup, startGroupMetrics } = await import('../server/process-group.js');
  const { group, url } = await ProcessGroup.start({
    processes: opts.processes, host: opts.host, port: opts.port, shutdownGraceMs: opts.shutdownGraceMs,
  });
  let metrics: MetricsListener | undefined;
  const stop = () => {
    metrics?.close();
    void group.stop().then((code) => process.exit(code));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  if (opts.metricsPort !== undefined) {
    try {
      metrics = await startGroupMetrics(group, opts.metricsHost ?? '127.0.0.1', opts.metricsPort);
    } catch (err) {
      await group.stop();
      throw err;
    }
    console.log(`rrscan metrics at ${metrics.url}/metrics (health: /healthz, /readyz)`);
  }
  banner(url);
}

/** serve, as one process, as the supervisor of --processes N, or as one of its members. */
async function serve(o: ServeFlags & { processes: number }): Promise<void> {
  const banner = (url: string) => console.log(`rrscan serving ${o.data} at ${url}/pdns/v2/` +
    (o.processes > 1 ? ` (${o.processes} processes)` : ''));
  const { joinGroup, membership, scanThreadsPerMember } = await import('../server/process-group.js');
  const member = membership();
  if (member === undefined) {
    if (o.processes > 1) {
      // Here, not in each member: a typo'd path or a bad certificate is one error, not N failed starts.
      requireDataDir(o.data);
      if (o.tlsCert !== undefined && o.tlsKey !== undefined) {
        const { openTlsApp } = await import('../server/tls-credentials.js');
        openTlsApp(o.tlsCert, o.tlsKey); // the app is dropped: each member opens its own
      }
      return superviseUntilSignal(o, banner);
    }
    return serveUntilSignal(o, banner);
  }
  const workers = o.workers ?? scanThreadsPerMember(o.processes);
  return serveUntilSignal({ ...o, port: member.port, workers }, joinGroup, true);
}

export function registerServeCommand(program: Command): void {
  program.command('serve')
    .description('serve the data directory over HTTP(S)')
    .addOption(dataOption())
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 = any free port)', integer('--port'), 8080)
    .option('--tls-cert <file>', 'TLS certificate (PEM); with --tls-key serves HTTPS')
    .option('--tls-key <file>', 'TLS private key (PEM)')
    .option('--workers <n>', 'scan threads (default: one per core)', integer('--workers', 1, LIMITS.scanThreadsMax))
    .option('--queue-max <n>', 'scan tasks (one per shard or shard slice) that may wait for a busy worker; ' +
      'a search that would queue more gets 503', integer('--queue-max', 0, LIMITS.poolQueueMaxCeiling), LIMITS.poolQueueMax)
    .option('--keepalive-ms <n>', 'send a {} line when a stream has been silent this long',
      integer('--keepalive-ms', LIMITS.keepAliveMsMin, LIMITS.keepAliveMsMax), LIMITS.keepAliveMs)
    .option('--scan-turn-ms <n>', 'a scan task holds its worker this long, then waiting tasks go first',
      integer('--scan-turn-ms', LIMITS.scanTurnMsMin, LIMITS.scanTurnMsMax), LIMITS.scanTurnMs)
    .option('--search-timeout-ms <n>', 'a search running longer ends its stream with {"cond":"failed","msg":"Query timed out"}',
      integer('--search-timeout-ms', LIMITS.searchTimeoutMsMin, LIMITS.searchTimeoutMsMax), LIMITS.searchTimeoutMs)
    .option('--scrub-mib-per-s <n>', 're-read every shard in the background at most this fast and take one whose checksums ' +
      'no longer match out of service (0 = off)', integer('--scrub-mib-per-s', 0, LIMITS.scrubMibPerSecondMax),
    LIMITS.scrubBytesPerSecond / 1_048_576)
    .option('--redis-url <url>', 'keys, quotas and concurrency caps in Redis at redis://HOST:PORT[/DB], shared by every server ' +
      'naming it (add keys with `rrscan keys add --redis-url URL`); default: DIR/keys.sqlite', redisUrlArg)
    .option('--clickhouse-url <url>', 'answer searches from ClickHouse at http://HOST:8123 (tables from ' +
      '`rrscan clickhouse init`) instead of DIR\'s shards; keys stay in DIR or --redis-url')
    .addOption(clickhouseDatabaseOption())
    .option('--processes <n>', 'front-end processes sharing the port (SO_REUSEPORT), each with its own scan threads ' +
      '(default --workers: the cores shared among them)', integer('--processes', 1, LIMITS.groupProcessesMax), 1)
    .option('--metrics-port <port>', 'serve Prometheus /metrics, /healthz and /readyz on this port (0 = any free port); ' +
      'off unless given; with --processes N, for the whole group', integer('--metrics-port', 0, 65535))
    .option('--metrics-host <host>', 'address of the metrics port; keep it off the address partners reach', '127.0.0.1')
    .option('--shutdown-grace-ms <n>', 'after SIGTERM, how long open streams may take to drain to their terminator before ' +
      'they are cut (stop timeouts of containers and units must be longer)',
    integer('--shutdown-grace-ms', 0, LIMITS.shutdownGraceMsMax), LIMITS.shutdownGraceMs)
    .action(async (o: ServeFlags & { processes: number }) => {
      if (Boolean(o.tlsCert) !== Boolean(o.tlsKey)) throw new InvalidArgumentError('--tls-cert and --tls-key go together');
      try {
        await serve(o);
      } catch (err) {
        // Refusals of the operator's input: one line, exit 2. Anything else is a failure of ours (exit 1 below).
        if (!hasCode(err, 'DATA_DIR_MISSING', 'TLS_PAIR_INVALID')) throw err;
        console.error(`rrscan serve: ${(err as Error).message}`);
        process.exitCode = EXIT_BAD_INPUT;
        // A member of --processes N (restarted onto files that changed since the group started): its channel to the
        // supervisor would keep it alive, neither serving nor gone (and letting go of the channel exits 0).
        if (cluster.isWorker) process.exit(EXIT_BAD_INPUT);
      }
    });
}
