// RowBinary, ClickHouse's plain binary row format, for INSERTs: values in
// column order, integers little-endian, strings and arrays as a LEB128 length
// then their bytes or elements. No escaping at all, which is why ingest uses
// it rather than a text format: rdata wire forms are arbitrary bytes.

/** One INSERT's rows, appended column by column into a growing buffer. */
export class RowBinaryWriter {
  private buf = Buffer.allocUnsafe(1 << 16);
  private at = 0;
  rows = 0;

  get bytes(): number {
    return this.at;
  }

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
  }

  private leb128(n: number): void {
    this.room(5);
    while (n >= 0x80) {
      this.buf[this.at++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    this.buf[this.at++] = n;
  }

  uint8(n: number): this {
    this.room(1);
    this.buf[this.at++] = n;
    return this;
  }

  uint16(n: number): this {
    this.room(2);
    this.at = this.buf.writeUInt16LE(n, this.at);
    return this;
  }

  uint32(n: number): this {
    this.room(4);
    this.at = this.buf.writeUInt32LE(n, this.at);
    return this;
  }

  uint64(n: number | bigint): this {
    this.room(8);
    this.at = this.buf.writeBigUInt64LE(BigInt(n), this.at);
    return this;
  }

  /** A String column: text as UTF-8, or bytes as they are. */
  string(s: string | Uint8Array): this {
    if (typeof s === 'string') {
      const n = Buffer.byteLength(s, 'utf8');
      this.leb128(n);
      this.room(n);
      this.at += this.buf.write(s, this.at, 'utf8');
    } else {
      this.leb128(s.length);
      this.room(s.length);
      this.buf.set(s, this.at);
      this.at += s.length;
    }
    return this;
  }

  /** An Array(String) column. */
  strings(list: readonly (string | Uint8Array)[]): this {
    this.leb128(list.length);
    for (const s of list) this.string(s);
    return this;
  }

  /** Ends a row (the caller wrote every column in order). */
  row(): void {
    this.rows++;
  }

  /** The rows so far, and a fresh start. */
  take(): Buffer {
    const out = Buffer.from(this.buf.subarray(0, this.at));
    this.at = 0;
    this.rows = 0;
    return out;
  }
}
