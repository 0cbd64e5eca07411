// serve --tls-cert/--tls-key (issue 21): the spec's base address is HTTPS.
// A CA and server certificates are made here with openssl; every client
// verifies the server against that CA and the name it asked for, as a
// partner's SDK does (never `-k`). Covered: flexible and standard streams
// with their keep-alive lines, several requests on one kept-alive TLS
// connection, a large answer byte for byte as over plain HTTP, a
// `--processes 2` group, clients that must be refused (another CA, another
// name, plain HTTP on the TLS port), start-up refusing a bad pair in one line
// with exit status 2, and what replacing the files on disk does: nothing
// until the process restarts (tls-credentials.ts says why uWS 20.30 cannot
// safely do more), member by member in a group, where a member restarted
// onto a bad pair exits 2 like any start.

import { copyFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/config/limits.js';
import {
  addKey, begin, body, cli, get, ingestNdjson, lines, logLines, memberPids, ok, randomNames, requestsByMember, startServer, tempPaths,
  type Server, withoutKeepAlives,
} from '../helpers/rrscan.js';
import {
  fingerprint, HAVE_OPENSSL, httpsGet, keepAliveAgent, makeTestPki, OPENSSL_SKIP_REASON, type Pair, type TestPki,
} from '../helpers/tls.js';

if (!HAVE_OPENSSL) console.warn(`tls.test.ts: skipped: ${OPENSSL_SKIP_REASON}`);

const T0 = 1_600_000_000;
const T1 = 1_650_000_000;
const NAMES = 100_000;
/**
 * RE2 runs this on its NFA (robustness.test.ts): over the 100,000 names,
 * long enough for several keep-alive lines. The generated names have no
 * `_`; the three HITS do.
 */
const SLOW_FLEX = '/pdns/v2/regex/rrnames/' + encodeURIComponent('(?:[a-f][^.]{20}|[0-9][^.]{20})[^.]{10}_');
/** Walks every name under tls.example; the fence keeps only the HITS (first seen at T1). */
const SLOW_LOOKUP = `/pdns/v2/lookup/rrset/name/*.tls.example/A?time_first_after=${T1 - 1}`;
const FAST_LOOKUP = '/pdns/v2/lookup/rrset/name/c0123456789012345678901234567890_.hit.tls.example';
const PING = '/pdns/v2/ping';
const KEEPALIVE_MS = 10;

const record = (rrname: string, first: number, address: string) => ({
  count: 3, time_first: first, time_last: first + 100, rrname, rrtype: 'A', bailiwick: 'tls.example.', rdata: [address],
});
const HIT_NAMES = ['a', 'b', 'c'].map((c) => `${c}0123456789012345678901234567890_.hit.tls.example.`);
const HITS = HIT_NAMES.map((n, i) => record(n, T1, `192.0.2.${i + 1}`));
const hitLine = (i: number) => ({ obj: HITS[i]! });
const FLEX_BODY = body(begin, ...HIT_NAMES.map((rrname) => ({ obj: { rrname, rrtype: 'A' } })), ok);
const LOOKUP_BODY = body(begin, hitLine(0), hitLine(1), hitLine(2), ok);
const PONG = '{"ping":"ok"}\n';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Runs `step` until `done()` holds; fails after `deadlineMs`. */
async function until(what: string, done: () => boolean, deadlineMs: number, step: () => Promise<unknown>): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!done()) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await step();
  }
}

