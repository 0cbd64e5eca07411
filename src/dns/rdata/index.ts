// Record data: uncompressed wire form <-> master-file presentation text. The
// public entry of src/dns/rdata/; the modules beside it are its parts.
//
// Contract (compat.md "Values", DNSDB style):
// - rdataToText gives the canonical presentation: numbers in decimal, names
//   lower-case with a trailing dot, character-strings double-quoted with `"`
//   and `\` escaped and bytes outside 0x20-0x7E as `\DDD`, digests in
//   upper-case hex, keys in base64 as one word, RRSIG times as epoch seconds
//   and the RRSIG signature in base64 chunks of 56 characters. The text holds
//   only bytes 0x20-0x7E (asserted: the search blobs depend on it). Types we
//   have no presentation for, and wire that is valid but has no canonical
//   presentation (a TXT with no strings, a LOC of another version, a bitmap
//   with trailing zero bytes), come out in the RFC 3597 form `\# N HEX`.
//   Malformed wire (truncated fields, trailing bytes) throws DnsFormatError.
// - rdataFromText parses presentation text (any accepted spelling: RRSIG
//   times as YYYYMMDDHHMMSS or epoch seconds, base64 and hex split over
//   several words, algorithm mnemonics, `\# N HEX` for every type) into
//   uncompressed wire with names lower-cased. Relative names are completed
//   with `origin` (the root when there is none). rdataFromTokens does the
//   same for words the zone reader has already split with tokenize().
// - rdataFromMessage copies an rdata out of a DNS message into the same
//   canonical wire: compressed names expanded and lower-cased.
// Round trip: rdataFromText(t, rdataToText(t, w)) equals w for every w in
// canonical form (names lower-cased), and text -> wire -> text is stable.
//
// How it is built: one table (schema.ts) lists the fields of each type, and
// three walkers interpret it: to-text.ts, from-text.ts, from-message.ts. The
// field codecs they share live by subject, each with both directions:
// numbers.ts, strings.ts, encodings.ts (hex, base64, base32hex),
// addresses.ts, bitmaps.ts, svcb.ts. LOC (loc.ts) and A6, IPSECKEY and HIP
// (special-types.ts) have fields that depend on each other and get their own
// codecs. wire.ts and writer.ts hold the byte-level reading and the scratch
// buffer every parser writes into; tokens.ts is the master-file tokenizer.

export { RDATA_OCTETS_MAX } from './wire.js';
export { rdataToText } from './to-text.js';
export { Tokens, tokenize, type TokenizerState } from './tokens.js';
export { parseTtl } from './numbers.js';
export { rdataFromTokens, rdataFromTokensView, rdataFromText } from './from-text.js';
export { rdataFromMessage } from './from-message.js';
