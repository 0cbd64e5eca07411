// Interned strings held as one blob (the shard format's string column: each
// record followed by a newline, see schema/shard.fbs), with an open-addressing
// hash table over typed arrays to find a record again.
//
// Why not a Map<string, number> and a string[]: an ingest or a merge holds
// millions of names and rdata texts. As JavaScript strings (plus the Map's
// entries) they cost 60-100 bytes each beyond their characters, every major
// collection walked them again (the garbage collector was 16-17 % of building
// a 1 M RRset demo shard), and the writer then encoded each one a second time
// to make its blobs. Here a record costs its bytes, a newline, a 4-byte start,
// a 2-byte tag and 16-32 bytes of hash slots (an id and its hash each); the collector sees
// a handful of typed arrays; and the blob is already the shard's column
// layout, so the writer sorts and copies bytes instead of strings.
//
// Records are printable ASCII (0x20..0x7E), which every string column of a
// shard must be (the RE2 scan's newline rewrite relies on it); anything else
// is our bug, not the input's (names and rdata arrive in presentation form
// with escapes), and fails an assertion where it is interned.
//
// A record is keyed by its bytes and a 16-bit tag (the rrtype for rdata, 0
// for names), so one text under two rrtypes is two records.

import assert from 'node:assert/strict';
import { FNV_OFFSET, FNV_PRIME } from '../lib/fnv.js';

/** The blob of records: record i is bytes[offsets[i] .. offsets[i+1]), its newline last. */
export interface BlobView {
  bytes: Uint8Array;
  offsets: Uint32Array;
}

/** What data() hands over: plain typed arrays, transferable to another thread. */
export interface InternedBlobData {
  bytes: Uint8Array<ArrayBuffer>;
  offsets: Uint32Array<ArrayBuffer>;
  tags: Uint16Array<ArrayBuffer>;
}

const EMPTY_SLOT = -1;

/** FNV-1a over bytes[from, to) and a tag. */
export function hashBytes(bytes: Uint8Array, from: number, to: number, tag: number): number {
  let h = FNV_OFFSET ^ tag;
  for (let i = from; i < to; i++) h = Math.imul(h ^ bytes[i]!, FNV_PRIME);
  return h >>> 0;
}

export class InternedBlob {
  private bytes: Uint8Array<ArrayBuffer>;
  private byteLength = 0;
  private starts: Uint32Array<ArrayBuffer>;
  private tags: Uint16Array<ArrayBuffer>;
  private count = 0;
  private slots: Int32Array;
  private mask: number;
  private readonly readOnly: boolean;
  /** appendBytes was used: records were added without hash slots, so nothing may be looked up (interned) any more. */
  private appendOnly = false;

  /** An empty blob, or (`data`) one rebuilt from another's data() that can be read but not added to. */
  constructor(data?: InternedBlobData) {
    if (data === undefined) {
      this.readOnly = false;
      this.bytes = new Uint8Array(1 << 16);
      this.starts = new Uint32Array(1024);
      this.tags = new Uint16Array(1024);
      this.slots = new Int32Array(2 * 2048).fill(EMPTY_SLOT);
      this.mask = 2048 - 1;
      return;
    }
    this.readOnly = true;
    this.bytes = data.bytes;
    this.byteLength = data.bytes.length;
    this.starts = data.offsets;
    this.count = data.offsets.length - 1;
    this.tags = data.tags;
    this.slots = new Int32Array(0);
    this.mask = 0;
  }

  /** Records held. */
  get length(): number {
    return this.count;
  }

  /** The blob so far, as views (valid until the next intern). */
  view(): BlobView {
    return { bytes: this.bytes.subarray(0, this.byteLength), offsets: this.starts.subarray(0, this.count + 1) };
  }

  /** The records and their tags as views, for RrsetTable.data(). */
  data(): InternedBlobData {
    return {
      bytes: this.bytes.subarray(0, this.byteLength), offsets: this.starts.subarray(0, this.count + 1),
      tags: this.tags.subarray(0, this.count),
    };
  }

  /** Tag of record i. */
  tag(i: number): number {
    return this.tags[i]!;
  }

