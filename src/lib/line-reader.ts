// Lines of bytes, each within a bound: the one line reader of NDJSON and
// zone files (read from a file into its buffer) and of ClickHouse answers
// (pushed as they arrive from the socket).
//
// What a line is. A line ends at an LF; a CR just before the LF is not
// part of it, nor is a CR ending the input. Once the input has ended, the
// bytes after the last LF (when there are any) are the last line. Lines are
// numbered from 1, empty and over-long ones included, so a number is the
// one an editor shows. countLines and splitLines below cut files by the
// same rule, for readers of a part of a file.
//
// The bound. A line longer than `lineBytesMax` bytes (its CR and LF aside)
// is handed out once, with its number and `tooLong` set, and no bytes: the
// reader drops its bytes up to its LF as they arrive, whether the LF is in
// the buffer already or many reads away. So the buffer never holds more
// than one line within the bound plus one read, and the verdict on a line
// never depends on where reads happen to cut it. Callers report it with
// `tooLongReason`, the one wording (ingest: an IngestError for `line N`).
//
// Use. Bytes come in by fill() (a read from a file) or push() (a copy of a
// chunk); finish() says there are no more (fill() says it itself when a read
// returns nothing). Then next() returns true once per complete line now
// held, setting lineNo and either tooLong or the line's bytes
// bytes[start, end); false when it needs more input, or after the end when
// every line has been handed out. The bytes of a line stay valid until the
// next fill() or push(). next() allocates nothing, so a caller that takes
// a million lines a second pays only for what it does with them.

import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';

const LF = 0x0a;
const CR = 0x0d;
const BOM = [0xef, 0xbb, 0xbf];

export interface LineReaderOptions {
  /** The longest line taken, in bytes without its LF (and a CR before it). */
  lineBytesMax: number;
  /**
   * Bytes the buffer starts with. fill() reads into what is free of it, so
   * for a file make it larger than lineBytesMax + 1 (the most a line cut by
   * a read leaves to carry over) and it never grows; push() grows it
   * (doubling) when a chunk does not fit beside the part of a line held.
   */
  bufferBytes: number;
  /** Drop a UTF-8 byte order mark at the very start of the input. */
  skipBom?: boolean;
}

export class LineReader {
  /** The bytes held, from the buffer's start; the current line is bytes[start, end). */
  bytes: Buffer;
  start = 0;
  end = 0;
  /** The current line's number, from 1. */
  lineNo = 0;
  /** The current line is longer than the bound: it has no bytes (start === end), only its number. */
  tooLong = false;
  /** Why an over-long line is refused: one wording wherever lines are read. */
  readonly tooLongReason: string;

  private readonly lineBytesMax: number;
  private buf: Buffer;
  /** The first byte not yet handed out in a line. */
  private pos = 0;
  /** Inside an over-long line already handed out: its bytes are dropped up to its LF. */
  private skipping = false;
  private ended = false;
  private bomPending: boolean;

  constructor(opts: LineReaderOptions) {
    this.lineBytesMax = opts.lineBytesMax;
    this.tooLongReason = `line longer than ${opts.lineBytesMax} bytes`;
    this.buf = Buffer.allocUnsafe(Math.max(1, opts.bufferBytes));
    this.bytes = this.buf.subarray(0, 0);
    this.bomPending = opts.skipBom === true;
  }

  /**
   * Reads at most `lengthMax` bytes of `fh` at `position` (null: where the
   * file is) into the buffer; returns how many. Reading nothing ends the
   * input, as does a `lengthMax` of 0 (the end of a range).
   */
  async fill(fh: FileHandle, position: number | null, lengthMax = Infinity): Promise<number> {
    this.compact(1);
    const length = Math.min(this.buf.length - this.bytes.length, lengthMax);
    const bytesRead = length > 0 ? (await fh.read(this.buf, this.bytes.length, length, position)).bytesRead : 0;
    if (bytesRead === 0) this.ended = true;
    this.took(bytesRead);
    return bytesRead;
  }

  /** Takes a copy of `chunk` (none of it while the bytes of an over-long line are being dropped). */
  push(chunk: Uint8Array): void {
    if (this.skipping) {
      const lf = chunk.indexOf(LF);
      if (lf < 0) return;
      this.skipping = false;
      chunk = chunk.subarray(lf + 1);
    }
    this.compact(chunk.length);
    this.buf.set(chunk, this.bytes.length);
    this.took(chunk.length);
  }

  /** No more input: what follows the last LF becomes the last line. */
  finish(): void {
    this.ended = true;
  }

