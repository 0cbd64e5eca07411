// serve --tls-cert/--tls-key (issue 21): the spec's base address is HTTPS.
// A CA and server certificates are made here with openssl. A start with a
// bad pair is refused in one line with exit status 2, before anything else
// starts, never a crash or a server on plain HTTP (tls-credentials.ts).

import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, tempPaths } from '../helpers/rrscan.js';
import { HAVE_OPENSSL, makeTestPki, OPENSSL_SKIP_REASON, type TestPki } from '../helpers/tls.js';

if (!HAVE_OPENSSL) console.warn(`tls.test.ts: skipped: ${OPENSSL_SKIP_REASON}`);

describe.skipIf(!HAVE_OPENSSL)('serve over TLS', () => {
  const temp = tempPaths();
  let pki: TestPki;
  let dir: string;

  beforeAll(() => {
    pki = makeTestPki(temp.fresh());
    dir = temp.fresh();
  });

  afterAll(() => temp.removeAll());

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
