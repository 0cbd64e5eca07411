// pcap and pcapng captures -> Observations of the DNS responses inside.
//
// Contract: pcapObservations(file, ctx) streams the file (LIMITS.
// sensorReadChunkBytes at a time, ctx.progress after each read), detects
// classic pcap (either byte order, microsecond or nanosecond stamps) or
// pcapng by its magic, and decodes link types Ethernet (1, with stacked
// 802.1Q/802.1ad tags), BSD null/loopback (0, 108), Linux SLL (113) and SLL2
// (276), raw IP (101, 12, 14, 228, 229); IPv4 and IPv6 (extension headers
// skipped) with fragment reassembly for both; UDP and TCP with either port
// 53. TCP is reassembled per direction by sequence number (out-of-order
// segments held, retransmissions trimmed, data on a Fast Open SYN used),
// and the stream is cut into 2-byte length prefixed DNS messages. Each DNS
// response goes to observeResponse (sensor.ts) timed by its packet, in
// whole seconds; for a reassembled message, the packet that completed it.
// Every reassembly buffer is bounded (LIMITS.ip*, LIMITS.tcp*).
//
// Bad input versus ordinary traffic. A port-53 capture is full of things
// that are not DNS responses, and --max-errors must not trip on them, so:
//   - reject (ctx.reject, counts toward --max-errors): a file that is not a
//     capture (bad magic), a corrupt or truncated record (the reading stops
//     there: its framing can no longer be trusted), and a DNS response
//     (QR=1, plausible header) that was captured whole, arrived by UDP or a
//     TCP stream we saw open, and still fails to parse: that is either
//     corrupt data or a gap in our parser, and someone should look.
//   - skip silently, counted in sensorStats(ctx): queries; responses with
//     TC=1 (their RRsets may be incomplete); payloads shorter than a DNS
//     header or with an impossible header (other protocols squatting on
//     port 53); payloads cut by the capture's snaplen; messages from a TCP
//     stream joined midway (its framing is a guess); non-IP frames, other
//     ports and protocols, malformed IP/UDP/TCP headers; unknown link types;
//     fragments and streams dropped by a reassembly bound or left unfinished.
// Every shared capture (compactor, dnscap, go-dnscollector, zeek) reads with
// no reject under these rules.
//
// pcapResponses(file, ctx, opts) is the first half on its own: the parsed
// responses with their time and transport, for tests and tools that count
// records the way other tools do.

import type { DnsMessage } from '../dns/message.js';
import { parseMessage } from '../dns/message.js';
import { LIMITS } from '../config/limits.js';
import { IngestError } from '../errors/catalogue.js';
import type { Observation } from '../model/observation.js';
import type { IngestContext } from './context.js';
import { ChunkedFile, observeResponse, sensorStats, type SensorStats, type TimedResponse } from './sensor.js';

const DNS_PORT = 53;
const IPPROTO_TCP = 6;
const IPPROTO_UDP = 17;
const TCP_FIN = 0x01;
const TCP_SYN = 0x02;
const TCP_RST = 0x04;

const PCAP_HEADER_BYTES = 24;
const PCAP_RECORD_BYTES = 16;
const PCAPNG_SHB = 0x0a0d0d0a;
const PCAPNG_BOM = 0x1a2b3c4d;

const ETHERTYPE_IPV4 = 0x0800;
const ETHERTYPE_IPV6 = 0x86dd;
const ETHERTYPE_VLAN = new Set([0x8100, 0x88a8, 0x9100]);

function u16(b: Uint8Array, i: number): number {
  return (b[i]! << 8) | b[i + 1]!;
}
function u32(b: Uint8Array, i: number): number {
  return ((b[i]! << 24) >>> 0) + ((b[i + 1]! << 16) | (b[i + 2]! << 8) | b[i + 3]!);
}
function u16le(b: Uint8Array, i: number): number {
  return b[i]! | (b[i + 1]! << 8);
}
function u32le(b: Uint8Array, i: number): number {
  return ((b[i + 3]! << 24) >>> 0) + ((b[i + 2]! << 16) | (b[i + 1]! << 8) | b[i]!);
}
function rd16(b: Uint8Array, i: number, le: boolean): number {
  return le ? u16le(b, i) : u16(b, i);
}
function rd32(b: Uint8Array, i: number, le: boolean): number {
  return le ? u32le(b, i) : u32(b, i);
}

