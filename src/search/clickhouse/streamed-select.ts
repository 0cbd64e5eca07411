// What the two ClickHouse sources (select-source.ts for flexible search,
// lookup-source.ts for standard search) share: one streamed SELECT whose
// rows they take in chunks, its end, how its failure ends the search, and
// cancelling it when the search closes the source.

import { STREAM_MESSAGES, type ClickHouseError } from '../../errors/catalogue.js';
import { errorCode, TIMEOUT_CODE, type ClickHouse, type RunningSelect } from '../../clickhouse/client.js';
import type { SourceEvents } from '../sources.js';

export abstract class StreamedSelect {
  protected finished = false;
  protected closed = false;
  protected running: RunningSelect | undefined;

  constructor(private readonly sql: string, protected readonly events: SourceEvents) {}

  /** Takes a chunk of rows; false asks the client to pause the answer until resume(). */
  protected abstract onLines(lines: string[]): boolean;

  /** Starts the query; `ended` runs once when it has ended, failed or been cancelled. */
  start(ch: ClickHouse, maxSeconds: number, ended: () => void): void {
    this.running = ch.select(this.sql, {
      lines: (lines) => this.onLines(lines),
      end: () => {
        this.finished = true;
        ended();
        if (!this.closed) this.events.ready();
      },
      error: (err) => {
        ended();
        if (!this.closed) this.onError(err);
      },
    }, maxSeconds);
  }

  /** A row of another shape (an error ClickHouse wrote into the middle of a row, or a bug): never a partial answer. */
  protected refuse(err: unknown): false {
    this.close();
    this.events.fail(STREAM_MESSAGES.INTERNAL, err);
    return false;
  }

  private onError(err: ClickHouseError): void {
    if (errorCode(err.message) === TIMEOUT_CODE) this.events.fail(STREAM_MESSAGES.SCAN_TIMEOUT);
    else this.events.fail(STREAM_MESSAGES.INTERNAL, err);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.running?.cancel();
  }
}
