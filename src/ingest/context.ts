// The contract between an ingest run and its source parsers.

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
