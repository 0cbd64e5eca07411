// The OpenAPI 3.1 description of the public API, served at
// GET .../openapi.json without a key and committed as api/openapi.json
// (test/unit/server/openapi.test.ts fails when the two differ;
// `npm run openapi` rewrites the file).
//
// Built here rather than written by hand as JSON so that it has no copy of
// its own of what the service already defines once: every error text comes
// from the catalogue, every stream message from STREAM_MESSAGES, every bound
// from LIMITS, and the endpoint shapes are generated from one table, so a
// new error or limit reaches the document with nothing else to edit.
// test/integration/openapi.test.ts checks real responses against it.
//
// Shapes (service-spec.md 4, compat.md "Paths"): the spec writes a flexible
// search as <search_method>/<what_to_search>/<value>[/<rrtype>], and the
// document keeps <what_to_search> (and a lookup's name|ip|raw) as path
// parameters with their allowed values, so that the 400 an unsupported
// value gets is documented on the operation that answers it. The three
// base paths are the three `servers`; `/{endpoint}` documents the 404 for
// any other first segment (OpenAPI matches concrete paths first).

import { LIMITS } from '../config/limits.js';
import { API_ERRORS, STREAM_MESSAGES, type ApiErrorCode } from '../errors/catalogue.js';

type Json = Record<string, unknown>;

/** Base paths every endpoint is served under (router.ts PREFIXES). */
const SERVERS = ['/pdns/v2', '/dnsdb/v2', '/pdns/v2/dnsdb/v2'];

/** Catalogue entries the server never sends (the spec lists them for internal faults of its own implementation). */
export const ERRORS_NOT_SENT: readonly ApiErrorCode[] = ['NO_REQUEST_URI', 'BAD_PREFIX'];

const ref = (kind: string, name: string): Json => ({ $ref: `#/components/${kind}/${name}` });

/** The exact body of an error answer (exchange.ts: text/plain gets a newline, html is sent as is). */
function errorBody(code: ApiErrorCode): string {
  const e = API_ERRORS[code];
  return e.contentType === 'text/plain' ? `${e.text}\n` : e.text;
}

/** A response whose body is one of the catalogue's texts for these codes (all of one status and content type). */
function errorResponse(description: string, codes: readonly ApiErrorCode[]): Json {
  const type = API_ERRORS[codes[0]!].contentType;
  return {
    description,
    content: { [type]: { schema: { type: 'string', enum: codes.map(errorBody) } } },
  };
}

// --- Schemas -----------------------------------------------------------------------------------------

const RRTYPE_TEXT = { type: 'string', pattern: '^(TYPE[0-9]+|[A-Z][A-Z0-9-]*)$', description: 'Type mnemonic or TYPE<n> (RFC 3597).' };
const NAME_TEXT = { type: 'string', pattern: '\\.$', description: 'A DNS name in presentation form, with its trailing dot.' };
const TIME = {
  description: 'Epoch seconds; with humantime=true an RFC 3339 UTC string.',
  oneOf: [{ type: 'integer', minimum: 0 }, { type: 'string', format: 'date-time', pattern: 'Z$' }],
};
const TIMES = {
  time_first: TIME, time_last: TIME, zone_time_first: TIME, zone_time_last: TIME,
};
const FIRST_SEEN = {
  type: 'integer', minimum: 0,
  description: 'Epoch seconds: the tuple\'s first sighting over all data (sensor or zone file, the earlier). A client resumes a ' +
    'watch from the last it received (time_first_after).',
};
/** A result stands for sensor observations, zone-file observations, or both. */
const SOME_TIMES = { anyOf: [{ required: ['time_first', 'time_last'] }, { required: ['zone_time_first', 'zone_time_last'] }] };

const closed = (properties: Json, required: string[], extra: Json = {}): Json =>
  ({ type: 'object', properties, required, additionalProperties: false, ...extra });

