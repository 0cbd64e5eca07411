// serve --tls-cert/--tls-key (issue 21): the spec's base address is HTTPS.
// A CA and server certificates are made here with openssl; clients verify
// the server against that CA. Covered so far: large answers arrive byte for
// byte as over plain HTTP, and a start with a bad pair is refused in one line
// with exit status 2, never a crash or a server on plain HTTP
// (tls-credentials.ts).

import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addKey, cli, get, ingestNdjson, lines, randomNames, startServer, tempPaths, type Server } from '../helpers/rrscan.js';
import { HAVE_OPENSSL, httpsGet, makeTestPki, OPENSSL_SKIP_REASON, type TestPki } from '../helpers/tls.js';

if (!HAVE_OPENSSL) console.warn(`tls.test.ts: skipped: ${OPENSSL_SKIP_REASON}`);

const NAMES = 100_000;
const KEEPALIVE_MS = 10;

const record = (rrname: string, first: number, address: string) => ({
  count: 3, time_first: first, time_last: first + 100, rrname, rrtype: 'A', bailiwick: 'tls.example.', rdata: [address],
});

/** A body with its keep-alive lines taken out, and how many there were (each exactly `{}`). */
function withoutKeepAlives(text: string): { body: string; keepAlives: number } {
  const all = text.split('\n');
  const kept = all.filter((l) => l !== '{}');
  return { body: kept.join('\n'), keepAlives: all.length - kept.length };
}

describe.skipIf(!HAVE_OPENSSL)('serve over TLS', () => {
  const temp = tempPaths();
  let pki: TestPki;
  let dir: string;
  let H: Record<string, string>;

  beforeAll(() => {
    pki = makeTestPki(temp.fresh());
    dir = temp.fresh();
    ingestNdjson(dir, randomNames(NAMES, 'slow.tls.example.', 20_261_126).map((n, i) =>
      record(n, 1_600_000_000, `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`)));
    H = { 'X-API-Key': addKey(dir, ['--unlimited', '--results-max', '100000']) };
  });

  afterAll(() => temp.removeAll());

  describe('one process', () => {
    let server: Server;
    let plain: Server;

    beforeAll(async () => {
      [server, plain] = await Promise.all([
        startServer(dir, ['--tls-cert', pki.a.cert, '--tls-key', pki.a.key, '--workers', '1', '--keepalive-ms', String(KEEPALIVE_MS)]),
        startServer(dir)]);
    });

    afterAll(async () => {
      await Promise.all([server?.close(), plain?.close()]);
    });

    it('sends large answers byte for byte as the plain-HTTP server does, to readers slower than the server ' +
      '(uWS 20.30 dropped a corked write that overflowed its cork buffer: LIMITS.corkPieceBytes)', async () => {
      const p = '/pdns/v2/lookup/rrset/name/*.slow.tls.example/A?limit=50000';
      const overHttp = await get(plain, p, H);
      expect(overHttp.status).toBe(200);
      expect(lines(overHttp.body)).toHaveLength(50_002);
      expect(lines(overHttp.body).at(-1)).toEqual({ cond: 'limited', msg: 'Result limit reached' });
      expect(overHttp.body.length).toBeGreaterThan(5 << 20);
      // Four at once, each stopping to read every 64 KB: the server's writes meet a full socket many times in each.
      // Keep-alive lines (10 ms here) may come wherever the server waited; the rest must be the same bytes.
      const overTls = await Promise.all(Array.from({ length: 4 }, () => httpsGet(server.port, p, { ca: pki.ca, slowReader: true }, H)));
      expect(overTls.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      const expected = withoutKeepAlives(overHttp.body).body;
      expect(overTls.map((r) => withoutKeepAlives(r.body).body === expected), 'a TLS answer differs from the plain-HTTP one')
        .toEqual([true, true, true, true]);
    }, 30_000);
  });

  describe('a start with a bad certificate or key', () => {
    /** serve with these files: exits 2 with exactly one line on stderr, nothing on stdout (and, from a group, no member started). */
    function refused(cert: string, key: string, extra: string[] = []): string {
      const r = cli(['serve', '--data', dir, '--port', '0', '--tls-cert', cert, '--tls-key', key, ...extra]);
      expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' });
      expect(r.stderr.split('\n').filter((l) => l !== '')).toHaveLength(1);
      return r.stderr;
    }

    it('refuses a key that is not the certificate\'s, alone and as a group (the supervisor, before any member)', () => {
      const line = `rrscan serve: --tls-key ${pki.b.key} is not the private key of --tls-cert ${pki.a.cert} (their public keys differ)\n`;
      expect(refused(pki.a.cert, pki.b.key)).toBe(line);
      expect(refused(pki.a.cert, pki.b.key, ['--processes', '2'])).toBe(line);
    });

    it('refuses missing files, files without PEM, and the two swapped', () => {
      const missing = path.join(path.dirname(pki.a.cert), 'no-such.pem');
      expect(refused(missing, pki.a.key)).toBe(`rrscan serve: --tls-cert ${missing}: no such file\n`);
      expect(refused(pki.a.cert, missing)).toBe(`rrscan serve: --tls-key ${missing}: no such file\n`);
      expect(refused(pki.a.key, pki.a.cert))
        .toBe(`rrscan serve: --tls-cert ${pki.a.key}: no PEM certificate in it (-----BEGIN CERTIFICATE-----)\n`);
      expect(refused(pki.a.cert, pki.a.cert))
        .toBe(`rrscan serve: --tls-key ${pki.a.cert}: no PEM private key in it (-----BEGIN PRIVATE KEY-----)\n`);
    });

    it('refuses an encrypted key instead of prompting for its passphrase', () => {
      expect(refused(pki.a.cert, pki.encryptedKey)).toBe(`rrscan serve: --tls-key ${pki.encryptedKey}: the key is encrypted; ` +
        'serve takes an unencrypted key (openssl pkey -in KEY -out PLAIN_KEY)\n');
    });

    it('refuses, in the same kind of line, a pair OpenSSL takes and uWebSockets.js\'s BoringSSL does not (Ed448)', () => {
      expect(refused(pki.ed448.cert, pki.ed448.key)).toBe(`rrscan serve: --tls-cert ${pki.ed448.cert} with --tls-key ` +
        `${pki.ed448.key}: uWebSockets.js (BoringSSL) refused them (it takes RSA, ECDSA P-256, P-384 or P-521, and Ed25519 keys)\n`);
    });
  });
});
