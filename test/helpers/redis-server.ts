// Test harness: a private redis-server (Debian's binary, package
// redis-server) on a free loopback port with a scratch directory, for the
// tests of the Redis key store and limiter. Nothing is mocked: the tests talk
// to a real server. It persists every write before answering
// (--appendonly yes --appendfsync always) so a test can stop it and start it
// again on the same port and directory and find committed charges there.
//
// Contract: startRedis() resolves once the server answers PING; stop()
// kills it by its PID and waits for it to exit, start() runs it again with
// the same port and directory, close() stops it and deletes the directory.
// Tests that need it use describe.skipIf(!HAVE_REDIS) and print
// REDIS_SKIP_REASON when it is missing.

import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe } from 'vitest';
import type { KeyStoreConfig } from '../../src/auth/stores/open-key-store.js';
import { freePort } from '../../src/lib/free-port.js';
import { probeAnswers } from './tcp-probe.js';

/**
 * The executable `name` found on PATH, then in `also` (redis-server here,
 * chromium for the console tests, clickhouse-server), or undefined.
 */
export function onPath(name: string, also: readonly string[] = []): string | undefined {
  for (const dir of [...(process.env['PATH'] ?? '').split(path.delimiter), ...also]) {
    if (dir === '') continue;
    const file = path.join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // Not in this directory: look in the next.
    }
  }
  return undefined;
}

export const REDIS_SERVER = onPath('redis-server');
export const HAVE_REDIS = REDIS_SERVER !== undefined;
export const REDIS_SKIP_REASON = 'redis-server is not on PATH (install the Debian package redis-server); the Redis tests skip';

/** How long a starting redis-server may take to answer PING. */
const START_TIMEOUT_MS = 10_000;
const PING_RETRY_MS = 20;

export interface RedisServer {
  readonly port: number;
  /** redis://127.0.0.1:PORT, the form `--redis-url` takes. */
  readonly url: string;
  readonly dir: string;
  /** The server's output so far, for failure messages. */
  output(): string;
  /** Kills the server by PID (SIGKILL when `hard`) and waits until it has exited. */
  stop(hard?: boolean): Promise<void>;
  /** Starts it again on the same port and directory; resolves once it answers. */
  start(): Promise<void>;
  /** Stops it and deletes its directory. */
  close(): Promise<void>;
  /** Deletes every key, through a connection of its own: tests share one server. */
  flush(): Promise<void>;
}

/** Whether a server on the port answers PING with +PONG. */
const pings = (port: number): Promise<boolean> =>
  probeAnswers(port, 'PING\r\n', (reply) => (reply.includes('\r\n') ? reply.startsWith('+PONG') : undefined));

export async function startRedis(): Promise<RedisServer> {
  if (REDIS_SERVER === undefined) throw new Error(REDIS_SKIP_REASON);
  const binary = REDIS_SERVER;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rrscan-redis-'));
  const port = await freePort();
  let proc: ChildProcess | undefined;
  let out = '';

  const start = async (): Promise<void> => {
    const child = spawn(binary, [
      '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes',
      '--appendfsync', 'always', '--daemonize', 'no', '--protected-mode', 'yes', '--loglevel', 'warning',
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    proc = child;
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!(await pings(port))) {
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`redis-server on port ${port} did not answer (exit ${String(child.exitCode)}): ${out}`);
      }
      await new Promise((r) => setTimeout(r, PING_RETRY_MS));
    }
  };

  const stop = (hard = false): Promise<void> => new Promise((resolve) => {
    const child = proc;
    proc = undefined;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    process.kill(child.pid!, hard ? 'SIGKILL' : 'SIGTERM');
  });

  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    output: () => out,
    stop,
    start,
    close: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
    flush: async () => {
      const admin = new Redis(`redis://127.0.0.1:${port}`);
      try {
        await admin.flushdb();
      } finally {
        admin.disconnect();
      }
    },
  };
}

/** A key store the HTTP tests run against: the flags that make `rrscan serve` and `rrscan keys` use it. */
export interface KeyStoreUnderTest {
  readonly name: 'SQLite' | 'Redis';
  /** Extra flags for `rrscan serve` and `rrscan keys ...` (none for SQLite, whose store is the data directory's). */
  flags(): string[];
  /** The store's configuration for a data directory, as serve builds it from its flags. */
  config(dataDir: string): KeyStoreConfig;
  /** Removes every key (Redis outlives a test; a SQLite store lives in the test's own directory). */
  empty(): Promise<void>;
}

/**
 * Defines the suite `body` twice: against the data directory's SQLite store,
 * and against a private redis-server started for it (skipped, with the
 * reason printed, when redis-server is not installed). `body` registers its
 * own hooks; the Redis server is up before they run and stopped after.
 */
export function describeEachKeyStore(title: string, body: (store: KeyStoreUnderTest) => void): void {
  describe(`${title} (SQLite key store)`, () => body({
    name: 'SQLite', flags: () => [], config: (dataDir) => ({ kind: 'sqlite', dataDir }), empty: () => Promise.resolve(),
  }));
  if (!HAVE_REDIS) console.warn(`${title} (Redis key store): ${REDIS_SKIP_REASON}`);
  describe.skipIf(!HAVE_REDIS)(`${title} (Redis key store)`, () => {
    let redis: RedisServer | undefined;
    beforeAll(async () => {
      redis = await startRedis();
    });
    afterAll(async () => {
      await redis?.close();
    });
    body({
      name: 'Redis',
      flags: () => ['--redis-url', redis!.url],
      config: () => ({ kind: 'redis', url: redis!.url }),
      empty: () => redis!.flush(),
    });
  });
}
