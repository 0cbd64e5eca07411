// Link layer: which network protocol a captured frame carries, and where.
//
// Contract: linkPayload(linktype, b, start, end) decodes the link header of
// the frame b[start, end) and answers ETHERTYPE_IPV4 or ETHERTYPE_IPV6 with
// the network header's offset in `link.offset`; NOT_IP for a frame too short
// or carrying something else; UNKNOWN_LINK for a link type we do not decode.
// Link types: Ethernet (1, with stacked 802.1Q/802.1ad tags, at most
// LIMITS.vlanTagsMax), BSD null/loopback (0, 108), Linux SLL (113) and SLL2
// (276), raw IP (101, 12, 14, 228, 229). Where the header names no protocol
// (null, raw), the IP version nibble decides.

import { LIMITS } from '../../config/limits.js';
import { u16 } from '../../lib/bytes.js';

export const ETHERTYPE_IPV4 = 0x0800;
export const ETHERTYPE_IPV6 = 0x86dd;
export const NOT_IP = -1;
export const UNKNOWN_LINK = -2;
/** The link header names no protocol: the IP version decides. */
const BY_VERSION = -3;

const ETHERTYPE_VLAN = new Set([0x8100, 0x88a8, 0x9100]);

/** Where the network header starts, set by linkPayload. */
export const link = { offset: 0 };

/** Ethernet II: ethertype at 12 after the addresses, then any stacked VLAN tags. */
function ethernet(b: Uint8Array, p: number, end: number): number {
  if (end - p < 14) return NOT_IP;
  let ethertype = u16(b, p + 12);
  p += 14;
  for (let tags = 0; ETHERTYPE_VLAN.has(ethertype) && tags < LIMITS.vlanTagsMax; tags++) {
    if (end - p < 4) return NOT_IP;
    ethertype = u16(b, p + 2);
    p += 4;
  }
  link.offset = p;
  return ethertype;
}

/** The protocol of the link header at b[start], with link.offset after the header. */
function linkHeader(linktype: number, b: Uint8Array, start: number, end: number): number {
  const p = start;
  switch (linktype) {
    case 1:
      return ethernet(b, p, end);
    case 113: // Linux cooked v1: protocol at 14, 16-byte header.
      if (end - p < 16) return NOT_IP;
      link.offset = p + 16;
      return u16(b, p + 14);
    case 276: // Linux cooked v2: protocol at 0, 20-byte header.
      if (end - p < 20) return NOT_IP;
      link.offset = p + 20;
      return u16(b, p);
    case 0: // BSD null / loopback: a 4-byte address family in the capturing host's order; the IP version says the same.
    case 108:
      if (end - p < 4) return NOT_IP;
      link.offset = p + 4;
      return BY_VERSION;
    case 101: case 12: case 14: case 228: case 229: // Raw IP.
      link.offset = p;
      return BY_VERSION;
    default:
      return UNKNOWN_LINK;
  }
}

/** The protocol an IP header at b[p] announces by its version nibble. */
function byVersion(b: Uint8Array, p: number, end: number): number {
  if (end - p < 1) return NOT_IP;
  const version = b[p]! >> 4;
  return version === 4 ? ETHERTYPE_IPV4 : version === 6 ? ETHERTYPE_IPV6 : NOT_IP;
}

/** See the module comment. */
export function linkPayload(linktype: number, b: Uint8Array, start: number, end: number): number {
  let ethertype = linkHeader(linktype, b, start, end);
  if (ethertype === UNKNOWN_LINK) return UNKNOWN_LINK;
  if (ethertype === BY_VERSION) ethertype = byVersion(b, link.offset, end);
  return ethertype === ETHERTYPE_IPV4 || ethertype === ETHERTYPE_IPV6 ? ethertype : NOT_IP;
}
