// Upgrades keep data (issue 21): every fixture in test/fixtures/upgrade/ is
// a data directory an earlier build wrote (shards, a manifest with its input
// ledger, keys.sqlite), the same keys in that build's Redis layout, and what
// that build answered on them (generate.ts, README.md there). This build is
// started on a copy of each and must answer exactly as that build did: the
// lookups and flexible searches, every key's rate_limit with the usage it
// had, `rrscan keys list`, a charge continuing from the usage kept, and the
// ledger still knowing the files it was made from. The same keys are then
// loaded into a Redis and served from there. A file this build can no
// longer read fails here, naming the fixture and the release that wrote it.

import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_STORE_SCHEMA_VERSION } from '../../src/auth/stores/key-store-schema.js';
import { HAVE_REDIS, REDIS_SKIP_REASON, startRedis, type RedisServer } from '../helpers/redis-server.js';
import { cli, cliOk, get, logLines, REPO, removeDir, startServer, tempDir, type Server } from '../helpers/rrscan.js';

const UPGRADE = path.join(REPO, 'test', 'fixtures', 'upgrade');

interface Fixture {
  commit: string;
  versions: { shardFormat: number; manifest: number; keyStoreSchema: number };
  ingested: Array<{ file: string; flags: string[] }>;
  keys: Record<string, { key: string; quota: 'daily' | 'hourly' | 'block' | 'unlimited' }>;
}

interface Expected {
  rateLimit: Record<string, { status: number; body: string }>;
  keysList: string;
  keysShowBlock: string;
  answers: Array<{ role: string; path: string; status: number; body: string }>;
}

const FIXTURES = readdirSync(UPGRADE).filter((d) => existsSync(path.join(UPGRADE, d, 'fixture.json'))).sort();

const PERIOD_SEC = { daily: 86_400, hourly: 3_600 } as const;

/**
 * The rate_limit body the fixture's release gave, with `reset` (the next
 * period boundary: a time quota's only answer that moves with the clock)
 * as it is now; either side of a boundary the request may have crossed.
 */
function rateLimitNow(golden: string, quota: string, before: number, after: number): string[] {
  const body = JSON.parse(golden) as { rate: Record<string, unknown> };
  if (quota !== 'daily' && quota !== 'hourly') return [golden];
  const period = PERIOD_SEC[quota];
  return [before, after].map((t) => JSON.stringify({ rate: { ...body.rate, reset: (Math.floor(t / period) + 1) * period } }) + '\n');
}

const nowSec = (): number => Date.now() / 1000;

