// The `rrscan` command line. Operators script against these names and
// flags (issue 2, issue 5): keep them stable. Each flag is defined once, here
// or in keys.ts; the commands themselves are thin calls into src/.

import { Command, InvalidArgumentError, Option } from 'commander';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { LIMITS } from '../config/limits.js';
import { IngestError } from '../errors/catalogue.js';
import { ingestFiles, ingestObservations, SOURCE_FORMATS, type IngestSummary, type SourceFormat } from '../ingest/run.js';
import { ingestFilesToClickHouse } from '../ingest/clickhouse-ingest.js';
import { ClickHouse } from '../clickhouse/client.js';
import { initSchema } from '../clickhouse/schema.js';
import { compact, type CompactSummary } from '../shard/compactor.js';
import { readManifest } from '../shard/manifest.js';
import { demoObservations } from '../demo/generate.js';
import { addKey, hasKeys } from '../auth/key-admin.js';
import { redisKeyStoreConfig, sqliteKeyStoreConfig } from '../auth/stores/open-key-store.js';
import { redisUrlArg, registerKeysCommand } from './keys.js';
import { progressBar } from './progress.js';

const DEMO_RECORDS_DEFAULT = 1_000_000;
const DEMO_KEY_FILE = 'demo-key.txt';

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
  clickhouseUrl?: string;
  clickhouseDatabase?: string;
}

