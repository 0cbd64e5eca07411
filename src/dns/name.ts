// Domain names: master-file presentation text <-> wire form, the one name
// normaliser every other module uses (style.md habit 12).
//
// Contract. Presentation text is RFC 1035 master-file text: labels separated
// by unescaped dots, `\X` for a literal character and `\DDD` for a byte.
// Everything this module RETURNS is canonical: lower-case ASCII, a trailing
// dot, "." for the root, and only bytes 0x20-0x7E. Bytes outside 0x21-0x7E
// (space included, so a name never holds a space and callers may split rdata
// text on spaces) become `\DDD`; the characters that mean something in a
// master file (`. \ " ; ( ) @ $`) become `\X`. Wire forms we produce are
// uncompressed and lower-cased (ASCII A-Z only; other bytes are kept), so
// names compare case-insensitively by comparing bytes.
//
// Limits are the protocol's (RFC 1035 section 2.3.4): a label holds at most
// 63 octets and a whole name at most 255 octets of wire form. Bad input
// throws DnsFormatError; wire errors name the byte offset.

import { LIMITS } from '../config/limits.js';
import { DnsFormatError } from '../errors/catalogue.js';

export const LABEL_OCTETS_MAX = 63;
export const NAME_OCTETS_MAX = 255;

// Per byte, how it is written in presentation: 0 = as itself, 1 = `\X`,
// 2 = `\DDD`. Upper case is lowered before this table is consulted.
const ESCAPE = new Uint8Array(256);
for (let b = 0; b < 256; b++) ESCAPE[b] = b < 0x21 || b > 0x7e ? 2 : 0;
for (const ch of '.\\";()@$') ESCAPE[ch.charCodeAt(0)] = 1;

// Per char code of presentation text: 1 when it can be copied (lower-cased)
// without any escape processing, so the common name takes the fast path.
const PLAIN = new Uint8Array(128);
for (let c = 0x21; c < 0x7f; c++) PLAIN[c] = ESCAPE[c] === 0 ? 1 : 0;

/** Lower-cases ASCII A-Z only; DNS case-insensitivity is ASCII-only (RFC 4343). */
function lowerByte(b: number): number {
  return b >= 0x41 && b <= 0x5a ? b | 0x20 : b;
}

// Scratch for building wire names: 255 octets plus room to detect overflow.
const scratch = new Uint8Array(NAME_OCTETS_MAX + LABEL_OCTETS_MAX + 8);
// Parser state shared by parseInto and putByte (single-threaded, never re-entered).
let wOut = 0;
let wLabelLen = 0;
let wText = '';

function putByte(b: number): void {
  if (++wLabelLen > LABEL_OCTETS_MAX) throw new DnsFormatError(`label longer than 63 octets in name "${printable(wText)}"`);
  if (wOut >= NAME_OCTETS_MAX) throw new DnsFormatError(`name longer than 255 octets: "${printable(wText)}"`);
  scratch[wOut++] = lowerByte(b);
}

/**
 * Appends the UTF-8 bytes of the character at text[i] (code unit >= 0x80)
 * with putByte; returns the index of its last code unit. Non-ASCII text is
 * taken as UTF-8, the encoding master files and our API use.
 */
