// dnstap files (Frame Streams of dnstap protobufs) -> Observations.
//
// Contract: dnstapObservations(file, ctx) streams a Frame Streams file
// (LIMITS.sensorReadChunkBytes per read, ctx.progress after each read).
// Control frames (a zero "length" escape, then the control length and type
// START / STOP / READY / ACCEPT / FINISH) are checked: a START whose content
// type is not "protobuf:dnstap.Dnstap" rejects the file, STOP ends it. Each
// data frame (4-byte big-endian length, then a Dnstap protobuf) is decoded
// with the small wire reader below, which reads only the fields we use:
//   Dnstap  { type = 15 (MESSAGE = 1), message = 14 }
//   Message { type = 1, query_time_sec = 8, query_zone = 11,
//             response_time_sec = 12, response_message = 14 }
// Messages of a *_RESPONSE type (the even types 2..14: AUTH, RESOLVER,
// CLIENT, FORWARDER, STUB, TOOL, UPDATE) with a response_message become
// observations timed by response_time_sec (query_time_sec when the sender
// left it out).
//
// The bailiwick rule, for files and for live senders (live/sender.ts) alike;
// observeResponse (sensor.ts) then refuses, and counts as outOfBailiwick,
// every record whose owner is not at or under the bailiwick, as DNSDB's
// bailiwick reconstruction does:
//   RESOLVER_RESPONSE, FORWARDER_RESPONSE: query_zone, the resolver's own
//     delegation state (the zone it asked that server about). Without one
//     (a sender that leaves it out), inferred from the response as for a
//     packet capture between resolver and authority (sensor.ts rules 1-4).
//   AUTH_RESPONSE: the zone the authority answered from. BIND records it
//     as query_zone; without one it is inferred, which for an authority's
//     own answer finds the SOA (negative answers) or NS (referrals, and
//     answers that carry the zone's NS) it put in, else the question's
//     parent.
//   CLIENT_RESPONSE (a resolver's answers to its clients, cache hits
//     included), STUB, TOOL, UPDATE: kept, bailiwick query_zone when the
//     sender recorded one, else inferred. Kept rather than refused because
//     some servers emit nothing else (dnsdist, CoreDNS) and BIND logs an
//     authority's answer to an RD=1 query as a CLIENT_RESPONSE; the
//     inference drops what a recursive answer drags in from other zones (a
//     CNAME target's records). Counts from client responses count answers
//     given, cache hits included, not upstream fetches: feed resolver or
//     client messages, not both, for DNSDB-like counts.
//
// Bad input: a malformed frame or protobuf, or a response that does not
// parse, is rejected with its frame number and byte offset (`frame N (byte
// offset X)`) and reading goes on with the next frame; a bad frame length
// (beyond LIMITS.dnstapFrameBytesMax) or a file ending inside a frame stops
// the reading, since no later boundary can be trusted. Unlike a packet
// capture, everything in a dnstap file was written by the DNS software on
// purpose, so there is no "other traffic" to excuse. Queries, non-MESSAGE
// frames and responses without a response_message are counted in
// sensorStats(ctx) and skipped.

import type { DnsMessage } from '../dns/message.js';
import { parseMessage } from '../dns/message.js';
import { readWireName } from '../dns/name.js';
import { LIMITS } from '../config/limits.js';
import { IngestError } from '../errors/catalogue.js';
import type { Observation } from '../model/observation.js';
import type { IngestContext } from './context.js';
import { ChunkedFile, observeResponse, sensorStats, type SensorStats, type TimedResponse } from './sensor.js';
import { u32 } from '../lib/bytes.js';

export const DNSTAP_CONTENT_TYPE = 'protobuf:dnstap.Dnstap';
export const CONTROL_ACCEPT = 1;
export const CONTROL_START = 2;
export const CONTROL_STOP = 3;
export const CONTROL_READY = 4;
export const CONTROL_FINISH = 5;
const CONTROL_FIELD_CONTENT_TYPE = 1;
const DNSTAP_TYPE_MESSAGE = 1;

