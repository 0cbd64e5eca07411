// Classic libpcap files (pcap-savefile(5)): the file header, then a 16-byte
// record header before each captured packet.
//
// Contract: readPcap(src, decoder, ctx, stats) reads from the file header
// (src at byte 0; the caller has recognised the magic) to the end, hands
// each packet to the decoder and yields the responses it parsed. Either
// byte order; microsecond and nanosecond files alike, since only whole
// seconds are kept. A truncated header or record, or a captured length
// above LIMITS.pcapPacketBytesMax (a corrupt record), is rejected naming
// the packet and its byte offset, and reading stops there.

import { LIMITS } from '../../config/limits.js';
import type { IngestContext } from '../context.js';
import type { ChunkedFile, SensorStats, TimedResponse } from '../sensor.js';
import { rd32 } from '../../lib/bytes.js';
import { rejectInput } from './outcomes.js';
import type { PacketDecoder } from './packet-decoder.js';

const PCAP_HEADER_BYTES = 24;
const PCAP_RECORD_BYTES = 16;
/** Magic numbers as read little-endian: microsecond and nanosecond files written little-endian. */
const LE_MAGICS = [0xa1b2c3d4, 0xa1b23c4d];
/** The same files written big-endian. */
const BE_MAGICS = [0xd4c3b2a1, 0x4d3cb2a1];

export function isPcapMagic(magicLe: number): boolean {
  return LE_MAGICS.includes(magicLe) || BE_MAGICS.includes(magicLe);
}

/**
 * Whether the record at the cursor and its packet are in the window, with a plausible length: the common case,
 * decided without a promise.
 */
function recordReady(src: ChunkedFile, le: boolean): boolean {
  if (src.avail < PCAP_RECORD_BYTES) return false;
  const capLen = rd32(src.bytes, src.start + 8, le);
  return capLen <= LIMITS.pcapPacketBytesMax && src.avail >= PCAP_RECORD_BYTES + capLen;
}

/**
 * Reads until the record at the cursor and its packet are in the window;
 * false when the file ends first (cleanly, or after a reject) or the record
 * is corrupt (after a reject).
 */
async function fillRecord(src: ChunkedFile, le: boolean, packetNo: number, ctx: IngestContext, stats: SensorStats): Promise<boolean> {
  if (src.avail < PCAP_RECORD_BYTES) {
    await src.fill(PCAP_RECORD_BYTES);
    if (src.avail === 0) return false;
    if (src.avail < PCAP_RECORD_BYTES) {
      rejectInput(ctx, stats, `packet ${packetNo} (byte offset ${src.offset})`, 'file ends inside a packet record header');
      return false;
    }
  }
  const capLen = rd32(src.bytes, src.start + 8, le);
  if (capLen > LIMITS.pcapPacketBytesMax) {
    rejectInput(ctx, stats, `packet ${packetNo} (byte offset ${src.offset})`,
      `captured length ${capLen} exceeds ${LIMITS.pcapPacketBytesMax} bytes: corrupt record`);
    return false;
  }
  if (src.avail < PCAP_RECORD_BYTES + capLen) {
    await src.fill(PCAP_RECORD_BYTES + capLen);
    if (src.avail < PCAP_RECORD_BYTES + capLen) {
      rejectInput(ctx, stats, `packet ${packetNo} (byte offset ${src.offset})`, 'file ends inside a packet');
      return false;
    }
  }
  return true;
}

export async function* readPcap(src: ChunkedFile, decoder: PacketDecoder, ctx: IngestContext,
  stats: SensorStats): AsyncGenerator<TimedResponse> {
  await src.fill(PCAP_HEADER_BYTES);
  if (src.avail < PCAP_HEADER_BYTES) {
    rejectInput(ctx, stats, 'byte offset 0', 'file ends inside the pcap header');
    return;
  }
  const le = LE_MAGICS.includes(src.buf.readUInt32LE(src.start));
  // Nanosecond files differ only in the sub-second field, which whole-second times ignore.
  // The upper bits of the link type field carry FCS information (pcap-savefile(5)).
  const linktype = rd32(src.buf, src.start + 20, le) & 0xffff;
  src.start += PCAP_HEADER_BYTES;
  for (let packetNo = 1; ; packetNo++) {
    if (!recordReady(src, le) && !(await fillRecord(src, le, packetNo, ctx, stats))) return;
    const buf = src.bytes;
    const h = src.start;
    const capLen = rd32(buf, h + 8, le);
    const start = h + PCAP_RECORD_BYTES;
    decoder.packet(packetNo, src.offset, rd32(buf, h, le), linktype, buf, start, start + capLen);
    src.start = start + capLen;
    if (decoder.out.length > 0) {
      for (const o of decoder.out) yield o;
      decoder.out.length = 0;
    }
  }
}
