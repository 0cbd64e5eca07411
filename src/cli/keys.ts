// `rrscan keys add|list|show|revoke|reset`: manage API keys and licences in
// the key store of a data directory (`--data DIR`: `<DIR>/keys.sqlite`,
// src/auth) or in Redis (`--redis-url URL`, the store every `rrscan serve
// --redis-url URL` reads; it wins when both are given, as for serve). Thin:
// flags are turned into NewKeyOptions here and every rule about them lives
// in src/auth/licence.ts, whose LicenceError names the flag to fix. The store
// is opened through its configuration (src/auth/stores/open-key-store.ts),
// never by naming an implementation, and every store method is awaited
// because a network store answers with Promises. A key is printed once, by
// `add`; every other listing shows only its fingerprint (first 12 hex digits
// of sha256).

import { Command, InvalidArgumentError } from 'commander';
import { addKey } from '../auth/key-admin.js';
import type { KeyStore } from '../auth/key-store.js';
import { canonicalKey, hashKey } from '../auth/key-material.js';
import { isExpired, nextResetOf, periodUsedAt } from '../auth/licence.js';
import type { Licence, NewKeyOptions, Usage } from '../auth/licence.js';
import { rateLimitBody } from '../auth/rate-limit-body.js';
import { openExistingKeyStore, redisKeyStoreConfig, sqliteKeyStoreConfig } from '../auth/stores/open-key-store.js';
import type { KeyStoreConfig } from '../auth/stores/open-key-store.js';
import { LIMITS } from '../config/limits.js';
import { hasCode } from '../errors/catalogue.js';

// Our own fixed patterns for flag values (never user-supplied regexes).
const UNSIGNED = /^[0-9]+$/;
const SIGNED = /^-?[0-9]+$/;

function unsignedArg(value: string): number {
  if (!UNSIGNED.test(value)) throw new InvalidArgumentError('must be a positive integer.');
  return Number(value);
}

function signedArg(value: string): number {
  if (!SIGNED.test(value)) throw new InvalidArgumentError('must be epoch seconds or negative seconds relative to now.');
  return Number(value);
}

/** `--redis-url`: redis://HOST:PORT[/DB], checked here so that a typo fails before anything connects. */
export function redisUrlArg(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('must be redis://HOST:PORT[/DB].');
  }
  if (url.protocol !== 'redis:' || url.hostname === '' || !/^(\/[0-9]*)?$/.test(url.pathname)) {
    throw new InvalidArgumentError('must be redis://HOST:PORT[/DB].');
  }
  return value;
}

function write(cmd: Command, text: string): void {
  const out = cmd.configureOutput().writeOut;
  if (out !== undefined) out(text);
  else process.stdout.write(text);
}

function fail(cmd: Command, message: string): never {
  return cmd.error(`error: ${message}`, { exitCode: 1, code: 'rrscan.keys' });
}

function when(epoch: number | undefined): string {
  if (epoch === undefined) return 'n/a';
  return `${epoch} (${new Date(epoch * 1000).toISOString().replace('.000Z', 'Z')})`;
}

function fenceText(value: number | undefined): string {
  if (value === undefined) return 'none';
  return value < 0 ? `${value} (relative to each request)` : when(value);
}

function quotaText(lic: Licence): string {
  return lic.quotaKind === 'unlimited' ? 'unlimited' : `${lic.quotaKind} ${lic.quotaLimit}`;
}

function statusText(lic: Licence, now: number): string {
  if (lic.revoked !== undefined) return `revoked ${when(lic.revoked)}`;
  return isExpired(lic, now) ? 'expired' : 'active';
}