const SCHEMAS: Json = {
  FlexRrnameResult: closed({ rrname: NAME_TEXT, rrtype: RRTYPE_TEXT }, ['rrname', 'rrtype'],
    { description: 'Flexible search over rrnames (spec 2.2): terse mode only.' }),
  FlexRdataResult: closed({
    rdata: { type: 'string', description: 'Record data in presentation form.' },
    rrtype: RRTYPE_TEXT,
    raw_rdata: { type: 'string', pattern: '^([0-9A-F]{2})*$', description: 'The wire-form rdata in upper-case hex, for lookup/rdata/raw.' },
  }, ['rdata', 'rrtype', 'raw_rdata'], { description: 'Flexible search over rdata (spec 2.3).' }),
  WatchRrnameResult: closed({ rrname: NAME_TEXT, rrtype: RRTYPE_TEXT, time_first: FIRST_SEEN }, ['rrname', 'rrtype', 'time_first'],
    { description: 'A watch over rrnames: a (rrname, rrtype) tuple seen for the first time, and when.' }),
  WatchRdataResult: closed({
    rdata: { type: 'string', description: 'Record data in presentation form.' },
    rrtype: RRTYPE_TEXT,
    raw_rdata: { type: 'string', pattern: '^([0-9A-F]{2})*$', description: 'The wire-form rdata in upper-case hex, for lookup/rdata/raw.' },
    time_first: FIRST_SEEN,
  }, ['rdata', 'rrtype', 'raw_rdata', 'time_first'],
  { description: 'A watch over rdata: an (rdata, rrtype) tuple seen for the first time, and when.' }),
  RrsetResult: closed({
    count: { type: 'integer', minimum: 1 }, ...TIMES, rrname: NAME_TEXT, rrtype: RRTYPE_TEXT,
    bailiwick: NAME_TEXT, rdata: { type: 'array', items: { type: 'string' }, minItems: 1 },
  }, ['count', 'rrname', 'rrtype', 'rdata'], { ...SOME_TIMES, description: 'lookup/rrset: one RRset (compat.md "Result objects").' }),
  RdataResult: closed({
    count: { type: 'integer', minimum: 1 }, ...TIMES, rrname: NAME_TEXT, rrtype: RRTYPE_TEXT, rdata: { type: 'string' },
  }, ['count', 'rrname', 'rrtype', 'rdata'], { ...SOME_TIMES, description: 'lookup/rdata: one record; rdata is one string.' }),
  Summary: closed({ count: { type: 'integer', minimum: 0 }, num_results: { type: 'integer', minimum: 0 }, ...TIMES },
    ['count', 'num_results'], { description: 'summarize: the one object; max_count stops the summing early.' }),
  Begin: closed({ cond: { const: 'begin' } }, ['cond'], { description: 'First line of every 200 stream.' }),
  KeepAlive: { type: 'object', maxProperties: 0, description: 'Sent after a stretch of silence during a long search.' },
  Succeeded: closed({ cond: { const: 'succeeded' }, msg: { const: STREAM_MESSAGES.NO_RESULTS } }, ['cond'],
    { description: 'Last line: the answer is complete; msg only when there were no results.' }),
  Limited: closed({ cond: { const: 'limited' }, msg: { const: STREAM_MESSAGES.LIMITED } }, ['cond', 'msg'],
    { description: 'Last line: `limit` cut off further results.' }),
  Failed: closed({ cond: { const: 'failed' }, msg: { type: 'string', minLength: 1 } }, ['cond', 'msg'], {
    description: 'Last line: the search failed after the 200. msg is one of: ' +
      `"${STREAM_MESSAGES.SCAN_TIMEOUT}" (the scan ran past the server's search timeout), ` +
      `"${STREAM_MESSAGES.INTERNAL}" (a scan worker or shard failed; charged only if results were written), ` +
      `"${STREAM_MESSAGES.DATA_DAMAGED}" (a data file the search read was found damaged meanwhile and taken out of service; ` +
      'charged only if results were written; the same search again is answered without it), ' +
      `"${STREAM_MESSAGES.SHUTDOWN}" (the server is stopping), "${STREAM_MESSAGES.HTTP10_TOO_LARGE}" (the answer to an HTTP/1.0 ` +
      `request, which is sent whole, reached ${LIMITS.http10AnswerBytesMax} bytes), a pattern error naming the offending position, ` +
      `or, on a watch only, "${STREAM_MESSAGES.WATCH_BEHIND}" (its reader fell ${LIMITS.watchQueueBytesMax} bytes behind) or ` +
      `"${STREAM_MESSAGES.WATCH_CATCH_UP_TOO_LARGE}" (its catch-up found more than ${LIMITS.watchCatchUpTuplesMax} results; the ` +
      'earliest were sent).',
  }),
  RateLimit: closed({
    rate: closed({
      reset: { oneOf: [{ type: 'integer' }, { const: 'n/a' }], description: 'Epoch seconds of the next quota period (time quotas).' },
      expires: { oneOf: [{ type: 'integer' }, { const: 'n/a' }], description: 'Epoch seconds the licence expires.' },
      limit: { oneOf: [{ type: 'integer', minimum: 0 }, { const: 'unlimited' }] },
      remaining: { oneOf: [{ type: 'integer', minimum: 0 }, { const: 'n/a' }] },
      results_max: { type: 'integer', minimum: 1, maximum: LIMITS.resultsMaxCeiling },
      offset_max: { type: 'integer', minimum: 0, description: 'Absent: offsets are not allowed for this key (416).' },
      burst_size: { type: 'integer', minimum: 1 },
      burst_window: { type: 'integer', minimum: 1, description: 'Seconds.' },
    }, ['reset', 'expires', 'limit', 'remaining', 'results_max'], { dependentRequired: { burst_size: ['burst_window'] } }),
  }, ['rate'], { description: 'The key\'s quota (compat.md "rate_limit"); never charged.' }),
  Ping: closed({ ping: { const: 'ok' } }, ['ping']),
};