  /** The next complete line (see the top of this file); false when more input is needed or none is left. */
  next(): boolean {
    this.tooLong = false;
    const b = this.bytes;
    const held = b.length;
    let pos = this.pos;
    if (this.skipping) {
      const lf = b.indexOf(LF, pos);
      if (lf < 0) {
        this.pos = held;
        return false;
      }
      this.skipping = false;
      pos = lf + 1;
    }
    let lf = b.indexOf(LF, pos);
    if (lf < 0) {
      const tail = held - pos;
      if (!this.ended) {
        // Too long already, whatever follows: its LF may be a CR away, never more.
        if (tail - (tail > 0 && b[held - 1] === CR ? 1 : 0) > this.lineBytesMax) {
          this.lineNo++;
          this.tooLong = true;
          this.skipping = true;
          this.start = this.end = this.pos = held;
          return true;
        }
        this.pos = pos;
        return false;
      }
      if (tail === 0) {
        this.pos = pos;
        return false;
      }
      lf = held;
    }
    this.lineNo++;
    const end = lf > pos && b[lf - 1] === CR ? lf - 1 : lf;
    this.pos = Math.min(lf + 1, held);
    if (end - pos > this.lineBytesMax) {
      this.tooLong = true;
      this.start = this.end = pos;
      return true;
    }
    this.start = pos;
    this.end = end;
    return true;
  }

  /** The current line as UTF-8 text. */
  text(): string {
    return this.bytes.toString('utf8', this.start, this.end);
  }

  /** Moves the bytes not yet handed out to the buffer's start and makes room for `need` more, growing it when it must. */
  private compact(need: number): void {
    const keep = this.skipping ? 0 : this.bytes.length - this.pos;
    if (keep + need > this.buf.length) {
      let size = this.buf.length;
      while (size < keep + need) size *= 2;
      const grown = Buffer.allocUnsafe(size);
      this.buf.copy(grown, 0, this.pos, this.pos + keep);
      this.buf = grown;
    } else if (this.pos > 0 && keep > 0) {
      this.buf.copyWithin(0, this.pos, this.pos + keep);
    }
    this.pos = 0;
    this.start = this.end = 0;
    this.bytes = this.buf.subarray(0, keep);
  }

  /** `n` bytes were added after those held. A view of exactly the bytes held: indexOf must not find stale LFs past them. */
  private took(n: number): void {
    this.bytes = this.buf.subarray(0, this.bytes.length + n);
    if (this.bomPending && n > 0) {
      this.bomPending = false;
      const b = this.bytes;
      if (b.length >= 3 && b[0] === BOM[0] && b[1] === BOM[1] && b[2] === BOM[2]) this.pos = 3;
    }
  }
}

/** LF bytes in the first `end` bytes of a file: the lines before a part of it that starts there. */
export async function countLines(fh: FileHandle, end: number): Promise<number> {
  const buf = Buffer.allocUnsafe(1 << 20);
  let lines = 0;
  for (let at = 0; at < end;) {
    const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, end - at), at);
    if (bytesRead === 0) break;
    for (let i = buf.indexOf(LF, 0); i >= 0 && i < bytesRead; i = buf.indexOf(LF, i + 1)) lines++;
    at += bytesRead;
  }
  return lines;
}

/** A part of a file: `start` is 0 or just after an LF, `end` just after an LF or the file's size. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Cuts a file into about `parts` ranges of whole lines, for readers that
 * share it out (parallel NDJSON ingest): each cut moves forward to just
 * after the next LF.
 */
export async function splitLines(file: string, parts: number): Promise<ByteRange[]> {
  const fh = await open(file, 'r');
  try {
    const size = (await fh.stat()).size;
    const cuts = [0];
    const buf = Buffer.allocUnsafe(64 << 10);
    for (let k = 1; k < parts; k++) {
      let at = Math.max(cuts[cuts.length - 1]!, Math.floor((size * k) / parts) - 1);
      let cut = size;
      while (at < size) {
        const { bytesRead } = await fh.read(buf, 0, buf.length, at);
        if (bytesRead === 0) break;
        const lf = buf.subarray(0, bytesRead).indexOf(LF);
        if (lf >= 0) { cut = at + lf + 1; break; }
        at += bytesRead;
      }
      if (cut > cuts[cuts.length - 1]! && cut < size) cuts.push(cut);
    }
    cuts.push(size);
    return cuts.slice(1).map((end, i) => ({ start: cuts[i]!, end }));
  } finally {
    await fh.close();
  }
}
