// SVCB and HTTPS service parameters (RFC 9460): both directions.
//
// Contract: on output the parameters come in wire order (strictly
// increasing keys, checked), named keys by name and others as keyNNNNN;
// alpn and unknown values quoted, lists comma-separated. On input any order
// and both value spellings (key=value, key="value") are accepted; the
// parameters are sorted, and a key given twice, an unknown key name or a
// bad value throws DnsFormatError.

import { DnsFormatError } from '../../errors/catalogue.js';
import { ipv4FromText, ipv4ToText, ipv6FromText, ipv6ToText } from '../ip.js';
import { printable } from '../name.js';
import { base64, base64DataChars } from './encodings.js';
import { num } from './numbers.js';
import { putCharString, quoted } from './strings.js';
import type { Tokens } from './tokens.js';
import { malformed, need, RDATA_OCTETS_MAX, u16 } from './wire.js';
import { out, put16, putBytes, takeSince } from './writer.js';

// Parameter keys with names (RFC 9460 section 14.3.2), by key number.
const SVC_KEYS = ['mandatory', 'alpn', 'no-default-alpn', 'port', 'ipv4hint', 'ech', 'ipv6hint'];

function svcKeyName(key: number): string {
  return key < SVC_KEYS.length ? SVC_KEYS[key]! : `key${key}`;
}

function svcKeyFromName(name: string): number {
  const k = SVC_KEYS.indexOf(name.toLowerCase());
  if (k >= 0) return k;
  if (name.toLowerCase() === 'dohpath') return 7;
  const m = /^key(\d{1,5})$/i.exec(name);
  if (!m || Number(m[1]) > 65534) throw new DnsFormatError(`unknown SVCB key "${printable(name)}"`);
  return Number(m[1]);
}

// ---- Wire -> text

/** alpn: a comma-separated value list (RFC 9460 appendix A.1), `,` and `\` escaped inside an id. */
function alpnText(b: Uint8Array, p: number, end: number): string {
  if (p === end) throw malformed('svcb alpn is empty');
  const item: number[] = [];
  for (let i = p; i < end;) {
    const n = b[i]!;
    if (n === 0 || i + 1 + n > end) throw malformed('svcb alpn id');
    if (item.length) item.push(0x2c);
    for (let j = i + 1; j <= i + n; j++) {
      const c = b[j]!;
      if (c === 0x2c || c === 0x5c) item.push(0x5c);
      item.push(c);
    }
    i += 1 + n;
  }
  return `alpn=${quoted(Uint8Array.from(item), 0, item.length)}`;
}

/** ipv4hint / ipv6hint: one or more addresses of `size` octets, comma-separated. */
function hintsText(name: string, size: number, toText: (b: Uint8Array, p: number) => string, b: Uint8Array, p: number,
  end: number): string {
  const len = end - p;
  if (len === 0 || len % size !== 0) throw malformed(`svcb ${name} length`);
  const a: string[] = [];
  for (let i = p; i < end; i += size) a.push(toText(b, i));
  return `${name}=${a.join(',')}`;
}

function svcValueText(key: number, b: Uint8Array, p: number, len: number): string {
  const end = p + len;
  switch (key) {
    case 0: { // mandatory
      if (len === 0 || len % 2 !== 0) throw malformed('svcb mandatory length');
      const keys: string[] = [];
      for (let i = p; i < end; i += 2) keys.push(svcKeyName(u16(b, i)));
      return `mandatory=${keys.join(',')}`;
    }
    case 1:
      return alpnText(b, p, end);
    case 2:
      if (len !== 0) throw malformed('svcb no-default-alpn has a value');
      return 'no-default-alpn';
    case 3:
      if (len !== 2) throw malformed('svcb port length');
      return `port=${u16(b, p)}`;
    case 4:
      return hintsText('ipv4hint', 4, ipv4ToText, b, p, end);
    case 5:
      return len === 0 ? 'ech=""' : `ech=${base64(b, p, end)}`;
    case 6:
      return hintsText('ipv6hint', 16, ipv6ToText, b, p, end);
    default:
      return len === 0 ? `key${key}` : `key${key}=${quoted(b, p, end)}`;
  }
}

/** The parameters from b[p] to the end of the rdata. */
export function svcParamsText(b: Uint8Array, p: number): string {
  let s = '';
  let last = -1;
  while (p < b.length) {
    need(b, p, 4, 'svcb parameter');
    const key = u16(b, p), len = u16(b, p + 2);
    if (key <= last) throw malformed('svcb keys not in strictly increasing order');
    if (key === 65535) throw malformed('svcb key 65535 is reserved');
    need(b, p + 4, len, 'svcb parameter value');
    s += (s.length ? ' ' : '') + svcValueText(key, b, p + 4, len);
    last = key;
    p += 4 + len;
  }
  return s;
}