function usedText(lic: Licence, usage: Usage, now: number): string {
  const used = periodUsedAt(lic, usage, now);
  switch (lic.quotaKind) {
    case 'unlimited':
      return 'not enforced (see total_used)';
    case 'block':
      return `${used} of ${lic.quotaLimit} in the block`;
    case 'daily':
    case 'hourly': {
      const period = lic.quotaKind === 'daily' ? 'UTC day' : 'hour';
      return `${used} of ${lic.quotaLimit} this ${period}, resets ${when(nextResetOf(lic.quotaKind, now))}`;
    }
  }
}

/** Where a command's keys live: the flags every `keys` command takes. */
interface StoreFlags {
  data?: string;
  redisUrl?: string;
}

function withStoreOptions(cmd: Command): Command {
  return cmd
    .option('--data <DIR>', 'data directory (keys in DIR/keys.sqlite)')
    .option('--redis-url <URL>', 'keys in Redis at redis://HOST:PORT[/DB], where `serve --redis-url` reads them', redisUrlArg);
}

function storeConfigOf(cmd: Command, flags: StoreFlags): KeyStoreConfig {
  if (flags.redisUrl !== undefined) return redisKeyStoreConfig(flags.redisUrl);
  if (flags.data !== undefined) return sqliteKeyStoreConfig(flags.data);
  return fail(cmd, 'give --data DIR or --redis-url URL');
}

/** Opens an existing store; `keys add` is the only command that creates one. */
function openExisting(cmd: Command, flags: StoreFlags): KeyStore {
  const store = openExistingKeyStore(storeConfigOf(cmd, flags));
  if (store === undefined) fail(cmd, `no key store in ${flags.data} (add a key first with \`rrscan keys add --data ${flags.data} ...\`)`);
  return store;
}

/** `keys <name> --data DIR KEY`: runs `action` on the existing store and the key's hash, then closes the store. */
function keyCommand(keys: Command, name: string, description: string,
  action: (store: KeyStore, keyHash: Buffer, cmd: Command) => Promise<void>): void {
  withStoreOptions(keys.command(name).description(description))
    .argument('<KEY>', 'the API key')
    .action(async (key: string, flags: StoreFlags, cmd: Command) => {
      const keyHash = keyHashArg(cmd, key);
      const store = openExisting(cmd, flags);
      try {
        await action(store, keyHash, cmd);
      } finally {
        store.close();
      }
    });
}

/** Where a key's --max-concurrent is counted: by each process, or by every front end naming the same Redis. */
function capScope(cmd: Command): string {
  return cmd.opts<StoreFlags>().redisUrl === undefined ? 'per server process' : 'across every server on this Redis';
}

function keyHashArg(cmd: Command, key: string): Buffer {
  const canonical = canonicalKey(key);
  if (canonical === undefined) fail(cmd, `KEY must be ${LIMITS.apiKeyCharsMin} to ${LIMITS.apiKeyCharsMax} hex digits or dashes`);
  return hashKey(canonical);
}

interface AddFlags extends StoreFlags {
  key?: string;
  daily?: number;
  hourly?: number;
  block?: number;
  unlimited?: boolean;
  expires?: number;
  resultsMax?: number;
  offsetMax?: number;
  burst?: number;
  burstWindow?: number;
  maxConcurrent?: number;
  timeFenceAfter?: number;
  timeFenceBefore?: number;
  private?: boolean;
  allowCidr?: string[];
  v2: boolean;
}

