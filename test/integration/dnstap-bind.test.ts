// End to end with BIND 9 (Debian's bind9 and bind9-dnsutils): an
// authoritative named and a recursive named reaching it through static-stub
// zones send dnstap to `rrscan ingest --listen`; names asked with dig are
// then found by lookup and regex on a running `rrscan serve`.
//
// BIND logs an authoritative answer as AUTH_RESPONSE only when the query
// did not ask for recursion (RD=0: dig +norec, and every resolver); with
// RD=1 the same answer is a CLIENT_RESPONSE. Both are enabled here, so the
// test covers AUTH_RESPONSE and RESOLVER_RESPONSE (query_zone is the
// bailiwick) and CLIENT_RESPONSE (bailiwick inferred) from both servers.

import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addKey, startServer, tempPaths } from '../helpers/rrscan.js';
import { results, startReceiver, waitForResults } from '../helpers/live-ingest.js';
import { common, dig, skipReason, startNamed, type Named } from '../helpers/named.js';
import { freePort } from '../../src/lib/free-port.js';

if (skipReason !== undefined) console.warn(`dnstap-bind.test.ts skipped: ${skipReason}; .ci/run installs it`);

const { fresh, removeAll } = tempPaths();
afterAll(removeAll);

const ZONE = 'live-e2e.test.';
const OTHER = 'other-e2e.test.';
const HOSTS = 10;

function zoneFile(origin: string, body: string): string {
  return `$ORIGIN ${origin}\n$TTL 300\n@ IN SOA ns1.${ZONE} hostmaster.${ZONE} 2026112501 3600 600 86400 300\n@ IN NS ns1.${ZONE}\n${body}`;
}

const liveZone = zoneFile(ZONE, [
  'ns1 IN A 127.0.0.1',
  ...Array.from({ length: HOSTS }, (_, i) => `h${i} IN A 192.0.2.${i + 1}`),
  'mail IN A 192.0.2.100',
  '@ IN MX 10 mail',
  'txt IN TXT "seen by a client response"',
  'res-only IN A 192.0.2.200',
  `cname IN CNAME www.${OTHER}`,
  '',
].join('\n'));
const otherZone = zoneFile(OTHER, 'www IN A 198.51.100.7\n');

const row = (rrname: string, rrtype: string, bailiwick: string, rdata: string[]) => ({ rrname, rrtype, bailiwick, rdata });
const strip = (objs: Record<string, unknown>[]) =>
  objs.map(({ rrname, rrtype, bailiwick, rdata }) => ({ rrname, rrtype, bailiwick, rdata }));

