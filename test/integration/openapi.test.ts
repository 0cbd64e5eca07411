// The OpenAPI document against the running server: served without a key,
// byte for byte the committed api/openapi.json, and describing every
// response a representative set of real requests gets (flexible search and
// lookups with their parameters, rate_limit, ping, and the error statuses a
// test can provoke). A response the document does not describe fails.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEX_FIXTURE, T2015, T2020 } from '../fixtures/flex-dataset.js';
import { OpenApiConformance } from '../helpers/openapi-conformance.js';
import {
  addKey, get, ingestNdjson, REPO, removeDir, stalledGet, startServer, tempDir, type Reply, type Server,
} from '../helpers/rrscan.js';

// 1,000 TXT RRsets of about 10 KB each: a 10 MB answer, far more than the
// socket buffers hold, so a client that does not read keeps its request in
// flight (the 503 of a key's --max-concurrent).
const BIG = Array.from({ length: 1000 }, (_, i) => ({
  count: 1, time_first: T2015, time_last: T2020, rrname: `n${i}.big.example.`, rrtype: 'TXT', bailiwick: 'big.example.',
  rdata: [Array(40).fill(`"${'x'.repeat(250)}"`).join(' ')],
}));

const KEYS = {
  plain: ['--unlimited', '--offset-max', '1000'],
  noOffset: ['--hourly', '100'],
  daily: ['--daily', '1000', '--offset-max', '10', '--burst', '50', '--burst-window', '60', '--expires', '4102444800'],
  block: ['--block', '1'],
  expired: ['--unlimited', '--expires', '1'],
  noV2: ['--unlimited', '--no-v2'],
  single: ['--unlimited', '--max-concurrent', '1'],
} as const;
type KeyName = keyof typeof KEYS;

const COMMITTED = readFileSync(path.join(REPO, 'api', 'openapi.json'), 'utf8');
let dir: string;
let server: Server;
let conformance: OpenApiConformance;
const keys = {} as Record<KeyName, string>;
/** Every (documented path, status) a real response was checked against. */
const covered = new Set<string>();

beforeAll(async () => {
  dir = tempDir();
  ingestNdjson(dir, [...FLEX_FIXTURE, ...BIG]);
  for (const k of Object.keys(KEYS) as KeyName[]) keys[k] = addKey(dir, [...KEYS[k]]);
  server = await startServer(dir);
  conformance = new OpenApiConformance(JSON.parse(COMMITTED) as object);
}, 60_000);

afterAll(async () => {
  await server?.close();
  if (dir) removeDir(dir);
});

/** GET `p` (as `key`, or with no key), asserts its status, and checks it against the document. */
async function conforms(p: string, status: number, key?: KeyName, headers: Record<string, string> = {}): Promise<Reply> {
  const r = await get(server, p, { ...(key ? { 'X-API-Key': keys[key] } : {}), ...headers });
  expect(r.status, `${p}: ${r.body.slice(0, 200)}`).toBe(status);
  const c = conformance.check(p, r);
  // A request the server accepted must be one the document allows.
  if (status === 200) conformance.checkRequest(p);
  covered.add(`${c.path} ${c.status}`);
  return r;
}

describe('GET .../openapi.json', () => {
  it('is served without a key, as the committed api/openapi.json, under every base path', async () => {
    for (const base of ['/pdns/v2', '/dnsdb/v2', '/pdns/v2/dnsdb/v2']) {
      const r = await get(server, `${base}/openapi.json`);
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.body).toBe(COMMITTED);
    }
    await conforms('/pdns/v2/openapi.json', 200);
  });
});

