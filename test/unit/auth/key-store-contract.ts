// The contract every KeyStore must pass (src/auth/key-store.ts). An
// implementation's test file calls describeKeyStoreContract with a function
// that opens a fresh, empty store; the suite closes every handle it opened
// and then calls dispose(). Every method is awaited, so synchronous and
// Promise-answering stores run the same tests. Times are fixed epoch
// seconds: T is 2024-01-01T00:00:00Z, the start of a UTC day and hour.

import { afterEach, describe, expect, it } from 'vitest';
import { fingerprintOf, hashKey } from '../../../src/auth/key-material.js';
import type { Awaitable, ChargeOutcome, ChargeRequest, KeyStore } from '../../../src/auth/key-store.js';
import { licenceFromOptions } from '../../../src/auth/licence.js';
import type { ChargedEndpoint, Licence, NewKeyOptions, Usage } from '../../../src/auth/licence.js';

export interface KeyStoreFixture {
  /** A fresh store holding no keys. */
  readonly store: KeyStore;
  /** Another handle on the same data, as a second server process would open it. */
  openPeer(): Awaitable<KeyStore>;
  /** Removes whatever the fixture created; every handle is closed by then. */
  dispose(): Awaitable<void>;
}

const T = 1_704_067_200;
const DAY = 86_400;
const HOUR = 3_600;

const OK = (periodUsed: number): ChargeOutcome => ({ ok: true, periodUsed });
const LIMITED: ChargeOutcome = { ok: false, code: 'RATE_LIMITED' };
const EXPIRED: ChargeOutcome = { ok: false, code: 'QUOTA_EXPIRED' };
const UNKNOWN: ChargeOutcome = { ok: false, code: 'BAD_API_KEY' };
const EMPTY: Usage = { periodStart: 0, periodUsed: 0, totalUsed: 0, lastUsed: undefined, burstLog: [] };

let keySerial = 0;

/** A licence for a key no other test uses, added at `created`. */
function licence(opts: NewKeyOptions, created = T - DAY): Licence {
  const keyHash = hashKey(`contract-${process.pid}-${++keySerial}`);
  return licenceFromOptions(opts, keyHash, fingerprintOf(keyHash), created);
}

/** A licence as plain data (the hash as hex) so that toEqual compares every field. */
function plain(l: Licence): Record<string, unknown> {
  return { ...l, keyHash: l.keyHash.toString('hex'), allowCidrs: [...l.allowCidrs] };
}

