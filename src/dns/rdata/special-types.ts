// A6, IPSECKEY and HIP: types whose fields depend on each other (a length
// or type field decides the shape of a later one), so each has its own
// codec pair instead of a schema entry.
//
// Contract: the same as the schema walkers': the text functions read the
// whole rdata and throw DnsFormatError for malformed wire or NOT_CANONICAL
// for wire with no presentation; the put functions write the rdata of
// toks[i..] through writer.ts and throw DnsFormatError for bad text. Names
// are uncompressed on the wire, lower-cased on input.

import { DnsFormatError } from '../../errors/catalogue.js';
import { ipv4FromText, ipv6FromText, ipv6ToText } from '../ip.js';
import { printable } from '../name.js';
import { ipv4Text, ipv6Text } from './addresses.js';
import { base64, hexUpper, putBase64, putHex } from './encodings.js';
import { num } from './numbers.js';
import { joinedRest, type Tokens } from './tokens.js';
import { cursor, malformed, nameText, need, NOT_CANONICAL, u16 } from './wire.js';
import { out, put16, put8, putBytes, putName } from './writer.js';

// ---- A6 (RFC 2874 section 3.1): prefix length, the address suffix in as few octets as hold it, the prefix name.

function a6SuffixOctets(prefix: number): number {
  return (128 - prefix + 7) >> 3;
}

/** Whether the suffix's first octet has bits that belong to the prefix (they must be zero). */
function a6SuffixIntrudes(addr: Uint8Array, prefix: number): boolean {
  const octets = a6SuffixOctets(prefix);
  return prefix % 8 !== 0 && octets > 0 && (addr[16 - octets]! >> (8 - (prefix % 8))) !== 0;
}

export function a6Text(b: Uint8Array): string {
  need(b, 0, 1, 'A6 prefix length');
  const prefix = b[0]!;
  if (prefix > 128) throw malformed(`A6 prefix length ${prefix}`);
  const octets = a6SuffixOctets(prefix);
  need(b, 1, octets, 'A6 address suffix');
  const addr = new Uint8Array(16);
  addr.set(b.subarray(1, 1 + octets), 16 - octets);
  if (a6SuffixIntrudes(addr, prefix)) throw NOT_CANONICAL;
  let s = `${prefix} ${ipv6ToText(addr)}`;
  let p = 1 + octets;
  if (prefix > 0) {
    s += ` ${nameText(b, p)}`;
    p = cursor.pos;
  }
  if (p !== b.length) throw malformed(`${b.length - p} trailing octets`);
  return s;
}

export function putA6(toks: Tokens, i: number, origin: string | undefined): void {
  if (toks.length - i < 2) throw new DnsFormatError('too few fields');
  const prefix = num(toks.text[i]!, 128, 'A6 prefix length');
  const addr = ipv6FromText(toks.text[i + 1]!);
  if (!addr) throw new DnsFormatError(`bad IPv6 address "${printable(toks.text[i + 1]!)}"`);
  const octets = a6SuffixOctets(prefix);
  for (let k = 0; k < 16 - octets; k++) if (addr[k] !== 0) throw new DnsFormatError('A6 suffix has bits inside the prefix');
  if (a6SuffixIntrudes(addr, prefix)) throw new DnsFormatError('A6 suffix has bits inside the prefix');
  put8(prefix);
  putBytes(addr.subarray(16 - octets));
  if (prefix > 0) {
    if (toks.length - i < 3) throw new DnsFormatError('A6 needs a prefix name');
    putName(toks.text[i + 2]!, origin);
    if (toks.length - i > 3) throw new DnsFormatError('trailing fields after A6');
  } else if (toks.length - i > 2) {
    throw new DnsFormatError('A6 with prefix length 0 has no prefix name');
  }
}

// ---- IPSECKEY (RFC 4025): precedence, gateway type, algorithm, gateway (by type), key.

