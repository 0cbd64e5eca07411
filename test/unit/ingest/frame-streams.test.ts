// Frame Streams framing (src/ingest/frame-streams.ts), shared by the dnstap
// file reader and the live receiver's senders: one set of bounds, one
// wording for each refusal.

import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../../src/config/limits.js';
import { dnstapObservations } from '../../../src/ingest/dnstap.js';
import { frameHead, parseControl, startRefusal } from '../../../src/ingest/frame-streams.js';
import { be32, cat, collect, collectingContext, control, tempFile } from './wire-fixtures.js';

const head = (bytes: Uint8Array) => frameHead(bytes, 0, bytes.length);

describe('frameHead', () => {
  it('is short of a length, then of a control frame\'s length', () => {
    expect(head(Uint8Array.of(0, 0, 0))).toEqual({ kind: 'short', need: 4 });
    expect(head(cat([be32(0), Uint8Array.of(0, 0)]))).toEqual({ kind: 'short', need: 8 });
  });

  it('sizes data and control frames from their lengths alone, bytes or not', () => {
    expect(head(be32(10))).toEqual({ kind: 'data', size: 14, body: 4, bad: undefined });
    expect(head(cat([be32(0), be32(4)]))).toEqual({ kind: 'control', size: 12, body: 8, bad: undefined });
    const start = control(2, 'protobuf:dnstap.Dnstap');
    const h = head(start);
    expect(h).toMatchObject({ kind: 'control', size: start.length });
    expect(parseControl(start, 8, start.length)).toEqual({ type: 2, contentTypes: ['protobuf:dnstap.Dnstap'] });
  });

  it('refuses lengths beyond the bounds, in the one wording', () => {
    const max = LIMITS.dnstapFrameBytesMax;
    expect(head(be32(max))).toMatchObject({ kind: 'data', bad: undefined });
    expect(head(be32(max + 1))).toMatchObject({ kind: 'data', bad: `frame length ${max + 1} exceeds ${max} bytes` });
    const cmax = LIMITS.dnstapControlFrameBytesMax;
    for (const clen of [0, 3, cmax + 1]) {
      expect(head(cat([be32(0), be32(clen)]))).toMatchObject({ kind: 'control', bad: `control frame length ${clen} is outside 4..${cmax} bytes` });
    }
    expect(head(cat([be32(0), be32(cmax)]))).toMatchObject({ kind: 'control', bad: undefined });
  });

  it('refuses a START of another content type, and takes one that names none', () => {
    expect(startRefusal({ type: 2, contentTypes: ['protobuf:other.Thing'] }, 'protobuf:dnstap.Dnstap'))
      .toBe('START content type "protobuf:other.Thing" is not "protobuf:dnstap.Dnstap"');
    expect(startRefusal({ type: 2, contentTypes: [] }, 'protobuf:dnstap.Dnstap')).toBeUndefined();
  });

  it('a dnstap file says what a live sender is told: a control frame too long, in the same words', async () => {
    const file = tempFile('big-control.fstrm', cat([control(2, 'protobuf:dnstap.Dnstap'), be32(0), be32(100_000), new Uint8Array(16)]));
    const ctx = collectingContext(file);
    expect(await collect(dnstapObservations(file, ctx))).toEqual([]);
    expect(ctx.rejects.map((e) => (e as { reason?: string }).reason)).toEqual(['control frame length 100000 is outside 4..512 bytes']);
  });
});
