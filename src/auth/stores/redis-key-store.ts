// KeyStore on Redis (Debian's redis-server 7, through ioredis), shared by
// every front end that names the same `--redis-url`: one truth for licences
// and usage however many machines serve.
//
// Contract: see KeyStore in ../key-store.ts. Every method answers with a
// Promise. Each chargeBatch is ONE Lua script, which Redis runs atomically:
// it reads each key's licence and counters, decides every request of the
// batch in order with the rules of licence.ts decideCharge (ported to Lua
// below, line for line, with the same period lengths), and writes the
// counters it changed, so front ends sharing the store never admit more than
// the quota and a charge that was answered is in Redis. refundCharge is one
// script applying undoCharge's rule. A command Redis does not answer (down,
// unreachable, loading its data, past LIMITS.redisCommandTimeoutMs) rejects
// with ApiError OVERLOADED (503) and carries the cause; the client reconnects
// by itself and the next request is served once Redis is back. A charge whose
// reply was lost to a dropped connection is never sent again (that could
// charge twice); its request gets 503, and the charge may stand.
//
// Key layout (the database of the URL's /DB, 0 by default):
//   rrscan:key:<sha256 hex>   hash: one key's licence and usage, the fields
//                             named as the columns of sqlite-key-store.ts:
//                             fingerprint created quota_kind quota_limit
//                             expires results_max offset_max burst_size
//                             burst_window max_concurrent fence_after
//                             fence_before private allow_cidrs (JSON) v2
//                             revoked, then period_start period_used
//                             total_used last_used burst_log. An optional
//                             field is absent when the licence has no value.
//                             burst_log is the burst-counted charge times,
//                             oldest first, separated by spaces, each as
//                             JavaScript's String(now) wrote it, so that a
//                             time read back is the same double and a refund
//                             finds its entry by equality.
//   rrscan:keys               set of the hex hashes of every key, for `keys
//                             list` and hasKeys.
// Keys are stored only as sha256 hashes (key-material.ts), never the key.

import type { Redis } from 'ioredis';
import { LicenceError } from '../../errors/catalogue.js';
import { failIf } from '../../lib/faults.js';
import { DAY_SEC, HOUR_SEC } from '../licence.js';
import type { ChargedEndpoint, Licence, QuotaKind, Usage } from '../licence.js';
import type { ChargeOutcome, ChargeRequest, KeyRecord, KeyStore } from '../key-store.js';
import { closeRedis, connectRedis, lua, runScript, storeFailure } from '../redis-client.js';

const KEY_PREFIX = 'rrscan:key:';
const INDEX_KEY = 'rrscan:keys';


// Shared by the charge and refund scripts: decideCharge's periodStartOf.
const PERIOD_START_LUA = `
local function periodStartOf(kind, t)
  if kind == 'daily' then return math.floor(t / ${DAY_SEC}) * ${DAY_SEC} end
  if kind == 'hourly' then return math.floor(t / ${HOUR_SEC}) * ${HOUR_SEC} end
  return 0
end
local function words(text)
  local out = {}
  if text then for w in string.gmatch(text, '%S+') do out[#out + 1] = w end end
  return out
end
local function num(v)
  if v then return tonumber(v) end
  return nil
end
`;

// Outcome codes of the charge script: a positive number is an admitted
// charge's periodUsed; these are the refusals.
const OUT_BAD_KEY = -1;
const OUT_RATE_LIMITED = -2;
const OUT_EXPIRED = -3;

/**
 * KEYS: the key hashes of the batch (each once). ARGV[1]: now, as
 * String(now); then per request the 1-based index of its key in KEYS and
 * 'f' (flex) or 'l' (lookup, summarize). Answers one code per request.
 * decideCharge's rules, in its order; a refused request writes nothing, and
 * a key's hash is written once, only when a request of it was admitted.
 */
