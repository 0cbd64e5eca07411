// The ClickHouse data tier against the local shards, over HTTP: the same
// files ingested into both (`rrscan ingest --data` and `--clickhouse-url`),
// two `rrscan serve`s (one with `--clickhouse-url`), and the same requests
// must get byte-identical answers: generated flexible searches (patterns
// from the data, case mixes, anchors, globs, excludes, rrtype filters,
// fences, limits, offsets, bad patterns), on generated data written in two
// files so that sightings are summed, plus the real root zone and the DNSDB
// examples when ../shared/data/real is there.
//
// Standard searches likewise: exact names, wildcards, bailiwicks, rdata
// names, addresses, CIDRs and ranges, raw rdata, summaries, fences, limits,
// offsets.
//
// Also: aggr=false answers as the local tier compacted into one shard,
// init is idempotent, a file ingested again changes nothing on either tier
// (the input ledgers) and `--again` adds it on both alike, a hung-up query
// is killed in ClickHouse, a query over max_execution_time and ClickHouse
// going away both end the stream with an in-stream `failed`.
//
// All of it runs twice: on Debian's clickhouse-server (18.16) and on
// ClickHouse 26.7's engine through chdb (helpers/chdb-http.ts), so the same
// SQL is proven on the oldest and a current release. The tests of server
// behaviour (KILL QUERY, hang-ups, max_execution_time on a running query)
// run on the real server only: chdb-http does not emulate them. On 26.7 the
// flex tables have the ngram skip index and flexible searches carry its
// trigram conditions (schema.ts NGRAM_INDEX), so its answers are proven too.

import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClickHouse, errorCode, TIMEOUT_CODE } from '../../src/clickhouse/client.js';
import { NGRAM_INDEX } from '../../src/clickhouse/schema.js';
import { serverTraits } from '../../src/clickhouse/server-traits.js';
import { findTables } from '../../src/clickhouse/tables.js';
import { differentialData, flexPaths, lookupPaths } from '../fixtures/differential-dataset.js';
import { FLEX_FIXTURE } from '../fixtures/flex-dataset.js';
import { CHDB_SKIP_REASON, HAVE_CHDB, startChdbHttp } from '../helpers/chdb-http.js';
import { CLICKHOUSE_SKIP_REASON, HAVE_CLICKHOUSE, startClickHouse, type ClickHouseUnderTest } from '../helpers/clickhouse-server.js';
import { differences, ingestBoth as ingestInto, ndjsonFilesBeside } from '../helpers/differential.js';
import {
  addKey, begin, body, cli, cliOk, get, HAVE_REAL, REAL, REAL_SKIP_REASON, removeDir, startServer, streamGet, tempDir, until,
  type Server,
} from '../helpers/rrscan.js';

if (!HAVE_CLICKHOUSE) console.warn(CLICKHOUSE_SKIP_REASON);
if (!HAVE_CHDB) console.warn(CHDB_SKIP_REASON);
if (!HAVE_REAL) console.warn(`clickhouse-differential: ${REAL_SKIP_REASON}; generated data only`);

const REAL_FILES = ['zones/root.zone.2024101100', 'zones/arpa.zone.2024101100', 'json/dnsdb-v2-doc-examples.ndjson',
  'pcap/compactor-dns-20160629.pcap', 'pcap/dnscap-dns-20161020.pcap', 'dnstap/bind9-dnstap.saved.fstrm'];