function optionsFromFlags(cmd: Command, f: AddFlags): NewKeyOptions {
  const kinds: NewKeyOptions['quota'][] = [];
  if (f.daily !== undefined) kinds.push({ kind: 'daily', limit: f.daily });
  if (f.hourly !== undefined) kinds.push({ kind: 'hourly', limit: f.hourly });
  if (f.block !== undefined) kinds.push({ kind: 'block', limit: f.block });
  if (f.unlimited === true) kinds.push({ kind: 'unlimited' });
  if (kinds.length !== 1) fail(cmd, 'give exactly one quota kind: --daily N, --hourly N, --block N or --unlimited');
  if ((f.burst === undefined) !== (f.burstWindow === undefined)) fail(cmd, '--burst N and --burst-window SECONDS go together');
  const opts: NewKeyOptions = { quota: kinds[0]!, v2: f.v2, private: f.private === true };
  if (f.key !== undefined) opts.key = f.key;
  if (f.expires !== undefined) opts.expires = f.expires;
  if (f.resultsMax !== undefined) opts.resultsMax = f.resultsMax;
  if (f.offsetMax !== undefined) opts.offsetMax = f.offsetMax;
  if (f.burst !== undefined && f.burstWindow !== undefined) opts.burst = { size: f.burst, windowSec: f.burstWindow };
  if (f.maxConcurrent !== undefined) opts.maxConcurrent = f.maxConcurrent;
  if (f.timeFenceAfter !== undefined) opts.timeFenceAfter = f.timeFenceAfter;
  if (f.timeFenceBefore !== undefined) opts.timeFenceBefore = f.timeFenceBefore;
  if (f.allowCidr !== undefined) opts.allowCidrs = f.allowCidr;
  return opts;
}

const ADD_HELP = `
Defaults when a flag is absent:
  results_max   ${LIMITS.resultsDefault} (--daily, --block, --unlimited); ${LIMITS.trialResultsMax} for --hourly (the trial licence)
  offset_max    ${LIMITS.offsetMaxPerResultsMax} x results_max; none for --hourly (offset answers 416)
  burst         none (when set: at most N lookup/summarize requests in any SECONDS-long
                sliding window; flexible search is never burst-limited)
  concurrency   no per-key cap (when set: per server process; with --redis-url, across every
                server sharing that Redis)
  time fences   none; T is epoch seconds, or negative seconds relative to each request
  client        any address; --allow-cidr may be repeated (IPv4-mapped IPv6 matches IPv4 rules)
  v2            allowed
Quotas: --daily resets at 00:00 UTC, --hourly at the start of each hour, --block never
(\`keys reset\` refills it); --expires ends a licence of any kind (401 Quota is expired).
`;

