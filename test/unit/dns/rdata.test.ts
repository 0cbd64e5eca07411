import path from 'node:path';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { rdataFromMessage, rdataFromText, rdataToText } from '../../../src/dns/rdata/index.js';
import { isMetaType, rrtypeFromText, rrtypeInfo } from '../../../src/dns/rrtype.js';
import { zoneObservations } from '../../../src/ingest/zone.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const REAL = path.resolve(here, '../../../../shared/data/real');
const ZONES = path.join(REAL, 'zones');

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex').toUpperCase();
const bytes = (h: string) => Uint8Array.from(Buffer.from(h.replace(/\s+/g, ''), 'hex'));
const code = (t: string) => {
  const c = rrtypeFromText(t);
  if (c === undefined) throw new Error(`no type ${t}`);
  return c;
};

function thrown(fn: () => unknown): { code?: string; message: string } {
  try {
    fn();
  } catch (err) {
    return err as { code?: string; message: string };
  }
  throw new Error('expected a throw');
}

const SAME = Symbol('same');

// [type, input text, canonical text (SAME = the input), wire]. The wire of
// every row was checked against dnspython 2.8 (which keeps name case; ours
// is lower-cased by design), except NXT and A6, which dnspython lacks (those
// follow RFC 2535 section 5.2 and RFC 2874 section 3.1); the texts follow compat.md.
const CASES: [string, string, string | typeof SAME, string][] = [
  ['A', '192.0.2.1', SAME, 'C0000201'],
  ['NS', 'NS1.Example.COM.', 'ns1.example.com.', '036E7331076578616D706C6503636F6D00'],
  ['MD', 'md.example.', SAME, '026D64076578616D706C6500'],
  ['MF', 'mf.example.', SAME, '026D66076578616D706C6500'],
  ['MB', 'mb.example.', SAME, '026D62076578616D706C6500'],
  ['MG', 'mg.example.', SAME, '026D67076578616D706C6500'],
  ['MR', 'mr.example.', SAME, '026D72076578616D706C6500'],
  ['CNAME', 'www.example.com.', SAME, '03777777076578616D706C6503636F6D00'],
  ['SOA', 'a.root-servers.net. nstld.verisign-grs.com. 2024101100 1800 900 604800 86400', SAME, '01610C726F6F742D73657276657273036E657400056E73746C640C766572697369676E2D67727303636F6D0078A554EC000007080000038400093A8000015180'],
  ['WKS', '192.0.2.1 6 21 25 80', SAME, 'C0000201060000044000000000000080'],
  ['PTR', 'host.example.', SAME, '04686F7374076578616D706C6500'],
  ['HINFO', '"INTEL-386" "Unix"', SAME, '09494E54454C2D33383604556E6978'],
  ['MINFO', 'rmail.example. email.example.', SAME, '05726D61696C076578616D706C650005656D61696C076578616D706C6500'],
  ['MX', '10 mx.example.', SAME, '000A026D78076578616D706C6500'],
  ['TXT', '"v=spf1 -all" "a\\"b\\\\c" "\\000\\255 x"', SAME, '0B763D73706631202D616C6C056122625C630400FF2078'],
  ['RP', 'mbox.example. txt.example.', SAME, '046D626F78076578616D706C650003747874076578616D706C6500'],
  ['AFSDB', '1 afs.example.', SAME, '000103616673076578616D706C6500'],
  ['X25', '"311061700956"', SAME, '0C333131303631373030393536'],
  ['ISDN', '"150862028003217" "004"', SAME, '0F31353038363230323830303332313703303034'],
  ['ISDN', '"150862028003217"', SAME, '0F313530383632303238303033323137'],
  ['RT', '10 relay.example.', SAME, '000A0572656C6179076578616D706C6500'],
  ['NSAP', '0x47000580005A0000000001E133FFFFFF00016100', SAME, '47000580005A0000000001E133FFFFFF00016100'],
  ['NSAP-PTR', 'foo.example.', SAME, '03666F6F076578616D706C6500'],
  ['SIG', 'A 5 3 86400 20030322173103 20030220173103 2642 example. oJB1W6WNGv+ldvQ3WDG0MQkg5IEhjRip8WTrPYGv07h108dUKGMeDPKijVCHX3DDKdfb+v6oB9wfuh3DTJXUAfI/M0zmO/zz8bW0Rznl8O3tGNazPwQKkRN20XPXV6nwwfoXmJQbsLNrLfkGJ5D6fwFm8nN+6pBzeDQfsS3Ap3o=', 'A 5 3 86400 1048354263 1045762263 2642 example. oJB1W6WNGv+ldvQ3WDG0MQkg5IEhjRip8WTrPYGv07h108dUKGMeDPKi jVCHX3DDKdfb+v6oB9wfuh3DTJXUAfI/M0zmO/zz8bW0Rznl8O3tGNaz PwQKkRN20XPXV6nwwfoXmJQbsLNrLfkGJ5D6fwFm8nN+6pBzeDQfsS3A p3o=', '00010503000151803E7C9DD73E5510D70A52076578616D706C6500A090755BA58D1AFFA576F4375831B4310920E481218D18A9F164EB3D81AFD3B875D3C75428631E0CF2A28D50875F70C329D7DBFAFEA807DC1FBA1DC34C95D401F23F334CE63BFCF3F1B5B44739E5F0EDED18D6B33F040A911376D173D757A9F0C1FA1798941BB0B36B2DF9062790FA7F0166F2737EEA907378341FB12DC0A77A'],
  ['KEY', '256 3 5 AQOeiiR0GOMYkDshWoSKz9XzfwJr1AYtsmx3TGkJaNXVbfi/2pHm822aJ5iI9BMzNXxeYCmZDRD99WYwYqUSdjMmmAphXdvxegXd/M5+X7OrzKBaMbCVdFLUUh6DhweJBjEVv5f2wwjM9XzcnOf+EPbtG9DMBmADjFDc2w/rljwvFw==', SAME, '0100030501039E8A247418E318903B215A848ACFD5F37F026BD4062DB26C774C690968D5D56DF8BFDA91E6F36D9A279888F41333357C5E6029990D10FDF5663062A512763326980A615DDBF17A05DDFCCE7E5FB3ABCCA05A31B0957452D4521E83870789063115BF97F6C308CCF57CDC9CE7FE10F6ED1BD0CC0660038C50DCDB0FEB963C2F17'],
  ['PX', '10 net2.it. PRMD-net2.ADMD-p400.C-it.', '10 net2.it. prmd-net2.admd-p400.c-it.', '000A046E657432026974000970726D642D6E6574320961646D642D7034303004632D697400'],
  ['GPOS', '"-32.6882" "116.8652" "10.0"', SAME, '082D33322E36383832083131362E383635320431302E30'],
  ['NXT', 'medium.foo.tld. A MX SIG NXT', SAME, '066D656469756D03666F6F03746C640040010082'],
  ['A6', '64 ::1234:5678:9abc:def0 subnet.example.', SAME, '40123456789ABCDEF0067375626E6574076578616D706C6500'],
  ['A6', '65 ::7fff:ffff:ffff:ffff pre.example.', SAME, '417FFFFFFFFFFFFFFF03707265076578616D706C6500'],
  ['A6', '128 :: prefix.example.', SAME, '8006707265666978076578616D706C6500'],
  ['A6', '0 2345:00C1:CA11:0001:1234:5678:9ABC:DEF0', '0 2345:c1:ca11:1:1234:5678:9abc:def0', '00234500C1CA110001123456789ABCDEF0'],
  ['AAAA', '2001:DB8::1', '2001:db8::1', '20010DB8000000000000000000000001'],
  ['AAAA', '::ffff:192.0.2.1', SAME, '00000000000000000000FFFFC0000201'],
  ['LOC', '52 22 23.000 N 4 53 32.000 E -2.00m 0.00m 10000m 10m', '52 22 23.000 N 4 53 32.000 E -2.00m 0m 10000m 10m', '000016138B3CF018810CBCE0009895B8'],
  ['LOC', '42 21 54 N 71 06 18 W -24m 30m', '42 21 54.000 N 71 6 18.000 W -24.00m 30m 10000m 10m', '0033161389172DD070BE15F000988D20'],
  ['LOC', '60 9 0.510 S 24 39 7.650 W 10.5m 1m 200m 0.1m', '60 9 0.510 S 24 39 7.650 W 10.50m 1m 200m 0.10m', '001224117317DAA27AB5D17E00989A9A'],
  ['SRV', '0 5 5060 sipserver.example.com.', SAME, '0000000513C409736970736572766572076578616D706C6503636F6D00'],
  ['NAPTR', '100 10 "U" "E2U+sip" "!^.*$!sip:info@example.com!" .', SAME, '0064000A0155074532552B7369701B215E2E2A24217369703A696E666F406578616D706C652E636F6D2100'],
  ['KX', '10 kx.example.', SAME, '000A026B78076578616D706C6500'],
  ['CERT', 'PGP 0 0 mQGiBDnY2vERBAD3cd2vKvSkgu4RI4R8ikHrEwlKsdQjP4J2yQtdUNw0VK3hLgHGJ8cScw==', '3 0 0 mQGiBDnY2vERBAD3cd2vKvSkgu4RI4R8ikHrEwlKsdQjP4J2yQtdUNw0VK3hLgHGJ8cScw==', '00030000009901A20439D8DAF1110400F771DDAF2AF4A482EE1123847C8A41EB13094AB1D4233F8276C90B5D50DC3454ADE12E01C627C71273'],
  ['DNAME', 'target.example.', SAME, '06746172676574076578616D706C6500'],
  ['APL', '1:192.168.32.0/21 !1:192.168.38.0/28 2:ff00::/8 1:224.0.0.0/4', SAME, '00011503C0A82000011C83C0A82600020801FF00010401E0'],
  ['DS', '60454 5 2 3672C35CFA8FF14C9C223B84277BD645C0AF54BAD5790375FE797161E4801479', SAME, 'EC2605023672C35CFA8FF14C9C223B84277BD645C0AF54BAD5790375FE797161E4801479'],
  ['SSHFP', '2 1 123456789abcdef67890123456789abcdef67890', '2 1 123456789ABCDEF67890123456789ABCDEF67890', '0201123456789ABCDEF67890123456789ABCDEF67890'],
  ['IPSECKEY', '10 1 2 192.0.2.38 AQNRU3mG7TVTO2BkR47usntb102uFJtugbo6BSGvgqt4AQ==', SAME, '0A0102C0000226010351537986ED35533B6064478EEEB27B5BD74DAE149B6E81BA3A0521AF82AB7801'],
  ['IPSECKEY', '10 0 2 . AQNRU3mG7TVTO2BkR47usntb102uFJtugbo6BSGvgqt4AQ==', SAME, '0A0002010351537986ED35533B6064478EEEB27B5BD74DAE149B6E81BA3A0521AF82AB7801'],
  ['IPSECKEY', '10 3 2 mygateway.example.com. AQNRU3mG7TVTO2BkR47usntb102uFJtugbo6BSGvgqt4AQ==', SAME, '0A0302096D7967617465776179076578616D706C6503636F6D00010351537986ED35533B6064478EEEB27B5BD74DAE149B6E81BA3A0521AF82AB7801'],
  ['IPSECKEY', '10 2 2 2001:0DB8:0:8002::2000:1 AQNRU3mG7TVTO2BkR47usntb102uFJtugbo6BSGvgqt4AQ==', '10 2 2 2001:db8:0:8002::2000:1 AQNRU3mG7TVTO2BkR47usntb102uFJtugbo6BSGvgqt4AQ==', '0A020220010DB8000080020000000020000001010351537986ED35533B6064478EEEB27B5BD74DAE149B6E81BA3A0521AF82AB7801'],
  ['RRSIG', 'DS 8 2 86400 1374774350 1374165350 8795 com. cuOdo+2G0yJpBN5ba2zxiljSzgtTzminrVc3CrsNxQPqc5YVQX4eBWMB +kpgSEXPT+DF2D9HwIsPpBDNdJekBpXIRW41Yl7IdZYHySqabn7hgt9M mk5KNy9gqCOK/JLRs07LPAm3wvfyYer8e0/7VCTEjF9/DMbMGsLLH3xr kBA=', SAME, '002B08020001518051F1644E51E81966225B03636F6D0072E39DA3ED86D3226904DE5B6B6CF18A58D2CE0B53CE68A7AD57370ABB0DC503EA739615417E1E056301FA4A604845CF4FE0C5D83F47C08B0FA410CD7497A40695C8456E35625EC8759607C92A9A6E7EE182DF4C9A4E4A372F60A8238AFC92D1B34ECB3C09B7C2F7F261EAFC7B4FFB5424C48C5F7F0CC6CC1AC2CB1F7C6B9010'],
  ['NSEC', 'aaa. NS SOA RRSIG NSEC DNSKEY ZONEMD TYPE1234', SAME, '036161610000082200000000038001041B000000000000000000000000000000000000000000000000000020'],
  ['DNSKEY', '257 3 8 AwEAAaz/tAm8yTn4Mfeh5eyI96WSVexTBAvkMgJzkKTOiW1vkIbzxeF3 +/4RgWOq7HrxRixHlFlExOLAJr5emLvN7SWXgnLh4+B5xQlNVz8Og8kv', '257 3 8 AwEAAaz/tAm8yTn4Mfeh5eyI96WSVexTBAvkMgJzkKTOiW1vkIbzxeF3+/4RgWOq7HrxRixHlFlExOLAJr5emLvN7SWXgnLh4+B5xQlNVz8Og8kv', '0101030803010001ACFFB409BCC939F831F7A1E5EC88F7A59255EC53040BE432027390A4CE896D6F9086F3C5E177FBFE118163AAEC7AF1462C47945944C4E2C026BE5E98BBCDED25978272E1E3E079C5094D573F0E83C92F'],
  ['DHCID', 'AAIBY2/AuCccgoJbsaxcQc9TUapptP69lOjxfNuVAA2kjEA=', SAME, '000201636FC0B8271C82825BB1AC5C41CF5351AA69B4FEBD94E8F17CDB95000DA48C40'],
  ['NSEC3', '1 1 12 AABBCCDD 2T7B4G4VSA5SMI47K61MV5BV1A22BOJR NS SOA MX RRSIG DNSKEY NSEC3PARAM', SAME, '0101000C04AABBCCDD14174EB2409FE28BCB4887A1836F957F0A8425E27B000722010000000290'],
  ['NSEC3', '1 0 0 - 2T7B4G4VSA5SMI47K61MV5BV1A22BOJR', SAME, '010000000014174EB2409FE28BCB4887A1836F957F0A8425E27B'],
  ['NSEC3PARAM', '1 0 12 AABBCCDD', SAME, '0100000C04AABBCCDD'],
  ['NSEC3PARAM', '1 0 0 -', SAME, '0100000000'],
  ['TLSA', '3 1 1 0C72AC70B745AC19998811B131D662C9AC69DBDBE7CB23E5B514B56664C5D3D6', SAME, '0301010C72AC70B745AC19998811B131D662C9AC69DBDBE7CB23E5B514B56664C5D3D6'],
  ['SMIMEA', '3 1 1 0C72AC70B745AC19998811B131D662C9AC69DBDBE7CB23E5B514B56664C5D3D6', SAME, '0301010C72AC70B745AC19998811B131D662C9AC69DBDBE7CB23E5B514B56664C5D3D6'],
  ['HIP', '2 200100107B1A74DF365639CC39F1D578 AwEAAbdxyhNuSutc5EMzxTs9LBPCIkOFH8cIvM4p9+LrV4e19WzK00+CI6zBCQTdtWsuxKbWIy87UOoJTwkUs7lBu+Upr1gsNrut79ryra+bSRGQb1slImA8YVJyuIDsj7kwzG7jnERNqnWxZ48AWkskmdHaVDP4BcelrTI3rMXdXF5D rvs1.example.com. rvs2.example.com.', SAME, '10020084200100107B1A74DF365639CC39F1D57803010001B771CA136E4AEB5CE44333C53B3D2C13C22243851FC708BCCE29F7E2EB5787B5F56CCAD34F8223ACC10904DDB56B2EC4A6D6232F3B50EA094F0914B3B941BBE529AF582C36BBADEFDAF2ADAF9B4911906F5B2522603C615272B880EC8FB930CC6EE39C444DAA75B1678F005A4B2499D1DA5433F805C7A5AD3237ACC5DD5C5E430472767331076578616D706C6503636F6D000472767332076578616D706C6503636F6D00'],
  ['CDS', '60454 5 2 3672C35CFA8FF14C9C223B84277BD645C0AF54BAD5790375FE797161E4801479', SAME, 'EC2605023672C35CFA8FF14C9C223B84277BD645C0AF54BAD5790375FE797161E4801479'],
  ['CDNSKEY', '257 3 8 AwEAAaz/tAm8yTn4Mfeh5eyI96WSVexTBAvkMgJzkKTOiW1vkIbzxeF3', SAME, '0101030803010001ACFFB409BCC939F831F7A1E5EC88F7A59255EC53040BE432027390A4CE896D6F9086F3C5E177'],
  ['OPENPGPKEY', 'mQINBFit2jsBEADrbl5vjVxYeAE0g0IDYCBpHirv1Sjlqxx5gjtPhb2YhvyDMXjq', SAME, '99020D0458ADDA3B011000EB6E5E6F8D5C587801348342036020691E2AEFD528E5AB1C79823B4F85BD9886FC833178EA'],
  ['CSYNC', '66 3 A NS AAAA', SAME, '000000420003000460000008'],
  ['ZONEMD', '2024101100 1 1 F1EA43854616D1E6E06C997D9A54AD4F275156AEF999D5E6E5EECE7C B4619B42BB0FB6034EC9B889C0EE0B60FD1AFD42', '2024101100 1 1 F1EA43854616D1E6E06C997D9A54AD4F275156AEF999D5E6E5EECE7CB4619B42BB0FB6034EC9B889C0EE0B60FD1AFD42', '78A554EC0101F1EA43854616D1E6E06C997D9A54AD4F275156AEF999D5E6E5EECE7CB4619B42BB0FB6034EC9B889C0EE0B60FD1AFD42'],
  ['SVCB', '1 . alpn=h2,h3 port=8443 ipv4hint=192.0.2.1,192.0.2.2 ech=AEP+DQA= ipv6hint=2001:db8::1 mandatory=alpn,port no-default-alpn key65333=ex', '1 . mandatory=alpn,port alpn="h2,h3" no-default-alpn port=8443 ipv4hint=192.0.2.1,192.0.2.2 ech=AEP+DQA= ipv6hint=2001:db8::1 key65333="ex"', '000100000000040001000300010006026832026833000200000003000220FB00040008C0000201C0000202000500050043FE0D000006001020010DB8000000000000000000000001FF3500026578'],
  ['HTTPS', '1 . alpn="h3,h2" ipv4hint=104.16.132.229,104.16.133.229', SAME, '0001000001000602683302683200040008681084E5681085E5'],
  ['HTTPS', '0 svc.example.', SAME, '000003737663076578616D706C6500'],
  ['SVCB', '16 foo.example.org. alpn="f\\\\\\\\oo\\\\,bar,h2"', SAME, '001003666F6F076578616D706C65036F7267000001000C08665C6F6F2C626172026832'],
  ['SPF', '"v=spf1 mx -all"', SAME, '0E763D73706631206D78202D616C6C'],
  ['NID', '10 0014:4fff:ff20:ee64', SAME, '000A00144FFFFF20EE64'],
  ['L32', '10 10.1.2.0', SAME, '000A0A010200'],
  ['L64', '10 2001:0DB8:1140:1000', '10 2001:0db8:1140:1000', '000A20010DB811401000'],
  ['LP', '10 l64-subnet1.example.com.', SAME, '000A0B6C36342D7375626E657431076578616D706C6503636F6D00'],
  ['EUI48', '00-00-5e-00-53-2a', SAME, '00005E00532A'],
  ['EUI64', '00-00-5e-ef-10-00-00-2a', SAME, '00005EEF1000002A'],
  ['URI', '10 1 "ftp://ftp1.example.com/public"', SAME, '000A00016674703A2F2F667470312E6578616D706C652E636F6D2F7075626C6963'],
  ['CAA', '0 issue "letsencrypt.org"', SAME, '000569737375656C657473656E63727970742E6F7267'],
  ['CAA', '128 tbs "Unknown"', SAME, '8003746273556E6B6E6F776E'],
  ['AVC', '"app-name:WOLFGANG|app-class:OAM|business=yes"', SAME, '2C6170702D6E616D653A574F4C4647414E477C6170702D636C6173733A4F414D7C627573696E6573733D796573'],
  ['TA', '60454 5 2 3672C35CFA8FF14C9C223B84277BD645C0AF54BAD5790375FE797161E4801479', SAME, 'EC2605023672C35CFA8FF14C9C223B84277BD645C0AF54BAD5790375FE797161E4801479'],
  ['DLV', '60454 5 2 3672C35CFA8FF14C9C223B84277BD645C0AF54BAD5790375FE797161E4801479', SAME, 'EC2605023672C35CFA8FF14C9C223B84277BD645C0AF54BAD5790375FE797161E4801479'],
  ['TYPE65280', '\\# 4 0A000001', SAME, '0A000001'],
  ['NULL', '\\# 3 010203', SAME, '010203'],

];

