// Generated captures for the pcap and dnstap fuzz targets: small valid files
// (DNS responses from the rdata seeds, over UDP, TCP or fragmented IPv4, in
// every link layer and container the readers know), which the targets then
// mutate byte by byte.

import fc from 'fast-check';
import { nameToWire } from '../../src/dns/name.js';
import { rdataToText } from '../../src/dns/rdata/index.js';
import {
  AA, ACK, PSH, QR, RA, RD, SYN, TC, be32, bsdNull, cat, control, dnsMessage, ethernet, fieldBytes, fieldVarint, ipv4, ipv6, pcapFile,
  pcapngFile, sll, sll2, tcp, tcpFramed, udp, type FixturePacket, type FixtureRr,
} from '../unit/ingest/wire-fixtures.js';
import { seedArb } from './rdata-seeds.js';

const ZONES = ['example.com.', 'example.', 'com.', '.'];
const LABELS = ['www', 'ns1', 'mail', 'a', 'xn--bcher-kva', '_sip._tcp'];

const ownerArb = fc.tuple(fc.constantFrom(...LABELS), fc.constantFrom(...ZONES))
  .map(([l, z]) => (z === '.' ? `${l}.` : `${l}.${z}`));

const rrArb: fc.Arbitrary<FixtureRr> = fc.record({
  name: ownerArb,
  type: fc.constant(0),
  rdata: fc.constant(new Uint8Array(0)),
  cls: fc.oneof({ weight: 9, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.constantFrom(3, 255) }),
  ttl: fc.nat({ max: 0xffffffff }),
}).chain((rr) => fc.oneof(
  { weight: 6, arbitrary: seedArb.map((s) => ({ ...rr, type: s.type, rdata: s.wire })) },
  // A well-framed record whose rdata is anything at all: the message parses, the rdata may not.
  { weight: 1, arbitrary: fc.tuple(seedArb, fc.uint8Array({ maxLength: 24 })).map(([s, rdata]) => ({ ...rr, type: s.type, rdata })) },
));

/** True when every record's rdata decodes (the random-rdata records may not). */
function decodes(rrs: readonly FixtureRr[]): boolean {
  return rrs.every((r) => {
    try {
      rdataToText(r.type, r.rdata);
      return true;
    } catch {
      return false;
    }
  });
}

/** A DNS message, mostly responses (some truncated), some queries; `clean` when all its rdata decodes. */
export const dnsMessageArb: fc.Arbitrary<{ msg: Uint8Array; clean: boolean }> = fc.record({
  id: fc.nat(0xffff),
  flags: fc.oneof({ weight: 8, arbitrary: fc.constant(QR | AA | RD | RA) }, { weight: 1, arbitrary: fc.constantFrom(RD, QR | TC, QR) }),
  qname: fc.option(ownerArb, { nil: undefined, freq: 8 }),
  answer: fc.array(rrArb, { maxLength: 3 }),
  authority: fc.array(rrArb, { maxLength: 2 }),
  additional: fc.array(rrArb, { maxLength: 2 }),
}).map((m) => ({ msg: dnsMessage(m), clean: decodes([...m.answer, ...m.authority, ...m.additional]) }));

type Transport = 'udp' | 'tcp' | 'frag';

/** The IP packets that carry one DNS message from a server (port 53) to a client. */
function ipPackets(msg: Uint8Array, transport: Transport, v6: boolean, port: number): Uint8Array[] {
  const ip = (proto: number, payload: Uint8Array, o = {}) =>
    (v6 ? ipv6('2001:db8::53', '2001:db8::1', proto, payload) : ipv4('192.0.2.53', '198.51.100.1', proto, payload, o));
  if (transport === 'udp') return [ip(17, udp(53, port, msg))];
  if (transport === 'tcp') {
    // The stream is seen opening, so the reader trusts its framing.
    return [ip(6, tcp(53, port, 1000, SYN | ACK)), ip(6, tcp(53, port, 1001, PSH | ACK, tcpFramed(msg)))];
  }
  // IPv4 fragments of one UDP datagram, split at an 8-byte boundary.
  const datagram = udp(53, port, msg);
  const cut = Math.max(8, Math.floor(datagram.length / 16) * 8);
  if (v6 || cut >= datagram.length) return [ip(17, datagram)];
  return [
    ipv4('192.0.2.53', '198.51.100.1', 17, datagram.subarray(0, cut), { id: port, moreFragments: true }),
    ipv4('192.0.2.53', '198.51.100.1', 17, datagram.subarray(cut), { id: port, fragOffset: cut }),
  ];
}

