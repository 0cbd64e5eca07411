// Fuzz target: names and rdata, text <-> wire (src/dns/name.ts,
// src/dns/rdata/, src/dns/message.ts).
//
// Properties:
// - names built label by label (plain characters in either case, `\X`,
//   `\DDD`, UTF-8) parse to exactly the wire they spell, lower-cased, and
//   are refused with a DnsFormatError exactly when a label passes 63 octets
//   or the name 255; wire names of arbitrary bytes print as canonical text
//   that parses back to the same wire;
// - rdata of several types built from its fields parses to exactly the wire
//   the fields make, prints as text that parses back to it, and means the
//   same in the RFC 3597 `\# N HEX` form and inside a DNS message;
// - arbitrary and mutated text and wire (names, rdata of every type the
//   schema knows and some it does not, whole DNS messages) are either read
//   or refused with a DnsFormatError, never another exception; what is read
//   is canonical: printing it and reading it again changes nothing.

import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { parseMessage } from '../../src/dns/message.js';
import { copiedNameEnd, copyWireName, nameToWire, normalizeName, readWireName, reverseName } from '../../src/dns/name.js';
import { rdataFromMessage, rdataFromText, rdataToText } from '../../src/dns/rdata/index.js';
import { SCHEMA, SPECIAL } from '../../src/dns/rdata/schema.js';
import { rrtypeFromText } from '../../src/dns/rrtype.js';
import { dnsMessage } from '../unit/ingest/wire-fixtures.js';
import { checkProperty, FUZZ_TIMEOUT_MS, runsFor } from './fuzz-config.js';
import { mutate, mutationsArb } from './mutate.js';
import { seedArb } from './rdata-seeds.js';

const RUNS = runsFor(2_000);

/** Runs `fn`; a thrown error must be a DnsFormatError (its `code` survives structured cloning, so that is what is checked). */
function readOrRefuse<T>(what: string, fn: () => T): T | undefined {
  try {
    return fn();
  } catch (err) {
    expect((err as { code?: unknown }).code, `${what}: ${String(err)}\n${(err as Error).stack}`).toBe('DNS_FORMAT');
    return undefined;
  }
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex').toUpperCase();
const lower = (b: number) => (b >= 0x41 && b <= 0x5a ? b | 0x20 : b);

// ---------------------------------------------------------------------------
// Names from labels: each character of the text paired with the bytes it spells.

interface Spelled {
  text: string;
  bytes: number[];
}

const SPECIALS = '.\\";()@$ ';
const nameUnit: fc.Arbitrary<Spelled> = fc.oneof(
  { weight: 10, arbitrary: fc.constantFrom(...'abcdexyz0129-_ABCXYZ').map((c) => ({ text: c, bytes: [c.charCodeAt(0)] })) },
  { weight: 2, arbitrary: fc.integer({ min: 0x21, max: 0x7e }).filter((c) => c < 0x30 || c > 0x39)
    .map((c) => ({ text: '\\' + String.fromCharCode(c), bytes: [c] })) },
  { weight: 2, arbitrary: fc.nat(255).map((b) => ({ text: '\\' + String(b).padStart(3, '0'), bytes: [b] })) },
  { weight: 1, arbitrary: fc.constantFrom(...SPECIALS).map((c) => ({ text: '\\' + c, bytes: [c.charCodeAt(0)] })) },
  { weight: 1, arbitrary: fc.constantFrom('\u00e9', '\u20ac', '\u{1F600}').map((c) => ({ text: c, bytes: [...Buffer.from(c, 'utf8')] })) },
);
const labelArb = fc.oneof(
  { weight: 8, arbitrary: fc.array(nameUnit, { minLength: 1, maxLength: 12 }) },
  { weight: 1, arbitrary: fc.array(nameUnit, { minLength: 55, maxLength: 70 }) },
);
const spelledName = fc.tuple(fc.array(labelArb, { minLength: 1, maxLength: 8 }), fc.boolean(), fc.nat(4))
  .map(([labels, dot, longOnes]) => {
    // A few long labels push some names past 255 octets.
    const all = [...labels, ...Array.from({ length: longOnes === 4 ? 4 : 0 }, () => labels[0]!)];
    const text = all.map((l) => l.map((u) => u.text).join('')).join('.') + (dot ? '.' : '');
    return { labels: all.map((l) => l.flatMap((u) => u.bytes)), text };
  });

function wireOf(labels: readonly number[][]): Uint8Array {
  return Uint8Array.from([...labels.flatMap((l) => [l.length, ...l.map(lower)]), 0]);
}

/** Arbitrary wire names: labels of any bytes (within the limits), uncompressed. */
const wireNameArb = fc.array(fc.uint8Array({ minLength: 1, maxLength: 63 }), { maxLength: 6 })
  .filter((ls) => ls.reduce((n, l) => n + l.length + 1, 1) <= 255)
  .map((ls) => Uint8Array.from([...ls.flatMap((l) => [l.length, ...l]), 0]));

// ---------------------------------------------------------------------------
// Rdata from fields: [type, text, expected wire].

const u16 = (v: number) => [v >> 8, v & 0xff];
const u32 = (v: number) => [v >>> 24, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff];
const validName = spelledName.filter((n) => n.labels.every((l) => l.length <= 63) && n.labels.reduce((s, l) => s + l.length + 1, 1) <= 255);
// A first rdata word of exactly `\#` announces the RFC 3597 form (a name "#" is written `#` or `\#.` there).
const nameField = validName.filter((n) => n.text !== '\\#').map((n) => ({ text: n.text, bytes: [...wireOf(n.labels)] }));

/** A character-string: quoted, with plain characters, `\X` and `\DDD`; or unquoted when it has no blanks or specials. */
const cstrUnit: fc.Arbitrary<Spelled> = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).filter((c) => c !== 0x22 && c !== 0x5c)
    .map((c) => ({ text: String.fromCharCode(c), bytes: [c] })) },
  { weight: 1, arbitrary: fc.constantFrom('"', '\\', ';', '(').map((c) => ({ text: '\\' + c, bytes: [c.charCodeAt(0)] })) },
  { weight: 2, arbitrary: fc.nat(255).map((b) => ({ text: '\\' + String(b).padStart(3, '0'), bytes: [b] })) },
);
const cstrField = fc.array(cstrUnit, { maxLength: 40 }).map((us) => ({
  text: '"' + us.map((u) => u.text).join('') + '"',
  bytes: [us.reduce((n, u) => n + u.bytes.length, 0), ...us.flatMap((u) => u.bytes)],
}));