describe('rdata text <-> wire, one case per type', () => {
  for (const [type, input, canonical, wire] of CASES) {
    const expected = canonical === SAME ? input : canonical;
    it(`${type} ${input.slice(0, 40)}`, () => {
      const w = rdataFromText(code(type), input);
      expect(hex(w)).toBe(wire);
      const text = rdataToText(code(type), w);
      expect(text).toBe(expected);
      expect(text).toMatch(/^[\x20-\x7e]*$/);
      // wire -> text -> wire is the identity, text -> wire -> text is stable.
      expect(hex(rdataFromText(code(type), text))).toBe(wire);
      // Every type also accepts the RFC 3597 form and means the same record.
      expect(hex(rdataFromText(code(type), `\\# ${w.length} ${hex(w)}`))).toBe(wire);
    });
  }
});

describe('coverage of the rrtype table', () => {
  it('has a presentation case for every stored type in rrtype.ts (NULL has none by definition)', () => {
    const covered = new Set(CASES.map(([t]) => code(t)));
    const missing: string[] = [];
    for (let c = 1; c <= 0xffff; c++) {
      const info = rrtypeInfo(c);
      if (info && !isMetaType(c) && info.name !== 'NULL' && !covered.has(c)) missing.push(info.name);
    }
    expect(missing).toEqual([]);
  });
});

