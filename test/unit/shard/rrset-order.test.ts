// The writer orders RRsets by comparing their parts; compaction and lookups
// merge by the built key. Both come from rrset-order.ts and must give the
// same order, byte for byte.

import { describe, expect, it } from 'vitest';
import { reverseName } from '../../../src/dns/name.js';
import { Prng } from '../../../src/demo/prng.js';
import { compareRrsetTails, rrsetKey, rrsetKeyTail, sortRrsets } from '../../../src/shard/rrset-order.js';
import type { RrsetTable } from '../../../src/shard/rrset-table.js';
import type { InternedBlob } from '../../../src/shard/interned-blob.js';
import { shardInputTable } from '../../../bench/shard-input.js';

/** Rank of each string in JavaScript string order (the byte order of printable ASCII). */
function ranks(list: readonly string[]): Uint32Array {
  const rank = new Uint32Array(list.length);
  [...list.keys()].sort((a, b) => (list[a]! < list[b]! ? -1 : list[a]! > list[b]! ? 1 : a - b)).forEach((id, k) => { rank[id] = k; });
  return rank;
}

/** Every string an interned blob holds, by id. */
function all(b: InternedBlob): string[] {
  return Array.from({ length: b.length }, (_, i) => b.text(i));
}

function texts(t: RrsetTable, row: number): string[] {
  const starts = t.rdataStarts.view(), rows = t.rdataRows.view();
  return Array.from(rows.subarray(starts[row], starts[row + 1]), (id) => t.rdataText.text(id));
}

const tail = (t: RrsetTable, row: number): string =>
  rrsetKeyTail(t.rrtype.get(row), t.bailiwicks.text(t.bailiwick.get(row)), texts(t, row));

function comparator(t: RrsetTable): (a: number, b: number) => number {
  return compareRrsetTails({
    rrtype: t.rrtype.view(), bailiwick: t.bailiwick.view(), bailiwickRank: ranks(all(t.bailiwicks)),
    rdataStarts: t.rdataStarts.view(), rdataRows: t.rdataRows.view(), rdataText: t.rdataText.view(),
  });
}

describe('the RRset order', () => {
  it('joins reversed owner, rrtype in hex, bailiwick and rdata texts with U+0001', () => {
    expect(rrsetKey('example.www.', 1, 'example.', ['192.0.2.1', '192.0.2.2']))
      .toBe('example.www.\u00010001\u0001example.\u0001192.0.2.1\u0001192.0.2.2');
    expect(rrsetKeyTail(65_280, '.', new Set(['a']))).toBe('ff00\u0001.\u0001a');
    expect(rrsetKeyTail(16, 'example.', [])).toBe('0010\u0001example.');
  });

  const table = shardInputTable(3_000);

  it('is the same whether the writer compares parts or a merge compares keys', () => {
    const { order, ownerStarts } = sortRrsets(table.owner.view(), ranks(all(table.names).map(reverseName)), comparator(table));
    const keys = Array.from(order, (row) => `${reverseName(table.names.text(table.owner.get(row)))}\u0001${tail(table, row)}`);
    for (let i = 1; i < keys.length; i++) if (!(keys[i - 1]! < keys[i]!)) expect.fail(`keys ${i - 1} and ${i} out of order`);
    expect(ownerStarts.length).toBe(table.names.length + 1);
    expect(ownerStarts.at(-1)).toBe(table.size);
  });

  it('compares any two tails as their strings compare', () => {
    const compare = comparator(table);
    const rng = new Prng(11);
    for (let k = 0; k < 20_000; k++) {
      const a = rng.below(table.size), b = rng.below(table.size);
      const ta = tail(table, a), tb = tail(table, b);
      expect(Math.sign(compare(a, b)), `rows ${a} and ${b}`).toBe(ta < tb ? -1 : ta > tb ? 1 : 0);
    }
  });
});
