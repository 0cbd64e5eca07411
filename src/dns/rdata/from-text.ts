// Presentation text -> wire: the schema walker, the RFC 3597 form, and the
// text entry points rdataFromTokens and rdataFromText.
//
// Contract: see index.ts. Every field is written through writer.ts; a missing
// field, a field left over, or a field that does not parse throws
// DnsFormatError. A known type spelled in the `\# N HEX` form is checked by
// decoding it and re-read from its canonical text, so both spellings of one
// record give the same wire.

import assert from 'node:assert/strict';
import { DnsFormatError } from '../../errors/catalogue.js';
import { printable } from '../name.js';
import { rrtypeFromText, rrtypeToText } from '../rrtype.js';
import { putApl, putEui, putIpv4, putIpv6, putLocator, putNsap } from './addresses.js';
import { putNxtBitmap, putTypeBitmap, putWksPorts } from './bitmaps.js';
import { isHexDigits, putBase64, putHash, putHex, putSalt } from './encodings.js';
import { algorithm, certType, ipProtocol, num, parseTime, ttlField } from './numbers.js';
import {
  ALG, APL, B64, B64_SPLIT, BITMAP, CAA_TAG, CERT_TYPE, CSTR, CSTR_OPT, CSTRS, EUI48, EUI64, HASH32, HEX, ILNP64, IPV4, IPV6,
  isQuotable, mayBeEmpty, NAME, NSAP_HEX, NXT_BITMAP, SALT, SCHEMA, SPECIAL, STR_REST, SVCPARAMS, takesRest, TIME, TYPE, U16, U32,
  U32_TTL, U8, WKS_PORTS, WKS_PROTO,
} from './schema.js';
import { putCaaTag, putCharString, putCstr } from './strings.js';
import { putSvcParams } from './svcb.js';
import { rdataToTextStrict } from './to-text.js';
import { joinedRest, Tokens, tokenize, unexpectedQuoted, type TokenizerState } from './tokens.js';
import { NOT_CANONICAL, RDATA_OCTETS_MAX } from './wire.js';
import { begin, isScratch, put16, put32, put8, putName, writtenView } from './writer.js';

function putType(tok: string): void {
  const t = rrtypeFromText(tok);
  if (t === undefined) throw new DnsFormatError(`unknown type "${printable(tok)}"`);
  put16(t);
}

/** Encodes a field that takes exactly one word, `tok`. */
function putWord(kind: number, tok: string, origin: string | undefined): void {
  switch (kind) {
    case U8: return put8(num(tok, 0xff, 'number'));
    case U16: return put16(num(tok, 0xffff, 'number'));
    case U32: return put32(num(tok, 0xffffffff, 'number'));
    case U32_TTL: return put32(ttlField(tok));
    case ALG: return put8(algorithm(tok));
    case CERT_TYPE: return put16(certType(tok));
    case WKS_PROTO: return put8(ipProtocol(tok));
    case TIME: return put32(parseTime(tok));
    case TYPE: return putType(tok);
    case NAME: return putName(tok, origin);
    case IPV4: return putIpv4(tok);
    case IPV6: return putIpv6(tok);
    case CSTR: case CSTR_OPT: return putCstr(tok);
    case STR_REST: putCharString(tok, RDATA_OCTETS_MAX); return;
    case SALT: return putSalt(tok);
    case HASH32: return putHash(tok);
    case CAA_TAG: return putCaaTag(tok);
    case EUI48: return putEui(tok, 6);
    case EUI64: return putEui(tok, 8);
    case ILNP64: return putLocator(tok);
    default:
      assert.fail(`unknown field kind ${kind}`);
  }
}

/** Encodes a field that takes every word from toks[i] on. */
function putRest(kind: number, toks: Tokens, i: number): void {
  switch (kind) {
    case CSTRS: for (; i < toks.length; i++) putCstr(toks.text[i]!); return;
    case HEX: return putHex(joinedRest(toks, i), 'hex field');
    case B64: case B64_SPLIT: return putBase64(joinedRest(toks, i), 'base64 field');
    case BITMAP: return putTypeBitmap(toks, i);
    case SVCPARAMS: return putSvcParams(toks, i);
    case NSAP_HEX: return putNsap(toks, i);
    case APL: return putApl(toks, i);
    case WKS_PORTS: return putWksPorts(toks, i);
    case NXT_BITMAP: return putNxtBitmap(toks, i);
    default:
      assert.fail(`unknown field kind ${kind}`);
  }
}

