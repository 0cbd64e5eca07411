// Standard search over HTTP against a real server (issue 4), on real data:
// Farsight's published DNSDB v2 example records and the 2024 root zone;
// answered from the local shards and from ClickHouse (issue 15) with the
// same bodies.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEX_FIXTURE } from '../fixtures/flex-dataset.js';
import {
  HAVE_REAL, REAL, REAL_SKIP_REASON, addKey, get, lines, objects, removeDir, tempDir, type Server, body, begin, ok, none, limited,
} from '../helpers/rrscan.js';
import { describeEachBackend } from '../helpers/backends.js';


if (!HAVE_REAL) console.warn(`lookup.test.ts: ${REAL_SKIP_REASON}`);

describeEachBackend('standard search', (backend) => {
  describe.skipIf(!HAVE_REAL)('lookups on real data (DNSDB v2 examples, 2024 root zone)', () => {
    let dir: string;
    let server: Server;
    let key: string;
    const H = () => ({ 'X-API-Key': key });

    beforeAll(async () => {
      dir = tempDir();
      backend.ingestFiles(dir, [path.join(REAL, 'json/dnsdb-v2-doc-examples.ndjson')]);
      backend.ingestFiles(dir, [path.join(REAL, 'zones/root.zone.2024101100')]);
      key = addKey(dir, ['--unlimited', '--offset-max', '1000']);
      server = await backend.startServer(dir);
    });
    afterAll(async () => {
      await server?.close();
      removeDir(dir);
    });

    const www = (count: number, first: number, last: number, rdata: string[], rrtype = 'A', bailiwick = 'farsightsecurity.com.') =>
      ({ obj: { count, time_first: first, time_last: last, rrname: 'www.farsightsecurity.com.', rrtype,
        ...(bailiwick ? { bailiwick } : {}), rdata } });

    it('rrset by exact name, with and without the trailing dot, any case', async () => {
      const expected = body(begin,
        www(17381, 1427893644, 1468329272, ['104.244.13.104']),
        www(5059, 1380139330, 1427881899, ['66.160.140.81']),
        www(8046, 1428586271, 1468305509, ['2620:11c:f004::104'], 'AAAA', ''),
        ok);
      for (const v of ['www.farsightsecurity.com', 'www.farsightsecurity.com.', 'WWW.FarsightSecurity.COM']) {
        const r = await get(server, `/pdns/v2/lookup/rrset/name/${v}`, H());
        expect(r.status).toBe(200);
        expect(r.headers['content-type']).toBe('application/x-ndjson');
        expect(r.body, v).toBe(expected);
      }
      expect((await get(server, '/dnsdb/v2/lookup/rrset/name/www.farsightsecurity.com/a', H())).body).toBe(body(begin,
        www(17381, 1427893644, 1468329272, ['104.244.13.104']), www(5059, 1380139330, 1427881899, ['66.160.140.81']), ok));
    });

    it('rrset by raw wire name', async () => {
      const hex = Buffer.from('03777777106661727369676874736563757269747903636f6d00', 'hex').toString('hex').toUpperCase();
      const r = await get(server, `/pdns/v2/lookup/rrset/raw/${hex}/A`, H());
      expect(objects(r.body).map((o) => o['rdata'])).toEqual([['104.244.13.104'], ['66.160.140.81']]);
    });

    it('left-hand wildcard with rrtype and bailiwick (DNSDB example 2 and 9)', async () => {
      const r = await get(server, '/pdns/v2/lookup/rrset/name/*.farsightsecurity.com/NS/farsightsecurity.com', H());
      expect(r.body).toBe(body(begin,
        { obj: { count: 51, time_first: 1372688083, time_last: 1374023864, rrname: 'farsightsecurity.com.', rrtype: 'NS',
          bailiwick: 'farsightsecurity.com.', rdata: ['ns.lah1.vix.com.', 'ns1.isc-sns.net.', 'ns2.isc-sns.com.', 'ns3.isc-sns.info.'] } },
        // Lines 4 and 15 of the file are the same RRset: aggregated, counts summed, times widened.
        { obj: { count: 1484532, time_first: 1374096380, time_last: 1499964330, rrname: 'farsightsecurity.com.', rrtype: 'NS',
          bailiwick: 'farsightsecurity.com.', rdata: ['ns5.dnsmadeeasy.com.', 'ns6.dnsmadeeasy.com.', 'ns7.dnsmadeeasy.com.'] } },
        ok));
      const last = await get(server, '/pdns/v2/lookup/rrset/name/*.farsightsecurity.com/NS/farsightsecurity.com?time_last_after=1468000000&limit=100', H());
      expect(objects(last.body)).toHaveLength(1);
    });

    it('ANY-DNSSEC (DNSDB example 10) with humantime', async () => {
      const r = await get(server, '/pdns/v2/lookup/rrset/name/farsightsecurity.com/ANY-DNSSEC?humantime=true', H());
      const objs = objects(r.body);
      expect(objs.map((o) => o['rrtype'])).toEqual(['DS', 'RRSIG']);
      expect(objs[0]).toEqual({ count: 1696, zone_time_first: '2013-07-19T16:22:00Z', zone_time_last: '2018-03-22T16:02:25Z',
        rrname: 'farsightsecurity.com.', rrtype: 'DS', bailiwick: 'com.',
        rdata: ['60454 5 2 3672C35CFA8FF14C9C223B84277BD645C0AF54BAD5790375FE797161E4801479'] });
    });

    it('rdata by IPv4 address (DNSDB example 3)', async () => {
      const r = await get(server, '/pdns/v2/lookup/rdata/ip/104.244.13.104', H());
      expect(r.body).toBe(body(begin,
        { obj: { count: 24, time_first: 1433550785, time_last: 1468312116, rrname: 'www.farsighsecurity.com.', rrtype: 'A',
          rdata: '104.244.13.104' } },
        { obj: { count: 9429, time_first: 1427897872, time_last: 1468333042, rrname: 'farsightsecurity.com.', rrtype: 'A',
          rdata: '104.244.13.104' } },
        { obj: { count: 17381, time_first: 1427893644, time_last: 1468329272, rrname: 'www.farsightsecurity.com.', rrtype: 'A',
          rdata: '104.244.13.104' } },
        ok));
      // Some clients always append /ANY; A is valid; NS is not, for ip.
      expect((await get(server, '/pdns/v2/lookup/rdata/ip/104.244.13.104/ANY', H())).body).toBe(r.body);
      const ns = await get(server, '/pdns/v2/lookup/rdata/ip/104.244.13.104/NS', H());
      expect(ns.status).toBe(400);
      expect(ns.body).toBe('Error: RRTYPE has an unsupported value\n');
    });

    it('rdata by IPv6 address and prefix (DNSDB examples 5 and 6)', async () => {
      const expected = body(begin,
        { obj: { count: 14, time_first: 1433845806, time_last: 1467828872, rrname: 'www.farsighsecurity.com.', rrtype: 'AAAA',
          rdata: '2620:11c:f004::104' } },
        // Lines 8 and 9 are the same observation twice: aggregated.
        { obj: { count: 10614, time_first: 1427897876, time_last: 1468333042, rrname: 'farsightsecurity.com.', rrtype: 'AAAA',
          rdata: '2620:11c:f004::104' } },
        { obj: { count: 8046, time_first: 1428586271, time_last: 1468305509, rrname: 'www.farsightsecurity.com.', rrtype: 'AAAA',
          rdata: '2620:11c:f004::104' } },
        ok);
      expect((await get(server, '/pdns/v2/lookup/rdata/ip/2620:11c:f004::104', H())).body).toBe(expected);
      expect((await get(server, '/pdns/v2/lookup/rdata/ip/2620%3A11c%3Af000%3A%3A%2C36', H())).body).toBe(expected);
      expect((await get(server, '/pdns/v2/lookup/rdata/ip/2620:11c:f004::100-2620:11c:f004::1ff', H())).body).toBe(expected);
      expect((await get(server, '/pdns/v2/lookup/rdata/ip/2620:11c:f005::,48', H())).body).toBe(body(begin, none));
    });

    it('rdata by name: NS delegations and MX (DNSDB examples 7 and 8)', async () => {
      const r = await get(server, '/pdns/v2/lookup/rdata/name/ns5.dnsmadeeasy.com/NS', H());
      expect(r.body).toBe(body(begin,
        { obj: { count: 2192227, time_first: 1374096380, time_last: 1499964330, zone_time_first: 1374250920, zone_time_last: 1468253883,
          rrname: 'farsightsecurity.com.', rrtype: 'NS', rdata: 'ns5.dnsmadeeasy.com.' } },
        ok));
      const mx = await get(server, '/pdns/v2/lookup/rdata/name/hq.fsi.io/MX', H());
      expect(objects(mx.body)).toEqual([
        { count: 19304, time_first: 1374098929, time_last: 1468333042, rrname: 'farsightsecurity.com.', rrtype: 'MX',
          rdata: '10 hq.fsi.io.' },
        { count: 45644, time_first: 1372706073, time_last: 1468330740, rrname: 'fsi.io.', rrtype: 'MX', rdata: '10 hq.fsi.io.' },
      ]);
    });

    it('rdata by raw wire form (MX 10 hq.fsi.io. as 000A0268710366736902696F00)', async () => {
      const r = await get(server, '/pdns/v2/lookup/rdata/raw/000A0268710366736902696F00', H());
      expect(objects(r.body).map((o) => [o['rrname'], o['rdata']])).toEqual([
        ['farsightsecurity.com.', '10 hq.fsi.io.'], ['fsi.io.', '10 hq.fsi.io.']]);
      const lower = await get(server, '/pdns/v2/lookup/rdata/raw/000a0268710366736902696f00/MX', H());
      expect(lower.body).toBe(r.body);
      expect((await get(server, '/pdns/v2/lookup/rdata/raw/000A04657863680366736902696F00', H())).body).toBe(body(begin, none));
    });

    it('every record of the examples file answers the documented query its .tsv names', async () => {
      // lines-to-query.tsv pairs each line of the NDJSON file with the title of
      // the DNSDB example query it was published as an answer to. The request
      // for each title is ours; the pairing is Farsight's. Records with one
      // aggregation key meet in one RRset, so a line is found when an answer
      // has its name, type and rdata, at least its count and times that cover it.
      const requests: Record<string, string> = {
        '1': '/lookup/rrset/name/www.farsightsecurity.com',
        '2': '/lookup/rrset/name/*.farsightsecurity.com/NS/farsightsecurity.com',
        '3': '/lookup/rdata/ip/104.244.13.104',
        '5': '/lookup/rdata/ip/2620:11c:f004::104',
        '6': '/lookup/rdata/ip/2620:11c:f000::,36',
        '7': '/lookup/rdata/name/ns5.dnsmadeeasy.com',
        '8': '/lookup/rdata/name/hq.fsi.io/MX',
        // "last observed after July 11, 2016 with a limit of 100 results"
        '9': '/lookup/rrset/name/*.farsightsecurity.com/NS/farsightsecurity.com?time_last_after=1468195200&limit=100',
        '10': '/lookup/rrset/name/*.farsightsecurity.com/ANY-DNSSEC',
      };
      const records = readFileSync(path.join(REAL, 'json/dnsdb-v2-doc-examples.ndjson'), 'utf8').trimEnd().split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const pairs = readFileSync(path.join(REAL, 'json/dnsdb-v2-doc-examples.lines-to-query.tsv'), 'utf8').trimEnd().split('\n')
        .map((l) => l.split('\t') as [string, string]);
      expect(pairs).toHaveLength(records.length);
      const asSet = (rdata: unknown) => [...(Array.isArray(rdata) ? rdata : [rdata])].map(String).sort();
      for (const [line, title] of pairs) {
        const number = /^(\d+)\. /.exec(title)![1]!;
        const request = requests[number];
        expect(request, `a request for "${title}"`).toBeDefined();
        const rec = records[Number(line) - 1]!;
        const r = await get(server, `/pdns/v2${request}`, H());
        expect(r.status).toBe(200);
        const found = objects(r.body).filter((o) =>
          o['rrname'] === rec['rrname'] && o['rrtype'] === rec['rrtype'] &&
          JSON.stringify(asSet(o['rdata'])) === JSON.stringify(asSet(rec['rdata'])) &&
          (o['bailiwick'] === undefined || rec['bailiwick'] === undefined || o['bailiwick'] === rec['bailiwick']) &&
          Number(o['count']) >= Number(rec['count']) &&
          ['time', 'zone_time'].every((t) => rec[`${t}_first`] === undefined ||
            (Number(o[`${t}_first`]) <= Number(rec[`${t}_first`]) && Number(o[`${t}_last`]) >= Number(rec[`${t}_last`]))));
        expect(found, `line ${line} in the answer to ${request}`).toHaveLength(1);
      }
    });

    it('root zone: a.root-servers.net A and AAAA with zone times from the SOA serial', async () => {
      const r = await get(server, '/pdns/v2/lookup/rrset/name/a.root-servers.net', H());
      expect(r.body).toBe(body(begin,
        { obj: { count: 1, zone_time_first: 1728604800, zone_time_last: 1728604800, rrname: 'a.root-servers.net.', rrtype: 'A',
          bailiwick: '.', rdata: ['198.41.0.4'] } },
        { obj: { count: 1, zone_time_first: 1728604800, zone_time_last: 1728604800, rrname: 'a.root-servers.net.', rrtype: 'AAAA',
          bailiwick: '.', rdata: ['2001:503:ba3e::2:30'] } },
        ok));
      const ns = await get(server, '/pdns/v2/lookup/rdata/name/a.gtld-servers.net/NS', H());
      expect(objects(ns.body).map((o) => o['rrname'])).toEqual(['com.', 'net.']);
    });

    it('right-hand and one-label wildcards', async () => {
      const right = objects((await get(server, '/pdns/v2/lookup/rrset/name/a.root-servers.*/A', H())).body);
      expect(right.map((o) => o['rrname'])).toEqual(['a.root-servers.net.']);
      const plus = objects((await get(server, '/pdns/v2/lookup/rrset/name/+.root-servers.net/A?limit=20', H())).body);
      expect(plus.map((o) => o['rrname'])).toEqual('abcdefghijklm'.split('').map((c) => `${c}.root-servers.net.`));
      const under = objects((await get(server, '/pdns/v2/lookup/rrset/name/*.root-servers.net/A?limit=20', H())).body);
      expect(under).toHaveLength(13);
      const rplus = objects((await get(server, '/pdns/v2/lookup/rrset/name/farsightsecurity.+/A', H())).body);
      expect(rplus.map((o) => o['rrname'])).toEqual(['farsightsecurity.com.']);
    });

    it('limit, offset and the limited terminator', async () => {
      const all = objects((await get(server, '/pdns/v2/lookup/rrset/name/*.root-servers.net/ANY?limit=100', H())).body);
      expect(all).toHaveLength(26);
      const r = await get(server, '/pdns/v2/lookup/rrset/name/*.root-servers.net/ANY?limit=5&offset=3', H());
      expect(objects(r.body)).toEqual(all.slice(3, 8));
      expect((lines(r.body) as object[]).at(-1)).toEqual(limited);
    });

    it('aggr=false returns one row per observation batch', async () => {
      const agg = objects((await get(server, '/pdns/v2/lookup/rrset/name/farsightsecurity.com/NS/farsightsecurity.com', H())).body);
      expect(agg).toHaveLength(2);
      // Both batches were in one ingest file, so they were aggregated at ingest: aggr=false has the same rows here.
      const raw = objects((await get(server, '/pdns/v2/lookup/rrset/name/farsightsecurity.com/NS/farsightsecurity.com?aggr=f', H())).body);
      expect(raw).toEqual(agg);
    });

    it('summarize', async () => {
      const r = await get(server, '/pdns/v2/summarize/rdata/ip/2620:11c:f004::104', H());
      expect(r.body).toBe(body(begin,
        { obj: { count: 18674, num_results: 3, time_first: 1427897876, time_last: 1468333042 } }, ok));
      // compat.md: max_count stops the summing early and is not a result limit, so the stream ends `succeeded`.
      const m = await get(server, '/pdns/v2/summarize/rdata/ip/2620:11c:f004::104?max_count=20', H());
      const summed = { obj: { count: 10628, num_results: 2, time_first: 1427897876, time_last: 1468333042 } };
      expect(lines(m.body)).toEqual([begin, summed, ok]);
      // `limit` cutting the summed results off is what ends it `limited`.
      const l = await get(server, '/pdns/v2/summarize/rdata/ip/2620:11c:f004::104?limit=2', H());
      expect(lines(l.body)).toEqual([begin, summed, limited]);
      const off = await get(server, '/pdns/v2/summarize/rdata/ip/2620:11c:f004::104?offset=1', H());
      expect(off.status).toBe(416);
    });

    it('ping needs no key; bad values are 400', async () => {
      const p = await get(server, '/pdns/v2/ping');
      expect(p.status).toBe(200);
      expect(p.body).toBe('{"ping":"ok"}\n');
      const cases: [string, string][] = [
        ['/pdns/v2/lookup/rrset/name/example.com/BOGUS', 'Error: RRTYPE has an unsupported value\n'],
        ['/pdns/v2/lookup/rrset/name', 'Error: REQUEST_URI is missing path segment\n'],
        ['/pdns/v2/lookup/rrset/ip/1.2.3.4', 'Error: SEARCH_METHOD has an unsupported value\n'],
        ['/pdns/v2/lookup/things/name/x', 'Error: WHAT_TO_SEARCH has an unsupported value\n'],
        ['/pdns/v2/lookup/rdata/ip/1.2.3.4,33', 'Error: unable to parse request\n'],
        ['/pdns/v2/lookup/rdata/ip/not-an-ip', 'Error: unable to parse request\n'],
        ['/pdns/v2/lookup/rdata/raw/ABC', 'Error: unable to parse request\n'],
        ['/pdns/v2/lookup/rrset/name/x/A/x./extra', 'Error: REQUEST_URI has too many path segments\n'],
        ['/pdns/v2/lookup/rrset/name/x?humantime=maybe', 'Error: unable to parse request\n'],
      ];
      for (const [p2, text] of cases) {
        const r = await get(server, p2, H());
        expect(r.status, p2).toBe(400);
        expect(r.body, p2).toBe(text);
      }
    });
  });

  describe('lookups on generated data', () => {
    let dir: string;
    let server: Server;
    let key: string;
    beforeAll(async () => {
      dir = tempDir();
      backend.ingestNdjson(dir, FLEX_FIXTURE);
      key = addKey(dir);
      server = await backend.startServer(dir);
    });
    afterAll(async () => {
      await server?.close();
      removeDir(dir);
    });
    it('rdata name wildcards written .example.org and www.example.', async () => {
      const left = objects((await get(server, '/pdns/v2/lookup/rdata/name/.example.org', { 'X-API-Key': key })).body);
      expect(left.map((o) => [o['rrname'], o['rrtype'], o['rdata']])).toEqual([
        ['www.example.org.', 'CNAME', 'abc-login.example.org.'],
        ['example.org.', 'MX', '10 mail.example.org.'],
      ]);
      const right = objects((await get(server, '/pdns/v2/lookup/rdata/name/ns1.paypal-dns.', { 'X-API-Key': key })).body);
      expect(right.map((o) => [o['rrname'], o['rrtype']])).toEqual([['paypal.com.', 'NS'], ['paypal.com.', 'SOA']]);
    });
    it('CIDR and range over IPv4', async () => {
      const cidr = objects((await get(server, '/pdns/v2/lookup/rdata/ip/198.51.100.0,24', { 'X-API-Key': key })).body);
      expect(cidr.map((o) => o['rdata'])).toEqual(['198.51.100.7', '198.51.100.8', '198.51.100.9', '198.51.100.66']);
      const range = objects((await get(server, '/pdns/v2/lookup/rdata/ip/198.51.100.8-198.51.100.9', { 'X-API-Key': key })).body);
      expect(range.map((o) => o['rrname'])).toEqual(['secure-paypal.com.evil.top.', 'login-paypal.xyz.']);
    });
    it('writes rdata with quotes escaped, humantime strings and every member in compat.md order, byte for byte', async () => {
      const H = { 'X-API-Key': key };
      const txt = await get(server, '/pdns/v2/lookup/rrset/name/abc-login.example.org./TXT?humantime=true', H);
      expect(txt.body).toBe('{"cond":"begin"}\n' +
        '{"obj":{"count":3,"time_first":"2015-01-01T00:00:00Z","time_last":"2018-01-01T00:00:00Z","rrname":"abc-login.example.org.",' +
        '"rrtype":"TXT","bailiwick":"example.org.","rdata":["\\"v=spf1 include:_spf.example.org ~all\\""]}}\n' +
        '{"cond":"succeeded"}\n');
      const rd = await get(server, '/pdns/v2/lookup/rdata/name/abc-login.example.org.', H);
      expect(rd.body).toBe('{"cond":"begin"}\n' +
        '{"obj":{"count":3,"time_first":1514764800,"time_last":1672531200,"rrname":"www.example.org.","rrtype":"CNAME",' +
        '"rdata":"abc-login.example.org."}}\n{"cond":"succeeded"}\n');
      const sum = await get(server, '/pdns/v2/summarize/rrset/name/*.paypal.com.', H);
      expect(sum.body).toBe('{"cond":"begin"}\n' +
        '{"obj":{"count":15,"num_results":5,"time_first":1420070400,"time_last":1672531200}}\n{"cond":"succeeded"}\n');
    });
  });
});
