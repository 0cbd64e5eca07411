// A FlatBuffers builder that does not copy large vectors: it lays a shard's
// FlatBuffer out exactly as the flatbuffers runtime's Builder does (same
// alignment, padding, vtable sharing, so the same bytes), but a typed array
// added as a vector is kept by reference as one piece of the output, and the
// file is written with writev from the pieces.
//
// Why: the runtime's Builder holds the whole FlatBuffer in one buffer that
// grows by doubling, so a 1.2 GB shard cost the parts that the writer had
// computed plus a second copy of all of them (and up to twice that while the
// buffer grew), and the copy itself. Here only the tables, vtables, padding
// and vector lengths are bytes of the builder's own: a few KB per shard.
//
// Contract: the generated code (src/shard/generated/) calls the methods
// below as it would call flatbuffers.Builder's; only the subset it uses is
// here. FlatBuffers builds back to front: `offset()` counts bytes from the
// end of the buffer, and the pieces come out last piece first.

import assert from 'node:assert/strict';
import type * as flatbuffers from 'flatbuffers';

const SIZEOF_SHORT = 2;
const SIZEOF_INT = 4;
const FILE_IDENTIFIER_LENGTH = 4;
/** Bytes of the small-write chunks: tables, vtables, strings, padding. */
const CHUNK_BYTES = 64 << 10;
/** Room a table and its vtable need at most in one chunk (13 fields here): endObject patches the table's start. */
const TABLE_BYTES_MAX = 4096;
/** Vectors below this are copied into a chunk rather than kept as a piece of their own. */
const PIECE_BYTES_MIN = 256;

type Typed = Uint8Array | Uint16Array | Uint32Array | Float64Array;

/** A FlatBuffer as the pieces that make it, in file order. */
export interface FlatBufferPieces {
  pieces: Uint8Array[];
  byteLength: number;
}

export class PieceBuilder {
  private minalign = 1;
  private vtable: number[] = [];
  private vtableInUse = 0;
  private isNested = false;
  private objectStart = 0;
  /** Offsets of the vtables written, and their int16 contents, for sharing. */
  private readonly vtables: number[] = [];
  private readonly vtableContents: number[][] = [];
  private vectorNumElems = 0;
  /** Bytes written so far (flatbuffers' offset()). */
  private off = 0;
  /** Finished pieces, in the order they were written (the reverse of file order). */
  private readonly written: Uint8Array[] = [];
  private chunk = new Uint8Array(CHUNK_BYTES);
  private view = new DataView(this.chunk.buffer);
  /** offset() when the current chunk was started. */
  private chunkBase = 0;

  offset(): number {
    return this.off;
  }

  /** Index in the current chunk of the byte that offset `o` ends at (o in (chunkBase, off]). */
  private at(o: number): number {
    const i = this.chunk.length - (o - this.chunkBase);
    assert.ok(i >= 0 && o > this.chunkBase, 'PieceBuilder: write outside the current chunk');
    return i;
  }

  /** Makes sure `n` more bytes fit in the current chunk, starting a new one when they do not. */
  private room(n: number): void {
    if (this.off - this.chunkBase + n <= this.chunk.length) return;
    this.closeChunk();
    if (this.chunk.length >= n) return;
    this.chunk = new Uint8Array(Math.max(CHUNK_BYTES, n));
    this.view = new DataView(this.chunk.buffer);
  }

  /** Ends the current chunk's piece; its free part (the front: it fills back to front) carries on as the chunk. */
  private closeChunk(): void {
    const used = this.off - this.chunkBase;
    if (used > 0) {
      const free = this.chunk.length - used;
      this.written.push(this.chunk.subarray(free));
      this.chunk = this.chunk.subarray(0, free);
      this.view = new DataView(this.chunk.buffer, this.chunk.byteOffset, free);
    }
    this.chunkBase = this.off;
  }

  prep(size: number, additionalBytes: number): void {
    if (size > this.minalign) this.minalign = size;
    const alignSize = (~(this.off + additionalBytes) + 1) & (size - 1);
    this.pad(alignSize);
  }

  pad(n: number): void {
    this.room(n);
    for (let i = 0; i < n; i++) {
      this.off++;
      this.chunk[this.at(this.off)] = 0;
    }
  }

  private put(n: number): number {
    this.room(n);
    this.off += n;
    return this.at(this.off);
  }

  addInt8(v: number): void { this.prep(1, 0); this.chunk[this.put(1)] = v; }
  addInt16(v: number): void { this.prep(2, 0); this.view.setInt16(this.put(2), v, true); }
  addInt32(v: number): void { this.prep(4, 0); this.view.setInt32(this.put(4), v, true); }
  addFloat64(v: number): void { this.prep(8, 0); this.view.setFloat64(this.put(8), v, true); }

  addFieldInt32(voffset: number, value: number, defaultValue: number): void {
    if (value != defaultValue) { this.addInt32(value); this.slot(voffset); }
  }

