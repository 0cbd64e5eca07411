// `rrscan ingest`: input files into new shards (--data) or into ClickHouse
// (--clickhouse-url), or dnstap received live into shards (--listen,
// ingest-listen.ts). One command, three modes: the action checks the flags
// that choose the mode and hands over to the mode's function, which refuses
// the flags of the others (scripts see those messages: keep them). Both
// file modes take one path, through the IngestTarget the flags name
// (ingest/ingest-target.ts).

import type { Command } from 'commander';
import { InvalidArgumentError, Option } from 'commander';
import { existsSync, statSync } from 'node:fs';
import { LIMITS } from '../config/limits.js';
import { hasCode } from '../errors/catalogue.js';
import { ingestTarget, type IngestTargetConfig } from '../ingest/ingest-target.js';
import { parseListenAddress, type ListenAddress } from '../ingest/live/address.js';
import { skippedLine, SOURCE_FORMATS, type SkippedInput, type SourceFormat } from '../ingest/run.js';
import { AddressAllowList } from '../lib/address-allow-list.js';
import type { TieredPolicy } from '../shard/compaction-policy.js';
import { clickhouseDatabaseOption, EXIT_BAD_INPUT, integer, policyOf, withPolicyOptions, type PolicyFlags } from './flags.js';
import { receiveUntilSignal } from './ingest-listen.js';
import { progressBar } from './progress.js';

interface IngestFlags extends PolicyFlags {
  data?: string;
  clickhouseUrl?: string;
  clickhouseDatabase: string;
  format: SourceFormat | 'auto';
  origin?: string;
  observedAt?: number;
  includeRoot?: string[];
  maxErrors: number;
  again?: boolean;
  memoryRrsets?: number;
  workers?: number;
  listen?: ListenAddress[];
  flushSeconds?: number;
  compact?: 'auto' | 'off';
  sendersMax?: number;
  senderIdleSeconds?: number;
  allowCidr?: string[];
  metricsPort?: number;
  metricsHost: string;
}

export function registerIngestCommand(program: Command): void {
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
    .action(async (files: string[], o: IngestFlags) => {
      if ((o.data === undefined) === (o.clickhouseUrl === undefined)) {
        throw new InvalidArgumentError('give exactly one of --data and --clickhouse-url');
      }
      const policy = policyOf(o);
      if (o.listen !== undefined) await ingestListening(files, o, o.listen, policy);
      else await ingestInputFiles(files, o, policy);
    });
}

/** --listen ADDR: dnstap from DNS servers into shards of --data, until SIGTERM. */
async function ingestListening(files: readonly string[], o: IngestFlags, listen: ListenAddress[],
  policy: Partial<TieredPolicy>): Promise<void> {
  if (o.data === undefined) throw new InvalidArgumentError('--listen publishes shards: it takes --data');
  if (files.length > 0) throw new InvalidArgumentError('--listen takes no input files');
  if (o.again) throw new InvalidArgumentError('--again goes with input files, not --listen');
  if (o.includeRoot !== undefined) throw new InvalidArgumentError('--include-root goes with zone files, not --listen');
  if (o.compact === 'off' && Object.keys(policy).length > 0) {
    throw new InvalidArgumentError('--fan-in, --tier-min-rrsets and --merge-rrsets-max go with --compact auto');
  }
  if (o.allowCidr !== undefined && !listen.some((a) => a.kind === 'tcp')) {
    throw new InvalidArgumentError('--allow-cidr applies to tcp: listeners (a unix socket is guarded by its file\'s ' +
      'permissions), and --listen names none');
  }
  await receiveUntilSignal({
    dataDir: o.data, listen, flushSeconds: o.flushSeconds ?? LIMITS.liveFlushSecondsDefault,
    memoryRrsets: o.memoryRrsets ?? LIMITS.liveRrsetsInMemoryMax, sendersMax: o.sendersMax ?? LIMITS.liveSendersMax,
    senderIdleMs: (o.senderIdleSeconds ?? LIMITS.liveSenderIdleSecondsDefault) * 1000,
    ...(o.allowCidr !== undefined ? { allow: AddressAllowList.fromCidrs(o.allowCidr) } : {}),
  }, o.compact === 'off' ? undefined : policy,
  o.metricsPort === undefined ? undefined : { host: o.metricsHost, port: o.metricsPort });
}

/** Where input files go, as the flags say: ClickHouse with --clickhouse-url, else the shards of --data. */
function targetConfig(o: IngestFlags): IngestTargetConfig {
  if (o.clickhouseUrl !== undefined) return { kind: 'clickhouse', url: o.clickhouseUrl, database: o.clickhouseDatabase };
  return {
    kind: 'local', dataDir: o.data!,
    ...(o.memoryRrsets !== undefined ? { memoryRrsets: o.memoryRrsets } : {}),
    ...(o.workers !== undefined ? { threads: o.workers } : {}),
  };
}

/** Input files, into shards or ClickHouse: one summary line, or one line saying why not. */
async function ingestInputFiles(files: readonly string[], o: IngestFlags, policy: Partial<TieredPolicy>): Promise<void> {
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
  const target = ingestTarget(targetConfig(o));
  const total = files.length;
  const bar = progressBar('ingest', 100, '%');
  try {
    const s = await target.ingest(files, {
      format: o.format, maxErrors: o.maxErrors,
      ...(o.origin !== undefined ? { origin: o.origin } : {}),
      ...(o.observedAt !== undefined ? { observedAt: o.observedAt } : {}),
      ...(o.includeRoot !== undefined ? { includeRoots: o.includeRoot } : {}),
      onProgress: (done: number, all: number) => bar.update(all > 0 ? Math.floor((done / all) * 100) : 100),
      onReject: (err: Error) => process.stderr.write(`rrscan ingest: skipped: ${err.message}\n`),
      again: o.again === true,
      onSkip: (skip: SkippedInput) => process.stderr.write(`rrscan ingest: ${skippedLine(skip)}\n`),
    });
    bar.stop();
    const rate = s.seconds > 0 ? Math.round(s.records / s.seconds) : s.records;
    const skipped = s.skipped > 0 ? ` (${s.skipped} skipped: already ingested)` : '';
    console.log(`ingest: ${total} file(s)${skipped}, ${s.records} records read, ${s.rrsets} RRsets ${target.where(s)}, ` +
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
    // Any other failure: one line. A full disk reads "DIR: no space left on
    // device (writing FILE)" (DiskFullError). Not matched by code: errors
    // from the parallel ingest threads arrive as copies without one.
    console.error(`rrscan ingest: ${err instanceof Error ? err.message : String(err)}; ${target.afterFailure}`);
    process.exitCode = 1;
  }
}
