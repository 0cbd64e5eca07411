// The two ClickHouse wire formats rrscan writes and reads by hand:
// RowBinary for INSERTs (src/clickhouse/row-binary.ts) and TabSeparated
// fields for SELECTs (src/clickhouse/tab-separated.ts). That ClickHouse reads
// and writes them so is the differential test's job (ingest and every
// flexible search go through them).

import { describe, expect, it } from 'vitest';
import { RowBinaryWriter } from '../../../src/clickhouse/row-binary.js';
import { tsvField, tsvNumbers, tsvPlainStrings } from '../../../src/clickhouse/tab-separated.js';

describe('RowBinaryWriter', () => {
  it('writes integers little-endian and strings and arrays with LEB128 lengths', () => {
    const w = new RowBinaryWriter();
    w.uint8(7).uint16(0x0102).uint32(0x01020304).uint64(2 ** 40 + 5).string('ab').string(Uint8Array.of(0, 255))
      .strings(['x', '']).row();
    expect(w.rows).toBe(1);
    expect(w.take().toString('hex')).toBe(
      '07' + '0201' + '04030201' + '0500000000010000' + '026162' + '0200ff' + '02' + '0178' + '00');
    expect(w.rows).toBe(0);
    expect(w.bytes).toBe(0);
  });

  it('writes multi-byte lengths and UTF-8 byte counts, growing past its first buffer', () => {
    const w = new RowBinaryWriter();
    w.string('é'.repeat(150));
    const b = w.take();
    expect(b.subarray(0, 2).toString('hex')).toBe('ac02'); // 300 bytes
    expect(b.length).toBe(302);
    const big = new RowBinaryWriter().string('a'.repeat(200_000)).take();
    expect(big.subarray(0, 3).toString('hex')).toBe('c09a0c');
    expect(big.length).toBe(200_003);
  });
});

describe('TabSeparated fields', () => {
  it('unescapes what ClickHouse escapes and leaves the rest', () => {
    expect(tsvField('plain.name.')).toBe('plain.name.');
    expect(tsvField('a\\tb\\nc\\\\d\\\'e\\0f\\rg\\bh\\fi')).toBe("a\tb\nc\\d'e\0f\rg\bh\fi");
    expect(tsvField('"v=spf1 \\\\"')).toBe('"v=spf1 \\"');
  });

  it('reads arrays of numbers and of plain strings', () => {
    expect(tsvNumbers('[1,28,65535]')).toEqual([1, 28, 65535]);
    expect(tsvNumbers('[]')).toEqual([]);
    expect(tsvPlainStrings("['0A00','FF']")).toEqual(['0A00', 'FF']);
    expect(tsvPlainStrings("['']")).toEqual(['']);
    expect(tsvPlainStrings('[]')).toEqual([]);
  });
});
