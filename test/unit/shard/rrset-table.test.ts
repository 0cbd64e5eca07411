import { describe, expect, it } from 'vitest';
import { RrsetTable } from '../../../src/shard/rrset-table.js';
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
});
