// HTTP/1.0 gets no answer, HEAD gets 404 (issue 21). uWS 20.30 never hands
// an HTTP/1.0 request to the application: `GET /pdns/v2/ping HTTP/1.0` hung
// about 12 s and closed empty, and HAProxy's default check, `OPTIONS /
// HTTP/1.0`, got nothing; HEAD and OPTIONS got the 404 of other methods.
// Now HTTP/1.0 requests are answered whole, with Content-Length, and the
// connection is closed after the answer; HEAD gets the status and headers
// of GET without a body; OPTIONS gets 204 and Allow, on every route family.
//
// Raw TCP sockets, real request lines: the exact status line, header lines
// (Date aside) and body, and whether the server closed the connection.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/config/limits.js';
import { API_ERRORS } from '../../src/errors/catalogue.js';
import {
  addKey, begin, body, ingestNdjson, limited, lines, randomNames, REPO, startServer, tempPaths, type Server,
} from '../helpers/rrscan.js';
import { parseReply, rawRequest, type RawReply } from '../helpers/raw-http.js';

const temp = tempPaths();
let server: Server;
let key: string;

const OPENAPI = readFileSync(path.join(REPO, 'api', 'openapi.json'), 'utf8');
const PAGE = readFileSync(path.join(REPO, 'console', 'index.html'), 'utf8');
const UWS = 'uWebSockets: 20';
const CLOSE = 'Connection: close';
const RATE = ['X-RateLimit-Limit: unlimited', 'X-RateLimit-Remaining: n/a', 'X-RateLimit-Reset: n/a', 'X-RateLimit-Expires: n/a'];
const NAMES = ['a.head.example.', 'b.head.example.', 'c.head.example.'];

beforeAll(async () => {
  const dir = temp.fresh();
  ingestNdjson(dir, [
    ...NAMES.map((rrname) => ({
      count: 1, time_first: 1_600_000_000, time_last: 1_600_000_000, rrname, rrtype: 'A', bailiwick: 'head.example.', rdata: ['192.0.2.1'],
    })),
    // Enough for an answer past LIMITS.http10AnswerBytesMax: 60,000 names of ~80 bytes a line.
    ...randomNames(60_000, 'big.example.', 20_261_127).map((rrname) => ({
      count: 1, time_first: 1_600_000_000, time_last: 1_600_000_000, rrname, rrtype: 'A', bailiwick: 'big.example.', rdata: ['192.0.2.2'],
    })),
  ]);
  key = addKey(dir, ['--unlimited', '--results-max', '1000000']);
  server = await startServer(dir);
});

afterAll(async () => {
  await server?.close();
  temp.removeAll();
});

/** One request on a fresh connection; the reply once the server closes it (or after 5 s: closed false). */
function ask(request: string): Promise<RawReply> {
  return rawRequest(server.port, request, { timeoutMs: 5_000 }).done;
}

const http10 = (method: string, target: string, headers = '') => `${method} ${target} HTTP/1.0\r\n${headers}\r\n`;
const withKey = () => `X-API-Key: ${key}\r\n`;

