// One captured frame at a time, down to DNS payloads: link layer, IPv4 and
// IPv6 (extension headers skipped), UDP and TCP with either port 53.
//
// Contract: packet() decodes one frame of the given link type at the given
// place (packet number, record offset, whole-second time). Fragments go to
// the Defragmenter and the reassembled payload continues down the same path;
// TCP segments go to the TcpReassembler; UDP payloads and TCP messages go to
// DnsPayloads, whose `out` collects the parsed responses for the file reader
// to yield. Malformed headers and traffic that is not IP or not port 53
// count in stats.otherTraffic, frames of unknown link types in
// stats.unknownLinkType, headers or fragments cut by the snaplen in
// stats.snaplenCut. Limit (LIMITS): ipv6ExtensionHeadersMax headers are
// walked before the packet counts as other traffic.
// The packet's addresses and place are fields, so the nested calls need no
// closures or per-packet objects.

import { LIMITS } from '../../config/limits.js';
import type { IngestContext } from '../context.js';
import type { SensorStats, TimedResponse } from '../sensor.js';
import { u16, u32 } from '../../lib/bytes.js';
import { Defragmenter } from './ip-defrag.js';
import { ETHERTYPE_IPV4, ETHERTYPE_IPV6, link, linkPayload, UNKNOWN_LINK } from './link-layer.js';
import { DnsPayloads, type PacketPlace } from './outcomes.js';
import { TcpReassembler } from './tcp-reassembly.js';

const DNS_PORT = 53;
const IPPROTO_TCP = 6;
const IPPROTO_UDP = 17;

export class PacketDecoder implements PacketPlace {
  private readonly defrag: Defragmenter;
  private readonly tcpStreams: TcpReassembler;
  private readonly payloads: DnsPayloads;
  /** Parsed responses of the packets decoded so far; the reader empties it. */
  readonly out: TimedResponse[];
  /** 1-based packet number and file offset of its record, for error places. */
  packetNo = 0;
  packetOffset = 0;
  sec = 0;
  // The current packet's addresses, for TCP stream and fragment keys.
  private addrBuf: Uint8Array = new Uint8Array(0);
  private srcOff = 0;
  private dstOff = 0;
  private addrLen = 4;

  constructor(file: string, ctx: IngestContext, private readonly stats: SensorStats, keepTruncated: boolean) {
    this.defrag = new Defragmenter(stats);
    this.payloads = new DnsPayloads(file, ctx, stats, keepTruncated, this);
    this.out = this.payloads.out;
    this.tcpStreams = new TcpReassembler(stats, (message, midStream) => this.payloads.add(message, false, midStream, 'tcp'));
  }

  /** One captured frame, bytes [start, end) of b, of packet packetNo whose record starts at packetOffset. */
  packet(packetNo: number, packetOffset: number, sec: number, linktype: number, b: Uint8Array, start: number, end: number): void {
    this.packetNo = packetNo;
    this.packetOffset = packetOffset;
    this.sec = sec;
    this.stats.packets++;
    const ethertype = linkPayload(linktype, b, start, end);
    if (ethertype === ETHERTYPE_IPV4) this.ipv4(b, link.offset, end);
    else if (ethertype === ETHERTYPE_IPV6) this.ipv6(b, link.offset, end);
    else if (ethertype === UNKNOWN_LINK) this.stats.unknownLinkType++;
    else this.other();
  }

  /** Fragments and streams still unfinished at the end of the file. */
  finish(): void {
    this.defrag.finish();
    this.tcpStreams.finish();
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
          if ((field & 0xfff8) === 0 && (field & 1) === 0) { // An atomic fragment (RFC 6946): nothing to reassemble.
            next = fragNext;
            p += 8;
            continue;
          }
          return this.ipv6Fragment(fragNext, field, b, p, end, cut);
        }
        default:
          if (p > end) return this.other();
          return this.transport(next, b, p, end, cut);
      }
    }
    this.other();
  }

  /** The IPv6 Fragment header at b[p] (`field`: offset and M flag) and its fragment, up to end. */
  private ipv6Fragment(fragNext: number, field: number, b: Uint8Array, p: number, end: number, cut: boolean): void {
    if (cut) {
      this.stats.snaplenCut++;
      return;
    }
    const a = this.addrBuf;
    const key = `6 ${Buffer.from(a.buffer, a.byteOffset + this.srcOff, 32).toString('hex')} ${u32(b, p + 4)}`;
    const whole = this.defrag.add(key, field & 0xfff8, b.subarray(p + 8, end), (field & 1) === 0, this.sec);
    if (whole) this.ipv6Chain(fragNext, whole, 0, whole.length, false, false);
  }

  private transport(proto: number, b: Uint8Array, p: number, end: number, cut: boolean): void {
    if (proto === IPPROTO_UDP) this.udp(b, p, end, cut);
    else if (proto === IPPROTO_TCP) this.tcp(b, p, end, cut);
    else this.other();
  }

  private udp(b: Uint8Array, p: number, end: number, cut: boolean): void {
    if (end - p < 8) return cut ? void this.stats.snaplenCut++ : this.other();
    if (u16(b, p) !== DNS_PORT && u16(b, p + 2) !== DNS_PORT) return this.other();
    const udpLen = u16(b, p + 4);
    if (udpLen < 8) return this.other();
    let udpEnd = p + udpLen;
    if (udpEnd > end) {
      udpEnd = end;
      cut = true;
    }
    this.payloads.add(b.subarray(p + 8, udpEnd), cut, false, 'udp');
  }

  private tcp(b: Uint8Array, p: number, end: number, cut: boolean): void {
    if (end - p < 20) return cut ? void this.stats.snaplenCut++ : this.other();
    const sport = u16(b, p);
    const dport = u16(b, p + 2);
    if (sport !== DNS_PORT && dport !== DNS_PORT) return this.other();
    const dataOffset = (b[p + 12]! >> 4) * 4;
    if (dataOffset < 20 || p + dataOffset > end) return cut ? void this.stats.snaplenCut++ : this.other();
    this.tcpStreams.segment(this.streamKey(sport, dport), u32(b, p + 4), b[p + 13]!, b.subarray(p + dataOffset, end), cut, this.sec);
  }

  private streamKey(sport: number, dport: number): string {
    const a = this.addrBuf;
    const n = this.addrLen;
    const src = n === 4 ? u32(a, this.srcOff) : Buffer.from(a.buffer, a.byteOffset + this.srcOff, n).toString('hex');
    const dst = n === 4 ? u32(a, this.dstOff) : Buffer.from(a.buffer, a.byteOffset + this.dstOff, n).toString('hex');
    return `${src} ${sport} ${dst} ${dport}`;
  }
}
