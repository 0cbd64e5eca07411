import { describe, expect, it } from 'vitest';
import type { DnsMessage, DnsRecord } from '../../../src/dns/message.js';
import { nameToWire } from '../../../src/dns/name.js';
import { rdataToText } from '../../../src/dns/rdata/index.js';
import {
  inferBailiwick, isAtOrUnder, newSensorStats, observeResponse, parentName, responseObservations,
} from '../../../src/ingest/sensor.js';

const A = 1, NS = 2, SOA = 6, OPT = 41, DS = 43, TXT = 16, CNAME = 5, RRSIG = 46, DNSKEY = 48;

function rr(name: string, rrtype: number, rdata: Uint8Array, rrclass = 1): DnsRecord {
  return { name, rrtype, rrclass, ttl: 300, rdata, text: rdataToText(rrtype, rdata) };
}
const ip = (t: string): Uint8Array => Uint8Array.from(t.split('.').map(Number));
const soaRdata = (): Uint8Array => {
  const mname = nameToWire('a.root-servers.net.');
  const rname = nameToWire('nstld.verisign-grs.com.');
  const out = new Uint8Array(mname.length + rname.length + 20);
  out.set(mname, 0);
  out.set(rname, mname.length);
  const v = new DataView(out.buffer, mname.length + rname.length);
  [2016100600, 1800, 900, 604800, 86400].forEach((n, i) => v.setUint32(i * 4, n));
  return out;
};

function msg(p: Partial<DnsMessage> & { qname?: string }): DnsMessage {
  return {
    id: 1, qr: true, opcode: 0, aa: false, tc: false, rd: false, ra: false, rcode: 0,
    questions: p.qname === undefined ? [] : [{ name: p.qname, rrtype: A, rrclass: 1 }],
    answers: [], authority: [], additional: [],
    ...p,
  };
}

describe('names', () => {
  it('isAtOrUnder compares whole labels', () => {
    expect(isAtOrUnder('www.example.com.', 'example.com.')).toBe(true);
    expect(isAtOrUnder('example.com.', 'example.com.')).toBe(true);
    expect(isAtOrUnder('badexample.com.', 'example.com.')).toBe(false);
    expect(isAtOrUnder('com.', 'example.com.')).toBe(false);
    expect(isAtOrUnder('anything.', '.')).toBe(true);
    expect(isAtOrUnder('.', '.')).toBe(true);
  });

  it('an escaped dot is not a label boundary', () => {
    // "a\.example.com." has the labels "a.example" and "com".
    expect(isAtOrUnder('a\\.example.com.', 'example.com.')).toBe(false);
    expect(isAtOrUnder('a\\\\.example.com.', 'example.com.')).toBe(true); // an escaped backslash, then a real dot
    expect(parentName('a\\.b.example.com.')).toBe('example.com.');
  });

  it('parentName drops the first label', () => {
    expect(parentName('www.example.com.')).toBe('example.com.');
    expect(parentName('com.')).toBe('.');
    expect(parentName('.')).toBe('.');
  });
});

