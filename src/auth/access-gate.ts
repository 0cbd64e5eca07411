// AccessGate: the one place a request is authorised and charged (spec
// sections 5 and 8; compat.md "rate_limit" and "Status codes").
//
// Contract: every request is admitted along one path, in this order.
//   1. authenticate(apiKey, clientIp, endpoint) answers an Admission that
//      carries the key's limits, or refuses with an ApiError:
//        403 BAD_API_KEY           key absent, malformed, unknown or revoked,
//                                  or the client address outside the key's
//                                  allow list
//        401 NOT_AUTHORISED        key without v2
//        401 QUOTA_EXPIRED         licence (any kind) past its `expires`;
//                                  not for rate_limit, which answers it
//      It answers synchronously when the key's licence is cached and with a
//      Promise when the store must be read; a refusal is always a rejected
//      Promise, never a throw. It charges nothing and takes no slot.
//   2. The caller checks the request against admission.limits (e.g. 416 for
//      an offset the key does not allow), plans it and reserves its own
//      capacity. Refusing here costs the key nothing: the caller drops the
//      admission.
//   3. charge(admission, endpoint), with the endpoint given to
//      authenticate, takes a slot of the key's concurrency cap and then
//      charges its quota, and gives a Grant (the limits, the
//      X-RateLimit-* headers, release()) — at once, with no Promise, for a
//      key with neither cap nor quota — or refuses with a rejected ApiError:
//        503 TOO_MANY_CONNECTIONS  the key already holds maxConcurrent
//                                  leases of the limiter
//        429 RATE_LIMITED          time quota or block used up; burst
//                                  exceeded (lookup and summarize only,
//                                  never flex)
//      and, because the store re-reads the key in the charge's transaction,
//      403 BAD_API_KEY or 401 QUOTA_EXPIRED when the key was revoked or
//      expired since step 1, or 503 OVERLOADED when the store cannot commit
//      (quota-ledger.ts) or the limiter cannot decide (concurrency.ts). A
//      refusal consumes no quota and frees the slot it took. The charge is
//      committed before charge() resolves (group commit), so nothing the
//      client was told it used is lost on a crash. An admission is charged
//      at most once, by the gate that made it, for its own endpoint;
//      anything else is a bug and rejects with a plain Error.
//   4. The caller releases the Grant when the request ends (idempotent).
//   5. refund(grant) hands the charge back, once, when the server failed
//      the request before it wrote any result (README "Quotas when a search
//      fails"); the request then costs the key nothing.
// 'rate_limit' is never charged, counted or capped: its charge resolves at
// once with no headers and no slot. rateLimit() answers the body of GET
// rate_limit after the 403 and 401 NOT_AUTHORISED checks of step 1.
//
// The gate is built from a KeyStore and a ConcurrencyLimiter (interfaces):
// which store and which limiter decide how far quotas and caps are shared.
// AccessGate.open pairs the configured store with its limiter
// (openConcurrencyLimiter): with SQLite the in-process one, whose caps hold
// per server process (a key with cap 4 may hold 4 slots in each process
// sharing a data directory); with Redis the Redis one, whose caps hold
// across every front end sharing that Redis.
//
// Licences are cached for LIMITS.licenceCacheTtlMs: revoking a key that
// needs no write per request (unlimited) takes effect within that time;
// charged keys re-read their row inside every charge transaction, so
// revocation stops them at once. The gate watches its store
// (KeyStore.watch): when the store reopens another file or has none, every
// cached licence is dropped, so no key outlives the store it came from.
//
// Logging: this module logs nothing; KeyLimits.fingerprint is what callers
// may log, and KeyLimits.private tells them not to log query text; the
// store's notices go to AccessGateOptions.onStoreNotice.
// Counting: `refusals` counts the refusals that are the key's own limits
// (quota, burst, cap, expiry), plain numbers the server's metrics read at
// scrape time; probe() tells its readiness check whether the store answers.

