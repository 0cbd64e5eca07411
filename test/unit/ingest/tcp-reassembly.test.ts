import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../../src/config/limits.js';
import { newSensorStats } from '../../../src/ingest/sensor.js';
import { TCP_FIN, TCP_RST, TCP_SYN, TcpReassembler } from '../../../src/ingest/pcap/tcp-reassembly.js';

const T0 = 1_000_000;
const ACK = 0x10;

/** A DNS-over-TCP message: 2-byte length, then `n` bytes counting up from `tag`. */
function framed(n: number, tag: number): Uint8Array {
  const out = new Uint8Array(n + 2);
  out[0] = n >> 8;
  out[1] = n & 0xff;
  for (let i = 0; i < n; i++) out[2 + i] = (tag + i) & 0xff;
  return out;
}
const cat = (parts: Uint8Array[]): Uint8Array => Uint8Array.from(parts.flatMap((p) => Array.from(p)));

function setup() {
  const stats = newSensorStats();
  const got: { tag: number; len: number; midStream: boolean }[] = [];
  const r = new TcpReassembler(stats, (m, midStream) => got.push({ tag: m[0]!, len: m.length, midStream }));
  return { stats, got, r };
}

describe('TcpReassembler: ordering', () => {
  const stream = cat([framed(30, 1), framed(20, 101), framed(25, 201)]);

  it('holds out-of-order segments and delivers each message once its last byte is in', () => {
    const { r, got, stats } = setup();
    r.segment('c', 999, TCP_SYN, new Uint8Array(0), false, T0);
    // Reverse order: nothing can be delivered until the first segment arrives.
    r.segment('c', 1000 + 60, ACK, stream.subarray(60), false, T0);
    r.segment('c', 1000 + 20, ACK, stream.subarray(20, 60), false, T0);
    expect(got).toEqual([]);
    r.segment('c', 1000, ACK, stream.subarray(0, 20), false, T0);
    expect(got).toEqual([
      { tag: 1, len: 30, midStream: false }, { tag: 101, len: 20, midStream: false }, { tag: 201, len: 25, midStream: false },
    ]);
    r.segment('c', 1000 + stream.length, TCP_FIN | ACK, new Uint8Array(0), false, T0);
    r.finish();
    expect(stats.reassemblyDropped).toBe(0);
  });

  it('trims retransmitted bytes, also across the 2^32 sequence wrap', () => {
    const { r, got } = setup();
    const isn = 0xffffffff - 10;
    const at = (o: number) => (isn + 1 + o) >>> 0;
    r.segment('c', isn, TCP_SYN, new Uint8Array(0), false, T0);
    r.segment('c', at(0), ACK, stream.subarray(0, 25), false, T0);
    r.segment('c', at(0), ACK, stream.subarray(0, 40), false, T0); // overlaps 25 bytes already taken
    r.segment('c', at(10), ACK, stream.subarray(10, 30), false, T0); // wholly old
    r.segment('c', at(40), ACK, stream.subarray(40), false, T0);
    expect(got.map((m) => m.tag)).toEqual([1, 101, 201]);
  });

  it('uses data on a SYN (Fast Open); a retransmitted SYN changes nothing', () => {
    const { r, got } = setup();
    r.segment('c', 5000, TCP_SYN, stream.subarray(0, 10), false, T0);
    r.segment('c', 5000, TCP_SYN, stream.subarray(0, 10), false, T0);
    r.segment('c', 5011, ACK, stream.subarray(10, 32), false, T0);
    expect(got).toEqual([{ tag: 1, len: 30, midStream: false }]);
  });

  it('a new SYN on the same 4-tuple starts over and counts the unfinished remainder', () => {
    const { r, got, stats } = setup();
    r.segment('c', 100, TCP_SYN, new Uint8Array(0), false, T0);
    r.segment('c', 101, ACK, stream.subarray(0, 10), false, T0);
    r.segment('c', 7000, TCP_SYN, new Uint8Array(0), false, T0);
    expect(stats.reassemblyDropped).toBe(1);
    r.segment('c', 7001, ACK, stream.subarray(0, 32), false, T0);
    expect(got.map((m) => m.tag)).toEqual([1]);
  });

  it('frames a direction joined midway from its first byte and marks its messages', () => {
    const { r, got } = setup();
    r.segment('c', 42, ACK, stream.subarray(0, 32), false, T0);
    expect(got).toEqual([{ tag: 1, len: 30, midStream: true }]);
  });

  it('keeps directions apart', () => {
    const { r, got } = setup();
    r.segment('a', 0, TCP_SYN, new Uint8Array(0), false, T0);
    r.segment('b', 0, TCP_SYN, new Uint8Array(0), false, T0);
    r.segment('a', 1, ACK, stream.subarray(0, 16), false, T0);
    r.segment('b', 1, ACK, framed(3, 77), false, T0);
    r.segment('a', 17, ACK, stream.subarray(16, 32), false, T0);
    expect(got.map((m) => m.tag)).toEqual([77, 1]);
  });
});

