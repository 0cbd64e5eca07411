// Keys and licences over HTTP (issue 5): statuses, texts, headers, rate_limit;
// every case against both key stores (issue 13): the data directory's SQLite
// store and Redis, with keys added by `rrscan keys --redis-url`.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEX_FIXTURE } from '../fixtures/flex-dataset.js';
import { describeEachKeyStore } from '../helpers/redis-server.js';
import { addKey as addKeyTo, get, ingestNdjson, removeDir, startServer, tempDir, type Server } from '../helpers/rrscan.js';

const flex = '/pdns/v2/regex/rrnames/paypal%5C.com%5C.$';
const lookup = '/pdns/v2/lookup/rrset/name/paypal.com';

describeEachKeyStore('keys over HTTP', (store) => {
  let dir: string;
  let server: Server;
  beforeAll(async () => {
    dir = tempDir();
    ingestNdjson(dir, FLEX_FIXTURE);
    server = await startServer(dir, store.flags());
  });
  afterAll(async () => {
    await server?.close();
    removeDir(dir);
  });

  /** Adds a key to the store under test, as an operator would for this server. */
  function addKey(dataDir: string, flags: string[] = ['--unlimited']): string {
    return addKeyTo(dataDir, [...store.flags(), ...flags]);
  }

  describe('licences', () => {
    it('a daily quota answers 429 once used up, with X-RateLimit headers on data responses; rate_limit never counts', async () => {
      const key = addKey(dir, ['--daily', '2']);
      const a = await get(server, flex, { 'X-API-Key': key });
      expect(a.status).toBe(200);
      expect(a.headers['x-ratelimit-limit']).toBe('2');
      expect(a.headers['x-ratelimit-remaining']).toBe('1');
      expect(Number(a.headers['x-ratelimit-reset']) % 86400).toBe(0);
      const rl = await get(server, '/pdns/v2/rate_limit', { 'X-API-Key': key });
      expect(rl.status).toBe(200);
      const body = JSON.parse(rl.body) as { rate: Record<string, unknown> };
      expect(body.rate).toMatchObject({ limit: 2, remaining: 1, results_max: 10000 });
      expect((await get(server, lookup, { 'X-API-Key': key })).status).toBe(200);
      const c = await get(server, lookup, { 'X-API-Key': key });
      expect(c.status).toBe(429);
      expect(c.body).toBe('Error: Rate limit exceeded\n');
      expect(c.headers['content-type']).toBe('text/plain; charset=utf-8');
    });

    it('an unlimited key\'s answers carry the same headers every time (written in one piece from the second on: saf-writer.ts)', async () => {
      const key = addKey(dir);
      for (let i = 0; i < 4; i++) {
        const r = await get(server, i % 2 === 0 ? lookup : flex, { 'X-API-Key': key });
        expect(r.status).toBe(200);
        expect([r.headers['content-type'], r.headers['x-ratelimit-limit'], r.headers['x-ratelimit-remaining'],
          r.headers['x-ratelimit-reset'], r.headers['x-ratelimit-expires']])
          .toEqual(['application/x-ndjson', 'unlimited', 'n/a', 'n/a', 'n/a']);
      }
    });

    it('an expired licence answers 401 Quota is expired; a key without v2 answers 401', async () => {
      const expired = addKey(dir, ['--block', '10', '--expires', '1000000000']);
      const r = await get(server, flex, { 'X-API-Key': expired });
      expect(r.status).toBe(401);
      expect(r.body).toBe('Error: Quota is expired\n');
      const nov2 = addKey(dir, ['--unlimited', '--no-v2']);
      expect((await get(server, flex, { 'X-API-Key': nov2 })).status).toBe(401);
    });

    it('a client address outside the allow list answers 403', async () => {
      const key = addKey(dir, ['--unlimited', '--allow-cidr', '192.0.2.0/24']);
      const r = await get(server, flex, { 'X-API-Key': key });
      expect(r.status).toBe(403);
      expect(r.body).toBe('Error: Bad API key\n');
      const ok = addKey(dir, ['--unlimited', '--allow-cidr', '127.0.0.0/8']);
      expect((await get(server, flex, { 'X-API-Key': ok })).status).toBe(200);
    });

    it('burst limits apply to lookups, never to flexible search', async () => {
      const key = addKey(dir, ['--unlimited', '--burst', '2', '--burst-window', '3600']);
      for (let i = 0; i < 4; i++) expect((await get(server, flex, { 'X-API-Key': key })).status).toBe(200);
      expect((await get(server, lookup, { 'X-API-Key': key })).status).toBe(200);
      expect((await get(server, lookup, { 'X-API-Key': key })).status).toBe(200);
      expect((await get(server, lookup, { 'X-API-Key': key })).status).toBe(429);
    });

    it('the trial licence (--hourly 12) caps results at 12 and refuses offsets', async () => {
      const key = addKey(dir, ['--hourly', '12']);
      const rl = JSON.parse((await get(server, '/pdns/v2/rate_limit', { 'X-API-Key': key })).body) as { rate: Record<string, unknown> };
      expect(rl.rate['results_max']).toBe(12);
      expect(rl.rate).not.toHaveProperty('offset_max');
      const off = await get(server, `${flex}?offset=1`, { 'X-API-Key': key });
      expect(off.status).toBe(416);
      // The licence refused it before any charge: the hour's quota is untouched.
      const after = JSON.parse((await get(server, '/pdns/v2/rate_limit', { 'X-API-Key': key })).body) as { rate: Record<string, unknown> };
      expect([after.rate['limit'], after.rate['remaining']]).toEqual([12, 12]);
    });
  });

  describe('client hang-ups', () => {
    it('a client that disconnects mid-stream does not disturb the server', async () => {
      const key = addKey(dir);
      for (let i = 0; i < 20; i++) {
        await new Promise<void>((resolve) => {
          const req = http.get(
            { host: '127.0.0.1', port: server.port, path: '/pdns/v2/regex/rrnames/.?limit=0', headers: { 'X-API-Key': key } },
            (res) => { res.once('data', () => { req.destroy(); resolve(); }); });
          req.on('error', () => resolve());
        });
      }
      const r = await get(server, flex, { 'X-API-Key': key });
      expect(r.status).toBe(200);
      expect(server.proc.exitCode).toBe(null);
    });
  });
});