/** The line schema of a 200 stream whose results are `results`. */
function streamLine(results: readonly string[]): Json {
  const obj = results.length === 1 ? ref('schemas', results[0]!) : { oneOf: results.map((r) => ref('schemas', r)) };
  return {
    description: 'ONE line of the stream: the body is newline-delimited JSON, every line (the last included) ends with "\\n", ' +
      'none is blank. The first line is Begin, then result lines and KeepAlive lines, then exactly one of Succeeded, ' +
      'Limited or Failed. A stream without a terminator was cut off.',
    oneOf: [
      ref('schemas', 'Begin'), ref('schemas', 'KeepAlive'), closed({ obj }, ['obj']),
      ref('schemas', 'Succeeded'), ref('schemas', 'Limited'), ref('schemas', 'Failed'),
    ],
  };
}

// --- Parameters --------------------------------------------------------------------------------------

const query = (name: string, schema: Json, description: string): Json => ({ name, in: 'query', required: false, schema, description });
const path = (name: string, schema: Json, description: string): Json => ({ name, in: 'path', required: true, schema, description });

const COUNT = { type: 'string', pattern: '^[0-9]{1,15}$' };
const TIME_PARAM = { type: 'string', pattern: '^-?[0-9]{1,15}$' };
const BOOL = { type: 'string', enum: ['t', 'f', 'true', 'false', 'True', 'False', '1', '0'] };

