// The one way a value enters ClickHouse SQL text.
//
// ClickHouse 18.16 (Debian's) has no query parameters, so every value a
// statement needs is inlined as a literal, and this module is the only place
// that writes one. Strings are written byte by byte from their UTF-8 form:
// printable ASCII other than `'` and `\` as itself, everything else as
// `\xHH`. That output is plain ASCII with no quote, backslash or control
// character left to be misread, and ClickHouse reads `\xHH` as the byte HH
// on every version, so the value round trips exactly (test/integration/
// clickhouse-literal.test.ts asks a real server).
//
// Refused (ClickHouseError), never repaired: a string that is not well-formed
// UTF-16 (a lone surrogate has no UTF-8 form; replacing it with U+FFFD would
// search for something the client did not ask), and a value over
// LIMITS.clickhouseLiteralBytesMax bytes. Bytes (Uint8Array) are taken as
// they are, invalid UTF-8 included.

import { LIMITS } from '../config/limits.js';
import { ClickHouseError } from '../errors/catalogue.js';

const HEX = '0123456789ABCDEF';
const QUOTE = 0x27;
const BACKSLASH = 0x5c;
/** With the u flag a pair is one code point, so this matches lone surrogates only (String#isWellFormed is ES2024). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** `bytes` as the body of a quoted literal. */
function escapeBytes(bytes: Uint8Array): string {
  let out = '';
  let run = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b >= 0x20 && b <= 0x7e && b !== QUOTE && b !== BACKSLASH) continue;
    if (i > run) out += String.fromCharCode(...bytes.subarray(run, i));
    out += `\\x${HEX[b >> 4]}${HEX[b & 15]}`;
    run = i + 1;
  }
  // Plain runs go out in slices: fromCharCode's argument list has a bound.
  for (let i = run; i < bytes.length; i += 8192) out += String.fromCharCode(...bytes.subarray(i, Math.min(bytes.length, i + 8192)));
  return out;
}

/** A ClickHouse string literal, quotes included, whose value is exactly `value` (its UTF-8 form, or the bytes). */
export function sqlString(value: string | Uint8Array): string {
  if (typeof value === 'string' && LONE_SURROGATE.test(value)) {
    throw new ClickHouseError('a string with a lone surrogate cannot be sent to ClickHouse');
  }
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  if (bytes.length > LIMITS.clickhouseLiteralBytesMax) {
    throw new ClickHouseError(`a literal of ${bytes.length} bytes is over the ${LIMITS.clickhouseLiteralBytesMax}-byte bound`);
  }
  return `'${escapeBytes(bytes)}'`;
}

/** An unsigned integer literal; refuses anything but a safe non-negative integer. */
export function sqlUInt(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) throw new ClickHouseError(`${String(n)} is not an unsigned integer`);
  return String(n);
}

/** A list of unsigned integers for IN (...); never empty (`IN ()` is not SQL). */
export function sqlUIntList(ns: readonly number[]): string {
  if (ns.length === 0) throw new ClickHouseError('an empty list cannot be inlined');
  return `(${ns.map(sqlUInt).join(',')})`;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/**
 * A database, table or cluster name, back-quoted. Only plain identifiers are
 * accepted: operators type these on the command line, and a name that needs
 * escaping is a typo more often than a wish.
 */
export function sqlIdentifier(name: string): string {
  if (!IDENTIFIER.test(name)) throw new ClickHouseError(`"${name}" is not a plain identifier (letters, digits, _; at most 64)`);
  return `\`${name}\``;
}
