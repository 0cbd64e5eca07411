// pcapng files (draft-ietf-opsawg-pcapng): a sequence of blocks, each framed
// by its type and a length repeated in its trailer.
//
// Contract: readPcapng(src, decoder, ctx, stats) reads every block from
// the cursor (the caller has recognised the Section Header magic) to the end,
// hands each packet to the decoder and yields the responses it parsed.
// Section Header Blocks set the byte order and reset the interfaces;
// Interface Description Blocks give each interface its link type, snaplen
// and timestamp unit (if_tsresol, decimal or binary) and offset
// (if_tsoffset); Enhanced, obsolete and Simple Packet Blocks carry packets
// (a Simple one has no time: the previous packet's stands in, and without
// one it counts as other traffic). Other blocks are skipped. Broken block
// framing (bad length, trailer disagreeing, a file ending inside a block,
// a block above LIMITS.pcapngBlockBytesMax) is rejected naming its byte
// offset and reading stops; a packet naming an undescribed interface or
// overrunning its block is rejected naming the packet, and reading goes on.

import { LIMITS } from '../../config/limits.js';
import type { IngestContext } from '../context.js';
import type { ChunkedFile, SensorStats, TimedResponse } from '../sensor.js';
import { rd16, rd32, u32, u32le } from '../../lib/bytes.js';
import { rejectInput } from './outcomes.js';
import type { PacketDecoder } from './packet-decoder.js';

export const PCAPNG_SHB = 0x0a0d0d0a;
const PCAPNG_BOM = 0x1a2b3c4d;
const PCAPNG_BOM_SWAPPED = 0x4d3c2b1a;
const BLOCK_HEADER_BYTES = 12;
const TWO_POW_32 = 4294967296;

interface PcapngInterface {
  linktype: number;
  snapLen: number;
  /** Timestamp units per second when decimal (if_tsresol high bit clear), else 0. */
  unitsPerSec: number;
  /** log2 of units per second when binary (if_tsresol high bit set). */
  binaryShift: number;
  offsetSec: number;
}

/** What one section has said so far, and the packet count across sections. */
interface Section {
  le: boolean;
  interfaces: PcapngInterface[];
  packetNo: number;
  /** Time of the last packet that had one, for Simple Packet Blocks; 0 before. */
  lastSec: number;
}

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

/** An Interface Description Block of `total` bytes at b[h], with its options. */
function interfaceBlock(b: Uint8Array, h: number, total: number, le: boolean): PcapngInterface {
  const iface: PcapngInterface = {
    linktype: rd16(b, h + 8, le), snapLen: rd32(b, h + 12, le), unitsPerSec: 1e6, binaryShift: 0, offsetSec: 0,
  };
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
  return iface;
}

/** The packet fields of a packet block, set by packetFields. */
const pkt = { ifaceId: -1, capLen: 0, dataAt: 0, sec: -1 };

/** Fills `pkt` from an Enhanced (6), obsolete (2) or Simple (3) Packet Block; false for any other block. */
function packetFields(blockType: number, b: Uint8Array, h: number, total: number, st: Section): boolean {
  const le = st.le;
  if ((blockType === 6 || blockType === 2) && total >= 32) {
    pkt.ifaceId = blockType === 6 ? rd32(b, h + 8, le) : rd16(b, h + 8, le);
    pkt.capLen = rd32(b, h + 20, le);
    pkt.dataAt = 28;
    const iface = st.interfaces[pkt.ifaceId];
    pkt.sec = iface ? pcapngSeconds(iface, rd32(b, h + 12, le), rd32(b, h + 16, le)) : -1;
    return true;
  }
  if (blockType === 3 && total >= 16) { // Simple Packet Block: no timestamp; the last packet's time stands in.
    pkt.ifaceId = 0;
    const snap = st.interfaces[0]?.snapLen || Infinity;
    pkt.capLen = Math.min(rd32(b, h + 8, le), total - 16, snap);
    pkt.dataAt = 12;
    pkt.sec = st.lastSec > 0 ? st.lastSec : -1;
    return true;
  }
  return false;
}