import { LIMITS } from '../config/limits.js';
import { ApiError } from '../errors/catalogue.js';
import { ClientAllowList } from './client-address.js';
import type { ConcurrencyLimiter, Lease } from './concurrency.js';
import { canonicalKey, hashKey, sameKeyHash } from './key-material.js';
import type { Awaitable, ChargeOutcome, KeyRecord, KeyStore, KeyStoreNotice } from './key-store.js';
import { isExpired, isMetered, resolveFence } from './licence.js';
import type { ChargedEndpoint, Licence } from './licence.js';
import { QuotaLedger, type ChargeStamp } from './quota-ledger.js';
import { quotaHeaders, rateLimitBody } from './rate-limit-body.js';
import { openConcurrencyLimiter, openKeyStore } from './stores/open-key-store.js';
import type { KeyStoreConfig } from './stores/open-key-store.js';

/** What the gate admits: the charged searches, and rate_limit (never charged). */
export type Endpoint = ChargedEndpoint | 'rate_limit';

/**
 * Requests refused by a key's own limits, by which limit, since the gate
 * opened. A 429 counts under the key's quota kind (daily, hourly, block);
 * the store's answer does not say whether the period quota or the burst
 * refused it, so `burst` counts only the 429s of unlimited keys, which only
 * a burst can refuse. `concurrency` is the 503 of --max-concurrent,
 * `expired` the 401 of a licence past its expiry.
 */
export interface QuotaRefusals {
  daily: number;
  hourly: number;
  block: number;
  burst: number;
  concurrency: number;
  expired: number;
}

export interface KeyLimits {
  /** Clamp for `limit`; limit=0 means this. */
  resultsMax: number;
  /** undefined = offsets not allowed (416). */
  offsetMax: number | undefined;
  /** Epoch seconds; narrows every search. */
  timeFenceAfter: number | undefined;
  timeFenceBefore: number | undefined;
  /** true: never log query text. */
  private: boolean;
  /** Short non-reversible id for logs (first 12 hex digits of sha256(key)). */
  fingerprint: string;
}

export interface Grant {
  readonly limits: KeyLimits;
  /** X-RateLimit-Limit/-Remaining/-Reset/-Expires for data responses (empty for rate_limit). */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  /** End of request: frees the concurrency slot; idempotent. */
  release(): void;
}

export interface AccessGateOptions {
  /** Epoch seconds; injectable for tests. */
  now?: () => number;
  /** Override LIMITS.licenceCacheTtlMs (tests use 0 to see revocations at once). */
  licenceCacheTtlMs?: number;
  /** Hears what the key store reports about itself (KeyStoreNotice): the server logs it. */
  onStoreNotice?: (notice: KeyStoreNotice) => void;
}

/** What the gate remembers about a key between requests. */
interface KnownKey {
  readonly licence: Licence;
  readonly hex: string;
  readonly allow: ClientAllowList | undefined;
  readonly loadedMs: number;
  /** Limits shared by every grant when no fence is relative to the request time. */
  readonly fixedLimits: KeyLimits | undefined;
  /** Headers of unmetered grants (unlimited keys: constant, so built once). */
  readonly unmeteredHeaders: ReadonlyArray<readonly [string, string]>;
}

const NO_HEADERS: ReadonlyArray<readonly [string, string]> = Object.freeze([]);

function limitsOf(licence: Licence, now: number): KeyLimits {
  return Object.freeze({
    resultsMax: licence.resultsMax,
    offsetMax: licence.offsetMax,
    timeFenceAfter: resolveFence(licence.timeFenceAfter, now),
    timeFenceBefore: resolveFence(licence.timeFenceBefore, now),
    private: licence.private,
    fingerprint: licence.fingerprint,
  });
}

/**
 * What authenticate() found: the key's limits for the caller's own checks
 * (step 2 of the module comment), and what charge() needs to finish.
 */
export interface Admission {
  /** The endpoint the key was vetted for; charge() must name the same. */
  readonly endpoint: Endpoint;
  readonly limits: KeyLimits;
}

