// The line reader (lib/line-reader.ts): what a line is, the bound and its
// one wording, and that neither depends on where reads or chunks cut the
// input, checked against a plain split of the whole input.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { countLines, LineReader, splitLines } from '../../../src/lib/line-reader.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'rrscan-line-reader-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let fileNo = 0;

function tempFile(content: string | Uint8Array): string {
  const file = path.join(tmp, `t${fileNo++}`);
  writeFileSync(file, content);
  return file;
}

/** A line as the tests compare them: its number and its text, or `TOO LONG`. */
type Seen = [number, string];

/** What the reader must hand out: the input split at LF, a CR before each LF (and at the very end) dropped. */
function expected(input: Buffer, lineBytesMax: number, skipBom = false): Seen[] {
  let text = input.toString('latin1');
  if (skipBom && text.startsWith('\xef\xbb\xbf')) text = text.slice(3);
  const parts = text.split('\n');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts.map((p, i) => {
    const line = p.endsWith('\r') ? p.slice(0, -1) : p;
    return [i + 1, line.length > lineBytesMax ? 'TOO LONG' : line];
  });
}

function take(r: LineReader, out: Seen[]): void {
  while (r.next()) out.push([r.lineNo, r.tooLong ? 'TOO LONG' : r.bytes.toString('latin1', r.start, r.end)]);
}

/** Pushes `input` in chunks cut at `cuts`, taking lines after each. */
function pushed(input: Buffer, cuts: readonly number[], lineBytesMax: number, bufferBytes = 1, skipBom = false): Seen[] {
  const r = new LineReader({ lineBytesMax, bufferBytes, skipBom });
  const out: Seen[] = [];
  let at = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    r.push(input.subarray(at, Math.max(at, cut)));
    at = Math.max(at, cut);
    take(r, out);
  }
  r.push(input.subarray(at));
  take(r, out);
  r.finish();
  take(r, out);
  return out;
}

/** Reads a file through fill(), in reads of at most bufferBytes minus what a cut line carries over. */
async function filled(file: string, lineBytesMax: number, bufferBytes: number, skipBom = false): Promise<Seen[]> {
  const fh = await open(file, 'r');
  try {
    const r = new LineReader({ lineBytesMax, bufferBytes, skipBom });
    const out: Seen[] = [];
    let at = 0;
    for (;;) {
      const n = await r.fill(fh, at);
      at += n;
      take(r, out);
      if (n === 0) return out;
    }
  } finally {
    await fh.close();
  }
}

const b = (s: string): Buffer => Buffer.from(s, 'latin1');