/** Encodes one field from toks[i]; returns the index of the next unread token. */
function putField(kind: number, toks: Tokens, i: number, origin: string | undefined): number {
  const n = toks.length;
  if (i >= n) {
    if (mayBeEmpty(kind)) return i;
    throw new DnsFormatError('too few fields');
  }
  const tok = toks.text[i]!;
  if (toks.quoted[i]! && !isQuotable(kind)) throw unexpectedQuoted(tok);
  if (takesRest(kind)) {
    putRest(kind, toks, i);
    return n;
  }
  putWord(kind, tok, origin);
  return i + 1;
}

/** RFC 3597 `\# len hex...`: the wire it spells. */
function genericWire(toks: Tokens, i: number): Uint8Array {
  if (i + 1 >= toks.length) throw new DnsFormatError('\\# needs a length');
  const len = num(toks.text[i + 1]!, RDATA_OCTETS_MAX, '\\# length');
  const hex = joinedRest(toks, i + 2);
  if (hex.length !== len * 2 || !isHexDigits(hex)) {
    throw new DnsFormatError(`\\# length ${len} does not match its ${hex.length / 2} octets of hex`);
  }
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

function isGeneric(toks: Tokens, i: number): boolean {
  return i < toks.length && !toks.quoted[i] && toks.text[i] === '\\#';
}

/** A known type spelled generically: checked, and its names lower-cased by a round trip through text. */
function canonicalGeneric(rrtype: number, wire: Uint8Array): Uint8Array {
  let text: string;
  try {
    text = rdataToTextStrict(rrtype, wire);
  } catch (err) {
    if (err === NOT_CANONICAL) return wire;
    throw new DnsFormatError(`\\# rdata is not a valid ${rrtypeToText(rrtype)} record: ${(err as Error).message}`);
  }
  return rdataFromText(rrtype, text);
}

/**
 * Wire form of the rdata spelled by toks[start..]. For the zone parser,
 * which tokenizes whole records; rdataFromText tokenizes a string and calls
 * this.
 */
export function rdataFromTokens(rrtype: number, toks: Tokens, start: number, origin?: string): Uint8Array {
  const wire = rdataFromTokensView(rrtype, toks, start, origin);
  return isScratch(wire) ? wire.slice() : wire;
}

/**
 * As rdataFromTokens, but the bytes may be a view of the parsers' scratch
 * buffer, valid only until the next parse: for a caller that copies them at
 * once (the zone parser's RRsets), spared an ArrayBuffer a record.
 */
export function rdataFromTokensView(rrtype: number, toks: Tokens, start: number, origin?: string): Uint8Array {
  const fields = SCHEMA.get(rrtype);
  const special = fields === undefined ? SPECIAL.get(rrtype) : undefined;
  if (isGeneric(toks, start)) {
    const wire = genericWire(toks, start);
    return fields === undefined && special === undefined ? wire : canonicalGeneric(rrtype, wire);
  }
  begin();
  if (fields !== undefined) {
    let i = start;
    for (let f = 0; f < fields.length; f++) i = putField(fields[f]!, toks, i, origin);
    if (i < toks.length) throw new DnsFormatError(`trailing field "${printable(toks.text[i]!)}"`);
  } else if (special !== undefined) {
    special.fromTokens(toks, start, origin);
  } else {
    throw new DnsFormatError(`type ${rrtypeToText(rrtype)} needs the \\# generic form`);
  }
  return writtenView();
}

const textTokens = new Tokens();
const textState: TokenizerState = { depth: 0 };

/** Wire form of presentation text (see index.ts). Throws DnsFormatError. */
export function rdataFromText(rrtype: number, text: string, origin?: string): Uint8Array {
  textTokens.clear();
  textState.depth = 0;
  tokenize(text, textTokens, textState);
  if (textState.depth !== 0) throw new DnsFormatError('unbalanced "("');
  // rdataFromTokens may call back here (for `\#`) and reuse textTokens;
  // it has read everything it needs from them by then.
  return rdataFromTokens(rrtype, textTokens, 0, origin);
}
