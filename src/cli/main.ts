// The `rrscan` command line. Operators script against these names and
// flags (issue 2, issue 5): keep them stable. Each flag is defined once, here
// or in keys.ts; the commands themselves are thin calls into src/.

import { Command, InvalidArgumentError, Option } from 'commander';
import cluster from 'node:cluster';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { LIMITS } from '../config/limits.js';
import { hasCode } from '../errors/catalogue.js';
import {
  ingestFiles, ingestObservations, skippedLine, SOURCE_FORMATS, type IngestSummary, type SkippedInput, type SourceFormat,
} from '../ingest/run.js';
import { parseListenAddress, type ListenAddress } from '../ingest/live/address.js';
import { LiveReceiver, type ReceiverOptions } from '../ingest/live/receiver.js';
import { AddressAllowList } from '../lib/address-allow-list.js';
import { ingestFilesToClickHouse } from '../ingest/clickhouse-ingest.js';
import { ClickHouse } from '../clickhouse/client.js';
import { initSchema } from '../clickhouse/schema.js';
import { compact, type CompactSummary } from '../shard/compactor.js';
import { AutoCompactor } from '../shard/auto-compactor.js';
import { DEFAULT_POLICY, topShardRrsetsFor, type TieredPolicy } from '../shard/compaction-policy.js';
import { readManifest, requireDataDir } from '../shard/manifest.js';
import { demoObservations } from '../demo/generate.js';
import { addKey, hasKeys } from '../auth/key-admin.js';
import { redisKeyStoreConfig, sqliteKeyStoreConfig } from '../auth/stores/open-key-store.js';
import { redisUrlArg, registerKeysCommand } from './keys.js';
import { progressBar } from './progress.js';
import type { IngestMetricSources } from '../server/ingest-metrics.js';
import type { MetricsListener, ReadinessCheck } from '../server/metrics-listener.js';

const DEMO_RECORDS_DEFAULT = 1_000_000;
const DEMO_KEY_FILE = 'demo-key.txt';
/** Exit status when the command's input is wrong (a bad ingest file, a data directory that is not there); 1 is any other failure. */
const EXIT_BAD_INPUT = 2;

function integer(name: string, min = 0, max = Number.MAX_SAFE_INTEGER) {
  return (v: string): number => {
    if (!/^-?\d+$/.test(v) || Number(v) < min || Number(v) > max) {
      throw new InvalidArgumentError(max === Number.MAX_SAFE_INTEGER ? `${name} must be an integer >= ${min}`
        : `${name} must be an integer from ${min} to ${max}`);
    }
    return Number(v);
  };
}

const dataOption = () => new Option('--data <dir>', 'data directory (shards, manifest, keys)').makeOptionMandatory();
const CLICKHOUSE_DATABASE_DEFAULT = 'rrscan';
const clickhouseDatabaseOption = () => new Option('--clickhouse-database <name>', 'ClickHouse database of the tables')
  .default(CLICKHOUSE_DATABASE_DEFAULT);

async function runDemo(dataDir: string, records: number): Promise<void> {
  const bar = progressBar('demo data', records, 'RRsets');
  const summary = await ingestObservations(demoObservations({ records }), dataDir, `demo ${records}`, (n) => bar.update(n));
  bar.update(records);
  bar.stop();
  console.log(`demo: ${summary.rrsets} RRsets (${summary.records} records) in ${summary.shards.length} shard(s), ` +
    `${summary.seconds.toFixed(1)} s`);
}

