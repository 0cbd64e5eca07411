// ResultSink: where a search writes its answer. The server's SafWriter
// implements it over a uWS response; tests implement it over an array. The
// search layer never sees HTTP.
//
// Contract: the response has begun (status 200 and `begin` are the sink's
// business). The search appends result lines while `writable`, waits on
// whenWritable() otherwise (backpressure: a slow reader stops the search, not
// the other way round), stops producing once `aborted` (the client hung up or
// the server is shutting down; onAbort tells it at once), and ends the stream
// exactly once with end().

import type { Terminator } from '../render/saf.js';

export interface ResultSink {
  readonly writable: boolean;
  readonly aborted: boolean;
  /** Resolves when the sink can take more, or when it has been aborted. */
  whenWritable(): Promise<void>;
  /** Runs `f` once when the sink is aborted (at once if it already is). */
  onAbort(f: () => void): void;
  /** Appends result lines, each ending in "\n". */
  text(lines: string): void;
  /**
   * Appends result lines as bytes, each ending in "\n" (a flexible search's,
   * rendered by the tier: flex-batch.ts). The view is the sink's only until
   * the call returns: keep a copy to write it later.
   */
  bytes(lines: Uint8Array): void;
  /**
   * Sends what is buffered now rather than when a chunk fills or the
   * keep-alive interval passes (optional; a sink without it sends as it
   * likes): a watch's results are news (watch-stream.ts).
   */
  flush?(): void;
  /** Ends the stream with its terminator; nothing is written after it. */
  end(cond: Terminator, msg?: string): void;
}

/** Appends lines given as a string or as bytes (a line writer hands over whichever it holds: LookupLineBytes.takeLines). */
export function writeLines(sink: ResultSink, lines: string | Uint8Array): void {
  if (typeof lines === 'string') sink.text(lines);
  else sink.bytes(lines);
}