const PARAMETERS: Json = {
  limit: query('limit', COUNT, `Results to return, default ${LIMITS.resultsDefault}; 0 means the key's results_max, ` +
    'and a larger value is clamped to it. Flexible search counts unique rrnames or rdata values, not lines.'),
  offset: query('offset', COUNT, 'Results to skip before `limit` applies; at most the key\'s offset_max (416 otherwise, ' +
    'and 416 for a key without offsets). Results come in one stable order, so pages neither overlap nor skip while the data is unchanged.'),
  time_first_before: query('time_first_before', TIME_PARAM, 'Only results first seen before this time: epoch seconds, ' +
    'or negative seconds relative to now. A key\'s own time fence can only narrow what these ask.'),
  time_first_after: query('time_first_after', TIME_PARAM, 'Only results first seen after this time (as time_first_before).'),
  time_last_before: query('time_last_before', TIME_PARAM, 'Only results last seen before this time (as time_first_before).'),
  time_last_after: query('time_last_after', TIME_PARAM, 'Only results last seen after this time (as time_first_before).'),
  id: query('id', { type: 'string', pattern: '^[A-Za-z0-9]+:[A-Za-z0-9]+$', maxLength: LIMITS.idCharsMax },
    'Client user identity; may be logged (never for keys with query privacy).'),
  swclient: query('swclient', { type: 'string', pattern: '^[A-Za-z0-9]+$', maxLength: LIMITS.swclientCharsMax },
    'Client software name; may be logged.'),
  version: query('version', { type: 'string', pattern: '^[A-Za-z0-9._-]+$', maxLength: LIMITS.versionCharsMax },
    'Client software version; may be logged.'),
  exclude: query('exclude', { type: 'string', minLength: 1, maxLength: LIMITS.excludeCharsMax },
    'A second pattern, in the search method\'s syntax: results matching it are left out. `+` is a literal plus.'),
  watchTimeFirstAfter: query('time_first_after', TIME_PARAM, 'Only tuples first seen at this time or later: epoch seconds, or ' +
    'negative seconds relative to now; inclusive, unlike a search\'s (a client resuming from the last time_first it received ' +
    'gets that second again: duplicates at the boundary, nothing lost). Given, the published data is searched from it first ' +
    `(the catch-up: the earliest ${LIMITS.watchCatchUpTuplesMax} at most, in time_first order), then the watch goes live. ` +
    'Absent: the watch counts from the second it opens, and nothing published before counts.'),
  watchLimit: query('limit', COUNT, `Results after which the watch ends \`limited\`, default ${LIMITS.resultsDefault}; 0 means ` +
    'the key\'s results_max, and a larger value is clamped to it. It counts objects: one per (value, rrtype) tuple.'),
  aggr: query('aggr', BOOL, 'true (default): one row per RRset aggregated over every observation batch; false: one row per batch.'),
  humantime: query('humantime', BOOL, 'true: times as RFC 3339 UTC strings instead of epoch seconds.'),
  max_count: query('max_count', COUNT, 'Stop summing once count reaches this; the stream still ends `succeeded`.'),
  lookupMaxCount: query('max_count', COUNT, 'Accepted and checked (clients send it), but it only acts on summarize.'),
  summarizeOffset: query('offset', COUNT, 'Not allowed on summarize: any value gives 416.'),
  flexValue: path('value', { type: 'string', minLength: 1, maxLength: LIMITS.patternCharsMax },
    'The RE2 regex or glob, matched case-insensitively against the presentation form (names end with a dot; write `(?-i)` to ' +
    'match case). Percent-encode ! " / ? % [ \\ ] (spec 4.4); the segment is decoded exactly once.'),
  whatToSearch: path('what_to_search', { type: 'string', enum: ['rrnames', 'rdata'] },
    'rrnames: owner names (every rrtype, DNSSEC included); rdata: record data of the types whose rdata is names or text.'),
  flexRrtype: path('rrtype', { type: 'string' }, 'Case-insensitive: a mnemonic, TYPE<n>, ANY or ANY-DNSSEC. On rdata, ANY means ' +
    'every searchable type, a DNSSEC type gives 400 "RRTYPE has an unsupported DNSSEC value" and a type without name or text rdata ' +
    '400 "RRTYPE has an unsupported value".'),
  rrsetHow: path('how', { type: 'string', enum: ['name', 'raw'] }, 'name: an owner name; raw: the owner name in wire form (hex).'),
  rdataHow: path('how', { type: 'string', enum: ['name', 'ip', 'raw'] },
    'name: a name in the rdata; ip: an address in A/AAAA rdata; raw: the uncompressed rdata in wire form (hex).'),
  lookupValue: path('value', { type: 'string', minLength: 1 }, 'name: a name, with `*.x` (x and every name under it), `+.x` ' +
    '(one label under x), `x.*` or `x.+` (x under other parents) wildcards; on rdata also `.x` and `x.`. ip: ADDR, ADDR,PREFIXLEN ' +
    '(comma, or %2C) or A-B, IPv4 or IPv6. raw: an even number of hex digits.'),
  lookupRrtype: path('rrtype', { type: 'string' }, 'Case-insensitive mnemonic, TYPE<n>, ANY (every non-DNSSEC type) or ' +
    'ANY-DNSSEC. Omitted: every type on rrset, ANY on rdata. On rdata/ip only A, AAAA and ANY, all meaning the address\'s records.'),
  bailiwick: path('bailiwick', { type: 'string', minLength: 1 },
    'Only RRsets observed with this bailiwick (clients send /ANY/<bailiwick>).'),
  endpoint: path('endpoint', { type: 'string' }, 'Any first segment other than the endpoints listed.'),
};

const COMMON_QUERY = ['limit', 'offset', 'time_first_before', 'time_first_after', 'time_last_before', 'time_last_after',
  'id', 'swclient', 'version'];

// --- Responses ---------------------------------------------------------------------------------------

const RATE_HEADERS: Json = {
  'X-RateLimit-Limit': { required: true, description: 'The quota: a number, or "unlimited".', schema: { type: 'string' } },
  'X-RateLimit-Remaining': {
    required: true, description: 'Requests left this period after this one, or "n/a".', schema: { type: 'string' },
  },
  'X-RateLimit-Reset': { required: true, description: 'Epoch seconds of the next period, or "n/a".', schema: { type: 'string' } },
  'X-RateLimit-Expires': { required: true, description: 'Epoch seconds the licence expires, or "n/a".', schema: { type: 'string' } },
};

