// The one percent-decoder (compat.md "Values").
//
// Paths are split on `/` BEFORE decoding, then each segment is decoded
// exactly once, so `%2F` inside a regex stays a slash in the pattern and a
// double-encoded `%252A` arrives as the text `%2A`. `+` is a literal plus
// everywhere, never a space: regexes and globs use it, and clients send it
// raw. Bytes are decoded as UTF-8; malformed escapes or invalid UTF-8 make
// the request unparsable.

const utf8 = new TextDecoder('utf-8', { fatal: true });

function hexVal(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

/** Decodes %XX escapes once; returns undefined for a malformed escape or bad UTF-8. */
export function percentDecode(raw: string): string | undefined {
  if (raw.indexOf('%') < 0) return raw;
  const bytes = Buffer.allocUnsafe(raw.length * 3);
  let n = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === 0x25) {
      const hi = i + 2 < raw.length ? hexVal(raw.charCodeAt(i + 1)) : -1;
      const lo = hi >= 0 ? hexVal(raw.charCodeAt(i + 2)) : -1;
      if (lo < 0) return undefined;
      bytes[n++] = (hi << 4) | lo;
      i += 2;
    } else if (c < 0x80) {
      bytes[n++] = c;
    } else {
      // A character beyond U+FFFF is a surrogate pair: written one half at a
      // time, each half would become U+FFFD.
      const next = i + 1 < raw.length ? raw.charCodeAt(i + 1) : 0;
      const wide = c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff;
      n += bytes.write(wide ? raw.slice(i, i + 2) : raw[i]!, n, 'utf8');
      if (wide) i++;
    }
  }
  try {
    return utf8.decode(bytes.subarray(0, n));
  } catch {
    return undefined;
  }
}

/** The parameters of an empty query string, shared: callers only read them. */
const NO_PARAMS: ReadonlyMap<string, string> = new Map();

/** Raw query string -> decoded parameters; undefined when an escape is malformed. Last value wins. */
export function parseQueryString(raw: string): ReadonlyMap<string, string> | undefined {
  if (raw === '') return NO_PARAMS;
  const out = new Map<string, string>();
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = percentDecode(eq < 0 ? part : part.slice(0, eq));
    const value = percentDecode(eq < 0 ? '' : part.slice(eq + 1));
    if (name === undefined || value === undefined) return undefined;
    out.set(name, value);
  }
  return out;
}
