// Unsigned integer reads: network byte order for DNS messages, packet
// headers and Frame Streams lengths; either order for the capture file
// formats (pcap and pcapng files are written in the capturing host's
// order). No bounds checks: callers check lengths first, once per header.

export function u16(b: Uint8Array, i: number): number {
  return (b[i]! << 8) | b[i + 1]!;
}

export function u32(b: Uint8Array, i: number): number {
  return ((b[i]! << 24) >>> 0) + ((b[i + 1]! << 16) | (b[i + 2]! << 8) | b[i + 3]!);
}

function u16le(b: Uint8Array, i: number): number {
  return b[i]! | (b[i + 1]! << 8);
}

export function u32le(b: Uint8Array, i: number): number {
  return ((b[i + 3]! << 24) >>> 0) + ((b[i + 2]! << 16) | (b[i + 1]! << 8) | b[i]!);
}

/** u16 in little-endian order when `le`, else big-endian. */
export function rd16(b: Uint8Array, i: number, le: boolean): number {
  return le ? u16le(b, i) : u16(b, i);
}

/** u32 in little-endian order when `le`, else big-endian. */
export function rd32(b: Uint8Array, i: number, le: boolean): number {
  return le ? u32le(b, i) : u32(b, i);
}
