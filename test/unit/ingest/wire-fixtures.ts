// Builders for the small captures the sensor tests generate: DNS messages,
// IPv4/IPv6/UDP/TCP packets, link-layer frames and pcap/pcapng/Frame Streams
// files. Checksums are left zero: the readers never verify them, as capture
// tools do not (offload makes them wrong in real captures anyway).

import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nameToWire } from '../../../src/dns/name.js';
import type { IngestContext } from '../../../src/ingest/context.js';

export interface FixtureRr {
  name: string;
  type: number;
  rdata: Uint8Array;
  cls?: number;
  ttl?: number;
}

export interface FixtureMessage {
  id?: number;
  /** Header flags word (QR, opcode, AA, TC, RD, RA, rcode); default a plain response 0x8180. */
  flags?: number;
  qname?: string;
  qtype?: number;
  answer?: FixtureRr[];
  authority?: FixtureRr[];
  additional?: FixtureRr[];
}

export const QR = 0x8000;
export const AA = 0x0400;
export const TC = 0x0200;
export const RD = 0x0100;
export const RA = 0x0080;

function cat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

function be16(v: number): Uint8Array {
  return Uint8Array.of(v >> 8, v & 0xff);
}

function be32(v: number): Uint8Array {
  return Uint8Array.of(v >>> 24, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff);
}

export function a(text: string): Uint8Array {
  return Uint8Array.from(text.split('.').map(Number));
}

export function dnsMessage(m: FixtureMessage): Uint8Array {
  const rr = (r: FixtureRr): Uint8Array =>
    cat([nameToWire(r.name), be16(r.type), be16(r.cls ?? 1), be32(r.ttl ?? 3600), be16(r.rdata.length), r.rdata]);
  const answer = m.answer ?? [];
  const authority = m.authority ?? [];
  const additional = m.additional ?? [];
  const question = m.qname === undefined ? [] : [cat([nameToWire(m.qname), be16(m.qtype ?? 1), be16(1)])];
  return cat([
    be16(m.id ?? 0x1234), be16(m.flags ?? QR | RD | RA),
    be16(question.length), be16(answer.length), be16(authority.length), be16(additional.length),
    ...question, ...answer.map(rr), ...authority.map(rr), ...additional.map(rr),
  ]);
}

export function udp(sport: number, dport: number, payload: Uint8Array): Uint8Array {
  return cat([be16(sport), be16(dport), be16(8 + payload.length), be16(0), payload]);
}

export const SYN = 0x02;
export const ACK = 0x10;
export const FIN = 0x01;
export const PSH = 0x08;

export function tcp(sport: number, dport: number, seq: number, flags: number, payload: Uint8Array = new Uint8Array(0)): Uint8Array {
  return cat([be16(sport), be16(dport), be32(seq), be32(0), Uint8Array.of(5 << 4, flags), be16(65535), be16(0), be16(0), payload]);
}

/** A 2-byte length prefix, as DNS over TCP frames each message. */
export function tcpFramed(msg: Uint8Array): Uint8Array {
  return cat([be16(msg.length), msg]);
}

export interface Ipv4Options {
  id?: number;
  moreFragments?: boolean;
  /** In bytes; a multiple of 8. */
  fragOffset?: number;
}

export function ipv4(src: string, dst: string, proto: number, payload: Uint8Array, o: Ipv4Options = {}): Uint8Array {
  const frag = (o.moreFragments ? 0x2000 : 0) | ((o.fragOffset ?? 0) / 8);
  return cat([
    Uint8Array.of(0x45, 0), be16(20 + payload.length), be16(o.id ?? 1), be16(frag), Uint8Array.of(64, proto), be16(0),
    a(src), a(dst), payload,
  ]);
}

function v6(text: string): Uint8Array {
  // Fixtures only use the full or "::n" forms.
  const out = new Uint8Array(16);
  if (text.startsWith('::')) {
    const v = parseInt(text.slice(2), 16);
    out[14] = v >> 8;
    out[15] = v & 0xff;
    return out;
  }
  text.split(':').forEach((h, i) => {
    const v = parseInt(h, 16);
    out[i * 2] = v >> 8;
    out[i * 2 + 1] = v & 0xff;
  });
  return out;
}