/** Searches whose answers come from the real data. */
const REAL_PATHS = ['regex/rrnames/nic', 'regex/rrnames/%5Ea%5C.', 'glob/rrnames/*.arpa.', 'regex/rdata/gtld', 'glob/rdata/*.net./NS',
  'regex/rrnames/.?limit=100&offset=50', 'regex/rdata/.?limit=200', 'regex/rrnames/%5Cd/A', 'regex/rrnames/.?exclude=com',
  'lookup/rrset/name/com', 'lookup/rrset/name/*.arpa', 'lookup/rrset/name/+.root-servers.net', 'lookup/rrset/name/a.nic.*?limit=50',
  'lookup/rrset/name/in-addr.arpa/NS/arpa', 'lookup/rdata/name/a.gtld-servers.net', 'lookup/rdata/name/*.nic.de',
  'lookup/rdata/name/ns1.*', 'lookup/rdata/ip/192.5.6.30', 'lookup/rdata/ip/192.0.0.0,8?limit=50', 'lookup/rdata/ip/2001:500::,24',
  'lookup/rdata/raw/C005061E', 'summarize/rrset/name/*.de', 'summarize/rdata/ip/192.0.0.0,8?max_count=5',
  'lookup/rrset/name/*.?limit=300&time_first_after=1500000000', 'lookup/rrset/name/*.?humantime=true&limit=20'];
const SEED = 15;
const GENERATED_RRSETS = 3_000;
const QUERIES = 400;
const LOOKUPS = 400;

/**
 * The ClickHouse releases the tier is proven on; `server`: a real server (KILL QUERY, streaming, timeouts);
 * `ngrams`: it has skip indexes, so init adds the flex tables' ngram index and searches use it.
 */
const RELEASES = [
  { release: "Debian's clickhouse-server", have: HAVE_CLICKHOUSE, start: (): Promise<ClickHouseUnderTest> => startClickHouse(),
    server: true, ngrams: false },
  { release: 'ClickHouse 26.7 through chdb', have: HAVE_CHDB, start: (): Promise<ClickHouseUnderTest> => startChdbHttp(),
    server: false, ngrams: true },
];

