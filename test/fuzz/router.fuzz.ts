// Fuzz target: the request path from a raw URL to a validated query
// (src/server/router.ts, src/query/percent.ts, params.ts, flex-query.ts,
// lookup-query.ts, and the licence step applyKey), called directly.
//
// Properties:
// - total: any generated path, query string and Accept header gets a route
//   or an ApiError of the catalogue with a spec status (400, 404, 415, 416),
//   never another exception; spec rules that fix the answer hold (unknown
//   top-level component 404; flexible search with an unknown or missing
//   WHAT_TO_SEARCH 400 with that text; no supported Accept type 415);
// - valid requests built from the spec's shapes are accepted, and the
//   values arrive decoded exactly once;
// - percent-encoding more characters of a segment after the service prefix
//   or of a parameter (in either hex case) never changes the answer.

import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { LIMITS } from '../../src/config/limits.js';
import { normalizeName } from '../../src/dns/name.js';
import { API_ERRORS } from '../../src/errors/catalogue.js';
import type { FlexQuery } from '../../src/query/flex-query.js';
import type { LookupQuery } from '../../src/query/lookup-query.js';
import { parseQueryString, percentDecode } from '../../src/query/percent.js';
import { checkProperty, FUZZ_TIMEOUT_MS, runsFor } from './fuzz-config.js';
import {
  acceptArb, answerOf, encodeValue, keyWindowArb, PARSE_ERROR_CODES, patternValue, requestArb, type Request,
} from './request-gen.js';

const RUNS = runsFor(2_000);
const SPEC_STATUSES = new Set([200, 400, 404, 415, 416]);

/** The decoded path segments after the service prefix, or undefined when the path has none of the prefixes. */
function segmentsAfterPrefix(path: string): string[] | undefined {
  const raw = path.split('/');
  for (const p of [['pdns', 'v2', 'dnsdb', 'v2'], ['pdns', 'v2'], ['dnsdb', 'v2']]) {
    if (raw[0] === '' && p.every((s, i) => raw[i + 1] === s)) return raw.slice(p.length + 1);
  }
  return undefined;
}

