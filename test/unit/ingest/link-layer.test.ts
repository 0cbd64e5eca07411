import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../../src/config/limits.js';
import { ETHERTYPE_IPV4, ETHERTYPE_IPV6, link, linkPayload, NOT_IP, UNKNOWN_LINK } from '../../../src/ingest/pcap/link-layer.js';

const ipv4Start = Uint8Array.of(0x45, 0, 0, 20);
const ipv6Start = Uint8Array.of(0x60, 0, 0, 0);
const frame = (...parts: (Uint8Array | number[])[]): Uint8Array => Uint8Array.from(parts.flatMap((p) => Array.from(p)));
const macs = new Array(12).fill(0xee);

/** linkPayload's answer and the offset it found, for a frame starting at 3 inside a larger buffer. */
function decode(linktype: number, f: Uint8Array): [number, number] {
  const b = frame([9, 9, 9], f, [9]);
  const t = linkPayload(linktype, b, 3, 3 + f.length);
  return [t, link.offset - 3];
}

describe('linkPayload', () => {
  it('reads the ethertype of Ethernet, through stacked VLAN tags', () => {
    expect(decode(1, frame(macs, [0x08, 0x00], ipv4Start))).toEqual([ETHERTYPE_IPV4, 14]);
    expect(decode(1, frame(macs, [0x81, 0x00, 0, 100, 0x86, 0xdd], ipv6Start))).toEqual([ETHERTYPE_IPV6, 18]);
    expect(decode(1, frame(macs, [0x88, 0xa8, 0, 10, 0x81, 0x00, 0, 20, 0x08, 0x00], ipv4Start))).toEqual([ETHERTYPE_IPV4, 22]);
  });

  it(`gives up after ${LIMITS.vlanTagsMax} VLAN tags, and on frames too short or not IP`, () => {
    const tags = Array.from({ length: LIMITS.vlanTagsMax + 1 }, () => [0x81, 0x00, 0, 1]).flat();
    expect(decode(1, frame(macs, [0x81, 0x00], tags.slice(2), [0x08, 0x00], ipv4Start))[0]).toBe(NOT_IP);
    expect(decode(1, frame(macs, [0x08, 0x06], new Array(28).fill(0)))[0]).toBe(NOT_IP); // ARP
    expect(decode(1, frame(macs, [0x08]))[0]).toBe(NOT_IP);
    expect(decode(1, frame(macs, [0x81, 0x00, 0]))[0]).toBe(NOT_IP);
  });

  it('reads Linux SLL and SLL2 protocol fields', () => {
    expect(decode(113, frame(new Array(14).fill(0), [0x08, 0x00], ipv4Start))).toEqual([ETHERTYPE_IPV4, 16]);
    expect(decode(276, frame([0x86, 0xdd], new Array(18).fill(0), ipv6Start))).toEqual([ETHERTYPE_IPV6, 20]);
    expect(decode(113, frame(new Array(15).fill(0)))[0]).toBe(NOT_IP);
  });

  it('takes the IP version where the link header names no protocol (BSD null, raw IP)', () => {
    expect(decode(0, frame([2, 0, 0, 0], ipv4Start))).toEqual([ETHERTYPE_IPV4, 4]);
    expect(decode(108, frame([0, 0, 0, 24], ipv6Start))).toEqual([ETHERTYPE_IPV6, 4]);
    for (const raw of [101, 12, 14, 228, 229]) expect(decode(raw, ipv6Start), String(raw)).toEqual([ETHERTYPE_IPV6, 0]);
    expect(decode(101, Uint8Array.of(0x50))[0]).toBe(NOT_IP);
    expect(decode(101, new Uint8Array(0))[0]).toBe(NOT_IP);
  });

  it('answers UNKNOWN_LINK for link types it does not decode', () => {
    expect(decode(9, frame(ipv4Start))[0]).toBe(UNKNOWN_LINK);
  });
});