// Protobuf wire types.
const WT_VARINT = 0;
const WT_I64 = 1;
const WT_LEN = 2;
const WT_I32 = 5;


class ProtobufError extends Error {}

/**
 * The fields of one dnstap Message we use, as offsets into the frame so no
 * bytes are copied. -1 marks an absent field.
 */
class TapMessage {
  dnstapType = -1;
  messageStart = -1;
  messageEnd = -1;
  type = -1;
  queryTimeSec = -1;
  responseTimeSec = -1;
  zoneStart = -1;
  zoneEnd = -1;
  responseStart = -1;
  responseEnd = -1;

  reset(): void {
    this.dnstapType = this.messageStart = this.messageEnd = this.type = -1;
    this.queryTimeSec = this.responseTimeSec = this.zoneStart = this.zoneEnd = -1;
    this.responseStart = this.responseEnd = -1;
  }
}

/**
 * A protobuf wire reader over b[pos, end). Varints above 2^53 lose precision,
 * which no field we read can reach (times are seconds, types are small).
 * Errors give byte offsets from `origin`, the frame's first byte.
 */
class WireReader {
  b: Uint8Array = new Uint8Array(0);
  pos = 0;
  end = 0;
  origin = 0;

  get offset(): number {
    return this.pos - this.origin;
  }

  at(b: Uint8Array, pos: number, end: number): this {
    this.b = b;
    this.pos = pos;
    this.end = end;
    return this;
  }

  varint(): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new ProtobufError(`varint runs past the end at byte ${this.offset}`);
      const byte = this.b[this.pos++]!;
      value += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) return value;
      scale *= 128;
    }
    throw new ProtobufError(`varint longer than 10 bytes at byte ${this.offset}`);
  }

  /** Skips the value of a field of the given wire type; returns the start of a length-delimited value. */
  skip(wireType: number): number {
    switch (wireType) {
      case WT_VARINT:
        this.varint();
        return -1;
      case WT_I64:
        this.pos += 8;
        break;
      case WT_I32:
        this.pos += 4;
        break;
      case WT_LEN: {
        const len = this.varint();
        const start = this.pos;
        this.pos += len;
        if (this.pos > this.end) throw new ProtobufError(`length ${len} runs past the end at byte ${start - this.origin}`);
        return start;
      }
      default:
        throw new ProtobufError(`unsupported wire type ${wireType} at byte ${this.offset}`);
    }
    if (this.pos > this.end) throw new ProtobufError('fixed-width field runs past the end');
    return -1;
  }
}

const reader = new WireReader();

/** Fills `m` from the Dnstap protobuf in b[start, end). Throws ProtobufError on malformed input. */
function decodeDnstap(b: Uint8Array, start: number, end: number, m: TapMessage): void {
  m.reset();
  const r = reader.at(b, start, end);
  r.origin = start;
  while (r.pos < r.end) {
    const key = r.varint();
    const field = Math.floor(key / 8);
    const wt = key & 7;
    if (field === 15 && wt === WT_VARINT) m.dnstapType = r.varint();
    else if (field === 14 && wt === WT_LEN) {
      m.messageStart = r.skip(wt);
      m.messageEnd = r.pos;
    } else r.skip(wt);
  }
  if (m.messageStart < 0) return;
  r.at(b, m.messageStart, m.messageEnd);
  while (r.pos < r.end) {
    const key = r.varint();
    const field = Math.floor(key / 8);
    const wt = key & 7;
    if (wt === WT_VARINT && (field === 1 || field === 8 || field === 12)) {
      const v = r.varint();
      if (field === 1) m.type = v;
      else if (field === 8) m.queryTimeSec = v;
      else m.responseTimeSec = v;
    } else if (wt === WT_LEN && (field === 11 || field === 14)) {
      const s = r.skip(wt);
      if (field === 11) {
        m.zoneStart = s;
        m.zoneEnd = r.pos;
      } else {
        m.responseStart = s;
        m.responseEnd = r.pos;
      }
    } else r.skip(wt);
  }
}