/** IPv6; `fragment` inserts a Fragment header (offset in bytes, a multiple of 8). */
export function ipv6(src: string, dst: string, proto: number, payload: Uint8Array,
  fragment?: { id: number; offset: number; more: boolean }): Uint8Array {
  let next = proto;
  let body = payload;
  if (fragment) {
    body = cat([Uint8Array.of(proto, 0), be16(fragment.offset | (fragment.more ? 1 : 0)), be32(fragment.id), payload]);
    next = 44;
  }
  return cat([Uint8Array.of(0x60, 0, 0, 0), be16(body.length), Uint8Array.of(next, 64), v6(src), v6(dst), body]);
}

export function ethernet(ip: Uint8Array, vlans: number[] = []): Uint8Array {
  const version = ip[0]! >> 4;
  const tags = vlans.map((v, i) => cat([be16(i === 0 && vlans.length > 1 ? 0x88a8 : 0x8100), be16(v)]));
  // Each tag is (TPID, TCI); the ethertype of the payload follows the last tag.
  const parts: Uint8Array[] = [new Uint8Array(12)];
  if (vlans.length === 0) parts.push(be16(version === 4 ? 0x0800 : 0x86dd));
  else {
    parts.push(tags[0]!.subarray(0, 2));
    for (let i = 0; i < vlans.length; i++) {
      parts.push(be16(vlans[i]!));
      parts.push(i + 1 < vlans.length ? be16(0x8100) : be16(version === 4 ? 0x0800 : 0x86dd));
    }
  }
  parts.push(ip);
  return cat(parts);
}

export function sll(ip: Uint8Array): Uint8Array {
  return cat([new Uint8Array(14), be16(ip[0]! >> 4 === 4 ? 0x0800 : 0x86dd), ip]);
}

export function sll2(ip: Uint8Array): Uint8Array {
  return cat([be16(ip[0]! >> 4 === 4 ? 0x0800 : 0x86dd), new Uint8Array(18), ip]);
}

export function bsdNull(ip: Uint8Array): Uint8Array {
  return cat([Uint8Array.of(2, 0, 0, 0), ip]);
}

export interface FixturePacket {
  sec: number;
  frame: Uint8Array;
  /** Original length when the capture cut the frame (snaplen). */
  origLen?: number;
}

export function pcapFile(packets: FixturePacket[], linktype = 1, bigEndian = false, nanos = false): Uint8Array {
  const w32 = (v: number): Uint8Array => {
    const b = Buffer.alloc(4);
    if (bigEndian) b.writeUInt32BE(v >>> 0);
    else b.writeUInt32LE(v >>> 0);
    return b;
  };
  const w16 = (v: number): Uint8Array => {
    const b = Buffer.alloc(2);
    if (bigEndian) b.writeUInt16BE(v);
    else b.writeUInt16LE(v);
    return b;
  };
  const parts: Uint8Array[] = [w32(nanos ? 0xa1b23c4d : 0xa1b2c3d4), w16(2), w16(4), w32(0), w32(0), w32(65535), w32(linktype)];
  for (const p of packets) {
    parts.push(w32(p.sec), w32(nanos ? 999_999_999 : 999_999), w32(p.frame.length), w32(p.origLen ?? p.frame.length), p.frame);
  }
  return cat(parts);
}

function pad4(b: Uint8Array): Uint8Array {
  return b.length % 4 === 0 ? b : cat([b, new Uint8Array(4 - (b.length % 4))]);
}