describe('inferBailiwick', () => {
  it('rule 1: the SOA in authority names the zone (NXDOMAIN from the root)', () => {
    const m = msg({ qname: 'mgaqzwockh.belkin.', aa: true, rcode: 3, authority: [rr('.', SOA, soaRdata())] });
    expect(inferBailiwick(m)).toBe('.');
  });

  it('rule 1 ignores an SOA that does not enclose the question', () => {
    const m = msg({ qname: 'www.example.com.', aa: true, authority: [rr('example.net.', SOA, soaRdata())] });
    expect(inferBailiwick(m)).toBe('example.com.'); // rule 4
  });

  it('rule 2: a referral comes from the parent of the delegated zone', () => {
    const tld = msg({ qname: 'www.example.com.', authority: [rr('com.', NS, nameToWire('a.gtld-servers.net.'))] });
    expect(inferBailiwick(tld)).toBe('.');
    const sld = msg({ qname: 'www.example.com.', authority: [rr('example.com.', NS, nameToWire('ns1.example.com.'))] });
    expect(inferBailiwick(sld)).toBe('com.');
  });

  it('rule 3: NS of the zone in an authoritative or recursive answer', () => {
    const auth = msg({
      qname: 'www.example.com.', aa: true,
      answers: [rr('www.example.com.', A, ip('192.0.2.1'))],
      authority: [rr('example.com.', NS, nameToWire('ns1.example.com.'))],
    });
    expect(inferBailiwick(auth)).toBe('example.com.');
    const apex = msg({ qname: 'example.com.', answers: [rr('example.com.', NS, nameToWire('ns1.example.com.'))] });
    expect(inferBailiwick(apex)).toBe('example.com.');
  });

  it('rule 3: apex-only types and RRSIG signers in the answer', () => {
    const rrsig = (covered: number, signer: string): Uint8Array => {
      const fixed = new Uint8Array(18);
      new DataView(fixed.buffer).setUint16(0, covered);
      const name = nameToWire(signer);
      const out = new Uint8Array(18 + name.length + 4);
      out.set(fixed, 0);
      out.set(name, 18);
      return out;
    };
    const dnskey = msg({ qname: 'upenn.edu.', answers: [rr('upenn.edu.', DNSKEY, Uint8Array.of(1, 0, 3, 5, 1))] });
    expect(inferBailiwick(dnskey)).toBe('upenn.edu.');
    // A DS lives at the child's apex but the parent signs and serves it.
    const ds = msg({
      qname: 'upenn.edu.',
      answers: [rr('upenn.edu.', DS, Uint8Array.of(0x48, 0x1f, 5, 1, 0xaa)), rr('upenn.edu.', RRSIG, rrsig(DS, 'edu.'))],
    });
    expect(inferBailiwick(ds)).toBe('edu.');
    const signedA = msg({
      qname: 'www.sub.example.com.',
      answers: [rr('www.sub.example.com.', A, ip('192.0.2.1')), rr('www.sub.example.com.', RRSIG, rrsig(A, 'example.com.'))],
    });
    expect(inferBailiwick(signedA)).toBe('example.com.');
    // A signer that does not enclose the question proves nothing.
    const foreign = msg({ qname: 'www.example.com.', answers: [rr('www.example.com.', RRSIG, rrsig(A, 'example.net.'))] });
    expect(inferBailiwick(foreign)).toBe('example.com.');
  });

  it('rule 4: nothing proves a cut, so the question name\'s parent', () => {
    expect(inferBailiwick(msg({ qname: 'www.example.com.', answers: [rr('www.example.com.', A, ip('192.0.2.1'))] }))).toBe('example.com.');
    expect(inferBailiwick(msg({ qname: 'com.' }))).toBe('.');
  });

  it('no question, no bailiwick', () => {
    expect(inferBailiwick(msg({}))).toBeUndefined();
  });
});