const suite = (release: string) => `the ClickHouse tier on ${release} answers as the local shards do`;
for (const { release, have, start, server, ngrams } of RELEASES) describe.skipIf(!have)(suite(release), () => {
  let ch: ClickHouseUnderTest;
  let dir: string;
  let key: string;
  let local: Server;
  let remote: Server;
  let files: string[];
  const data = differentialData(GENERATED_RRSETS, SEED);

  const H = () => ({ 'X-API-Key': key });
  const ingestBoth = (file: string): void => ingestInto(dir, ch.url, file);

  beforeAll(async () => {
    const t0 = performance.now();
    ch = await start();
    console.log(`ClickHouse started in ${(performance.now() - t0).toFixed(0)} ms, ${ch.rssKiB()} KiB resident`);
    dir = tempDir();
    files = ndjsonFilesBeside(dir, [...data.files, FLEX_FIXTURE]);
    // Real data through every parser: zone files, DNSDB NDJSON, pcap, dnstap.
    if (HAVE_REAL) files.push(...REAL_FILES.map((f) => path.join(REAL, f)));
    expect(cliOk(['clickhouse', 'init', '--url', ch.url])).toMatch(/^clickhouse init: database rrscan ready on ClickHouse \d+\.\d+/);
    // One ingest per file: the local side gets a shard each, which its merge combines.
    for (const f of files) ingestBoth(f);
    key = addKey(dir, ['--unlimited']);
    [local, remote] = await Promise.all([startServer(dir), startServer(dir, ['--clickhouse-url', ch.url])]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([local?.close(), remote?.close()]);
    await ch?.close();
    if (dir !== undefined) {
      removeDir(dir);
      for (const f of files ?? []) if (!f.startsWith(REAL)) removeDir(f);
    }
  });

  /** The paths whose answers differ between the local shards and ClickHouse. */
  const differing = (paths: readonly string[]) => differences(local, remote, paths, H());

  it('init again changes nothing', async () => {
    const client = new ClickHouse(ch.url);
    const count = () => client.exec('SELECT count() FROM rrscan.rrsets');
    const before = await count();
    expect(cliOk(['clickhouse', 'init', '--url', ch.url])).toMatch(/ready/);
    expect(await count()).toBe(before);
    client.close();
  });

  it(`init ${ngrams ? 'adds' : 'has no'} the flex tables' ngram index, and searches find out the same way`, async () => {
    const client = new ClickHouse(ch.url);
    expect((await serverTraits(client)).skipIndexes).toBe(ngrams);
    expect((await findTables(client, 'rrscan')).ngramIndex).toBe(ngrams);
    if (ngrams) {
      // Flex tables made here have granules of 1,024 rows, and the index's bloom filter is sized for them.
      const indexed = () => client.exec(`SELECT table, type_full FROM system.data_skipping_indices WHERE database = 'rrscan' ` +
        `AND name = '${NGRAM_INDEX.name}' ORDER BY table FORMAT TabSeparated`);
      const both = 'flex_names\tngrambf_v1(3, 2048, 2, 0)\nflex_rdata\tngrambf_v1(3, 2048, 2, 0)\n';
      expect(await indexed()).toBe(both);
      expect(await client.exec("SELECT engine_full FROM system.tables WHERE database = 'rrscan' AND name = 'flex_names'"))
        .toMatch(/\bindex_granularity = 1024\b/);
      // Tables made before an upgrade: init adds the index and builds it for the rows there.
      await client.exec(`ALTER TABLE rrscan.flex_names DROP INDEX ${NGRAM_INDEX.name}`);
      expect((await findTables(client, 'rrscan')).ngramIndex).toBe(false);
      cliOk(['clickhouse', 'init', '--url', ch.url]);
      expect(await indexed()).toBe(both);
      expect((await findTables(client, 'rrscan')).ngramIndex).toBe(true);
    }
    client.close();
  });

  it('right-hand wildcard lookups of names with escaped bytes (\\. \\\\ \\032) get byte-identical answers', async () => {
    // A forward prefix of names whose labels hold escapes: both tiers must agree on where a label ends.
    const rr = (rrname: string) => ({ rrname, rrtype: 'A', rdata: ['192.0.2.9'], bailiwick: 'esc.example.', count: 1,
      time_first: 1_500_000_000, time_last: 1_600_000_000 });
    const names = ['w.dot\\.inside.esc.example.', 'w.back\\\\slash.esc.example.', 'w.sp\\032ace.esc.example.',
      'w.plain.esc.example.', 'dot\\.first.esc.example.', 'esc.example.'];
    const [file] = ndjsonFilesBeside(`${dir}-esc`, [names.map(rr)]);
    files.push(file!);
    ingestBoth(file!);
    const found = ['lookup/rrset/name/w.*', 'lookup/rrset/name/w.*?limit=2', 'lookup/rrset/name/*.esc.example',
      'summarize/rrset/name/w.*'];
    expect(await differing(found)).toEqual([]);
    for (const p of found) expect((await get(local, `/pdns/v2/${p}`, H())).body, p).toContain('"obj"');
    // The four w. names under esc.example (three with escapes) are among the answers.
    expect((await get(local, `/pdns/v2/${found[0]!}`, H())).body.match(/"rrname":"w\.[^"]*\.esc\.example\."/g)).toHaveLength(4);
  });

  it("flexible searches for LIKE's metacharacters (_ % \\) get byte-identical answers", async () => {
    // Trigram conditions are LIKE patterns: an unescaped \\ would lose these values, an unescaped _ or % would only widen.
    const rr = (rrname: string, rrtype: string, rdata: string[]) =>
      ({ rrname, rrtype, rdata, bailiwick: 'like.example.', count: 2, time_first: 1_500_000_000, time_last: 1_600_000_000 });
    const file = path.join(dir, '..', `${path.basename(dir)}-like.ndjson`);
    files.push(file);
    writeFileSync(file, [
      rr('_dmarc.like.example.', 'TXT', ['"v=DMARC1; p=none; pct=100%"']), rr('a_b.like.example.', 'A', ['192.0.2.1']),
      rr('axb.like.example.', 'A', ['192.0.2.2']), rr('x%y.like.example.', 'A', ['192.0.2.3']),
      rr('path.like.example.', 'TXT', ['"c:\\\\dir\\\\x"']), rr('nopath.like.example.', 'TXT', ['"c:dir"']),
    ].map((o) => JSON.stringify(o)).join('\n') + '\n');
    ingestBoth(file);
    const found = ['regex/rrnames/_dmarc', 'regex/rrnames/a_b%5C.', 'glob/rrnames/*a_b*', 'regex/rrnames/x%25y',
      'regex/rdata/100%25', 'regex/rdata/c%3A%5C%5C', 'regex/rdata/%5C%5Cdir%5C%5C', 'regex/rdata/DMARC1%3B%20P%3D'];
    const paths = [...found, 'regex/rrnames/a_c', 'regex/rdata/c%3Adir%5C%5C', 'glob/rdata/*%25%25*'];
    expect(await differing(paths)).toEqual([]);
    for (const p of found) expect((await get(remote, `/pdns/v2/${p}`, H())).body, p).toContain('"obj"');
  });

  it(`${QUERIES} generated flexible searches get byte-identical answers`, async () => {
    const paths = flexPaths(data, QUERIES, SEED);
    expect(await differing(paths)).toEqual([]);
  }, 120_000);

  it.skipIf(!HAVE_REAL)('searches of the real data (root and arpa zones, DNSDB examples, pcap, dnstap) get byte-identical answers',
    async () => {
      expect(await differing(REAL_PATHS)).toEqual([]);
      const bodies = await Promise.all(REAL_PATHS.map(async (p) => (await get(remote, `/pdns/v2/${p}`, H())).body));
      expect(bodies.filter((b) => b.includes('"obj"')).length).toBeGreaterThan(REAL_PATHS.length - 3);
    }, 60_000);

  it('answers with results, limits and failures among them, not only empty ones', async () => {
    const paths = flexPaths(data, 60, SEED);
    const bodies = await Promise.all(paths.map(async (p) => (await get(remote, `/pdns/v2/${p}`, H())).body));
    const ends = bodies.map((b) => JSON.parse(b.trimEnd().split('\n').pop()!) as { cond: string; msg?: string });
    expect(ends.filter((e) => e.cond === 'succeeded' && e.msg === undefined).length).toBeGreaterThan(5);
    expect(ends.filter((e) => e.cond === 'limited').length).toBeGreaterThan(5);
    expect(bodies.filter((b) => b.includes('"obj"')).length).toBeGreaterThan(20);
  }, 60_000);

  it('ingesting a file again changes no answer on either tier; --again adds it again on both, identically', async () => {
    const paths = [...flexPaths(data, 60, SEED + 1), ...lookupPaths(data, 60, SEED + 1)].filter((p) => p.includes('time_'));
    const answers = () => Promise.all(paths.map(async (p) => (await get(local, `/pdns/v2/${p}`, H())).body));
    const before = await answers();
    for (const [tier, where] of [['--data', dir], ['--clickhouse-url', ch.url]] as const) {
      const r = cli(['ingest', tier, where, files[1]!]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(new RegExp(`^rrscan ingest: ${files[1]!}: already ingested \\(sha256 [0-9a-f]{12}…, ` +
        `${tier === '--data' ? 'shard \\S+\\.rrs' : 'ClickHouse database rrscan, \\S+Z'}\\); skipped\n$`));
    }
    expect(await answers()).toEqual(before);
    expect(await differing(paths)).toEqual([]);

    ingestInto(dir, ch.url, files[1]!, ['--again']);
    // The local server sees the new shard at its next manifest check.
    let after = before;
    await until('the local server serves the new shard', async () => (after = await answers()).some((b, i) => b !== before[i]),
      10_000, 100);
    expect(after.filter((b, i) => b !== before[i]).length).toBeGreaterThan(3);
    expect(await differing(paths)).toEqual([]);
  }, 120_000);

  it(`${LOOKUPS} generated standard searches get byte-identical answers`, async () => {
    const paths = lookupPaths(data, LOOKUPS, SEED);
    expect(await differing(paths)).toEqual([]);
    const bodies = await Promise.all(paths.slice(0, 80).map(async (p) => (await get(remote, `/pdns/v2/${p}`, H())).body));
    expect(bodies.filter((b) => b.includes('"obj"')).length).toBeGreaterThan(30);
    expect(bodies.filter((b) => b.includes('"limited"')).length).toBeGreaterThan(3);
  }, 120_000);

  it('raw rdata lookups get byte-identical answers', async () => {
    const wires = ['C000020A', '0A0002', ...data.rdata.filter((t) => /^\d+\.\d+\.\d+\.\d+$/.test(t)).slice(0, 20)
      .map((ip) => Buffer.from(ip.split('.').map(Number)).toString('hex')), '036e7331076578616d706c6503636f6d00'];
    const paths = wires.flatMap((w) => [
      `lookup/rdata/raw/${w}`, `lookup/rdata/raw/${w}/A?limit=2`, `summarize/rdata/raw/${w.toLowerCase()}`,
    ]);
    expect(await differing(paths)).toEqual([]);
    expect((await get(remote, `/pdns/v2/${paths[6]!}`, H())).body).toContain('"obj"');
  });

  it.skipIf(!server)('a cancelled query is killed in ClickHouse, and one over max_execution_time fails with code 159', async () => {
    const client = new ClickHouse(ch.url);
    const endless = 'SELECT number FROM system.numbers WHERE number = 18446744073709551615';
    const running = client.select(endless, { lines: () => true, end: () => undefined, error: () => undefined });
    const seen = () => client.exec(`SELECT count() FROM system.processes WHERE query_id = '${running.queryId}'`);
    await until('the query is running in ClickHouse', async () => (await seen()).trim() === '1');
    running.cancel();
    await until('the cancelled query is gone from ClickHouse', async () => (await seen()).trim() === '0');

    const failed = await new Promise<string>((resolve) => {
      client.select(endless, { lines: () => true, end: () => resolve('ended'), error: (e) => resolve(e.message) }, 1);
    });
    expect(errorCode(failed)).toBe(TIMEOUT_CODE);
    client.close();
  }, 30_000);

  it('aggr=false: the answers of the local tier with its shards compacted into one', async () => {
    cliOk(['compact', '--data', dir]);
    const compacted = await startServer(dir);
    try {
      const wires = data.rdata.filter((t) => /^\d+\.\d+\.\d+\.\d+$/.test(t)).slice(0, 10)
        .map((ip) => `lookup/rdata/raw/${Buffer.from(ip.split('.').map(Number)).toString('hex')}`);
      const paths = [...lookupPaths(data, 150, SEED + 2), ...wires, ...REAL_PATHS.filter((p) => p.startsWith('lookup/'))]
        .map((p) => `${p}${p.includes('?') ? '&' : '?'}aggr=false`);
      const differ: string[] = [];
      for (const p of paths) {
        const want = await get(compacted, `/pdns/v2/${p}`, H());
        const got = await get(remote, `/pdns/v2/${p}`, H());
        if (got.body !== want.body) differ.push(`${p}\n--- local\n${want.body}--- clickhouse\n${got.body}`);
      }
      expect(differ).toEqual([]);
    } finally {
      await compacted.close();
    }
  }, 120_000);

  it('a search statement runs read-only: whatever its text, it cannot change data or schema', async () => {
    const client = new ClickHouse(ch.url);
    const refused = await new Promise<string>((resolve) => {
      client.select('DROP TABLE rrscan.rrsets', { lines: () => true, end: () => resolve('ran'), error: (e) => resolve(e.message) });
    });
    // 18.16 writes "Code: 164, e.displayText() = ...", current releases "Code: 164. DB::Exception: ...".
    expect(refused).toMatch(/^Code: 164[,.] .*readonly/);
    expect(Number(await client.exec('SELECT count() FROM rrscan.rrsets'))).toBeGreaterThan(0);
    client.close();
  });

  describe.skipIf(!server)('on a search that takes seconds', () => {
    // 1 M names made by ClickHouse itself, in a database of their own, so a fenced search takes seconds.
    let client: ClickHouse;
    let slow: Server;
    let big: string;
    const search = `/pdns/v2/regex/rrnames/${encodeURIComponent('[0-9]{2}[0-5]')}?limit=1000000&time_last_after=1550000000`;
    const running = async () => Number(await client.exec(
      "SELECT count() FROM system.processes WHERE query LIKE '%`slow`.flex_names%' AND query NOT LIKE '%system.processes%'"));
    const whileRunning = async () => {
      await until('the search\'s query is running in ClickHouse', async () => (await running()) !== 0, 10_000, 10);
      expect(await running()).toBe(1);
    };

    beforeAll(async () => {
      client = new ClickHouse(ch.url);
      cliOk(['clickhouse', 'init', '--url', ch.url, '--database', 'slow']);
      await client.exec("INSERT INTO slow.flex_names_in SELECT concat(toString(number), '.slow.test.'), 1, 1500000000, 1600000000 " +
        'FROM system.numbers LIMIT 1000000');
      big = addKey(dir, ['--unlimited', '--results-max', '1000000']);
      slow = await startServer(dir, ['--clickhouse-url', ch.url, '--clickhouse-database', 'slow', '--keepalive-ms', '100']);
    }, 60_000);

    afterAll(async () => {
      await slow?.close();
      client?.close();
    });

    it('a client that hangs up stops its ClickHouse query (KILL QUERY), long before the query would end', async () => {
      const t0 = performance.now();
      const whole = await get(slow, search, { 'X-API-Key': big });
      const wholeMs = performance.now() - t0;
      // Keep-alives ({}, every 100 ms here) while ClickHouse works, then the results.
      expect(wholeMs).toBeGreaterThan(1_000);
      expect(whole.body).toMatch(/^\{"cond":"begin"\}\n(\{\}\n){5,}\{"obj".*\{"cond":"(succeeded|limited)"[^\n]*\}\n$/s);

      const reply = streamGet(slow, search, { 'X-API-Key': big });
      await whileRunning();
      const hungUp = reply.abort();
      await reply.done.catch(() => undefined); // hung up before any byte came: the reply rejects
      await until('the hung-up search\'s query is gone from ClickHouse', async () => (await running()) === 0, 10_000, 10);
      const stoppedMs = performance.now() - hungUp;
      console.log(`whole answer ${wholeMs.toFixed(0)} ms; query gone ${stoppedMs.toFixed(0)} ms after the hang-up`);
      expect(stoppedMs).toBeLessThan(wholeMs / 2);
    }, 60_000);

    it('a query ClickHouse stops (killed by someone else) ends the answer failed, never as a shorter success', async () => {
      const reply = get(slow, search, { 'X-API-Key': big });
      await whileRunning();
      await client.exec("KILL QUERY WHERE query LIKE '%`slow`.flex_names%' AND query NOT LIKE '%system.processes%' SYNC");
      const r = await reply;
      expect(r.status).toBe(200);
      expect(r.body).toMatch(/^\{"cond":"begin"\}\n(\{\}\n)*\{"cond":"failed","msg":"Internal error"\}\n$/);
    }, 60_000);
  });

  it('ClickHouse gone: an in-stream failed, never a partial or empty success', async () => {
    await ch.close();
    const r = await get(remote, '/pdns/v2/regex/rrnames/paypal', H());
    expect(r.status).toBe(200);
    expect(r.body).toBe(body(begin, { cond: 'failed', msg: 'Internal error' }));
  });
});
