// Flexible search over HTTP against a real server (issue 3), answered from
// the local shards and from ClickHouse (issue 15) with the same bodies.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEX_FIXTURE, T2018, T2020 } from '../fixtures/flex-dataset.js';
import {
  addKey, begin, body, get, limited, lines, none, objects, ok, removeDir, tempDir, type Server,
} from '../helpers/rrscan.js';
import { describeEachBackend } from '../helpers/backends.js';

describeEachBackend('flexible search', (backend) => {
  let dir: string;
  let server: Server;
  let key: string;
  let small: string;
  const H = () => ({ 'X-API-Key': key });

  beforeAll(async () => {
    dir = tempDir();
    backend.ingestNdjson(dir, FLEX_FIXTURE);
    key = addKey(dir, ['--unlimited']);
    small = addKey(dir, ['--unlimited', '--results-max', '2', '--offset-max', '3']);
    server = await backend.startServer(dir);
  });

  afterAll(async () => {
    await server?.close();
    removeDir(dir);
  });

  const n = (rrname: string, rrtype: string) => ({ obj: { rrname, rrtype } });

  describe('regex/rrnames', () => {
    it('streams begin, every (name, rrtype) in stable order, succeeded', async () => {
      const r = await get(server, '/pdns/v2/regex/rrnames/paypal', H());
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe('application/x-ndjson');
      expect(r.body).toBe(body(begin,
        n('login-paypal.xyz.', 'A'),
        n('paypal-login.example.net.', 'A'),
        n('paypal.com.', 'NS'), n('paypal.com.', 'SOA'), n('paypal.com.', 'MX'),
        n('secure-paypal.com.evil.top.', 'A'),
        n('www.paypal.com.', 'A'), n('www.paypal.com.', 'AAAA'),
        ok));
    });

    it('answers the same under /dnsdb/v2 and /pdns/v2/dnsdb/v2', async () => {
      const a = await get(server, '/pdns/v2/regex/rrnames/paypal', H());
      const b = await get(server, '/dnsdb/v2/regex/rrnames/paypal', H());
      const c = await get(server, '/pdns/v2/dnsdb/v2/regex/rrnames/paypal', H());
      expect(b.body).toBe(a.body);
      expect(c.body).toBe(a.body);
    });

    it('anchors need the trailing dot (spec 4.2 rule 4)', async () => {
      expect((await get(server, '/pdns/v2/regex/rrnames/paypal%5C.com$', H())).body).toBe(body(begin, none));
      expect((await get(server, '/pdns/v2/regex/rrnames/%5Epaypal%5C.com%5C.$', H())).body)
        .toBe(body(begin, n('paypal.com.', 'NS'), n('paypal.com.', 'SOA'), n('paypal.com.', 'MX'), ok));
    });

    it('limit counts unique names: limit=1 may give several objects, then limited', async () => {
      const r = await get(server, '/pdns/v2/regex/rrnames/%5Epaypal%5C.com%5C.$?limit=1', H());
      expect(r.body).toBe(body(begin, n('paypal.com.', 'NS'), n('paypal.com.', 'SOA'), n('paypal.com.', 'MX'), ok));
      const s = await get(server, '/pdns/v2/regex/rrnames/paypal?limit=2', H());
      expect(s.body).toBe(body(begin, n('login-paypal.xyz.', 'A'), n('paypal-login.example.net.', 'A'), limited));
    });

    it('offset skips unique values; pages do not overlap', async () => {
      const p1 = objects((await get(server, '/pdns/v2/regex/rrnames/paypal?limit=2&offset=0', H())).body);
      const p2 = objects((await get(server, '/pdns/v2/regex/rrnames/paypal?limit=2&offset=2', H())).body);
      const p3 = objects((await get(server, '/pdns/v2/regex/rrnames/paypal?limit=2&offset=4', H())).body);
      expect(p1.map((o) => o['rrname'])).toEqual(['login-paypal.xyz.', 'paypal-login.example.net.']);
      expect(p2.map((o) => o['rrname'])).toEqual(['paypal.com.', 'paypal.com.', 'paypal.com.', 'secure-paypal.com.evil.top.']);
      expect(p3.map((o) => o['rrname'])).toEqual(['www.paypal.com.', 'www.paypal.com.']);
    });

    it('filters by rrtype segment, ANY and ANY-DNSSEC', async () => {
      expect((await get(server, '/pdns/v2/regex/rrnames/%5Eexample%5C.org%5C.$/mx', H())).body)
        .toBe(body(begin, n('example.org.', 'MX'), ok));
      expect((await get(server, '/pdns/v2/regex/rrnames/%5Eexample%5C.org%5C.$/ANY', H())).body)
        .toBe(body(begin, n('example.org.', 'MX'), n('example.org.', 'TXT'), ok));
      expect((await get(server, '/pdns/v2/regex/rrnames/%5Eexample%5C.org%5C.$/ANY-DNSSEC', H())).body)
        .toBe(body(begin, n('example.org.', 'DS'), ok));
      expect((await get(server, '/pdns/v2/regex/rrnames/%5Eexample%5C.org%5C.$', H())).body)
        .toBe(body(begin, n('example.org.', 'MX'), n('example.org.', 'TXT'), n('example.org.', 'DS'), ok));
    });

    it('exclude removes matches of a second pattern', async () => {
      const r = await get(server, '/pdns/v2/regex/rrnames/paypal?exclude=login', H());
      expect(objects(r.body).map((o) => o['rrname'])).toEqual(
        ['paypal.com.', 'paypal.com.', 'paypal.com.', 'secure-paypal.com.evil.top.', 'www.paypal.com.', 'www.paypal.com.']);
    });

    it('applies time fences (absolute and relative)', async () => {
      const after = await get(server, `/pdns/v2/regex/rrnames/paypal?time_first_after=${T2018}`, H());
      expect(objects(after.body)).toEqual([
        { rrname: 'paypal-login.example.net.', rrtype: 'A' },
        { rrname: 'secure-paypal.com.evil.top.', rrtype: 'A' },
      ]);
      const before = await get(server, `/pdns/v2/regex/rrnames/paypal?time_last_before=${T2020 + 1}`, H());
      expect(objects(before.body)).toEqual([
        { rrname: 'login-paypal.xyz.', rrtype: 'A' },
        { rrname: 'www.paypal.com.', rrtype: 'A' },
      ]);
      // Relative: everything here was last seen more than a day ago.
      const rel = await get(server, '/pdns/v2/regex/rrnames/paypal?time_last_after=-86400', H());
      expect(rel.body).toBe(body(begin, none));
    });

    it('matches case-insensitively, and (?-i) opts out', async () => {
      expect(objects((await get(server, '/pdns/v2/regex/rrnames/%5EPAYPAL%5C.COM%5C.$/NS', H())).body)).toEqual(
        [{ rrname: 'paypal.com.', rrtype: 'NS' }]);
      expect((await get(server, '/pdns/v2/regex/rrnames/(%3F-i)%5EPAYPAL%5C.COM%5C.$/NS', H())).body).toBe(body(begin, none));
    });

    it('never lets a match span two records', async () => {
      // [^x]* and \s would run across the newline separator of a naive blob scan.
      const r = await get(server, '/pdns/v2/regex/rrnames/xyz%5C.%5Cs*login', H());
      expect(r.body).toBe(body(begin, none));
      const s = await get(server, '/pdns/v2/regex/rrnames/top%5C.%5B%5Ex%5D*%5Ewww', H());
      expect(s.body).toBe(body(begin, none));
    });

    it('reports a regex syntax error in-stream, naming the position', async () => {
      const r = await get(server, '/pdns/v2/regex/rrnames/pay(pal', H());
      expect(r.status).toBe(200);
      const l = lines(r.body) as { cond?: string; msg?: string }[];
      expect(l[0]).toEqual(begin);
      expect(l).toHaveLength(2);
      expect(l[1]!.cond).toBe('failed');
      expect(l[1]!.msg).toMatch(/position 3/);
    });

    it('uses the key\'s results_max and offset_max', async () => {
      const r = await get(server, '/pdns/v2/regex/rrnames/paypal?limit=0', { 'X-API-Key': small });
      expect(objects(r.body)).toHaveLength(2);
      expect(r.body.endsWith(JSON.stringify(limited) + '\n')).toBe(true);
      const big = await get(server, '/pdns/v2/regex/rrnames/paypal?limit=100000', { 'X-API-Key': small });
      expect(objects(big.body)).toHaveLength(2);
      const off = await get(server, '/pdns/v2/regex/rrnames/paypal?offset=4', { 'X-API-Key': small });
      expect(off.status).toBe(416);
      expect(off.headers['content-type']).toMatch(/^text\/plain/);
    });
  });

  describe('glob', () => {
    it('is anchored at both ends and case-insensitive', async () => {
      expect(objects((await get(server, '/pdns/v2/glob/rrnames/*.PAYPAL.com.', H())).body)).toEqual([
        { rrname: 'www.paypal.com.', rrtype: 'A' }, { rrname: 'www.paypal.com.', rrtype: 'AAAA' }]);
      expect((await get(server, '/pdns/v2/glob/rrnames/paypal', H())).body).toBe(body(begin, none));
    });
    it('supports ?, classes, negated classes and POSIX classes', async () => {
      expect(objects((await get(server, '/pdns/v2/glob/rrnames/%5B!a-z%5D*.cdn.example./A', H())).body)).toEqual([]);
      expect(objects((await get(server, '/pdns/v2/glob/rrnames/%5B%5B:alpha:%5D%5D1b2*.cdn.example./A', H())).body)).toEqual([
        { rrname: 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8.cdn.example.', rrtype: 'A' }]);
      expect(objects((await get(server, '/pdns/v2/glob/rrnames/xn--p%3Fpal-4ve.com.', H())).body)).toEqual([
        { rrname: 'xn--pypal-4ve.com.', rrtype: 'A' }]);
    });
  });

  describe('regex/rdata and glob/rdata', () => {
    it('returns rdata, rrtype and uppercase raw_rdata', async () => {
      const r = await get(server, '/pdns/v2/regex/rdata/paypal-dns', H());
      expect(r.body).toBe(body(begin,
        { obj: { rdata: '20 mx2.paypal-dns.net.', rrtype: 'MX', raw_rdata: '0014036D78320A70617970616C2D646E73036E657400' } },
        { obj: { rdata: 'ns1.paypal-dns.net.', rrtype: 'NS', raw_rdata: '036E73310A70617970616C2D646E73036E657400' } },
        { obj: { rdata: 'ns1.paypal-dns.net. hostmaster.paypal.com. 2023010101 7200 3600 1209600 300', rrtype: 'SOA',
          raw_rdata: '036E73310A70617970616C2D646E73036E6574000A686F73746D61737465720670617970616C03636F6D00' +
            '7894AF3500001C2000000E10001275000000012C' } },
        { obj: { rdata: 'ns2.paypal-dns.net.', rrtype: 'NS', raw_rdata: '036E73320A70617970616C2D646E73036E657400' } },
        ok));
    });
    it('filters rdata by rrtype and refuses non-rdata types', async () => {
      expect(objects((await get(server, '/pdns/v2/glob/rdata/*paypal-dns*/NS', H())).body).map((o) => o['rdata']))
        .toEqual(['ns1.paypal-dns.net.', 'ns2.paypal-dns.net.']);
      const a = await get(server, '/pdns/v2/glob/rdata/x/A', H());
      expect(a.status).toBe(400);
      expect(a.body).toBe('Error: RRTYPE has an unsupported value\n');
      const ds = await get(server, '/pdns/v2/glob/rdata/x/DS', H());
      expect(ds.status).toBe(400);
      expect(ds.body).toBe('Error: RRTYPE has an unsupported DNSSEC value\n');
    });
    it('matches TXT presentation text with its quotes', async () => {
      expect(objects((await get(server, '/pdns/v2/glob/rdata/%22hello*', H())).body)).toEqual([
        { rdata: '"hello world" "second string"', rrtype: 'TXT', raw_rdata: '0B68656C6C6F20776F726C640D7365636F6E6420737472696E67' }]);
    });
  });

  describe('errors', () => {
    const cases: [string, number, string][] = [
      ['/pdns/v2/regex', 400, 'Error: WHAT_TO_SEARCH has an unsupported value\n'],
      ['/pdns/v2/regex/names/x', 400, 'Error: WHAT_TO_SEARCH has an unsupported value\n'],
      ['/pdns/v2/regex/rrnames', 400, 'Error: REQUEST_URI is missing path segment\n'],
      ['/pdns/v2/regex/rrnames/x/A/extra', 400, 'Error: REQUEST_URI has too many path segments\n'],
      ['/pdns/v2/regex/rrnames/x/NOTATYPE', 400, 'Error: RRTYPE has an unsupported value\n'],
      ['/pdns/v2/regex/rrnames/x?limit=abc', 400, 'Error: unable to parse request\n'],
      ['/pdns/v2/regex/rrnames/x?aggr=true', 400, 'Error: unable to parse request\n'],
      ['/pdns/v2/regex/rrnames/%zz', 400, 'Error: exception occurred\n'],
    ];
    for (const [path, status, text] of cases) {
      it(`${path} -> ${status} ${text.trim()}`, async () => {
        const r = await get(server, path, H());
        expect(r.status).toBe(status);
        expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
        expect(r.body).toBe(text);
      });
    }
    it('gives the front end\'s HTML 404 for unknown top-level paths', async () => {
      for (const p of ['/pdns/v2/bogus/rrnames/x', '/nothing', '/pdns/v3/regex/rrnames/x']) {
        const r = await get(server, p, H());
        expect(r.status, p).toBe(404);
        expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
      }
    });
    it('answers 415 text/plain when Accept names nothing we serve', async () => {
      const r = await get(server, '/pdns/v2/regex/rrnames/x', { ...H(), Accept: 'text/html, image/png' });
      expect(r.status).toBe(415);
      expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
      const ok2 = await get(server, '/pdns/v2/regex/rrnames/paypal%5C.com%5C.$', { ...H(), Accept: 'text/html, */*' });
      expect(ok2.status).toBe(200);
    });
    it('answers 403 without a key or with a bad one', async () => {
      for (const h of [{}, { 'X-API-Key': 'deadbeef'.repeat(8) }] as Record<string, string>[]) {
        const r = await get(server, '/pdns/v2/regex/rrnames/x', h);
        expect(r.status).toBe(403);
        expect(r.body).toBe('Error: Bad API key\n');
      }
    });
  });

  describe('values held by several shards', () => {
    // Three ingests, three shards: one name and one rdata value appear in each
    // with other rrtypes, so the merge unites their lines by rrtype.
    let d: string;
    let s: Server;
    let k: string;
    const rec = (rrname: string, rrtype: string, rdata: string[]) =>
      ({ count: 1, time_first: T2018, time_last: T2020, rrname, rrtype, bailiwick: 'example.', rdata });
    const wire = '0473616D65076578616D706C6500'; // same.example.
    const longTxt = `"${'x'.repeat(250)}"`;
    beforeAll(async () => {
      d = tempDir();
      backend.ingestNdjson(d, [rec('u.example.', 'A', ['192.0.2.1']), rec('u.example.', 'TXT', ['"t"']),
        rec('c.example.', 'CNAME', ['same.example.'])], 'one.ndjson');
      backend.ingestNdjson(d, [rec('u.example.', 'AAAA', ['2001:db8::1']), rec('u.example.', 'A', ['192.0.2.2']),
        rec('w.example.', 'NS', ['same.example.'])], 'two.ndjson');
      // 250 strings of 250 bytes: about 63 KB of wire, a line over 120 KB of hex.
      backend.ingestNdjson(d,
        [rec('u.example.', 'MX', ['10 same.example.']), rec('big.example.', 'TXT', [Array(250).fill(longTxt).join(' ')])], 'three.ndjson');
      k = addKey(d);
      s = await backend.startServer(d);
    });
    afterAll(async () => {
      await s?.close();
      removeDir(d);
    });

    it('rrnames: one value, its rrtypes from every shard in ascending order, counted once by limit', async () => {
      const r = await get(s, '/pdns/v2/regex/rrnames/%5Eu%5C.example%5C.$', { 'X-API-Key': k });
      expect(r.body).toBe(body(begin, n('u.example.', 'A'), n('u.example.', 'MX'), n('u.example.', 'TXT'), n('u.example.', 'AAAA'), ok));
      const one = await get(s, '/pdns/v2/regex/rrnames/%5E[uw]%5C.example%5C.$?limit=1', { 'X-API-Key': k });
      expect(one.body).toBe(body(begin, n('u.example.', 'A'), n('u.example.', 'MX'), n('u.example.', 'TXT'), n('u.example.', 'AAAA'),
        limited));
    });

    it('rdata: one value of two rrtypes from two shards, each with its raw_rdata', async () => {
      const r = await get(s, '/pdns/v2/regex/rdata/%5Esame%5C.example%5C.$', { 'X-API-Key': k });
      expect(r.body).toBe(body(begin,
        { obj: { rdata: 'same.example.', rrtype: 'NS', raw_rdata: wire } },
        { obj: { rdata: 'same.example.', rrtype: 'CNAME', raw_rdata: wire } },
        ok));
    });

    it('rdata: a value whose line would pass 60,000 bytes counts as a result but is not written', async () => {
      const r = await get(s, '/pdns/v2/regex/rdata/xxxxxxxxxx/TXT', { 'X-API-Key': k });
      expect(r.body).toBe(body(begin, ok));
      const t = await get(s, '/pdns/v2/regex/rdata/%5E%22t%22$', { 'X-API-Key': k });
      expect(t.body).toBe(body(begin, { obj: { rdata: '"t"', rrtype: 'TXT', raw_rdata: '0174' } }, ok));
    });
  });
});
