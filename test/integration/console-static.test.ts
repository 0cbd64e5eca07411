// The web console's files over plain HTTP (issue 16), from a real `rrscan
// serve`: exact status lines, headers and bodies for every file; 304 for a
// browser that has the current copy; the redirect of /console; and the front
// end's 404 for everything else under /console/, traversal attempts
// included. Paths go out byte for byte (the helper's node:http client does
// not normalise `..` or escapes the way a browser would).

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ERRORS } from '../../src/errors/catalogue.js';
import { addKey, get, ingestNdjson, REPO, startServer, tempPaths, type Server } from '../helpers/rrscan.js';

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; " +
  "form-action 'none'; frame-ancestors 'none'";

/** Every file the console serves, where it comes from, and its type. */
const FILES: [string, string, string][] = [
  ['/console/', 'console/index.html', 'text/html; charset=utf-8'],
  ['/console/index.html', 'console/index.html', 'text/html; charset=utf-8'],
  ['/console/console.css', 'console/console.css', 'text/css; charset=utf-8'],
  ['/console/main.js', 'dist/console/main.js', 'text/javascript; charset=utf-8'],
  ['/console/request.js', 'dist/console/request.js', 'text/javascript; charset=utf-8'],
  ['/console/stream.js', 'dist/console/stream.js', 'text/javascript; charset=utf-8'],
  ['/console/table.js', 'dist/console/table.js', 'text/javascript; charset=utf-8'],
];

const etagOf = (body: Buffer) => `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;

const paths = tempPaths();
let server: Server;

beforeAll(async () => {
  const dir = paths.fresh();
  ingestNdjson(dir, [{ count: 1, time_first: 1, time_last: 2, rrname: 'a.example.', rrtype: 'A', bailiwick: 'example.',
    rdata: ['192.0.2.1'] }]);
  addKey(dir);
  server = await startServer(dir);
});

afterAll(async () => {
  await server?.close();
  paths.removeAll();
});

describe('GET /console/...', () => {
  it('serves each file with its type, a strong ETag, no-cache and the security headers', async () => {
    for (const [url, file, type] of FILES) {
      const want = readFileSync(path.join(REPO, file));
      const r = await get(server, url);
      expect(r.status, url).toBe(200);
      expect(r.body, url).toBe(want.toString('utf8'));
      expect(r.headers, url).toMatchObject({
        'content-type': type, 'content-length': String(want.length), 'etag': etagOf(want), 'cache-control': 'no-cache',
        'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'content-security-policy': CSP,
      });
    }
  });

  it('answers 304 without a body when the browser has the current copy', async () => {
    const etag = etagOf(readFileSync(path.join(REPO, 'dist/console/main.js')));
    for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const r = await get(server, '/console/main.js', { 'If-None-Match': inm });
      expect(r.status, inm).toBe(304);
      expect(r.body).toBe('');
      expect(r.headers).toMatchObject({ 'etag': etag, 'cache-control': 'no-cache' });
      expect(r.headers['content-type']).toBeUndefined();
    }
    const stale = await get(server, '/console/main.js', { 'If-None-Match': '"stale"' });
    expect(stale.status).toBe(200);
    expect(stale.headers['etag']).toBe(etag);
  });

  it('sends /console to /console/ (the page\'s relative links need the slash)', async () => {
    for (const url of ['/console', '/console?x=1']) {
      const r = await get(server, url);
      expect(r.status).toBe(301);
      expect(r.headers['location']).toBe('/console/');
      expect(r.body).toBe('/console/\n');
    }
  });

  it('gives the front end\'s 404 to any other path, whatever it tries to reach', async () => {
    const notFound = API_ERRORS.NOT_FOUND.text;
    for (const url of [
      '/console/tsconfig.json', '/console/src/main.ts', '/console/nothing.js', '/console/INDEX.HTML', '/console/index.html/',
      '/console//index.html', '/console/./index.html', '/console/../package.json', '/console/%2e%2e/package.json',
      '/console/..%2Fpackage.json', '/console/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd', '/console/..\\package.json', '/console/main.js%00',
      '/console/../../../../etc/passwd', '/console/dist/console/main.js', '/consolex', '/console.css',
    ]) {
      const r = await get(server, url);
      expect(r.status, url).toBe(404);
      expect(r.headers['content-type'], url).toBe('text/html; charset=utf-8');
      expect(r.body, url).toBe(notFound);
    }
  });

  it('serves GET only, and leaves the API as it was', async () => {
    const post = await get(server, '/console/', {}, 'POST');
    expect(post.status).toBe(404);
    expect(post.body).toBe(API_ERRORS.NOT_FOUND.text);
    expect((await get(server, '/pdns/v2/ping')).body).toBe('{"ping":"ok"}\n');
  });
});
