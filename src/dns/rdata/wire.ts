// Reading rdata wire: bounds checks, big-endian integers, names, and the two
// ways a decoder gives up.
//
// Contract: a decoder reads the rdata b[0, b.length) and checks every read
// against its end first. Wire that is cut short or inconsistent throws
// DnsFormatError ("malformed rdata: ..."). Wire that is well-formed but has no
// canonical presentation throws NOT_CANONICAL, which rdataToText answers with
// the RFC 3597 `\# N HEX` form. A field decoder returns its text and leaves
// the offset after the field in `cursor.pos`, so it allocates no pair.

import { DnsFormatError } from '../../errors/catalogue.js';
import { readWireName } from '../name.js';

/** Most octets one rdata may hold: RDLENGTH is 16 bits. */
export const RDATA_OCTETS_MAX = 65_535;

class NotCanonical extends Error {}
/** Thrown (this one instance) for well-formed wire that has no canonical presentation. */
export const NOT_CANONICAL = new NotCanonical('no canonical presentation');

export function malformed(what: string): DnsFormatError {
  return new DnsFormatError(`malformed rdata: ${what}`);
}

/** Where the last field decoder stopped: the offset after its field. */
export const cursor = { pos: 0 };

/** Throws unless n octets of `what` start at p inside the rdata. */
export function need(b: Uint8Array, p: number, n: number, what: string): void {
  if (p + n > b.length) throw malformed(`truncated ${what} at rdata offset ${p}`);
}

export { u16, u32 } from '../../lib/bytes.js';

/** Length of the length-prefixed field at b[p] (a length octet, then that many octets), checked to fit. */
export function lengthOctet(b: Uint8Array, p: number, what: string): number {
  need(b, p, 1, what);
  const n = b[p]!;
  need(b, p + 1, n, what);
  return n;
}

/** Presentation of the uncompressed name at b[p]. Sets cursor.pos. */
export function nameText(b: Uint8Array, p: number): string {
  const r = readWireName(b, p, false);
  cursor.pos = r.end;
  return r.name;
}