const RESPONSES: Json = {
  BadRequest: errorResponse('The URL or a parameter is not valid (spec 7): "exception occurred" for a segment that cannot be ' +
    'percent-decoded or a URL over ' + `${LIMITS.urlBytesMax} bytes; "unable to parse request" for a bad parameter value, a bad name, ` +
    'address or hex value, or a pattern over its length; the others name the path segment at fault. The body is the text and a newline.',
  (Object.keys(API_ERRORS) as ApiErrorCode[]).filter((c) => API_ERRORS[c].status === 400 && !ERRORS_NOT_SENT.includes(c))),
  Unauthorized: errorResponse('The key may not use API v2, or its licence has expired.', ['NOT_AUTHORISED', 'QUOTA_EXPIRED']),
  RateLimitUnauthorized: errorResponse('The key may not use API v2 (an expired licence still answers rate_limit).', ['NOT_AUTHORISED']),
  Forbidden: errorResponse('No X-API-Key, a key that is not known (or revoked), or a client address outside the key\'s allow list.',
    ['BAD_API_KEY']),
  NotFound: errorResponse('Not an endpoint (the front end\'s page). Also the answer to any method other than GET, HEAD and OPTIONS.',
    ['NOT_FOUND']),
  NotAcceptable: errorResponse('Accept names no supported type. application/x-ndjson, application/ndjson, application/jsonl, ' +
    'application/x-jsonl, application/json, application/* and */* are accepted (the first listed wins; ;q= is ignored); no Accept ' +
    'header means application/x-ndjson.', ['NOT_ACCEPTABLE']),
  RangeNotSatisfiable: errorResponse('offset is not allowed for this key, or exceeds its offset_max.',
    ['OFFSET_NOT_ALLOWED', 'OFFSET_TOO_LARGE']),
  SummarizeRangeNotSatisfiable: errorResponse('offset was given; summarize takes none.', ['OFFSET_NOT_ALLOWED']),
  TooManyRequests: errorResponse('The key\'s quota is used up (time or block quota; for lookups and summaries also the burst quota). ' +
    'Nothing was charged.', ['RATE_LIMITED']),
  InternalError: errorResponse('Internal error before the stream began (e.g. the key store failed); nothing was charged.', ['INTERNAL']),
  Unavailable: errorResponse('The key already has its maximum of concurrent requests, or the server is overloaded (scan queue full, ' +
    'key store unreachable or busy, shutting down). Nothing was charged; try again later.', ['TOO_MANY_CONNECTIONS', 'OVERLOADED']),
  ShuttingDown: errorResponse('The server is shutting down.', ['OVERLOADED']),
  Options: {
    description: 'The methods every path answers to; no key needed, no body. HAProxy\'s `option httpchk` (OPTIONS / HTTP/1.0) ' +
      'checks with it: it answers 503 while the server shuts down.',
    headers: { Allow: { required: true, description: 'GET, HEAD, OPTIONS', schema: { const: 'GET, HEAD, OPTIONS' } } },
  },
  Head: {
    description: 'What GET answers with this status: its status line and headers, without the body.',
    headers: {
      'Content-Length': { required: true, description: 'The length of the body GET would send.', schema: { type: 'integer', minimum: 0 } },
    },
  },
  StreamHead: {
    description: 'The head of the 200 stream a GET would start: Content-Type application/x-ndjson, no body. Nothing is ' +
      'planned, run or charged, so there is no Content-Length, no X-RateLimit-* header, and no 429.',
  },
  MangledUrl: errorResponse(`A segment that cannot be percent-decoded, or a URL over ${LIMITS.urlBytesMax} bytes.`, ['EXCEPTION']),
};

/** A watch's line: like a search's, but a watch never succeeds (it is open until its limit, a failure, or a hang-up). */
function watchLine(): Json {
  const line = streamLine(['WatchRrnameResult', 'WatchRdataResult']);
  return {
    ...line,
    description: 'ONE line of a watch\'s stream: the body is newline-delimited JSON, every line ends with "\\n", none is blank. ' +
      'The first line is Begin, then result lines as the data tier finds them and KeepAlive lines while it finds none, then ' +
      'exactly one of Limited (`limit` results were sent) or Failed (the server is shutting down, the watch fell behind its ' +
      'reader, its catch-up was too large, or the data tier failed). A stream without a terminator was cut off.',
    oneOf: (line['oneOf'] as Json[]).filter((l) => l['$ref'] !== '#/components/schemas/Succeeded'),
  };
}

