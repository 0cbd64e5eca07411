// Valid rdata of many types, as seeds that the fuzz targets mutate or put
// into zone files, NDJSON exports and captures (texts from
// test/unit/dns/rdata.test.ts).

import fc from 'fast-check';
import { rdataFromText } from '../../src/dns/rdata/index.js';
import { rrtypeFromText } from '../../src/dns/rrtype.js';

export const SEEDS: [string, string][] = [
  ['A', '192.0.2.1'], ['NS', 'ns1.example.com.'], ['SOA', 'a.root-servers.net. nstld.verisign-grs.com. 2024101100 1800 900 604800 86400'],
  ['WKS', '192.0.2.1 6 21 25 80'], ['HINFO', '"INTEL-386" "Unix"'], ['MINFO', 'rmail.example. email.example.'], ['MX', '10 mx.example.'],
  ['TXT', '"v=spf1 -all" "a\\"b\\\\c" "\\000\\255 x"'], ['RP', 'mbox.example. txt.example.'], ['ISDN', '"150862028003217" "004"'],
  ['NSAP', '0x47000580005A0000000001E133FFFFFF00016100'], ['PX', '10 net2.it. prmd-net2.admd-p400.c-it.'],
  ['GPOS', '"-32.6882" "116.8652" "10.0"'], ['NXT', 'medium.foo.tld. A MX SIG NXT'], ['A6', '64 ::1234:5678:9abc:def0 subnet.example.'],
  ['AAAA', '::ffff:192.0.2.1'], ['LOC', '52 22 23.000 N 4 53 32.000 E -2.00m 0m 10000m 10m'], ['SRV', '0 5 5060 sipserver.example.com.'],
  ['NAPTR', '100 10 "U" "E2U+sip" "!^.*$!sip:info@example.com!" .'], ['CERT', '3 0 0 mQGiBDnY2vERBAD3cd2vKvSkgu4RI4R8ikHrEwlKsdQjP4J2yQ=='],
  ['APL', '1:192.168.32.0/21 !1:192.168.38.0/28 2:ff00::/8'], ['DS', '60454 5 2 3672C35CFA8FF14C9C223B84277BD645C0AF54BAD5790375'],
  ['SSHFP', '2 1 123456789ABCDEF67890123456789ABCDEF67890'], ['IPSECKEY', '10 1 2 192.0.2.38 AQNRU3mG7TVTO2BkR47usntb102uFJtugbo6BSGvgqt4AQ=='],
  ['IPSECKEY', '10 3 2 mygateway.example.com. AQNRU3mG7TVTO2BkR47usntb102uFJtugbo6BSGvgqt4AQ=='],
  ['RRSIG', 'DS 8 2 86400 1374774350 1374165350 8795 com. cuOdo+2G0yJpBN5ba2zxiljSzgtTzminrVc3CrsNxQPqc5YVQX4eBWMB'],
  ['NSEC', 'aaa. NS SOA RRSIG NSEC DNSKEY ZONEMD TYPE1234'], ['DNSKEY', '257 3 8 AwEAAaz/tAm8yTn4Mfeh5eyI96WSVexTBAvkMgJzkKTOiW1vkIbzxeF3'],
  ['NSEC3', '1 1 12 AABBCCDD 2T7B4G4VSA5SMI47K61MV5BV1A22BOJR NS SOA MX RRSIG DNSKEY NSEC3PARAM'], ['NSEC3PARAM', '1 0 12 AABBCCDD'],
  ['TLSA', '3 1 1 0C72AC70B745AC19998811B131D662C9AC69DBDBE7CB23E5B514B56664C5D3D6'],
  ['HIP', '2 200100107B1A74DF365639CC39F1D578 AwEAAbdxyhNuSutc5EMzxTs9LBPCIkOFH8cIvM4p9+LrV4e19WzK00+CI6zBCQTdtWsuxKbWIy87UOoJTwkUs7lBu+Upr1gsNrut79ryra+bSRGQb1slImA8YVJyuIDsj7kwzG7jnERNqnWxZ48AWkskmdHaVDP4BcelrTI3rMXdXF5D rvs.example.com.'],
  ['CSYNC', '66 3 A NS AAAA'], ['ZONEMD', '2024101100 1 1 F1EA43854616D1E6E06C997D9A54AD4F275156AEF999D5E6E5EECE7CB4619B42'],
  ['SVCB', '1 . alpn=h2,h3 port=8443 ipv4hint=192.0.2.1,192.0.2.2 ech=AEP+DQA= ipv6hint=2001:db8::1 mandatory=alpn,port no-default-alpn'],
  ['HTTPS', '1 . alpn="h3,h2" ipv4hint=104.16.132.229,104.16.133.229'], ['HTTPS', '0 svc.example.'], ['SPF', '"v=spf1 mx -all"'],
  ['NID', '10 0014:4fff:ff20:ee64'], ['L32', '10 10.1.2.0'], ['L64', '10 2001:0db8:1140:1000'], ['LP', '10 l64-subnet1.example.com.'],
  ['EUI48', '00-00-5e-00-53-2a'], ['EUI64', '00-00-5e-ef-10-00-00-2a'], ['URI', '10 1 "ftp://ftp1.example.com/public"'],
  ['CAA', '0 issue "letsencrypt.org"'], ['AVC', '"app-name:WOLFGANG|app-class:OAM"'], ['DHCID', 'AAIBY2/AuCccgoJbsaxcQc9TUapptP69lOjxfNuVAA2kjEA='],
  ['OPENPGPKEY', 'mQINBFit2jsBEADrbl5vjVxYeAE0g0IDYCBpHirv1Sjlqxx5gjtPhb2YhvyDMXjq'], ['TYPE65280', '\\# 4 0A000001'], ['NULL', '\\# 3 010203'],
];
export const seedArb = fc.constantFrom(...SEEDS).map(([t, text]) => {
  const type = rrtypeFromText(t)!;
  return { type, text, wire: rdataFromText(type, text) };
});