interface Field {
  text: string;
  bytes: number[];
}
const num16 = fc.nat(0xffff).map((v) => ({ text: String(v), bytes: u16(v) }));
const num32 = fc.nat({ max: 0xffffffff }).map((v) => ({ text: String(v), bytes: u32(v) }));
const num8 = fc.nat(255).map((v) => ({ text: String(v), bytes: [v] }));
const hexField = fc.uint8Array({ minLength: 1, maxLength: 40 }).map((b) => ({ text: hex(b), bytes: [...b] }));

function rdata(type: string, ...fields: fc.Arbitrary<Field>[]): fc.Arbitrary<{ type: string; text: string; wire: Uint8Array }> {
  return fc.tuple(...fields).map((fs) => ({
    type, text: fs.map((f) => f.text).join(' '), wire: Uint8Array.from(fs.flatMap((f) => f.bytes)),
  }));
}

const fieldRdata = fc.oneof(
  rdata('A', fc.uint8Array({ minLength: 4, maxLength: 4 }).map((b) => ({ text: [...b].join('.'), bytes: [...b] }))),
  rdata('AAAA', fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => ({
    text: Array.from({ length: 8 }, (_, i) => ((b[2 * i]! << 8) | b[2 * i + 1]!).toString(16)).join(':'), bytes: [...b],
  }))),
  rdata('NS', nameField),
  rdata('CNAME', nameField),
  rdata('PTR', nameField),
  rdata('MX', num16, nameField),
  rdata('SRV', num16, num16, num16, nameField),
  rdata('SOA', nameField, nameField, num32, num32, num32, num32, num32),
  rdata('TXT', ...Array.from({ length: 3 }, () => cstrField)),
  rdata('HINFO', cstrField, cstrField),
  rdata('DS', num16, num8, num8, hexField),
  rdata('CAA', num8, fc.string({ unit: fc.constantFrom(...'abcxyz0129'), minLength: 1, maxLength: 15 })
    .map((t) => ({ text: t, bytes: [t.length, ...Buffer.from(t)] })),
  cstrField.map((f) => ({ text: f.text, bytes: f.bytes.slice(1) }))),
);

/** Every type the schema knows, plus some it does not (RFC 3597 only) and meta types. */
const ALL_TYPES = [...SCHEMA.keys(), ...SPECIAL.keys(), 0, 10, 41, 250, 255, 999, 65280, 65535];
const typeArb = fc.constantFrom(...ALL_TYPES);

