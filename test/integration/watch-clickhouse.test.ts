// Standing watches on the ClickHouse tier (README "Standing watches"):
// against the private clickhouse-server the other ClickHouse tests start
// (Debian's 18.16), the same NDJSON files ingested into local shards and
// into ClickHouse, the same watches open on a local `rrscan serve` and on one
// with --clickhouse-url: both streams must carry the same objects, byte for
// byte (keep-alives aside), and both servers' /metrics the same lines for the
// watches open and their patterns. The local tier sees each file as a
// published shard; the ClickHouse tier finds it at its next poll.

import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nameToWire } from '../../src/dns/name.js';
import { CLICKHOUSE_SKIP_REASON, HAVE_CLICKHOUSE, startClickHouse, type ClickHouseServer } from '../helpers/clickhouse-server.js';
import { ingestBoth, ndjsonFilesBeside } from '../helpers/differential.js';
import { waitFor } from '../helpers/live-ingest.js';
import { addKey, begin, body, cliOk, get, startServer, tempPaths, type Server } from '../helpers/rrscan.js';
import { WatchClient } from '../helpers/watch-client.js';

if (!HAVE_CLICKHOUSE) console.warn(CLICKHOUSE_SKIP_REASON);

const { fresh, removeAll } = tempPaths();

const now = (): number => Math.floor(Date.now() / 1000);
const a = (rrname: string, t: number) => ({ rrname, rrtype: 'A', rdata: ['192.0.2.1'], count: 1, time_first: t, time_last: t });
const ns = (rrname: string, target: string, t: number) =>
  ({ rrname, rrtype: 'NS', rdata: [target], count: 1, time_first: t, time_last: t });
const obj = (rrname: string, t: number, rrtype = 'A') => ({ obj: { rrname, rrtype, time_first: t } });

/** The lines of a server's /metrics for the watches open and their patterns (watch-metrics.ts: the same on both tiers). */
async function watchLines(server: Server): Promise<string[]> {
  const r = await get({ port: server.metricsPort! }, '/metrics');
  return r.body.split('\n').filter((l) => /^rrscan_watch(es_open|_patterns)[ {]/.test(l));
}

const openWatches = (n: number, rrnames: number, rdata: number): string[] =>
  [`rrscan_watches_open ${n}`, `rrscan_watch_patterns{target="rrnames"} ${rrnames}`, `rrscan_watch_patterns{target="rdata"} ${rdata}`];

describe.skipIf(!HAVE_CLICKHOUSE)('standing watches on the ClickHouse tier', () => {
  let ch: ClickHouseServer;
  let dir: string;
  let key: string;
  let local: Server;
  let remote: Server;
  let files = 0;

  /** Ingests `objs` as one NDJSON file into both tiers. */
  const ingest = (objs: object[]): void => {
    const [file] = ndjsonFilesBeside(path.join(dir, `f${files++}`), [objs]);
    ingestBoth(dir, ch.url, file!);
  };

  beforeAll(async () => {
    ch = await startClickHouse();
    dir = path.join(fresh(), 'data');
    cliOk(['clickhouse', 'init', '--url', ch.url]);
    // Known long ago: a name seen again later must not come as new.
    const seed = [[a('old.ch-watch.test.', now() - 86_400)]];
    cliOk(['ingest', '--data', dir, ...ndjsonFilesBeside(path.join(dir, '..', 'seed'), seed)]);
    cliOk(['ingest', '--clickhouse-url', ch.url, ...ndjsonFilesBeside(path.join(dir, '..', 'seed2'), seed)]);
    key = addKey(dir, ['--unlimited']);
    [local, remote] = await Promise.all([startServer(dir, ['--metrics-port', '0']),
      startServer(dir, ['--clickhouse-url', ch.url, '--metrics-port', '0'])]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([local?.close(), remote?.close()]);
    await ch?.close();
    removeAll();
  });

  it('delivers the same new tuples as the local tier, not those seen before, not those that do not match; ' +
    'a catch-up gives the same on both', async () => {
    const path1 = `/pdns/v2/watch/regex/rrnames/${encodeURIComponent('ch-watch\\.test\\.$')}`;
    const path2 = `/pdns/v2/watch/glob/rdata/${encodeURIComponent('*.ns.ch-watch.test.')}`;
    for (const s of [local!, remote!]) expect(await watchLines(s)).toEqual(openWatches(0, 0, 0));
    const watches = [local, remote].flatMap((s) => [new WatchClient(s.port, path1, key), new WatchClient(s.port, path2, key)]);
    await Promise.all(watches.map((w) => w.begun()));
    // A watch that begins while the local feed matches a snapshot is attached (and counted) right after that match.
    for (const s of [local!, remote!]) {
      const open = await waitFor('the watches attached', async () => {
        const l = await watchLines(s);
        return l[0] === 'rrscan_watches_open 2' ? l : undefined;
      });
      expect(open).toEqual(openWatches(2, 1, 1));
    }
    const t = now();
    ingest([a('old.ch-watch.test.', t), a('other.example.', t), a('b.ch-watch.test.', t), a('a.ch-watch.test.', t + 1),
      ns('z.ch-watch.test.', 'x.ns.ch-watch.test.', t)]);
    const ingested = performance.now();
    const [ln, lr, rn, rr] = watches;
    await rn!.objectsAtLeast(3);
    console.log(`watch-clickhouse: ingest to push on the ClickHouse tier: ${Math.round(performance.now() - ingested)} ms ` +
      '(poll every LIMITS.watchClickhousePollMs)');
    await Promise.all([ln!.objectsAtLeast(3), lr!.objectsAtLeast(1), rr!.objectsAtLeast(1)]);
    const names = body(begin, obj('b.ch-watch.test.', t), obj('z.ch-watch.test.', t, 'NS'), obj('a.ch-watch.test.', t + 1));
    expect(ln!.body()).toBe(names);
    expect(rn!.body()).toBe(names);
    const wire = Buffer.from(nameToWire('x.ns.ch-watch.test.')).toString('hex').toUpperCase();
    const rdata = body(begin, { obj: { rdata: 'x.ns.ch-watch.test.', rrtype: 'NS', raw_rdata: wire, time_first: t } });
    expect(lr!.body()).toBe(rdata);
    expect(rr!.body()).toBe(rdata);
    for (const w of watches) w.hangUp();

    // Resuming from a time_first: the published data first (in time_first order), then live.
    const resumed = [local, remote].map((s) => new WatchClient(s.port, `${path1}?time_first_after=${t}`, key));
    await Promise.all(resumed.map((w) => w.objectsAtLeast(3)));
    const t2 = now() + 2;
    ingest([a('c.ch-watch.test.', t2)]);
    await Promise.all(resumed.map((w) => w.objectsAtLeast(4)));
    for (const w of resumed) expect(w.body()).toBe(names + body(obj('c.ch-watch.test.', t2)));
    for (const w of resumed) w.hangUp();
    for (const s of [local!, remote!]) {
      const closed = await waitFor('the watches closed', async () => {
        const l = await watchLines(s);
        return l[0] === 'rrscan_watches_open 0' ? l : undefined;
      });
      expect(closed).toEqual(openWatches(0, 0, 0));
    }
  }, 120_000);
});
