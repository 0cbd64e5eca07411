// Validation of the query parameters shared by every search (spec 4.3,
// compat.md). Pure: no I/O, no clock (callers pass `now`). Every failure is
// an ApiError from the one catalogue.

import { LIMITS } from '../config/limits.js';
import { ApiError } from '../errors/catalogue.js';
import type { TimeFence } from '../model/filters.js';

export interface CommonParams {
  /** As given; undefined = default. 0 means the key's results_max. */
  limit: number | undefined;
  offset: number;
  fence: TimeFence;
  id: string | undefined;
  swclient: string | undefined;
  version: string | undefined;
}

const DIGITS = /^\d{1,15}$/;
const TIME = /^-?\d{1,15}$/;
const ID = /^[A-Za-z0-9]+:[A-Za-z0-9]+$/;
const SWCLIENT = /^[A-Za-z0-9]+$/;
const VERSION = /^[A-Za-z0-9._-]+$/;

const bad = () => new ApiError('UNPARSABLE_REQUEST');

export function parseCount(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!DIGITS.test(v)) throw bad();
  return Number(v);
}

/** Epoch seconds, or negative seconds relative to now. */
export function parseTime(v: string | undefined, now: number): number | undefined {
  if (v === undefined) return undefined;
  if (!TIME.test(v)) throw bad();
  const n = Number(v);
  return n < 0 ? now + n : n;
}

/** compat.md: t f true false True False 1 0. */
export function parseBool(v: string | undefined): boolean | undefined {
  if (v === undefined) return undefined;
  switch (v) {
    case 't': case 'true': case 'True': case '1': return true;
    case 'f': case 'false': case 'False': case '0': return false;
    default: throw bad();
  }
}

function optionalMatch(v: string | undefined, re: RegExp, maxChars: number): string | undefined {
  if (v === undefined) return undefined;
  if (v.length > maxChars || !re.test(v)) throw bad();
  return v;
}

export function parseCommon(q: ReadonlyMap<string, string>, now: number): CommonParams {
  const fence: TimeFence = {};
  const tfb = parseTime(q.get('time_first_before'), now);
  const tfa = parseTime(q.get('time_first_after'), now);
  const tlb = parseTime(q.get('time_last_before'), now);
  const tla = parseTime(q.get('time_last_after'), now);
  if (tfb !== undefined) fence.firstBefore = tfb;
  if (tfa !== undefined) fence.firstAfter = tfa;
  if (tlb !== undefined) fence.lastBefore = tlb;
  if (tla !== undefined) fence.lastAfter = tla;
  return {
    limit: parseCount(q.get('limit')),
    offset: parseCount(q.get('offset')) ?? 0,
    fence,
    id: optionalMatch(q.get('id'), ID, LIMITS.idCharsMax),
    swclient: optionalMatch(q.get('swclient'), SWCLIENT, LIMITS.swclientCharsMax),
    version: optionalMatch(q.get('version'), VERSION, LIMITS.versionCharsMax),
  };
}

/** A request's paging and fences once the key's licence is applied (applyKey). */
export interface Effective {
  limit: number;
  offset: number;
  fence: TimeFence;
}

export interface KeyWindow {
  resultsMax: number;
  offsetMax: number | undefined;
  timeFenceAfter: number | undefined;
  timeFenceBefore: number | undefined;
}

/**
 * Applies the key's licence to a request: the effective limit (default
 * 10000, 0 = results_max, clamped to results_max), the offset rules (416),
 * and the key's time fence, which can only narrow what the request asked.
 * A fenced key sees an RRset only if its sightings overlap the window.
 */
export function applyKey(p: CommonParams, key: KeyWindow): Effective {
  const requested = p.limit ?? LIMITS.resultsDefault;
  const limit = requested === 0 ? key.resultsMax : Math.min(requested, key.resultsMax);
  if (p.offset > 0) {
    if (key.offsetMax === undefined) throw new ApiError('OFFSET_NOT_ALLOWED');
    if (p.offset > key.offsetMax) throw new ApiError('OFFSET_TOO_LARGE');
  }
  const fence = { ...p.fence };
  if (key.timeFenceAfter !== undefined) {
    fence.lastAfter = Math.max(fence.lastAfter ?? -Infinity, key.timeFenceAfter - 1);
  }
  if (key.timeFenceBefore !== undefined) {
    fence.firstBefore = Math.min(fence.firstBefore ?? Infinity, key.timeFenceBefore + 1);
  }
  return { limit, offset: p.offset, fence };
}
