// JSON text of the strings results carry, for result lines written out
// directly (flexible search's worker batches, standard search's rows).

/**
 * A JSON string literal of `s`. Names and rdata are presentation text:
 * printable ASCII with other bytes as \DDD escapes, so only `"` and `\`
 * need escaping, and the common case is a plain quote on each side.
 */
export function jsonString(s: string): string {
  return s.indexOf('"') < 0 && s.indexOf('\\') < 0 ? `"${s}"` : JSON.stringify(s);
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * jsonString's rule on bytes: the body of the JSON string literal of the
 * printable-ASCII text src[start, end), without its quotes, written to
 * out at `at` (which must have room for 2 x (end - start) bytes); returns
 * the position after it. A flexible search's names go from the shard to the
 * batch this way, without becoming strings.
 */
export function writeJsonStringBody(src: Uint8Array, start: number, end: number, out: Uint8Array, at: number): number {
  for (let i = start; i < end; i++) {
    const b = src[i]!;
    if (b === QUOTE || b === BACKSLASH) out[at++] = BACKSLASH;
    out[at++] = b;
  }
  return at;
}