/** The packet block of `total` bytes at b[h], whose fields are in `pkt`, to the decoder (or a reject). */
function packetBlock(b: Uint8Array, h: number, total: number, offset: number, st: Section, decoder: PacketDecoder,
  ctx: IngestContext, stats: SensorStats): void {
  const packetNo = ++st.packetNo;
  const { ifaceId, capLen, dataAt, sec } = pkt;
  const iface = st.interfaces[ifaceId];
  if (!iface) {
    rejectInput(ctx, stats, `packet ${packetNo} (byte offset ${offset})`, `packet names interface ${ifaceId}, which no block described`);
  } else if (dataAt + capLen > total - 4) {
    rejectInput(ctx, stats, `packet ${packetNo} (byte offset ${offset})`, `captured length ${capLen} overruns its block`);
  } else if (sec >= 0) {
    st.lastSec = sec;
    decoder.packet(packetNo, offset, sec, iface.linktype, b, h + dataAt, h + dataAt + capLen);
  } else {
    stats.packets++;
    stats.otherTraffic++;
  }
}

/**
 * Reads the block header at the cursor (12 bytes are there): a Section
 * Header sets the byte order first. Returns the block's length, or -1 after
 * rejecting a bad one.
 */
function blockLength(src: ChunkedFile, st: Section, ctx: IngestContext, stats: SensorStats): number {
  const b = src.bytes;
  const h = src.start;
  const type = st.le ? u32le(b, h) : u32(b, h);
  if (type === PCAPNG_SHB || u32(b, h) === PCAPNG_SHB) {
    // A section header sets the byte order of everything up to the next one.
    const bom = u32le(b, h + 8);
    if (bom === PCAPNG_BOM) st.le = true;
    else if (bom === PCAPNG_BOM_SWAPPED) st.le = false;
    else {
      rejectInput(ctx, stats, `byte offset ${src.offset}`, `bad pcapng byte-order magic 0x${bom.toString(16)}`);
      return -1;
    }
    st.interfaces = [];
  }
  const total = rd32(b, h + 4, st.le);
  if (total < 12 || total % 4 !== 0 || total > LIMITS.pcapngBlockBytesMax) {
    rejectInput(ctx, stats, `byte offset ${src.offset}`, `bad pcapng block length ${total}`);
    return -1;
  }
  return total;
}

/** One whole block of `total` bytes at the cursor; false after rejecting its framing. */
function block(src: ChunkedFile, total: number, st: Section, decoder: PacketDecoder, ctx: IngestContext, stats: SensorStats): boolean {
  const b = src.bytes;
  const h = src.start;
  const trailer = rd32(b, h + total - 4, st.le);
  if (trailer !== total) {
    rejectInput(ctx, stats, `byte offset ${src.offset}`, `pcapng block length ${total} disagrees with its trailer ${trailer}`);
    return false;
  }
  const blockType = rd32(b, h, st.le);
  if (blockType === 1 && total >= 20) st.interfaces.push(interfaceBlock(b, h, total, st.le));
  else if (packetFields(blockType, b, h, total, st)) packetBlock(b, h, total, src.offset, st, decoder, ctx, stats);
  return true;
}

export async function* readPcapng(src: ChunkedFile, decoder: PacketDecoder, ctx: IngestContext,
  stats: SensorStats): AsyncGenerator<TimedResponse> {
  const st: Section = { le: true, interfaces: [], packetNo: 0, lastSec: 0 };
  for (;;) {
    // Await only when a block straddles the window's end: most blocks are read without a promise.
    if (src.avail < BLOCK_HEADER_BYTES) {
      await src.fill(BLOCK_HEADER_BYTES);
      if (src.avail === 0) return;
      if (src.avail < BLOCK_HEADER_BYTES) {
        rejectInput(ctx, stats, `byte offset ${src.offset}`, 'file ends inside a pcapng block header');
        return;
      }
    }
    const total = blockLength(src, st, ctx, stats);
    if (total < 0) return;
    if (src.avail < total) {
      await src.fill(total);
      if (src.avail < total) {
        rejectInput(ctx, stats, `byte offset ${src.offset}`, 'file ends inside a pcapng block');
        return;
      }
    }
    if (!block(src, total, st, decoder, ctx, stats)) return;
    src.start += total;
    if (decoder.out.length > 0) {
      for (const o of decoder.out) yield o;
      decoder.out.length = 0;
    }
  }
}
