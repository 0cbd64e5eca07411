// The unit every ingest source produces and the shard writer consumes.
//
// An Observation is one RRset as seen by a sensor (time_first/time_last) or in
// a zone file (zone_time_first/zone_time_last). Aggregation key: (rrname,
// rrtype, bailiwick, rdata set); merging takes the earliest first, the latest
// last and sums counts (see aggregate.ts).

export interface Rdata {
  /** Master-file presentation form, as returned to clients (compat.md "Values"). */
  readonly text: string;
  /** Uncompressed wire form (raw_rdata, lookup/rdata/raw). */
  readonly wire: Uint8Array;
}

export interface Observation {
  /** Lower-case presentation form with the trailing dot, e.g. "www.example.com." */
  rrname: string;
  rrtype: number;
  /** Lower-case presentation form with the trailing dot; "." for the root. */
  bailiwick: string;
  /** The RRset's records; order is not significant (the writer sorts them by wire form). */
  rdata: Rdata[];
  count: number;
  /** Sensor times in epoch seconds; 0 when the RRset was never seen by a sensor. */
  timeFirst: number;
  timeLast: number;
  /** Zone-file times in epoch seconds; 0 when never seen in a zone file. */
  zoneTimeFirst: number;
  zoneTimeLast: number;
}

/**
 * What a source parser is handed. `reject` records a bad record and returns
 * normally while fewer than --max-errors have been seen; past that it throws
 * the IngestError it was given, which aborts the run before anything is
 * published.
 */
export interface IngestContext {
  readonly file: string;
  reject(error: Error): void;
  /** Called with bytes consumed so far, for the progress bar; cheap, call it often. */
  progress?(bytesRead: number): void;
}