/** The line schemas of the five kinds of stream, by name in components.schemas. */
const LINE_SCHEMAS: Json = {
  FlexLine: streamLine(['FlexRrnameResult', 'FlexRdataResult']),
  WatchLine: watchLine(),
  RrsetLine: streamLine(['RrsetResult']),
  RdataLine: streamLine(['RdataResult']),
  SummaryLine: streamLine(['Summary']),
};

const stream200 = (line: string, description: string): Json => ({
  description,
  headers: Object.fromEntries(Object.keys(RATE_HEADERS).map((h) => [h, ref('headers', h)])),
  content: { 'application/x-ndjson': { schema: ref('schemas', line) } },
});

const ERRORS_OF_SEARCH = (summarize: boolean): Json => ({
  400: ref('responses', 'BadRequest'), 401: ref('responses', 'Unauthorized'), 403: ref('responses', 'Forbidden'),
  415: ref('responses', 'NotAcceptable'),
  416: ref('responses', summarize ? 'SummarizeRangeNotSatisfiable' : 'RangeNotSatisfiable'),
  429: ref('responses', 'TooManyRequests'), 500: ref('responses', 'InternalError'), 503: ref('responses', 'Unavailable'),
});

// --- Paths -------------------------------------------------------------------------------------------

const params = (names: readonly string[]): Json[] => names.map((n) => ref('parameters', n));

function flexPaths(): Json {
  const out: Json = {};
  for (const method of ['regex', 'glob'] as const) {
    for (const withType of [false, true]) {
      const p = `/${method}/{what_to_search}/{value}${withType ? '/{rrtype}' : ''}`;
      out[p] = {
        get: {
          operationId: `${method}Search${withType ? 'Rrtype' : ''}`,
          tags: ['flexible search'],
          summary: `Flexible search, ${method === 'regex' ? 'RE2 regular expression' : 'glob (* ? [...], anchored at both ends)'}, ` +
            'over rrnames or rdata' +
            (withType ? ', one rrtype' : ''),
          description: 'Aggregated per (rrname, rrtype) or (rdata, rrtype); time fences judge each tuple by the earliest first and ' +
            'latest last time behind it. aggr, humantime and max_count are refused (400 "unable to parse request").',
          parameters: params(['whatToSearch', 'flexValue', ...(withType ? ['flexRrtype'] : []), 'exclude', ...COMMON_QUERY]),
          responses: {
            200: stream200('FlexLine',
              'The stream: FlexRrnameResult objects for rrnames, FlexRdataResult for rdata. No match: Begin, then Succeeded with the ' +
              'no-results msg.'),
            ...ERRORS_OF_SEARCH(false),
          },
        },
      };
    }
  }
  return out;
}

/** GET .../watch/...: a flexible search held open (README "Standing watches"), regex and glob, with and without an rrtype. */
function watchPaths(): Json {
  const out: Json = {};
  for (const method of ['regex', 'glob'] as const) {
    for (const withType of [false, true]) {
      out[`/watch/${method}/{what_to_search}/{value}${withType ? '/{rrtype}' : ''}`] = {
        get: {
          operationId: `${method}Watch${withType ? 'Rrtype' : ''}`,
          tags: ['standing watch'],
          summary: `Standing watch, ${method === 'regex' ? 'RE2 regular expression' : 'glob'}, over rrnames or rdata` +
            (withType ? ', one rrtype' : '') + ': each new matching tuple pushed as the data tier gets it',
          description: 'rrscan\'s own endpoint (not DNSDB\'s). One object per (rrname, rrtype) or (rdata, rrtype) tuple that the ' +
            'pattern matches and that is seen for the first time over all data (not a name seen again), the moment the data tier ' +
            'publishes it (local shards: each published shard; ClickHouse: a poll every ' +
            `${LIMITS.watchClickhousePollMs} ms), each batch in time_first order. Charged as one flexible search when admitted; ` +
            'holds one of the key\'s --max-concurrent slots while open; at most ' +
            `${LIMITS.watchesMax} open per server process (503 past it). A key's time fence applies to every tuple. offset and ` +
            'the other time parameters are refused (400 "unable to parse request"), as are aggr, humantime and max_count.',
          parameters: params(['whatToSearch', 'flexValue', ...(withType ? ['flexRrtype'] : []), 'exclude', 'watchLimit',
            'watchTimeFirstAfter', 'id', 'swclient', 'version']),
          responses: {
            200: stream200('WatchLine', 'The stream: WatchRrnameResult objects for rrnames, WatchRdataResult for rdata; it ends ' +
              'only with Limited or Failed.'),
            400: ref('responses', 'BadRequest'), 401: ref('responses', 'Unauthorized'), 403: ref('responses', 'Forbidden'),
            415: ref('responses', 'NotAcceptable'), 429: ref('responses', 'TooManyRequests'), 500: ref('responses', 'InternalError'),
            503: ref('responses', 'Unavailable'),
          },
        },
      };
    }
  }
  return out;
}