function reject(ctx: IngestContext, stats: SensorStats, where: string, reason: string): void {
  stats.rejected++;
  ctx.reject(new IngestError(ctx.file, where, reason));
}

/** A control frame's type and content types, or the reason it is malformed. */
export interface ControlFrame {
  type: number;
  contentTypes: string[];
}

/** Parses a control frame's body b[start, end) (its type, then its fields); a string says why it is malformed. */
export function parseControl(b: Uint8Array, start: number, end: number): ControlFrame | string {
  if (end - start < 4) return `control frame of ${end - start} bytes has no type`;
  const out: ControlFrame = { type: u32(b, start), contentTypes: [] };
  for (let p = start + 4; p < end;) {
    if (p + 8 > end) return 'control frame field header runs past its end';
    const field = u32(b, p);
    const len = u32(b, p + 4);
    p += 8;
    if (len > end - p) return 'control frame field runs past its end';
    if (field === CONTROL_FIELD_CONTENT_TYPE) out.contentTypes.push(Buffer.from(b.buffer, b.byteOffset + p, len).toString('latin1'));
    p += len;
  }
  return out;
}

/** A whole control frame (escape, length, type, content type field when given), as the receiving end sends ACCEPT and FINISH. */
export function encodeControl(type: number, contentType?: string): Buffer {
  const ct = contentType === undefined ? Buffer.alloc(0) : Buffer.from(contentType, 'latin1');
  const body = 4 + (contentType === undefined ? 0 : 8 + ct.length);
  const out = Buffer.alloc(8 + body);
  out.writeUInt32BE(0, 0);
  out.writeUInt32BE(body, 4);
  out.writeUInt32BE(type, 8);
  if (contentType !== undefined) {
    out.writeUInt32BE(CONTROL_FIELD_CONTENT_TYPE, 12);
    out.writeUInt32BE(ct.length, 16);
    ct.copy(out, 20);
  }
  return out;
}

/**
 * Why a data frame was refused. `malformed`: its protobuf cannot be trusted
 * (a live sender sending one is closed); otherwise the frame was well formed
 * but its DNS content was not (counted, and the stream goes on).
 */
export class FrameRejection {
  constructor(readonly reason: string, readonly malformed: boolean) {}
}

const tap = new TapMessage();

/**
 * One data frame b[start, end) (the Dnstap protobuf, without its length):
 * the response it carries with its time and bailiwick, undefined when it is
 * skipped (a query, a non-MESSAGE frame, a response without a message: each
 * counted in `stats`), or a FrameRejection, which the caller counts as it
 * reports it.
 */
export function decodeDataFrame(b: Uint8Array, start: number, end: number, stats: SensorStats): TimedResponse | undefined | FrameRejection {
  const m = tap;
  stats.packets++;
  try {
    decodeDnstap(b, start, end, m);
  } catch (err) {
    if (!(err instanceof ProtobufError)) throw err;
    return new FrameRejection(`malformed dnstap protobuf: ${err.message}`, true);
  }
  if (m.dnstapType !== DNSTAP_TYPE_MESSAGE || m.type < 0) {
    stats.otherTraffic++;
    return undefined;
  }
  // Odd message types are queries, even ones responses (dnstap.proto).
  if ((m.type & 1) === 1) {
    stats.queries++;
    return undefined;
  }
  if (m.responseStart < 0) {
    stats.otherTraffic++;
    return undefined;
  }
  const sec = m.responseTimeSec >= 0 ? m.responseTimeSec : m.queryTimeSec;
  if (sec < 0) {
    return new FrameRejection('response message has no time', false);
  }
  let msg: DnsMessage;
  try {
    msg = parseMessage(b.subarray(m.responseStart, m.responseEnd));
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'DNS_FORMAT') throw err;
    return new FrameRejection(`DNS response does not parse: ${(err as Error).message}`, false);
  }
  let zone: string | undefined;
  if (m.zoneStart >= 0) {
    try {
      zone = readWireName(b.subarray(m.zoneStart, m.zoneEnd), 0, false).name;
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'DNS_FORMAT') throw err;
      return new FrameRejection(`query_zone does not parse: ${(err as Error).message}`, false);
    }
  }
  // The bailiwick rule (module comment): query_zone when the sender recorded it, else inferred by observeResponse.
  return zone === undefined ? { msg, timeSec: sec } : { msg, timeSec: sec, bailiwick: zone };
}

