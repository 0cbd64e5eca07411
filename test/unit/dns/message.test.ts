import { describe, expect, it } from 'vitest';
import { parseMessage } from '../../../src/dns/message.js';
import { rdataToText } from '../../../src/dns/rdata/index.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex').toUpperCase();
const bytes = (h: string) => Uint8Array.from(Buffer.from(h.replace(/\s+/g, ''), 'hex'));

function thrown(fn: () => unknown): { code?: string; message: string } {
  try {
    fn();
  } catch (err) {
    return err as { code?: string; message: string };
  }
  throw new Error('expected a throw');
}

// A hand-built authoritative answer for "Example.COM. MX", compressed the way
// servers do it. Offsets on the right.
const RESPONSE = [
  '1234 8580 0001 0002 0001 0001', // 0: id, QR AA RD RA, 1 question, 2 answers, 1 authority, 1 additional
  '07 4578616D706C65 03 434F4D 00 000F 0001', // 12: Example.COM. MX IN
  'C00C 000F 0001 00000E10 0009 000A 04 4D61696C C00C', // 29: MX 10 Mail.<12>
  'C00C 000F 0001 00000E10 0008 0014 03 6D7832 C030', // 50: MX 20 mx2.<48, the pointer after "Mail">
  'C00C 0006 0001 00000E10 0027 03 6E7331 C00C 0A 686F73746D6173746572 C00C 78A554EC 00000708 00000384 00093A80 0000012C', // 70: SOA
  '00 0029 04D0 00008000 0000', // 121: OPT, 1232-octet UDP payload, DO bit
].join(' ');

describe('parseMessage', () => {
  it('reads header, question and every section of a compressed response', () => {
    const m = parseMessage(bytes(RESPONSE));
    expect({ id: m.id, qr: m.qr, opcode: m.opcode, aa: m.aa, tc: m.tc, rd: m.rd, ra: m.ra, rcode: m.rcode })
      .toEqual({ id: 0x1234, qr: true, opcode: 0, aa: true, tc: false, rd: true, ra: true, rcode: 0 });
    expect(m.questions).toEqual([{ name: 'example.com.', rrtype: 15, rrclass: 1 }]);

    expect(m.answers.map((r) => [r.name, r.rrtype, r.rrclass, r.ttl, rdataToText(r.rrtype, r.rdata)])).toEqual([
      ['example.com.', 15, 1, 3600, '10 mail.example.com.'],
      ['example.com.', 15, 1, 3600, '20 mx2.example.com.'],
    ]);
    // rdata comes back as uncompressed, lower-cased wire.
    expect(hex(m.answers[0]!.rdata)).toBe('000A046D61696C076578616D706C6503636F6D00');

    expect(m.authority).toHaveLength(1);
    const soa = m.authority[0]!;
    expect([soa.name, soa.rrtype, soa.ttl]).toEqual(['example.com.', 6, 3600]);
    expect(rdataToText(6, soa.rdata)).toBe('ns1.example.com. hostmaster.example.com. 2024101100 1800 900 604800 300');

    // OPT stays in the additional section; class carries the payload size.
    expect(m.additional.map((r) => [r.name, r.rrtype, r.rrclass, r.ttl, r.rdata.length])).toEqual([['.', 41, 1232, 0x8000, 0]]);
  });

  it('reads a header-only message and flags', () => {
    const m = parseMessage(bytes('ABCD 0103 0000 0000 0000 0000')); // query, RD, NXDOMAIN rcode
    expect([m.id, m.qr, m.rd, m.rcode, m.questions.length]).toEqual([0xabcd, false, true, 3, 0]);
    expect(parseMessage(bytes('0000 7A00 0000 0000 0000 0000')).opcode).toBe(15);
  });

  it('names the byte offset of what is wrong', () => {
    const cases: [string, RegExp][] = [
      ['1234 8580 0001', /shorter than the 12-octet header \(byte offset 0\)/],
      ['1234 8580 0001 0000 0000 0000 C00C 0001 0001', /byte offset 12 does not point backwards/],
      ['1234 8580 0001 0000 0000 0000 00 0001', /question 1 at byte offset 12 is truncated/],
      ['1234 8580 0000 0001 0000 0000 00 0001 0001 00000000', /answer record 1 at byte offset 12 is truncated/],
      ['1234 8580 0000 0001 0000 0000 00 0001 0001 00000000 0005 01020304', /rdata of 5 octets at byte offset 23 runs past/],
      ['1234 8580 0000 0001 0000 0000 00 0001 0001 00000000 0004 01020304 FF', /1 octets after the last record, at byte offset 27/],
      ['1234 8580 0000 0001 0000 0000 00 000F 0001 00000000 0004 000A C01B', /byte offset 25 does not point backwards/],
    ];
    for (const [h, re] of cases) {
      const e = thrown(() => parseMessage(bytes(h)));
      expect(e.code, h).toBe('DNS_FORMAT');
      expect(e.message, h).toMatch(re);
    }
  });

  it('bug: a well-framed record whose rdata does not decode was returned, and failed whoever printed it (pcap fuzz)', () => {
    // Counterexample of the pcap fuzz target: an additional A record of one octet.
    const e = thrown(() => parseMessage(bytes('0000 8580 0000 0000 0000 0001 00 0001 0001 00000000 0001 00')));
    expect(e.code).toBe('DNS_FORMAT');
    expect(e.message).toBe('additional record 1: malformed rdata: truncated IPv4 address at rdata offset 0 (rdata at byte offset 23)');
    // What parses comes with its text.
    expect(parseMessage(bytes('0000 8580 0000 0001 0000 0000 00 0001 0001 00000000 0004 C0000201')).answers[0]!.text).toBe('192.0.2.1');
  });

  it('rejects a compression loop inside the message', () => {
    // Question name at 12 points to 14, which points back to 12.
    const e = thrown(() => parseMessage(bytes('0000 0000 0001 0000 0000 0000 C00E C00C 0001 0001')));
    expect(e.code).toBe('DNS_FORMAT');
    expect(e.message).toMatch(/byte offset 12 does not point backwards \(to 14\)/);
  });
});
