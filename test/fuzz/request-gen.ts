// Generated API requests for the router/query and HTTP fuzz targets, and the
// answer the front end must give each, computed from the parsing functions
// themselves in the order app.ts runs them:
//   URL length (400) -> route (404) -> Accept (415) -> parse (400)
//   -> [authenticate (403), HTTP only] -> licence (416) -> 200.
//
// A request is a path, a query string and an Accept header. Paths are built
// from segments that mix valid and invalid values of every component
// (prefixes, methods, targets, names, addresses, hex, patterns, rrtypes),
// percent-encodings (some characters encoded, others raw, in either hex
// case, double-encoded, malformed) and odd characters. Segments are encoded
// so that `/` inside a value stays inside it; `forHttp` also encodes what an
// HTTP request line cannot carry raw.

import fc from 'fast-check';
import { LIMITS } from '../../src/config/limits.js';
import { API_ERRORS, ApiError, isApiError, type ApiErrorCode } from '../../src/errors/catalogue.js';
import { applyKey, type KeyWindow } from '../../src/query/params.js';
import type { SearchBackend } from '../../src/search/backend.js';
import { acceptsNdjson, route, type Route } from '../../src/server/router.js';
import { parseSearch } from '../../src/server/search-request.js';
import { parseWatchRequest } from '../../src/server/watch-request.js';

/** Every code the parse path may answer with, and its status; anything else is a bug. */
export const PARSE_ERROR_CODES: ReadonlySet<ApiErrorCode> = new Set<ApiErrorCode>([
  'EXCEPTION', 'UNPARSABLE_REQUEST', 'BAD_SEARCH_METHOD', 'BAD_WHAT_TO_SEARCH', 'BAD_RRTYPE', 'BAD_RRTYPE_DNSSEC',
  'MISSING_SEGMENT', 'TOO_MANY_SEGMENTS', 'NOT_ACCEPTABLE', 'OFFSET_NOT_ALLOWED', 'OFFSET_TOO_LARGE',
]);

export interface Request {
  path: string;
  query: string;
  accept: string;
}

export interface Answer {
  status: number;
  /** The catalogue entry of an error answer (NOT_FOUND for the front end's 404). */
  code?: ApiErrorCode;
  /** Where the router sent the request, when it got that far. */
  route?: Route['kind'];
  /** The error came from the key's licence (applyKey), which the server applies after authentication. */
  licence?: boolean;
  /** The validated query of a search, for comparisons. */
  params?: unknown;
}

/**
 * parseSearch needs a backend only for planning, which happens after the
 * answer is decided; this one fails the test if it is ever asked.
 */
const NEVER_PLANNED: SearchBackend = {
  planFlex: () => { throw new Error('parse asked the backend to plan'); },
  planLookup: () => { throw new Error('parse asked the backend to plan'); },
  planWatch: () => { throw new Error('parse asked the backend to plan'); },
  describe: () => { throw new Error('parse asked the backend to describe itself'); },
  notReady: () => { throw new Error('parse asked the backend whether it is ready'); },
  close: async () => undefined,
};

/** Fixed "now" for relative times, so two parses of one request compare equal. */
export const NOW = 1_760_000_000;

/**
 * The answer to a request from a client whose key passes authentication and
 * has `key`'s licence. Throws only what the parse path throws that is not an
 * ApiError (a bug the caller reports).
 */
export function answerOf(req: Request, key: KeyWindow): Answer {
  let kind: Route['kind'] | undefined;
  let licence = false;
  try {
    if (req.path.length > LIMITS.urlBytesMax) throw new ApiError('EXCEPTION');
    const r = route(req.path);
    kind = r.kind;
    if (r.kind === 'not_found') return { status: 404, code: 'NOT_FOUND', route: r.kind };
    if (r.kind === 'ping' || r.kind === 'rate_limit' || r.kind === 'openapi') return { status: 200, route: r.kind };
    if (!acceptsNdjson(req.accept)) throw new ApiError('NOT_ACCEPTABLE');
    // The generators make no watch paths (a watch's stream never ends by itself); a typed case all the same.
    const search = r.kind === 'watch' ? parseWatchRequest(r.segments, req.query, NOW, NEVER_PLANNED)
      : parseSearch(r.kind, r.segments, req.query, req.path, NOW, NEVER_PLANNED, LIMITS.searchTimeoutMs);
    licence = true;
    applyKey(search.params, key);
    return { status: 200, route: r.kind, params: search.params };
  } catch (err) {
    if (!isApiError(err)) throw err;
    if (!(err instanceof ApiError)) throw new Error(`an ApiError-like object that is no ApiError: ${String(err)}`);
    const a: Answer = { status: err.status, code: err.code, licence };
    if (kind !== undefined) a.route = kind;
    return a;
  }
}

