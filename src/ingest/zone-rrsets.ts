// The RRsets of one zone file while it is read: records grouped by (owner,
// type), identical rdata kept once, in the order first seen.
//
// A master file need not keep an RRset's records together, so a whole file
// is grouped before any RRset is handed on (zone.ts). Why columns and not
// an object per RRset and per record: a TLD-sized file holds millions of
// records for the length of the read, and as objects ({text, wire}, one
// Uint8Array and one ArrayBuffer each: 1,024 bytes an RRset of a
// generated 1 M-record TLD-shaped zone, bench/ingest.ts's zone row) the
// garbage collector copied every one of them twice on its way to the old
// generation: a quarter of the ingest's time (`node --cpu-prof
// dist/src/cli/main.js ingest --workers 1` of that zone); here they hold
// 276 bytes an RRset (RssAnon after the parse). An owner's groups are
// one slot of an open-addressing table, a group is a row of typed columns, its
// records a linked list of wire ranges in one arena; the presentation text
// is made as each RRset is handed on (rdataToText never fails: a record it
// cannot present canonically is written in the generic form).

import { fnv1aOfString } from '../lib/fnv.js';
import { Column } from '../shard/rrset-table.js';
import { rdataToText } from '../dns/rdata/index.js';
import type { Rdata } from '../model/observation.js';

/** RRsets up to this many records are deduplicated by comparing bytes; larger ones keep a Set. */
const LINEAR_DEDUPE_MAX = 16;

/** End of a list (records of a group, groups of an owner). */
const NONE = -1;

/** One RRset as handed on: its owner, type and records (text and wire), in the order first seen. */
export interface ZoneRrset {
  rrname: string;
  rrtype: number;
  rdata: Rdata[];
}

/** Owner slots of an empty table (a power of two; doubled past half full). */
const OWNER_SLOTS_FIRST = 1 << 12;

/** An owner's hash as the table stores it (an int32). */
function hashName(name: string): number {
  return fnv1aOfString(name) | 0;
}

export class ZoneRrsets {
  // Owners: name -> its first group (its other groups follow by groupNext),
  // by open addressing over typed arrays, each slot a group and the owner's
  // hash. A Map of a TLD zone's half million owners was a tenth of the
  // ingest in its probes and its growth (`node --cpu-prof` as above).
  private ownerSlots = new Int32Array(OWNER_SLOTS_FIRST).fill(NONE);
  private ownerHashes = new Int32Array(OWNER_SLOTS_FIRST);
  /** Each owner's first group, in the order owners were first seen. */
  private readonly ownerFirsts = new Column(Int32Array);
  /** Where findOwner() stopped without finding `freeFor`: the slot it would take, and its hash. */
  private freeFor: string | undefined = undefined;
  private freeSlot = 0;
  private freeHash = 0;
  /** Each group's owner name. */
  private readonly owners: string[] = [];
  // Groups (RRsets), one row each.
  private readonly groupType = new Column(Uint16Array);
  private readonly groupNext = new Column(Int32Array);
  private readonly groupHead = new Column(Int32Array);
  private readonly groupTail = new Column(Int32Array);
  private readonly groupRecords = new Column(Uint32Array);
  /** Wire keys of the groups too large for linear comparison. */
  private readonly seen = new Map<number, Set<string>>();
  // Records, one row each; their wire bytes in `arena`.
  private readonly arena = new Column(Uint8Array, 1 << 16);
  private readonly recordStart = new Column(Uint32Array);
  private readonly recordLength = new Column(Uint32Array);
  private readonly recordNext = new Column(Int32Array);
  /** The owner of the last record added, and its first group (NONE: none yet). */
  private lastOwner: string | undefined = undefined;
  private lastFirst = NONE;

  /** RRsets held. */
  get size(): number {
    return this.groupType.length;
  }

  /**
   * Adds one record of `owner`'s `rrtype` RRset (a no-op when the RRset
   * holds the same wire bytes already). `admit` is called before a new
   * RRset is made (the caller's bound on RRsets; it throws to refuse).
   * Owners are keyed by their string (the zone parser hands one string to
   * an owner's consecutive records), so no key is built per record.
   */
  add(owner: string, rrtype: number, wire: Uint8Array, admit: () => void): void {
    // Zone files list an owner's records on consecutive lines: most records skip the owner table.
    if (owner !== this.lastOwner) {
      this.lastOwner = owner;
      this.lastFirst = this.findOwner(owner);
    }
    let g = this.lastFirst;
    let last = NONE;
    while (g !== NONE && this.groupType.get(g) !== rrtype) {
      last = g;
      g = this.groupNext.get(g);
    }
    if (g === NONE) {
      admit();
      g = this.newGroup(owner, rrtype);
      if (last === NONE) {
        this.addOwner(owner, g);
        this.lastFirst = g;
      } else {
        this.groupNext.set(last, g);
      }
    } else if (this.holds(g, wire)) {
      return;
    }
    this.append(g, wire);
  }

