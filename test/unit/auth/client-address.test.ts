import { describe, expect, it } from 'vitest';
import { ClientAllowList, parseAllowCidr } from '../../../src/auth/client-address.js';

describe('parseAllowCidr', () => {
  it('reads IPv4 and IPv6 CIDRs and bare addresses', () => {
    expect(parseAllowCidr('192.0.2.0/24')).toEqual({ address: '192.0.2.0', prefix: 24, family: 'ipv4' });
    expect(parseAllowCidr('2001:db8::/32')).toEqual({ address: '2001:db8::', prefix: 32, family: 'ipv6' });
    expect(parseAllowCidr('198.51.100.7')).toEqual({ address: '198.51.100.7', prefix: 32, family: 'ipv4' });
    expect(parseAllowCidr('::1')).toEqual({ address: '::1', prefix: 128, family: 'ipv6' });
    expect(parseAllowCidr('0.0.0.0/0')).toEqual({ address: '0.0.0.0', prefix: 0, family: 'ipv4' });
  });

  it('names the flag and the bad value', () => {
    expect(() => parseAllowCidr('example.com/24')).toThrow('--allow-cidr: "example.com/24" is not an IPv4 or IPv6 address or CIDR');
    expect(() => parseAllowCidr('192.0.2.0/33')).toThrow('--allow-cidr: "192.0.2.0/33": prefix length must be an integer from 0 to 32');
    expect(() => parseAllowCidr('2001:db8::/129')).toThrow('--allow-cidr: "2001:db8::/129": prefix length must be an integer from 0 to 128');
    expect(() => parseAllowCidr('192.0.2.0/')).toThrow('prefix length must be an integer from 0 to 32');
    expect(() => parseAllowCidr('192.0.2.0/-1')).toThrow('prefix length must be an integer from 0 to 32');
    expect(() => parseAllowCidr('192.0.2.0/2x')).toThrow('prefix length must be an integer from 0 to 32');
    try {
      parseAllowCidr('nope');
    } catch (err) {
      expect((err as { code: string; option: string }).code).toBe('BAD_LICENCE');
      expect((err as { option: string }).option).toBe('--allow-cidr');
    }
  });
});

describe('ClientAllowList', () => {
  const list = ClientAllowList.fromCidrs(['192.0.2.0/24', '2001:db8::/32']);

  it('matches IPv4 addresses', () => {
    expect(list.allows('192.0.2.1')).toBe(true);
    expect(list.allows('192.0.2.255')).toBe(true);
    expect(list.allows('192.0.3.1')).toBe(false);
  });

  it('matches IPv6 in compressed and full (uWS) spelling', () => {
    expect(list.allows('2001:db8::1')).toBe(true);
    expect(list.allows('2001:0db8:0000:0000:0000:0000:0000:0001')).toBe(true);
    expect(list.allows('2001:db9::1')).toBe(false);
  });

  it('treats IPv4-mapped IPv6 as the IPv4 address it carries', () => {
    expect(list.allows('::ffff:192.0.2.9')).toBe(true);
    expect(list.allows('0000:0000:0000:0000:0000:ffff:c000:0209')).toBe(true);
    expect(list.allows('::ffff:192.0.3.9')).toBe(false);
  });

  it('never allows text that is not an address', () => {
    expect(list.allows('')).toBe(false);
    expect(list.allows('unknown')).toBe(false);
    expect(list.allows('192.0.2.1:443')).toBe(false);
  });
});