export function putUtf8(text: string, i: number, put: (b: number) => void): number {
  const cp = text.codePointAt(i)!;
  if (cp >= 0xd800 && cp <= 0xdfff) throw new DnsFormatError('unpaired UTF-16 surrogate in text');
  if (cp < 0x800) {
    put(0xc0 | (cp >> 6));
    put(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    put(0xe0 | (cp >> 12));
    put(0x80 | ((cp >> 6) & 0x3f));
    put(0x80 | (cp & 0x3f));
  } else {
    put(0xf0 | (cp >> 18));
    put(0x80 | ((cp >> 12) & 0x3f));
    put(0x80 | ((cp >> 6) & 0x3f));
    put(0x80 | (cp & 0x3f));
    return i + 1;
  }
  return i;
}

/**
 * Decodes the escape starting with the backslash at text[i]: `\DDD` or
 * `\X`. Returns byte * 8 + (characters consumed after the backslash) so no
 * object is allocated; the caller unpacks it. A non-ASCII X is returned as
 * -1 - index so the caller can encode it as UTF-8.
 */
export function decodeEscape(text: string, i: number): number {
  const n = text.length;
  if (i + 1 >= n) throw new DnsFormatError(`text ends in a lone backslash: "${printable(text)}"`);
  const d1 = text.charCodeAt(i + 1);
  if (d1 >= 0x30 && d1 <= 0x39) {
    const d2 = text.charCodeAt(i + 2), d3 = text.charCodeAt(i + 3);
    if (!(d2 >= 0x30 && d2 <= 0x39 && d3 >= 0x30 && d3 <= 0x39)) {
      throw new DnsFormatError(`bad \\DDD escape in "${printable(text)}"`);
    }
    const v = (d1 - 0x30) * 100 + (d2 - 0x30) * 10 + (d3 - 0x30);
    if (v > 255) throw new DnsFormatError(`\\DDD escape above 255 in "${printable(text)}"`);
    return v * 8 + 3;
  }
  if (d1 >= 0x80) return -1 - (i + 1);
  return d1 * 8 + 1;
}

/**
 * Parses presentation text into `scratch` as an absolute, lower-cased wire
 * name (relative names get `originWire` appended). Returns the wire length.
 */
function parseInto(text: string, originWire: Uint8Array | undefined): number {
  if (text.length === 0) throw new DnsFormatError('empty name');
  if (text === '@') {
    if (!originWire) return writeRoot();
    scratch.set(originWire, 0);
    return originWire.length;
  }
  if (text === '.') return writeRoot();
  wText = text;
  wOut = 1;
  wLabelLen = 0;
  let labelStart = 0; // index in scratch of the current label's length byte
  let absolute = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2e /* . */) {
      if (wLabelLen === 0) throw new DnsFormatError(`empty label in name "${printable(text)}"`);
      scratch[labelStart] = wLabelLen;
      if (i === n - 1) {
        absolute = true;
        break;
      }
      labelStart = wOut++;
      wLabelLen = 0;
    } else if (c === 0x5c /* \ */) {
      const e = decodeEscape(text, i);
      if (e < 0) i = putUtf8(text, -1 - e, putByte);
      else {
        putByte(e >> 3);
        i += e & 7;
      }
    } else if (c >= 0x80) {
      i = putUtf8(text, i, putByte);
    } else {
      putByte(c);
    }
  }
  let out = wOut;
  if (!absolute) {
    // Close the last label, then append the origin (or the root).
    scratch[labelStart] = wLabelLen;
    if (originWire) {
      if (out + originWire.length > NAME_OCTETS_MAX) throw new DnsFormatError(`name longer than 255 octets: "${printable(text)}" + origin`);
      scratch.set(originWire, out);
      return out + originWire.length;
    }
  }
  scratch[out++] = 0;
  if (out > NAME_OCTETS_MAX) throw new DnsFormatError(`name longer than 255 octets: "${printable(text)}"`);
  return out;
}

function writeRoot(): number {
  scratch[0] = 0;
  return 1;
}

/** Input text shown in an error message, limited and reduced to printable ASCII. */
export function printable(text: string): string {
  const t = text.length > 80 ? `${text.slice(0, 80)}...` : text;
  let s = '';
  for (let i = 0; i < t.length; i++) {
    const c = t.charCodeAt(i);
    s += c >= 0x20 && c < 0x7f ? t[i] : '?';
  }
  return s;
}

// Presentation text is built in this buffer: at most 255 octets, each at
// most 4 characters (`\DDD`), plus the dots.
const textBuf = Buffer.allocUnsafe(NAME_OCTETS_MAX * 4 + 2);

/**
 * Appends the presentation of one label (bytes [start, start+len) of `b`)
 * to textBuf at `pos`; returns the new position.
 */