  /** Every RRset, by owner in the order owners were first seen, then by type in the order first seen. */
  *rrsets(): Generator<ZoneRrset, void, undefined> {
    const firsts = this.ownerFirsts.view();
    for (let k = 0; k < firsts.length; k++) {
      for (let g = firsts[k]!; g !== NONE; g = this.groupNext.get(g)) yield this.rrset(g);
    }
  }

  /** The first group of `owner`, or NONE (then remembering where it would go, for addOwner). */
  private findOwner(owner: string): number {
    const h = hashName(owner);
    const slots = this.ownerSlots, hashes = this.ownerHashes;
    const mask = slots.length - 1;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const g = slots[s]!;
      if (g === NONE) {
        this.freeFor = owner;
        this.freeSlot = s;
        this.freeHash = h;
        return NONE;
      }
      if (hashes[s] === h && this.owners[g] === owner) return g;
    }
  }

  /** Lists `owner`, not listed yet, with its first group `g`. */
  private addOwner(owner: string, g: number): void {
    if (this.freeFor !== owner) this.findOwner(owner);
    this.freeFor = undefined;
    this.ownerSlots[this.freeSlot] = g;
    this.ownerHashes[this.freeSlot] = this.freeHash;
    this.ownerFirsts.push(g);
    if (this.ownerFirsts.length * 2 > this.ownerSlots.length) this.growOwners();
  }

  /** Doubles the owner table, placing each slot again by the hash it keeps. */
  private growOwners(): void {
    const from = this.ownerSlots, fromHashes = this.ownerHashes;
    const size = from.length * 2;
    const slots = new Int32Array(size).fill(NONE);
    const hashes = new Int32Array(size);
    const mask = size - 1;
    for (let k = 0; k < from.length; k++) {
      const g = from[k]!;
      if (g === NONE) continue;
      const h = fromHashes[k]!;
      let s = h & mask;
      while (slots[s] !== NONE) s = (s + 1) & mask;
      slots[s] = g;
      hashes[s] = h;
    }
    this.ownerSlots = slots;
    this.ownerHashes = hashes;
  }

  private rrset(g: number): ZoneRrset {
    const rrtype = this.groupType.get(g);
    const bytes = this.arena.view();
    const rdata = new Array<Rdata>(this.groupRecords.get(g));
    let k = 0;
    for (let r = this.groupHead.get(g); r !== NONE; r = this.recordNext.get(r)) {
      const start = this.recordStart.get(r);
      const wire = bytes.subarray(start, start + this.recordLength.get(r));
      rdata[k++] = { text: rdataToText(rrtype, wire), wire };
    }
    return { rrname: this.owners[g]!, rrtype, rdata };
  }

  private newGroup(owner: string, rrtype: number): number {
    const g = this.groupType.length;
    this.owners.push(owner);
    this.groupType.push(rrtype);
    this.groupNext.push(NONE);
    this.groupHead.push(NONE);
    this.groupTail.push(NONE);
    this.groupRecords.push(0);
    return g;
  }

  /** Whether group g holds a record of exactly these bytes. */
  private holds(g: number, wire: Uint8Array): boolean {
    const keys = this.seen.get(g);
    if (keys !== undefined) return keys.has(wireKey(wire));
    const bytes = this.arena.view();
    for (let r = this.groupHead.get(g); r !== NONE; r = this.recordNext.get(r)) {
      if (this.recordLength.get(r) === wire.length && sameBytesAt(bytes, this.recordStart.get(r), wire)) return true;
    }
    return false;
  }

  private append(g: number, wire: Uint8Array): void {
    const r = this.recordStart.length;
    this.recordStart.push(this.arena.length);
    this.recordLength.push(wire.length);
    this.recordNext.push(NONE);
    this.arena.pushAll(wire);
    const tail = this.groupTail.get(g);
    if (tail === NONE) this.groupHead.set(g, r);
    else this.recordNext.set(tail, r);
    this.groupTail.set(g, r);
    const n = this.groupRecords.get(g) + 1;
    this.groupRecords.set(g, n);
    const keys = this.seen.get(g);
    if (keys !== undefined) keys.add(wireKey(wire));
    else if (n > LINEAR_DEDUPE_MAX) this.seen.set(g, this.keysOf(g));
  }

  private keysOf(g: number): Set<string> {
    const keys = new Set<string>();
    const bytes = this.arena.view();
    for (let r = this.groupHead.get(g); r !== NONE; r = this.recordNext.get(r)) {
      const start = this.recordStart.get(r);
      keys.add(wireKey(bytes.subarray(start, start + this.recordLength.get(r))));
    }
    return keys;
  }
}

function sameBytesAt(bytes: Uint8Array, at: number, wire: Uint8Array): boolean {
  for (let i = 0; i < wire.length; i++) if (bytes[at + i] !== wire[i]) return false;
  return true;
}

function wireKey(w: Uint8Array): string {
  return Buffer.from(w.buffer, w.byteOffset, w.length).toString('latin1');
}