async function serveUntilSignal(opts: ServeFlags, banner: (url: string) => void): Promise<void> {
  const { startServer } = await import('../server/app.js');
  const server = await startServer({
    dataDir: opts.data, host: opts.host, port: opts.port,
    ...(opts.tlsCert ? { tlsCert: opts.tlsCert } : {}), ...(opts.tlsKey ? { tlsKey: opts.tlsKey } : {}),
    ...(opts.workers !== undefined ? { threads: opts.workers } : {}),
    ...(opts.queueMax !== undefined ? { queueMax: opts.queueMax } : {}),
    ...(opts.keepaliveMs !== undefined ? { keepAliveMs: opts.keepaliveMs } : {}),
    ...(opts.scanTurnMs !== undefined ? { scanTurnMs: opts.scanTurnMs } : {}),
    ...(opts.searchTimeoutMs !== undefined ? { searchTimeoutMs: opts.searchTimeoutMs } : {}),
    ...(opts.redisUrl !== undefined ? { keyStore: redisKeyStoreConfig(opts.redisUrl) } : {}),
    ...(opts.clickhouseUrl !== undefined
      ? { clickhouse: { url: opts.clickhouseUrl, database: opts.clickhouseDatabase ?? CLICKHOUSE_DATABASE_DEFAULT } } : {}),
  });
  banner(server.url);
  const stop = () => {
    void server.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

export function buildProgram(): Command {
  const program = new Command('rrscan').description('passive-DNS query service').showHelpAfterError();

  program.command('ingest')
    .description('ingest DNS data files into new shards (published atomically; on failure nothing changes), ' +
      'or with --clickhouse-url into ClickHouse (in batches; a failed run leaves the batches it sent)')
    .option('--data <dir>', 'data directory (shards, manifest, keys)')
    .option('--clickhouse-url <url>', 'write to ClickHouse at http://HOST:8123 instead (tables from `rrscan clickhouse init`)')
    .addOption(clickhouseDatabaseOption())
    .addOption(new Option('--format <format>', 'input format').choices(['auto', ...SOURCE_FORMATS]).default('auto'))
    .option('--origin <name>', 'zone origin for zone files without $ORIGIN')
    .option('--observed-at <epoch>', 'zone observation time (default: SOA serial date, else now)', integer('--observed-at'))
    .option('--max-errors <n>', 'skip and count up to N bad records before failing', integer('--max-errors'), 0)
    .option('--memory-rrsets <n>', 'RRsets held in memory before a shard is spilled (bounds peak memory)', integer('--memory-rrsets', 1))
    .option('--workers <n>', 'threads for big NDJSON files, sharing --memory-rrsets (default: one per core)',
      integer('--workers', 1, LIMITS.ingestThreadsMax))
    .argument('<files...>', 'input files')
    .action(async (files: string[], o: { data?: string; clickhouseUrl?: string; clickhouseDatabase: string;
      format: SourceFormat | 'auto'; origin?: string; observedAt?: number; maxErrors: number; memoryRrsets?: number;
      workers?: number; }) => {
      if ((o.data === undefined) === (o.clickhouseUrl === undefined)) {
        throw new InvalidArgumentError('give exactly one of --data and --clickhouse-url');
      }
      const total = files.length;
      const bar = progressBar('ingest', 100, '%');
      try {
        const common = {
          format: o.format, maxErrors: o.maxErrors,
          ...(o.origin !== undefined ? { origin: o.origin } : {}),
          ...(o.observedAt !== undefined ? { observedAt: o.observedAt } : {}),
          onProgress: (done: number, all: number) => bar.update(all > 0 ? Math.floor((done / all) * 100) : 100),
          onReject: (err: Error) => process.stderr.write(`rrscan ingest: skipped: ${err.message}\n`),
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
        console.log(`ingest: ${total} file(s), ${s.records} records read, ${s.rrsets} RRsets ${where}, ` +
          `${s.rejected} rejected, ${s.seconds.toFixed(2)} s, ${rate} records/s`);
      } catch (err) {
        bar.stop();
        if (err instanceof IngestError || (err as { code?: string }).code === 'INGEST_BAD_INPUT') {
          console.error(`rrscan ingest: ${(err as Error).message}`);
          console.error('rrscan ingest: nothing was published (use --max-errors N to skip bad records)');
          process.exitCode = 2;
          return;
        }
        // Any other failure also publishes nothing (ingestFiles deletes what
        // the run wrote): one line. A full disk reads "DIR: no space left on
        // device (writing FILE)" (DiskFullError). Not matched by code: errors
        // from the parallel ingest threads arrive as copies without one.
        console.error(`rrscan ingest: ${err instanceof Error ? err.message : String(err)}; nothing was published`);
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
    .option('--redis-url <url>', 'keys, quotas and concurrency caps in Redis at redis://HOST:PORT[/DB], shared by every server ' +
      'naming it (add keys with `rrscan keys add --redis-url URL`); default: DIR/keys.sqlite', redisUrlArg)
    .option('--clickhouse-url <url>', 'answer searches from ClickHouse at http://HOST:8123 (tables from ' +
      '`rrscan clickhouse init`) instead of DIR\'s shards; keys stay in DIR or --redis-url')
    .addOption(clickhouseDatabaseOption())
    .action(async (o: ServeFlags) => {
      if (Boolean(o.tlsCert) !== Boolean(o.tlsKey)) throw new InvalidArgumentError('--tls-cert and --tls-key go together');
      await serveUntilSignal(o, (url) => console.log(`rrscan serving ${o.data} at ${url}/pdns/v2/`));
    });

  const clickhouse = program.command('clickhouse').description('the ClickHouse data tier');
  clickhouse.command('init')
    .description('create the database and tables rrscan uses (idempotent: what exists is left as it is)')
    .requiredOption('--url <url>', 'ClickHouse HTTP interface, http://HOST:8123')
    .option('--database <name>', 'database to create the tables in', CLICKHOUSE_DATABASE_DEFAULT)
    .option('--cluster <name>', 'this server is a shard of cluster NAME (from its remote_servers): also create ' +
      'Distributed tables over it, through which ingest writes and serve reads; run init on every shard')
    .action(async (o: { url: string; database: string; cluster?: string }) => {
      const ch = new ClickHouse(o.url);
      try {
        const version = await initSchema(ch, { database: o.database, ...(o.cluster !== undefined ? { cluster: o.cluster } : {}) });
        console.log(`clickhouse init: database ${o.database} ready on ClickHouse ${version} at ${o.url}`);
      } catch (err) {
        console.error(`rrscan clickhouse init: ${err instanceof Error ? err.message : String(err)}`);
        process.exitCode = 1;
      } finally {
        ch.close();
      }
    });

  program.command('compact')
    .description('merge all shards into as few as possible, aggregating duplicate RRsets')
    .addOption(dataOption())
    .option('--workers <n>', 'threads, each merging a range of owner names (default: one per core)',
      integer('--workers', 1, LIMITS.ingestThreadsMax))
    .action(async (o: { data: string; workers?: number }) => {
      let s: CompactSummary;
      try {
        s = await compact(o.data, o.workers !== undefined ? { threads: o.workers } : {});
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
    .option('--records <n>', 'RRsets to generate', integer('--records', 1), DEMO_RECORDS_DEFAULT)
    .action(async (o: { data: string; records: number }) => {
      await runDemo(o.data, o.records);
    });

  program.command('start')
    .description('what `npm start` runs: demo data and a key if missing, then serve ($RRSCAN_DATA or ./data, $PORT or 8080)')
    .action(async () => {
      const data = path.resolve(process.env['RRSCAN_DATA'] ?? 'data');
      const port = Number(process.env['PORT'] ?? 8080);
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
      await serveUntilSignal({ data, host: '127.0.0.1', port }, (url) => {
        console.log(`\nrrscan is serving ${data}\n  base URL: ${url}/pdns/v2/\n  demo key: ${key}\n`);
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