// --- IP fragment reassembly --------------------------------------------------

interface Datagram {
  pieces: { offset: number; data: Uint8Array }[];
  /** Payload length, known once the last fragment (MF=0) arrived; -1 before. */
  total: number;
  bytes: number;
  firstSec: number;
}

/**
 * Holds fragments per (family, addresses, id, protocol) until they cover the
 * datagram. Map insertion order is arrival order, so timeouts and the
 * datagram bound both evict from the front.
 */
class Defragmenter {
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
    let covered = 0;
    for (const p of d.pieces) {
      if (p.offset > covered) return undefined;
      covered = Math.max(covered, p.offset + p.data.length);
    }
    if (covered < d.total) return undefined;
    this.pending.delete(key);
    const whole = new Uint8Array(d.total);
    // Overlaps (retransmitted or malicious) resolve in favour of the later offset's bytes.
    for (const p of d.pieces) whole.set(p.data.subarray(0, Math.max(0, d.total - p.offset)), p.offset);
    return whole;
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

// --- TCP reassembly -----------------------------------------------------------

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

// --- The packet decoder ----------------------------------------------------

/**
 * Decodes one packet at a time down to DNS messages, collecting parsed
 * responses in `out` for the generator to yield. Fields describe the packet being decoded, so nested calls need no
 * closures or per-packet objects.
 */
class PacketDecoder {
  readonly out: TimedResponse[] = [];
  private readonly defrag: Defragmenter;
  private readonly streams = new Map<string, TcpDirection>();
  /** 1-based packet number and file offset of its record, for error places. */
  packetNo = 0;
  packetOffset = 0;
  sec = 0;
  // The current packet's addresses, for TCP stream and fragment keys.
  private addrBuf: Uint8Array = new Uint8Array(0);
  private srcOff = 0;
  private dstOff = 0;
  private addrLen = 4;

  constructor(private readonly file: string, private readonly ctx: IngestContext, private readonly stats: SensorStats,
    private readonly keepTruncated: boolean) {
    this.defrag = new Defragmenter(stats);
  }

  /** One captured frame of the given link type: bytes [start, end) of b. */
  frame(linktype: number, b: Uint8Array, start: number, end: number): void {
    this.stats.packets++;
    let p = start;
    let ethertype = -1;
    switch (linktype) {
      case 1: { // Ethernet II, with stacked VLAN tags.
        if (end - p < 14) return this.other();
        ethertype = u16(b, p + 12);
        p += 14;
        for (let tags = 0; ETHERTYPE_VLAN.has(ethertype) && tags < LIMITS.vlanTagsMax; tags++) {
          if (end - p < 4) return this.other();
          ethertype = u16(b, p + 2);
          p += 4;
        }
        break;
      }
      case 113: // Linux cooked v1: protocol at 14, 16-byte header.
        if (end - p < 16) return this.other();
        ethertype = u16(b, p + 14);
        p += 16;
        break;
      case 276: // Linux cooked v2: protocol at 0, 20-byte header.
        if (end - p < 20) return this.other();
        ethertype = u16(b, p);
        p += 20;
        break;
      case 0: // BSD null / loopback: a 4-byte address family in the capturing host's order; the IP version says the same.
      case 108:
        if (end - p < 4) return this.other();
        p += 4;
        break;
      case 101: case 12: case 14: case 228: case 229: // Raw IP.
        break;
      default:
        this.stats.unknownLinkType++;
        return;
    }
    if (ethertype === -1) {
      if (end - p < 1) return this.other();
      const version = b[p]! >> 4;
      ethertype = version === 4 ? ETHERTYPE_IPV4 : version === 6 ? ETHERTYPE_IPV6 : -1;
    }
    if (ethertype === ETHERTYPE_IPV4) this.ipv4(b, p, end);
    else if (ethertype === ETHERTYPE_IPV6) this.ipv6(b, p, end);
    else this.other();
  }