/**
 * One request from authenticate() to release(): first the caller's
 * Admission, then, once charge() resolves, the same object as its Grant, so
 * the hot path allocates one object per request.
 */
class Pass implements Admission, Grant, ChargeStamp {
  readonly gate: AccessGate;
  readonly key: KnownKey;
  readonly endpoint: Endpoint;
  readonly limits: KeyLimits;
  /** Epoch seconds of authenticate(): expiry, relative fences and headers all use it. */
  readonly now: number;
  headers: ReadonlyArray<readonly [string, string]> = NO_HEADERS;
  lease: Lease | undefined = undefined;
  /** Set when charge() starts: an admission is charged at most once. */
  charged = false;
  /** When the store admitted its metered charge, until refund() hands it back; undefined when nothing was charged. */
  chargedAt: number | undefined = undefined;

  constructor(gate: AccessGate, key: KnownKey, endpoint: Endpoint, limits: KeyLimits, now: number) {
    this.gate = gate;
    this.key = key;
    this.endpoint = endpoint;
    this.limits = limits;
    this.now = now;
  }

  release(): void {
    this.lease?.release();
  }
}

/**
 * The client's address, or what reads it when asked: only keys with an
 * allow-list need it, and reading it costs the front end a getpeername
 * system call per request (the front end's Exchange is one, so that no
 * closure is made per request).
 */
export interface ClientAddress {
  clientIp(): string;
}
export type ClientIp = string | (() => string) | ClientAddress;

function ipOf(clientIp: ClientIp): string {
  return typeof clientIp === 'string' ? clientIp : typeof clientIp === 'function' ? clientIp() : clientIp.clientIp();
}

export class AccessGate {
  private readonly store: KeyStore;
  private readonly ledger: QuotaLedger;
  private readonly now: () => number;
  private readonly cacheTtlMs: number;
  private readonly known = new Map<string, KnownKey>();
  /** The same entries by the key as the client sent it (see authenticate). */
  private readonly byRawKey = new Map<string, KnownKey>();
  /** The last of them used, checked before the map; it counts only while it is the cached licence, as the map's entries. */
  private lastRawKey: string | undefined;
  private lastSeen: KnownKey | undefined;
  private readonly limiter: ConcurrencyLimiter;
  readonly refusals: QuotaRefusals = { daily: 0, hourly: 0, block: 0, burst: 0, concurrency: 0, expired: 0 };
  /** rate_limit bodies of this event-loop turn by key (hex), or their pending read (rateLimitText). */
  private readonly rateMemo = new Map<string, string | Promise<string>>();

  /** The gate owns both: close() closes them. */
  constructor(store: KeyStore, limiter: ConcurrencyLimiter, opts: AccessGateOptions = {}) {
    this.store = store;
    this.limiter = limiter;
    this.now = opts.now ?? (() => Date.now() / 1000);
    this.cacheTtlMs = opts.licenceCacheTtlMs ?? LIMITS.licenceCacheTtlMs;
    this.ledger = new QuotaLedger(store, this.now);
    const onNotice = opts.onStoreNotice;
    store.watch((notice) => {
      if (notice.kind !== 'migrated') {
        this.known.clear();
        this.byRawKey.clear();
      }
      onNotice?.(notice);
    });
  }

  /** Opens the configured key store (creating it if needed), with the concurrency limiter that goes with it. */
  static open(config: KeyStoreConfig, opts: AccessGateOptions = {}): AccessGate {
    return new AccessGate(openKeyStore(config), openConcurrencyLimiter(config), opts);
  }