interface ServeFlags {
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

/**
 * Serves until SIGTERM (or SIGINT, unless `member`), then ends every open
 * stream with its terminator (each once its reader has taken what was
 * buffered before it, within --shutdown-grace-ms) and exits 0. `listening` gets the URL and the stop
 * function. A member of `--processes N` leaves SIGINT to its supervisor:
 * Ctrl-C reaches every process of the terminal's group, and a member that
 * stopped on its own before the supervisor heard of it would be restarted.
 */
async function serveUntilSignal(opts: ServeFlags, listening: (url: string, stop: () => void) => void,
  member = false): Promise<void> {
  const { startServer } = await import('../server/app.js');
  const server = await startServer({
    dataDir: opts.data, host: opts.host, port: opts.port,
    ...(opts.tlsCert ? { tlsCert: opts.tlsCert } : {}), ...(opts.tlsKey ? { tlsKey: opts.tlsKey } : {}),
    ...(opts.workers !== undefined ? { threads: opts.workers } : {}),
    ...(opts.queueMax !== undefined ? { queueMax: opts.queueMax } : {}),
    ...(opts.keepaliveMs !== undefined ? { keepAliveMs: opts.keepaliveMs } : {}),
    ...(opts.scanTurnMs !== undefined ? { scanTurnMs: opts.scanTurnMs } : {}),
    ...(opts.searchTimeoutMs !== undefined ? { searchTimeoutMs: opts.searchTimeoutMs } : {}),
    ...(opts.scrubMibPerS !== undefined ? { scrubBytesPerSecond: opts.scrubMibPerS * 1_048_576 } : {}),
    ...(opts.redisUrl !== undefined ? { keyStore: redisKeyStoreConfig(opts.redisUrl) } : {}),
    ...(opts.metricsPort !== undefined
      ? { metrics: member ? 'supervisor' as const : { host: opts.metricsHost ?? '127.0.0.1', port: opts.metricsPort } } : {}),
    ...(opts.clickhouseUrl !== undefined
      ? { clickhouse: { url: opts.clickhouseUrl, database: opts.clickhouseDatabase ?? CLICKHOUSE_DATABASE_DEFAULT } } : {}),
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
  if (server.shards === 0 && opts.clickhouseUrl === undefined) {
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

// The background compaction policy's flags (compaction-policy.ts), for every
// command that runs an AutoCompactor.
interface PolicyFlags {
  fanIn?: number;
  tierMinRrsets?: number;
  mergeRrsetsMax?: number;
  memoryMb?: number;
}

/** Adds the policy's flags to `cmd`: compact --auto and ingest --listen (--compact auto) take the same. */
function withPolicyOptions(cmd: Command): Command {
  for (const o of policyOptions()) cmd.addOption(o);
  return cmd;
}

const policyOptions = () => [
  new Option('--fan-in <k>', `background compaction: shards of one tier merged at once (default ${DEFAULT_POLICY.fanIn})`)
    .argParser(integer('--fan-in', 2, 64)),
  new Option('--tier-min-rrsets <n>', 'background compaction: shards standing for fewer than k times this many RRsets share ' +
    `the lowest tier (default ${DEFAULT_POLICY.tierMinRrsets})`).argParser(integer('--tier-min-rrsets', 1)),
  new Option('--merge-rrsets-max <n>', 'background compaction: a merge reads fewer RRsets than this (bounds its memory; ' +
    `shards of a k-th of it are not merged again; default ${DEFAULT_POLICY.mergeRrsetsMax})`)
    .argParser(integer('--merge-rrsets-max', 2, LIMITS.shardRrsetsMax)),
  memoryOption(),
];

/** Anonymous memory a compaction may hold; for --auto and background merges, it sizes the top tier's shards. */
const memoryOption = () => new Option('--memory-mb <n>', 'compaction: anonymous memory a merge may hold, which sizes its output ' +
  `shards (about ${LIMITS.mergeBytesPerRrsetHeld} bytes an RRset; default ${LIMITS.compactMemoryBytesDefault / 1_048_576})`)
  .argParser(integer('--memory-mb', Math.ceil(LIMITS.compactBaseBytes / 1_048_576) + 64, 1 << 20));

function policyOf(o: PolicyFlags): Partial<TieredPolicy> {
  return {
    ...(o.fanIn !== undefined ? { fanIn: o.fanIn } : {}),
    ...(o.tierMinRrsets !== undefined ? { tierMinRrsets: o.tierMinRrsets } : {}),
    ...(o.mergeRrsetsMax !== undefined ? { mergeRrsetsMax: o.mergeRrsetsMax } : {}),
    ...(o.memoryMb !== undefined ? { topShardRrsets: topShardRrsetsFor(o.memoryMb * 1_048_576) } : {}),
  };
}

/** `rrscan compact --auto`: an AutoCompactor until SIGTERM or SIGINT, which abandon a merge in flight and exit 0. */
async function compactInBackground(dataDir: string, policy: Partial<TieredPolicy>): Promise<void> {
  const { log } = await import('../server/log.js');
  mkdirSync(dataDir, { recursive: true });
  const compactor = new AutoCompactor({ dataDir, policy, log });
  // The compactor's timers let a process exit; this one holds it until a signal.
  const alive = setInterval(() => undefined, 1 << 30);
  compactor.start();
  const p = compactor.policy;
  console.log(`rrscan compacting ${dataDir} in the background: fan-in ${p.fanIn}, tier minimum ${p.tierMinRrsets} RRsets, ` +
    `merges under ${p.mergeRrsetsMax} RRsets, sealed shards merged into shards of up to ${p.topShardRrsets ?? 'n/a'} RRsets; ` +
    `${compactor.shardsMax()} shard(s) at most for the data there now`);
  const stop = () => {
    void compactor.stop().then(() => {
      clearInterval(alive);
      const t = compactor.totals;
      log.info({ merges: t.merges, rrsetsIn: t.rrsetsIn, rrsetsOut: t.rrsetsOut, bytesOut: t.bytesOut,
        seconds: Number(t.seconds.toFixed(3)), failures: t.failures }, 'background compaction stopped');
      log.flush(() => process.exit(0));
    });
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/**
 * `rrscan ingest --listen`: prints one `rrscan ingest listening on ADDR` line
 * per address (tcp:HOST:0 with its real port; tests read these lines), runs
 * until SIGTERM or SIGINT, then publishes what it holds and exits 0 (1 when
 * RRsets were lost: a failed flush whose last try, at shutdown, failed too).
 */
async function receiveUntilSignal(live: Omit<ReceiverOptions, 'log'>, compaction: Partial<TieredPolicy> | undefined,
  metrics: { host: string; port: number } | undefined): Promise<void> {
  const dataDir = live.dataDir;
  // The handlers go in before the addresses are printed: until a listener
  // exists the signal's default action kills the process, and whoever read
  // the addresses may signal at once.
  const signalled = new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  const { log } = await import('../server/log.js');
  const receiver = await LiveReceiver.start({ ...live, log });
  // Every flush publishes a small shard; the compactor keeps their number
  // logarithmic in the data (compaction-policy.ts) on a thread of its own.
  const compactor = compaction === undefined ? undefined : new AutoCompactor({ dataDir, policy: compaction, log });
  compactor?.start();
  let stopping = false;
  const listener = metrics === undefined ? undefined : await startIngestMetrics(metrics, {
    receiver: () => receiver.totals(), compactor: compactor === undefined ? undefined : () => compactor.totals,
  }, () => Promise.resolve({ notReady: stopping ? 'stopping' : undefined, degraded: undefined }));
  if (listener !== undefined) console.log(`rrscan metrics at ${listener.url}/metrics (health: /healthz, /readyz)`);
  for (const a of receiver.addresses) console.log(`rrscan ingest listening on ${a}`);
  await signalled;
  stopping = true;
  const [t] = await Promise.all([receiver.stop(), compactor?.stop()]);
  listener?.close();
  console.log(`ingest: stopped; ${t.senders} sender(s), ${t.frames} frames, ${t.published.rrsets} RRsets published in ` +
    `${t.published.shards} shard(s), ${t.outOfBailiwick} records out of bailiwick, ${t.rejected} frames rejected`);
  if (t.published.lostRrsets > 0) {
    // The log says why each failed; the exit code tells a supervisor that data was lost. A failed flush that
    // a retry published lost nothing: it shows in the log and the metrics, not here.
    console.error(`rrscan ingest: ${t.published.lostRrsets} RRsets lost (${t.published.failedFlushes} flush attempt(s) failed)`);
    process.exitCode = 1;
  }
}

/** The metrics listener of `ingest --listen --metrics-port N`. */
async function startIngestMetrics(at: { host: string; port: number }, sources: IngestMetricSources,
  ready: ReadinessCheck): Promise<MetricsListener> {
  const { ingestMetricsRegistry } = await import('../server/ingest-metrics.js');
  const { startMetricsListener } = await import('../server/metrics-listener.js');
  return startMetricsListener(at.host, at.port, ingestMetricsRegistry(sources), ready);
}

export function buildProgram(): Command {
  const program = new Command('rrscan').description('passive-DNS query service').showHelpAfterError();

  withPolicyOptions(program.command('ingest'))
    .description('ingest DNS data files into new shards (published atomically; on failure nothing changes); with --listen, ' +
      'receive dnstap from DNS servers until SIGTERM, publishing as it goes and compacting in the background; ' +
      'or with --clickhouse-url into ClickHouse (in batches; a failed run leaves the batches it sent)')
    .option('--data <dir>', 'data directory (shards, manifest, keys)')
    .option('--clickhouse-url <url>', 'write to ClickHouse at http://HOST:8123 instead (tables from `rrscan clickhouse init`)')
    .addOption(clickhouseDatabaseOption())
    .addOption(new Option('--format <format>', 'input format').choices(['auto', ...SOURCE_FORMATS]).default('auto'))
    .option('--origin <name>', 'zone origin for zone files without $ORIGIN')
    .option('--observed-at <epoch>', 'zone observation time (default: SOA serial date, else now)', integer('--observed-at'))
    .option('--include-root <dir>', 'a zone file\'s $INCLUDE may also read files under DIR (repeatable; by default only ' +
      'under the zone file\'s own directory)', (v: string, prev: string[] = []) => {
      if (!existsSync(v) || !statSync(v).isDirectory()) throw new InvalidArgumentError(`${v}: not a directory`);
      if (prev.length >= LIMITS.zoneIncludeRootsMax) throw new InvalidArgumentError(`at most ${LIMITS.zoneIncludeRootsMax} of them`);
      return [...prev, v];
    })
    .option('--max-errors <n>', 'skip and count up to N bad records before failing', integer('--max-errors'), 0)
    .option('--again', 'ingest every file given even when the input ledger says it was ingested already (by the SHA-256 ' +
      'of its bytes; without --again such a file is skipped, and named on stderr): its sightings then count twice')
    .option('--memory-rrsets <n>', 'RRsets held in memory before a shard is spilled (bounds peak memory); with --listen, ' +
      `before a shard is published (default ${LIMITS.liveRrsetsInMemoryMax})`, integer('--memory-rrsets', 1))
    .option('--workers <n>', 'threads for big NDJSON files, sharing --memory-rrsets (default: one per core)',
      integer('--workers', 1, LIMITS.ingestThreadsMax))
    .option('--listen <addr>', 'receive dnstap from DNS servers over Frame Streams at unix:/path.sock or tcp:HOST:PORT ' +
      '(repeatable), publishing a shard every --flush-seconds, until SIGTERM', (v: string, prev: ListenAddress[] = []) => {
      try {
        return [...prev, parseListenAddress(v)];
      } catch (err) {
        throw new InvalidArgumentError((err as Error).message);
      }
    })
    .option('--senders-max <n>', `with --listen: senders connected at once (default and most ${LIMITS.liveSendersMax}); ` +
      'at the cap a new connection takes the place of the sender silent longest (see --sender-idle-seconds) or of the ' +
      'oldest of too many handshakes, else it is closed', integer('--senders-max', 1, LIMITS.liveSendersMax))
    .option('--sender-idle-seconds <n>', 'with --listen: at the --senders-max cap, a started sender that has sent no ' +
      `frame for this long may be closed to admit a new one (default ${LIMITS.liveSenderIdleSecondsDefault}; never below the cap)`,
    integer('--sender-idle-seconds', 1, LIMITS.liveSenderIdleSecondsMax))
    .option('--allow-cidr <cidr>', 'with --listen: accept tcp: connections only from these addresses, ADDRESS/PREFIX or ' +
      'ADDRESS (repeatable; IPv4-mapped IPv6 matches IPv4 rules); others are closed at accept and logged. Default: any',
    (v: string, prev: string[] = []) => {
      if (prev.length >= LIMITS.liveAllowCidrsMax) throw new InvalidArgumentError(`at most ${LIMITS.liveAllowCidrsMax} of them`);
      try {
        AddressAllowList.fromCidrs([v]);
      } catch (err) {
        throw new InvalidArgumentError((err as Error).message);
      }
      return [...prev, v];
    })
    .option('--flush-seconds <n>', `with --listen: publish what was received this often (default ${LIMITS.liveFlushSecondsDefault})`,
      integer('--flush-seconds', 1, LIMITS.liveFlushSecondsMax))
    .addOption(new Option('--compact <mode>', 'with --listen: merge the flushed shards in the background as the tiered ' +
      'policy asks (auto), or leave that to `rrscan compact --auto` in its own process (off)').choices(['auto', 'off']))
    .option('--metrics-port <port>', 'with --listen: serve Prometheus /metrics (frames, records, refusals, flushes, merges), ' +
      '/healthz and /readyz on this port (0 = any free port)', integer('--metrics-port', 0, 65535))
    .option('--metrics-host <host>', 'address of the metrics port', '127.0.0.1')
    .argument('[files...]', 'input files (none with --listen)')
    .action(async (files: string[], o: { data?: string; clickhouseUrl?: string; clickhouseDatabase: string;
      format: SourceFormat | 'auto'; origin?: string; observedAt?: number; includeRoot?: string[]; maxErrors: number; again?: boolean;
      memoryRrsets?: number; workers?: number; listen?: ListenAddress[]; flushSeconds?: number; compact?: 'auto' | 'off';
      sendersMax?: number; senderIdleSeconds?: number; allowCidr?: string[]; metricsPort?: number; metricsHost: string } & PolicyFlags) => {
      if ((o.data === undefined) === (o.clickhouseUrl === undefined)) {
        throw new InvalidArgumentError('give exactly one of --data and --clickhouse-url');
      }
      const policy = policyOf(o);
      if (o.listen !== undefined) {
        if (o.data === undefined) throw new InvalidArgumentError('--listen publishes shards: it takes --data');
        if (files.length > 0) throw new InvalidArgumentError('--listen takes no input files');
        if (o.again) throw new InvalidArgumentError('--again goes with input files, not --listen');
        if (o.includeRoot !== undefined) throw new InvalidArgumentError('--include-root goes with zone files, not --listen');
        if (o.compact === 'off' && Object.keys(policy).length > 0) {
          throw new InvalidArgumentError('--fan-in, --tier-min-rrsets and --merge-rrsets-max go with --compact auto');
        }
        if (o.allowCidr !== undefined && !o.listen.some((a) => a.kind === 'tcp')) {
          throw new InvalidArgumentError('--allow-cidr applies to tcp: listeners (a unix socket is guarded by its file\'s ' +
            'permissions), and --listen names none');
        }
        await receiveUntilSignal({
          dataDir: o.data, listen: o.listen, flushSeconds: o.flushSeconds ?? LIMITS.liveFlushSecondsDefault,
          memoryRrsets: o.memoryRrsets ?? LIMITS.liveRrsetsInMemoryMax, sendersMax: o.sendersMax ?? LIMITS.liveSendersMax,
          senderIdleMs: (o.senderIdleSeconds ?? LIMITS.liveSenderIdleSecondsDefault) * 1000,
          ...(o.allowCidr !== undefined ? { allow: AddressAllowList.fromCidrs(o.allowCidr) } : {}),
        }, o.compact === 'off' ? undefined : policy,
        o.metricsPort === undefined ? undefined : { host: o.metricsHost, port: o.metricsPort });
        return;
      }
      if (o.flushSeconds !== undefined) throw new InvalidArgumentError('--flush-seconds goes with --listen');
      for (const [given, flag] of [[o.sendersMax, '--senders-max'], [o.senderIdleSeconds, '--sender-idle-seconds'],
        [o.allowCidr, '--allow-cidr']] as const) {
        if (given !== undefined) throw new InvalidArgumentError(`${flag} goes with --listen`);
      }
      if (o.metricsPort !== undefined) throw new InvalidArgumentError('--metrics-port goes with --listen');
      if (o.compact !== undefined || Object.keys(policy).length > 0) {
        throw new InvalidArgumentError('--compact and the compaction policy flags go with --listen');
      }
      if (files.length === 0) throw new InvalidArgumentError('name input files, or --listen ADDR');
      const total = files.length;
      const bar = progressBar('ingest', 100, '%');
      try {
        const common = {
          format: o.format, maxErrors: o.maxErrors,
          ...(o.origin !== undefined ? { origin: o.origin } : {}),
          ...(o.observedAt !== undefined ? { observedAt: o.observedAt } : {}),
          ...(o.includeRoot !== undefined ? { includeRoots: o.includeRoot } : {}),
          onProgress: (done: number, all: number) => bar.update(all > 0 ? Math.floor((done / all) * 100) : 100),
          onReject: (err: Error) => process.stderr.write(`rrscan ingest: skipped: ${err.message}\n`),
          again: o.again === true,
          onSkip: (skip: SkippedInput) => process.stderr.write(`rrscan ingest: ${skippedLine(skip)}\n`),
        };
        let s: IngestSummary;
        if (o.clickhouseUrl !== undefined) {
          s = await ingestFilesToClickHouse(files, { ...common, url: o.clickhouseUrl, database: o.clickhouseDatabase });
        } else {
          s = await ingestFiles(files, {
            ...common, dataDir: o.data!,
            ...(o.memoryRrsets !== undefined ? { memoryRrsets: o.memoryRrsets } : {}),
            ...(o.workers !== undefined ? { threads: o.workers } : {}),
          });
        }
        bar.stop();
        const rate = s.seconds > 0 ? Math.round(s.records / s.seconds) : s.records;
        const where = o.clickhouseUrl !== undefined ? `sent to ClickHouse database ${o.clickhouseDatabase}`
          : `written in ${s.shards.length} shard(s)`;
        const skipped = s.skipped > 0 ? ` (${s.skipped} skipped: already ingested)` : '';
        console.log(`ingest: ${total} file(s)${skipped}, ${s.records} records read, ${s.rrsets} RRsets ${where}, ` +
          `${s.rejected} rejected, ${s.seconds.toFixed(2)} s, ${rate} records/s`);
        if (s.forgotten.records > 0) {
          console.error(`rrscan ingest: WARNING: the input ledger keeps ${LIMITS.ledgerInputsMax} files; it forgot the ` +
            `${s.forgotten.records} ingested longest ago (up to ${new Date(s.forgotten.newest * 1000).toISOString()}): ` +
            'given again, those would be ingested again');
        }
        for (const r of s.refused) console.error(`rrscan ingest: ${r}`);
        // Files refused: the others went in, but the run did not do all it was asked.
        if (s.refused.length > 0) process.exitCode = 1;
      } catch (err) {
        bar.stop();
        if (hasCode(err, 'INGEST_BAD_INPUT')) {
          console.error(`rrscan ingest: ${(err as Error).message}`);
          console.error('rrscan ingest: nothing was published (use --max-errors N to skip bad records)');
          process.exitCode = EXIT_BAD_INPUT;
          return;
        }
        // Any other failure also publishes nothing to shards (ingestFiles
        // deletes what the run wrote): one line. A full disk reads "DIR: no
        // space left on device (writing FILE)" (DiskFullError). Not matched by
        // code: errors from the parallel ingest threads arrive as copies
        // without one. ClickHouse takes batch by batch, so there the line says
        // what stays and how the ledger guards it.
        const outcome = o.clickhouseUrl !== undefined
          ? 'batches sent before the failure stay in ClickHouse (the next run refuses a file left unfinished, until --again)'
          : 'nothing was published';
        console.error(`rrscan ingest: ${err instanceof Error ? err.message : String(err)}; ${outcome}`);
        process.exitCode = 1;
      }
    });

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
      integer('--keepalive-ms', LIMITS.keepAliveIntervalMsMin, LIMITS.keepAliveIntervalMsMax), LIMITS.keepAliveIntervalMs)
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

  const clickhouse = program.command('clickhouse').description('the ClickHouse data tier');
  clickhouse.command('init')
    .description('create the database and tables rrscan uses (idempotent: what exists is left as it is)')
    .requiredOption('--url <url>', 'ClickHouse HTTP interface, http://HOST:8123')
    .option('--database <name>', 'database to create the tables in', CLICKHOUSE_DATABASE_DEFAULT)
    .option('--cluster <name>', 'this server is a shard of cluster NAME (from its remote_servers): also create ' +
      'Distributed tables over it, through which ingest writes and serve reads; run init on every shard')
    .option('--replicated', 'replicated tables (ReplicatedAggregatingMergeTree) through the server\'s ZooKeeper, among the ' +
      'servers whose <macros> name the same shard; run init on every replica')
    .action(async (o: { url: string; database: string; cluster?: string; replicated?: boolean }) => {
      const ch = new ClickHouse(o.url);
      try {
        const { version, warnings } = await initSchema(ch, {
          database: o.database, ...(o.cluster !== undefined ? { cluster: o.cluster } : {}), replicated: o.replicated === true,
        });
        for (const w of warnings) console.error(`rrscan clickhouse init: warning: ${w}`);
        console.log(`clickhouse init: database ${o.database} ready on ClickHouse ${version} at ${o.url}` +
          `${o.replicated === true ? ' (replicated)' : ''}`);
      } catch (err) {
        console.error(`rrscan clickhouse init: ${err instanceof Error ? err.message : String(err)}`);
        process.exitCode = 1;
      } finally {
        ch.close();
      }
    });

  withPolicyOptions(program.command('compact')
    .description('merge all shards into as few as possible, aggregating duplicate RRsets; with --auto, keep merging ' +
      'in the background as the tiered policy asks while ingest publishes (until SIGTERM)')
    .addOption(dataOption())
    .option('--workers <n>', 'threads, each merging a range of owner names (default: one per core; not with --auto, ' +
      'whose merges take one thread)', integer('--workers', 1, LIMITS.ingestThreadsMax))
    .option('--auto', 'run until SIGTERM, merging k shards of a size tier whenever a tier holds k (logs each merge)'))
    .action(async (o: { data: string; workers?: number; auto?: boolean } & PolicyFlags) => {
      const policy = policyOf(o);
      if (o.auto) {
        if (o.workers !== undefined) throw new InvalidArgumentError('--workers is for a full compaction; --auto merges on one thread');
        await compactInBackground(o.data, policy);
        return;
      }
      if (o.fanIn !== undefined || o.tierMinRrsets !== undefined || o.mergeRrsetsMax !== undefined) {
        throw new InvalidArgumentError('--fan-in, --tier-min-rrsets and --merge-rrsets-max go with --auto');
      }
      let s: CompactSummary;
      try {
        s = await compact(o.data, {
          ...(o.workers !== undefined ? { threads: o.workers } : {}),
          ...(o.memoryMb !== undefined ? { memoryBytes: o.memoryMb * 1_048_576 } : {}),
        });
      } catch (err) {
        // compact() deletes the shards it wrote before it throws (a full disk
        // among the reasons), so the live shards are as they were.
        console.error(`rrscan compact: ${err instanceof Error ? err.message : String(err)}; the shards were left as they were`);
        process.exitCode = 1;
        return;
      }
      console.log(`compact: ${s.inputShards} shard(s), ${s.rrsetsIn} RRsets in -> ${s.outputShards} shard(s), ` +
        `${s.rrsetsOut} RRsets, ${s.seconds.toFixed(2)} s`);
    });

  program.command('demo')
    .description('generate the deterministic demo dataset into new shards')
    .addOption(dataOption())
    .option('--rrsets <n>', 'RRsets to generate', integer('--rrsets', 1, LIMITS.demoRecordsMax), DEMO_RECORDS_DEFAULT)
    // The old name counted RRsets too, where every other "records" counts records (IngestSummary.records).
    .addOption(new Option('--records <n>', 'deprecated: the old name of --rrsets').hideHelp()
      .argParser(integer('--records', 1, LIMITS.demoRecordsMax)))
    .action(async (o: { data: string; rrsets: number; records?: number }) => {
      if (o.records !== undefined) console.error('rrscan demo: --records is deprecated and will go; it is --rrsets now (it counts RRsets)');
      await runDemo(o.data, o.records ?? o.rrsets);
    });

  program.command('start')
    .description('what `npm start` runs: demo data and a key if missing, then serve ($RRSCAN_DATA or ./data, $PORT or 8080, ' +
      '$RRSCAN_HOST or 127.0.0.1)')
    .action(async () => {
      const data = path.resolve(process.env['RRSCAN_DATA'] ?? 'data');
      const port = Number(process.env['PORT'] ?? 8080);
      // Loopback unless asked: the demo key is unlimited. The container image asks for 0.0.0.0 (deploy/Dockerfile).
      const host = process.env['RRSCAN_HOST'] ?? '127.0.0.1';
      mkdirSync(data, { recursive: true });
      if (readManifest(data).shards.length === 0) {
        console.log(`rrscan: no shards in ${data}; generating the demo dataset (${DEMO_RECORDS_DEFAULT} RRsets) once`);
        await runDemo(data, DEMO_RECORDS_DEFAULT);
      }
      const keyFile = path.join(data, DEMO_KEY_FILE);
      const keyStore = sqliteKeyStoreConfig(data);
      if (!(await hasKeys(keyStore))) {
        // Keys are stored hashed; the demo key is also kept in clear here so
        // that every `npm start` can print it. Real keys never are.
        const key = await addKey(keyStore, { quota: { kind: 'unlimited' } });
        writeFileSync(keyFile, key + '\n', { mode: 0o600 });
      }
      const key = existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : '<your key>';
      await serveUntilSignal({ data, host, port, shutdownGraceMs: LIMITS.shutdownGraceMs }, (url) => {
        console.log(`\nrrscan is serving ${data}\n  base URL: ${url}/pdns/v2/\n  demo key: ${key}\n  console:  ${url}/console/\n`);
        console.log(`Try:\n  curl -sH 'X-API-Key: ${key}' '${url}/pdns/v2/regex/rrnames/paypal?limit=5'\n`);
      });
    });

  registerKeysCommand(program);
  return program;
}

buildProgram().parseAsync(process.argv).catch((err: unknown) => {
  console.error(`rrscan: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