export function describeKeyStoreContract(name: string, open: () => Awaitable<KeyStoreFixture>): void {
  describe(`KeyStore contract: ${name}`, () => {
    let fixture: KeyStoreFixture | undefined;
    let handles: KeyStore[] = [];

    afterEach(async () => {
      for (const h of handles) h.close();
      handles = [];
      await fixture?.dispose();
      fixture = undefined;
    });

    async function fresh(): Promise<KeyStore> {
      fixture = await open();
      handles.push(fixture.store);
      return fixture.store;
    }

    async function peer(): Promise<KeyStore> {
      const p = await fixture!.openPeer();
      handles.push(p);
      return p;
    }

    async function added(store: KeyStore, opts: NewKeyOptions, created?: number): Promise<Licence> {
      const l = licence(opts, created);
      await store.insert(l);
      return l;
    }

    /** Charges `endpoints` of one key as one batch. */
    async function charge(store: KeyStore, l: Licence, now: number, ...endpoints: ChargedEndpoint[]): Promise<ChargeOutcome[]> {
      return store.chargeBatch(endpoints.map((endpoint) => ({ licence: l, endpoint })), now);
    }

    async function usage(store: KeyStore, l: Licence): Promise<Usage> {
      return (await store.record(l.keyHash))!.usage;
    }

    describe('insert, findLicence, record', () => {
      it('round-trips every licence field, and starts with empty usage', async () => {
        const store = await fresh();
        const full = await added(store, {
          quota: { kind: 'block', limit: 600 }, expires: T + 5 * DAY, resultsMax: 256, offsetMax: 3000,
          burst: { size: 5, windowSec: 360 }, maxConcurrent: 4, timeFenceAfter: -86_400, timeFenceBefore: T, private: true,
          allowCidrs: ['10.0.0.0/8', '::1'], v2: false,
        });
        const bare = await added(store, { quota: { kind: 'hourly', limit: 12 } }, T - 7);
        expect(plain((await store.findLicence(full.keyHash))!)).toEqual({
          keyHash: full.keyHash.toString('hex'), fingerprint: fingerprintOf(full.keyHash), created: T - DAY, quotaKind: 'block',
          quotaLimit: 600, expires: T + 5 * DAY, resultsMax: 256, offsetMax: 3000, burstSize: 5, burstWindowSec: 360,
          maxConcurrent: 4, timeFenceAfter: -86_400, timeFenceBefore: T, private: true, allowCidrs: ['10.0.0.0/8', '::1'],
          v2: false, revoked: undefined,
        });
        expect(plain((await store.findLicence(bare.keyHash))!)).toEqual({
          keyHash: bare.keyHash.toString('hex'), fingerprint: fingerprintOf(bare.keyHash), created: T - 7, quotaKind: 'hourly',
          quotaLimit: 12, expires: undefined, resultsMax: 12, offsetMax: undefined, burstSize: undefined,
          burstWindowSec: undefined, maxConcurrent: undefined, timeFenceAfter: undefined, timeFenceBefore: undefined,
          private: false, allowCidrs: [], v2: true, revoked: undefined,
        });
        const record = (await store.record(full.keyHash))!;
        expect(plain(record.licence)).toEqual(plain(full));
        expect(record.usage).toEqual(EMPTY);
      });

      it('answers undefined for a key it does not hold', async () => {
        const store = await fresh();
        await added(store, { quota: { kind: 'unlimited' } });
        expect(await store.findLicence(hashKey('ffffffffffffffff'))).toBeUndefined();
        expect(await store.record(hashKey('ffffffffffffffff'))).toBeUndefined();
      });

      it('refuses a second insert of the same key hash with LicenceError(--key), keeping the first', async () => {
        const store = await fresh();
        const first = await added(store, { quota: { kind: 'daily', limit: 5 } });
        const again = { ...licence({ quota: { kind: 'unlimited' } }), keyHash: first.keyHash, fingerprint: first.fingerprint };
        const err = await Promise.resolve().then(() => store.insert(again)).then(() => undefined, (e: unknown) => e);
        expect(err).toMatchObject({
          code: 'BAD_LICENCE', option: '--key', message: `--key: a key with fingerprint ${first.fingerprint} already exists`,
        });
        expect(plain((await store.findLicence(first.keyHash))!)).toEqual(plain(first));
        expect((await store.list()).length).toBe(1);
      });
    });

    describe('list, hasKeys', () => {
      it('an empty store has no keys and lists none', async () => {
        const store = await fresh();
        expect(await store.hasKeys()).toBe(false);
        expect(await store.list()).toEqual([]);
      });

      it('lists every key oldest first with its committed usage, revoked ones included', async () => {
        const store = await fresh();
        const middle = await added(store, { quota: { kind: 'daily', limit: 10 } }, T - 20);
        const newest = await added(store, { quota: { kind: 'unlimited' } }, T - 10);
        const oldest = await added(store, { quota: { kind: 'block', limit: 3 } }, T - 30);
        await charge(store, middle, T + 5, 'lookup', 'flex');
        expect(await store.revoke(oldest.keyHash, T)).toBe(true);
        const rows = await store.list();
        expect(rows.map((r) => [r.licence.fingerprint, r.licence.created, r.licence.revoked, r.usage.totalUsed])).toEqual([
          [oldest.fingerprint, T - 30, T, 0], [middle.fingerprint, T - 20, undefined, 2], [newest.fingerprint, T - 10, undefined, 0],
        ]);
        expect(rows[1]!.usage).toEqual({ periodStart: T, periodUsed: 2, totalUsed: 2, lastUsed: T + 5, burstLog: [] });
      });

      it('counts a revoked key as a key', async () => {
        const store = await fresh();
        const only = await added(store, { quota: { kind: 'unlimited' } });
        await store.revoke(only.keyHash, T);
        expect(await store.hasKeys()).toBe(true);
      });
    });

    describe('revoke', () => {
      it('marks the key revoked at the whole second, keeps the first time, and answers false for an unknown key', async () => {
        const store = await fresh();
        const l = await added(store, { quota: { kind: 'daily', limit: 3 } });
        expect(await store.revoke(l.keyHash, T + 0.75)).toBe(true);
        expect(await store.revoke(l.keyHash, T + 5)).toBe(true);
        expect((await store.findLicence(l.keyHash))!.revoked).toBe(T);
        expect((await store.record(l.keyHash))!.licence.revoked).toBe(T);
        expect(await store.revoke(hashKey('dddddddddddddddd'), T)).toBe(false);
      });

      it('refuses charges of a revoked key whatever licence the caller holds, changing nothing', async () => {
        const store = await fresh();
        const l = await added(store, { quota: { kind: 'daily', limit: 3 } });
        expect(await charge(store, l, T + 1, 'lookup')).toEqual([OK(1)]);
        await store.revoke(l.keyHash, T + 2);
        expect(await charge(store, l, T + 3, 'lookup', 'flex')).toEqual([UNKNOWN, UNKNOWN]);
        expect(await usage(store, l)).toEqual({ periodStart: T, periodUsed: 1, totalUsed: 1, lastUsed: T + 1, burstLog: [] });
      });
    });

    describe('resetUsage', () => {
      it('zeroes the counters and the burst log, refilling a block; false for an unknown key', async () => {
        const store = await fresh();
        const l = await added(store, { quota: { kind: 'block', limit: 2 }, burst: { size: 5, windowSec: 60 } });
        expect(await charge(store, l, T + 1, 'lookup', 'summarize', 'lookup')).toEqual([OK(1), OK(2), LIMITED]);
        expect(await store.resetUsage(l.keyHash)).toBe(true);
        expect(await usage(store, l)).toEqual(EMPTY);
        expect(await charge(store, l, T + 2, 'lookup')).toEqual([OK(1)]);
        expect(await usage(store, l)).toEqual({ periodStart: 0, periodUsed: 1, totalUsed: 1, lastUsed: T + 2, burstLog: [T + 2] });
        expect(await store.resetUsage(hashKey('dddddddddddddddd'))).toBe(false);
      });
    });

    describe('chargeBatch: quota kinds', () => {
      it('daily: N per UTC day, refilled at 00:00 UTC exactly', async () => {
        const store = await fresh();
        const l = await added(store, { quota: { kind: 'daily', limit: 2 } });
        expect(await charge(store, l, T + 100, 'lookup', 'flex', 'summarize')).toEqual([OK(1), OK(2), LIMITED]);
        expect(await charge(store, l, T + DAY - 0.001, 'flex')).toEqual([LIMITED]);
        expect(await charge(store, l, T + DAY, 'flex', 'lookup', 'lookup')).toEqual([OK(1), OK(2), LIMITED]);
        expect(await usage(store, l)).toEqual({ periodStart: T + DAY, periodUsed: 2, totalUsed: 4, lastUsed: T + DAY, burstLog: [] });
      });

      it('hourly: N per clock hour, refilled on the hour exactly', async () => {
        const store = await fresh();
        const l = await added(store, { quota: { kind: 'hourly', limit: 3 } });
        expect(await charge(store, l, T + 10, 'lookup', 'lookup', 'lookup', 'lookup')).toEqual([OK(1), OK(2), OK(3), LIMITED]);
        expect(await charge(store, l, T + HOUR - 0.001, 'lookup')).toEqual([LIMITED]);
        expect(await charge(store, l, T + HOUR + 0.5, 'flex')).toEqual([OK(1)]);
        expect(await usage(store, l)).toEqual({ periodStart: T + HOUR, periodUsed: 1, totalUsed: 4, lastUsed: T + HOUR, burstLog: [] });
      });

      it('block: N in all, never refilled by time', async () => {
        const store = await fresh();
        const l = await added(store, { quota: { kind: 'block', limit: 2 } });
        expect(await charge(store, l, T + 1, 'lookup', 'flex', 'lookup')).toEqual([OK(1), OK(2), LIMITED]);
        expect(await charge(store, l, T + 400 * DAY, 'flex')).toEqual([LIMITED]);
        expect(await usage(store, l)).toEqual({ periodStart: 0, periodUsed: 2, totalUsed: 2, lastUsed: T + 1, burstLog: [] });
      });

      it('unlimited: every request admitted and counted', async () => {
        const store = await fresh();
        const l = await added(store, { quota: { kind: 'unlimited' } });
        expect(await charge(store, l, T + 1, 'lookup', 'flex', 'summarize', 'lookup', 'flex')).toEqual([OK(1), OK(2), OK(3), OK(4), OK(5)]);
        expect(await charge(store, l, T + 2 * DAY, 'lookup')).toEqual([OK(6)]);
        expect(await usage(store, l)).toEqual({ periodStart: 0, periodUsed: 6, totalUsed: 6, lastUsed: T + 2 * DAY, burstLog: [] });
      });

      it('hands no quota back when the clock steps back over a period boundary', async () => {
        const store = await fresh();
        const l = await added(store, { quota: { kind: 'daily', limit: 2 } });
        expect(await charge(store, l, T + DAY + 5, 'lookup', 'lookup')).toEqual([OK(1), OK(2)]);
        expect(await charge(store, l, T + DAY - 5, 'lookup')).toEqual([LIMITED]);
        expect(await usage(store, l)).toMatchObject({ periodStart: T + DAY, periodUsed: 2, totalUsed: 2 });
      });

      it('refuses every kind from `expires` on, to the second, changing nothing', async () => {
        const store = await fresh();
        const quotas = [
          { kind: 'daily', limit: 5 }, { kind: 'hourly', limit: 5 }, { kind: 'block', limit: 5 }, { kind: 'unlimited' },
        ] as const;
        for (const quota of quotas) {
          const l = await added(store, { quota, expires: T + 50 });
          expect(await charge(store, l, T + 49.999, 'lookup'), quota.kind).toEqual([OK(1)]);
          expect(await charge(store, l, T + 50, 'lookup', 'flex'), quota.kind).toEqual([EXPIRED, EXPIRED]);
          expect(await usage(store, l), quota.kind).toMatchObject({ periodUsed: 1, totalUsed: 1, lastUsed: T + 49 });
        }
      });
    });

    describe('chargeBatch: burst quota', () => {
      it('is a sliding window of exactly burst_window seconds, and a burst refusal costs no primary quota', async () => {
        const store = await fresh();
        const l = await added(store, { quota: { kind: 'daily', limit: 100 }, burst: { size: 2, windowSec: 10 } });
        const at = async (dt: number): Promise<ChargeOutcome> => (await charge(store, l, T + dt, 'lookup'))[0]!;
        expect(await at(0.5)).toEqual(OK(1));
        expect(await at(1.25)).toEqual(OK(2));
        expect(await at(2)).toEqual(LIMITED);
        expect(await at(10.4)).toEqual(LIMITED);
        // The request at 0.5 leaves the window when 0.5 <= now - 10.
        expect(await at(10.5)).toEqual(OK(3));
        expect(await at(11)).toEqual(LIMITED);
        expect(await at(11.25)).toEqual(OK(4));
        expect(await usage(store, l)).toEqual({
          periodStart: T, periodUsed: 4, totalUsed: 4, lastUsed: T + 11, burstLog: [T + 10.5, T + 11.25],
        });
      });

      it('counts lookup and summarize, never flex, on quota and unlimited keys', async () => {
        const store = await fresh();
        for (const quota of [{ kind: 'daily', limit: 100 }, { kind: 'unlimited' }] as const) {
          const l = await added(store, { quota, burst: { size: 2, windowSec: 60 } });
          expect(await charge(store, l, T + 1, 'lookup', 'summarize', 'lookup', 'summarize'), quota.kind)
            .toEqual([OK(1), OK(2), LIMITED, LIMITED]);
          expect(await charge(store, l, T + 2, 'flex', 'flex', 'flex'), quota.kind).toEqual([OK(3), OK(4), OK(5)]);
          expect(await usage(store, l), quota.kind).toMatchObject({ periodUsed: 5, totalUsed: 5, burstLog: [T + 1, T + 1] });
        }
      });

      it('keeps the burst log between batches and between handles', async () => {
        const store = await fresh();
        const l = await added(store, { quota: { kind: 'unlimited' }, burst: { size: 2, windowSec: 10 } });
        expect(await charge(store, l, T + 1, 'lookup')).toEqual([OK(1)]);
        const other = await peer();
        expect(await charge(other, l, T + 2, 'lookup', 'lookup')).toEqual([OK(2), LIMITED]);
        expect(await charge(store, l, T + 3, 'summarize')).toEqual([LIMITED]);
        expect(await usage(other, l)).toMatchObject({ burstLog: [T + 1, T + 2] });
      });
    });

    describe('chargeBatch: batches', () => {
      it('decides in request order across keys, sharing one key\'s counters among copies of its licence', async () => {
        const store = await fresh();
        const a = await added(store, { quota: { kind: 'block', limit: 3 } });
        const b = await added(store, { quota: { kind: 'daily', limit: 2 } });
        // A second copy of a's licence (a cache reload mid-batch) must count against the same counters.
        const aCopy = (await store.findLicence(a.keyHash))!;
        expect(aCopy).not.toBe(a);
        const unknown = { ...a, keyHash: hashKey('eeeeeeeeeeeeeeee') };
        const reqs: ChargeRequest[] = [
          { licence: a, endpoint: 'lookup' }, { licence: b, endpoint: 'flex' }, { licence: aCopy, endpoint: 'flex' },
          { licence: unknown, endpoint: 'flex' }, { licence: b, endpoint: 'lookup' }, { licence: a, endpoint: 'summarize' },
          { licence: b, endpoint: 'lookup' }, { licence: aCopy, endpoint: 'lookup' },
        ];
        expect(await store.chargeBatch(reqs, T + 7)).toEqual([OK(1), OK(1), OK(2), UNKNOWN, OK(2), OK(3), LIMITED, LIMITED]);
        expect(await usage(store, a)).toEqual({ periodStart: 0, periodUsed: 3, totalUsed: 3, lastUsed: T + 7, burstLog: [] });
        expect(await usage(store, b)).toEqual({ periodStart: T, periodUsed: 2, totalUsed: 2, lastUsed: T + 7, burstLog: [] });
        expect(await store.findLicence(unknown.keyHash)).toBeUndefined();
      });

      it('answers an empty batch with no outcomes', async () => {
        const store = await fresh();
        expect(await store.chargeBatch([], T)).toEqual([]);
      });

      it('has committed a batch when it answers: another handle sees it, and handles taking turns stay exact', async () => {
        const store = await fresh();
        const l = await added(store, { quota: { kind: 'block', limit: 10 } });
        const other = await peer();
        const outcomes: ChargeOutcome[] = [];
        for (let i = 0; i < 5; i++) {
          outcomes.push(...(await charge(i % 2 === 0 ? store : other, l, T + i, 'lookup', 'flex', 'lookup')));
          expect((await usage(i % 2 === 0 ? other : store, l)).periodUsed).toBe(Math.min(10, 3 * (i + 1)));
        }
        expect(outcomes).toEqual([...Array.from({ length: 10 }, (_, i) => OK(i + 1)), ...Array.from({ length: 5 }, () => LIMITED)]);
      });

      it('never admits more than the quota when handles charge at once', async () => {
        const store = await fresh();
        const l = await added(store, { quota: { kind: 'block', limit: 50 } });
        const others = [await peer(), await peer()];
        const twenty = Array.from({ length: 20 }, () => 'lookup' as const);
        const batches = await Promise.all([store, ...others, store].map((h) => charge(h, l, T + 1, ...twenty)));
        const granted = batches.flat().filter((o) => o.ok) as Array<{ ok: true; periodUsed: number }>;
        expect(granted.length).toBe(50);
        // Every grant saw its own place in the block.
        expect(granted.map((o) => o.periodUsed).sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
        expect(await usage(store, l)).toMatchObject({ periodUsed: 50, totalUsed: 50 });
      });
    });

    describe('refundCharge', () => {
      it('hands back one charge: its period\'s count, total_used and its burst entry; last_used stays', async () => {
        const store = await fresh();
        const l = await added(store, { quota: { kind: 'daily', limit: 2 }, burst: { size: 2, windowSec: 60 } });
        expect(await charge(store, l, T + 10, 'lookup', 'lookup')).toEqual([OK(1), OK(2)]);
        await store.refundCharge(l, 'lookup', T + 10);
        expect(await usage(store, l)).toEqual({ periodStart: T, periodUsed: 1, totalUsed: 1, lastUsed: T + 10, burstLog: [T + 10] });
        expect(await charge(store, l, T + 11, 'lookup', 'lookup')).toEqual([OK(2), LIMITED]);
      });

      it('refills a block by one, and leaves the burst log alone for flex', async () => {
        const store = await fresh();
        const l = await added(store, { quota: { kind: 'block', limit: 1 }, burst: { size: 1, windowSec: 60 } });
        expect(await charge(store, l, T + 1, 'lookup', 'flex')).toEqual([OK(1), LIMITED]);
        await store.refundCharge(l, 'flex', T + 1);
        expect(await usage(store, l)).toEqual({ periodStart: 0, periodUsed: 0, totalUsed: 0, lastUsed: T + 1, burstLog: [T + 1] });
        expect(await charge(store, l, T + 2, 'flex', 'flex')).toEqual([OK(1), LIMITED]);
      });

      it('hands back nothing of a period that has ended but total_used, and skips an unknown key', async () => {
        const store = await fresh();
        const l = await added(store, { quota: { kind: 'daily', limit: 2 } });
        expect(await charge(store, l, T + 10, 'flex')).toEqual([OK(1)]);
        expect(await charge(store, l, T + DAY + 1, 'flex')).toEqual([OK(1)]);
        await store.refundCharge(l, 'flex', T + 10);
        expect(await usage(store, l)).toMatchObject({ periodStart: T + DAY, periodUsed: 1, totalUsed: 1 });
        await store.refundCharge({ ...l, keyHash: hashKey('eeeeeeeeeeeeeeee') }, 'flex', T + DAY + 1);
        expect(await usage(store, l)).toMatchObject({ periodStart: T + DAY, periodUsed: 1, totalUsed: 1 });
      });
    });

    describe('addUnmeteredUsage', () => {
      it('adds to total_used only, never moves last_used back, and skips unknown keys', async () => {
        const store = await fresh();
        const a = await added(store, { quota: { kind: 'unlimited' } });
        const b = await added(store, { quota: { kind: 'daily', limit: 10 } });
        expect(await charge(store, b, T + 3, 'lookup')).toEqual([OK(1)]);
        await store.addUnmeteredUsage(new Map([
          [a.keyHash.toString('hex'), 5], [b.keyHash.toString('hex'), 2], [hashKey('cccccccccccccccc').toString('hex'), 9],
        ]), T + 10.9);
        await store.addUnmeteredUsage(new Map([[a.keyHash.toString('hex'), 1]]), T - 100);
        await store.addUnmeteredUsage(new Map(), T + 500);
        expect(await usage(store, a)).toEqual({ periodStart: 0, periodUsed: 0, totalUsed: 6, lastUsed: T + 10, burstLog: [] });
        expect(await usage(store, b)).toEqual({ periodStart: T, periodUsed: 1, totalUsed: 3, lastUsed: T + 10, burstLog: [] });
        expect(await store.findLicence(hashKey('cccccccccccccccc'))).toBeUndefined();
      });
    });

    describe('close', () => {
      it('may be called twice', async () => {
        const store = await fresh();
        store.close();
        expect(() => store.close()).not.toThrow();
      });
    });
  });
}
