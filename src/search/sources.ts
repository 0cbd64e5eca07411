// Sorted sources: how a data backend hands results to the search layer.
//
// A source is an ordered stream of results from one place (a shard, a range
// of one, a remote query), each with a key; keys ascend strictly within a
// source. The paginator (paginator.ts) merges the sources of one search by
// key, so that one global order comes out however the data is cut, and
// combines the items several sources hold under one key into one result.
//
// Sources are pulled, never pushed: state() says whether an item is current,
// none is ready yet (WAIT: the source calls events.ready() when one is), or
// the source is exhausted. Pulling is what gives every search backpressure:
// nothing is fetched or scanned faster than the client reads.

import type { Sighting } from '../model/sighting.js';
import type { LookupLineBytes } from '../render/lookup-line-bytes.js';

export const HAS = 0;
export const WAIT = 1;
export const END = 2;
export type SourceState = typeof HAS | typeof WAIT | typeof END;

export interface SortedSource {
  state(): SourceState;
  /** Key of the current item (state() is HAS). May be built lazily: a lone source is never asked. */
  key(): string;
  /**
   * Optional: a cheap prefix of key() that orders items whenever two differ
   * in it (key() continues it with characters below any it holds), so a
   * merge builds whole keys only where heads tie. Every source of one
   * search has it, or none.
   */
  keyHead?(): string;
  /** Moves past the current item. */
  advance(): void;
}

/** What sources tell the search that reads them. */
export interface SourceEvents {
  /** A source that answered WAIT has an item now (or has ended). */
  ready(): void;
  /**
   * A source cannot go on; the search ends with an in-stream `failed`
   * carrying `message`. `error`, when the server is at fault, is for the log
   * (PageOutcome.error), never for the client.
   */
  fail(message: string, error?: unknown): void;
}

/** The sources of one search, and how to stop them all (a hang-up, a limit reached, a failure). */
export interface OpenSources<S> {
  readonly sources: readonly S[];
  close(): void;
  /**
   * Why what the sources read cannot be trusted (a data file was found
   * damaged while they read it), or undefined. Asked once, before an answer
   * ends other than `failed`: the answer then ends `failed` with this text.
   */
  damaged?(): string | undefined;
}

/**
 * A source whose items go out as they are, a run at a time: the paginator
 * counts offset and limit in items of whole runs, with no merge and no
 * per-item call. alone(), where there is one, is called once first.
 */
export interface BulkSource {
  state(): SourceState;
  alone?(): void;
  /** The lines of up to `max` items from the current one on (at least one: state() is HAS), and moves past them. */
  bulk(max: number): string | Uint8Array;
  /** How many items the last bulk() took. */
  readonly bulkCount: number;
}

/**
 * Flexible search: unique values in order, each as its output lines
 * (render/result-lines.ts), one per rrtype. A search has one: each tier
 * merges its own data (the local scan tasks over every shard, ClickHouse in
 * its SELECT), so its lines go out as bytes, as rendered (flex-batch.ts).
 */
export interface FlexSource extends BulkSource {
  bulk(max: number): Uint8Array;
}

/** Standard search: result rows, before any aggregation across sources. */
export interface LookupSource extends SortedSource {
  /** The current row's count and times, into `into`. */
  sighting(into: Sighting): Sighting;
  /**
   * The current row's result line, with `sighting` (the sum over every
   * source holding the row's key) in place of its own, into `w`; asked
   * before the source advances.
   */
  line(w: LookupLineBytes, sighting: Readonly<Sighting>, humantime: boolean): void;
  /**
   * Optional, for a search that has this source alone: from the call on,
   * state() has only items the answer's fence keeps, and bulk() renders
   * their lines as the search's output would (FlexSource.bulk): a string,
   * or bytes valid until the next bulk() call of any source (sources may
   * share one writer; the sink writes or copies them before it returns).
   */
  alone?(): void;
  bulk?(max: number): string | Uint8Array;
  readonly bulkCount?: number;
}