describe.skipIf(skipReason !== undefined)('BIND 9 dnstap into rrscan ingest --listen', () => {
  it('authoritative and recursive named: names asked with dig are found by lookup and regex', async () => {
    const d = fresh();
    const data = path.join(d, 'data');
    const authDir = path.join(d, 'auth');
    const resDir = path.join(d, 'resolver');
    for (const dir of [authDir, resDir]) spawnSync('mkdir', ['-p', dir]);
    writeFileSync(path.join(authDir, 'live.zone'), liveZone);
    writeFileSync(path.join(authDir, 'other.zone'), otherZone);
    const authSock = path.join(d, 'auth.sock');
    const resSock = path.join(d, 'resolver.sock');
    // Free for TCP; named takes the same port for UDP too, which nothing else here uses.
    const [authPort, resPort] = [await freePort(), await freePort()];

    // The sockets must exist before named starts: it connects at start-up.
    const receiver = await startReceiver(data, [`unix:${authSock}`, `unix:${resSock}`]);
    const named: Named[] = [];
    const key = addKey(data);
    const server = await startServer(data);
    try {
      named.push(await startNamed(authDir, `options {${common(authDir, authSock)}
  listen-on port ${authPort} { 127.0.0.1; };
  recursion no;
  dnstap { auth; client response; };
};
controls { };
zone "${ZONE}" { type primary; file "${authDir}/live.zone"; };
zone "${OTHER}" { type primary; file "${authDir}/other.zone"; };
`));
      // "port" is where this named sends its queries (and the static-stub servers' port); it listens elsewhere.
      named.push(await startNamed(resDir, `options {${common(resDir, resSock)}
  port ${authPort};
  listen-on port ${resPort} { 127.0.0.1; };
  recursion yes;
  allow-recursion { 127.0.0.1; };
  dnstap { resolver; client response; };
};
controls { };
zone "${ZONE}" { type static-stub; server-addresses { 127.0.0.1; }; };
zone "${OTHER}" { type static-stub; server-addresses { 127.0.0.1; }; };
`));
      const before = Math.floor(Date.now() / 1000);
      for (let i = 0; i < HOSTS; i++) expect(dig(authPort, ['+norec', `h${i}.${ZONE}`, 'A'])).toBe(`192.0.2.${i + 1}`);
      // An authoritative BIND never follows a CNAME into another zone, even one it serves.
      expect(dig(authPort, ['+norec', `cname.${ZONE}`, 'A'])).toBe(`www.${OTHER}`);
      expect(dig(authPort, ['+rec', `txt.${ZONE}`, 'TXT'])).toBe('"seen by a client response"');
      expect(dig(resPort, [ZONE, 'MX'])).toBe(`10 mail.${ZONE}`);
      expect(dig(resPort, [`res-only.${ZONE}`, 'A'])).toBe('192.0.2.200');
      expect(dig(resPort, [`cname.${ZONE}`, 'A'])).toBe(`www.${OTHER}\n198.51.100.7`);
      const asked = performance.now();

      const hosts = await waitForResults(server, key, `/pdns/v2/regex/rrnames/${encodeURIComponent('^h[0-9]\\.live-e2e\\.test\\.$')}`,
        HOSTS, 30_000);
      console.log(`dnstap-bind: dig to visible in serve (--flush-seconds 1): ${Math.round(performance.now() - asked)} ms`);
      // Flex (regex) results name the RRsets; lookup gives their data.
      expect(hosts.map((o) => `${String(o['rrname'])} ${String(o['rrtype'])}`).sort())
        .toEqual(Array.from({ length: HOSTS }, (_, i) => `h${i}.${ZONE} A`));
      const h3 = await results(server, key, `/pdns/v2/lookup/rrset/name/h3.${ZONE}/A`);
      expect(h3).toHaveLength(1);
      expect(h3[0]).toMatchObject({ count: 1, ...row(`h3.${ZONE}`, 'A', ZONE, ['192.0.2.4']) });
      const t = h3[0]!['time_first'] as number;
      expect(t >= before && t <= Math.ceil(Date.now() / 1000)).toBe(true);

      // RESOLVER_RESPONSE, query_zone live-e2e.test.: found only through the resolver.
      expect(strip(await waitForResults(server, key, `/pdns/v2/lookup/rrset/name/res-only.${ZONE}`, 1, 30_000)))
        .toEqual([row(`res-only.${ZONE}`, 'A', ZONE, ['192.0.2.200'])]);
      // The MX answer twice: the resolver's RESOLVER_RESPONSE (query_zone) and its CLIENT_RESPONSE, whose
      // bailiwick is inferred: no SOA or NS in it, so the question's parent (sensor.ts rule 4), "test.".
      expect(strip(await waitForResults(server, key, `/pdns/v2/lookup/rrset/name/${ZONE}/MX`, 2, 30_000)))
        .toEqual([row(ZONE, 'MX', ZONE, [`10 mail.${ZONE}`]), row(ZONE, 'MX', 'test.', [`10 mail.${ZONE}`])]);
      // CLIENT_RESPONSE (dig +rec to the authority): bailiwick inferred, the question's parent.
      expect(strip(await waitForResults(server, key, `/pdns/v2/lookup/rrset/name/txt.${ZONE}`, 1, 30_000)))
        .toEqual([row(`txt.${ZONE}`, 'TXT', ZONE, ['"seen by a client response"'])]);
      // The CNAME target rode along in the resolver's answer to the client (bailiwick inferred: live-e2e.test.),
      // refused there as out of bailiwick; kept from the resolver's own question to other-e2e.test.
      expect(strip(await waitForResults(server, key, `/pdns/v2/lookup/rrset/name/www.${OTHER}`, 1, 30_000)))
        .toEqual([row(`www.${OTHER}`, 'A', OTHER, ['198.51.100.7'])]);
      expect(strip(await results(server, key, `/pdns/v2/lookup/rrset/name/cname.${ZONE}`)))
        .toEqual([row(`cname.${ZONE}`, 'CNAME', ZONE, [`www.${OTHER}`])]);
    } finally {
      for (const n of named) await n.stop();
      await server.close();
      expect(await receiver.stop()).toBe(0);
    }
    const stopped = receiver.logs().find((l) => l['msg'] === 'receiver stopped')!;
    expect(stopped['sendersFailed']).toBe(0);
    expect(stopped['outOfBailiwick']).toBe(1);
    expect(stopped['rejected']).toBe(0);
  }, 120_000);
});