function labelText(b: Uint8Array, start: number, len: number, pos: number): number {
  for (let i = start, end = start + len; i < end; i++) {
    const c = lowerByte(b[i]!);
    const kind = ESCAPE[c]!;
    if (kind === 0) {
      textBuf[pos++] = c;
    } else if (kind === 1) {
      textBuf[pos++] = 0x5c;
      textBuf[pos++] = c;
    } else {
      textBuf[pos++] = 0x5c;
      textBuf[pos++] = 0x30 + ((c / 100) | 0);
      textBuf[pos++] = 0x30 + (((c / 10) | 0) % 10);
      textBuf[pos++] = 0x30 + (c % 10);
    }
  }
  textBuf[pos++] = 0x2e;
  return pos;
}

/** Presentation text of an uncompressed wire name held in scratch[0, len). */
function scratchToText(): string {
  if (scratch[0] === 0) return '.';
  let pos = 0;
  for (let i = 0; scratch[i]! !== 0; i += scratch[i]! + 1) pos = labelText(scratch, i + 1, scratch[i]!, pos);
  return textBuf.toString('latin1', 0, pos);
}

// The origin of the previous call, parsed once: zone files resolve thousands
// of names against the same origin.
let cachedOriginText: string | undefined;
let cachedOriginWire: Uint8Array | undefined;

function originWireOf(origin: string | undefined): Uint8Array | undefined {
  if (origin === undefined || origin === '.' || origin === '') return undefined;
  if (origin === cachedOriginText) return cachedOriginWire;
  const len = parseInto(origin, undefined);
  const wire = scratch.slice(0, len);
  cachedOriginText = origin;
  cachedOriginWire = len === 1 ? undefined : wire;
  return cachedOriginWire;
}

/**
 * True when `text` is already an ordinary name that needs no escape
 * processing: printable, no specials, non-empty labels. Lengths are checked
 * by the caller.
 */
function isPlain(text: string): boolean {
  const n = text.length;
  let labelLen = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2e) {
      if (labelLen === 0) return false;
      labelLen = 0;
    } else {
      if (c >= 128 || PLAIN[c] === 0) return false;
      if (++labelLen > LABEL_OCTETS_MAX) return false;
    }
  }
  return true;
}

/**
 * Canonical presentation of `text`: lower case, escapes normalised, trailing
 * dot. A relative name (no trailing dot) gets `origin` appended, or the root
 * when there is no origin; "@" is the origin itself.
 */
export function normalizeName(text: string, origin?: string): string {
  // Fast path: an ordinary absolute name (by far the common case in zone
  // files and queries) only needs lower-casing and its length checked. The
  // wire length of a plain absolute name is its text length plus one.
  const n = text.length;
  if (n > 1 && n <= NAME_OCTETS_MAX - 1 && text.charCodeAt(n - 1) === 0x2e && isPlain(text)) {
    return hasUpper(text) ? text.toLowerCase() : text;
  }
  if (text === '.') return '.';
  parseInto(text, originWireOf(origin));
  return scratchToText();
}

function hasUpper(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x41 && c <= 0x5a) return true;
  }
  return false;
}

/** Uncompressed, lower-cased wire form of a presentation name (relative names are taken as absolute). */
export function nameToWire(presentation: string): Uint8Array {
  const len = parseInto(presentation, undefined);
  return scratch.slice(0, len);
}

/**
 * Parses a name into `out` at `pos` (wire form, lower-cased, relative names
 * completed with `origin`); returns the position after it. For rdata
 * encoders, which would otherwise copy through an intermediate array.
 */
export function writeNameWire(text: string, origin: string | undefined, out: Uint8Array, pos: number): number {
  const len = parseInto(text, originWireOf(origin));
  if (pos + len > out.length) throw new DnsFormatError('rdata longer than 65535 octets');
  out.set(scratch.subarray(0, len), pos);
  return pos + len;
}

export interface WireName {
  name: string;
  end: number;
}

/**
 * The one walk over a wire name's labels, shared by every reader of wire
 * names. It follows compression pointers (when allowed), and each pointer
 * must point strictly backwards (before the pointer itself), which alone
 * rules out loops; the jump count is bounded as well
 * (LIMITS.dnsNamePointerJumpsMax). What changes rarely (the name's end, the
 * jumps) is module state, one walk at a time per thread; the position stays
 * in the caller's local variable, so the hot path allocates nothing.
 */