export function registerKeysCommand(program: Command): void {
  const keys = program.command('keys')
    .description('manage API keys and their licences (stored as sha256 hashes in DIR/keys.sqlite or in Redis)');

  withStoreOptions(keys.command('add')
    .description('add a key and print it (64 hex digits unless --key is given); it is shown only this once'))
    .option('--key <HEX>', `use this key (${LIMITS.apiKeyCharsMin}-${LIMITS.apiKeyCharsMax} hex digits or dashes) instead of a fresh one`)
    .option('--daily <N>', 'time quota: N requests per UTC day', unsignedArg)
    .option('--hourly <N>', 'trial licence: N requests per hour', unsignedArg)
    .option('--block <N>', 'block quota: N requests in all', unsignedArg)
    .option('--unlimited', 'no request quota')
    .option('--expires <EPOCH>', 'licence ends at this time (epoch seconds)', unsignedArg)
    .option('--results-max <N>', `largest result count per query (at most ${LIMITS.resultsMaxCeiling})`, unsignedArg)
    .option('--offset-max <N>', 'largest offset per query', unsignedArg)
    .option('--burst <N>', `burst quota: N lookup/summarize requests (at most ${LIMITS.burstSizeMax}) ...`, unsignedArg)
    .option('--burst-window <SECONDS>', '... per sliding window of SECONDS', unsignedArg)
    .option('--max-concurrent <N>', 'concurrent requests per server process, or per --redis-url (503 above it)', unsignedArg)
    .option('--time-fence-after <T>', 'hide data last seen before T', signedArg)
    .option('--time-fence-before <T>', 'hide data first seen after T', signedArg)
    .option('--private', 'never log query text for this key')
    .option('--allow-cidr <CIDR...>', 'client addresses allowed to use the key')
    .option('--no-v2', 'key may not use API v2 (401)')
    .addHelpText('after', ADD_HELP)
    .action(async (flags: AddFlags, cmd: Command) => {
      const opts = optionsFromFlags(cmd, flags);
      let key: string;
      try {
        key = await addKey(storeConfigOf(cmd, flags), opts);
      } catch (err) {
        if (hasCode(err, 'BAD_LICENCE')) fail(cmd, (err as Error).message);
        throw err;
      }
      write(cmd, `${key}\n`);
    });

  withStoreOptions(keys.command('list')
    .description('list keys by fingerprint with their quota and usage'))
    .action(async (flags: StoreFlags, cmd: Command) => {
      const store = openExisting(cmd, flags);
      try {
        const now = Date.now() / 1000;
        const rows = [['FINGERPRINT', 'STATUS', 'QUOTA', 'USED', 'TOTAL', 'EXPIRES']];
        for (const { licence, usage } of await store.list()) {
          rows.push([
            licence.fingerprint,
            licence.revoked !== undefined ? 'revoked' : statusText(licence, now),
            quotaText(licence),
            licence.quotaKind === 'unlimited' ? '-' : String(periodUsedAt(licence, usage, now)),
            String(usage.totalUsed),
            licence.expires === undefined ? 'n/a' : String(licence.expires),
          ]);
        }
        const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
        write(cmd, rows.map((r) => r.map((v, c) => v.padEnd(widths[c]!)).join('  ').trimEnd() + '\n').join(''));
      } finally {
        store.close();
      }
    });

  keyCommand(keys, 'show', 'show a key\'s licence and current usage', async (store, keyHash, cmd) => {
    const record = await store.record(keyHash);
    if (record === undefined) fail(cmd, 'no such key');
    const { licence: l, usage: u } = record;
    const now = Date.now() / 1000;
    const lines: Array<[string, string]> = [
      ['fingerprint', l.fingerprint],
      ['status', statusText(l, now)],
      ['created', when(l.created)],
      ['quota', quotaText(l)],
      ['expires', when(l.expires)],
      ['results_max', String(l.resultsMax)],
      ['offset_max', l.offsetMax === undefined ? 'none (offsets refused)' : String(l.offsetMax)],
      ['burst', l.burstSize === undefined ? 'none' : `${l.burstSize} per ${l.burstWindowSec} s (lookup/summarize)`],
      ['max_concurrent', l.maxConcurrent === undefined ? 'none' : `${l.maxConcurrent} ${capScope(cmd)}`],
      ['time_fence_after', fenceText(l.timeFenceAfter)],
      ['time_fence_before', fenceText(l.timeFenceBefore)],
      ['private', l.private ? 'yes' : 'no'],
      ['allow_cidr', l.allowCidrs.length === 0 ? 'any' : l.allowCidrs.join(' ')],
      ['v2', l.v2 ? 'yes' : 'no'],
      ['used', usedText(l, u, now)],
      ['total_used', String(u.totalUsed)],
      ['last_used', when(u.lastUsed)],
      ['rate_limit', JSON.stringify(rateLimitBody(l, u, now))],
    ];
    write(cmd, lines.map(([k, v]) => `${k}: ${v}\n`).join(''));
  });

  keyCommand(keys, 'revoke', 'revoke a key (403 from then on; running servers notice within a second)', async (store, keyHash, cmd) => {
    const record = await store.record(keyHash);
    if (record === undefined || !(await store.revoke(keyHash, Date.now() / 1000))) fail(cmd, 'no such key');
    write(cmd, `revoked ${record.licence.fingerprint}\n`);
  });

  keyCommand(keys, 'reset', 'reset a key\'s usage counters (refills a block, clears the burst window)', async (store, keyHash, cmd) => {
    const record = await store.record(keyHash);
    if (record === undefined || !(await store.resetUsage(keyHash))) fail(cmd, 'no such key');
    write(cmd, `reset usage of ${record.licence.fingerprint}\n`);
  });
}
