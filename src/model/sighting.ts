// Sightings: how often and when an RRset was seen, and the one rule for
// combining two sightings of the same thing. Ingest aggregation, compaction,
// standard search's aggr=true and flexible search's tuple times all follow
// it, so the times a client reads never depend on how the data was cut into
// files or shards.
//
// Rule: counts add; the first time is the earliest and the last time the
// latest, sensor times and zone-file times apart. 0 means "never seen that
// way" and loses to any real time.

export interface Sighting {
  count: number;
  /** Sensor times in epoch seconds; 0 when never seen by a sensor. */
  timeFirst: number;
  timeLast: number;
  /** Zone-file times in epoch seconds; 0 when never seen in a zone file. */
  zoneTimeFirst: number;
  zoneTimeLast: number;
}

/** The earlier of two times, where 0 means "none". */
export function minNonZero(a: number, b: number): number {
  if (a === 0) return b;
  if (b === 0) return a;
  return a < b ? a : b;
}

export const noSighting = (): Sighting => ({ count: 0, timeFirst: 0, timeLast: 0, zoneTimeFirst: 0, zoneTimeLast: 0 });

/** `from`'s count and times into `into`; returns `into`. */
export function copySighting(into: Sighting, from: Readonly<Sighting>): Sighting {
  into.count = from.count;
  into.timeFirst = from.timeFirst;
  into.timeLast = from.timeLast;
  into.zoneTimeFirst = from.zoneTimeFirst;
  into.zoneTimeLast = from.zoneTimeLast;
  return into;
}

/** Folds `from` into `into` (two sightings of one RRset); returns `into`. */
export function addSighting<S extends Sighting>(into: S, from: Readonly<Sighting>): S {
  into.count += from.count;
  into.timeFirst = minNonZero(into.timeFirst, from.timeFirst);
  into.timeLast = Math.max(into.timeLast, from.timeLast);
  into.zoneTimeFirst = minNonZero(into.zoneTimeFirst, from.zoneTimeFirst);
  into.zoneTimeLast = Math.max(into.zoneTimeLast, from.zoneTimeLast);
  return into;
}

/** First time seen in any way (sensor or zone), 0 for none: what time fences judge. */
export function firstSeen(s: Readonly<Sighting>): number {
  return minNonZero(s.timeFirst, s.zoneTimeFirst);
}

/** Last time seen in any way (sensor or zone): what time fences judge. */
export function lastSeen(s: Readonly<Sighting>): number {
  return Math.max(s.timeLast, s.zoneTimeLast);
}
