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

/**
 * rdataTargetName over bytes, for the shard writer, which holds rdata texts
 * as bytes: the target name of the presentation text bytes[s, e) is
 * bytes[out[0], out[1]); false when there is none. The same rule as
 * rdataTargetName (test/unit/dns/rdata-names.test.ts holds them equal).
 */
export function rdataTargetRange(rrtype: number, bytes: Uint8Array, s: number, e: number, out: Int32Array): boolean {
  let from = s, to = e;
  if (WHOLE.has(rrtype)) {
    // the whole text
  } else if (SECOND_FIELD.has(rrtype)) {
    const sp = bytes.subarray(s, e).indexOf(0x20);
    if (sp < 0) return false;
    from = s + sp + 1;
  } else if (LAST_FIELD.has(rrtype)) {
    const sp = bytes.subarray(s, e).lastIndexOf(0x20);
    from = sp < 0 ? s : s + sp + 1;
    if (to - from === 1 && bytes[from] === 0x2e) return false;
  } else if (rrtype === RR.SOA) {
    const sp = bytes.subarray(s, e).indexOf(0x20);
    if (sp < 0) return false;
    to = s + sp;
  } else {
    return false;
  }
  out[0] = from;
  out[1] = to;
  return true;
}
