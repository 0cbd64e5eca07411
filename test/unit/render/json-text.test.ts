// jsonString (render/json-text.ts) skips JSON.stringify for the common case:
// it must give exactly JSON.stringify's text for every string of printable
// ASCII, the only strings results carry.

import { describe, expect, it } from 'vitest';
import { jsonString, writeJsonStringBody } from '../../../src/render/json-text.js';

describe('jsonString', () => {
  it('quotes plain presentation text as it is', () => {
    expect(jsonString('www.example.com.')).toBe('"www.example.com."');
    expect(jsonString('')).toBe('""');
  });

  it('equals JSON.stringify on every printable ASCII character, alone and in company', () => {
    for (let c = 0x20; c <= 0x7e; c++) {
      const ch = String.fromCharCode(c);
      for (const s of [ch, `a${ch}b`, `${ch}${ch}`, `\\${c.toString().padStart(3, '0')}${ch}`]) {
        expect(jsonString(s)).toBe(JSON.stringify(s));
      }
    }
  });

  it('escapes quotes and backslashes, as in TXT rdata and \\DDD escapes', () => {
    expect(jsonString('"v=spf1 -all"')).toBe('"\\"v=spf1 -all\\""');
    expect(jsonString('a\\032b.example.')).toBe('"a\\\\032b.example."');
    expect(JSON.parse(jsonString('"x\\"y"'))).toBe('"x\\"y"');
  });
});

describe('writeJsonStringBody', () => {
  const viaBytes = (s: string): string => {
    const src = Buffer.from(`xy${s}z`, 'latin1');
    const out = new Uint8Array(4 + 2 * s.length).fill(0x21);
    const end = writeJsonStringBody(src, 2, 2 + s.length, out, 2);
    return `"${Buffer.from(out.subarray(2, end)).toString('latin1')}"`;
  };

  it('writes jsonString\'s text for every printable ASCII character, alone and in company', () => {
    for (let c = 0x20; c <= 0x7e; c++) {
      const ch = String.fromCharCode(c);
      for (const s of [ch, `a${ch}b`, `${ch}${ch}`, `\\${c.toString().padStart(3, '0')}${ch}`]) expect(viaBytes(s)).toBe(jsonString(s));
    }
    expect(viaBytes('')).toBe('""');
  });
});