const LINKS: [number, (ip: Uint8Array) => Uint8Array][] = [
  [1, (ip) => ethernet(ip)], [1, (ip) => ethernet(ip, [100])], [113, sll], [276, sll2], [0, bsdNull], [101, (ip) => ip],
];

const packetSpecArb = fc.record({
  msg: dnsMessageArb,
  transport: fc.constantFrom<Transport>('udp', 'udp', 'tcp', 'frag'),
  v6: fc.boolean(),
  sec: fc.nat({ max: 2_000_000_000 }),
  port: fc.integer({ min: 1024, max: 65535 }),
});

/** A pcap or pcapng file of a few DNS messages; `clean` when nothing in it is malformed. */
export const pcapArb: fc.Arbitrary<{ bytes: Uint8Array; clean: boolean }> = fc.record({
  packets: fc.array(packetSpecArb, { minLength: 1, maxLength: 4 }),
  link: fc.nat(LINKS.length - 1),
  container: fc.constantFrom('pcap-le', 'pcap-be', 'pcap-ns', 'pcapng-us', 'pcapng-ns'),
}).map(({ packets, link, container }) => {
  const [linktype, frame] = LINKS[link]!;
  const records: FixturePacket[] = packets.flatMap((p) =>
    ipPackets(p.msg.msg, p.transport, p.v6, p.port).map((ip) => ({ sec: p.sec, frame: frame(ip) })));
  const clean = packets.every((p) => p.msg.clean);
  switch (container) {
    case 'pcap-le': return { bytes: pcapFile(records, linktype), clean };
    case 'pcap-be': return { bytes: pcapFile(records, linktype, true), clean };
    case 'pcap-ns': return { bytes: pcapFile(records, linktype, false, true), clean };
    case 'pcapng-us': return { bytes: pcapngFile(records, linktype, 6), clean };
    case 'pcapng-ns': return { bytes: pcapngFile(records, linktype, 9), clean };
  }
});

// ---------------------------------------------------------------------------
// dnstap: a protobuf and Frame Streams writer, just enough for the fields the reader uses.

const tapMessageArb = fc.record({
  dnstapType: fc.oneof({ weight: 9, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.constant(2) }),
  // Even types are responses, odd ones queries (dnstap.proto).
  type: fc.oneof({ weight: 6, arbitrary: fc.constantFrom(2, 4, 6, 8, 10, 12, 14) }, { weight: 1, arbitrary: fc.constantFrom(1, 3, 5) }),
  responseTimeSec: fc.option(fc.nat({ max: 2_000_000_000 }), { nil: undefined, freq: 6 }),
  queryTimeSec: fc.option(fc.nat({ max: 2_000_000_000 }), { nil: undefined }),
  zone: fc.option(fc.constantFrom(...ZONES), { nil: undefined }),
  response: fc.option(dnsMessageArb, { nil: undefined, freq: 8 }),
}).map((m) => {
  const msg = cat([
    fieldVarint(1, m.type), fieldVarint(2, 2), fieldVarint(3, 1),
    ...(m.queryTimeSec !== undefined ? [fieldVarint(8, m.queryTimeSec)] : []),
    ...(m.zone !== undefined ? [fieldBytes(11, nameToWire(m.zone))] : []),
    ...(m.responseTimeSec !== undefined ? [fieldVarint(12, m.responseTimeSec)] : []),
    ...(m.response !== undefined ? [fieldBytes(14, m.response.msg)] : []),
  ]);
  const tap = cat([fieldBytes(1, new TextEncoder().encode('fuzz')), fieldBytes(14, msg), fieldVarint(15, m.dnstapType)]);
  // A response without a time is refused, so a frame is clean only with one.
  const clean = m.response === undefined || (m.response.clean && (m.responseTimeSec !== undefined || m.queryTimeSec !== undefined));
  return { bytes: cat([be32(tap.length), tap]), clean };
});

/** A Frame Streams file of dnstap messages (START, data frames, sometimes a STOP); `clean` when nothing in it is malformed. */
export const dnstapArb: fc.Arbitrary<{ bytes: Uint8Array; clean: boolean }> = fc.record({
  frames: fc.array(tapMessageArb, { maxLength: 4 }),
  stop: fc.boolean(),
}).map(({ frames, stop }) => ({
  bytes: cat([control(2, 'protobuf:dnstap.Dnstap'), ...frames.map((f) => f.bytes), ...(stop ? [control(3)] : [])]),
  clean: frames.every((f) => f.clean),
}));
