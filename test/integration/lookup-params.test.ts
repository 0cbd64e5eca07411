// Standard search parameters over HTTP against a real server: time fences
// (request, relative, per key, zone times), the key's results_max and
// offset_max, rrtype segments, boolean spellings, owner/rdata wildcards and
// raw values on the generated fixture, and the smaller error rules (415,
// mangled URLs, content types, a key's --max-concurrent). Complements
// lookup.test.ts (audit items 3 to 7 and 10).
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEX_FIXTURE, T2015, T2018, T2020, T2023 } from '../fixtures/flex-dataset.js';
import {
  HAVE_REAL, REAL, REAL_SKIP_REASON, addKey, begin, body, get, limited, none, ok, removeDir, stalledGet, tempDir, until,
  type Reply, type Server,
} from '../helpers/rrscan.js';
import { describeEachBackend } from '../helpers/backends.js';

const TEXT = 'text/plain; charset=utf-8';
const NDJSON = 'application/x-ndjson';

/** An rrset lookup result (compat.md "Result objects": rdata is an array, bailiwick present). */
const rrset = (rrname: string, rrtype: string, first: number, last: number, bailiwick: string, rdata: string[], count = 3) =>
  ({ obj: { count, time_first: first, time_last: last, rrname, rrtype, bailiwick, rdata } });
/** An rdata lookup result (no bailiwick, rdata is one string). */
const rdataRow = (rrname: string, rrtype: string, first: number, last: number, rdata: string) =>
  ({ obj: { count: 3, time_first: first, time_last: last, rrname, rrtype, rdata } });

// The fixture's RRsets as rrset lookups return them.
const wwwA = rrset('www.paypal.com.', 'A', T2015, T2020, 'paypal.com.', ['192.0.2.10']);
const wwwAAAA = rrset('www.paypal.com.', 'AAAA', T2018, T2023, 'paypal.com.', ['2001:db8::10']);
const apexNS = rrset('paypal.com.', 'NS', T2015, T2023, 'com.', ['ns1.paypal-dns.net.', 'ns2.paypal-dns.net.']);
const apexSOA = rrset('paypal.com.', 'SOA', T2015, T2023, 'paypal.com.',
  ['ns1.paypal-dns.net. hostmaster.paypal.com. 2023010101 7200 3600 1209600 300']);
const apexMX = rrset('paypal.com.', 'MX', T2015, T2023, 'paypal.com.', ['10 mx.paypal.com.']);
const orgMX = rrset('example.org.', 'MX', T2015, T2023, 'example.org.', ['10 mail.example.org.', '20 mx2.paypal-dns.net.']);
const orgTXT = rrset('example.org.', 'TXT', T2020, T2023, 'example.org.', ['"hello world" "second string"']);
const orgDS = rrset('example.org.', 'DS', T2015, T2023, 'org.',
  ['31406 8 2 F78CF3344F72137235098ECBBD08947C2C9001C7F6A085A17F518B5D8F6B916D']);
// The same fixture records as rdata lookups return them.
const ns1Row = rdataRow('paypal.com.', 'NS', T2015, T2023, 'ns1.paypal-dns.net.');
const ns2Row = rdataRow('paypal.com.', 'NS', T2015, T2023, 'ns2.paypal-dns.net.');
const ip7 = rdataRow('paypal-login.example.net.', 'A', T2020, T2023, '198.51.100.7');
const ip8 = rdataRow('secure-paypal.com.evil.top.', 'A', T2023, T2023, '198.51.100.8');
const ip66 = rdataRow('xn--pypal-4ve.com.', 'A', T2020, T2023, '198.51.100.66');

// One RRset ingested twice, in two runs (two shards), to tell aggr=true from aggr=false.
const twice = (count: number, first: number, last: number) =>
  ({ count, time_first: first, time_last: last, rrname: 'twice.example.', rrtype: 'A', bailiwick: 'example.', rdata: ['192.0.2.99'] });

