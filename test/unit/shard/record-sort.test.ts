// The native record sort must give exactly JavaScript's string order on the
// printable ASCII the writer feeds it (the readers binary-search with `<`),
// put a prefix before the longer record, and break ties by tiebreak, then
// position. The property tests compare it with a plain comparator on records
// built to hit native/sort.cc's edges: shared prefixes past one and two
// 7-byte chunks, records that end inside a chunk against records that go on
// with 0x00 bytes, empty and equal records, and sizes on both sides of its
// thresholds (std::sort below 32 items, LSD radix from 4,096, and from
// 65,536 with three varying key bytes).

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sortRecords } from '../../../src/shard/record-sort.js';
import { makeBlob } from '../../../src/shard/shard-writer.js';
import { Prng } from '../../../src/demo/prng.js';

function order(records: string[], tiebreak?: number[]): number[] {
  const blob = makeBlob(records);
  return [...sortRecords(blob.bytes, blob.offsets, tiebreak ? Uint32Array.from(tiebreak) : undefined)];
}

describe('sortRecords', () => {
  it('orders prefixes first and compares past the first eight bytes', () => {
    const r = ['example.com.', 'example.co', 'example.', 'example.com.a', '', 'examplf', 'example.com.', 'a'];
    expect(order(r)).toEqual([4, 7, 2, 1, 0, 6, 3, 5]);
  });

  it('breaks ties by tiebreak, then by position', () => {
    expect(order(['b', 'a', 'b', 'a', 'b'], [2, 9, 1, 3, 1])).toEqual([3, 1, 2, 4, 0]);
  });

  it('agrees with Array.prototype.sort on 20,000 random printable records', () => {
    const rng = new Prng(7);
    const alphabet = ' !-./09:AZ[_az{~';
    const records = Array.from({ length: 20_000 }, () => {
      let s = '';
      const len = rng.below(14);
      for (let i = 0; i < len; i++) s += alphabet[rng.below(alphabet.length)];
      return s;
    });
    const expected = records.map((s, i) => [s, i] as const)
      .sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] - y[1])).map((x) => x[1]);
    expect(order(records)).toEqual(expected);
  });

  it('breaks ties by tiebreak, then position, on the radix path too (5,000 records, many equal)', () => {
    const rng = new Prng(9);
    const records = Array.from({ length: 5_000 }, () => `n${rng.below(40)}.example.`);
    const tiebreak = records.map(() => rng.below(3));
    const expected = records.map((s, i) => [s, tiebreak[i]!, i] as const)
      .sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] - y[1] || x[2] - y[2])).map((x) => x[2]);
    expect(order(records, tiebreak)).toEqual(expected);
  });

  it('sorts raw bytes, zeros included, and refuses offsets outside the bytes', () => {
    const bytes = Uint8Array.of(1, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    expect([...sortRecords(bytes, Uint32Array.of(0, 2, 4, 5, 15))]).toEqual([2, 0, 1, 3]);
    expect(() => sortRecords(bytes, Uint32Array.of(0, 16))).toThrow(/inside bytes/);
    expect(() => sortRecords(bytes, Uint32Array.of(3, 2))).toThrow(/ascend/);
  });

  it('puts a record before the same bytes followed by 0x00 bytes, inside and past the first chunk', () => {
    const a9 = Array.from({ length: 9 }, () => 0x61);
    const records = [[0x61, 0x00], [0x61], [0x61, 0x00, 0x00], [], [...a9, 0x00], a9, [...a9, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]];
    expect(nativeOrder(records.map((r) => Uint8Array.from(r)))).toEqual([3, 1, 0, 2, 5, 4, 6]);
  });

  describe('agrees with a plain comparator (byte order, prefix first, tiebreak, index)', () => {
    // Small alphabets (0x00 included) and a few stems make long shared
    // prefixes, prefixes of one another and equal records common.
    const alphabet = [0x00, 0x01, 0x2e, 0x61, 0x62, 0xff];
    const stems = [
      [], [0x61], Array.from({ length: 7 }, () => 0x61), Array.from({ length: 9 }, (_, i) => 0x61 + (i & 1)),
      Array.from({ length: 14 }, () => 0x00), Array.from({ length: 17 }, (_, i) => (i * 7) & 0xff), Array.from({ length: 40 }, () => 0x2e),
    ];
    const record = fc.tuple(fc.constantFrom(...stems), fc.nat(40), fc.array(fc.constantFrom(...alphabet), { maxLength: 20 }))
      .map(([stem, cut, tail]) => Uint8Array.from([...stem.slice(0, cut), ...tail]));
    const tiebreaks = fc.option(fc.oneof(fc.nat(3), fc.constantFrom(0, 255, 256, 65_535, 65_536, 4_294_967_295)), { nil: undefined });

    it('on arbitrary small sets, with and without tiebreaks', () => {
      fc.assert(fc.property(fc.array(fc.tuple(record, tiebreaks), { maxLength: 300 }), fc.boolean(), (rows, useTiebreak) => {
        const records = rows.map(([r]) => r);
        const tiebreak = useTiebreak ? rows.map(([, t]) => t ?? 0) : undefined;
        expect(nativeOrder(records, tiebreak)).toEqual(referenceOrder(records, tiebreak));
      }), { numRuns: 300 });
    });

    it('on larger sets of every shape, n from 0 to 20,000', () => {
      const shape = fc.record({
        n: fc.oneof(fc.constantFrom(0, 1, 2, 31, 32, 33, 255, 256, 4095, 4096, 4097), fc.integer({ min: 0, max: 20_000 })),
        seed: fc.nat(),
        prefix: fc.constantFrom(0, 3, 7, 8, 13, 14, 15, 16, 30),
        minLength: fc.nat(3),
        spread: fc.constantFrom(0, 1, 2, 3, 8),
        values: fc.constantFrom(1, 2, 3, 256),
        tiebreak: fc.constantFrom('none', 'few', 'wide'),
      });
      fc.assert(fc.property(shape, (p) => {
        const { records, tiebreak } = generated(p);
        expect(nativeOrder(records, tiebreak)).toEqual(referenceOrder(records, tiebreak));
      }), { numRuns: 60 });
    });

    it('on 70,000 fixed-size keys varying in three bytes (the LSD path), with tiebreaks', () => {
      const { records, tiebreak } = generated({ n: 70_000, seed: 3, prefix: 5, minLength: 3, spread: 0, values: 256, tiebreak: 'few' });
      expect(nativeOrder(records, tiebreak)).toEqual(referenceOrder(records, tiebreak));
    });
  });
});