describe('responses the document describes', () => {
  it('flexible search: regex and glob, rrnames and rdata, with parameters', async () => {
    await conforms('/pdns/v2/regex/rrnames/paypal', 200, 'plain');
    expect((await conforms('/pdns/v2/regex/rrnames/paypal/A?limit=1', 200, 'plain')).body).toContain('"cond":"limited"');
    await conforms('/dnsdb/v2/glob/rrnames/*.paypal.com.', 200, 'plain');
    expect((await conforms('/pdns/v2/dnsdb/v2/regex/rdata/paypal-dns?exclude=ns2', 200, 'plain')).body).toContain('"raw_rdata"');
    await conforms(`/pdns/v2/glob/rdata/*paypal*/MX?time_first_after=${T2015 - 1}&time_last_before=${T2020 + 10 ** 9}`, 200, 'plain');
    await conforms('/pdns/v2/regex/rrnames/paypal/ANY-DNSSEC', 200, 'plain');
    await conforms('/pdns/v2/regex/rrnames/paypal?offset=1&limit=2&id=team:alice&swclient=dnsdbq&version=2.6.1', 200, 'plain');
    await conforms('/pdns/v2/regex/rrnames/paypal?time_last_after=-3600', 200, 'plain');
    expect((await conforms('/pdns/v2/regex/rrnames/no-such-name-zzz', 200, 'plain')).body).toContain('no results found');
  });

  it('a pattern that does not compile: 200, then failed naming the position (spec 6)', async () => {
    expect((await conforms('/pdns/v2/regex/rrnames/(', 200, 'plain')).body)
      .toBe('{"cond":"begin"}\n{"cond":"failed","msg":"invalid regular expression at position 0: missing ): ("}\n');
  });

  it('standard search: rrset and rdata by name, ip and raw, with parameters', async () => {
    await conforms('/pdns/v2/lookup/rrset/name/www.paypal.com', 200, 'plain');
    await conforms('/pdns/v2/lookup/rrset/name/*.paypal.com/A', 200, 'plain');
    expect((await conforms('/pdns/v2/lookup/rrset/name/paypal.com/ANY/com.', 200, 'plain')).body).toContain('"bailiwick":"com."');
    expect((await conforms('/pdns/v2/lookup/rrset/name/paypal.com?humantime=true', 200, 'plain')).body).toContain('Z"');
    await conforms('/pdns/v2/lookup/rrset/name/paypal.com?aggr=false&limit=2&offset=1&max_count=1', 200, 'plain');
    await conforms('/dnsdb/v2/lookup/rrset/raw/0670617970616C03636F6D00', 200, 'plain');
    await conforms('/pdns/v2/lookup/rdata/name/mx.paypal.com/MX', 200, 'plain');
    await conforms('/pdns/v2/lookup/rdata/ip/198.51.100.0,24', 200, 'plain');
    await conforms('/pdns/v2/lookup/rdata/ip/2001:db8::10/ANY', 200, 'plain');
    await conforms('/pdns/v2/lookup/rdata/raw/C000020A', 200, 'plain');
    await conforms('/pdns/v2/lookup/rrset/name/no-such.example', 200, 'plain');
    await conforms('/pdns/v2/summarize/rrset/name/paypal.com', 200, 'plain');
    await conforms('/pdns/v2/summarize/rdata/ip/198.51.100.0,24?max_count=1&humantime=t', 200, 'plain');
    await conforms('/pdns/v2/summarize/rrset/name/no-such.example', 200, 'plain');
    await conforms('/pdns/v2/lookup/rrset/name/paypal.com', 200, 'daily');
  });

  it('rate_limit for an unlimited and a daily key with a burst quota; ping without a key', async () => {
    expect(JSON.parse((await conforms('/pdns/v2/rate_limit', 200, 'plain')).body)).toMatchObject({ rate: { limit: 'unlimited' } });
    expect(JSON.parse((await conforms('/dnsdb/v2/rate_limit', 200, 'daily')).body)).toMatchObject({ rate: { burst_size: 50 } });
    await conforms('/pdns/v2/rate_limit', 200, 'expired');
    await conforms('/pdns/v2/ping', 200);
  });

  it('400: every kind of bad request the routes can get', async () => {
    for (const p of [
      '/pdns/v2/regex/rrnames/paypal?limit=abc', '/pdns/v2/regex/rrnames/paypal/NOTATYPE', '/pdns/v2/regex/rdata/paypal/DS',
      '/pdns/v2/regex/rdata/paypal/A', '/pdns/v2/regex/hostnames/paypal', '/pdns/v2/lookup/rrset/ip/192.0.2.1',
      '/pdns/v2/regex/rrnames/%ZZ', '/pdns/v2/regex/rrnames/paypal?aggr=true', '/pdns/v2/lookup/rrset/name/a.*.b',
      '/pdns/v2/lookup/rdata/ip/192.0.2.1/MX', '/pdns/v2/lookup/rrset/raw/0G', '/pdns/v2/regex/rrnames/paypal?id=nocolon',
    ]) await conforms(p, 400, 'plain');
  });

  it('401, 403, 404, 415, 416, 429', async () => {
    await conforms('/pdns/v2/regex/rrnames/paypal', 401, 'expired');
    await conforms('/pdns/v2/lookup/rrset/name/paypal.com', 401, 'noV2');
    await conforms('/pdns/v2/rate_limit', 401, 'noV2');
    await conforms('/pdns/v2/regex/rrnames/paypal', 403);
    await conforms('/pdns/v2/rate_limit', 403, undefined, { 'X-API-Key': '0123456789abcdef0123456789abcdef' });
    await conforms('/pdns/v2/nope', 404);
    await conforms('/pdns/v2/%ZZ', 400);
    await conforms('/dnsdb/v2/nope', 404, 'plain');
    await conforms('/pdns/v2/regex/rrnames/paypal', 415, 'plain', { Accept: 'text/html' });
    await conforms('/pdns/v2/lookup/rrset/name/paypal.com?offset=1', 416, 'noOffset');
    await conforms('/pdns/v2/regex/rrnames/paypal?offset=1001', 416, 'plain');
    await conforms('/pdns/v2/summarize/rrset/name/paypal.com?offset=1', 416, 'plain');
    await conforms('/pdns/v2/regex/rrnames/paypal', 200, 'block');
    await conforms('/pdns/v2/regex/rrnames/paypal', 429, 'block');
  });

  it('503: a key over its --max-concurrent', async () => {
    const held = await stalledGet(server.port, '/pdns/v2/lookup/rrset/name/*.big.example', keys.single);
    try {
      await conforms('/pdns/v2/regex/rrnames/paypal', 503, 'single');
      await conforms('/pdns/v2/lookup/rdata/ip/198.51.100.7', 503, 'single');
    } finally {
      held.destroy();
    }
  });

  it('500 before the stream, and a stream the server fails', async () => {
    const faulty = await startServer(dir, ['--workers', '1'], { RRSCAN_FAULTS: 'keystore-licence:times=1,scan-throw:times=1' });
    try {
      const ask = (p: string) => get(faulty, p, { 'X-API-Key': keys.plain });
      const p = '/pdns/v2/regex/rrnames/paypal';
      const page = await ask(p);
      expect(page.status).toBe(500);
      covered.add(`${conformance.check(p, page).path} 500`);
      const failed = await ask(p);
      expect(failed.status).toBe(200);
      expect(failed.body).toContain('{"cond":"failed","msg":"Internal error"}\n');
      conformance.check(p, failed);
    } finally {
      await faulty.close();
    }
  });

  it('covered every status the document gives a search, and both kinds of search', () => {
    const statuses = new Set([...covered].map((c) => c.split(' ')[1]));
    expect([...statuses].sort()).toEqual(['200', '400', '401', '403', '404', '415', '416', '429', '500', '503']);
    for (const p of ['/regex/{what_to_search}/{value}', '/glob/{what_to_search}/{value}', '/lookup/rrset/{how}/{value}',
      '/lookup/rdata/{how}/{value}', '/summarize/rrset/{how}/{value}', '/rate_limit', '/ping', '/openapi.json', '/{endpoint}']) {
      expect([...covered].some((c) => c.startsWith(`${p} `)), p).toBe(true);
    }
  });
});