/** The status and exact body the catalogue gives an error code (text/plain bodies end with a newline on the wire). */
export function catalogueReply(code: ApiErrorCode): { status: number; contentType: string; body: string } {
  const e = API_ERRORS[code];
  const body = e.contentType === 'text/plain' ? `${e.text}\n` : e.text;
  return { status: e.status, contentType: `${e.contentType}; charset=utf-8`, body };
}

// ---------------------------------------------------------------------------
// Encoding.

const hex2 = (b: number, lower: boolean) => {
  const h = b.toString(16).padStart(2, '0');
  return lower ? h : h.toUpperCase();
};

/** Characters that are never sent raw inside a segment: they would change how the path splits or decodes. */
const ALWAYS_ENCODED_UNIT = new Set(['%', '/']);

/**
 * Percent-encodes the characters of a decoded value that `pick` selects (and
 * those that must be encoded) as UTF-8 escapes in upper or lower hex.
 * `forHttp` also encodes what an HTTP request line cannot carry raw: controls,
 * space, `?`, `#`, and everything beyond ASCII (node would send it as Latin-1).
 */
export function encodeValue(value: string, pick: (i: number) => boolean, lower: boolean, forHttp: boolean, extra = ''): string {
  let out = '';
  let i = 0;
  for (const ch of value) {
    const code = ch.codePointAt(0)!;
    const must = ALWAYS_ENCODED_UNIT.has(ch) || extra.includes(ch) ||
      (forHttp && (code <= 0x20 || code >= 0x7f || ch === '?' || ch === '#'));
    if (must || pick(i++)) {
      for (const b of Buffer.from(ch, 'utf8')) out += '%' + hex2(b, lower);
    } else out += ch;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Decoded component values, valid and invalid mixed.

const label = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: fc.constantFrom(...'abcdexyz09-_'), minLength: 1, maxLength: 8 }) },
  { weight: 1, arbitrary: fc.constantFrom('A', 'WWW', 'xn--bcher-kva', '*', '+', '\\.', '\\046', '\\999', 'a b', '\u00e9', 'x'.repeat(63),
    'x'.repeat(64)) },
);
const nameValue = fc.tuple(fc.array(label, { minLength: 1, maxLength: 5 }), fc.boolean())
  .map(([labels, dot]) => labels.join('.') + (dot ? '.' : ''));
const wildName = fc.oneof(
  nameValue,
  nameValue.map((n) => `*.${n}`),
  nameValue.map((n) => `+.${n}`),
  nameValue.map((n) => `${n.replace(/\.$/, '')}.*`),
  nameValue.map((n) => `${n.replace(/\.$/, '')}.+`),
  nameValue.map((n) => `.${n}`),
  fc.constantFrom('.', '..', '*', '+', '*.', 'a..b', 'a.*.b', '*.*', `${'a.'.repeat(130)}`, 'com'),
);
const ipValue = fc.oneof(
  fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((o) => o.join('.')),
  fc.constantFrom('2001:db8::1', '::', '::1', 'fe80::1%eth0', '2001:db8::', '1.2.3', '256.1.1.1', '01.2.3.4', 'x', '', '1.2.3.4.5'),
  fc.tuple(fc.constantFrom('192.0.2.0', '2001:db8::', '10.0.0.1'), fc.constantFrom('0', '8', '24', '32', '33', '64', '128', '129',
    '', 'x', '0024')).map(([a, l]) => `${a},${l}`),
  fc.constantFrom('192.0.2.1-192.0.2.9', '192.0.2.9-192.0.2.1', '::1-::2', '1.2.3.4-::1', '-1.2.3.4', '1.2.3.4-'),
);
const hexValue = fc.oneof(
  fc.uint8Array({ maxLength: 24 }).map((b) => Buffer.from(b).toString('hex')),
  fc.constantFrom('03777777076578616D706C6503636F6D00', '000A04657863680366736902696F00', '0', 'zz', '00', 'C000', '3F'),
);
/** Pattern-ish text: regex and glob syntax over a DNS-ish alphabet. */
export const patternValue = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: fc.constantFrom(...'abcxz09.-_*+?[]()|^$\\{},!:" '), minLength: 1, maxLength: 16 }) },
  { weight: 1, arbitrary: fc.constantFrom('.', '.*', '(', '[a-', '\\', 'a{1001}', '(?P<x>a)', '\\pL', 'a'.repeat(LIMITS.patternCharsMax),
    'a'.repeat(LIMITS.patternCharsMax + 1)) },
);
/** Mostly one of `valid`, sometimes one of `invalid`. */
const mostly = (valid: string[], invalid: string[]) =>
  fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...valid) }, { weight: 1, arbitrary: fc.constantFrom(...invalid) });

