// TCP stream reassembly and DNS-over-TCP framing (RFC 1035 section 4.2.2).
//
// Contract: segment() takes one TCP segment of the direction named by `key`
// (addresses and ports, source first) with its sequence number, flags and
// payload; the payloads are put in sequence order per direction and the
// stream is cut into 2-byte length prefixed messages, each handed to
// `deliver` as soon as its last byte arrives (a copy, which the caller may
// keep). Out-of-order segments are held until the gap fills, retransmitted
// bytes are trimmed, data on a SYN (TCP Fast Open) is used, and sequence
// numbers wrap at 2^32. A direction whose SYN we did not see is framed from
// its first byte and its messages are marked midStream: the framing is a
// guess. A direction is forgotten after FIN or RST once nothing is held.
// Limits (LIMITS): tcpStreamsOpenMax directions at once (the least recently
// used is dropped), tcpStreamBytesMax bytes held per direction (in-order
// remainder plus held segments; the direction is dropped beyond it), and
// tcpStreamIdleSec of capture-time silence; a direction starts with a
// buffer of tcpStreamBufferInitialBytes. Each direction dropped, or left at
// finish(), with bytes still held counts in stats.reassemblyDropped; a
// segment cut by the snaplen drops its direction and counts in
// stats.snaplenCut.

import { LIMITS } from '../../config/limits.js';
import type { SensorStats } from '../sensor.js';
import { u16 } from '../../lib/bytes.js';

export const TCP_FIN = 0x01;
export const TCP_SYN = 0x02;
export const TCP_RST = 0x04;

interface TcpDirection {
  /** Sequence number of the first data byte (SYN + 1), or -1 when the SYN was not seen. */
  first: number;
  /** Sequence number of the next in-order byte (uint32). */
  next: number;
  /** The SYN was not seen: the first byte may sit inside a message, so framing is a guess. */
  midStream: boolean;
  buf: Uint8Array;
  len: number;
  /** Out-of-order segments, copied, with their sequence numbers. */
  ooo: { seq: number; data: Uint8Array }[];
  oooBytes: number;
  lastSec: number;
  /** A FIN or RST was seen: the direction is deleted once nothing is pending. */
  closed: boolean;
}

/** Signed distance a - b in sequence space (RFC 1982 style, 32 bits). */
function seqDiff(a: number, b: number): number {
  return (a - b) | 0;
}

export class TcpReassembler {
  private readonly streams = new Map<string, TcpDirection>();

  constructor(private readonly stats: SensorStats, private readonly deliver: (message: Uint8Array, midStream: boolean) => void) {}

  /** One segment (see the module comment); `cut` when the capture lost the end of its payload. */
  segment(key: string, seq: number, flags: number, data: Uint8Array, cut: boolean, sec: number): void {
    this.expire(sec);
    let s = this.touch(key);
    if (flags & TCP_SYN) {
      const first = (seq + 1) >>> 0;
      if (!s || s.first !== first) {
        // A new connection on this 4-tuple, or the first sight of it. A retransmitted SYN changes nothing.
        if (s) this.drop(key, s);
        s = this.open(key, first, false, sec);
      }
      seq = first; // Fast Open data on the SYN starts after the SYN's own sequence number.
    }
    if (!s) {
      if (data.length === 0 || (flags & TCP_RST)) return;
      s = this.open(key, seq, true, sec);
    }
    s.lastSec = sec;
    if (cut && data.length > 0) {
      // Bytes missing from the middle of a stream: nothing after them can be framed.
      this.stats.snaplenCut++;
      this.drop(key, s);
      return;
    }
    if (data.length > 0) this.insert(key, s, seq, data);
    if (flags & (TCP_FIN | TCP_RST)) s.closed = true;
    if (s.closed && (s.ooo.length === 0 || (flags & TCP_RST)) && this.streams.get(key) === s) this.drop(key, s);
  }

  /** Directions still open at the end of the file. */
  finish(): void {
    for (const [key, s] of this.streams) this.drop(key, s);
  }

