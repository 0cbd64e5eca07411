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

/** The service prefixes, longest first, each with its trailing slash. */
const PREFIXES: readonly string[] = ['/pdns/v2/dnsdb/v2/', '/pdns/v2/', '/dnsdb/v2/'];

export function route(rawPath: string): Route {
  // A scan for slashes, not split(): this runs for every request, and split
  // was the largest single cost of a small lookup's own JavaScript
  // (bench/micro/front-end.ts). A path that is a prefix without its slash
  // (`/pdns/v2`) has no segment after it: 404, as for `/pdns/v2/`.
  let at = -1;
  for (const p of PREFIXES) {
    if (rawPath.startsWith(p)) {
      at = p.length;
      break;
    }
  }
  if (at < 0) return { kind: 'not_found' };
  const segments: string[] = [];
  for (;;) {
    const slash = rawPath.indexOf('/', at);
    if (slash < 0) {
      segments.push(rawPath.slice(at));
      break;
    }
    segments.push(rawPath.slice(at, slash));
    at = slash + 1;
  }
  if (segments[0] === '') return { kind: 'not_found' };
  // A trailing slash adds an empty last segment; it names nothing.
  if (segments.length > 1 && segments[segments.length - 1] === '') segments.pop();
  for (let i = 0; i < segments.length; i++) {
    const d = percentDecode(segments[i]!);
    if (d === undefined) throw new ApiError('EXCEPTION');
    segments[i] = d;
  }
  // The loop above pushes at least one segment.
  switch (segments[0]!) {
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
