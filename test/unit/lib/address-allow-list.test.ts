import { describe, expect, it } from 'vitest';
import { AddressAllowList, parseCidr } from '../../../src/lib/address-allow-list.js';

// The matching itself is tested through its licence wrapper (test/unit/auth/client-address.test.ts); here, what the
// live receiver's --allow-cidr relies on besides: a coded error without a flag's name, and a dual-stack listener's
// IPv4-mapped peers.
describe('AddressAllowList', () => {
  it('reports a bad CIDR as BAD_CIDR, quoting it, for the caller to name its flag', () => {
    expect(() => parseCidr('10.0.0.0/33')).toThrow(expect.objectContaining({
      code: 'BAD_CIDR', message: '"10.0.0.0/33": prefix length must be an integer from 0 to 32',
    }));
    expect(() => AddressAllowList.fromCidrs(['127.0.0.0/8', 'nope'])).toThrow(expect.objectContaining({
      code: 'BAD_CIDR', message: '"nope" is not an IPv4 or IPv6 address or CIDR',
    }));
  });

  it('matches the addresses sockets report, IPv4-mapped ones as IPv4', () => {
    const list = AddressAllowList.fromCidrs(['10.0.0.0/8', '127.0.0.2']);
    expect(['10.1.2.3', '::ffff:10.1.2.3', '127.0.0.2', '127.0.0.1', '::1', ''].map((ip) => list.allows(ip)))
      .toEqual([true, true, true, false, false, false]);
  });
});