  /** Record i without its newline, as a string (tests and tools: the writer reads bytes). */
  text(i: number): string {
    const all = Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.byteLength);
    return all.toString('latin1', this.starts[i], this.starts[i + 1]! - 1);
  }

  /** Bytes held (the arena and its columns), for memory accounting. */
  get allocatedBytes(): number {
    return this.bytes.byteLength + this.starts.byteLength + this.tags.byteLength + this.slots.byteLength;
  }

  /** The id of `s` under `tag`, adding it when new. `s` must be printable ASCII. */
  intern(s: string, tag: number): number {
    assert.ok(!this.readOnly && !this.appendOnly, 'InternedBlob: read-only, or append-only after appendBytes');
    const n = s.length;
    if (this.byteLength + n + 1 > this.bytes.length) this.growBytes(this.byteLength + n + 1);
    // Written at the tail first; kept only when new.
    const bytes = this.bytes;
    const at = this.byteLength;
    let h = FNV_OFFSET ^ tag;
    let bad = 0;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      bad |= (c - 0x20) | (0x7e - c);
      bytes[at + i] = c;
      h = Math.imul(h ^ c, FNV_PRIME);
    }
    if (bad < 0) notPrintable(s);
    bytes[at + n] = 0x0a;
    return this.place(h >>> 0, at, n + 1, tag);
  }

  /**
   * The id of the record src[from, to) (printable ASCII, no newline) under
   * `tag`, adding it when new: intern() for callers that hold bytes.
   */
  internBytes(src: Uint8Array, from: number, to: number, tag: number): number {
    assert.ok(!this.readOnly && !this.appendOnly, 'InternedBlob: read-only, or append-only after appendBytes');
    const n = to - from;
    if (this.byteLength + n + 1 > this.bytes.length) this.growBytes(this.byteLength + n + 1);
    const bytes = this.bytes;
    const at = this.byteLength;
    let h = FNV_OFFSET ^ tag;
    let bad = 0;
    for (let i = 0; i < n; i++) {
      const c = src[from + i]!;
      bad |= (c - 0x20) | (0x7e - c);
      bytes[at + i] = c;
      h = Math.imul(h ^ c, FNV_PRIME);
    }
    if (bad < 0) notPrintable(Buffer.from(src.subarray(from, to)).toString('latin1'));
    bytes[at + n] = 0x0a;
    return this.place(h >>> 0, at, n + 1, tag);
  }

  /**
   * Adds the record src[from, to) (printable ASCII, no newline) under `tag`
   * without looking for it: for a caller that knows it is new (a merge's
   * owners come in ascending order, each once). No hash slot is kept for it,
   * so from then on this blob takes only appends. A 10 M RRset merge spent
   * a tenth of its time probing for owners it never found
   * (`node --cpu-prof bin/rrscan.js compact --workers 1`).
   */
  appendBytes(src: Uint8Array, from: number, to: number, tag: number): number {
    assert.ok(!this.readOnly, 'InternedBlob: a blob rebuilt from data() is read-only');
    this.appendOnly = true;
    const n = to - from;
    if (this.byteLength + n + 1 > this.bytes.length) this.growBytes(this.byteLength + n + 1);
    const bytes = this.bytes;
    const at = this.byteLength;
    let bad = 0;
    for (let i = 0; i < n; i++) {
      const c = src[from + i]!;
      bad |= (c - 0x20) | (0x7e - c);
      bytes[at + i] = c;
    }
    if (bad < 0) notPrintable(Buffer.from(src.subarray(from, to)).toString('latin1'));
    bytes[at + n] = 0x0a;
    return this.keep(at, n + 1, tag);
  }

  /**
   * Finds the record just written at bytes[at, at + len) or keeps it as a
   * new one. A slot is two int32s, the id and its record's hash, so a probe
   * that meets another record rejects it without reading that record's
   * columns (one cache line per probe on tables far larger than the cache).
   */
  private place(h: number, at: number, len: number, tag: number): number {
    const bytes = this.bytes, starts = this.starts, tags = this.tags, slots = this.slots;
    const h32 = h | 0;
    let s = h & this.mask;
    for (let id = slots[2 * s]!; id !== EMPTY_SLOT; id = slots[2 * s]!) {
      if (slots[2 * s + 1] === h32 && tags[id] === tag) {
        const from = starts[id]!;
        if (starts[id + 1]! - from === len) {
          let k = 0;
          while (k < len && bytes[from + k] === bytes[at + k]) k++;
          if (k === len) return id;
        }
      }
      s = (s + 1) & this.mask;
    }
    const id = this.keep(at, len, tag);
    slots[2 * s] = id;
    slots[2 * s + 1] = h32;
    if (this.count * 2 > this.mask + 1) this.rehash();
    return id;
  }

  /** Keeps the record just written at bytes[at, at + len) as the next id. */
  private keep(at: number, len: number, tag: number): number {
    const id = this.count;
    if (id + 2 > this.starts.length) this.growColumns();
    this.byteLength = at + len;
    this.tags[id] = tag;
    this.starts[id + 1] = this.byteLength;
    this.count = id + 1;
    return id;
  }

  private growBytes(need: number): void {
    assert.ok(need < 2 ** 32, 'interned records exceed 4 GiB; the shard budget should have split them');
    let size = this.bytes.length * 2;
    while (size < need) size *= 2;
    const next = new Uint8Array(Math.min(size, 2 ** 32 - 1));
    next.set(this.bytes.subarray(0, this.byteLength));
    this.bytes = next;
  }

  private growColumns(): void {
    const size = this.starts.length * 2;
    const starts = new Uint32Array(size);
    starts.set(this.starts);
    this.starts = starts;
    const tags = new Uint16Array(size);
    tags.set(this.tags);
    this.tags = tags;
  }

  private rehash(): void {
    const old = this.slots;
    const cap = (this.mask + 1) * 2;
    const slots = new Int32Array(2 * cap).fill(EMPTY_SLOT);
    const mask = cap - 1;
    for (let o = 0; o < old.length; o += 2) {
      const id = old[o]!;
      if (id === EMPTY_SLOT) continue;
      let s = old[o + 1]! & mask;
      while (slots[2 * s] !== EMPTY_SLOT) s = (s + 1) & mask;
      slots[2 * s] = id;
      slots[2 * s + 1] = old[o + 1]!;
    }
    this.slots = slots;
    this.mask = mask;
  }
}

function notPrintable(s: string): never {
  assert.fail(`record not printable ASCII: ${JSON.stringify(s.slice(0, 80))}`);
}