// ---- Text -> wire

/** Decodes a value's escapes into bytes (no 255-octet bound: values are 16-bit sized). */
function svcValueBytes(raw: string): Uint8Array {
  const start = out.pos;
  putCharString(raw, RDATA_OCTETS_MAX);
  return takeSince(start);
}

function latin1(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.length).toString('latin1');
}

function valueList(text: string, what: string): string[] {
  if (text.length === 0) throw new DnsFormatError(`SVCB ${what} needs a value`);
  return text.split(',');
}

function mandatoryWire(text: string): Uint8Array {
  const keys = valueList(text, 'mandatory').map(svcKeyFromName);
  const wire = new Uint8Array(keys.length * 2);
  keys.forEach((k, i) => { wire[2 * i] = k >> 8; wire[2 * i + 1] = k & 0xff; });
  return wire;
}

/** alpn ids, each with its length octet; `\,` and `\\` escape inside an id. */
function alpnWire(v: Uint8Array | undefined): Uint8Array {
  if (!v || v.length === 0) throw new DnsFormatError('SVCB alpn needs a value');
  const wire: number[] = [];
  let lenAt = wire.length;
  wire.push(0);
  for (let i = 0; i < v.length; i++) {
    let c = v[i]!;
    if (c === 0x5c && i + 1 < v.length) c = v[++i]!;
    else if (c === 0x2c) {
      if (wire.length - lenAt - 1 === 0) throw new DnsFormatError('empty SVCB alpn id');
      lenAt = wire.length;
      wire.push(0);
      continue;
    }
    wire.push(c);
    if (wire.length - lenAt - 1 > 255) throw new DnsFormatError('SVCB alpn id longer than 255 octets');
    wire[lenAt] = wire.length - lenAt - 1;
  }
  if (wire.length - lenAt - 1 === 0) throw new DnsFormatError('empty SVCB alpn id');
  return Uint8Array.from(wire);
}

function hintsWire(text: string, name: string, size: number, fromText: (s: string) => Uint8Array | undefined): Uint8Array {
  const addrs = valueList(text, name).map(fromText);
  const wire = new Uint8Array(addrs.length * size);
  addrs.forEach((a, i) => {
    if (!a) throw new DnsFormatError(`bad address in SVCB ${name} "${printable(text)}"`);
    wire.set(a, i * size);
  });
  return wire;
}

function svcValueWire(key: number, v: Uint8Array | undefined): Uint8Array {
  const text = v === undefined ? '' : latin1(v);
  switch (key) {
    case 0:
      return mandatoryWire(text);
    case 1:
      return alpnWire(v);
    case 2:
      if (text.length) throw new DnsFormatError('SVCB no-default-alpn takes no value');
      return new Uint8Array(0);
    case 3: {
      const port = num(text, 0xffff, 'SVCB port');
      return Uint8Array.of(port >> 8, port & 0xff);
    }
    case 4:
      return hintsWire(text, 'ipv4hint', 4, ipv4FromText);
    case 5:
      if (base64DataChars(text) < 0) throw new DnsFormatError('bad base64 in SVCB ech');
      return Buffer.from(text, 'base64');
    case 6:
      return hintsWire(text, 'ipv6hint', 16, ipv6FromText);
    default:
      return v ?? new Uint8Array(0);
  }
}

/** One `key[=value]` word (with a quoted value as the next word) from toks[i]; returns the index after it. */
function readParam(toks: Tokens, i: number, params: { key: number; value: Uint8Array }[]): number {
  const t = toks.text[i]!;
  if (toks.quoted[i]) throw new DnsFormatError(`unexpected quoted string "${printable(t)}" in SVCB parameters`);
  const eq = t.indexOf('=');
  const keyName = eq < 0 ? t : t.slice(0, eq);
  let raw: string | undefined;
  if (eq >= 0) {
    raw = t.slice(eq + 1);
    // key="value": the tokenizer gives the quoted value as the next token.
    if (raw === '' && i + 1 < toks.length && toks.quoted[i + 1]) raw = toks.text[++i]!;
  }
  const key = svcKeyFromName(keyName);
  params.push({ key, value: svcValueWire(key, raw === undefined ? undefined : svcValueBytes(raw)) });
  return i + 1;
}

/** The parameters from toks[i] to the end, in key order. */
export function putSvcParams(toks: Tokens, i: number): void {
  const params: { key: number; value: Uint8Array }[] = [];
  while (i < toks.length) i = readParam(toks, i, params);
  params.sort((a, b) => a.key - b.key);
  for (let j = 0; j < params.length; j++) {
    const { key, value } = params[j]!;
    if (j > 0 && params[j - 1]!.key === key) throw new DnsFormatError(`SVCB key ${svcKeyName(key)} given twice`);
    put16(key);
    put16(value.length);
    putBytes(value);
  }
}