  /** The direction `key`, moved to the back of the LRU order; undefined when it is not open. */
  private touch(key: string): TcpDirection | undefined {
    const s = this.streams.get(key);
    if (s) {
      // Least recently used first: re-inserting moves the direction to the back.
      this.streams.delete(key);
      this.streams.set(key, s);
    }
    return s;
  }

  private open(key: string, next: number, midStream: boolean, sec: number): TcpDirection {
    if (this.streams.size >= LIMITS.tcpStreamsOpenMax) {
      for (const [k, old] of this.streams) {
        this.drop(k, old);
        break;
      }
    }
    const s: TcpDirection = {
      first: midStream ? -1 : next, next, midStream, buf: new Uint8Array(LIMITS.tcpStreamBufferInitialBytes), len: 0,
      ooo: [], oooBytes: 0, lastSec: sec, closed: false,
    };
    this.streams.set(key, s);
    return s;
  }

  private drop(key: string, s: TcpDirection): void {
    this.streams.delete(key);
    if (s.len > 0 || s.ooo.length > 0) this.stats.reassemblyDropped++;
  }

  private expire(sec: number): void {
    for (const [key, s] of this.streams) {
      if (sec - s.lastSec <= LIMITS.tcpStreamIdleSec) break;
      this.drop(key, s);
    }
  }

  private insert(key: string, s: TcpDirection, seq: number, data: Uint8Array): void {
    const diff = seqDiff(seq, s.next);
    if (diff > 0) return this.hold(key, s, seq, data, diff);
    // At or behind the next byte: a retransmission overlaps what we have; keep only the new tail.
    if (-diff >= data.length) return;
    if (!this.append(key, s, data.subarray(-diff))) return;
    if (!this.releaseHeld(key, s)) return;
    this.frames(s);
  }

  /** A segment `ahead` bytes past the next expected one: a copy is held until the gap fills. */
  private hold(key: string, s: TcpDirection, seq: number, data: Uint8Array, ahead: number): void {
    if (ahead > LIMITS.tcpStreamBytesMax || s.len + s.oooBytes + data.length > LIMITS.tcpStreamBytesMax) {
      this.drop(key, s);
      return;
    }
    s.ooo.push({ seq, data: data.slice() });
    s.oooBytes += data.length;
  }

  /** Appends every held segment the in-order bytes now reach; false when the direction was dropped. */
  private releaseHeld(key: string, s: TcpDirection): boolean {
    while (s.ooo.length > 0) {
      let progressed = false;
      for (let i = 0; i < s.ooo.length; i++) {
        const seg = s.ooo[i]!;
        const d = seqDiff(seg.seq, s.next);
        if (d > 0) continue;
        s.ooo.splice(i, 1);
        s.oooBytes -= seg.data.length;
        if (-d < seg.data.length && !this.append(key, s, seg.data.subarray(-d))) return false;
        progressed = true;
        break;
      }
      if (!progressed) break;
    }
    return true;
  }

  /** Appends in-order bytes, growing the buffer up to the bound; false when the bound dropped the direction. */
  private append(key: string, s: TcpDirection, data: Uint8Array): boolean {
    const need = s.len + data.length;
    if (need + s.oooBytes > LIMITS.tcpStreamBytesMax) {
      this.drop(key, s);
      return false;
    }
    if (need > s.buf.length) {
      const grown = new Uint8Array(Math.min(LIMITS.tcpStreamBytesMax, Math.max(need, s.buf.length * 2)));
      grown.set(s.buf.subarray(0, s.len));
      s.buf = grown;
    }
    s.buf.set(data, s.len);
    s.len = need;
    s.next = (s.next + data.length) >>> 0;
    return true;
  }

  /** Cuts the in-order bytes into length-prefixed DNS messages; keeps the unfinished remainder. */
  private frames(s: TcpDirection): void {
    let p = 0;
    while (s.len - p >= 2) {
      const n = u16(s.buf, p);
      if (s.len - p - 2 < n) break;
      // A copy: the buffer is compacted below, before the parsed message is consumed.
      this.deliver(s.buf.slice(p + 2, p + 2 + n), s.midStream);
      p += 2 + n;
    }
    if (p > 0) {
      s.buf.copyWithin(0, p, s.len);
      s.len -= p;
    }
  }
}