describe('what the check refuses', () => {
  const ok = (body: string, type = 'application/x-ndjson', status = 200): Reply => ({
    status, body, headers: {
      'content-type': type, 'x-ratelimit-limit': 'unlimited', 'x-ratelimit-remaining': 'n/a', 'x-ratelimit-reset': 'n/a',
      'x-ratelimit-expires': 'n/a',
    },
  });
  const p = '/pdns/v2/regex/rrnames/x';
  const good = '{"cond":"begin"}\n{"obj":{"rrname":"x.","rrtype":"A"}}\n{"cond":"succeeded"}\n';

  it('takes a described response', () => {
    expect(conformance.check(p, ok(good))).toEqual({ path: '/regex/{what_to_search}/{value}', status: '200' });
  });

  it('refuses undocumented paths, statuses, content types, headers, lines and framing', () => {
    expect(() => conformance.check('/pdns/v2/regex/rrnames/x/A/extra', ok(good))).toThrow(/no documented path/);
    expect(() => conformance.check('/other/v2/ping', ok(good))).toThrow(/under none of the document's servers/);
    expect(() => conformance.check(p, ok(good, 'application/x-ndjson', 418))).toThrow(/status 418 is not documented/);
    expect(() => conformance.check(p, ok(good, 'text/csv'))).toThrow(/content type text\/csv is not documented/);
    expect(() => conformance.check(p, { ...ok(good), headers: { 'content-type': 'application/x-ndjson' } }))
      .toThrow(/required header X-RateLimit-Limit missing/);
    expect(() => conformance.check(p, ok(good.replace('"rrtype":"A"', '"rrtype":"A","count":1'))))
      .toThrow(/line 2: .* does not conform/);
    expect(() => conformance.check(p, ok('{"cond":"begin"}\n{"obj":{"rrname":"x.","rrtype":"A"}}\n'))).toThrow(/expected Succeeded/);
    expect(() => conformance.check(p, ok('{"cond":"succeeded"}\n' + good))).toThrow(/expected Begin/);
    expect(() => conformance.check(p, ok('{"cond":"begin"}\n{"cond":"succeeded"}\n{"cond":"succeeded"}\n')))
      .toThrow(/framing line in the middle/);
    expect(() => conformance.check(p, ok('Error: something else\n', 'text/plain', 400))).toThrow(/does not conform/);
    expect(() => conformance.check('/pdns/v2/ping', ok('{"ping":"ok"}', 'application/json'))).toThrow(/without its newline/);
  });

  it('refuses request parameters the document does not define or allow', () => {
    expect(() => conformance.checkRequest('/pdns/v2/regex/rrnames/x?limit=1&exclude=y')).not.toThrow();
    expect(() => conformance.checkRequest('/pdns/v2/regex/rrnames/x?aggr=true')).toThrow(/query parameter aggr is not documented/);
    expect(() => conformance.checkRequest('/pdns/v2/regex/rrnames/x?limit=-1')).toThrow(/query parameter limit: .* does not conform/);
    expect(() => conformance.checkRequest('/pdns/v2/regex/hosts/x')).toThrow(/path parameter what_to_search: .* does not conform/);
    expect(() => conformance.checkRequest('/pdns/v2/rate_limit?limit=1')).toThrow(/limit is not documented/);
  });
});