describe('presentation details', () => {
  it('writes the RRSIG exactly as DNSDB does, and reads YYYYMMDDHHMMSS times', () => {
    const dnsdb = 'DS 8 2 86400 1374774350 1374165350 8795 com. cuOdo+2G0yJpBN5ba2zxiljSzgtTzminrVc3CrsNxQPqc5YVQX4eBWMB ' +
      '+kpgSEXPT+DF2D9HwIsPpBDNdJekBpXIRW41Yl7IdZYHySqabn7hgt9M mk5KNy9gqCOK/JLRs07LPAm3wvfyYer8e0/7VCTEjF9/DMbMGsLLH3xr kBA=';
    expect(rdataToText(46, rdataFromText(46, dnsdb))).toBe(dnsdb);
    const dated = dnsdb.replace('1374774350 1374165350', '20130725174550 20130718163550');
    expect(rdataToText(46, rdataFromText(46, dated))).toBe(dnsdb);
    // The signature may arrive in any number of words.
    const oneWord = dnsdb.replace(/(com\. )(.*)$/, (_m, a: string, b: string) => a + b.replace(/ /g, ''));
    expect(rdataToText(46, rdataFromText(46, oneWord))).toBe(dnsdb);
    expect(thrown(() => rdataFromText(46, dnsdb.replace('1374774350', '20131325174550'))).message).toMatch(/bad time/);
  });

  it('keeps DS digests upper case and one word whatever the input', () => {
    expect(rdataToText(43, rdataFromText(43, '60454 5 2 3672c35cfa8ff14c9c223b84 277bd645c0af54bad5790375fe797161e4801479')))
      .toBe('60454 5 2 3672C35CFA8FF14C9C223B84277BD645C0AF54BAD5790375FE797161E4801479');
    expect(rdataToText(43, rdataFromText(43, '60454 RSASHA1 2 AB'))).toBe('60454 5 2 AB');
  });

  it('quotes TXT strings, escaping only what it must', () => {
    expect(rdataToText(16, rdataFromText(16, 'unquoted "two words" ""'))).toBe('"unquoted" "two words" ""');
    expect(rdataToText(16, rdataFromText(16, '"tab\\009;semi(paren)"'))).toBe('"tab\\009;semi(paren)"');
    expect(rdataToText(16, rdataFromText(16, '"caf\u00e9"'))).toBe('"caf\\195\\169"');
    expect(rdataToText(16, bytes('03 22 5C 7F'))).toBe('"\\"\\\\\\127"');
    expect(thrown(() => rdataFromText(16, `"${'x'.repeat(256)}"`)).message).toMatch(/longer than 255/);
    expect(hex(rdataFromText(16, `"${'x'.repeat(255)}"`)).slice(0, 4)).toBe('FF78');
  });

  it('lower-cases names in rdata and completes relative ones with the origin', () => {
    expect(hex(rdataFromText(15, '10 MX.Example.'))).toBe('000A026D78076578616D706C6500');
    expect(rdataToText(15, rdataFromText(15, '10 mail', 'Example.ORG.'))).toBe('10 mail.example.org.');
    expect(rdataToText(15, rdataFromText(15, '10 @', 'example.org.'))).toBe('10 example.org.');
    expect(rdataToText(2, rdataFromText(2, 'ns1'))).toBe('ns1.');
    // A generically spelled record gets the same canonical wire.
    expect(hex(rdataFromText(2, '\\# 6 014102424300'))).toBe('016102626300');
    expect(rdataToText(2, bytes('0141024243 00'))).toBe('a.bc.');
    // Names inside rdata escape the same way owner names do.
    expect(rdataToText(12, rdataFromText(12, 'a\\ b\\.c.example.'))).toBe('a\\032b\\.c.example.');
  });

  it('accepts the RFC 3597 form for every type and checks it', () => {
    expect(rdataToText(1, rdataFromText(1, '\\# 4 C0000201'))).toBe('192.0.2.1');
    expect(rdataToText(1, rdataFromText(1, '\\# 4 C000 0201'))).toBe('192.0.2.1');
    expect(rdataToText(65280, rdataFromText(65280, '\\# 0'))).toBe('\\# 0');
    expect(rdataToText(65280, bytes('ABCD'))).toBe('\\# 2 ABCD');
    expect(thrown(() => rdataFromText(1, '\\# 3 C00002')).message).toMatch(/not a valid A record/);
    expect(thrown(() => rdataFromText(1, '\\# 4 C00002')).message).toMatch(/does not match/);
    expect(thrown(() => rdataFromText(65280, 'plain text')).message).toMatch(/needs the \\# generic form/);
  });

  it('falls back to \\# for valid wire without a canonical presentation', () => {
    expect(rdataToText(16, new Uint8Array(0))).toBe('\\# 0'); // TXT without strings
    expect(rdataToText(47, bytes('0161 00 0006 400000000000'))).toBe('\\# 11 0161000006400000000000');
    expect(rdataToText(29, bytes('01 12 16 13 8B3CF018 810CBCE0 009895B8'))).toMatch(/^\\# 16 01/); // LOC version 1
  });

  it('parses SVCB parameters in any order and both value spellings', () => {
    const w = rdataFromText(64, '1 svc.example. port="53" alpn=h2 key7=/dns-query{?dns}');
    expect(rdataToText(64, w)).toBe('1 svc.example. alpn="h2" port=53 key7="/dns-query{?dns}"');
    expect(hex(rdataFromText(64, '1 svc.example. dohpath=/dns-query{?dns} port=53 alpn="h2"'))).toBe(hex(w));
    expect(thrown(() => rdataFromText(64, '1 . port=1 port=2')).message).toMatch(/given twice/);
    expect(thrown(() => rdataFromText(64, '1 . bogus=1')).message).toMatch(/unknown SVCB key/);
    expect(thrown(() => rdataToText(64, bytes('0001 00 0003 0002 0035 0001 0003 026832'))).message).toMatch(/strictly increasing/);
  });

  it('reads LOC with defaults and writes every field', () => {
    expect(rdataToText(29, rdataFromText(29, '42 21 54 N 71 06 18 W -24m 30m'))).toBe('42 21 54.000 N 71 6 18.000 W -24.00m 30m 10000m 10m');
    expect(rdataToText(29, rdataFromText(29, '0 N 0 E 0'))).toBe('0 0 0.000 N 0 0 0.000 E 0.00m 1m 10000m 10m');
  });

  it('rejects malformed text with DnsFormatError', () => {
    const bad: [string, string, RegExp][] = [
      ['A', '192.0.2', /bad IPv4 address/],
      ['A', '192.0.2.1 extra', /trailing field/],
      ['AAAA', '2001:db8::g', /bad IPv6 address/],
      ['MX', '10', /too few fields/],
      ['MX', '70000 mx.example.', /above 65535/],
      ['MX', '"10" mx.example.', /unexpected quoted string/],
      ['NS', 'a..b.', /empty label/],
      ['DS', '1 8 2 ABC', /bad hex/],
      ['DNSKEY', '257 3 8 AwE*', /bad base64/],
      ['NSEC', 'next. A BOGUS', /unknown type "BOGUS"/],
      ['NSEC3', '1 0 0 - 2T7B4G4VSA5SMI47K61MV5BV1A22BOJ', /base32hex/],
      ['TXT', '"unterminated', /unterminated quoted string/],
      ['TXT', '', /too few fields/],
      ['CAA', '0 is-sue "x"', /bad CAA tag/],
      ['LOC', '91 N 0 E 0', /degrees/],
    ];
    for (const [t, text, re] of bad) {
      const e = thrown(() => rdataFromText(code(t), text));
      expect(e.code, `${t} ${text}`).toBe('DNS_FORMAT');
      expect(e.message, `${t} ${text}`).toMatch(re);
    }
  });

  it('rejects malformed wire with DnsFormatError', () => {
    const bad: [number, string, RegExp][] = [
      [1, 'C00002', /truncated IPv4 address/],
      [1, 'C000020101', /1 trailing octets/],
      [15, '000A 026D78', /past the end/],
      [15, '000A C000', /compression pointer not allowed/],
      [16, '05 6162', /truncated character-string/],
      [47, '00 0001', /truncated type bitmap|bitmap/],
      [6, '00 00 00000001', /truncated u32/],
    ];
    for (const [t, h, re] of bad) {
      const e = thrown(() => rdataToText(t, bytes(h)));
      expect(e.code, h).toBe('DNS_FORMAT');
      expect(e.message, h).toMatch(re);
    }
  });
});

describe('rdataFromMessage', () => {
  // A message fragment: "Example.COM." at 0, then rdatas that point at it.
  const msg = bytes('07 4578616D706C65 03 434F4D 00' + // 0: Example.COM.
    '000A 04 4D61696C C000' + // 13: MX 10 Mail.<ptr 0>
    '01020304' + // 22: A
    'C000 0A 686F73746D6173746572 C000 78A554EC 00000708 00000384 00093A80 00015180' + // 26: SOA
    '002B 08 02 00015180 51F1644E 51E81966 225B C000 ABCD'); // 61: RRSIG with a compressed signer

  it('expands and lower-cases compressed names', () => {
    expect(hex(rdataFromMessage(15, msg, 13, 9))).toBe('000A046D61696C076578616D706C6503636F6D00');
    expect(hex(rdataFromMessage(6, msg, 26, 35))).toBe(
      '076578616D706C6503636F6D000A686F73746D6173746572076578616D706C6503636F6D0078A554EC000007080000038400093A8000015180');
    expect(rdataToText(46, rdataFromMessage(46, msg, 61, 22))).toBe('DS 8 2 86400 1374774350 1374165350 8795 example.com. q80=');
  });

  it('copies rdata without names unchanged', () => {
    const a = rdataFromMessage(1, msg, 22, 4);
    expect(hex(a)).toBe('01020304');
    expect(a.buffer).not.toBe(msg.buffer);
  });

  it('rejects names that leave the rdata and rdata that leaves the message', () => {
    expect(thrown(() => rdataFromMessage(15, msg, 13, 5)).message).toMatch(/runs past the rdata end at byte offset 15/);
    expect(thrown(() => rdataFromMessage(15, msg, 13, 10)).message).toMatch(/1 trailing octets in rdata at byte offset 22/);
    expect(thrown(() => rdataFromMessage(1, msg, 80, 4)).message).toMatch(/byte offset 80 runs past the end/);
  });
});

const haveReal = existsSync(path.join(ZONES, 'root.zone.2024101100'));
const realDescribe = haveReal ? describe : describe.skip;
if (!haveReal) console.warn(`skipping real-zone round trips: ${ZONES} is missing (CI always has it)`);

realDescribe('round trip over every record of the real zones', () => {
  const files = ['root.zone.2024101100', 'root.zone.2018031200', 'root.zone.2026082201-norrsig', 'arpa.zone.2024101100',
    'root-servers.net.zone.2024101000', 'root.hints.dns-root-data-2024071801'];
  for (const f of files) {
    it(f, async () => {
      let n = 0;
      const types = new Set<number>();
      for await (const o of zoneObservations(path.join(ZONES, f), { file: f, reject: (e) => { throw e; } }, {})) {
        expect(o.rrname).toMatch(/^[\x21-\x7e]+$/);
        for (const r of o.rdata) {
          expect(r.text).toMatch(/^[\x20-\x7e]+$/);
          const again = rdataFromText(o.rrtype, r.text);
          if (hex(again) !== hex(r.wire)) expect(`${o.rrname} ${o.rrtype} ${r.text}`).toBe('round trip');
          if (rdataToText(o.rrtype, again) !== r.text) expect(`${o.rrname} ${o.rrtype} ${r.text}`).toBe('stable text');
          n++;
          types.add(o.rrtype);
        }
      }
      expect(n).toBeGreaterThan(30);
      expect(types.size).toBeGreaterThanOrEqual(3);
    });
  }

  it('root.ds parses with the zone-file reader (DS in upper-case hex)', () => {
    const line = readFileSync(path.join(ZONES, 'root.ds.dns-root-data-2024071801'), 'latin1').split('\n')[0]!;
    const rdata = line.replace(/^\. IN DS /, '');
    expect(rdataToText(43, rdataFromText(43, rdata))).toBe(rdata);
  });
});
