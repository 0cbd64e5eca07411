// Allow lists of client addresses: IPv4 and IPv6 CIDRs. One parser and one
// matcher for every place that admits clients by address: an API key's
// `keys add --allow-cidr` (auth/client-address.ts, spec section 5.3) and the
// live dnstap receiver's `ingest --allow-cidr` (ingest/live/receiver.ts).
//
// Contract: parseCidr() accepts `ADDRESS/PREFIX` or a bare address (one
// host) and throws CidrError otherwise (callers name their flag);
// AddressAllowList answers allows(ip) for the text address a socket reports,
// which may be IPv4, IPv6 in any spelling, or IPv4-mapped IPv6
// (`::ffff:1.2.3.4`, `0000:...:ffff:0102:0304`): a mapped address is matched
// as the IPv4 address it carries, so a `10.0.0.0/8` rule admits
// `::ffff:10.1.2.3` (what a dual-stack `::` listener reports for an IPv4
// peer). Node's net.BlockList does the matching (it maps IPv4-mapped
// addresses itself); an address that is not an IP at all is never allowed.

import net from 'node:net';
import { CidrError } from '../errors/catalogue.js';

export interface Cidr {
  readonly address: string;
  readonly prefix: number;
  readonly family: 'ipv4' | 'ipv6';
}

/** Our own fixed pattern for the prefix length (1 to 3 decimal digits). */
const PREFIX_DIGITS = /^[0-9]{1,3}$/;

export function parseCidr(text: string): Cidr {
  const slash = text.indexOf('/');
  const address = slash < 0 ? text : text.slice(0, slash);
  const version = net.isIP(address);
  if (version === 0) throw new CidrError(`"${text}" is not an IPv4 or IPv6 address or CIDR`);
  const family = version === 4 ? 'ipv4' : 'ipv6';
  const bits = version === 4 ? 32 : 128;
  if (slash < 0) return { address, prefix: bits, family };
  const prefixText = text.slice(slash + 1);
  const prefix = PREFIX_DIGITS.test(prefixText) ? Number(prefixText) : NaN;
  if (!(prefix >= 0 && prefix <= bits)) throw new CidrError(`"${text}": prefix length must be an integer from 0 to ${bits}`);
  return { address, prefix, family };
}

export class AddressAllowList {
  private readonly rules: net.BlockList;

  private constructor(rules: net.BlockList) {
    this.rules = rules;
  }

  /** Builds the matcher; throws CidrError on the first bad CIDR. */
  static fromCidrs(cidrs: readonly string[]): AddressAllowList {
    const rules = new net.BlockList();
    for (const text of cidrs) {
      const c = parseCidr(text);
      rules.addSubnet(c.address, c.prefix, c.family);
    }
    return new AddressAllowList(rules);
  }

  allows(clientIp: string): boolean {
    const version = net.isIP(clientIp);
    if (version === 0) return false;
    return this.rules.check(clientIp, version === 4 ? 'ipv4' : 'ipv6');
  }
}