for (const name of FIXTURES) {
  const dir = path.join(UPGRADE, name);
  const fixture = JSON.parse(readFileSync(path.join(dir, 'fixture.json'), 'utf8')) as Fixture;
  const expected = JSON.parse(readFileSync(path.join(dir, 'expected.json'), 'utf8')) as Expected;
  const keyOf = (role: string): string => fixture.keys[role]!.key;
  const written = `written at ${fixture.commit.slice(0, 12)} (shard format ${fixture.versions.shardFormat}, manifest ` +
    `${fixture.versions.manifest}, key store schema ${fixture.versions.keyStoreSchema})`;

  /** Every key's rate_limit now equals the fixture's release's answer: licences and usage kept. */
  async function expectRateLimits(server: Server): Promise<void> {
    for (const [role, { quota, key }] of Object.entries(fixture.keys)) {
      const golden = expected.rateLimit[role]!;
      const before = nowSec();
      const r = await get(server, '/pdns/v2/rate_limit', { 'X-API-Key': key });
      const bodies = golden.status === 200 ? rateLimitNow(golden.body, quota, before, nowSec()) : [golden.body];
      expect(r.status, `${role}: rate_limit status`).toBe(golden.status);
      expect(bodies, `${role}: rate_limit body ${r.body}`).toContain(r.body);
    }
  }

  /** Every request of the fixture answers byte for byte as the release that wrote it answered. */
  async function expectAnswers(server: Server): Promise<void> {
    for (const a of expected.answers) {
      const r = await get(server, a.path, { 'X-API-Key': keyOf(a.role) });
      expect({ status: r.status, body: r.body }, `${a.role} ${a.path}`).toEqual({ status: a.status, body: a.body });
    }
  }

  describe(`upgrade from ${name}, ${written}`, () => {
    let data: string;
    let server: Server;

    beforeAll(async () => {
      data = path.join(tempDir(), 'data');
      cpSync(path.join(dir, 'data'), data, { recursive: true });
      server = await startServer(data, [], { RRSCAN_LOG_LEVEL: 'info' });
    });

    afterAll(async () => {
      await server?.close();
      if (data) removeDir(path.dirname(data));
    });

    it('keeps every key: licences and usage, in rate_limit, `keys list` and `keys show`', async () => {
      await expectRateLimits(server);
      expect(cliOk(['keys', 'list', '--data', data])).toBe(expected.keysList);
      expect(cliOk(['keys', 'show', '--data', data, keyOf('block')])).toBe(expected.keysShowBlock);
      // The key store migrated on open exactly when its schema is older than this build's, and said so.
      const migrated = logLines(server).filter((l) => String(l['msg']).endsWith(
        `: key store schema migrated from version ${fixture.versions.keyStoreSchema} to ${KEY_STORE_SCHEMA_VERSION}`));
      expect(migrated.length).toBe(fixture.versions.keyStoreSchema < KEY_STORE_SCHEMA_VERSION ? 1 : 0);
    });

    it('answers every lookup and flexible search as the release that wrote the shards did', async () => {
      await expectAnswers(server);
    });

    it('charges continue from the usage kept', async () => {
      const before = JSON.parse(expected.rateLimit['block']!.body) as { rate: { remaining: number } };
      // The answers above charged the block key once.
      const r = await get(server, '/pdns/v2/lookup/rrset/name/www.paypal.com', { 'X-API-Key': keyOf('block') });
      expect(r.status).toBe(200);
      expect(r.headers['x-ratelimit-remaining']).toBe(String(before.rate.remaining - 2));
    });

    it('the manifest\'s input ledger still knows every file the shards were made from', () => {
      const manifest = JSON.parse(readFileSync(path.join(data, 'manifest.json'), 'utf8')) as {
        generation: number; shards: Array<{ file: string; inputs?: Array<{ sha256: string }> }>;
      };
      for (const { file, flags } of fixture.ingested) {
        const input = path.join(dir, file);
        const sha256 = createHash('sha256').update(readFileSync(input)).digest('hex');
        const shard = manifest.shards.find((s) => s.inputs?.some((i) => i.sha256 === sha256));
        expect(shard, `${file} in the ledger`).toBeDefined();
        const r = cli(['ingest', '--data', data, ...flags, input]);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toBe(`rrscan ingest: ${input}: already ingested (sha256 ${sha256.slice(0, 12)}…, shard ${shard!.file}); skipped\n`);
      }
      const after = JSON.parse(readFileSync(path.join(data, 'manifest.json'), 'utf8')) as { generation: number };
      expect(after.generation).toBe(manifest.generation);
    });
  });

  if (!HAVE_REDIS) console.warn(`upgrade.test.ts: ${name} in Redis skips: ${REDIS_SKIP_REASON}`);
  describe.skipIf(!HAVE_REDIS)(`upgrade from ${name}: its keys in Redis`, () => {
    let redis: RedisServer;
    let data: string;
    let server: Server;

    beforeAll(async () => {
      redis = await startRedis();
      const layout = JSON.parse(readFileSync(path.join(dir, 'redis-keys.json'), 'utf8')) as
        Record<string, Record<string, string> | string[]>;
      const admin = new Redis(redis.url);
      try {
        for (const [key, value] of Object.entries(layout)) {
          if (Array.isArray(value)) await admin.sadd(key, ...value);
          else await admin.hset(key, value);
        }
      } finally {
        admin.disconnect();
      }
      data = path.join(tempDir(), 'data');
      cpSync(path.join(dir, 'data'), data, { recursive: true });
      server = await startServer(data, ['--redis-url', redis.url]);
    });

    afterAll(async () => {
      await server?.close();
      await redis?.close();
      if (data) removeDir(path.dirname(data));
    });

    it('keeps every key and its usage, and answers as the release did', async () => {
      await expectRateLimits(server);
      expect(cliOk(['keys', 'list', '--redis-url', redis.url])).toBe(expected.keysList);
      await expectAnswers(server);
    });
  });
}
