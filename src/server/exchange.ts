// One HTTP exchange as the front end holds it: what uWS gave us (read
// before the handler returns: uWS reuses its HttpRequest), whether the client
// has gone, and the non-stream answers (an error page, a JSON body, the
// head of a stream for HEAD). A HEAD request gets the status and headers a
// GET would, Content-Length included, and no body; an HTTP/1.0 request
// (http10.ts) gets `Connection: close`, and uWS closes the connection after
// the answer. It counts itself in its endpoint family's stats
// (serving-stats.ts) when its status line goes out, here or in its stream's
// SafWriter.

import type { ApiError } from '../errors/catalogue.js';
import type { SafWriter } from './saf-writer.js';
import type { FamilyStats } from './serving-stats.js';
import type { HttpResponse } from '../lib/uws.js';
import { CLOSE, CONNECTION, CONTENT_TYPE, statusBytes, wire } from './wire.js';

/**
 * How far a search has come along the front end's admission path (app.ts):
 * a 503 OVERLOADED is told apart by where it was raised ('closing': the
 * server began to stop while the search was being admitted).
 */
export type AdmissionStage = 'admit' | 'plan' | 'reserve' | 'charge' | 'closing';

export type Headers = ReadonlyArray<readonly [string, string]>;

export class Exchange {
  aborted = false;
  /** A HEAD request: the answer is a GET's status and headers, without its body. */
  head = false;
  /** The request came as HTTP/1.0 (http10.ts): answers are whole and close the connection. */
  http10 = false;
  /** The stream once a search has begun its 200. */
  writer: SafWriter | undefined = undefined;
  readonly started = performance.now();
  /** Set once a status line has gone out (here or by the writer). */
  answered = false;
  stage: AdmissionStage = 'admit';

  /** `family`: where this request counts; the front end narrows it once the path is routed. */
  constructor(readonly res: HttpResponse, readonly url: string, readonly query: string, readonly accept: string,
    readonly apiKey: string | undefined, public family: FamilyStats) {}

  /** The client's address (ClientAddress), read from the socket only when asked: a key with an allow-list. */
  clientIp(): string {
    return this.aborted ? '' : latin1(this.res.getRemoteAddressAsText());
  }

  /** uWS's onAborted: the client has gone (or uWS gave up on it); nothing may touch the response from now on. */
  abort(): void {
    if (!this.answered) this.family.abandoned++;
    this.aborted = true;
    this.writer?.markAborted();
  }

  /** Counts the status line going out now. */
  markAnswered(status: number, nowMs: number): void {
    this.answered = true;
    this.family.answered(status, this.started, nowMs);
  }

  /** An error answer: the catalogue's status, content type and exact text (spec 7, 4.5). */
  sendError(e: Pick<ApiError, 'status' | 'contentType' | 'body'>, headers: Headers = []): void {
    this.send(e.status, `${e.contentType}; charset=utf-8`, headers, e.contentType === 'text/plain' ? `${e.body}\n` : e.body);
  }

  /** A 200 with one JSON object and its newline (ping, rate_limit). */
  sendJson(body: object): void {
    this.sendJsonText(JSON.stringify(body) + '\n');
  }

  /** A 200 with JSON text already written (the OpenAPI document, built once). */
  sendJsonText(text: string): void {
    this.send(200, 'application/json', [], text);
  }

  /**
   * The answer to HEAD on a search: the 200 and content type its stream
   * would start with. No Content-Length (the length of a stream is known
   * only at its end) and no X-RateLimit-* headers (HEAD charges nothing).
   */
  sendStreamHead(): void {
    if (this.aborted) return;
    this.markAnswered(200, performance.now());
    this.res.cork(() => {
      this.res.writeStatus(statusBytes(200));
      this.res.writeHeader(CONTENT_TYPE, wire('application/x-ndjson'));
      if (this.http10) this.res.writeHeader(CONNECTION, CLOSE);
      this.res.endWithoutBody();
    });
  }

  /** A 204 with these headers (OPTIONS). */
  sendNoContent(headers: Headers): void {
    if (this.aborted) return;
    this.markAnswered(204, performance.now());
    this.res.cork(() => {
      this.res.writeStatus(statusBytes(204));
      for (const [k, v] of headers) this.res.writeHeader(wire(k), v);
      if (this.http10) this.res.writeHeader(CONNECTION, CLOSE);
      this.res.endWithoutBody();
    });
  }

  private send(status: number, contentType: string, headers: Headers, body: string): void {
    if (this.aborted) return;
    this.markAnswered(status, performance.now());
    this.res.cork(() => {
      this.res.writeStatus(statusBytes(status));
      this.res.writeHeader(CONTENT_TYPE, wire(contentType));
      for (const [k, v] of headers) this.res.writeHeader(wire(k), v);
      if (this.http10) this.res.writeHeader(CONNECTION, CLOSE);
      if (!this.head) {
        this.res.end(body);
        return;
      }
      // uWS 20.30's endWithoutBody(length) writes the header but then waits for that many body bytes: the header is written here.
      this.res.writeHeader('Content-Length', String(Buffer.byteLength(body)));
      this.res.endWithoutBody();
    });
  }
}

/** An address as text (ASCII): a JS loop is several times cheaper than TextDecoder for ~15 bytes. */
function latin1(ab: ArrayBuffer): string {
  const b = new Uint8Array(ab);
  let s = '';
  for (let i = 0; i < b.length; i++) s += String.fromCharCode(b[i]!);
  return s;
}
