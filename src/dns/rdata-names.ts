// Which name inside an rdata `lookup/rdata/name/...` finds it by.
//
// DNSDB's rdata-name lookups match the domain name a record points at: the
// target of NS, CNAME, PTR, DNAME, the exchange of MX (and KX, RT, AFSDB),
// the target of SRV, the replacement of NAPTR, the primary server of SOA.
// We read it from the canonical presentation text, which is unambiguous for
// these types: names never contain an unescaped space.

import { RR } from './rrtype.js';

const LAST_FIELD = new Set<number>([RR.SRV, 35 /* NAPTR */]);
const SECOND_FIELD = new Set<number>([RR.MX, 36 /* KX */, 21 /* RT */, 18 /* AFSDB */]);
const WHOLE = new Set<number>([RR.NS, RR.CNAME, RR.PTR, 39 /* DNAME */, 7 /* MB */, 3 /* MD */, 4 /* MF */, 8 /* MG */, 9 /* MR */]);

export function rdataTargetName(rrtype: number, text: string): string | undefined {
  if (WHOLE.has(rrtype)) return text;
  if (SECOND_FIELD.has(rrtype)) {
    const sp = text.indexOf(' ');
    return sp < 0 ? undefined : text.slice(sp + 1);
  }
  if (LAST_FIELD.has(rrtype)) {
    const sp = text.lastIndexOf(' ');
    const name = sp < 0 ? text : text.slice(sp + 1);
    return name === '.' ? undefined : name;
  }
  if (rrtype === RR.SOA) {
    const sp = text.indexOf(' ');
    return sp < 0 ? undefined : text.slice(0, sp);
  }
  return undefined;
}