  private other(): void {
    this.stats.otherTraffic++;
  }

  private ipv4(b: Uint8Array, p: number, end: number): void {
    if (end - p < 20 || b[p]! >> 4 !== 4) return this.other();
    const ihl = (b[p]! & 0x0f) * 4;
    const totalLen = u16(b, p + 2);
    if (ihl < 20 || totalLen < ihl || end - p < ihl) return this.other();
    let ipEnd = p + totalLen;
    let cut = false;
    if (ipEnd > end) {
      // The capture kept fewer bytes than the datagram had (snaplen).
      ipEnd = end;
      cut = true;
    }
    const proto = b[p + 9]!;
    const frag = u16(b, p + 6);
    this.addrBuf = b;
    this.srcOff = p + 12;
    this.dstOff = p + 16;
    this.addrLen = 4;
    const moreFragments = (frag & 0x2000) !== 0;
    const fragOffset = (frag & 0x1fff) * 8;
    if (moreFragments || fragOffset !== 0) {
      if (cut) {
        this.stats.snaplenCut++;
        return;
      }
      const key = `4 ${u32(b, p + 12)} ${u32(b, p + 16)} ${u16(b, p + 4)} ${proto}`;
      const whole = this.defrag.add(key, fragOffset, b.subarray(p + ihl, ipEnd), !moreFragments, this.sec);
      if (whole) this.transport(proto, whole, 0, whole.length, false);
      return;
    }
    this.transport(proto, b, p + ihl, ipEnd, cut);
  }

  private ipv6(b: Uint8Array, p: number, end: number): void {
    if (end - p < 40 || b[p]! >> 4 !== 6) return this.other();
    const payloadLen = u16(b, p + 4);
    if (payloadLen === 0) return this.other(); // A jumbogram or nothing at all: not DNS either way.
    let ipEnd = p + 40 + payloadLen;
    let cut = false;
    if (ipEnd > end) {
      ipEnd = end;
      cut = true;
    }
    this.addrBuf = b;
    this.srcOff = p + 8;
    this.dstOff = p + 24;
    this.addrLen = 16;
    this.ipv6Chain(b[p + 6]!, b, p + 40, ipEnd, cut, true);
  }

  /** Walks IPv6 extension headers from `next` at p; `mayFragment` is false inside a reassembled payload. */
  private ipv6Chain(next: number, b: Uint8Array, p: number, end: number, cut: boolean, mayFragment: boolean): void {
    for (let i = 0; i < LIMITS.ipv6ExtensionHeadersMax; i++) {
      switch (next) {
        case 0: case 43: case 60: // Hop-by-hop, routing, destination options: length in 8-byte units beyond the first 8.
          if (end - p < 8) return this.other();
          next = b[p]!;
          p += (b[p + 1]! + 1) * 8;
          continue;
        case 51: // Authentication header: length in 4-byte units beyond the first 8.
          if (end - p < 8) return this.other();
          next = b[p]!;
          p += (b[p + 1]! + 2) * 4;
          continue;
        case 44: { // Fragment header.
          if (end - p < 8 || !mayFragment) return this.other();
          const fragNext = b[p]!;
          const field = u16(b, p + 2);
          const fragOffset = field & 0xfff8;
          const more = (field & 1) !== 0;
          if (fragOffset === 0 && !more) { // An atomic fragment (RFC 6946): nothing to reassemble.
            next = fragNext;
            p += 8;
            continue;
          }
          if (cut) {
            this.stats.snaplenCut++;
            return;
          }
          const a = this.addrBuf;
          const key = `6 ${Buffer.from(a.buffer, a.byteOffset + this.srcOff, 32).toString('hex')} ${u32(b, p + 4)}`;
          const whole = this.defrag.add(key, fragOffset, b.subarray(p + 8, end), !more, this.sec);
          if (whole) this.ipv6Chain(fragNext, whole, 0, whole.length, false, false);
          return;
        }
        default:
          if (p > end) return this.other();
          return this.transport(next, b, p, end, cut);
      }
    }
    this.other();
  }

