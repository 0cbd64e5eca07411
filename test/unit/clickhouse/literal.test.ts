// The one escaping function for values inlined into ClickHouse SQL
// (src/clickhouse/literal.ts): what it writes, what it refuses. That
// ClickHouse reads each literal back as the exact value is
// test/integration/clickhouse-literal.test.ts's job, against a real server.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sqlIdentifier, sqlString, sqlUInt, sqlUIntList } from '../../../src/clickhouse/literal.js';
import { LIMITS } from '../../../src/config/limits.js';

/** Reads a literal back as bytes by the rules it was written by: printable ASCII as itself, \xHH as the byte. */
function decode(literal: string): Buffer {
  expect(literal.startsWith("'") && literal.endsWith("'")).toBe(true);
  const body = literal.slice(1, -1);
  const out: number[] = [];
  for (let i = 0; i < body.length; i++) {
    if (body[i] === '\\') {
      expect(body[i + 1]).toBe('x');
      out.push(parseInt(body.slice(i + 2, i + 4), 16));
      i += 3;
    } else {
      out.push(body.charCodeAt(i));
    }
  }
  return Buffer.from(out);
}

describe('sqlString', () => {
  it('writes printable ASCII as itself and quotes, backslashes, NUL and control characters as \\xHH', () => {
    expect(sqlString('www.example.com.')).toBe("'www.example.com.'");
    expect(sqlString("it's")).toBe("'it\\x27s'");
    expect(sqlString('a\\b')).toBe("'a\\x5Cb'");
    expect(sqlString('\u0000\n\t\r\u007f')).toBe("'\\x00\\x0A\\x09\\x0D\\x7F'");
    expect(sqlString('é')).toBe("'\\xC3\\xA9'");
    expect(sqlString('')).toBe("''");
  });

  it('takes bytes as they are, invalid UTF-8 included', () => {
    expect(sqlString(Uint8Array.of(0xff, 0x41, 0xc3))).toBe("'\\xFFA\\xC3'");
  });

  it('refuses a string with a lone surrogate rather than change it', () => {
    expect(() => sqlString('a\ud800b')).toThrow(/lone surrogate/);
    expect(() => sqlString('\udc00')).toThrow(/lone surrogate/);
    expect(sqlString('\ud83d\ude00')).toBe("'\\xF0\\x9F\\x98\\x80'");
  });

  it('refuses a value over LIMITS.clickhouseLiteralBytesMax bytes, and takes one at the bound', () => {
    const max = LIMITS.clickhouseLiteralBytesMax;
    expect(sqlString('a'.repeat(max))).toHaveLength(max + 2);
    expect(() => sqlString('a'.repeat(max + 1))).toThrow(/over the 65536-byte bound/);
    // The bound is on UTF-8 bytes, not characters.
    expect(() => sqlString('é'.repeat(max / 2 + 1))).toThrow(/bound/);
  });

  it('property: output is printable ASCII without a bare quote or backslash, and decodes to the UTF-8 of the input', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (s) => {
      const lit = sqlString(s);
      expect(/^'[\x20-\x7e]*'$/.test(lit)).toBe(true);
      expect(lit.slice(1, -1).replace(/\\x[0-9A-F]{2}/g, '')).not.toMatch(/[\\']/);
      expect(decode(lit).equals(Buffer.from(s, 'utf8'))).toBe(true);
    }), { numRuns: 100 });
  });

  it('property: bytes decode to themselves', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), (b) => {
      expect(decode(sqlString(b)).equals(Buffer.from(b))).toBe(true);
    }), { numRuns: 100 });
  });
});

describe('sqlUInt, sqlUIntList, sqlIdentifier', () => {
  it('writes safe unsigned integers and refuses anything else', () => {
    expect(sqlUInt(0)).toBe('0');
    expect(sqlUInt(4294967295)).toBe('4294967295');
    for (const bad of [-1, 1.5, NaN, Infinity, 2 ** 53]) expect(() => sqlUInt(bad)).toThrow(/not an unsigned integer/);
    expect(sqlUIntList([1, 28])).toBe('(1,28)');
    expect(() => sqlUIntList([])).toThrow(/empty list/);
  });

  it('back-quotes plain identifiers and refuses the rest', () => {
    expect(sqlIdentifier('rrscan')).toBe('`rrscan`');
    expect(sqlIdentifier('_a1')).toBe('`_a1`');
    for (const bad of ['', '1a', 'a-b', 'a`b', 'a b', 'x'.repeat(65), 'é']) expect(() => sqlIdentifier(bad)).toThrow(/plain identifier/);
  });
});