describe.skipIf(!HAVE_OPENSSL)('serve over TLS', () => {
  const temp = tempPaths();
  let pki: TestPki;
  let dir: string;
  let H: Record<string, string>;
  /** The server pair's files at paths of their own, which the swap tests replace. */
  let live: Pair;
  let fpA: string;
  let fpB: string;

  /** Puts `from` at `live`'s paths as deploy tools do: a new file renamed into place (certbot flips symlinks, to the same effect). */
  function install(from: Pair): void {
    for (const [src, dst] of [[from.cert, live.cert], [from.key, live.key]] as const) {
      copyFileSync(src, `${dst}.new`);
      renameSync(`${dst}.new`, dst);
    }
  }

  const tls = (extra: string[] = [], env: Record<string, string> = {}) =>
    startServer(dir, ['--tls-cert', live.cert, '--tls-key', live.key, ...extra], env);

  beforeAll(() => {
    const certs = temp.fresh();
    pki = makeTestPki(certs);
    live = { cert: path.join(certs, 'live.pem'), key: path.join(certs, 'live.key') };
    install(pki.a);
    [fpA, fpB] = [fingerprint(pki.a.cert), fingerprint(pki.b.cert)];
    dir = temp.fresh();
    ingestNdjson(dir, [...randomNames(NAMES, 'slow.tls.example.', 20_261_126).map((n, i) =>
      record(n, T0, `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`)), ...HITS]);
    H = { 'X-API-Key': addKey(dir, ['--unlimited', '--results-max', '100000']) };
  });

  afterAll(() => temp.removeAll());

  describe('one process', () => {
    let server: Server;
    let plain: Server;

    beforeAll(async () => {
      [server, plain] = await Promise.all([tls(['--workers', '1', '--keepalive-ms', String(KEEPALIVE_MS)]), startServer(dir)]);
    });

    afterAll(async () => {
      await Promise.all([server?.close(), plain?.close()]);
    });

    it('announces an https URL and answers a client that verifies it, by address (no SNI) and by name (SNI)', async () => {
      expect(server.url).toBe(`https://127.0.0.1:${server.port}`);
      for (const servername of [undefined, 'localhost']) {
        const r = await httpsGet(server.port, PING, { ca: pki.ca, ...(servername !== undefined ? { servername } : {}) });
        expect([r.status, r.body, r.fingerprint], servername ?? 'by address').toEqual([200, PONG, fpA]);
      }
    });

    it('streams a flexible and a standard search with keep-alive lines, then a third answer, on one kept-alive connection',
      async () => {
        const agent = keepAliveAgent(pki.ca);
        try {
          const flex = await httpsGet(server.port, SLOW_FLEX, { ca: pki.ca, agent }, H);
          const lookup = await httpsGet(server.port, SLOW_LOOKUP, { ca: pki.ca, agent }, H);
          const third = await httpsGet(server.port, FAST_LOOKUP, { ca: pki.ca, agent }, H);
          expect([flex.status, lookup.status, third.status]).toEqual([200, 200, 200]);
          expect(flex.headers['content-type']).toBe('application/x-ndjson');
          expect([flex.reused, lookup.reused, third.reused], 'requests after the first go on the same TLS connection')
            .toEqual([false, true, true]);
          const [f, l] = [withoutKeepAlives(flex.body), withoutKeepAlives(lookup.body)];
          expect(f.body).toBe(FLEX_BODY);
          expect(l.body).toBe(LOOKUP_BODY);
          expect(f.keepAlives, 'no keep-alive line in the flexible search: the fixture is too small for this machine')
            .toBeGreaterThan(0);
          expect(l.keepAlives, 'no keep-alive line in the lookup: the fixture is too small for this machine').toBeGreaterThan(0);
          // Keep-alives come between `begin` and the terminator, as whole lines (lines() refuses a torn or blank one).
          for (const r of [flex, lookup]) expect([lines(r.body)[0], lines(r.body).at(-1)]).toEqual([begin, ok]);
          expect(third.body).toBe(body(begin, hitLine(2), ok));
        } finally {
          agent.destroy();
        }
      }, 30_000);

    it('sends large answers byte for byte as the plain-HTTP server does, to readers slower than the server ' +
      '(uWS 20.30 dropped a corked write that overflowed its cork buffer: LIMITS.corkPieceBytes)', async () => {
      const p = '/pdns/v2/lookup/rrset/name/*.slow.tls.example/A?limit=50000';
      const overHttp = await get(plain, p, H);
      expect(overHttp.status).toBe(200);
      // Keep-alives (every 10 ms here) may come there too, wherever the server waited on the lookup's turns.
      const solid = lines(withoutKeepAlives(overHttp.body).body);
      expect(solid).toHaveLength(50_002);
      expect(solid.at(-1)).toEqual({ cond: 'limited', msg: 'Result limit reached' });
      expect(overHttp.body.length).toBeGreaterThan(5 << 20);
      // Four at once, each stopping to read every 64 KB: the server's writes meet a full socket many times in each.
      // Keep-alive lines (10 ms here) may come wherever the server waited; the rest must be the same bytes.
      const overTls = await Promise.all(Array.from({ length: 4 }, () => httpsGet(server.port, p, { ca: pki.ca, slowReader: true }, H)));
      expect(overTls.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      const expected = withoutKeepAlives(overHttp.body).body;
      expect(overTls.map((r) => withoutKeepAlives(r.body).body === expected), 'a TLS answer differs from the plain-HTTP one')
        .toEqual([true, true, true, true]);
    }, 30_000);

    it('refuses the handshake of a client that trusts another CA, or asks for a name the certificate does not carry', async () => {
      await expect(httpsGet(server.port, PING, { ca: pki.otherCa })).rejects.toMatchObject({ code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
      await expect(httpsGet(server.port, PING, { ca: pki.ca, servername: 'rrscan.invalid' }))
        .rejects.toMatchObject({ code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
      expect((await httpsGet(server.port, PING, { ca: pki.ca })).body).toBe(PONG);
    });

    it('closes a plain-HTTP request on the TLS port without a byte, and goes on serving TLS', async () => {
      // What the server does: reads the request as a TLS ClientHello, fails the
      // handshake, and closes the connection with a FIN, sending nothing back
      // (no TLS alert, no HTTP). A raw client sees a clean end of stream; Node's
      // HTTP client calls that ECONNRESET "socket hang up".
      const raw = await new Promise<{ bytes: number; ended: boolean; error: string | undefined }>((resolve) => {
        const sock = net.connect(server.port, '127.0.0.1');
        let bytes = 0;
        let ended = false;
        let error: string | undefined;
        sock.on('connect', () => sock.write(`GET ${PING} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`));
        sock.on('data', (d: Buffer) => { bytes += d.length; });
        sock.on('end', () => { ended = true; });
        sock.on('error', (e: NodeJS.ErrnoException) => { error = e.code; });
        sock.on('close', () => resolve({ bytes, ended, error }));
      });
      expect(raw).toEqual({ bytes: 0, ended: true, error: undefined });
      await expect(get(server, PING)).rejects.toMatchObject({ code: 'ECONNRESET', message: 'socket hang up' });
      expect(server.proc.exitCode).toBe(null);
      expect((await httpsGet(server.port, PING, { ca: pki.ca })).body).toBe(PONG);
    });
  });

  describe('replacing the certificate files', () => {
    it('changes nothing in a running server: kept-alive and new connections get the certificate read at start-up; ' +
      'a restart serves the new one', async () => {
      install(pki.a);
      const server = await tls();
      const agent = keepAliveAgent(pki.ca);
      try {
        expect((await httpsGet(server.port, FAST_LOOKUP, { ca: pki.ca, agent }, H)).fingerprint).toBe(fpA);
        install(pki.b);
        const kept = await httpsGet(server.port, FAST_LOOKUP, { ca: pki.ca, agent }, H);
        const fresh = await httpsGet(server.port, FAST_LOOKUP, { ca: pki.ca }, H);
        expect([kept.reused, kept.fingerprint, kept.body]).toEqual([true, fpA, body(begin, hitLine(2), ok)]);
        expect([fresh.reused, fresh.fingerprint, fresh.body]).toEqual([false, fpA, body(begin, hitLine(2), ok)]);
        // Broken files on disk do not reach a running server either.
        writeFileSync(live.cert, 'not a certificate\n');
        rmSync(live.key);
        expect((await httpsGet(server.port, PING, { ca: pki.ca })).fingerprint).toBe(fpA);
        expect(logLines(server).filter((l) => (l['level'] as number) >= 40)).toEqual([]);
      } finally {
        agent.destroy();
        await server.close();
      }
      install(pki.b);
      const restarted = await tls();
      try {
        expect((await httpsGet(restarted.port, PING, { ca: pki.ca })).fingerprint).toBe(fpB);
      } finally {
        await restarted.close();
      }
    }, 30_000);
  });

  describe('serve --processes 2', () => {
    let group: Server;

    beforeAll(async () => {
      install(pki.a);
      group = await tls(['--processes', '2', '--workers', '1'], { RRSCAN_LOG_LEVEL: 'info' });
    });

    afterAll(async () => {
      await group?.close();
    });

    /** `n` searches at once, each on a new connection: the certificates they were served, by fingerprint. */
    async function connections(n: number): Promise<Set<string>> {
      const replies = await Promise.all(Array.from({ length: n }, () =>
        httpsGet(group.port, FAST_LOOKUP, { ca: pki.ca, servername: 'localhost' }, H)));
      expect(new Set(replies.map((r) => `${r.status} ${r.body}`))).toEqual(new Set([`200 ${body(begin, hitLine(2), ok)}`]));
      return new Set(replies.map((r) => r.fingerprint));
    }

    /**
     * SIGTERM to one member, as an operator restarts it; resolves once the
     * supervisor has started it again and it has answered, with the
     * certificates seen meanwhile. No request is sent until the member has
     * exited: one that reached its listening socket as it closed would be
     * reset (README, TLS).
     */
    async function restart(member: number, pid: number): Promise<Set<string>> {
      process.kill(pid, 'SIGTERM');
      await until(`member ${member} has exited`, () => !alive(pid), 10_000, () => sleep(25));
      await until(`member ${member} is started again`, () => memberPids(group).get(member) !== pid, 10_000, () => sleep(25));
      const served = requestsByMember(group).get(member) ?? 0;
      let seen = new Set<string>();
      await until(`member ${member} answers again`, () => (requestsByMember(group).get(member) ?? 0) > served, 15_000, async () => {
        seen = new Set([...seen, ...await connections(8)]);
      });
      return seen;
    }

    it('answers over TLS from both members, with the same bodies', async () => {
      expect(group.url).toBe(`https://127.0.0.1:${group.port}`);
      const replies = await Promise.all(Array.from({ length: 40 }, (_, i) =>
        httpsGet(group.port, i % 2 === 0 ? FAST_LOOKUP : SLOW_LOOKUP, { ca: pki.ca, servername: 'localhost' }, H)));
      expect(replies.filter((_, i) => i % 2 === 0).map((r) => r.body)).toEqual(Array(20).fill(body(begin, hitLine(2), ok)));
      expect(replies.filter((_, i) => i % 2 === 1).map((r) => withoutKeepAlives(r.body).body)).toEqual(Array(20).fill(LOOKUP_BODY));
      expect(new Set(replies.map((r) => r.fingerprint))).toEqual(new Set([fpA]));
      await until('the request log has every request', () => [...requestsByMember(group).values()].reduce((a, b) => a + b, 0) >= 40,
        5_000, () => sleep(25));
      const byMember = requestsByMember(group);
      expect(byMember.get(0), 'member 0 answered none of 40 connections').toBeGreaterThan(0);
      expect(byMember.get(1), 'member 1 answered none of 40 connections').toBeGreaterThan(0);
    });

    it('picks up replaced files member by member, as each is restarted; until then every member serves the old pair', async () => {
      install(pki.b);
      expect(await connections(24)).toEqual(new Set([fpA]));
      const before = memberPids(group);
      // Member 0 restarted (SIGTERM; the supervisor starts it again): new connections reaching it get the new certificate,
      // those reaching member 1 the old one.
      // Its own answers show it is back; 24 connections all on one member would be a 1 in 8 million chance.
      expect(await restart(0, before.get(0)!)).toContain(fpB);
      expect(await connections(24)).toEqual(new Set([fpA, fpB]));
      await restart(1, before.get(1)!);
      expect(await connections(24)).toEqual(new Set([fpB]));
    }, 45_000);
  });

  describe('a group member restarted onto a bad pair', () => {
    it('exits 2 with the one-line reason, never lingers half-started; the supervisor counts a crash loop and stops the group ' +
      '(README: check a new pair before restarting members)', async () => {
      install(pki.a);
      const group = await tls(['--processes', '2', '--workers', '1'], { RRSCAN_LOG_LEVEL: 'info' });
      try {
        const exited = new Promise<number | null>((r) => group.proc.once('exit', (code) => r(code)));
        install({ cert: pki.a.cert, key: pki.b.key });
        process.kill(memberPids(group).get(0)!, 'SIGTERM');
        expect(await exited).toBe(1);
        const line = `rrscan serve: --tls-key ${live.key} is not the private key of --tls-cert ${live.cert} (their public keys differ)`;
        expect(group.stderr().split('\n').filter((l) => l.startsWith('rrscan serve:'))).toEqual(Array(LIMITS.groupRestartsMax).fill(line));
        // The restart asked for, then each start on the bad pair: status 2, until the sixth death in a minute stops the group.
        const deaths = logLines(group).filter((l) => l['member'] === 0 && typeof l['code'] === 'number').map((l) => [l['code'], l['msg']]);
        expect(deaths).toEqual([[0, 'front-end process died; starting it again'],
          ...Array(LIMITS.groupRestartsMax - 1).fill([2, 'front-end process died; starting it again']),
          [2, 'front-end processes keep dying; stopping the group']]);
      } finally {
        await group.close();
      }
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