describe('TcpReassembler: closing and limits', () => {
  it('after FIN a direction waits for its held segments; RST drops it at once', () => {
    const { r, got, stats } = setup();
    const m = framed(30, 1);
    r.segment('c', 0, TCP_SYN, new Uint8Array(0), false, T0);
    r.segment('c', 11, TCP_FIN | ACK, m.subarray(10), false, T0); // held: bytes 0-9 are missing
    r.segment('c', 1, ACK, m.subarray(0, 10), false, T0);
    expect(got.map((x) => x.tag)).toEqual([1]);
    r.segment('d', 0, TCP_SYN, new Uint8Array(0), false, T0);
    r.segment('d', 11, ACK, m.subarray(10), false, T0);
    r.segment('d', 1, TCP_RST, new Uint8Array(0), false, T0);
    expect(stats.reassemblyDropped).toBe(1);
    r.segment('d', 1, ACK, m.subarray(0, 10), false, T0); // a new, midway direction: its framing is a guess
    expect(got.map((x) => x.midStream)).toEqual([false]);
  });

  it('drops a direction whose held bytes pass tcpStreamBytesMax', () => {
    const { r, stats } = setup();
    r.segment('c', 0, TCP_SYN, new Uint8Array(0), false, T0);
    r.segment('c', 2, ACK, new Uint8Array(LIMITS.tcpStreamBytesMax - 1), false, T0); // one byte missing in front
    expect(stats.reassemblyDropped).toBe(0);
    r.segment('c', LIMITS.tcpStreamBytesMax + 1, ACK, new Uint8Array(2), false, T0);
    expect(stats.reassemblyDropped).toBe(1);
  });

  it('drops a direction silent for more than tcpStreamIdleSec, when another segment comes', () => {
    const { r, stats } = setup();
    r.segment('idle', 0, TCP_SYN, new Uint8Array(0), false, T0);
    r.segment('idle', 1, ACK, framed(30, 1).subarray(0, 5), false, T0);
    r.segment('other', 0, TCP_SYN, new Uint8Array(0), false, T0 + LIMITS.tcpStreamIdleSec);
    expect(stats.reassemblyDropped).toBe(0);
    r.segment('other', 1, ACK, new Uint8Array(0), false, T0 + LIMITS.tcpStreamIdleSec + 1);
    expect(stats.reassemblyDropped).toBe(1);
  });

  it(`drops the least recently used of more than ${LIMITS.tcpStreamsOpenMax} directions`, () => {
    const { r, stats, got } = setup();
    for (let i = 0; i < LIMITS.tcpStreamsOpenMax; i++) r.segment(`s${i}`, 0, TCP_SYN, Uint8Array.of(0), false, T0);
    r.segment('s0', 2, ACK, Uint8Array.of(5), false, T0); // s0 is now the most recently used
    r.segment('new', 0, TCP_SYN, new Uint8Array(0), false, T0);
    expect(stats.reassemblyDropped).toBe(1); // s1, which held one byte
    r.segment('s0', 3, ACK, framed(4, 9).subarray(1), false, T0);
    expect(got.map((m) => m.len)).toEqual([5]); // s0 kept its first two bytes
  });

  it('a segment cut by the snaplen drops its direction; finish counts unfinished remainders', () => {
    const { r, stats } = setup();
    r.segment('cut', 0, TCP_SYN, new Uint8Array(0), false, T0);
    r.segment('cut', 1, ACK, new Uint8Array(5), true, T0);
    expect(stats).toMatchObject({ snaplenCut: 1, reassemblyDropped: 0 }); // it held nothing yet
    r.segment('rest', 0, TCP_SYN, new Uint8Array(0), false, T0);
    r.segment('rest', 1, ACK, framed(30, 1).subarray(0, 12), false, T0);
    r.segment('empty', 0, TCP_SYN, new Uint8Array(0), false, T0);
    r.finish();
    expect(stats.reassemblyDropped).toBe(1); // 'rest' only: 'empty' held nothing
  });
});
