// IPv4 and IPv6 addresses: 4 or 16 network-order bytes <-> text.
//
// Contract. ipv4ToText gives the dotted quad; ipv6ToText the RFC 5952
// canonical form (lower-case hex, no leading zeros, the longest run of two or
// more zero groups as "::", the first such run on a tie, and "::ffff:a.b.c.d"
// for IPv4-mapped addresses as RFC 5952 section 5 recommends). The parsers
// return undefined for anything that is not an address, never throw: callers
// decide what a bad address means (a 400, a rejected record). IPv4 octets
// with leading zeros are refused, as inet_pton does, because some tools read
// them as octal.

/** Dotted quad of b[off..off+3]. */
export function ipv4ToText(b: Uint8Array, off = 0): string {
  return `${b[off]!}.${b[off + 1]!}.${b[off + 2]!}.${b[off + 3]!}`;
}

/** Four bytes written into `out` at `pos` when `s[from, to)` is a dotted quad; false otherwise. */
function parseV4Into(s: string, from: number, to: number, out: Uint8Array, pos: number): boolean {
  let part = 0;
  let value = 0;
  let digits = 0;
  for (let i = from; i <= to; i++) {
    const c = i < to ? s.charCodeAt(i) : 0x2e;
    if (c >= 0x30 && c <= 0x39) {
      if (digits > 0 && value === 0) return false; // leading zero
      value = value * 10 + (c - 0x30);
      if (++digits > 3 || value > 255) return false;
    } else if (c === 0x2e) {
      if (digits === 0 || part > 3) return false;
      out[pos + part++] = value;
      value = 0;
      digits = 0;
    } else {
      return false;
    }
  }
  return part === 4;
}

export function ipv4FromText(s: string): Uint8Array | undefined {
  if (s.length < 7 || s.length > 15) return undefined;
  const out = new Uint8Array(4);
  return parseV4Into(s, 0, s.length, out, 0) ? out : undefined;
}

/** RFC 5952 text of the 16 bytes at b[off..off+15]. */
export function ipv6ToText(b: Uint8Array, off = 0): string {
  // IPv4-mapped ::ffff:a.b.c.d (RFC 5952 section 5).
  let mapped = b[off + 10] === 0xff && b[off + 11] === 0xff;
  for (let i = 0; mapped && i < 10; i++) if (b[off + i] !== 0) mapped = false;
  if (mapped) return `::ffff:${ipv4ToText(b, off + 12)}`;

  // Longest run of zero groups (length >= 2), first one on a tie.
  let bestStart = -1, bestLen = 0, runStart = -1;
  for (let g = 0; g <= 8; g++) {
    const zero = g < 8 && b[off + 2 * g] === 0 && b[off + 2 * g + 1] === 0;
    if (zero) {
      if (runStart < 0) runStart = g;
    } else if (runStart >= 0) {
      const len = g - runStart;
      if (len > bestLen && len >= 2) {
        bestStart = runStart;
        bestLen = len;
      }
      runStart = -1;
    }
  }
  let s = '';
  for (let g = 0; g < 8; g++) {
    if (g === bestStart) {
      s += '::';
      g += bestLen - 1;
      continue;
    }
    if (s.length > 0 && !s.endsWith(':')) s += ':';
    s += ((b[off + 2 * g]! << 8) | b[off + 2 * g + 1]!).toString(16);
  }
  return s;
}

function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

/**
 * 16 bytes of an IPv6 address in any RFC 4291 text form: full, "::"
 * compressed, and with an embedded dotted quad in the last 32 bits. No zone
 * index ("%eth0"), no brackets.
 */
export function ipv6FromText(s: string): Uint8Array | undefined {
  const n = s.length;
  if (n < 2 || n > 45) return undefined;
  const out = new Uint8Array(16);
  let g = 0; // groups written
  let gap = -1; // group index where "::" sits
  let i = 0;
  if (s.charCodeAt(0) === 0x3a) {
    if (s.charCodeAt(1) !== 0x3a) return undefined;
    gap = 0;
    i = 2;
    if (i === n) return out; // "::"
  }
  for (;;) {
    // One group: hex digits, or a dotted quad ending the address.
    let value = 0;
    let digits = 0;
    const start = i;
    while (i < n) {
      const d = hexDigit(s.charCodeAt(i));
      if (d < 0) break;
      value = (value << 4) | d;
      digits++;
      i++;
    }
    if (i < n && s.charCodeAt(i) === 0x2e) {
      if (g > 6 || !parseV4Into(s, start, n, out, 2 * g)) return undefined;
      g += 2;
      break;
    }
    if (digits === 0 || digits > 4 || g >= 8) return undefined;
    out[2 * g] = value >> 8;
    out[2 * g + 1] = value & 0xff;
    g++;
    if (i === n) break;
    if (s.charCodeAt(i) !== 0x3a) return undefined;
    i++;
    if (i < n && s.charCodeAt(i) === 0x3a) {
      if (gap >= 0) return undefined; // a second "::"
      gap = g;
      i++;
      if (i === n) break;
    } else if (i === n) {
      return undefined; // trailing single colon
    }
  }
  if (gap < 0) return g === 8 ? out : undefined;
  if (g >= 8) return undefined; // "::" must stand for at least one group
  // Move the groups after the gap to the end.
  const tail = g - gap;
  out.copyWithin(16 - 2 * tail, 2 * gap, 2 * g);
  out.fill(0, 2 * gap, 16 - 2 * tail);
  return out;
}
