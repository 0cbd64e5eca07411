// DNS message -> canonical rdata wire: rdataFromMessage.
//
// Contract: see index.ts. Names inside the rdata may be compressed in a
// message (RFC 3597 section 4 allows it for the RFC 1035 types); they are
// expanded from the message and lower-cased, and every other field is copied
// unchanged. Errors are DnsFormatError naming the byte offset in the message.

import { DnsFormatError } from '../../errors/catalogue.js';
import { copiedNameEnd, copyWireName } from '../name.js';
import { rdataFromText } from './from-text.js';
import { CSTR, FIXED_OCTETS, HAS_NAMES, NAME, SCHEMA } from './schema.js';
import { rdataToTextStrict } from './to-text.js';
import { NOT_CANONICAL, RDATA_OCTETS_MAX } from './wire.js';
import { out } from './writer.js';

/**
 * A6, IPSECKEY and HIP: their names are never compressed; lower-case them by
 * a round trip through text.
 */
function specialFromMessage(rrtype: number, msg: Uint8Array, offset: number, end: number): Uint8Array {
  const raw = msg.slice(offset, end);
  try {
    const text = rdataToTextStrict(rrtype, raw);
    return rdataFromText(rrtype, text);
  } catch (err) {
    if (err === NOT_CANONICAL) return raw;
    throw new DnsFormatError(`${(err as Error).message} in rdata at byte offset ${offset}`);
  }
}

/** Octets of the field of `kind` at msg[p], other than a name. */
function fieldOctets(kind: number, msg: Uint8Array, p: number, end: number): number {
  if (kind === CSTR) {
    if (p >= end) throw new DnsFormatError(`truncated rdata at byte offset ${p}`);
    return 1 + msg[p]!;
  }
  return FIXED_OCTETS[kind] ?? end - p; // anything else runs to the end
}

/** Copies the rdata msg[offset, end) field by field into the scratch buffer, expanding names; returns its length. */
function copyFields(fields: readonly number[], msg: Uint8Array, offset: number, end: number): number {
  const buf = out.buf;
  let p = offset;
  let o = 0;
  for (let f = 0; f < fields.length; f++) {
    const kind = fields[f]!;
    if (kind === NAME) {
      if (p >= end) throw new DnsFormatError(`truncated rdata at byte offset ${p}`);
      o = copyWireName(msg, p, buf, o);
      const nameEnd = copiedNameEnd;
      if (nameEnd > end) throw new DnsFormatError(`name in rdata runs past the rdata end at byte offset ${p}`);
      p = nameEnd;
      continue;
    }
    const n = fieldOctets(kind, msg, p, end);
    if (p + n > end) throw new DnsFormatError(`truncated rdata at byte offset ${p}`);
    buf.set(msg.subarray(p, p + n), o);
    o += n;
    p += n;
  }
  if (p !== end) throw new DnsFormatError(`${end - p} trailing octets in rdata at byte offset ${p}`);
  return o;
}

/**
 * Uncompressed, canonical wire of the rdata at msg[offset, offset+length):
 * names expanded from compression pointers and lower-cased; other rdata is
 * copied unchanged. Throws DnsFormatError naming the byte offset.
 */
export function rdataFromMessage(rrtype: number, msg: Uint8Array, offset: number, length: number): Uint8Array {
  const end = offset + length;
  if (end > msg.length) throw new DnsFormatError(`rdata at byte offset ${offset} runs past the end of the message`);
  if (!HAS_NAMES.has(rrtype) || length === 0) return msg.slice(offset, end);
  const fields = SCHEMA.get(rrtype);
  if (fields === undefined) return specialFromMessage(rrtype, msg, offset, end);
  const o = copyFields(fields, msg, offset, end);
  if (o > RDATA_OCTETS_MAX) throw new DnsFormatError(`rdata at byte offset ${offset} expands beyond 65535 octets`);
  return out.buf.slice(0, o);
}
