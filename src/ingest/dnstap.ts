// dnstap files (Frame Streams of dnstap protobufs) -> Observations.
//
// Contract: dnstapObservations(file, ctx) streams a Frame Streams file
// (LIMITS.sensorReadChunkBytes per read, ctx.progress after each read),
// cut into frames by frame-streams.ts, as live senders are. Control frames
// (START / STOP / READY / ACCEPT / FINISH) are checked: a START whose content
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
import { hasCode, IngestError } from '../errors/catalogue.js';
import type { Observation } from '../model/observation.js';
import type { IngestContext } from './context.js';
import {
  CONTROL_ACCEPT, CONTROL_FINISH, CONTROL_READY, CONTROL_START, CONTROL_STOP, frameHead, parseControl, startRefusal,
} from './frame-streams.js';
import { ChunkedFile, observeResponse, sensorStats, type SensorStats, type TimedResponse } from './sensor.js';

export const DNSTAP_CONTENT_TYPE = 'protobuf:dnstap.Dnstap';
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
    if (!hasCode(err, 'DNS_FORMAT')) throw err;
    return new FrameRejection(`DNS response does not parse: ${(err as Error).message}`, false);
  }
  let zone: string | undefined;
  if (m.zoneStart >= 0) {
    try {
      zone = readWireName(b.subarray(m.zoneStart, m.zoneEnd), 0, false).name;
    } catch (err) {
      if (!hasCode(err, 'DNS_FORMAT')) throw err;
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
  const headAt = () => frameHead(src.buf, src.start, src.end);
  try {
    for (;;) {
      let head = headAt();
      if (head.kind === 'short') {
        await src.fill(head.need);
        if (src.avail === 0) return;
        head = headAt();
        if (head.kind === 'short' && head.need === 4) {
          reject(ctx, stats, `byte offset ${src.offset}`, 'file ends inside a frame length');
          return;
        }
      }
      const frameOffset = src.offset;
      frameNo++;
      const where = `frame ${frameNo} (byte offset ${frameOffset})`;
      if (head.kind === 'short') {
        // A control frame's escape, its length still to read.
        await src.fill(head.need);
        head = headAt();
        if (head.kind === 'short') {
          reject(ctx, stats, where, 'file ends inside a control frame');
          return;
        }
      }
      if (head.bad !== undefined) {
        reject(ctx, stats, where, head.bad);
        return;
      }
      if (src.avail < head.size) {
        await src.fill(head.size);
        if (src.avail < head.size) {
          reject(ctx, stats, where, `file ends inside a ${head.kind} frame`);
          return;
        }
      }
      const start = src.start + head.body;
      const end = src.start + head.size;
      src.start = end;
      if (head.kind === 'data') {
        const r = decodeDataFrame(src.bytes, start, end, stats);
        if (r instanceof FrameRejection) {
          reject(ctx, stats, where, r.reason);
        } else if (r !== undefined) yield r;
        continue;
      }
      // Control frames: a file is unidirectional (START, data, STOP); READY and ACCEPT are a socket's and let pass.
      const control = parseControl(src.buf, start, end);
      if (typeof control === 'string') {
        reject(ctx, stats, where, control);
        return;
      }
      const ctype = control.type;
      if (ctype === CONTROL_START) {
        const refusal = startRefusal(control, DNSTAP_CONTENT_TYPE);
        if (refusal !== undefined) {
          reject(ctx, stats, where, refusal);
          return;
        }
      } else if (ctype === CONTROL_STOP || ctype === CONTROL_FINISH) {
        return;
      } else if (ctype !== CONTROL_ACCEPT && ctype !== CONTROL_READY) {
        reject(ctx, stats, where, `unknown control frame type ${ctype}`);
        return;
      }
    }
  } finally {
    await src.close();
  }
}