describe('HTTP/1.0', () => {
  it('GET ping: answered at once, with Content-Length, and the connection closed (it hung 12 s, empty)', async () => {
    const t = performance.now();
    const r = await ask('GET /pdns/v2/ping HTTP/1.0\r\n\r\n');
    expect(performance.now() - t).toBeLessThan(1_000);
    expect(r).toMatchObject({
      statusLine: 'HTTP/1.1 200 OK', headers: ['Content-Type: application/json', CLOSE, UWS, 'Content-Length: 14'],
      body: '{"ping":"ok"}\n', complete: true, closed: true,
    });
  });

  it('OPTIONS / as HAProxy\'s option httpchk sends it: 204 and Allow, connection closed', async () => {
    const r = await ask('OPTIONS / HTTP/1.0\r\n\r\n');
    expect(r).toMatchObject({
      statusLine: 'HTTP/1.1 204 No Content', headers: ['Allow: GET, HEAD, OPTIONS', CLOSE, UWS], body: '', closed: true,
    });
  });

  it('a flexible search: the whole NDJSON stream with its terminator, Content-Length, no chunked encoding', async () => {
    const r = await ask(http10('GET', '/pdns/v2/glob/rrnames/*.head.example.', `Host: 127.0.0.1\r\n${withKey()}`));
    const want = body(begin, ...NAMES.map((rrname) => ({ obj: { rrname, rrtype: 'A' } })), { cond: 'succeeded' });
    expect(r).toMatchObject({
      statusLine: 'HTTP/1.1 200 OK',
      headers: ['Content-Type: application/x-ndjson', ...RATE, CLOSE, UWS, `Content-Length: ${want.length}`],
      body: want, complete: true, closed: true,
    });
  });

  it('a lookup and its limit: NDJSON with the limited terminator', async () => {
    const r = await ask(http10('GET', '/dnsdb/v2/lookup/rrset/name/*.head.example./A?limit=2', withKey()));
    expect(r.statusLine).toBe('HTTP/1.1 200 OK');
    expect(r.headers).toContain(CLOSE);
    expect(r.headers.some((h) => /^transfer-encoding/i.test(h))).toBe(false);
    expect(r.closed).toBe(true);
    const got = lines(r.body) as Record<string, unknown>[];
    expect(got.length).toBe(4);
    expect([got[0], got[3]]).toEqual([begin, limited]);
    expect(got.slice(1, 3).map((l) => (l['obj'] as { rrname: string }).rrname)).toEqual(NAMES.slice(0, 2));
  });

  it('an answer past the HTTP/1.0 bound ends there with a failed terminator from the catalogue, still whole NDJSON', async () => {
    const r = await ask(http10('GET', '/pdns/v2/glob/rrnames/*.big.example.?limit=0', withKey()));
    expect(r.statusLine).toBe('HTTP/1.1 200 OK');
    expect(r.complete && r.closed).toBe(true);
    expect(r.body.length).toBeLessThanOrEqual(LIMITS.http10AnswerBytesMax + 200);
    expect(r.body.length).toBeGreaterThan(LIMITS.http10AnswerBytesMax - LIMITS.lineBytesMax);
    const got = lines(r.body);
    expect(got[0]).toEqual(begin);
    expect(got.at(-1)).toEqual({ cond: 'failed', msg: 'Answer too large for HTTP/1.0; ask with HTTP/1.1 or a smaller limit' });
    expect(got.filter((l) => 'cond' in (l as object)).length).toBe(2);
  });

  it('errors: the catalogue text, Content-Length, connection closed', async () => {
    const r = await ask(http10('GET', '/pdns/v2/rate_limit'));
    expect(r).toMatchObject({
      statusLine: 'HTTP/1.1 403 Forbidden',
      headers: ['Content-Type: text/plain; charset=utf-8', CLOSE, UWS, `Content-Length: ${API_ERRORS.BAD_API_KEY.text.length + 1}`],
      body: `${API_ERRORS.BAD_API_KEY.text}\n`, closed: true,
    });
    const other = await ask(http10('DELETE', '/pdns/v2/ping'));
    expect([other.statusLine, other.body, other.closed]).toEqual(['HTTP/1.1 404 Not Found', API_ERRORS.NOT_FOUND.text, true]);
  });

  it('keeps nothing open: an HTTP/1.0 client asking keep-alive still gets the connection closed', async () => {
    const r = await ask('GET /pdns/v2/ping HTTP/1.0\r\nConnection: keep-alive\r\nHost: 127.0.0.1\r\n\r\n');
    expect([r.statusLine, r.body, r.closed]).toEqual(['HTTP/1.1 200 OK', '{"ping":"ok"}\n', true]);
  });
});

/** Every route family's GET target, and the key it needs. */
const ROUTES: [string, string, boolean][] = [
  ['ping', '/pdns/v2/ping', false],
  ['rate_limit', '/pdns/v2/rate_limit', true],
  ['openapi.json', '/pdns/v2/openapi.json', false],
  ['console', '/console/', false],
  ['console redirect', '/console', false],
  ['not found', '/pdns/v2/nothing', false],
];

/**
 * HEAD then GET pipelined on one HTTP/1.1 connection: HEAD's answer must end
 * at its blank line, for the next bytes are GET's status line. Both parsed.
 */