  /**
   * Step 1 of the module comment: whether this key may use this endpoint at
   * all. Synchronous for a cached licence (no Promise on the hot path);
   * refusals are rejected Promises. Charges nothing and takes no slot.
   */
  authenticate(apiKey: string | undefined, clientIp: ClientIp, endpoint: Endpoint): Awaitable<Admission> {
    try {
      const found = this.identify(apiKey, clientIp);
      if (found instanceof Promise) return found.then((key) => this.admission(key, endpoint));
      return this.admission(found, endpoint);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * Step 3 of the module comment: the concurrency slot (503), then the
   * quota (429), committed before this resolves. A refusal consumes no quota
   * and frees the slot it took; the Grant's release() frees it otherwise.
   */
  charge(admission: Admission, endpoint: Endpoint): Awaitable<Grant> {
    let pass: Pass;
    try {
      pass = this.unchargedPass(admission, endpoint);
    } catch (err) {
      return Promise.reject(err);
    }
    if (endpoint === 'rate_limit') return pass;
    const key = pass.key;
    const licence = key.licence;
    // An unlimited key without a cap (the common partner key) needs no store and no limiter: no Promise either.
    if (licence.maxConcurrent === undefined && !isMetered(licence, endpoint)) {
      this.ledger.countUnmetered(key.hex);
      pass.headers = key.unmeteredHeaders;
      return pass;
    }
    return this.chargeMetered(pass, endpoint);
  }

  /** charge() for keys with a cap or a quota: both may wait for their store. */
  private chargeMetered(pass: Pass, endpoint: Exclude<Endpoint, 'rate_limit'>): Promise<Grant> {
    const licence = pass.key.licence;
    try {
      if (licence.maxConcurrent === undefined) return this.chargeQuota(pass, endpoint);
      const acquired = this.limiter.acquire(pass.key.hex, licence.maxConcurrent);
      if (acquired instanceof Promise) return acquired.then((lease) => this.leased(pass, endpoint, lease));
      return this.leased(pass, endpoint, acquired);
    } catch (err) {
      // A refusal is a rejected Promise, never a throw (module comment).
      return Promise.reject(err);
    }
  }

  private leased(pass: Pass, endpoint: Exclude<Endpoint, 'rate_limit'>, lease: Lease | undefined): Promise<Grant> {
    if (lease === undefined) {
      this.refusals.concurrency++;
      return Promise.reject(new ApiError('TOO_MANY_CONNECTIONS'));
    }
    pass.lease = lease;
    return this.chargeQuota(pass, endpoint);
  }

  /**
   * The quota part of a charge, once the slot (if any) is held. A chain of
   * then(), not an async function: a daily key's lookup makes one Promise
   * here where it made three (issue 22: its charge is the next cost once the
   * request log is cheap).
   */
  private chargeQuota(pass: Pass, endpoint: Exclude<Endpoint, 'rate_limit'>): Promise<Grant> {
    const key = pass.key;
    const licence = key.licence;
    if (!isMetered(licence, endpoint)) {
      this.ledger.countUnmetered(key.hex);
      pass.headers = key.unmeteredHeaders;
      return Promise.resolve(pass);
    }
    return this.ledger.charge(licence, endpoint, pass).then((outcome) => this.charged(pass, outcome), (err: unknown) => {
      pass.release();
      throw err;
    });
  }

  private charged(pass: Pass, outcome: ChargeOutcome): Grant {
    const key = pass.key;
    const licence = key.licence;
    if (!outcome.ok) {
      pass.chargedAt = undefined;
      pass.release();
      // The transaction saw a revoked key: stop serving it from the cache too.
      if (outcome.code === 'BAD_API_KEY') this.known.delete(key.hex);
      else if (outcome.code === 'QUOTA_EXPIRED') this.refusals.expired++;
      else this.refusals[licence.quotaKind === 'unlimited' ? 'burst' : licence.quotaKind]++;
      throw new ApiError(outcome.code);
    }
    pass.headers = quotaHeaders(licence, outcome.periodUsed, pass.now);
    return pass;
  }

  /**
   * Step 5 of the module comment: hands a grant's charge back to its key.
   * Nothing to do for a grant that charged nothing (unmetered keys,
   * rate_limit) or was refunded already. Rejects, leaving the request
   * charged, when the store cannot record it.
   */
  refund(grant: Grant): Promise<void> {
    if (!(grant instanceof Pass) || grant.gate !== this) return Promise.reject(new Error('refund(): the grant was not made by this gate'));
    const at = grant.chargedAt;
    if (at === undefined || grant.endpoint === 'rate_limit') return Promise.resolve();
    grant.chargedAt = undefined;
    return this.ledger.refund(grant.key.licence, grant.endpoint, at);
  }

  /** Body of GET rate_limit ({"rate":{...}}, rate-limit-body.ts); refuses with 403, or 401 for a key without v2. */
  async rateLimit(apiKey: string | undefined, clientIp: ClientIp): Promise<object> {
    const found = this.identify(apiKey, clientIp);
    const key = found instanceof Promise ? await found : found;
    const record = await this.store.record(key.licence.keyHash);
    return this.bodyOf(key, record);
  }

  /**
   * rateLimit()'s body as JSON text with its newline, for the server: the
   * row is read once per key and event-loop turn, and the requests of that
   * turn, which are concurrent, share what it said (at tens of thousands of
   * rate_limit requests a second, one SQLite read each was most of their
   * cost). Synchronous when the key is cached and the store is.
   */
  rateLimitText(apiKey: string | undefined, clientIp: ClientIp): string | Promise<string> {
    const found = this.identify(apiKey, clientIp);
    if (found instanceof Promise) return found.then((key) => this.rateText(key));
    return this.rateText(found);
  }

  private rateText(key: KnownKey): string | Promise<string> {
    const memo = this.rateMemo.get(key.hex);
    if (memo !== undefined) return memo;
    const record = this.store.record(key.licence.keyHash);
    const text = record instanceof Promise ? record.then((r) => `${JSON.stringify(this.bodyOf(key, r))}\n`)
      : `${JSON.stringify(this.bodyOf(key, record))}\n`;
    if (this.rateMemo.size === 0) setImmediate(this.forgetRates);
    this.rateMemo.set(key.hex, text);
    return text;
  }

  private readonly forgetRates = (): void => {
    this.rateMemo.clear();
  };

  /** The rate_limit body of a key from its row as read now (undefined: gone), or 403 for a key revoked or gone. */
  private bodyOf(key: KnownKey, record: KeyRecord | undefined): object {
    if (record === undefined || record.licence.revoked !== undefined) {
      this.known.delete(key.hex);
      throw new ApiError('BAD_API_KEY');
    }
    return rateLimitBody(record.licence, record.usage, this.now());
  }

  /**
   * Resolves when the key store answers a read (one small query), rejects
   * with the store's failure (ApiError OVERLOADED for a Redis that does not
   * answer) otherwise: the server's readiness check.
   */
  async probe(): Promise<void> {
    await this.store.hasKeys();
  }

  /** Commits queued charges and usage, then closes the store and the limiter. */
  close(): void {
    this.ledger.close();
    this.store.close();
    this.limiter.close();
    this.known.clear();
    this.byRawKey.clear();
  }

  /** The expiry check of step 1, and the admission that carries the key to charge(). */
  private admission(key: KnownKey, endpoint: Endpoint): Pass {
    const now = this.now();
    if (endpoint !== 'rate_limit' && isExpired(key.licence, now)) {
      this.refusals.expired++;
      throw new ApiError('QUOTA_EXPIRED');
    }
    return new Pass(this, key, endpoint, key.fixedLimits ?? limitsOf(key.licence, now), now);
  }

  /** Misuse of charge() is a bug in the caller, not a refusal: a plain Error, answered 500. */
  private unchargedPass(admission: Admission, endpoint: Endpoint): Pass {
    if (!(admission instanceof Pass) || admission.gate !== this) throw new Error('charge(): the admission was not made by this gate');
    if (admission.endpoint !== endpoint) throw new Error(`charge(): an admission for ${admission.endpoint} charged as ${endpoint}`);
    if (admission.charged) throw new Error('charge(): the admission was charged already');
    admission.charged = true;
    return admission;
  }

  /** 403 and 401-for-version checks; cached licences, or one store read. */
  private identify(apiKey: string | undefined, clientIp: ClientIp): KnownKey | Promise<KnownKey> {
    // A key seen lately skips canonicalising and SHA-256 (a few us of a
    // small lookup's budget); the entry counts only while it is still the
    // cached licence of its hash, so revocation and refresh reach it.
    if (apiKey !== undefined) {
      // The key of the request before, compared first: cheaper than hashing the new string for the map (issue 22).
      let seen = apiKey === this.lastRawKey ? this.lastSeen : undefined;
      if (!this.current(seen)) seen = this.byRawKey.get(apiKey);
      if (this.current(seen)) {
        this.lastRawKey = apiKey;
        this.lastSeen = seen;
        return this.vet(seen, seen.licence.keyHash, clientIp);
      }
    }
    const canonical = canonicalKey(apiKey);
    if (canonical === undefined) throw new ApiError('BAD_API_KEY');
    const keyHash = hashKey(canonical);
    const hex = keyHash.toString('hex');
    const cached = this.known.get(hex);
    if (cached !== undefined && Date.now() - cached.loadedMs < this.cacheTtlMs) {
      return this.vetAndRemember(apiKey!, cached, keyHash, clientIp);
    }
    const loaded = this.store.findLicence(keyHash);
    if (loaded instanceof Promise) return loaded.then((lic) => this.vetAndRemember(apiKey!, this.remember(hex, lic), keyHash, clientIp));
    return this.vetAndRemember(apiKey!, this.remember(hex, loaded), keyHash, clientIp);
  }

  /** Whether a remembered entry may still be used: it is the cached licence of its hash, and not older than the cache's TTL. */
  private current(key: KnownKey | undefined): key is KnownKey {
    return key !== undefined && this.known.get(key.hex) === key && Date.now() - key.loadedMs < this.cacheTtlMs;
  }

  private vetAndRemember(apiKey: string, key: KnownKey | undefined, keyHash: Buffer, clientIp: ClientIp): KnownKey {
    const vetted = this.vet(key, keyHash, clientIp);
    if (this.byRawKey.size >= LIMITS.licenceCacheEntriesMax) this.byRawKey.clear();
    this.byRawKey.set(apiKey, vetted);
    return vetted;
  }

  private remember(hex: string, licence: Licence | undefined): KnownKey | undefined {
    if (licence === undefined) {
      this.known.delete(hex);
      return undefined;
    }
    const relativeFence = (licence.timeFenceAfter ?? 0) < 0 || (licence.timeFenceBefore ?? 0) < 0;
    const key: KnownKey = {
      licence,
      hex,
      allow: licence.allowCidrs.length > 0 ? ClientAllowList.fromCidrs(licence.allowCidrs) : undefined,
      loadedMs: Date.now(),
      fixedLimits: relativeFence ? undefined : limitsOf(licence, 0),
      // For unlimited keys these never change; metered grants get fresh headers from their charge.
      unmeteredHeaders: quotaHeaders(licence, 0, 0),
    };
    if (this.known.size >= LIMITS.licenceCacheEntriesMax) this.known.clear();
    this.known.set(hex, key);
    return key;
  }

  private vet(key: KnownKey | undefined, keyHash: Buffer, clientIp: ClientIp): KnownKey {
    // The raw-key cache hands the stored hash itself: nothing to compare (a client's hash is compared in constant time).
    if (key === undefined || (keyHash !== key.licence.keyHash && !sameKeyHash(key.licence.keyHash, keyHash)) ||
      key.licence.revoked !== undefined) {
      throw new ApiError('BAD_API_KEY');
    }
    if (key.allow !== undefined && !key.allow.allows(ipOf(clientIp))) {
      throw new ApiError('BAD_API_KEY');
    }
    if (!key.licence.v2) throw new ApiError('NOT_AUTHORISED');
    return key;
  }
}
