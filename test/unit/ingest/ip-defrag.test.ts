import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../../src/config/limits.js';
import { Defragmenter } from '../../../src/ingest/pcap/ip-defrag.js';
import { newSensorStats } from '../../../src/ingest/sensor.js';

const T0 = 1_000_000;
const bytes = (n: number, from = 0): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (from + i) & 0xff);
const fill = (n: number, v: number): Uint8Array => new Uint8Array(n).fill(v);

function setup() {
  const stats = newSensorStats();
  return { stats, d: new Defragmenter(stats) };
}

describe('Defragmenter: the datagram contract', () => {
  it('returns the payload only when the fragments cover it, in any arrival order', () => {
    const { d, stats } = setup();
    const whole = bytes(48);
    expect(d.add('k', 16, whole.subarray(16, 32), false, T0)).toBeUndefined();
    expect(d.add('k', 32, whole.subarray(32), true, T0)).toBeUndefined(); // the end is known, the start is not
    expect(d.add('k', 0, whole.subarray(0, 16), false, T0)).toEqual(whole);
    expect(stats.reassemblyDropped).toBe(0);
    // Completed datagrams are forgotten: nothing is left to count at the end.
    d.finish();
    expect(stats.reassemblyDropped).toBe(0);
  });

  it('waits for a gap to fill even when the last fragment is there', () => {
    const { d } = setup();
    const whole = bytes(40);
    expect(d.add('k', 0, whole.subarray(0, 8), false, T0)).toBeUndefined();
    expect(d.add('k', 24, whole.subarray(24), true, T0)).toBeUndefined();
    expect(d.add('k', 16, whole.subarray(16, 24), false, T0)).toBeUndefined(); // [8, 16) still missing
    expect(d.add('k', 8, whole.subarray(8, 16), false, T0)).toEqual(whole);
  });

  it('resolves overlapping fragments in favour of the one at the later offset', () => {
    const { d } = setup();
    expect(d.add('k', 8, fill(16, 0xbb), true, T0)).toBeUndefined();
    const whole = d.add('k', 0, fill(16, 0xaa), false, T0)!;
    expect(Array.from(whole)).toEqual([...fill(8, 0xaa), ...fill(16, 0xbb)]);
  });

  it('accepts a duplicated fragment and keeps datagrams of different keys apart', () => {
    const { d } = setup();
    const a = bytes(16, 1), b = bytes(16, 100);
    expect(d.add('a', 0, a.subarray(0, 8), false, T0)).toBeUndefined();
    expect(d.add('b', 0, b.subarray(0, 8), false, T0)).toBeUndefined();
    expect(d.add('a', 0, a.subarray(0, 8), false, T0)).toBeUndefined();
    expect(d.add('b', 8, b.subarray(8), true, T0)).toEqual(b);
    expect(d.add('a', 8, a.subarray(8), true, T0)).toEqual(a);
  });

  it('copies what it holds: the caller may reuse its buffer', () => {
    const { d } = setup();
    const buf = bytes(8);
    d.add('k', 0, buf, false, T0);
    buf.fill(0xff);
    expect(Array.from(d.add('k', 8, bytes(8, 8), true, T0)!)).toEqual(Array.from(bytes(16)));
  });
});

describe('Defragmenter: limits', () => {
  it(`drops a datagram of more than ${LIMITS.ipFragmentsPerDatagramMax} fragments`, () => {
    const { d, stats } = setup();
    for (let i = 0; i < LIMITS.ipFragmentsPerDatagramMax; i++) expect(d.add('k', i * 8, bytes(8), false, T0)).toBeUndefined();
    expect(d.add('k', LIMITS.ipFragmentsPerDatagramMax * 8, bytes(8), true, T0)).toBeUndefined();
    expect(stats.reassemblyDropped).toBe(1);
    // What arrives after the drop starts a new datagram.
    expect(d.add('k', 0, bytes(8), true, T0)).toEqual(bytes(8));
  });

  it(`drops a datagram reaching past ${LIMITS.ipDatagramBytesMax} bytes`, () => {
    const { d, stats } = setup();
    d.add('k', 0, bytes(8), false, T0);
    expect(d.add('k', LIMITS.ipDatagramBytesMax - 7, bytes(8), true, T0)).toBeUndefined();
    expect(stats.reassemblyDropped).toBe(1);
    expect(d.add('k', LIMITS.ipDatagramBytesMax - 8, bytes(8), true, T0)).toBeUndefined(); // exactly at the bound: held
    expect(stats.reassemblyDropped).toBe(1);
  });

  it(`drops the oldest of more than ${LIMITS.ipDatagramsReassemblingMax} datagrams at once`, () => {
    const { d, stats } = setup();
    for (let i = 0; i <= LIMITS.ipDatagramsReassemblingMax; i++) d.add(`k${i}`, 0, bytes(8), false, T0);
    expect(stats.reassemblyDropped).toBe(1);
    expect(d.add('k1', 8, bytes(8, 8), true, T0)).toEqual(bytes(16));
    // k0 was the one dropped: its last fragment starts a new datagram, which lacks its start.
    expect(d.add('k0', 8, bytes(8), true, T0)).toBeUndefined();
  });

  it(`drops a datagram unfinished after ${LIMITS.ipFragmentTimeoutSec} s of capture time, when the next fragment comes`, () => {
    const { d, stats } = setup();
    const T = LIMITS.ipFragmentTimeoutSec;
    d.add('a', 0, bytes(8), false, T0);
    d.add('b', 0, bytes(8), false, T0 + 10);
    d.add('c', 0, bytes(8), false, T0 + T); // 'a' is T s old: still held
    expect(stats.reassemblyDropped).toBe(0);
    d.add('d', 0, bytes(8), false, T0 + T + 1); // 'a' is past T: dropped
    expect(stats.reassemblyDropped).toBe(1);
    expect(d.add('b', 8, bytes(8, 8), true, T0 + T + 1)).toEqual(bytes(16));
    d.finish();
    expect(stats.reassemblyDropped).toBe(3); // 'c' and 'd' were never completed
  });
});