export async function* dnstapObservations(file: string, ctx: IngestContext): AsyncIterable<Observation> {
  const stats = sensorStats(ctx);
  for await (const r of dnstapResponses(file, ctx)) {
    const obs = observeResponse(r.msg, r.timeSec, r.bailiwick, stats);
    for (let i = 0; i < obs.length; i++) yield obs[i]!;
  }
}

/** The parsed DNS responses of a dnstap file with their times and query_zone: dnstapObservations' first half. */
export async function* dnstapResponses(file: string, ctx: IngestContext): AsyncIterable<TimedResponse> {
  const stats = sensorStats(ctx);
  const src = await ChunkedFile.open(file, ctx);
  let frameNo = 0;
  try {
    for (;;) {
      if (src.avail < 4) {
        await src.fill(4);
        if (src.avail === 0) return;
        if (src.avail < 4) {
          reject(ctx, stats, `byte offset ${src.offset}`, 'file ends inside a frame length');
          return;
        }
      }
      const frameOffset = src.offset;
      const len = u32(src.buf, src.start);
      frameNo++;
      const where = `frame ${frameNo} (byte offset ${frameOffset})`;
      if (len === 0) {
        // Control frame: escape, control length, then the control type and its fields.
        await src.fill(8);
        const clen = src.avail >= 8 ? u32(src.buf, src.start + 4) : -1;
        if (clen < 4 || clen > LIMITS.dnstapControlFrameBytesMax) {
          reject(ctx, stats, where, clen < 0 ? 'file ends inside a control frame' : `bad control frame length ${clen}`);
          return;
        }
        await src.fill(8 + clen);
        if (src.avail < 8 + clen) {
          reject(ctx, stats, where, 'file ends inside a control frame');
          return;
        }
        const control = parseControl(src.buf, src.start + 8, src.start + 8 + clen);
        if (typeof control === 'string') {
          reject(ctx, stats, where, control);
          return;
        }
        const ctype = control.type;
        if (ctype === CONTROL_START) {
          const contentType = control.contentTypes[0];
          if (contentType !== undefined && contentType !== DNSTAP_CONTENT_TYPE) {
            reject(ctx, stats, where, `content type "${contentType}" is not "${DNSTAP_CONTENT_TYPE}"`);
            return;
          }
        } else if (ctype === CONTROL_STOP || ctype === CONTROL_FINISH) {
          return;
        } else if (ctype !== CONTROL_ACCEPT && ctype !== CONTROL_READY) {
          reject(ctx, stats, where, `unknown control frame type ${ctype}`);
          return;
        }
        src.start += 8 + clen;
        continue;
      }
      if (len > LIMITS.dnstapFrameBytesMax) {
        reject(ctx, stats, where, `frame length ${len} exceeds ${LIMITS.dnstapFrameBytesMax} bytes`);
        return;
      }
      if (src.avail < 4 + len) {
        await src.fill(4 + len);
        if (src.avail < 4 + len) {
          reject(ctx, stats, where, 'file ends inside a data frame');
          return;
        }
      }
      const start = src.start + 4;
      src.start = start + len;
      const r = decodeDataFrame(src.bytes, start, start + len, stats);
      if (r instanceof FrameRejection) {
        reject(ctx, stats, where, r.reason);
      } else if (r !== undefined) yield r;
    }
  } finally {
    await src.close();
  }
}