async function headThenGet(target: string, headers: string): Promise<{ head: RawReply; get: RawReply }> {
  const r = await rawRequest(server.port, `HEAD ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}\r\n` +
    `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${headers}\r\n`, { timeoutMs: 5_000 }).done;
  const split = r.raw.indexOf('\r\n\r\n') + 4;
  expect(r.raw.slice(split).startsWith('HTTP/1.1 '), `HEAD ${target} sent no body`).toBe(true);
  return { head: parseReply(r.raw.slice(0, split), false), get: parseReply(r.raw.slice(split), r.closed) };
}

const sorted = (h: string[]) => [...h].sort();

describe('HEAD', () => {
  for (const [family, target, needsKey] of ROUTES) {
    it(`${family}: GET's status and headers, Content-Length included, no body; the connection goes on`, async () => {
      const { head, get } = await headThenGet(target, needsKey ? withKey() : '');
      expect(head.statusLine).toBe(get.statusLine);
      expect(sorted(head.headers)).toEqual(sorted(get.headers.filter((h) => h !== CLOSE)));
      expect(head.headers).toContain(`Content-Length: ${Buffer.byteLength(get.body)}`);
      expect(head.body).toBe('');
    });
  }

  it('the bodies GET sent alongside are the real ones', async () => {
    expect((await headThenGet('/pdns/v2/openapi.json', '')).get.body).toBe(OPENAPI);
    expect((await headThenGet('/console/', '')).get.body).toBe(PAGE);
  });

  it('flexible search and lookup: the head of the stream, without running or charging the search', async () => {
    for (const target of ['/pdns/v2/regex/rrnames/head', '/pdns/v2/lookup/rrset/name/a.head.example./A', '/pdns/v2/summarize/rrset/name/a.head.example.']) {
      const r = await ask(`HEAD ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${withKey()}\r\n`);
      expect(r, target).toMatchObject({ statusLine: 'HTTP/1.1 200 OK', headers: ['Content-Type: application/x-ndjson', UWS], body: '' });
    }
  });

  it('search refusals before the charge are GET\'s: 403, 400, 415, 404', async () => {
    const cases: [string, string, string][] = [
      ['/pdns/v2/regex/rrnames/head', '', 'HTTP/1.1 403 Forbidden'],
      ['/pdns/v2/regex/nothing/head', withKey(), 'HTTP/1.1 400 Bad Request'],
      ['/pdns/v2/regex/rrnames/head', `${withKey()}Accept: text/html\r\n`, 'HTTP/1.1 415 Unsupported Media Type'],
      ['/pdns/v2/nothing/rrnames/head', withKey(), 'HTTP/1.1 404 Not Found'],
    ];
    for (const [target, headers, status] of cases) {
      const { head, get } = await headThenGet(target, headers);
      expect([head.statusLine, get.statusLine], target).toEqual([status, status]);
      expect(sorted(head.headers), target).toEqual(sorted(get.headers.filter((h) => h !== CLOSE)));
    }
  });

  it('over HTTP/1.0: the same head, and the connection closed', async () => {
    const r = await ask(http10('HEAD', '/pdns/v2/ping'));
    expect(r).toMatchObject({
      statusLine: 'HTTP/1.1 200 OK', headers: ['Content-Type: application/json', CLOSE, 'Content-Length: 14', UWS], body: '', closed: true,
    });
  });
});

describe('OPTIONS', () => {
  const targets = [...ROUTES.map(([, t]) => t), '/pdns/v2/regex/rrnames/head', '/pdns/v2/lookup/rdata/ip/192.0.2.1', '/'];
  for (const version of ['1.1', '1.0']) {
    it(`every route family over HTTP/${version}: 204 No Content with Allow: GET, HEAD, OPTIONS, no key needed`, async () => {
      for (const target of targets) {
        const r = await ask(`OPTIONS ${target} HTTP/${version}\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
        expect(r, target).toMatchObject({
          statusLine: 'HTTP/1.1 204 No Content', headers: ['Allow: GET, HEAD, OPTIONS', ...(version === '1.0' ? [CLOSE] : []), UWS],
          body: '', closed: true,
        });
      }
    });
  }
});