describe('LineReader', () => {
  it('splits at LF, drops a CR before it, numbers empty lines and takes a last line without LF', () => {
    expect(pushed(b('a\r\n\nbb\ncc\r\nlast\r'), [], 10)).toEqual([[1, 'a'], [2, ''], [3, 'bb'], [4, 'cc'], [5, 'last']]);
    expect(pushed(b('a\n'), [], 10)).toEqual([[1, 'a']]);
    expect(pushed(b(''), [], 10)).toEqual([]);
    expect(pushed(b('\n'), [], 10)).toEqual([[1, '']]);
  });

  it('hands out a line only once it is complete, or the input has ended', () => {
    const r = new LineReader({ lineBytesMax: 10, bufferBytes: 4 });
    r.push(b('abc'));
    expect(r.next()).toBe(false);
    r.push(b('d\nef'));
    expect([r.next(), r.text(), r.lineNo]).toEqual([true, 'abcd', 1]);
    expect(r.next()).toBe(false);
    r.finish();
    expect([r.next(), r.text(), r.lineNo]).toEqual([true, 'ef', 2]);
    expect(r.next()).toBe(false);
  });

  it('refuses a line over the bound once, by number, with the one wording, and reads on after it', () => {
    const r = new LineReader({ lineBytesMax: 4, bufferBytes: 64 });
    expect(r.tooLongReason).toBe('line longer than 4 bytes');
    const out: Seen[] = [];
    r.push(b('ok\n12345\nabcd\n'));
    take(r, out);
    expect(out).toEqual([[1, 'ok'], [2, 'TOO LONG'], [3, 'abcd']]);
  });

  it('drops an over-long line\'s bytes as they arrive, holding none of them', () => {
    const r = new LineReader({ lineBytesMax: 8, bufferBytes: 16 });
    const out: Seen[] = [];
    r.push(b('first\n0123456789'));
    take(r, out);
    expect(out).toEqual([[1, 'first'], [2, 'TOO LONG']]);
    for (let i = 0; i < 1000; i++) {
      r.push(Buffer.alloc(4096, 0x78));
      take(r, out);
    }
    r.push(b('tail\nnext\n'));
    take(r, out);
    expect(out).toEqual([[1, 'first'], [2, 'TOO LONG'], [3, 'next']]);
    expect(r.bytes.buffer.byteLength).toBeLessThan(1 << 16); // 4 MB went past; the buffer never held them
  });

  it('takes a line of exactly the bound, with LF or CRLF, wherever a chunk cuts it', () => {
    const input = b('x'.repeat(6) + '\r\n' + 'y'.repeat(6) + '\n' + 'z'.repeat(7) + '\r\n' + 'w'.repeat(6) + '\r');
    const want: Seen[] = [[1, 'xxxxxx'], [2, 'yyyyyy'], [3, 'TOO LONG'], [4, 'wwwwww']];
    for (let cut = 0; cut <= input.length; cut++) expect(pushed(input, [cut], 6), `cut at ${cut}`).toEqual(want);
  });

  it('drops a byte order mark at the start only, when asked', () => {
    const input = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), b('a\n\xef\xbb\xbfb\n')]);
    expect(pushed(input, [], 10, 1, true)).toEqual([[1, 'a'], [2, '\xef\xbb\xbfb']]);
    expect(pushed(input, [], 10, 1, false)).toEqual([[1, '\xef\xbb\xbfa'], [2, '\xef\xbb\xbfb']]);
  });

  it('property: pushed in any chunks, the lines are those of the whole input split at LF', () => {
    const bytes = fc.array(fc.constantFrom(0x0a, 0x0d, 0x61, 0x62, 0xef, 0xbb, 0xbf), { maxLength: 80 });
    fc.assert(fc.property(bytes, fc.array(fc.nat(80), { maxLength: 6 }), fc.integer({ min: 0, max: 12 }), fc.integer({ min: 1, max: 40 }),
      fc.boolean(), (arr, cuts, max, size, bom) => {
        const input = Buffer.from(arr);
        expect(pushed(input, cuts, max, size, bom)).toEqual(expected(input, max, bom));
      }));
  });

  it('property: read from a file through any buffer size, the lines are those of the whole file', async () => {
    const bytes = fc.array(fc.constantFrom(0x0a, 0x0d, 0x61, 0x62), { maxLength: 200 });
    await fc.assert(fc.asyncProperty(bytes, fc.integer({ min: 0, max: 12 }), fc.integer({ min: 1, max: 40 }),
      async (arr, max, size) => {
        const input = Buffer.from(arr);
        expect(await filled(tempFile(input), max, size)).toEqual(expected(input, max));
      }), { numRuns: 200 });
  });

  it('fill() reads a range: from a position, at most so many bytes, and ends with it', async () => {
    const file = tempFile('skip\nab\ncd\nrest\n');
    const fh = await open(file, 'r');
    try {
      const r = new LineReader({ lineBytesMax: 10, bufferBytes: 64 });
      const out: Seen[] = [];
      let read = 0;
      for (;;) {
        const n = await r.fill(fh, 5 + read, 6 - read);
        read += n;
        take(r, out);
        if (n === 0) break;
      }
      expect(out).toEqual([[1, 'ab'], [2, 'cd']]);
    } finally {
      await fh.close();
    }
  });
});

describe('countLines and splitLines', () => {
  it('count the LFs before an offset, and cut a file just after LFs into ranges that cover it', async () => {
    const text = Array.from({ length: 50 }, (_, i) => `line ${i} ${'x'.repeat(i % 7)}`).join('\n') + '\n';
    const file = tempFile(text);
    const ranges = await splitLines(file, 4);
    expect(ranges[0]!.start).toBe(0);
    expect(ranges[ranges.length - 1]!.end).toBe(Buffer.byteLength(text));
    const fh = await open(file, 'r');
    try {
      for (const [i, r] of ranges.entries()) {
        if (i > 0) expect(r.start).toBe(ranges[i - 1]!.end);
        expect(r.start === 0 || text[r.start - 1] === '\n').toBe(true);
        expect(await countLines(fh, r.start)).toBe(text.slice(0, r.start).split('\n').length - 1);
      }
    } finally {
      await fh.close();
    }
  });
});
