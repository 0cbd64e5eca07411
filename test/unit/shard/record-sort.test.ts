// The native record sort must give exactly JavaScript's string order on the
// printable ASCII the writer feeds it (the readers binary-search with `<`),
// put a prefix before the longer record, and break ties by tiebreak, then
// position.

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
});