describe('fuzz: router and query parsing', () => {
  test('every request gets a route or a catalogue error with a spec status', () => {
    checkProperty('router total', RUNS, fc.property(requestArb(false), keyWindowArb, (req, key) => {
      const a = answerOf(req, key);
      expect(SPEC_STATUSES.has(a.status), `status ${a.status}`).toBe(true);
      if (a.code !== undefined) {
        expect(a.code === 'NOT_FOUND' || PARSE_ERROR_CODES.has(a.code), a.code).toBe(true);
        expect(API_ERRORS[a.code].status).toBe(a.status);
      }
      // Spec rules that decide the answer on their own.
      const segs = segmentsAfterPrefix(req.path);
      const first = segs?.[0] === undefined ? undefined : percentDecode(segs[0]);
      const known = ['ping', 'rate_limit', 'openapi.json', 'regex', 'glob', 'lookup', 'summarize'];
      const wellFormed = segs !== undefined && segs.every((s) => percentDecode(s) !== undefined);
      if (segs === undefined || (wellFormed && (first === undefined || !known.includes(first)))) {
        expect(a.code, 'unknown top-level component').toBe('NOT_FOUND');
      }
      if (wellFormed && (first === 'regex' || first === 'glob')) {
        const what = segs.length > 1 ? percentDecode(segs[1]!) : undefined;
        // A query string with a malformed escape is refused before the path is looked at (both are 400s).
        const queryOk = parseQueryString(req.query) !== undefined;
        if (queryOk && a.code !== 'NOT_ACCEPTABLE' && what !== 'rrnames' && what !== 'rdata') {
          expect(a.code, 'missing or unknown WHAT_TO_SEARCH').toBe('BAD_WHAT_TO_SEARCH');
        }
      }
    }));
  }, FUZZ_TIMEOUT_MS);

  test('valid flexible searches are accepted with their values decoded once', () => {
    const arb = fc.record({
      prefix: fc.constantFrom('/pdns/v2', '/dnsdb/v2', '/pdns/v2/dnsdb/v2'),
      method: fc.constantFrom('regex', 'glob'),
      target: fc.constantFrom('rrnames', 'rdata'),
      pattern: patternValue.filter((p) => p.length <= LIMITS.patternCharsMax),
      rrtype: fc.option(fc.constantFrom('ANY', 'any', 'NS', 'TXT', 'MX', 'CNAME', 'SOA', 'PTR', 'SRV', 'TYPE2'), { nil: undefined }),
      exclude: fc.option(patternValue.filter((p) => p.length <= LIMITS.excludeCharsMax), { nil: undefined }),
      limit: fc.option(fc.nat(), { nil: undefined }),
      offset: fc.option(fc.nat(1_000), { nil: undefined }),
      after: fc.option(fc.integer({ min: -1_000_000, max: 2_000_000_000 }), { nil: undefined }),
      picks: fc.array(fc.boolean(), { maxLength: 8 }),
      lower: fc.boolean(),
      accept: fc.constantFrom('', '*/*', 'application/x-ndjson', 'text/html, application/x-ndjson'),
    });
    checkProperty('router valid flex', RUNS, fc.property(arb, (g) => {
      const pick = (i: number) => g.picks[i % Math.max(g.picks.length, 1)] ?? false;
      const enc = (v: string, extra = '') => encodeValue(v, pick, g.lower, false, extra);
      const path = `${g.prefix}/${g.method}/${g.target}/${enc(g.pattern)}${g.rrtype === undefined ? '' : `/${g.rrtype}`}`;
      const params: string[] = [];
      if (g.exclude !== undefined) params.push(`exclude=${enc(g.exclude, '&=')}`);
      if (g.limit !== undefined) params.push(`limit=${g.limit}`);
      if (g.offset !== undefined) params.push(`offset=${g.offset}`);
      if (g.after !== undefined) params.push(`time_last_after=${g.after}`);
      const a = answerOf({ path, query: params.join('&'), accept: g.accept },
        { resultsMax: 10_000, offsetMax: 1_000, timeFenceAfter: undefined, timeFenceBefore: undefined });
      expect(a).toMatchObject({ status: 200, route: 'flex' });
      const q = a.params as FlexQuery;
      expect({ method: q.method, target: q.target, pattern: q.pattern, exclude: q.exclude, limit: q.limit, offset: q.offset })
        .toEqual({ method: g.method, target: g.target, pattern: g.pattern, exclude: g.exclude, limit: g.limit, offset: g.offset ?? 0 });
    }));
  }, FUZZ_TIMEOUT_MS);

  test('valid standard searches are accepted', () => {
    const label = fc.string({ unit: fc.constantFrom(...'abcxyz019-'), minLength: 1, maxLength: 10 });
    const name = fc.array(label, { minLength: 1, maxLength: 4 }).map((l) => l.join('.'));
    const arb = fc.record({
      prefix: fc.constantFrom('/pdns/v2', '/dnsdb/v2'),
      op: fc.constantFrom('lookup', 'summarize'),
      value: fc.oneof(
        fc.tuple(name, fc.constantFrom('', '.')).map(([n, d]) => ({ path: `rrset/name/${n}${d}`, name: normalizeName(n) })),
        name.map((n) => ({ path: `rrset/name/*.${n}`, name: normalizeName(n) })),
        fc.tuple(fc.nat(255), fc.nat(255)).map(([x, y]) => ({ path: `rdata/ip/192.0.${x}.${y}/A`, name: undefined })),
        name.map((n) => ({ path: `rdata/name/${n}/NS`, name: normalizeName(n) })),
      ),
      limit: fc.option(fc.nat(), { nil: undefined }),
      accept: fc.constantFrom('', '*/*'),
    });
    checkProperty('router valid lookup', RUNS, fc.property(arb, (g) => {
      const query = g.limit === undefined ? '' : `limit=${g.limit}`;
      const a = answerOf({ path: `${g.prefix}/${g.op}/${g.value.path}`, query, accept: g.accept },
        { resultsMax: 10_000, offsetMax: undefined, timeFenceAfter: undefined, timeFenceBefore: undefined });
      expect(a).toMatchObject({ status: 200, route: g.op });
      const q = a.params as LookupQuery;
      expect(q.limit).toBe(g.limit);
      if (g.value.name !== undefined && q.value.kind === 'name') {
        const m = q.value.match;
        expect(m.mode === 'exact' || m.mode === 'under' ? m.name : undefined).toBe(g.value.name);
      }
    }));
  }, FUZZ_TIMEOUT_MS);

  test('encoding more characters never changes the answer', () => {
    /** `raw` with some characters that are not '%' escapes, nor in `keep`, percent-encoded. */
    const encodeMore = (raw: string, keep: string, picks: boolean[], lower: boolean): string => {
      let out = '';
      let k = 0;
      for (let i = 0; i < raw.length;) {
        if (raw[i] === '%') {
          out += raw.slice(i, i + 3);
          i += 3;
          continue;
        }
        const ch = String.fromCodePoint(raw.codePointAt(i)!);
        i += ch.length;
        out += keep.includes(ch) || !(picks[k++ % Math.max(picks.length, 1)] ?? false) ? ch : encodeValue(ch, () => true, lower, false);
      }
      return out;
    };
    const arb = fc.tuple(requestArb(false), keyWindowArb, fc.array(fc.boolean(), { minLength: 1, maxLength: 12 }), fc.boolean());
    checkProperty('router encoding-invariant', RUNS, fc.property(arb, ([req, key, picks, lower]) => {
      // The service prefix is matched as sent (a front end's job, like any unknown URL); the segments after it are decoded.
      const rest = segmentsAfterPrefix(req.path);
      const prefixLength = rest === undefined ? req.path.length : req.path.length - rest.join('/').length;
      const more: Request = {
        path: req.path.slice(0, prefixLength) + encodeMore(req.path.slice(prefixLength), '/', picks, lower),
        query: encodeMore(req.query, '&=', picks, lower),
        accept: req.accept,
      };
      fc.pre(more.path.length <= LIMITS.urlBytesMax);
      expect(answerOf(more, key)).toEqual(answerOf(req, key));
    }));
  }, FUZZ_TIMEOUT_MS);

  test('Accept: no supported type is 415 for every search, whatever else is wrong after routing', () => {
    checkProperty('router accept', RUNS, fc.property(requestArb(false), acceptArb, keyWindowArb, (req, accept, key) => {
      const a = answerOf({ ...req, accept }, key);
      const b = answerOf({ ...req, accept: 'text/csv' }, key);
      if (a.route !== undefined && !['ping', 'rate_limit', 'openapi', 'not_found'].includes(a.route)) {
        expect(b.code).toBe('NOT_ACCEPTABLE');
      }
    }));
  }, FUZZ_TIMEOUT_MS);
});
