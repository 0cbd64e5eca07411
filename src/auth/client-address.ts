// A key's client address allow list (spec section 5.3: a request from
// outside the list is answered 403 like a bad key).
//
// Contract: parseAllowCidr() accepts `ADDRESS/PREFIX` or a bare address (one
// host) and throws LicenceError('--allow-cidr') otherwise; ClientAllowList
// answers allows(ip) for the text address uWebSockets.js reports. The
// parsing and matching are lib/address-allow-list.ts's, shared with the live
// dnstap receiver; this module only speaks in licence terms.

import { hasCode, LicenceError } from '../errors/catalogue.js';
import { AddressAllowList, parseCidr, type Cidr } from '../lib/address-allow-list.js';

export type AllowCidr = Cidr;

/** `f()`, with a bad CIDR reported as the licence option it came from. */
function asLicence<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (hasCode(err, 'BAD_CIDR')) throw new LicenceError('--allow-cidr', (err as Error).message);
    throw err;
  }
}

export function parseAllowCidr(text: string): AllowCidr {
  return asLicence(() => parseCidr(text));
}

export type ClientAllowList = AddressAllowList;

export const ClientAllowList = Object.freeze({
  /** Builds the matcher; throws LicenceError on the first bad CIDR. */
  fromCidrs: (cidrs: readonly string[]): ClientAllowList => asLicence(() => AddressAllowList.fromCidrs(cidrs)),
});
