// ConcurrencyLimiter shared through Redis: a key's --max-concurrent holds
// across every front end that uses the same Redis.
//
// Contract: see ../concurrency.ts. Answers with Promises. Each key's leases
// are the members of the sorted set `rrscan:leases:<sha256 hex>`, scored by
// when they expire (Redis's own clock, milliseconds, so front ends with
// skewed clocks agree). acquire is one Lua script: it drops the expired
// members, counts the rest against `max`, and adds the new lease with a
// time to live of LIMITS.concurrencyLeaseTtlMs, atomically, so concurrent
// front ends never hold more than `max`. Every LIMITS.concurrencyLeaseRenewMs
// one script pushes the expiry of every lease this limiter holds forward, so
// a long stream keeps its slot while a front end that dies (or loses Redis)
// gives its slots back within the time to live. A lease that expired
// before its renewal is not brought back: its slot may be someone else's.
// release() sends ZREM and returns at once; commands on one connection run
// in the order sent, so an acquire after a release sees the slot free.
// Failures to decide reject with ApiError OVERLOADED (../redis-client.ts).

import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { LIMITS } from '../../config/limits.js';
import type { ConcurrencyLimiter, Lease } from '../concurrency.js';
import { closeRedis, connectRedis, lua, runScript } from '../redis-client.js';

const LEASE_PREFIX = 'rrscan:leases:';

const NOW_MS_LUA = `
local t = redis.call('TIME')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/** KEYS[1]: the key's lease set. ARGV: max, lease id, ttl ms. Answers 1 when the lease was added, else 0. */
const ACQUIRE = lua(`${NOW_MS_LUA}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', nowMs)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
local ttl = tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], nowMs + ttl, ARGV[2])
redis.call('PEXPIRE', KEYS[1], ttl)
return 1
`);

/** KEYS: lease sets; ARGV[1]: ttl ms, then the lease id for each key. Renews only leases not yet expired. */
const RENEW = lua(`${NOW_MS_LUA}
local ttl = tonumber(ARGV[1])
for i = 1, #KEYS do
  local score = redis.call('ZSCORE', KEYS[i], ARGV[i + 1])
  if score and tonumber(score) > nowMs then
    redis.call('ZADD', KEYS[i], nowMs + ttl, ARGV[i + 1])
    redis.call('PEXPIRE', KEYS[i], ttl)
  end
end
return 0
`);

export interface RedisLimiterOptions {
  /** Lease time to live (default LIMITS.concurrencyLeaseTtlMs); tests shorten it. */
  leaseTtlMs?: number;
  /** How often held leases are renewed (default LIMITS.concurrencyLeaseRenewMs). */
  renewMs?: number;
}

export class RedisConcurrencyLimiter implements ConcurrencyLimiter {
  private readonly client: Redis;
  private readonly ttlMs: number;
  /** Lease id -> its key's set, for every lease held and not released. */
  private readonly held = new Map<string, string>();
  /** Makes lease ids unique among every front end sharing the Redis. */
  private readonly idPrefix = randomBytes(8).toString('hex');
  private serial = 0;
  private readonly timer: NodeJS.Timeout;
  private closed = false;

  constructor(url: string, opts: RedisLimiterOptions = {}) {
    this.client = connectRedis(url);
    this.ttlMs = opts.leaseTtlMs ?? LIMITS.concurrencyLeaseTtlMs;
    this.timer = setInterval(this.renew, opts.renewMs ?? LIMITS.concurrencyLeaseRenewMs);
    this.timer.unref();
  }

  async acquire(keyHex: string, max: number): Promise<Lease | undefined> {
    if (this.closed) throw new Error('acquire(): the limiter is closed');
    const set = LEASE_PREFIX + keyHex;
    const id = `${this.idPrefix}:${++this.serial}`;
    const added = await runScript(this.client, ACQUIRE, [set], [max, id, this.ttlMs]);
    if (added !== 1) return undefined;
    this.held.set(id, set);
    return new RedisLease(this, id);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.held.clear();
    closeRedis(this.client);
  }

  /** Frees one lease (RedisLease.release); never throws. */
  releaseLease(id: string): void {
    const set = this.held.get(id);
    if (set === undefined) return;
    this.held.delete(id);
    // A failed ZREM leaves the lease to expire with its time to live.
    this.client.zrem(set, id).catch(() => undefined);
  }

  private readonly renew = (): void => {
    if (this.held.size === 0 || this.closed) return;
    const sets: string[] = [];
    const args: Array<string | number> = [this.ttlMs];
    for (const [id, set] of this.held) {
      sets.push(set);
      args.push(id);
    }
    // A failed renewal is retried at the next tick; a lease it misses for a whole time to live is lost, as for a dead front end.
    runScript(this.client, RENEW, sets, args).catch(() => undefined);
  };
}

class RedisLease implements Lease {
  /** undefined once released: that is what makes release() idempotent. */
  private limiter: RedisConcurrencyLimiter | undefined;
  private readonly id: string;

  constructor(limiter: RedisConcurrencyLimiter, id: string) {
    this.limiter = limiter;
    this.id = id;
  }

  release(): void {
    const limiter = this.limiter;
    if (limiter === undefined) return;
    this.limiter = undefined;
    limiter.releaseLease(this.id);
  }
}
