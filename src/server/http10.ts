// HTTP/1.0 clients: HAProxy's default health check (`OPTIONS / HTTP/1.0`),
// ApacheBench, old probes and scripts.
//
// uWebSockets.js 20.30 never hands an HTTP/1.0 request to the application:
// the socket waits out uWS's idle timeout and closes with nothing sent
// (native/http10.cc says why, and how it works around it). installHttp10()
// makes the uWS module see such a request as HTTP/1.1 with `connection:
// close` and the marker header HTTP10_MARK, which the front end reads
// (isHttp10) to answer as HTTP/1.0 needs: every answer whole, with
// Content-Length and never chunked (HTTP/1.0 has no chunked encoding), and
// the connection closed after it (uWS does that for `connection: close`).
// A search's answer is gathered whole, up to LIMITS.http10AnswerBytesMax
// (saf-writer.ts). The status line still says HTTP/1.1, the version the
// server speaks, which RFC 9110 (6.2) asks of a server answering 1.0.

import { loadAddon } from '../lib/native.js';
import { UWS_BINARY, type HttpRequest } from '../lib/uws.js';

/** The header native/http10.cc adds, with the value 1.0, to a request that came as HTTP/1.0. */
export const HTTP10_MARK = 'rrscan-http-version';

interface Http10Addon {
  install(modulePath: string, mark: string): true | string;
}

let installed: true | string | undefined;

/** Makes this process's uWS answer HTTP/1.0 requests: true, or why it could not (for the caller to log). Idempotent. */
export function installHttp10(): true | string {
  installed ??= loadAddon<Http10Addon>('rrscan_http10').install(UWS_BINARY, HTTP10_MARK);
  return installed;
}

/** Whether the request came as HTTP/1.0 (read in the handler: uWS reuses its HttpRequest). */
export function isHttp10(req: HttpRequest): boolean {
  return req.getHeader(HTTP10_MARK) === '1.0';
}
