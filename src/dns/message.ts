// DNS messages (RFC 1035 section 4): one UDP payload or one TCP message
// (without its two-byte length prefix) -> header, questions and the three
// record sections.
//
// Contract. Names come back as lower-case presentation with a trailing dot;
// rdata as uncompressed canonical wire (rdataFromMessage: compressed names
// expanded and lower-cased) and as its canonical text. OPT records stay in
// `additional` (callers drop them, with the other meta types). Anything
// malformed, rdata whose fields do not decode included, and bytes left
// over after the last record, throw DnsFormatError naming the byte offset;
// no partial message is returned, since a sensor cannot tell which of its
// records to trust. Work is bounded by the buffer: every record consumes at
// least 11 octets, so the 16-bit section counts cannot make us loop longer
// than the data lasts.

import { DnsFormatError, hasCode } from '../errors/catalogue.js';
import { nameFromWire } from './name.js';
import { rdataFromMessage, rdataToText } from './rdata/index.js';

export interface DnsRecord {
  name: string;
  rrtype: number;
  rrclass: number;
  ttl: number;
  /** Uncompressed wire form. */
  rdata: Uint8Array;
  /** Canonical presentation of rdata (rdataToText). */
  text: string;
}

export interface DnsQuestion {
  name: string;
  rrtype: number;
  rrclass: number;
}

export interface DnsMessage {
  id: number;
  qr: boolean;
  opcode: number;
  aa: boolean;
  tc: boolean;
  rd: boolean;
  ra: boolean;
  rcode: number;
  questions: DnsQuestion[];
  answers: DnsRecord[];
  authority: DnsRecord[];
  additional: DnsRecord[];
}

export const DNS_HEADER_OCTETS = 12;

function u16(b: Uint8Array, p: number): number {
  return (b[p]! << 8) | b[p + 1]!;
}

function readRecords(buf: Uint8Array, pos: number, count: number, out: DnsRecord[], section: string): number {
  for (let i = 0; i < count; i++) {
    const start = pos;
    const { name, end } = nameFromWire(buf, pos);
    pos = end;
    if (pos + 10 > buf.length) {
      throw new DnsFormatError(`${section} record ${i + 1} at byte offset ${start} is truncated (header needs 10 octets at ${pos})`);
    }
    const rrtype = u16(buf, pos);
    const rrclass = u16(buf, pos + 2);
    const ttl = ((buf[pos + 4]! << 24) | (buf[pos + 5]! << 16) | (buf[pos + 6]! << 8) | buf[pos + 7]!) >>> 0;
    const rdlength = u16(buf, pos + 8);
    pos += 10;
    if (pos + rdlength > buf.length) {
      throw new DnsFormatError(
        `${section} record ${i + 1}: rdata of ${rdlength} octets at byte offset ${pos} runs past the end of the message`);
    }
    const rdata = rdataFromMessage(rrtype, buf, pos, rdlength);
    // rdataFromMessage checks names and field framing only: fields that do
    // not decode (an A of 3 octets, bad SVCB parameters) are found by
    // printing, which every record needs anyway. Printed here, a malformed
    // record fails the message with its offset instead of failing whoever
    // prints it later.
    let text: string;
    try {
      text = rdataToText(rrtype, rdata);
    } catch (err) {
      if (!hasCode(err, 'DNS_FORMAT')) throw err;
      throw new DnsFormatError(`${section} record ${i + 1}: ${(err as Error).message} (rdata at byte offset ${pos})`);
    }
    pos += rdlength;
    out.push({ name, rrtype, rrclass, ttl, rdata, text });
  }
  return pos;
}

/** Parses one DNS message; throws DnsFormatError with the byte offset of the problem. */
export function parseMessage(buf: Uint8Array): DnsMessage {
  if (buf.length < DNS_HEADER_OCTETS) {
    throw new DnsFormatError(`message of ${buf.length} octets is shorter than the 12-octet header (byte offset 0)`);
  }
  const flags = u16(buf, 2);
  const qd = u16(buf, 4), an = u16(buf, 6), ns = u16(buf, 8), ar = u16(buf, 10);
  const msg: DnsMessage = {
    id: u16(buf, 0),
    qr: (flags & 0x8000) !== 0,
    opcode: (flags >> 11) & 0xf,
    aa: (flags & 0x0400) !== 0,
    tc: (flags & 0x0200) !== 0,
    rd: (flags & 0x0100) !== 0,
    ra: (flags & 0x0080) !== 0,
    rcode: flags & 0xf,
    questions: [],
    answers: [],
    authority: [],
    additional: [],
  };
  let pos = DNS_HEADER_OCTETS;
  for (let i = 0; i < qd; i++) {
    const start = pos;
    const { name, end } = nameFromWire(buf, pos);
    pos = end;
    if (pos + 4 > buf.length) throw new DnsFormatError(`question ${i + 1} at byte offset ${start} is truncated`);
    msg.questions.push({ name, rrtype: u16(buf, pos), rrclass: u16(buf, pos + 2) });
    pos += 4;
  }
  pos = readRecords(buf, pos, an, msg.answers, 'answer');
  pos = readRecords(buf, pos, ns, msg.authority, 'authority');
  pos = readRecords(buf, pos, ar, msg.additional, 'additional');
  if (pos !== buf.length) throw new DnsFormatError(`${buf.length - pos} octets after the last record, at byte offset ${pos}`);
  return msg;
}