const walk = { end: -1, jumps: 0, offset: 0 };

function startWalk(offset: number): void {
  walk.end = -1;
  walk.jumps = 0;
  walk.offset = offset;
}

/**
 * The label at `pos` (after following pointers from there), packed as
 * position * 256 + length: its octets follow msg[position]; the next label
 * is at position + length + 1. Length 0 is the root label; walk.end is then
 * the offset just after the name where it starts (after its first pointer).
 */
function nextLabel(msg: Uint8Array, pos: number, pointers: boolean): number {
  const n = msg.length;
  for (;;) {
    if (pos >= n) throw new DnsFormatError(`name runs past the end of the data at byte offset ${pos}`);
    const len = msg[pos]!;
    if (len === 0) {
      if (walk.end < 0) walk.end = pos + 1;
      return pos * 256;
    }
    const kind = len & 0xc0;
    if (kind === 0xc0) {
      if (!pointers) throw new DnsFormatError(`compression pointer not allowed here, at byte offset ${pos}`);
      if (pos + 1 >= n) throw new DnsFormatError(`truncated compression pointer at byte offset ${pos}`);
      const target = ((len & 0x3f) << 8) | msg[pos + 1]!;
      if (target >= pos) throw new DnsFormatError(`compression pointer at byte offset ${pos} does not point backwards (to ${target})`);
      if (++walk.jumps > LIMITS.dnsNamePointerJumpsMax) {
        throw new DnsFormatError(`too many compression pointers in name at byte offset ${walk.offset}`);
      }
      if (walk.end < 0) walk.end = pos + 2;
      pos = target;
      continue;
    }
    if (kind !== 0) throw new DnsFormatError(`unsupported label type 0x${kind.toString(16)} at byte offset ${pos}`);
    if (pos + 1 + len > n) throw new DnsFormatError(`label runs past the end of the data at byte offset ${pos}`);
    return pos * 256 + len;
  }
}

/**
 * Reads a wire name at `offset` of `msg`, following compression pointers
 * when `pointers` is true; `end` is the offset just after the name where it
 * starts.
 */
export function readWireName(msg: Uint8Array, offset: number, pointers: boolean): WireName {
  startWalk(offset);
  let out = 0; // wire octets of the name so far, including length bytes
  let tpos = 0;
  for (let label = nextLabel(msg, offset, pointers); (label & 255) !== 0;) {
    const len = label & 255;
    const pos = (label - len) / 256;
    out += len + 1;
    if (out + 1 > NAME_OCTETS_MAX) throw new DnsFormatError(`name longer than 255 octets at byte offset ${offset}`);
    tpos = labelText(msg, pos + 1, len, tpos);
    label = nextLabel(msg, pos + 1 + len, pointers);
  }
  return { name: tpos === 0 ? '.' : textBuf.toString('latin1', 0, tpos), end: walk.end };
}

/**
 * Reads a possibly compressed name from a DNS message; returns lower-case
 * presentation and the offset just after the name in its original position.
 */
export function nameFromWire(msg: Uint8Array, offset: number): WireName {
  return readWireName(msg, offset, true);
}

/** Set by copyWireName: the offset just after the name in its original position. */
export let copiedNameEnd = 0;

/**
 * Copies the name at `offset` of `msg` (following pointers) into `out` at
 * `outPos` as uncompressed, lower-cased wire; returns the position after it
 * in `out` and sets copiedNameEnd, so the hot path allocates nothing. `out`
 * must have room for 255 octets at `outPos`.
 */
export function copyWireName(msg: Uint8Array, offset: number, out: Uint8Array, outPos: number): number {
  startWalk(offset);
  let o = outPos;
  for (let label = nextLabel(msg, offset, true); (label & 255) !== 0;) {
    const len = label & 255;
    const pos = (label - len) / 256;
    if (o - outPos + len + 2 > NAME_OCTETS_MAX) throw new DnsFormatError(`name longer than 255 octets at byte offset ${offset}`);
    out[o++] = len;
    for (let i = pos + 1, e = pos + 1 + len; i < e; i++) out[o++] = lowerByte(msg[i]!);
    label = nextLabel(msg, pos + 1 + len, true);
  }
  out[o++] = 0;
  copiedNameEnd = walk.end;
  return o;
}