const CHARGE = lua(`${PERIOD_START_LUA}
local nowText = ARGV[1]
local now = tonumber(nowText)
local state = {}
local out = {}
for r = 2, #ARGV, 2 do
  local i = tonumber(ARGV[r])
  local s = state[i]
  if s == nil then
    local v = redis.call('HMGET', KEYS[i], 'quota_kind', 'quota_limit', 'expires', 'burst_size', 'burst_window', 'revoked',
      'period_start', 'period_used', 'total_used', 'last_used', 'burst_log')
    if not v[1] then
      s = { known = false }
    else
      s = { known = true, kind = v[1], limit = num(v[2]), expires = num(v[3]), burstSize = num(v[4]), burstWindow = num(v[5]),
        revoked = v[6], periodStart = tonumber(v[7]), periodUsed = tonumber(v[8]), totalUsed = tonumber(v[9]),
        lastUsed = v[10], log = words(v[11]), dirty = false }
    end
    state[i] = s
  end
  local code
  if not s.known or s.revoked then
    code = ${OUT_BAD_KEY}
  elseif s.expires and now >= s.expires then
    code = ${OUT_EXPIRED}
  else
    local ps = periodStartOf(s.kind, now)
    -- Only move forward: a clock stepping back over a boundary must not hand quota back.
    if ps > s.periodStart then
      s.periodStart = ps
      s.periodUsed = 0
    end
    if s.kind ~= 'unlimited' and s.periodUsed >= s.limit then
      code = ${OUT_RATE_LIMITED}
    else
      if s.burstSize and ARGV[r + 1] ~= 'f' then
        local log = s.log
        local windowStart = now - s.burstWindow
        local expired = 0
        while expired < #log and tonumber(log[expired + 1]) <= windowStart do expired = expired + 1 end
        if expired > 0 then
          local kept = {}
          for j = expired + 1, #log do kept[#kept + 1] = log[j] end
          log = kept
          s.log = kept
        end
        if #log >= s.burstSize then
          code = ${OUT_RATE_LIMITED}
        else
          log[#log + 1] = nowText
        end
      end
      if code == nil then
        s.periodUsed = s.periodUsed + 1
        s.totalUsed = s.totalUsed + 1
        s.lastUsed = math.floor(now)
        s.dirty = true
        code = s.periodUsed
      end
    end
  end
  out[#out + 1] = code
end
for i, s in pairs(state) do
  if s.dirty then
    redis.call('HSET', KEYS[i], 'period_start', string.format('%d', s.periodStart), 'period_used', s.periodUsed,
      'total_used', s.totalUsed, 'last_used', string.format('%d', s.lastUsed), 'burst_log', table.concat(s.log, ' '))
  end
end
return out
`);

/**
 * KEYS[1]: the key. ARGV: chargedAt as String(chargedAt) by chargeBatch,
 * 'f' or 'l'. undoCharge's rule; an unknown key is skipped.
 */
const REFUND = lua(`${PERIOD_START_LUA}
local v = redis.call('HMGET', KEYS[1], 'quota_kind', 'burst_size', 'period_start', 'period_used', 'total_used', 'burst_log')
if not v[1] then return 0 end
local at = tonumber(ARGV[1])
local periodUsed = tonumber(v[4])
local totalUsed = tonumber(v[5])
if periodStartOf(v[1], at) == tonumber(v[3]) and periodUsed > 0 then periodUsed = periodUsed - 1 end
if totalUsed > 0 then totalUsed = totalUsed - 1 end
local log = words(v[6])
if v[2] and ARGV[2] ~= 'f' then
  for j = #log, 1, -1 do
    if tonumber(log[j]) == at then
      table.remove(log, j)
      break
    end
  end
end
redis.call('HSET', KEYS[1], 'period_used', periodUsed, 'total_used', totalUsed, 'burst_log', table.concat(log, ' '))
return 1
`);

/** KEYS: the key, the index. ARGV: the hex hash, then field/value pairs. Answers 0 when the key exists. */
const INSERT = lua(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('SADD', KEYS[2], ARGV[1])
return 1
`);

/** KEYS[1]: the key. ARGV[1]: floor(now). The first revocation time stays. */
const REVOKE = lua(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSETNX', KEYS[1], 'revoked', ARGV[1])
return 1
`);

