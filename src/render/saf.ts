// The NDJSON "streaming API framing" (SAF) lines of a 200 response
// (service-spec.md 2.1, compat.md "Stream framing"): every line ends with
// "\n", no line is ever blank, the stream opens with `begin` and ends with
// exactly one of `succeeded`, `limited` or `failed`. Pure text; the server's
// SafWriter decides when it goes to the socket.

export const BEGIN_LINE = '{"cond":"begin"}\n';
/** Written after a stretch with nothing else to send, so proxies keep the stream open. */
export const KEEPALIVE_LINE = '{}\n';

export type Terminator = 'succeeded' | 'limited' | 'failed';

/** The terminator line; `msg` is optional on `succeeded` only. */
export function terminatorLine(cond: Terminator, msg?: string): string {
  return msg === undefined ? `{"cond":"${cond}"}\n` : `${JSON.stringify({ cond, msg })}\n`;
}
