// From a raw request path to what is being asked for.
//
// Served under /pdns/v2, /dnsdb/v2 and /pdns/v2/dnsdb/v2 (clients append
// /dnsdb/v2 to whatever base URL they are given: compat.md "Paths"). The raw
// path is split on "/" first and each segment is percent-decoded exactly
// once (src/query/percent.ts). Anything outside these prefixes, or an
// unknown first segment, is the front end's 404.

import { ApiError } from '../errors/catalogue.js';
import { percentDecode } from '../query/percent.js';

export type Route =
  | { kind: 'ping' }
  | { kind: 'rate_limit' }
  | { kind: 'openapi' }
  | { kind: 'flex'; segments: string[] }
  | { kind: 'lookup' | 'summarize'; segments: string[] }
  /** A standing watch (README "Standing watches"): the segments after `watch`. */
  | { kind: 'watch'; segments: string[] }
  | { kind: 'not_found' };

const PREFIXES: readonly (readonly string[])[] = [
  ['pdns', 'v2', 'dnsdb', 'v2'],
  ['pdns', 'v2'],
  ['dnsdb', 'v2'],
];

export function route(rawPath: string): Route {
  const raw = rawPath.split('/');
  if (raw[0] !== '') return { kind: 'not_found' };
  let rest: string[] | undefined;
  for (const p of PREFIXES) {
    if (p.every((seg, i) => raw[i + 1] === seg)) {
      rest = raw.slice(p.length + 1);
      break;
    }
  }
  if (!rest || rest.length === 0 || rest[0] === '') return { kind: 'not_found' };
  // A trailing slash adds an empty last segment; it names nothing.
  if (rest.length > 1 && rest[rest.length - 1] === '') rest.pop();
  const segments: string[] = [];
  for (const s of rest) {
    const d = percentDecode(s);
    if (d === undefined) throw new ApiError('EXCEPTION');
    segments.push(d);
  }
  switch (segments[0]) {
    case 'ping': return segments.length === 1 ? { kind: 'ping' } : { kind: 'not_found' };
    case 'rate_limit': return segments.length === 1 ? { kind: 'rate_limit' } : { kind: 'not_found' };
    case 'openapi.json': return segments.length === 1 ? { kind: 'openapi' } : { kind: 'not_found' };
    case 'regex':
    case 'glob': return { kind: 'flex', segments };
    case 'lookup':
    case 'summarize': return { kind: segments[0], segments };
    case 'watch': return { kind: 'watch', segments: segments.slice(1) };
    default: return { kind: 'not_found' };
  }
}

/**
 * Content negotiation (spec 4.5): the first supported type in Accept wins;
 * `;q=` weights are not supported and are ignored. No Accept header means
 * NDJSON. Returns false when nothing listed is supported (415).
 */
const NDJSON_SYNONYMS = new Set(['application/x-ndjson', 'application/ndjson', 'application/jsonl',
  'application/x-jsonl', 'application/json', 'application/*', '*/*']);

export function acceptsNdjson(accept: string): boolean {
  if (accept.trim() === '') return true;
  for (const part of accept.split(',')) {
    const type = part.split(';')[0]!.trim().toLowerCase();
    if (NDJSON_SYNONYMS.has(type)) return true;
  }
  return false;
}