const rrtypeValue = mostly(['A', 'a', 'AAAA', 'ANY', 'any', 'ANY-DNSSEC', 'any-dnssec', 'DS', 'RRSIG', 'NSEC3', 'NS', 'TXT', 'MX', 'SOA',
  'CNAME', 'PTR', 'SRV', 'HINFO', 'NULL', 'LOC', 'TYPE1', 'TYPE65535', 'type46'], ['TYPE65536', 'TYPE0', 'OPT', 'TYPE', 'BOGUS', '', 'A ']);
const oddValue = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.constantFrom('', ' ', '..', '.', '\u0000', '\uFFFD', '\u{1F600}', 'x'.repeat(300)),
);

/** A segment as sent: a decoded value encoded, or raw text that may hold malformed escapes. */
function segment(value: fc.Arbitrary<string>, forHttp: boolean): fc.Arbitrary<string> {
  const encoded = fc.tuple(value, fc.array(fc.boolean(), { maxLength: 8 }), fc.boolean())
    .map(([v, picks, lower]) => encodeValue(v, (i) => picks[i % Math.max(picks.length, 1)] ?? false, lower, forHttp));
  const raw = fc.constantFrom('%', '%zz', '%2', '%C3', '%ED%A0%80', '%00', '%2F', '%252A', '%2a', '%E2%82%AC', '%FF', '%c3%a9', '+');
  return fc.oneof({ weight: 60, arbitrary: encoded }, { weight: 1, arbitrary: raw },
    { weight: 1, arbitrary: fc.tuple(encoded, raw).map(([a, b]) => a + b) });
}

const PREFIXES = ['/pdns/v2', '/dnsdb/v2', '/pdns/v2/dnsdb/v2'];
const BAD_PREFIXES = ['', '/pdns', '/pdns/v1', '/PDNS/v2', '/x/pdns/v2', '/dnsdb/v2/pdns/v2', '/pdns/v2/', '//pdns/v2', 'pdns/v2'];

function pathArb(forHttp: boolean): fc.Arbitrary<string> {
  const seg = (v: fc.Arbitrary<string>) => segment(v, forHttp);
  // Present with odds `present` : 1; a missing component ends the path.
  const opt = (a: fc.Arbitrary<string>, present = 8) => fc.oneof({ weight: present, arbitrary: a },
    { weight: 1, arbitrary: fc.constant(undefined) });
  const flex = fc.tuple(
    seg(mostly(['regex', 'glob'], ['Regex', 'grep'])),
    opt(seg(mostly(['rrnames', 'rdata'], ['rrname', 'RDATA', '']))),
    opt(seg(fc.oneof({ weight: 5, arbitrary: patternValue }, { weight: 1, arbitrary: oddValue }))),
    opt(seg(rrtypeValue), 1),
    opt(seg(oddValue), 1),
  );
  const lookup = fc.tuple(
    seg(fc.constantFrom('lookup', 'summarize')),
    opt(seg(mostly(['rrset', 'rdata'], ['rrsets', '']))),
    opt(seg(mostly(['name', 'raw', 'ip'], ['names', '']))),
    opt(seg(fc.oneof({ weight: 4, arbitrary: wildName }, { weight: 2, arbitrary: ipValue }, { weight: 2, arbitrary: hexValue },
      { weight: 1, arbitrary: oddValue }))),
    opt(seg(rrtypeValue), 1),
    opt(seg(fc.oneof(nameValue, oddValue)), 1),
    opt(seg(oddValue), 1),
  );
  const other = fc.array(seg(fc.oneof(fc.constantFrom('ping', 'rate_limit', 'bogus', 'v2', 'pdns'), oddValue)), { maxLength: 3 });
  const segments = fc.oneof({ weight: 4, arbitrary: flex }, { weight: 4, arbitrary: lookup }, { weight: 1, arbitrary: other })
    .map((parts) => {
      // A missing component ends the path: later ones are dropped, as a client would never send them.
      const out: string[] = [];
      for (const p of parts as (string | undefined)[]) {
        if (p === undefined) break;
        out.push(p);
      }
      return out;
    });
  const prefix = fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...PREFIXES) },
    { weight: 1, arbitrary: fc.constantFrom(...BAD_PREFIXES) });
  return fc.tuple(prefix, segments, fc.constantFrom('', '', '', '/', '//'))
    .map(([p, segs, tail]) => `${p}/${segs.join('/')}${segs.length > 0 ? tail : ''}`);
}

