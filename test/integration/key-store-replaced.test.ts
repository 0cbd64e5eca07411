// A key store replaced, deleted or restored under a running server (issue
// 21): before, a server kept answering from the file it had opened (revoked
// keys kept working, new keys got 403, nothing was logged), and a restarted
// one read the new file through the old one's -wal. Now each server notices
// within LIMITS.keyStoreCheckMs, reopens the file at the path (with its own
// -wal), or fails closed with 503 and an error line while there is none, and
// serves again once it is back. With --processes 2 both members follow and
// every charge lands in the new file. A Redis-backed server never reads
// keys.sqlite, so nothing done to it matters there. Real servers, real
// `rrscan keys add`, real mv.

import Database from 'better-sqlite3';
import { renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/config/limits.js';
import { FLEX_FIXTURE } from '../fixtures/flex-dataset.js';
import { HAVE_REDIS, REDIS_SKIP_REASON, startRedis, type RedisServer } from '../helpers/redis-server.js';
import { addKey, cliOk, get, ingestNdjson, logLines, removeDir, startServer, tempDir, type Server } from '../helpers/rrscan.js';

if (!HAVE_REDIS) console.warn(`key-store-replaced.test.ts: the Redis case skips: ${REDIS_SKIP_REASON}`);

const LOOKUP = '/pdns/v2/lookup/rrset/name/paypal.com';
const BAD_KEY = 'Error: Bad API key\n';
const OVERLOADED = 'Error: Server is overloaded, try again later\n';
/** Noticing takes one check at most; the rest is slack for a loaded two-core machine. */
const BOUND_MS = LIMITS.keyStoreCheckMs + 1_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Asks with `key` until the answer's status is `status`; answers how long that took. Fails past BOUND_MS. */
async function untilStatus(server: Server, key: string, status: number, what = LOOKUP): Promise<number> {
  const start = Date.now();
  for (;;) {
    const r = await get(server, what, { 'X-API-Key': key });
    if (r.status === status) return Date.now() - start;
    if (Date.now() - start > BOUND_MS) throw new Error(`still ${r.status} ${JSON.stringify(r.body)} after ${BOUND_MS} ms, waiting for ${status}`);
    await sleep(10);
  }
}

/** The service log's lines with this message. */
const logged = (server: Server, msg: string): Record<string, unknown>[] => logLines(server).filter((l) => l['msg'] === msg);

/** The lines with this message once there are `count` of them: the log is written asynchronously, after the answers it explains. */
async function untilLogged(server: Server, msg: string, count = 1): Promise<Record<string, unknown>[]> {
  const start = Date.now();
  while (logged(server, msg).length < count) {
    if (Date.now() - start > BOUND_MS) throw new Error(`${logged(server, msg).length} log lines ${JSON.stringify(msg)}, waited for ${count}`);
    await sleep(10);
  }
  return logged(server, msg);
}

/** `rrscan keys add --data OTHER ...` in a directory of its own, moved over DIR/keys.sqlite: the operator's replacement. */
function replaceStore(dir: string, flags: string[]): string {
  const other = tempDir();
  try {
    const key = addKey(other, flags);
    renameSync(path.join(other, 'keys.sqlite'), path.join(dir, 'keys.sqlite'));
    return key;
  } finally {
    removeDir(other);
  }
}

async function remaining(server: Server, key: string): Promise<unknown> {
  const r = await get(server, '/pdns/v2/rate_limit', { 'X-API-Key': key });
  return (JSON.parse(r.body) as { rate: Record<string, unknown> }).rate['remaining'];
}

describe('keys.sqlite replaced, deleted and restored under one server', () => {
  let dir: string;
  let file: string;
  let server: Server;
  let oldKey: string;
  let newKey: string;

  beforeAll(async () => {
    dir = tempDir();
    file = path.join(dir, 'keys.sqlite');
    ingestNdjson(dir, FLEX_FIXTURE);
    oldKey = addKey(dir, ['--unlimited']);
    server = await startServer(dir);
  });

  afterAll(async () => {
    await server?.close();
    removeDir(dir);
  });

  it('replaced: a key only in the new store works within the bound, a key only in the old one gets 403, and it is logged', async () => {
    expect((await get(server, LOOKUP, { 'X-API-Key': oldKey })).status).toBe(200);
    newKey = replaceStore(dir, ['--block', '5']);
    expect(await untilStatus(server, newKey, 200)).toBeLessThan(BOUND_MS);
    const old = await get(server, LOOKUP, { 'X-API-Key': oldKey });
    expect([old.status, old.body]).toEqual([403, BAD_KEY]);
    expect(await remaining(server, newKey)).toBe(4);
    const lines = await untilLogged(server,
      `${file} was replaced under the running server (another file at its path); reopened: its keys are served from now on`);
    expect(lines.map((l) => l['level'])).toEqual([40]);
  });

  it('deleted: data requests and rate_limit get 503 (one error line), ping still answers', async () => {
    // The operator's backup, taken as SQLite wants it (the -wal included), before the delete.
    const backup = path.join(dir, '..', `${path.basename(dir)}-backup.sqlite`);
    const db = new Database(file, { readonly: true });
    await db.backup(backup);
    db.close();
    rmSync(file);
    expect(await untilStatus(server, newKey, 503)).toBeLessThan(BOUND_MS);
    const refused = await get(server, LOOKUP, { 'X-API-Key': newKey });
    expect([refused.status, refused.headers['content-type'], refused.body]).toEqual([503, 'text/plain; charset=utf-8', OVERLOADED]);
    const rate = await get(server, '/pdns/v2/rate_limit', { 'X-API-Key': newKey });
    expect([rate.status, rate.body]).toEqual([503, OVERLOADED]);
    expect((await get(server, '/pdns/v2/ping')).body).toBe('{"ping":"ok"}\n');
    // Several checks later: still one line, not one per check or per request.
    await sleep(LIMITS.keyStoreCheckMs * 1.5);
    const deleted = `${file} was deleted under the running server; data requests get 503 until it is restored ` +
      '(or `rrscan keys add` creates a new store)';
    expect(logged(server, deleted).map((l) => l['level'])).toEqual([50]);

    // Restored: served again, its usage kept (one request before the delete, and this one).
    renameSync(backup, file);
    expect(await untilStatus(server, newKey, 200)).toBeLessThan(BOUND_MS);
    expect(await remaining(server, newKey)).toBe(3);
    expect((await untilLogged(server, `${file} can be read again (${deleted}); serving its keys`)).map((l) => l['level'])).toEqual([40]);
    const old = await get(server, LOOKUP, { 'X-API-Key': oldKey });
    expect(old.status).toBe(403);
  });
});

describe('keys.sqlite replaced under serve --processes 2', () => {
  let dir: string;
  let group: Server;

  beforeAll(async () => {
    dir = tempDir();
    ingestNdjson(dir, FLEX_FIXTURE);
    group = await startServer(dir, ['--processes', '2', '--workers', '1'], { RRSCAN_LOG_LEVEL: 'info' });
  });

  afterAll(async () => {
    await group?.close();
    removeDir(dir);
  });

  it('both members reopen it, and every charge they make lands in the new file', async () => {
    const oldKey = addKey(dir, ['--unlimited']);
    expect((await get(group, LOOKUP, { 'X-API-Key': oldKey })).status).toBe(200);
    const newKey = replaceStore(dir, ['--block', '1000']);
    let served = 0;
    const start = Date.now();
    // Forty answers in a row on new connections, spread over both members by the kernel: both have reopened.
    for (let streak = 0; streak < 40;) {
      expect(Date.now() - start, 'both members serve the new store within the bound').toBeLessThan(BOUND_MS);
      const r = await get(group, LOOKUP, { 'X-API-Key': newKey });
      if (r.status === 200) {
        served++;
        streak++;
      } else {
        expect([r.status, r.body]).toEqual([403, BAD_KEY]);
        streak = 0;
      }
    }
    const more = await Promise.all(Array.from({ length: 60 }, () => get(group, LOOKUP, { 'X-API-Key': newKey })));
    expect(more.map((r) => r.status)).toEqual(Array(60).fill(200));
    served += 60;
    const olds = await Promise.all(Array.from({ length: 40 }, () => get(group, LOOKUP, { 'X-API-Key': oldKey })));
    expect(new Set(olds.map((r) => `${r.status} ${r.body}`))).toEqual(new Set([`403 ${BAD_KEY}`]));
    const file = path.join(dir, 'keys.sqlite');
    const reopened = await untilLogged(group,
      `${file} was replaced under the running server (another file at its path); reopened: its keys are served from now on`, 2);
    expect(reopened.map((l) => l['member']).sort()).toEqual([0, 1]);
    // A process of its own reads the file: every charge either member made is there, once.
    const shown = cliOk(['keys', 'show', '--data', dir, newKey]);
    expect(shown).toContain(`\ntotal_used: ${served}\n`);
  });
});

describe.skipIf(!HAVE_REDIS)('a Redis-backed server and keys.sqlite', () => {
  let redis: RedisServer;
  let dir: string;
  let server: Server;

  beforeAll(async () => {
    redis = await startRedis();
    dir = tempDir();
    ingestNdjson(dir, FLEX_FIXTURE);
    addKey(dir, ['--unlimited']);
    server = await startServer(dir, ['--redis-url', redis.url]);
  });

  afterAll(async () => {
    await server?.close();
    await redis?.close();
    removeDir(dir);
  });

  it('is unaffected: replacing or deleting the data directory\'s keys.sqlite changes nothing it answers or logs', async () => {
    const key = addKey(dir, ['--redis-url', redis.url, '--block', '100']);
    expect((await get(server, LOOKUP, { 'X-API-Key': key })).status).toBe(200);
    const sqliteOnly = replaceStore(dir, ['--unlimited']);
    await sleep(LIMITS.keyStoreCheckMs * 1.5);
    expect((await get(server, LOOKUP, { 'X-API-Key': key })).status).toBe(200);
    expect((await get(server, LOOKUP, { 'X-API-Key': sqliteOnly })).status).toBe(403);
    rmSync(path.join(dir, 'keys.sqlite'));
    await sleep(LIMITS.keyStoreCheckMs * 1.5);
    expect((await get(server, LOOKUP, { 'X-API-Key': key })).status).toBe(200);
    expect(await remaining(server, key)).toBe(97);
    expect(server.stderr()).not.toContain('keys.sqlite');
  });
});