  private transport(proto: number, b: Uint8Array, p: number, end: number, cut: boolean): void {
    if (proto === IPPROTO_UDP) {
      if (end - p < 8) return cut ? void this.stats.snaplenCut++ : this.other();
      if (u16(b, p) !== DNS_PORT && u16(b, p + 2) !== DNS_PORT) return this.other();
      const udpLen = u16(b, p + 4);
      if (udpLen < 8) return this.other();
      let udpEnd = p + udpLen;
      if (udpEnd > end) {
        udpEnd = end;
        cut = true;
      }
      this.dns(b.subarray(p + 8, udpEnd), cut, false, 'udp');
    } else if (proto === IPPROTO_TCP) {
      if (end - p < 20) return cut ? void this.stats.snaplenCut++ : this.other();
      const sport = u16(b, p);
      const dport = u16(b, p + 2);
      if (sport !== DNS_PORT && dport !== DNS_PORT) return this.other();
      const dataOffset = (b[p + 12]! >> 4) * 4;
      if (dataOffset < 20 || p + dataOffset > end) return cut ? void this.stats.snaplenCut++ : this.other();
      this.tcp(sport, dport, u32(b, p + 4), b[p + 13]!, b.subarray(p + dataOffset, end), cut);
    } else {
      this.other();
    }
  }

  // --- TCP ---

  private streamKey(sport: number, dport: number): string {
    const a = this.addrBuf;
    const n = this.addrLen;
    const src = n === 4 ? u32(a, this.srcOff) : Buffer.from(a.buffer, a.byteOffset + this.srcOff, n).toString('hex');
    const dst = n === 4 ? u32(a, this.dstOff) : Buffer.from(a.buffer, a.byteOffset + this.dstOff, n).toString('hex');
    return `${src} ${sport} ${dst} ${dport}`;
  }

  private tcp(sport: number, dport: number, seq: number, flags: number, data: Uint8Array, cut: boolean): void {
    this.expireStreams();
    const key = this.streamKey(sport, dport);
    let s = this.streams.get(key);
    if (s) {
      // Least recently used first: re-inserting moves the direction to the back.
      this.streams.delete(key);
      this.streams.set(key, s);
    }
    if (flags & TCP_SYN) {
      const first = (seq + 1) >>> 0;
      if (!s || s.first !== first) {
        // A new connection on this 4-tuple, or the first sight of it. A retransmitted SYN changes nothing.
        if (s) this.dropStream(key, s);
        s = this.newStream(key, first, false);
      }
      seq = first; // Fast Open data on the SYN starts after the SYN's own sequence number.
    }
    if (!s) {
      if (data.length === 0 || (flags & TCP_RST)) return;
      s = this.newStream(key, seq, true);
    }
    s.lastSec = this.sec;
    if (cut && data.length > 0) {
      // Bytes missing from the middle of a stream: nothing after them can be framed.
      this.stats.snaplenCut++;
      this.dropStream(key, s);
      return;
    }
    if (data.length > 0) this.segment(key, s, seq, data);
    if (flags & (TCP_FIN | TCP_RST)) s.closed = true;
    if (s.closed && (s.ooo.length === 0 || (flags & TCP_RST)) && this.streams.get(key) === s) {
      this.streams.delete(key);
      if (s.len > 0 || s.ooo.length > 0) this.stats.reassemblyDropped++;
    }
  }

