// The Redis connection every Redis-backed part of src/auth uses (the key
// store, the concurrency limiter), and how they run Lua scripts.
//
// Contract: connectRedis(url) answers a client at once; commands wait for
// the connection. A command that cannot be answered (Redis down or
// unreachable, loading its data, no reply within
// LIMITS.redisCommandTimeoutMs) rejects with ApiError OVERLOADED (503,
// which clients retry) carrying the cause, and the client keeps reconnecting
// by itself, so service resumes when Redis returns without anyone acting. A
// command whose reply was lost to a dropped connection is never sent again:
// a charge script run twice would charge twice. closeRedis ends a client
// after the replies it waits for.

import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { LIMITS } from '../config/limits.js';
import { ApiError } from '../errors/catalogue.js';

/** A Lua script with its SHA1, run by EVALSHA and sent whole when Redis does not have it (after a restart). */
export interface LuaScript {
  readonly source: string;
  readonly sha: string;
}

export function lua(source: string): LuaScript {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

/**
 * What a failed command means to the caller. A script error ('ERR ...') is
 * a bug of ours and passes unchanged (500); anything else (connection lost
 * or refused, timeout, Redis loading or out of memory) passes with time:
 * 503 OVERLOADED, which clients retry.
 */
export function storeFailure(err: unknown): unknown {
  if (err instanceof Error && err.name === 'ReplyError' && err.message.startsWith('ERR ')) return err;
  return new ApiError('OVERLOADED', 'key store unreachable', err);
}

/** A connection to Redis configured for the contract above; also used by the Redis limiter. */
export function connectRedis(url: string): Redis {
  const client = new Redis(url, {
    // No auto-pipelining: it keeps one pipeline in flight per connection and
    // queues the next behind it, a turn later, so one charge batch (already
    // one script per event-loop turn, quota-ledger.ts) waited for the reply
    // to the previous one: a daily key ran at 12-25 k req/s whatever the
    // concurrency, against ~58 k for an unlimited one (node
    // dist/bench/front-ends.js). Each command goes out when it is made.
    enableAutoPipelining: false,
    commandTimeout: LIMITS.redisCommandTimeoutMs,
    connectTimeout: LIMITS.redisConnectTimeoutMs,
    // A command waiting for a connection fails after one failed attempt
    // rather than waiting for Redis to come back: the request gets 503.
    maxRetriesPerRequest: 1,
    // A script whose reply was lost may have run: never run it twice.
    autoResendUnfulfilledCommands: false,
    retryStrategy: (attempt: number) => Math.min(attempt * 50, LIMITS.redisReconnectDelayMsMax),
  });
  // Failures reach the caller through the commands that fail; without a
  // listener ioredis would print every reconnection error.
  client.on('error', () => undefined);
  return client;
}

/** Ends a connection after the replies it is waiting for; at once when it is not connected. */
export function closeRedis(client: Redis): void {
  if (client.status === 'ready') client.quit().catch(() => client.disconnect());
  else client.disconnect();
}

type Arg = string | number;

function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOSCRIPT');
}

/** Runs a script by its SHA1, sending it whole when Redis has not seen it; failures as storeFailure says. */
export async function runScript(client: Redis, script: LuaScript, keys: readonly string[], args: readonly Arg[]): Promise<unknown> {
  try {
    try {
      return await client.evalsha(script.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!isNoScript(err)) throw err;
      return await client.eval(script.source, keys.length, ...keys, ...args);
    }
  } catch (err) {
    throw storeFailure(err);
  }
}