/** Little-endian pcapng: SHB, one IDB with if_tsresol = `tsresol`, then one EPB per packet. */
export function pcapngFile(packets: FixturePacket[], linktype = 1, tsresol = 6): Uint8Array {
  const le32 = (v: number): Uint8Array => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v >>> 0);
    return b;
  };
  const le16 = (v: number): Uint8Array => {
    const b = Buffer.alloc(2);
    b.writeUInt16LE(v);
    return b;
  };
  const block = (type: number, body: Uint8Array): Uint8Array => {
    const padded = pad4(body);
    const total = 12 + padded.length;
    return cat([le32(type), le32(total), padded, le32(total)]);
  };
  const parts: Uint8Array[] = [
    block(0x0a0d0d0a, cat([le32(0x1a2b3c4d), le16(1), le16(0), le32(0xffffffff), le32(0xffffffff)])),
    block(1, cat([le16(linktype), le16(0), le32(0), le16(9), le16(1), Uint8Array.of(tsresol, 0, 0, 0), le16(0), le16(0)])),
  ];
  for (const p of packets) {
    const units = BigInt(p.sec) * 10n ** BigInt(tsresol) + 123n;
    parts.push(block(6, cat([le32(0), le32(Number(units >> 32n)), le32(Number(units & 0xffffffffn)),
      le32(p.frame.length), le32(p.origLen ?? p.frame.length), pad4(p.frame)])));
  }
  return cat(parts);
}

let dir: string | undefined;

/** Writes bytes to a fresh temporary file and returns its path. */
export function tempFile(name: string, bytes: Uint8Array): string {
  dir ??= mkdtempSync(path.join(os.tmpdir(), 'rrscan-sensor-'));
  const file = path.join(dir, name);
  writeFileSync(file, bytes);
  return file;
}

/** A context that records rejects instead of counting toward --max-errors. */
export function collectingContext(file: string): IngestContext & { rejects: Error[]; progressed: number } {
  const ctx = {
    file,
    rejects: [] as Error[],
    progressed: 0,
    reject(err: Error) {
      ctx.rejects.push(err);
    },
    progress(bytes: number) {
      ctx.progressed = bytes;
    },
  };
  return ctx;
}

export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

export { be16, be32, cat };

// ---------------------------------------------------------------------------
// dnstap: a protobuf and Frame Streams writer, just enough for the fields the reader uses.

export function varint(v: number): Uint8Array {
  const out: number[] = [];
  while (v >= 0x80) {
    out.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return Uint8Array.from(out);
}
export const fieldVarint = (field: number, v: number): Uint8Array => cat([varint(field * 8), varint(v)]);
export const fieldBytes = (field: number, b: Uint8Array): Uint8Array => cat([varint(field * 8 + 2), varint(b.length), b]);
export const fieldFixed32 = (field: number, v: number): Uint8Array =>
  cat([varint(field * 8 + 5), Uint8Array.of(v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >>> 24)]);

/** A Frame Streams control frame (START 2, STOP 3, ...), with a content type field when given. */
export function control(type: number, contentType?: string): Uint8Array {
  const fields = contentType === undefined ? new Uint8Array(0)
    : cat([be32(1), be32(contentType.length), new TextEncoder().encode(contentType)]);
  const body = cat([be32(type), fields]);
  return cat([be32(0), be32(body.length), body]);
}

/** The dnstap Message fields the fixtures set; a zone is written as a wire name (query_zone). */
export interface TapFixture {
  type: number; responseTimeSec?: number; queryTimeSec?: number; query?: Uint8Array; response?: Uint8Array; zone?: string;
}

/** One Frame Streams data frame (length, then the Dnstap protobuf) holding one Message; `dnstapType` 1 is MESSAGE. */
export function dnstapFrame(m: TapFixture, dnstapType = 1): Uint8Array {
  const msg = cat([
    fieldVarint(1, m.type),
    fieldVarint(2, 2), // socket_family INET
    fieldVarint(3, 1), // socket_protocol UDP
    ...(m.queryTimeSec !== undefined ? [fieldVarint(8, m.queryTimeSec), fieldFixed32(9, 5)] : []),
    ...(m.query ? [fieldBytes(10, m.query)] : []),
    ...(m.zone ? [fieldBytes(11, nameToWire(m.zone))] : []),
    ...(m.responseTimeSec !== undefined ? [fieldVarint(12, m.responseTimeSec), fieldFixed32(13, 7)] : []),
    ...(m.response ? [fieldBytes(14, m.response)] : []),
  ]);
  const tap = cat([fieldBytes(1, new TextEncoder().encode('fixture')), fieldBytes(14, msg), fieldVarint(15, dnstapType)]);
  return cat([be32(tap.length), tap]);
}
