// The rrtype filter and time-fence test every search applies, flexible and
// standard alike, so both mean exactly the same thing.

import { isDnssecType } from '../dns/rrtype.js';

/** Strict time fences in epoch seconds (see inFence); undefined = no fence. */
export interface TimeFence {
  firstBefore?: number;
  firstAfter?: number;
  lastBefore?: number;
  lastAfter?: number;
}

/**
 * Which rrtypes a query keeps: every type, ANY (every non-DNSSEC type),
 * ANY-DNSSEC (only the DNSSEC types), or one type code.
 */
export type TypeFilter = 'all' | 'any' | 'any-dnssec' | number;

/** True when the fence has any bound. */
export function isFenced(f: TimeFence): boolean {
  return f.firstBefore !== undefined || f.firstAfter !== undefined || f.lastBefore !== undefined || f.lastAfter !== undefined;
}

export function keepType(f: TypeFilter, rrtype: number): boolean {
  if (f === 'all') return true;
  if (f === 'any') return !isDnssecType(rrtype);
  if (f === 'any-dnssec') return isDnssecType(rrtype);
  return rrtype === f;
}

/**
 * True when a sighting interval [first, last] (epoch seconds, sensor or zone
 * combined) passes every fence. Fences are strict: "before T" means < T.
 */
export function inFence(first: number, last: number, f: TimeFence): boolean {
  if (f.firstBefore !== undefined && !(first < f.firstBefore)) return false;
  if (f.firstAfter !== undefined && !(first > f.firstAfter)) return false;
  if (f.lastBefore !== undefined && !(last < f.lastBefore)) return false;
  if (f.lastAfter !== undefined && !(last > f.lastAfter)) return false;
  return true;
}
