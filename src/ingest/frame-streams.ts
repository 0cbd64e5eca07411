// Frame Streams (fstrm), the framing of dnstap: what the file reader
// (dnstap.ts) and the live receiver's senders (live/sender.ts) both read,
// so a frame has one set of bounds and each refusal one wording.
//
//   data frame:    length (4 bytes, big-endian, not 0), then `length` bytes
//   control frame: 0 (the escape), control length (4 bytes), then the
//                  control type (4 bytes) and its fields: field type and
//                  length (4 bytes each), then the field's bytes
//
// A data frame longer than LIMITS.dnstapFrameBytesMax, or a control frame
// shorter than its type or longer than LIMITS.dnstapControlFrameBytesMax,
// is refused from its length alone: no later boundary can be trusted, so
// the reader stops (a file) or closes the connection (a sender), and never
// waits for the bytes of a 1 GB frame. What the control frames mean in
// turn (START, STOP, the READY / ACCEPT handshake) is the caller's: a file
// is unidirectional, a socket sender bidirectional.

import { LIMITS } from '../config/limits.js';
import { u32 } from '../lib/bytes.js';

export const CONTROL_ACCEPT = 1;
export const CONTROL_START = 2;
export const CONTROL_STOP = 3;
export const CONTROL_READY = 4;
export const CONTROL_FINISH = 5;
const CONTROL_FIELD_CONTENT_TYPE = 1;

const CONTROL_NAMES = ['ACCEPT', 'START', 'STOP', 'READY', 'FINISH'];

/** A control type's name for messages (`type 9` for one fstrm does not define). */
export function controlName(type: number): string {
  return CONTROL_NAMES[type - 1] ?? `type ${type}`;
}

/**
 * What the bytes at the front of a buffer say of the next frame. `short`:
 * fewer bytes than its head; `need` bytes in all tell what it is. Otherwise
 * a frame of `size` bytes in all (its head included) whose body starts
 * `body` bytes in; `bad` says why its length is refused (see the top).
 */
export type FrameHead =
  | { readonly kind: 'short'; readonly need: number }
  | { readonly kind: 'control' | 'data'; readonly size: number; readonly body: number; readonly bad: string | undefined };

const SHORT_OF_LENGTH: FrameHead = Object.freeze({ kind: 'short', need: 4 });
const SHORT_OF_CONTROL_LENGTH: FrameHead = Object.freeze({ kind: 'short', need: 8 });

/** The head of the frame at b[start, end) (see FrameHead). */
export function frameHead(b: Uint8Array, start: number, end: number): FrameHead {
  if (end - start < 4) return SHORT_OF_LENGTH;
  const len = u32(b, start);
  if (len !== 0) {
    const max = LIMITS.dnstapFrameBytesMax;
    return { kind: 'data', size: 4 + len, body: 4, bad: len > max ? `frame length ${len} exceeds ${max} bytes` : undefined };
  }
  if (end - start < 8) return SHORT_OF_CONTROL_LENGTH;
  const clen = u32(b, start + 4);
  const max = LIMITS.dnstapControlFrameBytesMax;
  return {
    kind: 'control', size: 8 + clen, body: 8,
    bad: clen < 4 || clen > max ? `control frame length ${clen} is outside 4..${max} bytes` : undefined,
  };
}

/** A control frame's type and content types. */
export interface ControlFrame {
  type: number;
  contentTypes: string[];
}

/** Parses a control frame's body b[start, end) (its type, then its fields); a string says why it is malformed. */
export function parseControl(b: Uint8Array, start: number, end: number): ControlFrame | string {
  if (end - start < 4) return `control frame of ${end - start} bytes has no type`;
  const out: ControlFrame = { type: u32(b, start), contentTypes: [] };
  for (let p = start + 4; p < end;) {
    if (p + 8 > end) return 'control frame field header runs past its end';
    const field = u32(b, p);
    const len = u32(b, p + 4);
    p += 8;
    if (len > end - p) return 'control frame field runs past its end';
    if (field === CONTROL_FIELD_CONTENT_TYPE) out.contentTypes.push(Buffer.from(b.buffer, b.byteOffset + p, len).toString('latin1'));
    p += len;
  }
  return out;
}

/** Why a START frame is refused: it names a content type other than `expected` (naming none is fine). */
export function startRefusal(start: ControlFrame, expected: string): string | undefined {
  const ct = start.contentTypes[0];
  return ct !== undefined && ct !== expected ? `START content type "${ct}" is not "${expected}"` : undefined;
}

/** A whole control frame (escape, length, type, content type field when given), as the receiving end sends ACCEPT and FINISH. */
export function encodeControl(type: number, contentType?: string): Buffer {
  const ct = contentType === undefined ? Buffer.alloc(0) : Buffer.from(contentType, 'latin1');
  const body = 4 + (contentType === undefined ? 0 : 8 + ct.length);
  const out = Buffer.alloc(8 + body);
  out.writeUInt32BE(0, 0);
  out.writeUInt32BE(body, 4);
  out.writeUInt32BE(type, 8);
  if (contentType !== undefined) {
    out.writeUInt32BE(CONTROL_FIELD_CONTENT_TYPE, 12);
    out.writeUInt32BE(ct.length, 16);
    ct.copy(out, 20);
  }
  return out;
}
