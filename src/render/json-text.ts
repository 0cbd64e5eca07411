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
