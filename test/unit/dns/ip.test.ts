import { describe, expect, it } from 'vitest';
import { ipv4FromText, ipv4ToText, ipv6FromText, ipv6ToText } from '../../../src/dns/ip.js';

const hex = (b: Uint8Array | undefined) => (b ? Buffer.from(b).toString('hex') : undefined);

describe('IPv4', () => {
  it('formats and parses dotted quads', () => {
    expect(ipv4ToText(Uint8Array.of(198, 41, 0, 4))).toBe('198.41.0.4');
    expect(ipv4ToText(Uint8Array.of(9, 9, 10, 0, 0, 255), 2)).toBe('10.0.0.255');
    expect(hex(ipv4FromText('198.41.0.4'))).toBe('c6290004');
    expect(hex(ipv4FromText('0.0.0.0'))).toBe('00000000');
    expect(hex(ipv4FromText('255.255.255.255'))).toBe('ffffffff');
  });

  it('refuses anything else, including octal-looking leading zeros', () => {
    for (const bad of ['', '1.2.3', '1.2.3.4.5', '256.1.1.1', '01.2.3.4', '1.2.3.04', '1..2.3', '1.2.3.4 ', 'a.b.c.d', '1.2.3.-4', '::1']) {
      expect(ipv4FromText(bad), bad).toBeUndefined();
    }
  });
});

describe('IPv6', () => {
  it('writes RFC 5952 canonical text', () => {
    const cases: [string, string][] = [
      ['20010db8000000000000000000000001', '2001:db8::1'],
      ['20010db8000000000001000000000001', '2001:db8::1:0:0:1'], // longest run wins
      ['20010db8000000010000000000000001', '2001:db8:0:1::1'], // first run of zeros is shorter
      ['20010db8000000000001000000000000', '2001:db8:0:0:1::'],
      ['20010000000000010000000000000001', '2001:0:0:1::1'],
      ['20010db8000000000001000000000001', '2001:db8::1:0:0:1'],
      ['20010db8000000010001000100010001', '2001:db8:0:1:1:1:1:1'], // a single zero group is not compressed
      ['00000000000000000000000000000000', '::'],
      ['00000000000000000000000000000001', '::1'],
      ['00010000000000000000000000000000', '1::'],
      ['00000000000000000000ffffc0000201', '::ffff:192.0.2.1'],
      ['20010503ba3e00000000000000020030', '2001:503:ba3e::2:30'],
      ['fe800000000000000202b3fffe1e8329', 'fe80::202:b3ff:fe1e:8329'],
    ];
    for (const [h, text] of cases) expect(ipv6ToText(Uint8Array.from(Buffer.from(h, 'hex'))), h).toBe(text);
    // A tie between two equal runs compresses the first.
    expect(ipv6ToText(Uint8Array.from(Buffer.from('20010000000000010001000000000001', 'hex')))).toBe('2001::1:1:0:0:1');
  });

  it('parses every RFC 4291 form, embedded IPv4 included', () => {
    expect(hex(ipv6FromText('2001:503:ba3e::2:30'))).toBe('20010503ba3e00000000000000020030');
    expect(hex(ipv6FromText('2001:0DB8:0000:0000:0000:0000:0000:0001'))).toBe('20010db8000000000000000000000001');
    expect(hex(ipv6FromText('::'))).toBe('00000000000000000000000000000000');
    expect(hex(ipv6FromText('::1'))).toBe('00000000000000000000000000000001');
    expect(hex(ipv6FromText('1::'))).toBe('00010000000000000000000000000000');
    expect(hex(ipv6FromText('::ffff:192.0.2.1'))).toBe('00000000000000000000ffffc0000201');
    expect(hex(ipv6FromText('64:ff9b::192.0.2.33'))).toBe('0064ff9b0000000000000000c0000221');
    expect(hex(ipv6FromText('1:2:3:4:5:6:1.2.3.4'))).toBe('00010002000300040005000601020304');
    expect(hex(ipv6FromText('1:2:3:4:5:6:7::'))).toBe('00010002000300040005000600070000');
  });

  it('refuses malformed text', () => {
    for (const bad of ['', ':', ':::', '1:2:3:4:5:6:7:8:9', '1::2::3', '12345::', 'g::', '1:2:3:4:5:6:7', ':1::', '1:', '1::2:',
      '::1.2.3', '1:2:3:4:5:6:7:1.2.3.4', '::256.1.1.1', 'fe80::1%eth0', '[::1]', '1:2:3:4:5:6:7:8::']) {
      expect(ipv6FromText(bad), bad).toBeUndefined();
    }
  });

  it('round-trips canonical text', () => {
    for (const t of ['2001:db8::1', '::', '::ffff:10.0.0.1', '2801:1b8:10::b', 'ff02::1:ff00:1', '1:2:3:4:5:6:7:8']) {
      expect(ipv6ToText(ipv6FromText(t)!)).toBe(t);
    }
  });
});