  addFieldFloat64(voffset: number, value: number, defaultValue: number): void {
    if (value != defaultValue) { this.addFloat64(value); this.slot(voffset); }
  }

  addFieldOffset(voffset: number, value: number, defaultValue: number): void {
    if (value != defaultValue) { this.addOffset(value); this.slot(voffset); }
  }

  private slot(voffset: number): void {
    this.vtable[voffset] = this.off;
  }

  addOffset(offset: number): void {
    this.prep(SIZEOF_INT, 0);
    const relative = this.off - offset + SIZEOF_INT;
    this.view.setInt32(this.put(4), relative, true);
  }

  private notNested(): void {
    assert.ok(!this.isNested, 'FlatBuffers: object serialization must not be nested.');
  }

  startObject(numFields: number): void {
    this.notNested();
    this.room(TABLE_BYTES_MAX);
    this.vtableInUse = numFields;
    for (let i = 0; i < numFields; i++) this.vtable[i] = 0;
    this.isNested = true;
    this.objectStart = this.off;
  }

  endObject(): number {
    assert.ok(this.isNested, 'FlatBuffers: endObject called without startObject');
    this.addInt32(0);
    const vtableloc = this.off;
    let i = this.vtableInUse - 1;
    while (i >= 0 && this.vtable[i] === 0) i--;
    const trimmedSize = i + 1;
    const contents: number[] = [];
    for (; i >= 0; i--) {
      const v = this.vtable[i] !== 0 ? vtableloc - this.vtable[i]! : 0;
      this.addInt16(v);
      contents.push(v);
    }
    const standardFields = 2;
    this.addInt16(vtableloc - this.objectStart);
    const len = (trimmedSize + standardFields) * SIZEOF_SHORT;
    this.addInt16(len);
    contents.push(vtableloc - this.objectStart, len);
    // The runtime compares a vtable's bytes from its start (len first, then
    // the object size, then the fields from the first): the reverse of the
    // order they were added in.
    contents.reverse();
    let existing = 0;
    for (let k = 0; k < this.vtables.length; k++) {
      const other = this.vtableContents[k]!;
      if (other.length === contents.length && other.every((v, j) => v === contents[j])) {
        existing = this.vtables[k]!;
        break;
      }
    }
    if (existing !== 0) {
      // Drop the vtable just written and point the table at the one found.
      this.off = vtableloc;
      this.view.setInt32(this.at(vtableloc), existing - vtableloc, true);
    } else {
      this.vtables.push(this.off);
      this.vtableContents.push(contents);
      this.view.setInt32(this.at(vtableloc), this.off - vtableloc, true);
    }
    this.isNested = false;
    return vtableloc;
  }

  startVector(elemSize: number, numElems: number, alignment: number): void {
    this.notNested();
    this.vectorNumElems = numElems;
    this.prep(SIZEOF_INT, elemSize * numElems);
    this.prep(alignment, elemSize * numElems);
  }

  endVector(): number {
    this.addInt32(this.vectorNumElems);
    return this.off;
  }

  /** A vector of a typed array's elements, kept by reference when large (the array must not change until written). */
  typedVector(a: Typed): number {
    const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    this.startVector(a.BYTES_PER_ELEMENT, a.length, a.BYTES_PER_ELEMENT);
    if (bytes.length < PIECE_BYTES_MIN) {
      this.chunk.set(bytes, this.put(bytes.length));
    } else {
      this.closeChunk();
      this.written.push(bytes);
      this.off += bytes.length;
      this.chunkBase = this.off;
    }
    return this.endVector();
  }

  createString(s: string): number {
    const utf8 = Buffer.from(s, 'utf8');
    this.addInt8(0);
    this.startVector(1, utf8.length, 1);
    this.chunk.set(utf8, this.put(utf8.length));
    return this.endVector();
  }

  finish(rootTable: number, fileIdentifier: string): void {
    assert.equal(fileIdentifier.length, FILE_IDENTIFIER_LENGTH);
    this.prep(this.minalign, SIZEOF_INT + FILE_IDENTIFIER_LENGTH);
    for (let i = FILE_IDENTIFIER_LENGTH - 1; i >= 0; i--) this.chunk[this.put(1)] = fileIdentifier.charCodeAt(i);
    this.prep(this.minalign, SIZEOF_INT);
    this.addOffset(rootTable);
  }

  /** The finished FlatBuffer's pieces in file order. */
  pieces(): FlatBufferPieces {
    this.closeChunk();
    return { pieces: [...this.written].reverse(), byteLength: this.off };
  }

  /** This builder where the generated code wants a flatbuffers.Builder (it calls only the methods above). */
  asBuilder(): flatbuffers.Builder {
    return this as unknown as flatbuffers.Builder;
  }
}

/** The pieces joined into one buffer (tests and tools; files are written from the pieces). */
export function joinPieces(p: FlatBufferPieces): Uint8Array {
  const out = new Uint8Array(p.byteLength);
  let at = 0;
  for (const piece of p.pieces) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}
