// Flexible search parameters over HTTP against a real server: combined and
// per-key time fences, TYPE<n> and DNSSEC rrtype segments, glob escapes and
// negated classes, exclude (with `+`, its 4096-character limit), single
// percent-decoding, malformed query escapes, and regex classes (\W, \D,
// \P{L}, \n, [\x00-\x7f], (?s)) checked against a per-record match in JS.
// Complements flex-search.test.ts (audit items 3, 5 and 8).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEX_FIXTURE, T2015, T2018, T2020, T2023 } from '../fixtures/flex-dataset.js';
import { addKey, begin, body, get, none, ok, removeDir, tempDir, type Server } from '../helpers/rrscan.js';
import { describeEachBackend } from '../helpers/backends.js';

const n = (rrname: string, rrtype: string) => ({ obj: { rrname, rrtype } });
const TEXT = 'text/plain; charset=utf-8';
const NDJSON = 'application/x-ndjson';

// Every (name, rrtype) of `regex/rrnames/paypal`, in the server's order (flex-search.test.ts).
const PAYPAL = [n('login-paypal.xyz.', 'A'), n('paypal-login.example.net.', 'A'),
  n('paypal.com.', 'NS'), n('paypal.com.', 'SOA'), n('paypal.com.', 'MX'),
  n('secure-paypal.com.evil.top.', 'A'), n('www.paypal.com.', 'A'), n('www.paypal.com.', 'AAAA')];