// 1,000 TXT RRsets of about 10 KB each under big.example.: a 10 MB answer,
// far more than the socket buffers hold, so a client that does not read
// keeps its request in flight for as long as it likes.
const BIG = Array.from({ length: 1000 }, (_, i) => ({
  count: 1, time_first: T2018, time_last: T2020, rrname: `n${i}.big.example.`, rrtype: 'TXT', bailiwick: 'big.example.',
  rdata: [Array(40).fill(`"${'x'.repeat(250)}"`).join(' ')],
}));

describeEachBackend('standard search parameters', (backend) => {
  let dir: string;
  let server: Server;
  const keys: Record<'plain' | 'small' | 'fencedAfter' | 'fencedBefore' | 'single', string> =
    { plain: '', small: '', fencedAfter: '', fencedBefore: '', single: '' };
  const as = (k: keyof typeof keys) => ({ 'X-API-Key': keys[k] });

  if (!HAVE_REAL) console.warn(`lookup-params.test.ts: ${REAL_SKIP_REASON}`);

  beforeAll(async () => {
    dir = tempDir();
    backend.ingestNdjson(dir, [...FLEX_FIXTURE, twice(2, T2015, T2018)], 'one.ndjson');
    backend.ingestNdjson(dir, [twice(5, T2020, T2023)], 'two.ndjson');
    backend.ingestNdjson(dir, BIG, 'big.ndjson');
    // The 2024 root zone holds none of the fixture's names; it only adds a.root-servers.net. and the like.
    if (HAVE_REAL) {
      backend.ingestFiles(dir, [path.join(REAL, 'zones/root.zone.2024101100')]);
    }
    keys.plain = addKey(dir, ['--unlimited', '--offset-max', '1000']);
    keys.small = addKey(dir, ['--unlimited', '--results-max', '2', '--offset-max', '1000']);
    // src/cli/keys.ts: --time-fence-after T hides data last seen before T; --time-fence-before T hides data first seen after T.
    keys.fencedAfter = addKey(dir, ['--unlimited', '--time-fence-after', String(T2020 + 1)]);
    keys.fencedBefore = addKey(dir, ['--unlimited', '--time-fence-before', String(T2015)]);
    keys.single = addKey(dir, ['--unlimited', '--max-concurrent', '1']);
    server = await backend.startServer(dir);
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    removeDir(dir);
  });

  /** GET with the plain key; asserts a 200 NDJSON answer and returns its body. */
  async function ndjson(p: string, key: keyof typeof keys = 'plain'): Promise<string> {
    const r = await get(server, p, as(key));
    expect(r.status, p).toBe(200);
    expect(r.headers['content-type'], p).toBe(NDJSON);
    return r.body;
  }

  describe('time fences', () => {
    it('combines absolute request fences (spec 4.3 time rule 2)', async () => {
      // first seen after 2015 and last seen after 2020: only the AAAA (2018..2023).
      expect(await ndjson(`/pdns/v2/lookup/rrset/name/*.paypal.com?time_first_after=${T2015}&time_last_after=${T2020}`))
        .toBe(body(begin, wwwAAAA, ok));
      // Fences are strict: first seen after 2018 excludes the AAAA first seen at 2018 exactly.
      expect(await ndjson(`/pdns/v2/lookup/rrset/name/*.paypal.com?time_first_after=${T2018}&time_last_after=${T2020}`))
        .toBe(body(begin, none));
    });

    it('reads a negative value as seconds before now', async () => {
      // Everything was first seen long ago: "first seen before one second ago" keeps all, "after" keeps none.
      expect(await ndjson('/pdns/v2/lookup/rrset/name/www.paypal.com?time_first_before=-1')).toBe(body(begin, wwwA, wwwAAAA, ok));
      expect(await ndjson('/pdns/v2/lookup/rrset/name/www.paypal.com?time_first_after=-1')).toBe(body(begin, none));
      expect(await ndjson('/pdns/v2/lookup/rdata/ip/198.51.100.8?time_last_before=-1')).toBe(body(begin, ip8, ok));
    });

    it('a key fenced after T hides what was last seen before T, and the request cannot widen it', async () => {
      expect(await ndjson('/pdns/v2/lookup/rrset/name/www.paypal.com', 'fencedAfter')).toBe(body(begin, wwwAAAA, ok));
      expect(await ndjson('/pdns/v2/lookup/rrset/name/www.paypal.com?time_last_after=0', 'fencedAfter')).toBe(body(begin, wwwAAAA, ok));
      // login-paypal.xyz. (198.51.100.9, last seen 2020) is hidden from the /24.
      expect(await ndjson('/pdns/v2/lookup/rdata/ip/198.51.100.0,24', 'fencedAfter')).toBe(body(begin, ip7, ip8, ip66, ok));
      // The request may still narrow: the AAAA was first seen at 2018, not after it.
      expect(await ndjson(`/pdns/v2/lookup/rrset/name/www.paypal.com?time_first_after=${T2018}`, 'fencedAfter')).toBe(body(begin, none));
    });

    it('a key fenced before T hides what was first seen after T, and the request cannot widen it', async () => {
      const visible = body(begin, apexNS, apexSOA, apexMX, wwwA, ok);
      expect(await ndjson('/pdns/v2/lookup/rrset/name/*.paypal.com', 'fencedBefore')).toBe(visible);
      expect(await ndjson(`/pdns/v2/lookup/rrset/name/*.paypal.com?time_first_before=${T2023 + 1}`, 'fencedBefore')).toBe(visible);
      expect(await ndjson(`/pdns/v2/lookup/rrset/name/*.paypal.com?time_last_before=${T2023}`, 'fencedBefore')).toBe(body(begin, wwwA, ok));
    });
  });

  describe.skipIf(!HAVE_REAL)('time fences on zone times (2024 root zone, serial 2024101100)', () => {
    const aRoot = { obj: { count: 1, zone_time_first: 1728604800, zone_time_last: 1728604800, rrname: 'a.root-servers.net.', rrtype: 'A',
      bailiwick: '.', rdata: ['198.41.0.4'] } };
    it('applies first/last fences to zone_time_first/zone_time_last, strictly', async () => {
      const p = '/pdns/v2/lookup/rrset/name/a.root-servers.net/A';
      expect(await ndjson(`${p}?time_first_after=1728604800`)).toBe(body(begin, none));
      expect(await ndjson(`${p}?time_first_after=1728604799`)).toBe(body(begin, aRoot, ok));
      expect(await ndjson(`${p}?time_last_before=1728604800`)).toBe(body(begin, none));
      expect(await ndjson(`${p}?time_last_before=1728604801`)).toBe(body(begin, aRoot, ok));
    });
  });

  describe('limit and offset against the key (results_max 2, offset_max 1000)', () => {
    const all = '/pdns/v2/lookup/rrset/name/*.paypal.com';
    it('limit=0 means results_max and a larger limit is cut to it', async () => {
      const capped = body(begin, apexNS, apexSOA, limited);
      expect(await ndjson(`${all}?limit=0`, 'small')).toBe(capped);
      expect(await ndjson(`${all}?limit=100000`, 'small')).toBe(capped);
      // No limit given: the default 10000 is cut to 2 as well.
      expect(await ndjson(all, 'small')).toBe(capped);
    });

    it('ends with succeeded, not limited, when the cap is reached by the last row', async () => {
      expect(await ndjson(`${all}?offset=3`, 'small')).toBe(body(begin, wwwA, wwwAAAA, ok));
    });

    it('offset up to offset_max is served; above it is 416', async () => {
      expect(await ndjson(`${all}?offset=1000`, 'small')).toBe(body(begin, none));
      const r = await get(server, `${all}?offset=1001`, as('small'));
      expect(r.status).toBe(416);
      expect(r.headers['content-type']).toBe(TEXT);
      // The spec leaves the 416 text open; src/errors/catalogue.ts OFFSET_TOO_LARGE.
      expect(r.body).toBe('Error: Offset exceeds the maximum allowed\n');
    });

    it('summarize caps num_results at results_max and refuses any offset with 416 text/plain', async () => {
      expect(await ndjson('/pdns/v2/summarize/rrset/name/*.paypal.com?limit=0', 'small')).toBe(body(begin,
        { obj: { count: 6, num_results: 2, time_first: T2015, time_last: T2023 } }, limited));
      for (const off of ['1', '0']) {
        const r = await get(server, `/pdns/v2/summarize/rrset/name/*.paypal.com?offset=${off}`, as('plain'));
        expect(r.status, off).toBe(416);
        expect(r.headers['content-type']).toBe(TEXT);
        // compat.md: "offset is not allowed there"; src/errors/catalogue.ts OFFSET_NOT_ALLOWED.
        expect(r.body).toBe('Error: Offset is not allowed\n');
      }
    });
  });

  describe('rrtype segments', () => {
    it('TYPE<n> (any case) is the same as the mnemonic', async () => {
      expect(await ndjson('/pdns/v2/lookup/rrset/name/www.paypal.com/TYPE1')).toBe(body(begin, wwwA, ok));
      expect(await ndjson('/pdns/v2/lookup/rrset/name/www.paypal.com/A')).toBe(body(begin, wwwA, ok));
      expect(await ndjson('/pdns/v2/lookup/rrset/name/www.paypal.com/type28')).toBe(body(begin, wwwAAAA, ok));
      expect(await ndjson('/pdns/v2/lookup/rdata/name/ns1.paypal-dns.net/TYPE2')).toBe(body(begin, ns1Row, ok));
    });

    it('no rrtype on the rrset path is every type, DNSSEC included (spec 4.1 rule 2)', async () => {
      expect(await ndjson('/pdns/v2/lookup/rrset/name/example.org')).toBe(body(begin, orgMX, orgTXT, orgDS, ok));
      expect(await ndjson('/pdns/v2/summarize/rrset/name/example.org'))
        .toBe(body(begin, { obj: { count: 9, num_results: 3, time_first: T2015, time_last: T2023 } }, ok));
      // The rdata paths, where the spec is silent, keep DNSDB's default: ANY.
      expect(await ndjson('/pdns/v2/lookup/rdata/name/mx2.paypal-dns.net')).toBe(await ndjson('/pdns/v2/lookup/rdata/name/mx2.paypal-dns.net/ANY'));
    });

    it('ANY leaves out DNSSEC types; ANY-DNSSEC gives only them', async () => {
      expect(await ndjson('/pdns/v2/lookup/rrset/name/example.org/ANY')).toBe(body(begin, orgMX, orgTXT, ok));
      expect(await ndjson('/pdns/v2/lookup/rrset/name/example.org/ANY-DNSSEC')).toBe(body(begin, orgDS, ok));
      expect(await ndjson('/pdns/v2/lookup/rrset/name/example.org/any-dnssec')).toBe(body(begin, orgDS, ok));
    });

    it('rdata/ip takes A, AAAA and ANY only, and they are interchangeable there (compat.md)', async () => {
      for (const t of ['A', 'AAAA', 'ANY', 'aaaa', '']) {
        expect(await ndjson(`/pdns/v2/lookup/rdata/ip/198.51.100.8${t ? '/' : ''}${t}`), t).toBe(body(begin, ip8, ok));
        expect(await ndjson(`/pdns/v2/lookup/rdata/ip/2001:db8::10${t ? '/' : ''}${t}`), t)
          .toBe(body(begin, rdataRow('www.paypal.com.', 'AAAA', T2018, T2023, '2001:db8::10'), ok));
      }
      const r = await get(server, '/pdns/v2/lookup/rdata/ip/198.51.100.8/ANY-DNSSEC', as('plain'));
      expect(r.status).toBe(400);
      expect(r.headers['content-type']).toBe(TEXT);
      expect(r.body).toBe('Error: RRTYPE has an unsupported value\n');
    });
  });

  describe('boolean spellings (compat.md: t f true false True False 1 0)', () => {
    it('humantime', async () => {
      const human = body(begin,
        { obj: { count: 3, time_first: '2015-01-01T00:00:00Z', time_last: '2020-01-01T00:00:00Z', rrname: 'www.paypal.com.', rrtype: 'A',
          bailiwick: 'paypal.com.', rdata: ['192.0.2.10'] } }, ok);
      for (const v of ['t', 'true', 'True', '1']) {
        expect(await ndjson(`/pdns/v2/lookup/rrset/name/www.paypal.com/A?humantime=${v}`), v).toBe(human);
      }
      for (const v of ['f', 'false', 'False', '0']) {
        expect(await ndjson(`/pdns/v2/lookup/rrset/name/www.paypal.com/A?humantime=${v}`), v).toBe(body(begin, wwwA, ok));
      }
    });

    it('aggr, on one RRset held by two shards', async () => {
      const summed = body(begin, rrset('twice.example.', 'A', T2015, T2023, 'example.', ['192.0.2.99'], 7), ok);
      // Un-aggregated rows come in shard order (src/search/merge.ts groups by input): the first ingest first.
      // ClickHouse holds the RRset aggregated over all data, as local shards compacted into one would.
      const apart = backend.name === 'ClickHouse' ? summed : body(begin,
        rrset('twice.example.', 'A', T2015, T2018, 'example.', ['192.0.2.99'], 2),
        rrset('twice.example.', 'A', T2020, T2023, 'example.', ['192.0.2.99'], 5), ok);
      expect(await ndjson('/pdns/v2/lookup/rrset/name/twice.example')).toBe(summed);
      for (const v of ['t', 'true', 'True', '1']) expect(await ndjson(`/pdns/v2/lookup/rrset/name/twice.example?aggr=${v}`), v).toBe(summed);
      for (const v of ['f', 'false', 'False', '0']) expect(await ndjson(`/pdns/v2/lookup/rrset/name/twice.example?aggr=${v}`), v).toBe(apart);
    });

    it('other spellings are 400 (src/query/params.ts parseBool accepts exactly the eight)', async () => {
      for (const q of ['humantime=TRUE', 'humantime=yes', 'aggr=F', 'aggr=']) {
        const r = await get(server, `/pdns/v2/lookup/rrset/name/www.paypal.com?${q}`, as('plain'));
        expect(r.status, q).toBe(400);
        expect(r.headers['content-type']).toBe(TEXT);
        expect(r.body, q).toBe('Error: unable to parse request\n');
      }
    });
  });

  describe('wildcards and raw values on the generated fixture', () => {
    it('rdata name: left-hand * and one-label + under paypal-dns.net', async () => {
      for (const v of ['*.paypal-dns.net', '+.paypal-dns.net']) {
        expect(await ndjson(`/pdns/v2/lookup/rdata/name/${v}/NS`), v).toBe(body(begin, ns1Row, ns2Row, ok));
      }
    });

    it('rdata name: right-hand * and + after ns1.paypal-dns', async () => {
      for (const v of ['ns1.paypal-dns.*', 'ns1.paypal-dns.+']) {
        expect(await ndjson(`/pdns/v2/lookup/rdata/name/${v}/NS`), v).toBe(body(begin, ns1Row, ok));
      }
    });

    it('owner name: www.paypal.*, +.paypal.com (apex excluded), www.paypal.+ and the raw wire name', async () => {
      for (const v of ['name/www.paypal.*', 'name/+.paypal.com', 'name/www.paypal.+', 'raw/037777770670617970616C03636F6D00']) {
        expect(await ndjson(`/pdns/v2/lookup/rrset/${v}`), v).toBe(body(begin, wwwA, wwwAAAA, ok));
      }
    });

    it('raw rdata: the wire form of ns1.paypal-dns.net. finds the NS record only', async () => {
      const hex = '036E73310A70617970616C2D646E73036E657400';
      expect(await ndjson(`/pdns/v2/lookup/rdata/raw/${hex}/NS`)).toBe(body(begin, ns1Row, ok));
      expect(await ndjson(`/pdns/v2/lookup/rdata/raw/${hex}`)).toBe(body(begin, ns1Row, ok));
    });

    it('a wildcard in the middle of a name is 400 (compat.md: leftmost or rightmost only)', async () => {
      for (const v of ['www.*.example.com', 'www.+.example.com']) {
        const r = await get(server, `/pdns/v2/lookup/rrset/name/${v}`, as('plain'));
        expect(r.status, v).toBe(400);
        expect(r.headers['content-type']).toBe(TEXT);
        expect(r.body, v).toBe('Error: unable to parse request\n');
      }
    });
  });


  describe('errors and limits of the front end', () => {
    it('answers 415 text/plain when Accept names nothing served', async () => {
      for (const p of ['/pdns/v2/lookup/rrset/name/paypal.com', '/pdns/v2/summarize/rrset/name/paypal.com']) {
        const r = await get(server, p, { ...as('plain'), Accept: 'text/html' });
        expect(r.status, p).toBe(415);
        expect(r.headers['content-type']).toBe(TEXT);
        // Spec 7 leaves the 415 text open; src/errors/catalogue.ts NOT_ACCEPTABLE.
        expect(r.body).toBe('Error: Unsupported Media Type\n');
      }
    });

    it('answers 400 text/plain for a mangled escape, a bad parameter and a bad rrtype', async () => {
      const cases: [string, string][] = [
        ['/pdns/v2/lookup/rrset/name/%zz', 'Error: exception occurred\n'],
        ['/pdns/v2/lookup/rdata/name/%E9', 'Error: exception occurred\n'],
        ['/pdns/v2/lookup/rrset/name/paypal.com?limit=%zz', 'Error: unable to parse request\n'],
        ['/pdns/v2/lookup/rrset/name/paypal.com?time_first_after=yesterday', 'Error: unable to parse request\n'],
        ['/pdns/v2/lookup/rrset/name/paypal.com?limit=-1', 'Error: unable to parse request\n'],
        ['/pdns/v2/summarize/rdata/ip/192.0.2.1/NS', 'Error: RRTYPE has an unsupported value\n'],
      ];
      for (const [p, text] of cases) {
        const r = await get(server, p, as('plain'));
        expect(r.status, p).toBe(400);
        expect(r.headers['content-type'], p).toBe(TEXT);
        expect(r.body, p).toBe(text);
      }
    });

    it('a key with --max-concurrent 1 gets 503 while its first request is in flight, then is served again', async () => {
      const held = await stalledGet(server.port, '/pdns/v2/lookup/rrset/name/*.big.example', keys.single);
      let closed = false;
      held.once('close', () => { closed = true; });
      try {
        for (const p of ['/pdns/v2/lookup/rrset/name/paypal.com', '/pdns/v2/regex/rrnames/paypal']) {
          const r = await get(server, p, as('single'));
          expect(r.status, p).toBe(503);
          expect(r.headers['content-type']).toBe(TEXT);
          // src/errors/catalogue.ts TOO_MANY_CONNECTIONS.
          expect(r.body).toBe('Error: Too many concurrent connections\n');
        }
        // Other keys are not affected.
        expect(await ndjson('/pdns/v2/lookup/rrset/name/www.paypal.com/A')).toBe(body(begin, wwwA, ok));
        expect(closed, 'the stalled request ended on its own: the answer fit in the socket buffers').toBe(false);
      } finally {
        held.destroy();
      }
      // The hang-up releases the slot, once the server has seen it.
      let after: Reply | undefined;
      await until('the hung-up request has released its slot',
        async () => (after = await get(server, '/pdns/v2/lookup/rrset/name/www.paypal.com/A', as('single'))).status !== 503, 10_000, 20);
      expect(after!.status).toBe(200);
      expect(after!.body).toBe(body(begin, wwwA, ok));
    });
  });
});