/** Text soup for rdata: the tokenizer's specials, digits, hex, base64 and names. */
const rdataSoup = fc.string({ unit: fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...'abcxyz0129AF.-:/=+, ') },
  { weight: 3, arbitrary: fc.constantFrom('"', '\\', '(', ')', ';', '\n', '\t', '\\#', '\\0', '\\999', 'm', 'N', 'S', 'E', 'W') },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
), maxLength: 40 });

/** Character-level mutations of a text: drop, duplicate or replace one character, or cut the text. */
const textMutation = fc.tuple(fc.nat(), fc.constantFrom('drop', 'dup', 'replace', 'cut'), fc.constantFrom(...' "\\();.09aAz-:#\n'));
function mutateText(text: string, ms: readonly [number, string, string][]): string {
  let t = text;
  for (const [at, op, ch] of ms) {
    const i = t.length === 0 ? 0 : at % t.length;
    if (op === 'drop') t = t.slice(0, i) + t.slice(i + 1);
    else if (op === 'dup') t = t.slice(0, i + 1) + t.slice(i);
    else if (op === 'replace') t = t.slice(0, i) + ch + t.slice(i + 1);
    else t = t.slice(0, i);
  }
  return t;
}

/** rdataToText of wire that rdataFromText made must be canonical: it reads back to the same wire and prints the same. */
function checkCanonical(type: number, wire: Uint8Array): void {
  const text = rdataToText(type, wire);
  expect(text).toMatch(/^[\x20-\x7e]*$/);
  const again = rdataFromText(type, text);
  expect({ type, text, wire: hex(again) }).toEqual({ type, text, wire: hex(wire) });
  expect(rdataToText(type, again)).toBe(text);
}

/** A DNS message holding `wire` as the rdata of one answer, and where that rdata starts. */
function inMessage(type: number, wire: Uint8Array): { msg: Uint8Array; at: number } {
  const msg = dnsMessage({ qname: 'q.example.', answer: [{ name: 'q.example.', type, rdata: wire }] });
  return { msg, at: msg.length - wire.length };
}