describeEachBackend('flexible search parameters', (backend) => {
  let dir: string;
  let server: Server;
  let key: string;
  let fencedAfter: string;
  let fencedBefore: string;
  const H = (k = key) => ({ 'X-API-Key': k });

  beforeAll(async () => {
    dir = tempDir();
    backend.ingestNdjson(dir, FLEX_FIXTURE);
    key = addKey(dir, ['--unlimited']);
    // src/cli/keys.ts: --time-fence-after T hides data last seen before T; --time-fence-before T hides data first seen after T.
    fencedAfter = addKey(dir, ['--unlimited', '--time-fence-after', String(T2020 + 1)]);
    fencedBefore = addKey(dir, ['--unlimited', '--time-fence-before', String(T2015)]);
    server = await backend.startServer(dir);
  });

  afterAll(async () => {
    await server?.close();
    removeDir(dir);
  });

  /** GET; asserts a 200 NDJSON answer and returns its body. */
  async function ndjson(p: string, k = key): Promise<string> {
    const r = await get(server, p, H(k));
    expect(r.status, p).toBe(200);
    expect(r.headers['content-type'], p).toBe(NDJSON);
    return r.body;
  }

  /** GET; asserts a 400 text/plain answer with this text. */
  async function expect400(p: string, text: string): Promise<void> {
    const r = await get(server, p, H());
    expect(r.status, p).toBe(400);
    expect(r.headers['content-type'], p).toBe(TEXT);
    expect(r.body, p).toBe(`${text}\n`);
  }

  describe('time fences', () => {
    it('combines first-seen-after and last-seen-before (spec 4.3 time rule 2)', async () => {
      // Strict on both ends: only login-paypal.xyz. (2018..2020) lies inside (2015, 2023).
      expect(await ndjson(`/pdns/v2/regex/rrnames/.?time_first_after=${T2015}&time_last_before=${T2023}`))
        .toBe(body(begin, n('login-paypal.xyz.', 'A'), ok));
    });

    it('time_first_before keeps what was first seen before T', async () => {
      expect(await ndjson(`/pdns/v2/regex/rrnames/paypal?time_first_before=${T2018}`)).toBe(body(begin,
        n('paypal.com.', 'NS'), n('paypal.com.', 'SOA'), n('paypal.com.', 'MX'), n('www.paypal.com.', 'A'), ok));
    });

    it('a key fenced after 2020 hides names last seen by 2020, whatever the request asks', async () => {
      const visible = body(begin, n('paypal-login.example.net.', 'A'), n('paypal.com.', 'NS'), n('paypal.com.', 'SOA'),
        n('paypal.com.', 'MX'), n('secure-paypal.com.evil.top.', 'A'), n('www.paypal.com.', 'AAAA'), ok);
      expect(await ndjson('/pdns/v2/regex/rrnames/paypal', fencedAfter)).toBe(visible);
      expect(await ndjson('/pdns/v2/regex/rrnames/paypal?time_last_after=0', fencedAfter)).toBe(visible);
    });

    it('a key fence applies to rdata searches too', async () => {
      // The SPF TXT of abc-login.example.org. was last seen in 2018: hidden.
      const mail = { obj: { rdata: '10 mail.example.org.', rrtype: 'MX', raw_rdata: '000A046D61696C076578616D706C65036F726700' } };
      const cname = { obj: { rdata: 'abc-login.example.org.', rrtype: 'CNAME', raw_rdata: '096162632D6C6F67696E076578616D706C65036F726700' } };
      const spf = { obj: { rdata: '"v=spf1 include:_spf.example.org ~all"', rrtype: 'TXT',
        raw_rdata: '24763D7370663120696E636C7564653A5F7370662E6578616D706C652E6F7267207E616C6C' } };
      expect(await ndjson('/pdns/v2/regex/rdata/example%5C.org')).toBe(body(begin, spf, mail, cname, ok));
      expect(await ndjson('/pdns/v2/regex/rdata/example%5C.org', fencedAfter)).toBe(body(begin, mail, cname, ok));
    });

    it('a key fenced before 2015 keeps what was first seen by then; the request can only narrow', async () => {
      const visible = body(begin, n('paypal.com.', 'NS'), n('paypal.com.', 'SOA'), n('paypal.com.', 'MX'), n('www.paypal.com.', 'A'), ok);
      expect(await ndjson('/pdns/v2/regex/rrnames/paypal', fencedBefore)).toBe(visible);
      expect(await ndjson(`/pdns/v2/regex/rrnames/paypal?time_first_before=${T2023 + 1}`, fencedBefore)).toBe(visible);
      expect(await ndjson(`/pdns/v2/regex/rrnames/paypal?time_last_before=${T2023}`, fencedBefore))
        .toBe(body(begin, n('www.paypal.com.', 'A'), ok));
    });
  });

  describe('rrtype segments', () => {
    it('rrnames take TYPE<n>, DNSSEC types included', async () => {
      expect(await ndjson('/pdns/v2/regex/rrnames/%5Eexample%5C.org%5C.$/TYPE15')).toBe(body(begin, n('example.org.', 'MX'), ok));
      expect(await ndjson('/pdns/v2/regex/rrnames/%5Eexample%5C.org%5C.$/TYPE43')).toBe(body(begin, n('example.org.', 'DS'), ok));
    });

    it('rdata takes TYPE<n> and ANY (all rdata types)', async () => {
      const ns1 = { obj: { rdata: 'ns1.paypal-dns.net.', rrtype: 'NS', raw_rdata: '036E73310A70617970616C2D646E73036E657400' } };
      const ns2 = { obj: { rdata: 'ns2.paypal-dns.net.', rrtype: 'NS', raw_rdata: '036E73320A70617970616C2D646E73036E657400' } };
      expect(await ndjson('/pdns/v2/glob/rdata/*paypal-dns*/TYPE2')).toBe(body(begin, ns1, ns2, ok));
      expect(await ndjson('/pdns/v2/glob/rdata/*paypal-dns*/ANY')).toBe(await ndjson('/pdns/v2/glob/rdata/*paypal-dns*'));
    });

    it('rdata refuses DNSSEC types in any spelling and non-rdata types as TYPE<n>', async () => {
      await expect400('/pdns/v2/glob/rdata/x/TYPE43', 'Error: RRTYPE has an unsupported DNSSEC value');
      await expect400('/pdns/v2/glob/rdata/x/ANY-DNSSEC', 'Error: RRTYPE has an unsupported DNSSEC value');
      await expect400('/pdns/v2/regex/rdata/x/rrsig', 'Error: RRTYPE has an unsupported DNSSEC value');
      await expect400('/pdns/v2/glob/rdata/x/TYPE1', 'Error: RRTYPE has an unsupported value');
    });
  });

  describe('glob details', () => {
    it('exclude takes a glob when the search is a glob', async () => {
      expect(await ndjson('/pdns/v2/glob/rrnames/*paypal*?exclude=*login*')).toBe(body(begin,
        n('paypal.com.', 'NS'), n('paypal.com.', 'SOA'), n('paypal.com.', 'MX'),
        n('secure-paypal.com.evil.top.', 'A'), n('www.paypal.com.', 'A'), n('www.paypal.com.', 'AAAA'), ok));
    });

    it('\\* is a literal asterisk', async () => {
      expect(await ndjson('/pdns/v2/glob/rrnames/%5C*.paypal.com.')).toBe(body(begin, none));
    });

    it('[!s] is one character other than s (so it also consumes the first letter of paypal)', async () => {
      // Anchored ^[^s].*paypal.*$: paypal.com. and paypal-login... start with "paypal" itself, so they do not match.
      expect(await ndjson('/pdns/v2/glob/rrnames/%5B!s%5D*paypal*')).toBe(body(begin,
        n('login-paypal.xyz.', 'A'), n('www.paypal.com.', 'A'), n('www.paypal.com.', 'AAAA'), ok));
    });

    it('decodes the value once: %252A is the text %2A, not a wildcard', async () => {
      expect(await ndjson('/pdns/v2/glob/rdata/%252A')).toBe(body(begin, none));
      expect(await ndjson('/pdns/v2/glob/rrnames/%252A')).toBe(body(begin, none));
    });
  });

  describe('exclude and query-string rules', () => {
    it('+ is a literal plus in the pattern and in exclude, never a space', async () => {
      expect(await ndjson('/pdns/v2/regex/rrnames/-+login')).toBe(body(begin,
        n('abc-login.example.org.', 'A'), n('abc-login.example.org.', 'TXT'), n('paypal-login.example.net.', 'A'), ok));
      const withoutDashLogin = body(begin, ...PAYPAL.filter((o) => o.obj.rrname !== 'paypal-login.example.net.'), ok);
      expect(await ndjson('/pdns/v2/regex/rrnames/paypal?exclude=-+login')).toBe(withoutDashLogin);
      expect(await ndjson('/pdns/v2/regex/rrnames/paypal?exclude=-%2Blogin')).toBe(withoutDashLogin);
    });

    it('exclude is limited to 4096 characters before URL encoding (spec 8.6)', async () => {
      const all = body(begin, ...PAYPAL, ok);
      expect(await ndjson(`/pdns/v2/regex/rrnames/paypal?exclude=${'a'.repeat(4096)}`)).toBe(all);
      // 2048 escaped dots: 4096 characters decoded, 6144 in the URL.
      expect(await ndjson(`/pdns/v2/regex/rrnames/paypal?exclude=${'%5C.'.repeat(2048)}`)).toBe(all);
      await expect400(`/pdns/v2/regex/rrnames/paypal?exclude=${'a'.repeat(4097)}`, 'Error: unable to parse request');
      await expect400(`/pdns/v2/regex/rrnames/paypal?exclude=${'%5C.'.repeat(2048)}a`, 'Error: unable to parse request');
    });

    it('a malformed escape in the query string is 400 unable to parse request', async () => {
      await expect400('/pdns/v2/regex/rrnames/paypal?limit=%zz', 'Error: unable to parse request');
      await expect400('/pdns/v2/regex/rrnames/paypal?exclude=login%', 'Error: unable to parse request');
    });
  });

  describe('regex classes against a per-record match', () => {
    // The server's answer must equal what a plain per-name test over the
    // fixture gives: none of these may run across the record separator of a
    // blob scan. Flexible search is case-insensitive (README); RE2 and JS
    // agree on these classes. Order: name bytewise, then rrtype number.
    const RRTYPE_CODE: Record<string, number> = { A: 1, NS: 2, CNAME: 5, SOA: 6, MX: 15, TXT: 16, AAAA: 28, DS: 43 };
    const expectedFor = (re: RegExp) => {
      const seen = new Map<string, { rrname: string; rrtype: string }>();
      for (const r of FLEX_FIXTURE) if (re.test(r.rrname)) seen.set(`${r.rrname} ${r.rrtype}`, { rrname: r.rrname, rrtype: r.rrtype });
      const rows = [...seen.values()].sort((a, b) =>
        (a.rrname < b.rrname ? -1 : a.rrname > b.rrname ? 1 : 0) || RRTYPE_CODE[a.rrtype]! - RRTYPE_CODE[b.rrtype]!);
      return body(begin, ...rows.map((r) => n(r.rrname, r.rrtype)), rows.length > 0 ? ok : none);
    };
    const cases: [string, string, RegExp, number][] = [
      // [RE2 pattern, URL form, JS equivalent, names expected (guards against a vacuous check)]
      ['\\W\\W', '%5CW%5CW', /\W\W/i, 1],
      ['^\\D+$', '%5E%5CD%2B$', /^\D+$/i, 8],
      ['\\D{26}', '%5CD%7B26%7D', /\D{26}/i, 1],
      ['\\P{L}\\P{L}', '%5CP%7BL%7D%5CP%7BL%7D', /\P{L}\P{L}/iu, 2],
      ['\\n', '%5Cn', /\n/i, 0],
      ['\\.\\n', '%5C.%5Cn', /\.\n/i, 0],
      ['[\\x00-\\x2e]{2}', '%5B%5Cx00-%5Cx2e%5D%7B2%7D', /[\x00-\x2e]{2}/i, 1],
      ['[\\x00-\\x7f]{48}', '%5B%5Cx00-%5Cx7f%5D%7B48%7D', /[\x00-\x7f]{48}/i, 1],
      ['(?s)\\.com\\..', '(%3Fs)%5C.com%5C..', /\.com\../is, 1],
    ];
    for (const [source, url, re, count] of cases) {
      it(`${source} matches the same names as a per-record test`, async () => {
        expect(new Set(FLEX_FIXTURE.filter((r) => re.test(r.rrname)).map((r) => r.rrname)).size).toBe(count);
        expect(await ndjson(`/pdns/v2/regex/rrnames/${url}`)).toBe(expectedFor(re));
      });
    }

    it('POSIX classes inside brackets: ^[[:alpha:]][[:digit:]]', async () => {
      expect(await ndjson('/pdns/v2/regex/rrnames/%5E%5B%5B:alpha:%5D%5D%5B%5B:digit:%5D%5D'))
        .toBe(body(begin, n('a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8.cdn.example.', 'A'), ok));
    });
  });
});
