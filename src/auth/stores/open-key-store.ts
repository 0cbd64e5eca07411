// Which KeyStore implementation serves a configuration: the one module that
// knows them all, so that the gate, the CLI and `npm start` name a store by
// its configuration and never import an implementation.
//
// Contract: KeyStoreConfig is a discriminated union on `kind`; each kind
// names one implementation in this directory, and the concurrency limiter
// (../limiters/) whose caps reach as far as the store is shared. openKeyStore opens (and, where
// the kind has such a thing, creates) the store; openExistingKeyStore never
// creates anything and answers undefined when there is no store yet, which
// is what read-only commands and "does this data directory hold keys?"
// need. The caller owns the store it gets and closes it.

import { existsSync } from 'node:fs';
import type { ConcurrencyLimiter } from '../concurrency.js';
import type { KeyStore } from '../key-store.js';
import { InProcessLimiter } from '../limiters/in-process-limiter.js';
import { RedisConcurrencyLimiter } from '../limiters/redis-limiter.js';
import { RedisKeyStore } from './redis-key-store.js';
import { SqliteKeyStore, keyStorePath } from './sqlite-key-store.js';

/** `<dataDir>/keys.sqlite`, shared by the processes of one machine. */
export interface SqliteKeyStoreConfig {
  readonly kind: 'sqlite';
  readonly dataDir: string;
}

/**
 * A Redis server at redis://HOST:PORT[/DB], shared by every front end and
 * `rrscan keys` command that names it. There is always a store there: an
 * empty database is a store with no keys.
 */
export interface RedisKeyStoreConfig {
  readonly kind: 'redis';
  readonly url: string;
}

export type KeyStoreConfig = SqliteKeyStoreConfig | RedisKeyStoreConfig;

/** The SQLite store of a data directory: what `--data DIR` means today. */
export function sqliteKeyStoreConfig(dataDir: string): SqliteKeyStoreConfig {
  return { kind: 'sqlite', dataDir };
}

/** The Redis store at `url`: what `--redis-url URL` means. */
export function redisKeyStoreConfig(url: string): RedisKeyStoreConfig {
  return { kind: 'redis', url };
}

/** Opens the configured store, creating it if needed. */
export function openKeyStore(config: KeyStoreConfig): KeyStore {
  switch (config.kind) {
    case 'sqlite':
      return SqliteKeyStore.open(config.dataDir);
    case 'redis':
      return RedisKeyStore.open(config.url);
    default:
      return unknownKind(config);
  }
}

/** Opens the configured store when it exists; undefined (and nothing created) when it does not. */
export function openExistingKeyStore(config: KeyStoreConfig): KeyStore | undefined {
  switch (config.kind) {
    case 'sqlite':
      return existsSync(keyStorePath(config.dataDir)) ? SqliteKeyStore.open(config.dataDir) : undefined;
    case 'redis':
      return RedisKeyStore.open(config.url);
    default:
      return unknownKind(config);
  }
}

/**
 * The concurrency limiter that goes with a store: a store shared by
 * several machines shares the caps too (Redis); the SQLite store, shared by
 * the processes of one machine, keeps caps per process.
 */
export function openConcurrencyLimiter(config: KeyStoreConfig): ConcurrencyLimiter {
  switch (config.kind) {
    case 'sqlite':
      return new InProcessLimiter();
    case 'redis':
      return new RedisConcurrencyLimiter(config.url);
    default:
      return unknownKind(config);
  }
}

/** Fails the build when a kind joins KeyStoreConfig without a case above, and the call when a caller bypassed the type. */
function unknownKind(config: never): never {
  throw new Error(`unknown key store kind ${JSON.stringify((config as { kind: unknown }).kind)}`);
}