function lookupPaths(summarize: boolean): Json {
  const out: Json = {};
  const verb = summarize ? 'summarize' : 'lookup';
  const shapes = [
    { target: 'rrset', how: 'rrsetHow', tails: [[], ['lookupRrtype'], ['lookupRrtype', 'bailiwick']] },
    { target: 'rdata', how: 'rdataHow', tails: [[], ['lookupRrtype']] },
  ];
  for (const { target, how, tails } of shapes) {
    for (const tail of tails) {
      const p = `/${verb}/${target}/{how}/{value}${tail.map((t) => (t === 'lookupRrtype' ? '/{rrtype}' : '/{bailiwick}')).join('')}`;
      const queryNames = summarize
        ? [...COMMON_QUERY.map((q) => (q === 'offset' ? 'summarizeOffset' : q)), 'max_count', 'aggr', 'humantime']
        : [...COMMON_QUERY, 'aggr', 'humantime', 'lookupMaxCount'];
      const result = summarize ? 'Summary' : target === 'rrset' ? 'RrsetResult' : 'RdataResult';
      const line = summarize ? 'SummaryLine' : target === 'rrset' ? 'RrsetLine' : 'RdataLine';
      out[p] = {
        get: {
          operationId: `${verb}${target === 'rrset' ? 'Rrset' : 'Rdata'}${['', 'Rrtype', 'Bailiwick'][tail.length]}`,
          tags: [summarize ? 'summarize' : 'standard search'],
          summary: `${summarize ? 'Summary of the' : 'Standard search:'} ` +
            `${target === 'rrset' ? 'RRsets by owner name' : 'records by rdata name, address or wire form'}` +
            `${tail.length > 0 ? `, by rrtype${tail.length > 1 ? ' and bailiwick' : ''}` : ''}`,
          parameters: params([how === 'rrsetHow' ? 'rrsetHow' : 'rdataHow', 'lookupValue', ...tail, ...queryNames]),
          responses: {
            200: stream200(line, summarize ? 'The stream with one Summary object, or Succeeded with the no-results msg.'
              : `The stream of ${result} objects.`),
            ...ERRORS_OF_SEARCH(summarize),
          },
        },
      };
    }
  }
  return out;
}

const json200 = (schema: string, description: string): Json => ({
  description, content: { 'application/json': { schema: ref('schemas', schema) } },
});

function otherPaths(): Json {
  return {
    '/rate_limit': {
      get: {
        operationId: 'rateLimit', tags: ['account'], summary: 'The key\'s quota',
        responses: {
          200: json200('RateLimit', 'One JSON object and a newline.'), 401: ref('responses', 'RateLimitUnauthorized'),
          403: ref('responses', 'Forbidden'), 500: ref('responses', 'InternalError'), 503: ref('responses', 'Unavailable'),
        },
      },
    },
    '/ping': {
      get: {
        operationId: 'ping', tags: ['service'], summary: 'Liveness, no key needed', security: [],
        responses: { 200: json200('Ping', '{"ping":"ok"} and a newline.'), 503: ref('responses', 'ShuttingDown') },
      },
    },
    '/openapi.json': {
      get: {
        operationId: 'openapi', tags: ['service'], summary: 'This document, no key needed', security: [],
        responses: {
          200: {
            description: 'The OpenAPI 3.1 document.',
            content: { 'application/json': { schema: { type: 'object', required: ['openapi'] } } },
          },
          503: ref('responses', 'ShuttingDown'),
        },
      },
    },
    '/{endpoint}': {
      get: {
        operationId: 'notFound', tags: ['service'], summary: 'Anything else', security: [],
        parameters: [ref('parameters', 'endpoint')],
        responses: { 400: ref('responses', 'MangledUrl'), 404: ref('responses', 'NotFound'), 503: ref('responses', 'ShuttingDown') },
      },
    },
  };
}

/**
 * HEAD of a GET operation: GET's statuses and headers without the bodies
 * (app.ts); on a search, the head of the stream and the refusals before the
 * charge.
 */
