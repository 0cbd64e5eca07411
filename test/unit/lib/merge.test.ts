// mergeSorted (lib/merge.ts), the k-way merge standard search and compaction
// read shards through: one global key order, equal keys grouped (one item
// per input at most, in input order), nothing lost or repeated.

import { describe, expect, it } from 'vitest';
import { mergeSorted, type Keyed } from '../../../src/lib/merge.js';

interface Item extends Keyed {
  input: number;
}

const items = (input: number, keys: string[]): Item[] => keys.map((key) => ({ key, input }));
const run = (...inputs: string[][]) => [...mergeSorted(inputs.map((keys, i) => items(i, keys)[Symbol.iterator]()))]
  .map((group) => group.map((x) => `${x.key}@${x.input}`));

describe('mergeSorted', () => {
  it('yields every key once in order, grouping equal keys of different inputs in input order', () => {
    expect(run(['a', 'c', 'e'], ['b', 'c', 'f'], ['c', 'd'])).toEqual([
      ['a@0'], ['b@1'], ['c@0', 'c@1', 'c@2'], ['d@2'], ['e@0'], ['f@1'],
    ]);
  });

  it('gives equal keys within one input as separate groups', () => {
    expect(run(['a', 'a', 'b'], ['a'])).toEqual([['a@0', 'a@1'], ['a@0'], ['b@0']]);
  });

  it('handles no inputs, empty inputs and a single input', () => {
    expect(run()).toEqual([]);
    expect(run([], [])).toEqual([]);
    expect(run([], ['x', 'y'], [])).toEqual([['x@1'], ['y@1']]);
  });

  it('compares keys as strings, code unit by code unit', () => {
    expect(run(['B', 'a'], ['Z', 'b'])).toEqual([['B@0'], ['Z@1'], ['a@0'], ['b@1']]);
  });

  it('passes a lone input through without reading its keys (inputs may build them lazily)', () => {
    let reads = 0;
    const lazy = (n: number): Iterator<Keyed> => {
      let i = 0;
      return {
        next: () => {
          if (i === n) return { done: true, value: undefined };
          const k = `k${i++}`;
          return { done: false, value: { get key() { reads++; return k; } } };
        },
      };
    };
    const groups = [...mergeSorted([lazy(5), [][Symbol.iterator]()])];
    expect(groups).toHaveLength(5);
    expect(groups.every((g) => g.length === 1)).toBe(true);
    expect(reads).toBe(0);
  });

  it('agrees with sorting everything, over many random inputs', () => {
    let x = 7;
    const next = (m: number) => (x = (x * 48271) % 2147483647) % m;
    for (let round = 0; round < 50; round++) {
      const inputs = Array.from({ length: 1 + next(6) }, () =>
        Array.from({ length: next(30) }, () => `k${next(40).toString().padStart(2, '0')}`).sort());
      const flat = run(...inputs).flat();
      const expected = inputs.flatMap((keys, i) => keys.map((k) => `${k}@${i}`))
        .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      expect([...flat].sort()).toEqual(expected);
      const keys = flat.map((s) => s.split('@')[0]!);
      expect(keys).toEqual([...keys].sort());
    }
  });
});