  private newStream(key: string, next: number, midStream: boolean): TcpDirection {
    if (this.streams.size >= LIMITS.tcpStreamsOpenMax) {
      for (const [k, old] of this.streams) {
        this.dropStream(k, old);
        break;
      }
    }
    const s: TcpDirection = { first: midStream ? -1 : next, next, midStream, buf: new Uint8Array(1024), len: 0, ooo: [], oooBytes: 0, lastSec: this.sec, closed: false };
    this.streams.set(key, s);
    return s;
  }

  private dropStream(key: string, s: TcpDirection): void {
    this.streams.delete(key);
    if (s.len > 0 || s.ooo.length > 0) this.stats.reassemblyDropped++;
  }

  private expireStreams(): void {
    for (const [key, s] of this.streams) {
      if (this.sec - s.lastSec <= LIMITS.tcpStreamIdleSec) break;
      this.dropStream(key, s);
    }
  }

  private segment(key: string, s: TcpDirection, seq: number, data: Uint8Array): void {
    const diff = seqDiff(seq, s.next);
    if (diff > 0) {
      // Ahead of the next expected byte: hold a copy until the gap fills.
      if (diff > LIMITS.tcpStreamBytesMax || s.len + s.oooBytes + data.length > LIMITS.tcpStreamBytesMax) {
        this.dropStream(key, s);
        return;
      }
      s.ooo.push({ seq, data: data.slice() });
      s.oooBytes += data.length;
      return;
    }
    // At or behind the next byte: a retransmission overlaps what we have; keep only the new tail.
    if (-diff >= data.length) return;
    if (!this.append(key, s, data.subarray(-diff))) return;
    while (s.ooo.length > 0) {
      let progressed = false;
      for (let i = 0; i < s.ooo.length; i++) {
        const seg = s.ooo[i]!;
        const d = seqDiff(seg.seq, s.next);
        if (d > 0) continue;
        s.ooo.splice(i, 1);
        s.oooBytes -= seg.data.length;
        if (-d < seg.data.length && !this.append(key, s, seg.data.subarray(-d))) return;
        progressed = true;
        break;
      }
      if (!progressed) break;
    }
    this.frames(s);
  }

  private append(key: string, s: TcpDirection, data: Uint8Array): boolean {
    const need = s.len + data.length;
    if (need + s.oooBytes > LIMITS.tcpStreamBytesMax) {
      this.dropStream(key, s);
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
      this.dns(s.buf.slice(p + 2, p + 2 + n), false, s.midStream, 'tcp');
      p += 2 + n;
    }
    if (p > 0) {
      s.buf.copyWithin(0, p, s.len);
      s.len -= p;
    }
  }

  // --- DNS ---

  private dns(payload: Uint8Array, cut: boolean, midStream: boolean, transport: 'udp' | 'tcp'): void {
    const stats = this.stats;
    if (payload.length < 12) {
      if (cut) stats.snaplenCut++;
      else stats.notDns++;
      return;
    }
    const flags = payload[2]!;
    // Header checks first: parsing queries we then throw away would cost most of the time.
    if ((flags & 0x80) === 0) {
      stats.queries++;
      return;
    }
    const truncated = (flags & 0x02) !== 0;
    if (truncated && !this.keepTruncated) {
      stats.truncatedResponses++;
      return;
    }
    let msg: DnsMessage;
    try {
      msg = parseMessage(payload);
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'DNS_FORMAT') throw err;
      if (truncated) stats.truncatedResponses++;
      else if (cut) stats.snaplenCut++;
      else if (midStream || !plausibleHeader(payload)) stats.notDns++;
      else {
        stats.rejected++;
        this.ctx.reject(new IngestError(this.file, `packet ${this.packetNo} (byte offset ${this.packetOffset})`,
          `DNS response does not parse: ${(err as Error).message}`));
      }
      return;
    }
    this.out.push({ msg, timeSec: this.sec, transport });
  }

  finish(): void {
    this.defrag.finish();
    for (const [key, s] of this.streams) this.dropStream(key, s);
  }
}