describe('responseObservations', () => {
  const referral = msg({
    qname: 'www.example.com.', id: 7,
    authority: [
      rr('com.', NS, nameToWire('a.gtld-servers.net.')),
      rr('com.', NS, nameToWire('b.gtld-servers.net.')),
      rr('com.', DS, Uint8Array.of(0x78, 0xbd, 8, 2, 1, 2, 3, 4)),
    ],
    additional: [
      rr('a.gtld-servers.net.', A, ip('192.5.6.30')),
      rr('b.gtld-servers.net.', A, ip('192.33.14.30')),
      rr('a.gtld-servers.net.', A, ip('192.5.6.30')), // duplicate: deduplicated
      rr('.', OPT, new Uint8Array(0), 4096), // EDNS: dropped
      rr('version.bind.', TXT, Uint8Array.of(1, 0x78), 3), // class CH: dropped
    ],
  });

  it('groups RRsets across sections with count 1 and the packet second', () => {
    const stats = newSensorStats();
    const obs = observeResponse(referral, 1475762100.9, undefined, stats);
    expect(obs.map((o) => [o.rrname, o.rrtype, o.bailiwick, o.rdata.map((r) => r.text), o.count, o.timeFirst, o.timeLast, o.zoneTimeFirst]))
      .toEqual([
        ['com.', NS, '.', ['a.gtld-servers.net.', 'b.gtld-servers.net.'], 1, 1475762100, 1475762100, 0],
        ['com.', DS, '.', ['30909 8 2 01020304'], 1, 1475762100, 1475762100, 0],
        ['a.gtld-servers.net.', A, '.', ['192.5.6.30'], 1, 1475762100, 1475762100, 0],
        ['b.gtld-servers.net.', A, '.', ['192.33.14.30'], 1, 1475762100, 1475762100, 0],
      ]);
    expect(stats).toMatchObject({ responses: 1, records: 8, metaOrClass: 2, outOfBailiwick: 0, observations: 4 });
  });

  it('bug: a record of the reserved type 0 became an observation (pcap fuzz counterexample)', () => {
    const stats = newSensorStats();
    const response = msg({ qname: 'www.com.', answers: [rr('www.com.', 0, new Uint8Array(0)), rr('www.com.', A, ip('192.0.2.1'))] });
    const obs = observeResponse(response, 1, 'com.', stats);
    expect(obs.map((o) => [o.rrname, o.rrtype])).toEqual([['www.com.', A]]);
    expect(stats).toMatchObject({ records: 2, metaOrClass: 1, observations: 1 });
  });

  it('drops records outside the bailiwick (poisoned glue)', () => {
    const poisoned = msg({
      qname: 'www.example.com.',
      authority: [rr('example.com.', NS, nameToWire('ns.example.com.'))],
      additional: [rr('ns.example.com.', A, ip('192.0.2.53')), rr('www.bank.test.', A, ip('203.0.113.66'))],
    });
    const stats = newSensorStats();
    const obs = observeResponse(poisoned, 100, undefined, stats);
    expect(obs.map((o) => `${o.rrname} ${o.bailiwick}`)).toEqual(['example.com. com.', 'ns.example.com. com.']);
    expect(stats.outOfBailiwick).toBe(1);
  });

  it('a recorded zone replaces inference, and drops a cross-zone CNAME target', () => {
    const answer = msg({
      qname: 'www.example.com.', ra: true,
      answers: [rr('www.example.com.', CNAME, nameToWire('edge.cdn.test.')), rr('edge.cdn.test.', A, ip('198.51.100.7'))],
    });
    expect(observeResponse(answer, 5, 'example.com.').map((o) => [o.rrname, o.bailiwick])).toEqual([['www.example.com.', 'example.com.']]);
  });

  it('owns its rdata bytes', () => {
    const backing = new Uint8Array(64);
    backing.set(ip('192.0.2.9'), 10);
    const m = msg({ qname: 'x.example.', answers: [rr('x.example.', A, backing.subarray(10, 14))] });
    const [o] = responseObservations(m, 1);
    backing.fill(0);
    expect(o!.rdata[0]!.text).toBe('192.0.2.9');
    expect([...o!.rdata[0]!.wire]).toEqual([192, 0, 2, 9]);
    expect(o!.rdata[0]!.wire.buffer.byteLength).toBe(4);
  });

  it('skips queries and truncated responses', () => {
    const stats = newSensorStats();
    expect(observeResponse(msg({ qname: 'a.example.', qr: false }), 1, undefined, stats)).toEqual([]);
    const truncated = msg({ qname: 'a.example.', tc: true, answers: [rr('a.example.', A, ip('192.0.2.1'))] });
    expect(observeResponse(truncated, 1, undefined, stats)).toEqual([]);
    expect(observeResponse(msg({ answers: [rr('a.example.', A, ip('192.0.2.1'))] }), 1, undefined, stats)).toEqual([]);
    expect(stats).toMatchObject({ queries: 1, truncatedResponses: 1, noQuestion: 1, responses: 0 });
  });
});