const PARAM_NAMES = ['limit', 'offset', 'time_first_before', 'time_first_after', 'time_last_before', 'time_last_after', 'id', 'swclient',
  'version', 'exclude', 'aggr', 'humantime', 'max_count', 'foo', '', 'LIMIT'];

const paramValue = fc.oneof(
  fc.nat().map(String),
  fc.integer({ min: -1_000_000, max: -1 }).map(String),
  fc.constantFrom('0', '-0', '', 'abc', ' 1', '1.5', '1e3', '999999999999999', '1234567890123456', 't', 'f', 'true', 'True',
    'False', '1', 'yes', 'a:b', 'abc:', 'x'.repeat(31), 'x'.repeat(21), 'v1.2_3-x', 'v 1', 'client9', '%zz'),
  patternValue,
  oddValue,
);

/** A value the parameter accepts (the check after it may still refuse it: offset against the licence, exclude on lookups). */
function validValue(name: string): fc.Arbitrary<string> {
  switch (name) {
    case 'limit': case 'offset': case 'max_count': return fc.nat(2_000_000).map(String);
    case 'time_first_before': case 'time_first_after': case 'time_last_before': case 'time_last_after':
      return fc.integer({ min: -100_000_000, max: 2_000_000_000 }).map(String);
    case 'id': return fc.constantFrom('a1:b2', 'user:42', 'X:y');
    case 'swclient': return fc.constantFrom('dnsdbq', 'client9', 'x'.repeat(20));
    case 'version': return fc.constantFrom('v1.2_3-x', '2.6.4', 'x'.repeat(20));
    case 'exclude': return patternValue.filter((p) => p.length <= LIMITS.excludeCharsMax);
    case 'aggr': case 'humantime': return fc.constantFrom('t', 'f', 'true', 'false', 'True', 'False', '1', '0');
    default: return paramValue;
  }
}

function queryArb(forHttp: boolean): fc.Arbitrary<string> {
  const param = fc.constantFrom(...PARAM_NAMES).chain((name) => fc.tuple(fc.constant(name),
    fc.oneof({ weight: 6, arbitrary: validValue(name) }, { weight: 1, arbitrary: paramValue }),
    fc.array(fc.boolean(), { maxLength: 6 }), fc.boolean(), fc.nat(9)))
    .map(([name, value, picks, lower, bare]) => {
      if (bare === 0) return name;
      // '&' and '=' inside a value must be escaped or they would split it; '%zz' is kept as the malformed escape it is.
      const v = value === '%zz' ? value : encodeValue(value, (i) => picks[i % Math.max(picks.length, 1)] ?? false, lower, forHttp, '&=');
      return `${name}=${v}`;
    });
  return fc.tuple(fc.array(param, { maxLength: 4 }), mostly(['&'], ['&&']))
    .map(([params, sep]) => params.join(sep));
}

export const acceptArb = mostly(['', 'application/x-ndjson', '*/*', 'application/json', 'text/html, application/x-ndjson;q=0.5',
  'APPLICATION/X-NDJSON', 'application/*;q=0'], ['text/html', 'text/csv, image/png', ' , ', 'text/*']);

export function requestArb(forHttp: boolean): fc.Arbitrary<Request> {
  return fc.record({ path: pathArb(forHttp), query: queryArb(forHttp), accept: acceptArb });
}

export const keyWindowArb: fc.Arbitrary<KeyWindow> = fc.record({
  resultsMax: fc.integer({ min: 1, max: LIMITS.resultsMaxCeiling }),
  offsetMax: fc.option(fc.nat(10_000_000), { nil: undefined }),
  timeFenceAfter: fc.option(fc.nat(2_000_000_000), { nil: undefined }),
  timeFenceBefore: fc.option(fc.nat(2_000_000_000), { nil: undefined }),
});