function headOf(get: Json, search: boolean): Json {
  const responses: Json = {};
  for (const status of Object.keys(get['responses'] as Json)) {
    if (search && status === '429') continue;
    responses[status] = ref('responses', search && status === '200' ? 'StreamHead' : 'Head');
  }
  return {
    operationId: `${String(get['operationId'])}Head`,
    tags: get['tags'],
    summary: `${String(get['summary'])}: status and headers only`,
    ...(get['security'] !== undefined ? { security: get['security'] } : {}),
    ...(get['parameters'] !== undefined ? { parameters: get['parameters'] } : {}),
    responses,
  };
}

/** OPTIONS, which every path answers alike (its path parameters kept, so that the operation is complete). */
function optionsOf(get: Json): Json {
  const pathParams = ((get['parameters'] ?? []) as Json[]).filter((r) => {
    const name = String(r['$ref']).split('/').pop()!;
    return (PARAMETERS[name] as Json)['in'] === 'path';
  });
  return {
    operationId: `${String(get['operationId'])}Options`,
    tags: ['service'],
    summary: 'The methods served: 204 and Allow',
    security: [],
    ...(pathParams.length > 0 ? { parameters: pathParams } : {}),
    responses: { 204: ref('responses', 'Options'), 503: ref('responses', 'ShuttingDown') },
  };
}

/** Every path's GET, with its HEAD and OPTIONS. */
function withHeadAndOptions(paths: Json, searches: Json): Json {
  const out: Json = {};
  for (const [p, item] of Object.entries(paths)) {
    const get = (item as Json)['get'] as Json;
    out[p] = { get, head: headOf(get, p in searches), options: optionsOf(get) };
  }
  return out;
}

export function openApiDocument(): Json {
  const searches = { ...flexPaths(), ...watchPaths(), ...lookupPaths(false), ...lookupPaths(true) };
  return {
    openapi: '3.1.0',
    info: {
      title: 'rrscan passive DNS API',
      version: '2',
      summary: 'DNSDB API v2 compatible passive DNS: standard search, flexible (regex/glob) search, quotas.',
      description: 'Every endpoint is GET and is served under each of the `servers` base paths; HEAD answers with the status and ' +
        'headers of GET and no body (on a search, without running or charging it), OPTIONS with 204 and Allow on any path. ' +
        'HTTP/1.0 requests are answered too, each answer whole with Content-Length (a search answer up to ' +
        `${LIMITS.http10AnswerBytesMax} bytes, then a Failed line), and the connection is closed after it. Data endpoints need the ` +
        'X-API-Key header. A 200 from a search is a stream of newline-delimited JSON lines (the schema given is the schema of ' +
        'ONE line); once the 200 is sent, errors arrive in-stream as a Failed line. Other statuses carry a text/plain body ' +
        '(500 and 404: text/html) whatever was asked for. Requests refused with a status are not charged. A URL over ' +
        `${LIMITS.urlBytesMax} bytes gets 400 "exception occurred"; a path with more segments than its endpoint takes gets 400 ` +
        '"REQUEST_URI has too many path segments", an empty value 400 "REQUEST_URI is missing path segment", an unknown first ' +
        'segment (including an unknown search method) 404. A trailing slash is ignored. ' +
        'Query parameters not listed for an endpoint are ignored, except that ' +
        'flexible search refuses aggr, humantime and max_count.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: SERVERS.map((url) => ({ url, description: url === '/pdns/v2' ? 'The service path' :
      'The same API where DNSDB v2 clients look for it (they append /dnsdb/v2 to the base URL they are given)' })),
    security: [{ ApiKey: [] }],
    tags: [
      { name: 'flexible search' }, { name: 'standing watch' }, { name: 'standard search' }, { name: 'summarize' }, { name: 'account' },
      { name: 'service' },
    ],
    paths: withHeadAndOptions({ ...searches, ...otherPaths() }, searches),
    components: {
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'The API key: hexadecimal digits, dashes allowed.' },
      },
      schemas: { ...SCHEMAS, ...LINE_SCHEMAS },
      parameters: PARAMETERS,
      headers: RATE_HEADERS,
      responses: RESPONSES,
    },
  };
}

let text: string | undefined;

/** The document as served and as committed (api/openapi.json): built once, on first use. */
export function openApiText(): string {
  text ??= JSON.stringify(openApiDocument(), null, 2) + '\n';
  return text;
}
