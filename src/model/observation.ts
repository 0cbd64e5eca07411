// The unit every ingest source produces and the shard writer consumes.
//
// An Observation is one RRset as seen by a sensor (time_first/time_last) or in
// a zone file (zone_time_first/zone_time_last). Aggregation key: (rrname,
// rrtype, bailiwick, rdata set); two observations of one key merge by the
// sighting rule (sighting.ts).

import type { Sighting } from './sighting.js';

export interface Rdata {
  /** Master-file presentation form, as returned to clients (compat.md "Values"). */
  readonly text: string;
  /** Uncompressed wire form (raw_rdata, lookup/rdata/raw). */
  readonly wire: Uint8Array;
}

export interface Observation extends Sighting {
  /** Lower-case presentation form with the trailing dot, e.g. "www.example.com." */
  rrname: string;
  rrtype: number;
  /** Lower-case presentation form with the trailing dot; "." for the root. */
  bailiwick: string;
  /** The RRset's records; order is not significant (the writer sorts them by wire form). */
  rdata: Rdata[];
}