/**
 * Labels in reverse order: "www.example.com." -> "com.example.www.", the
 * sort key that puts a zone's names next to each other. Escaped dots stay
 * inside their label. Its own inverse; the root stays ".".
 */
export function reverseName(name: string): string {
  if (name === '.' || name.length === 0) return '.';
  const body = name.charCodeAt(name.length - 1) === 0x2e && !endsWithEscapedDot(name) ? name.slice(0, -1) : name;
  if (body.indexOf('\\') < 0) {
    // Walk the dots from the end: twice as fast as split/reverse/join, and
    // this runs for every owner a shard is built from and every lookup.
    let out = '';
    let end = body.length;
    let dot = body.lastIndexOf('.', end - 1);
    while (end > 0 && dot >= 0) {
      out += `${body.slice(dot + 1, end)}.`;
      end = dot;
      dot = body.lastIndexOf('.', end - 1);
    }
    return `${out}${body.slice(0, end)}.`;
  }
  const labels: string[] = [];
  let start = 0;
  for (let dot = labelEnd(body, 0); dot >= 0; dot = labelEnd(body, start)) {
    labels.push(body.slice(start, dot));
    start = dot + 1;
  }
  labels.push(body.slice(start));
  return `${labels.reverse().join('.')}.`;
}

/** Scratch for reverseNameBytes: where each label of the name being reversed ends. */
let labelEnds = new Int32Array(256);

/**
 * reverseName on bytes: writes the name src[s, e) (ASCII, no newline) with
 * its labels in reverse order at dst[at] (room for e - s + 1 bytes): a
 * trailing unescaped dot dropped, labels split at unescaped dots (labelEnd's
 * walk), joined in reverse with a dot after each, "" and "." give ".".
 * Returns the end. Shards store owners this way, and lookups render them
 * back, without making strings.
 */
export function reverseNameBytes(src: Uint8Array, s: number, e: number, dst: Uint8Array, at: number): number {
  if (e === s || (e - s === 1 && src[s] === 0x2e)) {
    dst[at] = 0x2e;
    return at + 1;
  }
  let end = e;
  if (src[e - 1] === 0x2e) {
    let backslashes = 0;
    for (let i = e - 2; i >= s && src[i] === 0x5c; i--) backslashes++;
    if ((backslashes & 1) === 0) end = e - 1;
  }
  if (end - s + 1 > labelEnds.length) labelEnds = new Int32Array((end - s + 1) * 2);
  let labels = 0;
  for (let i = s; i < end; i++) {
    const c = src[i]!;
    if (c === 0x5c) i++;
    else if (c === 0x2e) labelEnds[labels++] = i;
  }
  labelEnds[labels++] = end;
  for (let k = labels - 1; k >= 0; k--) {
    const from = k === 0 ? s : labelEnds[k - 1]! + 1;
    const to = labelEnds[k]!;
    for (let j = from; j < to; j++) dst[at++] = src[j]!;
    dst[at++] = 0x2e;
  }
  return at;
}

/**
 * Index of the first dot at or after `from` that ends a label, or -1: the one
 * label walk of presentation names. A backslash takes the next character
 * into the label (`\.` is a dot inside a label, `\\` a backslash); `\DDD`
 * holds no dot.
 */
export function labelEnd(name: string, from = 0): number {
  for (let i = from; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c === 0x5c) i++;
    else if (c === 0x2e) return i;
  }
  return -1;
}

/**
 * True when `rest` (what follows a matched prefix of a presentation name) is
 * exactly one more label with its trailing dot.
 */
export function isOneLabel(rest: string): boolean {
  return rest.length >= 2 && labelEnd(rest) === rest.length - 1;
}

/** True when the final dot of `name` is escaped (`a\.`), i.e. part of a label. */
function endsWithEscapedDot(name: string): boolean {
  let backslashes = 0;
  for (let i = name.length - 2; i >= 0 && name.charCodeAt(i) === 0x5c; i--) backslashes++;
  return (backslashes & 1) === 1;
}