/** The gateway at b[p] of type gwType: none ("."), IPv4, IPv6 or a name. Sets cursor.pos. */
function gatewayText(gwType: number, b: Uint8Array, p: number): string {
  switch (gwType) {
    case 0: cursor.pos = p; return '.';
    case 1: return ipv4Text(b, p, 'IPSECKEY gateway');
    case 2: return ipv6Text(b, p, 'IPSECKEY gateway');
    case 3: return nameText(b, p);
    default: throw NOT_CANONICAL;
  }
}

export function ipseckeyText(b: Uint8Array): string {
  need(b, 0, 3, 'IPSECKEY header');
  const gwType = b[1]!;
  const gw = gatewayText(gwType, b, 3);
  const key = base64(b, cursor.pos, b.length);
  return `${b[0]!} ${gwType} ${b[2]!} ${gw}${key ? ` ${key}` : ''}`;
}

function putGateway(gwType: number, gw: string, origin: string | undefined): void {
  switch (gwType) {
    case 0:
      if (gw !== '.') throw new DnsFormatError('gateway type 0 needs "." as the gateway');
      return;
    case 1: case 2: {
      const a = gwType === 1 ? ipv4FromText(gw) : ipv6FromText(gw);
      if (!a) throw new DnsFormatError(`bad gateway address "${printable(gw)}"`);
      return putBytes(a);
    }
    case 3:
      return putName(gw, origin);
    default:
      throw new DnsFormatError(`unknown gateway type ${gwType} (use the \\# form)`);
  }
}

export function putIpseckey(toks: Tokens, i: number, origin: string | undefined): void {
  if (toks.length - i < 4) throw new DnsFormatError('too few fields');
  const prec = num(toks.text[i]!, 0xff, 'precedence');
  const gwType = num(toks.text[i + 1]!, 0xff, 'gateway type');
  const alg = num(toks.text[i + 2]!, 0xff, 'algorithm');
  put8(prec);
  put8(gwType);
  put8(alg);
  putGateway(gwType, toks.text[i + 3]!, origin);
  putBase64(joinedRest(toks, i + 4), 'IPSECKEY key');
}

// ---- HIP (RFC 8005): HIT length, algorithm, key length, HIT, key, rendezvous servers.

export function hipText(b: Uint8Array): string {
  need(b, 0, 4, 'HIP header');
  const hitLen = b[0]!, alg = b[1]!, pkLen = u16(b, 2);
  need(b, 4, hitLen + pkLen, 'HIP HIT and key');
  if (hitLen === 0 || pkLen === 0) throw NOT_CANONICAL;
  let s = `${alg} ${hexUpper(b, 4, 4 + hitLen)} ${base64(b, 4 + hitLen, 4 + hitLen + pkLen)}`;
  let p = 4 + hitLen + pkLen;
  while (p < b.length) {
    s += ` ${nameText(b, p)}`;
    p = cursor.pos;
  }
  return s;
}

export function putHip(toks: Tokens, i: number, origin: string | undefined): void {
  if (toks.length - i < 3) throw new DnsFormatError('too few fields');
  const alg = num(toks.text[i]!, 0xff, 'algorithm');
  const hit = toks.text[i + 1]!, pk = toks.text[i + 2]!;
  const at = out.pos;
  put8(0);
  put8(alg);
  put16(0);
  putHex(hit, 'HIT');
  const hitLen = out.pos - at - 4;
  putBase64(pk, 'HIP key');
  const pkLen = out.pos - at - 4 - hitLen;
  if (hitLen === 0 || hitLen > 255 || pkLen === 0) throw new DnsFormatError('bad HIP HIT or key length');
  // The two lengths precede what they measure: set them now that both are written.
  out.buf[at] = hitLen;
  out.buf[at + 2] = pkLen >> 8;
  out.buf[at + 3] = pkLen & 0xff;
  for (let k = i + 3; k < toks.length; k++) putName(toks.text[k]!, origin);
}
