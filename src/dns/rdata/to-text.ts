// Wire -> presentation text: the schema walker and rdataToText.
//
// Contract: rdataToText gives the canonical presentation described in
// index.ts; the text holds only bytes 0x20-0x7E (asserted: the search blobs
// depend on it). rdataToTextStrict is the same without the fallback: it
// throws NOT_CANONICAL where rdataToText writes `\# N HEX`, so the parsers
// can tell "valid but without a presentation" from "malformed".

import assert from 'node:assert/strict';
import { rrtypeToText } from '../rrtype.js';
import { aplText, euiText, ipv4Text, ipv6Text, locatorText, nsapText } from './addresses.js';
import { nxtBitmapText, typeBitmapText, wksPortsText } from './bitmaps.js';
import { base64, base64Split, hashText, hexUpper, saltText } from './encodings.js';
import {
  ALG, APL, B64, B64_SPLIT, BITMAP, CAA_TAG, CERT_TYPE, CSTR, CSTR_OPT, CSTRS, EUI48, EUI64, HASH32, HEX, ILNP64, IPV4, IPV6,
  NAME, NSAP_HEX, NXT_BITMAP, SALT, SCHEMA, SPECIAL, STR_REST, SVCPARAMS, TIME, TYPE, U16, U32, U32_TTL, U8, WKS_PORTS, WKS_PROTO,
} from './schema.js';
import { caaTagText, cstrsText, cstrText, quoted } from './strings.js';
import { svcParamsText } from './svcb.js';
import { cursor, malformed, nameText, need, NOT_CANONICAL, u16, u32 } from './wire.js';

function u8Text(b: Uint8Array, p: number): string {
  need(b, p, 1, 'u8');
  cursor.pos = p + 1;
  return String(b[p]!);
}

function u16Text(b: Uint8Array, p: number): string {
  need(b, p, 2, 'u16');
  cursor.pos = p + 2;
  return String(u16(b, p));
}

function u32Text(b: Uint8Array, p: number): string {
  need(b, p, 4, 'u32');
  cursor.pos = p + 4;
  return String(u32(b, p));
}

function typeText(b: Uint8Array, p: number): string {
  need(b, p, 2, 'type');
  cursor.pos = p + 2;
  return rrtypeToText(u16(b, p));
}

/** A field that runs to the end of the rdata: its text, with the cursor at the end. */
function toEnd(b: Uint8Array, text: string): string {
  cursor.pos = b.length;
  return text;
}

/** Text of one field at b[p]; sets cursor.pos after it. Empty string = the field has no text (an empty rest). */
function fieldText(kind: number, b: Uint8Array, p: number): string {
  const end = b.length;
  switch (kind) {
    case U8: case ALG: case WKS_PROTO: return u8Text(b, p);
    case U16: case CERT_TYPE: return u16Text(b, p);
    case U32: case U32_TTL: case TIME: return u32Text(b, p);
    case TYPE: return typeText(b, p);
    case NAME: return nameText(b, p);
    case IPV4: return ipv4Text(b, p, 'IPv4 address');
    case IPV6: return ipv6Text(b, p, 'IPv6 address');
    case CSTR: return cstrText(b, p);
    case CSTR_OPT:
      if (p === end) return toEnd(b, '');
      return cstrText(b, p);
    case CSTRS: return cstrsText(b, p);
    case HEX: return toEnd(b, hexUpper(b, p, end));
    case B64: return toEnd(b, base64(b, p, end));
    case B64_SPLIT: return toEnd(b, base64Split(b, p, end));
    case BITMAP: return toEnd(b, typeBitmapText(b, p, end));
    case SALT: return saltText(b, p);
    case HASH32: return hashText(b, p);
    case SVCPARAMS: return toEnd(b, svcParamsText(b, p));
    case STR_REST: return toEnd(b, quoted(b, p, end));
    case CAA_TAG: return caaTagText(b, p);
    case NSAP_HEX: return toEnd(b, nsapText(b, p));
    case EUI48: return euiText(b, p, 6);
    case EUI64: return euiText(b, p, 8);
    case ILNP64: return locatorText(b, p);
    case APL: return toEnd(b, aplText(b, p));
    case WKS_PORTS: return toEnd(b, wksPortsText(b, p));
    case NXT_BITMAP: return toEnd(b, nxtBitmapText(b, p));
    default:
      assert.fail(`unknown field kind ${kind}`);
  }
}

/** The RFC 3597 form, which every type has. */
export function genericText(wire: Uint8Array): string {
  return wire.length === 0 ? '\\# 0' : `\\# ${wire.length} ${hexUpper(wire, 0, wire.length)}`;
}

function trailing(wire: Uint8Array, p: number): void {
  if (p !== wire.length) throw malformed(`${wire.length - p} trailing octets`);
}

/** Canonical text; throws NOT_CANONICAL where rdataToText falls back to the RFC 3597 form. */
export function rdataToTextStrict(rrtype: number, wire: Uint8Array): string {
  const fields = SCHEMA.get(rrtype);
  if (fields === undefined) {
    const special = SPECIAL.get(rrtype);
    return special === undefined ? genericText(wire) : special.toText(wire);
  }
  if (wire.length === 0) throw NOT_CANONICAL; // e.g. an empty-rdata update record
  // Single-field types are most records; skip the joining loop for them.
  if (fields.length === 1) {
    const s = fieldText(fields[0]!, wire, 0);
    trailing(wire, cursor.pos);
    return s;
  }
  let s = '';
  let p = 0;
  for (let i = 0; i < fields.length; i++) {
    const t = fieldText(fields[i]!, wire, p);
    p = cursor.pos;
    if (t.length > 0) s += (s.length ? ' ' : '') + t;
  }
  trailing(wire, p);
  return s;
}

// Presentation text may hold only these bytes (asserted; a violation is our bug).
const NON_PRINTABLE = /[^\x20-\x7e]/;

/** Canonical presentation of an rdata (see index.ts). */
export function rdataToText(rrtype: number, wire: Uint8Array): string {
  let text: string;
  try {
    text = rdataToTextStrict(rrtype, wire);
  } catch (err) {
    if (err !== NOT_CANONICAL) throw err;
    text = genericText(wire);
  }
  assert.ok(!NON_PRINTABLE.test(text), `rdata text of type ${rrtype} holds a byte outside 0x20-0x7E`);
  return text;
}
