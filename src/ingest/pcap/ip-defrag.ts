// IP fragment reassembly, for IPv4 and the IPv6 Fragment header alike.
//
// Contract: add() takes one fragment of the datagram named by `key`
// (family, addresses, identification and, for IPv4, protocol), its byte
// offset in the payload, its bytes (copied), whether it is the last one
// (MF=0), and the capture time; it returns the whole payload once the
// fragments cover it without a gap, in any arrival order. Overlapping
// fragments resolve in favour of the one at the later offset. Each datagram
// lost to a bound is counted in stats.reassemblyDropped, as is each one
// still unfinished at finish().
// Limits (LIMITS): ipDatagramsReassemblingMax datagrams at once (the oldest
// is dropped beyond it), ipFragmentsPerDatagramMax fragments and
// ipDatagramBytesMax bytes per datagram (the datagram is dropped), and
// ipFragmentTimeoutSec of capture time per datagram (dropped when a later
// fragment of any datagram arrives).

import { LIMITS } from '../../config/limits.js';
import type { SensorStats } from '../sensor.js';

interface Datagram {
  pieces: { offset: number; data: Uint8Array }[];
  /** Payload length, known once the last fragment (MF=0) arrived; -1 before. */
  total: number;
  bytes: number;
  firstSec: number;
}

/** Whether the pieces, sorted by offset, cover [0, total) without a gap. */
function covers(pieces: readonly { offset: number; data: Uint8Array }[], total: number): boolean {
  let covered = 0;
  for (const p of pieces) {
    if (p.offset > covered) return false;
    covered = Math.max(covered, p.offset + p.data.length);
  }
  return covered >= total;
}

/** The payload of a covered datagram; pieces sorted by offset, so later offsets overwrite overlaps. */
function assemble(d: Datagram): Uint8Array {
  const whole = new Uint8Array(d.total);
  for (const p of d.pieces) whole.set(p.data.subarray(0, Math.max(0, d.total - p.offset)), p.offset);
  return whole;
}

/**
 * Holds fragments per datagram key until they cover the datagram. Map
 * insertion order is arrival order, so timeouts and the datagram bound both
 * evict from the front.
 */
export class Defragmenter {
  private readonly pending = new Map<string, Datagram>();

  constructor(private readonly stats: SensorStats) {}

  /** Adds one fragment (copied); returns the whole payload when this one completed it. */
  add(key: string, offset: number, data: Uint8Array, last: boolean, sec: number): Uint8Array | undefined {
    this.expire(sec);
    let d = this.pending.get(key);
    if (!d) {
      if (this.pending.size >= LIMITS.ipDatagramsReassemblingMax) this.dropOldest();
      d = { pieces: [], total: -1, bytes: 0, firstSec: sec };
      this.pending.set(key, d);
    }
    const end = offset + data.length;
    if (end > LIMITS.ipDatagramBytesMax || d.pieces.length >= LIMITS.ipFragmentsPerDatagramMax) {
      this.pending.delete(key);
      this.stats.reassemblyDropped++;
      return undefined;
    }
    if (last) d.total = end;
    d.pieces.push({ offset, data: data.slice() });
    d.bytes += data.length;
    if (d.total < 0) return undefined;
    d.pieces.sort((a, b) => a.offset - b.offset);
    if (!covers(d.pieces, d.total)) return undefined;
    this.pending.delete(key);
    return assemble(d);
  }

  private expire(sec: number): void {
    for (const [key, d] of this.pending) {
      if (sec - d.firstSec <= LIMITS.ipFragmentTimeoutSec) break;
      this.pending.delete(key);
      this.stats.reassemblyDropped++;
    }
  }

  private dropOldest(): void {
    for (const key of this.pending.keys()) {
      this.pending.delete(key);
      this.stats.reassemblyDropped++;
      return;
    }
  }

  /** Datagrams never completed by the end of the file. */
  finish(): void {
    this.stats.reassemblyDropped += this.pending.size;
    this.pending.clear();
  }
}
