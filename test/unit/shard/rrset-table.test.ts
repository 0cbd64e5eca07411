import { describe, expect, it } from 'vitest';
import { RrsetTable, dataBuffers } from '../../../src/shard/rrset-table.js';
import { buildShardBody } from '../../../src/shard/shard-writer.js';
import type { Observation } from '../../../src/model/observation.js';

function a(rrname: string, addrs: number[], count = 1, bailiwick = 'example.'): Observation {
  return {
    rrname, rrtype: 1, bailiwick, count, timeFirst: 100 + count, timeLast: 200 + count, zoneTimeFirst: 0, zoneTimeLast: 0,
    rdata: addrs.map((x) => ({ text: `192.0.2.${x}`, wire: Uint8Array.of(192, 0, 2, x) })),
  };
}

function rows(t: RrsetTable): string[] {
  return Array.from({ length: t.size }, (_, i) => {
    const r = t.rrset(i);
    return `${r.rrname} ${r.bailiwick} ${r.rdata.map((d) => d.text).join(',')} ${r.count} ${r.timeFirst}-${r.timeLast}`;
  });
}

describe('RrsetTable', () => {
  it('folds the same RRset seen with its records in another order, and keeps other bailiwicks and sets apart', () => {
    const t = new RrsetTable();
    t.add(a('www.example.', [2, 1], 1));
    t.add(a('www.example.', [1, 2, 2], 5));
    t.add(a('www.example.', [1, 2], 1, 'www.example.'));
    t.add(a('www.example.', [1], 1));
    expect(t.observations).toBe(4);
    expect(rows(t)).toEqual([
      'www.example. example. 192.0.2.1,192.0.2.2 6 101-205',
      'www.example. www.example. 192.0.2.1,192.0.2.2 1 101-201',
      'www.example. example. 192.0.2.1 1 101-201',
    ]);
  });

  it('finds RRsets of an owner with hundreds of rdata sets (the keyed path past the chain limit)', () => {
    const t = new RrsetTable();
    for (let pass = 0; pass < 2; pass++) {
      for (let x = 0; x < 300; x++) t.add(a('flux.example.', [x % 250, 250 + (x % 3)], 1));
      t.add(a('other.example.', [1], 1));
    }
    // (x % 250, 250 + x % 3) differs for every x below 300: 300 sets, each seen once per pass.
    expect(t.size).toBe(301);
    expect(rows(t).filter((r) => r.split(' ')[3] !== '2')).toEqual([]);
    expect(rows(t).at(-1)).toBe('other.example. example. 192.0.2.1 2 101-201');
  });

  it('data() posted to another thread rebuilds a read-only table that writes the same shard bytes', () => {
    const t = new RrsetTable();
    for (let i = 0; i < 300; i++) t.add(a(`h${i % 97}.example.`, [i % 5, (i * 7) % 11], 1 + (i % 3), i % 2 ? 'example.' : '.'));
    const expected = buildShardBody(t, 'test', 1_000).body;
    const expectedRows = rows(t);
    const data = t.data();
    // What postMessage does with the buffers in the transfer list: moved, not copied.
    const moved = structuredClone(data, { transfer: dataBuffers(data) });
    expect(data.owner.length).toBe(0); // detached here
    const copy = new RrsetTable(moved);
    expect(rows(copy)).toEqual(expectedRows);
    expect(buildShardBody(copy, 'test', 1_000).body).toEqual(expected);
    expect(() => copy.add(a('x.example.', [1]))).toThrow('RrsetTable: a table rebuilt from data() is read-only');
  });
});