/**
 * A header that could be a DNS response: a defined opcode (QUERY, IQUERY,
 * STATUS, NOTIFY, UPDATE, DSO) and at most one question, which every
 * server sends. Anything else on port 53 we treat as another protocol.
 */
function plausibleHeader(p: Uint8Array): boolean {
  const opcode = (p[2]! >> 3) & 0x0f;
  if (opcode === 3 || opcode > 6) return false;
  return u16(p, 4) <= 1;
}

// --- Containers ----------------------------------------------------------------

function reject(ctx: IngestContext, stats: SensorStats, where: string, reason: string): void {
  stats.rejected++;
  ctx.reject(new IngestError(ctx.file, where, reason));
}

export async function* pcapObservations(file: string, ctx: IngestContext): AsyncIterable<Observation> {
  const stats = sensorStats(ctx);
  for await (const r of pcapResponses(file, ctx)) {
    const obs = observeResponse(r.msg, r.timeSec, undefined, stats);
    for (let i = 0; i < obs.length; i++) yield obs[i]!;
  }
}

export interface PcapReadOptions {
  /** Also yield TC=1 responses that parse (pcapObservations never does): for counting records the way other tools do. */
  keepTruncated?: boolean;
}

/**
 * The parsed DNS responses of a capture (QR=1, TC=0 unless asked), each with
 * its packet time and transport, before any record filtering:
 * pcapObservations' first half, exported for tests and tools. A message's
 * arrays are its own; consume it before asking for the next.
 */
export async function* pcapResponses(file: string, ctx: IngestContext, opts: PcapReadOptions = {}): AsyncIterable<TimedResponse> {
  const stats = sensorStats(ctx);
  const src = await ChunkedFile.open(file, ctx);
  try {
    await src.fill(4);
    if (src.avail < 4) {
      reject(ctx, stats, 'byte offset 0', 'file too short for a pcap or pcapng header');
      return;
    }
    const magic = src.buf.readUInt32LE(src.start);
    const decoder = new PacketDecoder(file, ctx, stats, opts.keepTruncated === true);
    if (magic === PCAPNG_SHB) yield* readPcapng(src, decoder, ctx, stats);
    else if (magic === 0xa1b2c3d4 || magic === 0xd4c3b2a1 || magic === 0xa1b23c4d || magic === 0x4d3cb2a1) {
      yield* readPcap(src, decoder, ctx, stats);
    } else {
      reject(ctx, stats, 'byte offset 0', `not a pcap or pcapng file (magic 0x${magic.toString(16).padStart(8, '0')})`);
      return;
    }
    decoder.finish();
  } finally {
    await src.close();
  }
}

async function* readPcap(src: ChunkedFile, decoder: PacketDecoder, ctx: IngestContext, stats: SensorStats): AsyncGenerator<TimedResponse> {
  await src.fill(PCAP_HEADER_BYTES);
  if (src.avail < PCAP_HEADER_BYTES) {
    reject(ctx, stats, 'byte offset 0', 'file ends inside the pcap header');
    return;
  }
  const b = src.buf;
  const magic = b.readUInt32LE(src.start);
  const le = magic === 0xa1b2c3d4 || magic === 0xa1b23c4d;
  // Nanosecond files (0xa1b23c4d) differ only in the sub-second field, which whole-second times ignore.
  // The upper bits of the link type field carry FCS information (pcap-savefile(5)).
  const linktype = (le ? u32le(b, src.start + 20) : u32(b, src.start + 20)) & 0xffff;
  src.start += PCAP_HEADER_BYTES;
  let packetNo = 0;
  for (;;) {
    if (src.avail < PCAP_RECORD_BYTES) {
      await src.fill(PCAP_RECORD_BYTES);
      if (src.avail === 0) return;
      if (src.avail < PCAP_RECORD_BYTES) {
        reject(ctx, stats, `packet ${packetNo + 1} (byte offset ${src.offset})`, 'file ends inside a packet record header');
        return;
      }
    }
    const buf = src.bytes;
    const h = src.start;
    const sec = le ? u32le(buf, h) : u32(buf, h);
    const capLen = le ? u32le(buf, h + 8) : u32(buf, h + 8);
    packetNo++;
    if (capLen > LIMITS.pcapPacketBytesMax) {
      reject(ctx, stats, `packet ${packetNo} (byte offset ${src.offset})`,
        `captured length ${capLen} exceeds ${LIMITS.pcapPacketBytesMax} bytes: corrupt record`);
      return;
    }
    if (src.avail < PCAP_RECORD_BYTES + capLen) {
      await src.fill(PCAP_RECORD_BYTES + capLen);
      if (src.avail < PCAP_RECORD_BYTES + capLen) {
        reject(ctx, stats, `packet ${packetNo} (byte offset ${src.offset})`, 'file ends inside a packet');
        return;
      }
    }
    decoder.packetNo = packetNo;
    decoder.packetOffset = src.offset;
    decoder.sec = sec;
    const start = src.start + PCAP_RECORD_BYTES;
    decoder.frame(linktype, src.bytes, start, start + capLen);
    src.start = start + capLen;
    if (decoder.out.length > 0) {
      for (const o of decoder.out) yield o;
      decoder.out.length = 0;
    }
  }
}