describe('fuzz: names and rdata', () => {
  test('names: presentation text spells exactly its wire, and the limits are exactly 63 and 255 octets', () => {
    checkProperty('dns name text', RUNS, fc.property(spelledName, (n) => {
      const fits = n.labels.every((l) => l.length <= 63) && n.labels.reduce((s, l) => s + l.length + 1, 1) <= 255;
      const wire = readOrRefuse(n.text, () => nameToWire(n.text));
      expect({ text: n.text, fits: wire !== undefined }).toEqual({ text: n.text, fits });
      if (wire === undefined) {
        expect(readOrRefuse(n.text, () => normalizeName(n.text))).toBeUndefined();
        return;
      }
      expect(hex(wire)).toBe(hex(wireOf(n.labels)));
      const canonical = normalizeName(n.text);
      expect(canonical).toBe(readWireName(wire, 0, false).name);
      expect(normalizeName(canonical)).toBe(canonical);
    }));
  }, FUZZ_TIMEOUT_MS);

  test('names: any wire name prints as canonical text that spells it again', () => {
    checkProperty('dns name wire', RUNS, fc.property(wireNameArb, (wire) => {
      const { name, end } = readWireName(wire, 0, false);
      expect(end).toBe(wire.length);
      expect(name).toMatch(/^[\x21-\x7e]+$/);
      expect(hex(nameToWire(name))).toBe(hex(wire.map(lower)));
      expect(normalizeName(name)).toBe(name);
      expect(reverseName(reverseName(name))).toBe(name);
    }));
  }, FUZZ_TIMEOUT_MS);

  test('names: arbitrary text and bytes are read or refused with a DnsFormatError', () => {
    const text = fc.string({ unit: fc.oneof(fc.constantFrom(...'a.\\0129@$"; '), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })),
      maxLength: 300 });
    const bytes = fc.oneof(fc.uint8Array({ maxLength: 64 }), fc.tuple(wireNameArb, mutationsArb()).map(([w, ms]) => mutate(w, ms)));
    checkProperty('dns name arbitrary', RUNS, fc.property(text, fc.option(text, { nil: undefined }), bytes, fc.nat(70),
      (t, origin, b, at) => {
        const n = readOrRefuse(t, () => normalizeName(t, origin));
        if (n !== undefined) expect(normalizeName(n)).toBe(n);
        const offset = b.length === 0 ? 0 : at % b.length;
        for (const pointers of [false, true]) {
          const r = readOrRefuse(hex(b), () => readWireName(b, offset, pointers));
          if (r !== undefined) expect(normalizeName(r.name)).toBe(r.name);
        }
        const out = new Uint8Array(300);
        const len = readOrRefuse(hex(b), () => copyWireName(b, offset, out, 0));
        if (len !== undefined) {
          const r = readWireName(b, offset, true);
          expect(copiedNameEnd).toBe(r.end);
          expect(hex(out.subarray(0, len))).toBe(hex(nameToWire(r.name)));
        }
      }));
  }, FUZZ_TIMEOUT_MS);

  test('rdata built from fields: exact wire, and text, \\# form and message copy all agree', () => {
    checkProperty('dns rdata fields', RUNS, fc.property(fieldRdata, (r) => {
      const type = rrtypeFromText(r.type)!;
      const wire = rdataFromText(type, r.text);
      expect({ text: r.text, wire: hex(wire) }).toEqual({ text: r.text, wire: hex(r.wire) });
      checkCanonical(type, wire);
      expect(hex(rdataFromText(type, `\\# ${wire.length} ${hex(wire)}`))).toBe(hex(wire));
      const { msg, at } = inMessage(type, wire);
      expect(hex(rdataFromMessage(type, msg, at, wire.length))).toBe(hex(wire));
    }));
  }, FUZZ_TIMEOUT_MS);

  test('rdata wire of every type, arbitrary or mutated, prints canonical text or is refused', () => {
    const wires = fc.oneof(
      fc.tuple(typeArb, fc.uint8Array({ maxLength: 48 })).map(([type, wire]) => ({ type, wire })),
      fc.tuple(seedArb, mutationsArb()).map(([s, ms]) => ({ type: s.type, wire: mutate(s.wire, ms) })),
    );
    checkProperty('dns rdata wire', RUNS, fc.property(wires, ({ type, wire }) => {
      const text = readOrRefuse(`type ${type} ${hex(wire)}`, () => rdataToText(type, wire));
      if (text === undefined) return;
      expect(text).toMatch(/^[\x20-\x7e]*$/);
      const back = readOrRefuse(`type ${type} text ${text}`, () => rdataFromText(type, text));
      expect(back, `type ${type} ${hex(wire)} printed as ${JSON.stringify(text)}, which does not read back`).toBeDefined();
      expect(rdataToText(type, back!)).toBe(text);
      const { msg, at } = inMessage(type, wire);
      readOrRefuse(`type ${type} in a message`, () => rdataFromMessage(type, msg, at, wire.length));
    }));
  }, FUZZ_TIMEOUT_MS);

  test('rdata text of every type, arbitrary or mutated, is read canonically or refused', () => {
    const texts = fc.oneof(
      fc.tuple(typeArb, rdataSoup).map(([type, text]) => ({ type, text })),
      fc.tuple(seedArb, fc.array(textMutation, { minLength: 1, maxLength: 3 }))
        .map(([s, ms]) => ({ type: s.type, text: mutateText(s.text, ms) })),
    );
    checkProperty('dns rdata text', RUNS, fc.property(texts, fc.option(fc.constantFrom('example.', 'Ex.Ample.', '.'), { nil: undefined }),
      ({ type, text }, origin) => {
        const wire = readOrRefuse(`type ${type} ${JSON.stringify(text)}`, () => rdataFromText(type, text, origin));
        if (wire !== undefined) checkCanonical(type, wire);
      }));
  }, FUZZ_TIMEOUT_MS);

  test('DNS messages, arbitrary or mutated, parse or are refused with a DnsFormatError', () => {
    const valid = fc.tuple(seedArb, seedArb, validName).map(([a, b, n]) => {
      const name = normalizeName(n.text);
      return dnsMessage({ qname: name, answer: [{ name, type: a.type, rdata: a.wire }],
        authority: [{ name, type: b.type, rdata: b.wire }] });
    });
    const messages = fc.oneof(fc.uint8Array({ maxLength: 80 }), fc.tuple(valid, mutationsArb(6)).map(([m, ms]) => mutate(m, ms)));
    checkProperty('dns message', RUNS, fc.property(messages, (m) => {
      const msg = readOrRefuse(hex(m), () => parseMessage(m));
      if (msg === undefined) return;
      for (const r of [...msg.answers, ...msg.authority, ...msg.additional]) {
        expect(normalizeName(r.name)).toBe(r.name);
        const text = readOrRefuse(`type ${r.rrtype} ${hex(r.rdata)}`, () => rdataToText(r.rrtype, r.rdata));
        if (text !== undefined) expect(text).toMatch(/^[\x20-\x7e]*$/);
      }
    }));
  }, FUZZ_TIMEOUT_MS);
});