const RESET = lua(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'period_start', 0, 'period_used', 0, 'total_used', 0, 'burst_log', '')
redis.call('HDEL', KEYS[1], 'last_used')
return 1
`);

/** KEYS: the keys. ARGV[1]: floor(now); then one count per key. total_used grows; last_used never moves back. */
const ADD_USAGE = lua(`
local now = tonumber(ARGV[1])
for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    redis.call('HINCRBY', KEYS[i], 'total_used', ARGV[i + 1])
    local last = tonumber(redis.call('HGET', KEYS[i], 'last_used') or '0')
    if now > last then redis.call('HSET', KEYS[i], 'last_used', ARGV[1]) end
  end
end
return 0
`);

const keyName = (keyHash: Buffer): string => KEY_PREFIX + keyHash.toString('hex');
const opt = (v: string | undefined): number | undefined => (v === undefined ? undefined : Number(v));

function licenceOf(hex: string, h: Record<string, string>): Licence {
  return Object.freeze({
    keyHash: Buffer.from(hex, 'hex'),
    fingerprint: h['fingerprint']!,
    created: Number(h['created']),
    quotaKind: h['quota_kind'] as QuotaKind,
    quotaLimit: opt(h['quota_limit']),
    expires: opt(h['expires']),
    resultsMax: Number(h['results_max']),
    offsetMax: opt(h['offset_max']),
    burstSize: opt(h['burst_size']),
    burstWindowSec: opt(h['burst_window']),
    maxConcurrent: opt(h['max_concurrent']),
    timeFenceAfter: opt(h['fence_after']),
    timeFenceBefore: opt(h['fence_before']),
    private: h['private'] === '1',
    allowCidrs: Object.freeze(JSON.parse(h['allow_cidrs']!) as string[]),
    v2: h['v2'] === '1',
    revoked: opt(h['revoked']),
  });
}

function usageOf(h: Record<string, string>): Usage {
  const log = h['burst_log'] ?? '';
  return {
    periodStart: Number(h['period_start']),
    periodUsed: Number(h['period_used']),
    totalUsed: Number(h['total_used']),
    lastUsed: opt(h['last_used']),
    burstLog: log === '' ? [] : log.split(' ').map(Number),
  };
}

/** The hash of a new key: every defined licence field, and empty usage. */
function fieldsOf(l: Licence): string[] {
  const f: string[] = [
    'fingerprint', l.fingerprint, 'created', String(l.created), 'quota_kind', l.quotaKind, 'results_max', String(l.resultsMax),
    'private', l.private ? '1' : '0', 'allow_cidrs', JSON.stringify(l.allowCidrs), 'v2', l.v2 ? '1' : '0',
    'period_start', '0', 'period_used', '0', 'total_used', '0', 'burst_log', '',
  ];
  const optional: Array<[string, number | undefined]> = [
    ['quota_limit', l.quotaLimit], ['expires', l.expires], ['offset_max', l.offsetMax], ['burst_size', l.burstSize],
    ['burst_window', l.burstWindowSec], ['max_concurrent', l.maxConcurrent], ['fence_after', l.timeFenceAfter],
    ['fence_before', l.timeFenceBefore], ['revoked', l.revoked],
  ];
  for (const [name, value] of optional) if (value !== undefined) f.push(name, String(value));
  return f;
}


const OUTCOME_BAD_KEY: ChargeOutcome = Object.freeze({ ok: false, code: 'BAD_API_KEY' });
const OUTCOME_LIMITED: ChargeOutcome = Object.freeze({ ok: false, code: 'RATE_LIMITED' });
const OUTCOME_EXPIRED: ChargeOutcome = Object.freeze({ ok: false, code: 'QUOTA_EXPIRED' });

function outcomeOf(code: number): ChargeOutcome {
  if (code > 0) return { ok: true, periodUsed: code };
  if (code === OUT_RATE_LIMITED) return OUTCOME_LIMITED;
  if (code === OUT_EXPIRED) return OUTCOME_EXPIRED;
  return OUTCOME_BAD_KEY;
}

export class RedisKeyStore implements KeyStore {
  private readonly client: Redis;
  private closed = false;

  private constructor(client: Redis) {
    this.client = client;
  }

  /** Connects to `url` (redis://HOST:PORT[/DB]); commands wait for the connection, failing as the module comment says. */
  static open(url: string): RedisKeyStore {
    return new RedisKeyStore(connectRedis(url));
  }

  async findLicence(keyHash: Buffer): Promise<Licence | undefined> {
    failIf('keystore-licence');
    const h = await this.hash(keyHash);
    return h === undefined ? undefined : licenceOf(keyHash.toString('hex'), h);
  }

  async record(keyHash: Buffer): Promise<KeyRecord | undefined> {
    const h = await this.hash(keyHash);
    return h === undefined ? undefined : { licence: licenceOf(keyHash.toString('hex'), h), usage: usageOf(h) };
  }

  async list(): Promise<KeyRecord[]> {
    let records: KeyRecord[];
    try {
      const hexes = await this.client.smembers(INDEX_KEY);
      const hashes = await Promise.all(hexes.map((hex) => this.client.hgetall(KEY_PREFIX + hex)));
      records = [];
      hashes.forEach((h, i) => {
        if (h['quota_kind'] !== undefined) records.push({ licence: licenceOf(hexes[i]!, h), usage: usageOf(h) });
      });
    } catch (err) {
      throw storeFailure(err);
    }
    return records.sort((a, b) => a.licence.created - b.licence.created ||
      (a.licence.fingerprint < b.licence.fingerprint ? -1 : a.licence.fingerprint > b.licence.fingerprint ? 1 : 0));
  }

  async hasKeys(): Promise<boolean> {
    try {
      return (await this.client.scard(INDEX_KEY)) > 0;
    } catch (err) {
      throw storeFailure(err);
    }
  }

  async insert(licence: Licence): Promise<void> {
    const hex = licence.keyHash.toString('hex');
    const done = await runScript(this.client, INSERT, [KEY_PREFIX + hex, INDEX_KEY], [hex, ...fieldsOf(licence)]);
    if (done === 0) throw new LicenceError('--key', `a key with fingerprint ${licence.fingerprint} already exists`);
  }

  async revoke(keyHash: Buffer, now: number): Promise<boolean> {
    return (await runScript(this.client, REVOKE, [keyName(keyHash)], [Math.floor(now)])) === 1;
  }

  async resetUsage(keyHash: Buffer): Promise<boolean> {
    return (await runScript(this.client, RESET, [keyName(keyHash)], [])) === 1;
  }

  async chargeBatch(requests: readonly ChargeRequest[], now: number): Promise<ChargeOutcome[]> {
    failIf('keystore-charge');
    if (requests.length === 0) return [];
    const keys: string[] = [];
    const indexOf = new Map<string, number>();
    const args: string[] = [String(now)];
    for (const req of requests) {
      const name = keyName(req.licence.keyHash);
      let index = indexOf.get(name);
      if (index === undefined) {
        keys.push(name);
        index = keys.length;
        indexOf.set(name, index);
      }
      args.push(String(index), req.endpoint === 'flex' ? 'f' : 'l');
    }
    const codes = (await runScript(this.client, CHARGE, keys, args)) as number[];
    return codes.map(outcomeOf);
  }

  async refundCharge(licence: Licence, endpoint: ChargedEndpoint, chargedAt: number): Promise<void> {
    await runScript(this.client, REFUND, [keyName(licence.keyHash)], [String(chargedAt), endpoint === 'flex' ? 'f' : 'l']);
  }

  async addUnmeteredUsage(counts: ReadonlyMap<string, number>, now: number): Promise<void> {
    if (counts.size === 0) return;
    const keys: string[] = [];
    const args: string[] = [String(Math.floor(now))];
    for (const [hex, count] of counts) {
      keys.push(KEY_PREFIX + hex);
      args.push(String(count));
    }
    await runScript(this.client, ADD_USAGE, keys, args);
  }

  /** Nothing to notice: Redis is the one copy of the store, and a command it cannot answer fails by itself (OVERLOADED). */
  watch(): void {
    // Deliberately empty (KeyStore.watch).
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeRedis(this.client);
  }

  /** A key's whole hash, or undefined when the key is unknown. */
  private async hash(keyHash: Buffer): Promise<Record<string, string> | undefined> {
    let h: Record<string, string>;
    try {
      h = await this.client.hgetall(keyName(keyHash));
    } catch (err) {
      throw storeFailure(err);
    }
    return h['quota_kind'] === undefined ? undefined : h;
  }
}
