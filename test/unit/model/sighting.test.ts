// The sighting rule (model/sighting.ts): ingest, compaction, aggr=true and
// flexible search's tuple times all fold sightings with it, so a client's
// times must not depend on how the data was cut into files or shards. These
// pin the rule itself and that folding is independent of order and grouping.

import { describe, expect, it } from 'vitest';
import { addSighting, firstSeen, lastSeen, minNonZero, noSighting, type Sighting } from '../../../src/model/sighting.js';

const s = (count: number, timeFirst: number, timeLast: number, zoneTimeFirst = 0, zoneTimeLast = 0): Sighting =>
  ({ count, timeFirst, timeLast, zoneTimeFirst, zoneTimeLast });

/** A small deterministic generator (the cases must be the same on every run). */
function* sightings(n: number, seed: number): Generator<Sighting> {
  let x = seed;
  const next = (m: number) => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x % m;
  };
  for (let i = 0; i < n; i++) {
    // About a third of each kind of time is 0, "never seen that way".
    const t = () => (next(3) === 0 ? 0 : 1_600_000_000 + next(1_000_000));
    const [tf, tl] = [t(), t()].sort((a, b) => a - b) as [number, number];
    const [zf, zl] = [t(), t()].sort((a, b) => a - b) as [number, number];
    yield s(1 + next(1000), tf === 0 ? tl : tf, tl, zf === 0 ? zl : zf, zl);
  }
}

describe('minNonZero', () => {
  it('takes the earlier time; 0 ("none") loses to any real time', () => {
    expect(minNonZero(5, 3)).toBe(3);
    expect(minNonZero(3, 5)).toBe(3);
    expect(minNonZero(0, 7)).toBe(7);
    expect(minNonZero(7, 0)).toBe(7);
    expect(minNonZero(0, 0)).toBe(0);
  });
});

describe('addSighting', () => {
  it('adds counts, keeps the earliest first and the latest last, sensor and zone times apart', () => {
    const into = s(2, 100, 200, 150, 250);
    const out = addSighting(into, s(3, 50, 180, 160, 300));
    expect(out).toBe(into);
    expect(out).toEqual(s(5, 50, 200, 150, 300));
  });

  it('a side never seen one way (times 0) takes the other side\'s times for that way', () => {
    // Seen only by sensors, folded with seen only in zone files: each keeps its own times.
    expect(addSighting(s(1, 100, 200), s(4, 0, 0, 300, 400))).toEqual(s(5, 100, 200, 300, 400));
    expect(addSighting(s(4, 0, 0, 300, 400), s(1, 100, 200))).toEqual(s(5, 100, 200, 300, 400));
  });

  it('noSighting is the identity', () => {
    const x = s(7, 10, 20, 30, 40);
    expect(addSighting(noSighting(), x)).toEqual(x);
    expect(addSighting({ ...x }, noSighting())).toEqual(x);
    expect(noSighting()).toEqual(s(0, 0, 0, 0, 0));
    // A fresh object each time: folding into one must not change the next.
    addSighting(noSighting(), x);
    expect(noSighting()).toEqual(s(0, 0, 0, 0, 0));
  });

  it('keeps the fields a wider type carries', () => {
    const into = { ...s(1, 10, 10), rrname: 'a.example.' };
    expect(addSighting(into, s(1, 5, 20))).toEqual({ ...s(2, 5, 20), rrname: 'a.example.' });
  });

  it('folding gives the same answer in any order and any grouping (files cut differently, shards merged differently)', () => {
    const all = [...sightings(200, 42)];
    const inOrder = all.reduce((acc, x) => addSighting(acc, x), noSighting());
    const reversed = [...all].reverse().reduce((acc, x) => addSighting(acc, x), noSighting());
    expect(reversed).toEqual(inOrder);
    // Grouped as three "shards", each folded first, then the shards folded.
    const groups = [all.slice(0, 17), all.slice(17, 130), all.slice(130)]
      .map((g) => g.reduce((acc, x) => addSighting(acc, x), noSighting()));
    expect(groups.reduceRight((acc, x) => addSighting(acc, x), noSighting())).toEqual(inOrder);
    expect(inOrder.count).toBe(all.reduce((n, x) => n + x.count, 0));
  });
});

describe('firstSeen and lastSeen', () => {
  it('judge sensor and zone times together, 0 meaning none', () => {
    expect(firstSeen(s(1, 100, 200, 50, 80))).toBe(50);
    expect(firstSeen(s(1, 100, 200))).toBe(100);
    expect(firstSeen(s(1, 0, 0, 300, 400))).toBe(300);
    expect(firstSeen(noSighting())).toBe(0);
    expect(lastSeen(s(1, 100, 200, 50, 80))).toBe(200);
    expect(lastSeen(s(1, 100, 200, 50, 800))).toBe(800);
    expect(lastSeen(noSighting())).toBe(0);
  });
});