interface PcapngInterface {
  linktype: number;
  snapLen: number;
  /** Timestamp units per second when decimal (if_tsresol high bit clear), else 0. */
  unitsPerSec: number;
  /** log2 of units per second when binary (if_tsresol high bit set). */
  binaryShift: number;
  offsetSec: number;
}

const TWO_POW_32 = 4294967296;

function pcapngSeconds(iface: PcapngInterface, high: number, low: number): number {
  const units = high * TWO_POW_32 + low;
  if (iface.unitsPerSec > 0) {
    // Below 2^53 the double is exact; nanosecond stamps of today are above it and need BigInt.
    const sec = units < Number.MAX_SAFE_INTEGER ? Math.floor(units / iface.unitsPerSec)
      : Number(((BigInt(high) << 32n) | BigInt(low)) / BigInt(iface.unitsPerSec));
    return sec + iface.offsetSec;
  }
  return Number(((BigInt(high) << 32n) | BigInt(low)) >> BigInt(iface.binaryShift)) + iface.offsetSec;
}

async function* readPcapng(src: ChunkedFile, decoder: PacketDecoder, ctx: IngestContext, stats: SensorStats): AsyncGenerator<TimedResponse> {
  let le = true;
  let interfaces: PcapngInterface[] = [];
  let packetNo = 0;
  let lastSec = 0;
  for (;;) {
    if (src.avail < 12) {
      await src.fill(12);
      if (src.avail === 0) return;
      if (src.avail < 12) {
        reject(ctx, stats, `byte offset ${src.offset}`, 'file ends inside a pcapng block header');
        return;
      }
    }
    let b = src.bytes;
    let h = src.start;
    const type = le ? u32le(b, h) : u32(b, h);
    if (type === PCAPNG_SHB || u32(b, h) === PCAPNG_SHB) {
      // A section header sets the byte order of everything up to the next one.
      const bom = u32le(b, h + 8);
      if (bom === PCAPNG_BOM) le = true;
      else if (bom === 0x4d3c2b1a) le = false;
      else {
        reject(ctx, stats, `byte offset ${src.offset}`, `bad pcapng byte-order magic 0x${bom.toString(16)}`);
        return;
      }
      interfaces = [];
    }
    const total = le ? u32le(b, h + 4) : u32(b, h + 4);
    if (total < 12 || total % 4 !== 0 || total > LIMITS.pcapngBlockBytesMax) {
      reject(ctx, stats, `byte offset ${src.offset}`, `bad pcapng block length ${total}`);
      return;
    }
    if (src.avail < total) {
      await src.fill(total);
      if (src.avail < total) {
        reject(ctx, stats, `byte offset ${src.offset}`, 'file ends inside a pcapng block');
        return;
      }
      b = src.bytes;
      h = src.start;
    }
    const trailer = le ? u32le(b, h + total - 4) : u32(b, h + total - 4);
    if (trailer !== total) {
      reject(ctx, stats, `byte offset ${src.offset}`, `pcapng block length ${total} disagrees with its trailer ${trailer}`);
      return;
    }
    const blockType = rd32(b, h + 0, le);
    let ifaceId = -1;
    let capLen = 0;
    let dataAt = 0;
    let sec = -1;
    if (blockType === 1 && total >= 20) { // Interface Description Block.
      const iface: PcapngInterface = { linktype: rd16(b, h + 8, le), snapLen: rd32(b, h + 12, le), unitsPerSec: 1e6, binaryShift: 0, offsetSec: 0 };
      for (let o = 16; o + 4 <= total - 4;) {
        const code = rd16(b, h + o, le);
        const len = rd16(b, h + o + 2, le);
        if (code === 0 || o + 4 + len > total - 4) break;
        if (code === 9 && len >= 1) { // if_tsresol
          const v = b[h + o + 4]!;
          if (v & 0x80) {
            iface.unitsPerSec = 0;
            iface.binaryShift = v & 0x7f;
          } else {
            iface.unitsPerSec = 10 ** v;
          }
        } else if (code === 14 && len >= 8) { // if_tsoffset, seconds, signed 64-bit
          const w0 = rd32(b, h + o + 4, le);
          const w1 = rd32(b, h + o + 8, le);
          // The high (signed) word comes second in little-endian sections, first in big-endian ones.
          iface.offsetSec = le ? (w1 | 0) * TWO_POW_32 + w0 : (w0 | 0) * TWO_POW_32 + w1;
        }
        o += 4 + ((len + 3) & ~3);
      }
      interfaces.push(iface);
    } else if (blockType === 6 && total >= 32) { // Enhanced Packet Block.
      ifaceId = rd32(b, h + 8, le);
      capLen = rd32(b, h + 20, le);
      dataAt = 28;
      const iface = interfaces[ifaceId];
      if (iface) sec = pcapngSeconds(iface, rd32(b, h + 12, le), rd32(b, h + 16, le));
    } else if (blockType === 2 && total >= 32) { // Obsolete Packet Block.
      ifaceId = rd16(b, h + 8, le);
      capLen = rd32(b, h + 20, le);
      dataAt = 28;
      const iface = interfaces[ifaceId];
      if (iface) sec = pcapngSeconds(iface, rd32(b, h + 12, le), rd32(b, h + 16, le));
    } else if (blockType === 3 && total >= 16) { // Simple Packet Block: no timestamp; the last packet's time stands in.
      ifaceId = 0;
      const snap = interfaces[0]?.snapLen || Infinity;
      capLen = Math.min(rd32(b, h + 8, le), total - 16, snap);
      dataAt = 12;
      sec = lastSec > 0 ? lastSec : -1;
    }
    if (ifaceId >= 0) {
      packetNo++;
      const iface = interfaces[ifaceId];
      if (!iface) {
        reject(ctx, stats, `packet ${packetNo} (byte offset ${src.offset})`, `packet names interface ${ifaceId}, which no block described`);
      } else if (dataAt + capLen > total - 4) {
        reject(ctx, stats, `packet ${packetNo} (byte offset ${src.offset})`, `captured length ${capLen} overruns its block`);
      } else if (sec >= 0) {
        lastSec = sec;
        decoder.packetNo = packetNo;
        decoder.packetOffset = src.offset;
        decoder.sec = sec;
        decoder.frame(iface.linktype, b, h + dataAt, h + dataAt + capLen);
      } else {
        stats.packets++;
        stats.otherTraffic++;
      }
    }
    src.start = h + total;
    if (decoder.out.length > 0) {
      for (const o of decoder.out) yield o;
      decoder.out.length = 0;
    }
  }
}
