// A flexible-search request, validated (spec 4.2, 4.3; compat.md
// "Flexible search and rrtypes"). Pure: no I/O.

import { LIMITS } from '../config/limits.js';
import { ApiError } from '../errors/catalogue.js';
import { isDnssecType, isFlexRdataType, rrtypeFromText } from '../dns/rrtype.js';
import type { TypeFilter } from '../model/filters.js';
import { parseCommon, type CommonParams } from './params.js';

export type FlexMethod = 'regex' | 'glob';
export type FlexTarget = 'rrnames' | 'rdata';

export interface FlexQuery extends CommonParams {
  method: FlexMethod;
  target: FlexTarget;
  pattern: string;
  exclude: string | undefined;
  typeFilter: TypeFilter;
}

const NOT_FOR_FLEX = ['aggr', 'humantime', 'max_count'];

/** `segments` are the decoded path segments after the version prefix, starting with the method. */
export function parseFlexQuery(segments: readonly string[], q: ReadonlyMap<string, string>, now: number): FlexQuery {
  const method = segments[0] as FlexMethod;
  if (segments.length < 2 || (segments[1] !== 'rrnames' && segments[1] !== 'rdata')) {
    throw new ApiError('BAD_WHAT_TO_SEARCH');
  }
  const target = segments[1];
  if (segments.length < 3 || segments[2] === '') throw new ApiError('MISSING_SEGMENT');
  if (segments.length > 4) throw new ApiError('TOO_MANY_SEGMENTS');
  const pattern = segments[2]!;
  if (pattern.length > LIMITS.patternCharsMax) throw new ApiError('UNPARSABLE_REQUEST');
  const typeFilter = flexTypeFilter(target, segments[3]);
  for (const p of NOT_FOR_FLEX) if (q.has(p)) throw new ApiError('UNPARSABLE_REQUEST');
  const exclude = q.get('exclude');
  if (exclude !== undefined && (exclude === '' || exclude.length > LIMITS.excludeCharsMax)) {
    throw new ApiError('UNPARSABLE_REQUEST');
  }
  const c = parseCommon(q, now);
  return {
    limit: c.limit, offset: c.offset, fence: c.fence, id: c.id, swclient: c.swclient, version: c.version,
    method, target, pattern, exclude, typeFilter,
  };
}

function flexTypeFilter(target: FlexTarget, segment: string | undefined): TypeFilter {
  if (segment === undefined || segment === '') return 'all';
  const upper = segment.toUpperCase();
  if (target === 'rrnames') {
    if (upper === 'ANY') return 'any';
    if (upper === 'ANY-DNSSEC') return 'any-dnssec';
    const code = rrtypeFromText(segment);
    if (code === undefined) throw new ApiError('BAD_RRTYPE');
    return code;
  }
  // rdata covers the types whose rdata is names or text.
  if (upper === 'ANY') return 'all';
  if (upper === 'ANY-DNSSEC') throw new ApiError('BAD_RRTYPE_DNSSEC');
  const code = rrtypeFromText(segment);
  if (code === undefined) throw new ApiError('BAD_RRTYPE');
  if (isDnssecType(code)) throw new ApiError('BAD_RRTYPE_DNSSEC');
  if (!isFlexRdataType(code)) throw new ApiError('BAD_RRTYPE');
  return code;
}
