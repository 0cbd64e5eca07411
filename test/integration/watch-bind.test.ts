// A standing watch end to end with BIND 9 (README "Standing watches"): an
// authoritative named sends dnstap to `rrscan ingest --listen`
// (--flush-seconds 1), a watch on a running `rrscan serve` is open, and
// names are asked with dig. A matching name never seen before is pushed
// once; a known matching name, and a name that does not match, are not; a
// client that hangs up and comes back with time_first_after set to the last
// time_first it received gets what it missed, then the live tail.
//
// Each object's time_first is the dnstap response time BIND stamped, which
// the test reads back through a lookup of the same name: so every body is
// compared exactly. The same rules run faster, with the times chosen by the
// test, in watch.test.ts (a Frame Streams sender instead of BIND).

import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/lib/free-port.js';
import { startReceiver, waitForResults } from '../helpers/live-ingest.js';
import { common, dig, skipReason, startNamed, type Named } from '../helpers/named.js';
import { addKey, begin, body, startServer, tempPaths } from '../helpers/rrscan.js';
import { WatchClient } from '../helpers/watch-client.js';

if (skipReason !== undefined) console.warn(`watch-bind.test.ts skipped: ${skipReason}; .ci/run installs it`);

const { fresh, removeAll } = tempPaths();
afterAll(removeAll);

const ZONE = 'watch-bind.test.';
const HOSTS = ['watch-me-1', 'watch-me-2', 'watch-me-3', 'watch-me-known', 'plain'];

const zone = `$ORIGIN ${ZONE}\n$TTL 300\n@ IN SOA ns1.${ZONE} hostmaster.${ZONE} 2026112601 3600 600 86400 300\n` +
  `@ IN NS ns1.${ZONE}\nns1 IN A 127.0.0.1\n${HOSTS.map((h, i) => `${h} IN A 192.0.2.${i + 1}\n`).join('')}`;

describe.skipIf(skipReason !== undefined)('a standing watch over BIND 9 dnstap', () => {
  it('pushes a new matching name once, not a known one or one that does not match; a client that resumes gets what it missed',
    async () => {
      const d = fresh();
      const data = path.join(d, 'data');
      const authDir = path.join(d, 'auth');
      spawnSync('mkdir', ['-p', authDir]);
      writeFileSync(path.join(authDir, 'watch.zone'), zone);
      const sock = path.join(d, 'auth.sock');
      const port = await freePort();
      const receiver = await startReceiver(data, [`unix:${sock}`]);
      const key = addKey(data);
      const server = await startServer(data);
      let named: Named | undefined;
      /** The time_first a lookup gives `host` once it is published (the time BIND stamped its answer). */
      const firstSeen = async (host: string): Promise<number> =>
        (await waitForResults(server, key, `/pdns/v2/lookup/rrset/name/${host}.${ZONE}/A`, 1, 30_000))[0]!['time_first'] as number;
      const ask = (host: string, i: number) => expect(dig(port, ['+norec', `${host}.${ZONE}`, 'A'])).toBe(`192.0.2.${i + 1}`);
      const obj = (host: string, t: number) => ({ obj: { rrname: `${host}.${ZONE}`, rrtype: 'A', time_first: t } });
      const pattern = encodeURIComponent('^watch-me-[0-9a-z]+\\.watch-bind\\.test\\.$');
      try {
        named = await startNamed(authDir, `options {${common(authDir, sock)}
  listen-on port ${port} { 127.0.0.1; };
  recursion no;
  dnstap { auth; };
};
controls { };
zone "${ZONE}" { type primary; file "${authDir}/watch.zone"; };
`);
        // Known before the watch opens.
        ask('watch-me-known', 3);
        const t0 = await firstSeen('watch-me-known');
        // A second later, so that no name asked from now on shares its time_first (a resume below would repeat that second).
        while (Math.floor(Date.now() / 1000) <= t0) await new Promise((resolve) => setTimeout(resolve, 50));
        const w = new WatchClient(server.port, `/pdns/v2/watch/regex/rrnames/${pattern}`, key);
        await w.begun();
        const asked = performance.now();
        ask('watch-me-known', 3);
        ask('plain', 4);
        ask('watch-me-1', 0);
        await w.objectsAtLeast(1, 30_000);
        console.log(`watch-bind: dig to push (--flush-seconds 1): ${Math.round(performance.now() - asked)} ms`);
        const t1 = await firstSeen('watch-me-1');
        // Once watch-me-1 is in, the shards before it (the known name again, plain) have been matched: nothing else is on its way.
        expect(w.body()).toBe(body(begin, obj('watch-me-1', t1)));

        w.hangUp();
        await w.ended;
        ask('watch-me-2', 1);
        const t2 = await firstSeen('watch-me-2');
        const r = new WatchClient(server.port, `/pdns/v2/watch/regex/rrnames/${pattern}?time_first_after=${t1}`, key);
        await r.objectsAtLeast(2, 30_000);
        ask('watch-me-3', 2);
        await r.objectsAtLeast(3, 30_000);
        const t3 = await firstSeen('watch-me-3');
        expect(r.body()).toBe(body(begin, obj('watch-me-1', t1), obj('watch-me-2', t2), obj('watch-me-3', t3)));
        r.hangUp();
      } finally {
        await named?.stop();
        await server.close();
        expect(await receiver.stop()).toBe(0);
      }
    }, 120_000);
});