interface Shape { n: number; seed: number; prefix: number; minLength: number; spread: number; values: number; tiebreak: string }

/**
 * n records: a shared prefix (bytes 0x00 and 0x61 of a fixed pattern), then
 * minLength .. minLength + spread bytes drawn from `values` byte values
 * (0x00 first); equal records are frequent when values and lengths are few.
 */
function generated(p: Shape): { records: Uint8Array[]; tiebreak?: number[] } {
  const rng = new Prng(p.seed);
  const prefix = Array.from({ length: p.prefix }, (_, i) => (i % 3 === 0 ? 0x00 : 0x61));
  const records = Array.from({ length: p.n }, () => {
    const len = p.minLength + rng.below(p.spread + 1);
    return Uint8Array.from([...prefix, ...Array.from({ length: len }, () => rng.below(p.values))]);
  });
  if (p.tiebreak === 'none') return { records };
  const tiebreak = records.map(() => (p.tiebreak === 'few' ? rng.below(3) : rng.u32()));
  return { records, tiebreak };
}

/** Records laid out back to back inside a larger buffer (so the native side must keep to the view). */
function nativeOrder(records: Uint8Array[], tiebreak?: number[]): number[] {
  const total = records.reduce((sum, r) => sum + r.length, 0);
  const buffer = new Uint8Array(total + 16).fill(0x7a);
  const bytes = buffer.subarray(5, 5 + total);
  const offsets = new Uint32Array(records.length + 1);
  let at = 0;
  records.forEach((r, i) => {
    offsets[i] = at;
    bytes.set(r, at);
    at += r.length;
  });
  offsets[records.length] = at;
  return [...sortRecords(bytes, offsets, tiebreak ? Uint32Array.from(tiebreak) : undefined)];
}

function referenceOrder(records: Uint8Array[], tiebreak?: number[]): number[] {
  const compare = (a: number, b: number): number => {
    const x = records[a]!, y = records[b]!;
    const common = Math.min(x.length, y.length);
    for (let k = 0; k < common; k++) if (x[k] !== y[k]) return x[k]! - y[k]!;
    if (x.length !== y.length) return x.length - y.length;
    if (tiebreak && tiebreak[a] !== tiebreak[b]) return tiebreak[a]! - tiebreak[b]!;
    return a - b;
  };
  return records.map((_, i) => i).sort(compare);
}
