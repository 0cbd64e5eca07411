// RedisKeyStore: the KeyStore contract against a private redis-server (each
// test starts from an empty database), then what only Redis has: the key
// layout other tools may read, and charges that survive a restart.

import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fingerprintOf, hashKey } from '../../../src/auth/key-material.js';
import { licenceFromOptions } from '../../../src/auth/licence.js';
import { RedisKeyStore } from '../../../src/auth/stores/redis-key-store.js';
import { HAVE_REDIS, REDIS_SKIP_REASON, startRedis, type RedisServer } from '../../helpers/redis-server.js';
import { describeKeyStoreContract } from './key-store-contract.js';

if (!HAVE_REDIS) console.warn(`redis-key-store.test.ts: ${REDIS_SKIP_REASON}`);

const T = 1_704_067_200;

describe.skipIf(!HAVE_REDIS)('RedisKeyStore', () => {
  let redis: RedisServer;

  beforeAll(async () => {
    redis = await startRedis();
  });

  afterAll(async () => {
    await redis?.close();
  });

  const flush = (): Promise<void> => redis.flush();

  describeKeyStoreContract('RedisKeyStore', async () => {
    await flush();
    return { store: RedisKeyStore.open(redis.url), openPeer: () => RedisKeyStore.open(redis.url), dispose: flush };
  });

  describe('Redis only', () => {
    it('keeps a key under its hash, never the key, with the fields the module comment names', async () => {
      await flush();
      const keyHash = hashKey('0123456789abcdef0123');
      const store = RedisKeyStore.open(redis.url);
      const admin = new Redis(redis.url);
      try {
        await store.insert(licenceFromOptions({ quota: { kind: 'daily', limit: 5 }, burst: { size: 2, windowSec: 10 } },
          keyHash, fingerprintOf(keyHash), T));
        expect(await store.chargeBatch([{ licence: (await store.findLicence(keyHash))!, endpoint: 'lookup' }], T + 0.125))
          .toEqual([{ ok: true, periodUsed: 1 }]);
        expect((await admin.keys('*')).sort()).toEqual([`rrscan:key:${keyHash.toString('hex')}`, 'rrscan:keys']);
        expect(await admin.smembers('rrscan:keys')).toEqual([keyHash.toString('hex')]);
        expect(await admin.hgetall(`rrscan:key:${keyHash.toString('hex')}`)).toEqual({
          fingerprint: fingerprintOf(keyHash), created: String(T), quota_kind: 'daily', quota_limit: '5', results_max: '10000',
          offset_max: '100000', burst_size: '2', burst_window: '10', private: '0', allow_cidrs: '[]', v2: '1',
          period_start: String(T), period_used: '1', total_used: '1', last_used: String(T), burst_log: `${T + 0.125}`,
        });
      } finally {
        store.close();
        admin.disconnect();
      }
    });

    it('keeps committed charges across a restart of redis-server (appendfsync always), exactly', async () => {
      await flush();
      const keyHash = hashKey('fedcba9876543210fedc');
      const licence = licenceFromOptions({ quota: { kind: 'block', limit: 3 } }, keyHash, fingerprintOf(keyHash), T);
      const store = RedisKeyStore.open(redis.url);
      try {
        await store.insert(licence);
        expect(await store.chargeBatch([{ licence, endpoint: 'flex' }, { licence, endpoint: 'lookup' }], T + 1))
          .toEqual([{ ok: true, periodUsed: 1 }, { ok: true, periodUsed: 2 }]);
      } finally {
        store.close();
      }
      await redis.stop(true);
      await redis.start();
      const again = RedisKeyStore.open(redis.url);
      try {
        expect((await again.record(keyHash))!.usage)
          .toEqual({ periodStart: 0, periodUsed: 2, totalUsed: 2, lastUsed: T + 1, burstLog: [] });
        expect(await again.chargeBatch([{ licence, endpoint: 'flex' }, { licence, endpoint: 'flex' }], T + 2))
          .toEqual([{ ok: true, periodUsed: 3 }, { ok: false, code: 'RATE_LIMITED' }]);
      } finally {
        again.close();
      }
    });
  });
});
