// rdataTargetRange (bytes, for the shard writer) and rdataTargetName
// (strings) are one rule written twice: they must agree on every type and on
// texts with and without spaces.

import { describe, expect, it } from 'vitest';
import { rdataTargetName, rdataTargetRange } from '../../../src/dns/rdata-names.js';

describe('rdataTargetRange', () => {
  it('finds the same target name as rdataTargetName', () => {
    const texts = ['ns1.example.', '10 mx.example.', '10', '0 5 443 target.example.', '0 5 443 .', '.', '',
      'a.example. hostmaster.example. 1 2 3 4 5', 'a.example.', '100 10 "S" "SIP+D2U" "" _sip._udp.example.', 'x y'];
    const out = new Int32Array(2);
    for (let rrtype = 0; rrtype < 70; rrtype++) {
      for (const text of texts) {
        const bytes = Buffer.from(`pad ${text}`, 'latin1');
        const found = rdataTargetRange(rrtype, bytes, 4, bytes.length, out);
        const expected = rdataTargetName(rrtype, text);
        expect(found ? bytes.toString('latin1', out[0], out[1]) : undefined, `${rrtype} ${JSON.stringify(text)}`).toBe(expected);
      }
    }
  });
});
