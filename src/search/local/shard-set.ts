// ShardSet: the live shards of a data directory, reloaded when the manifest
// changes, without a restart and without disturbing queries in flight, and
// kept honest when a file changes under them.
//
// A query leases the current snapshot when it is planned and gives it back
// when it has ended (lease/release: one count per snapshot, so a lookup pays
// one increment, not one per shard). A reload builds a new snapshot and
// swaps the reference; a shard that left the manifest (compaction merged it,
// its file is unlinked) is released once no leased snapshot holds it: its
// mapping gives the file back at once (shard/mapped-file.ts releaseMapping)
// and the scan workers drop it from their caches (RETIRED_SHARDS_CHANNEL).
//
// Shards are mapped by file identity (device, inode, size, times), not by
// name. Each check compares every listed file's identity on disk with the
// one mapped:
//   same                     keep serving it;
//   same inode, other bytes  changed in place (`cp` over it, `dd`, a disk
//                            error): the mapping cannot be trusted, so the
//                            shard is damaged (below) and the file is opened
//                            and verified afresh;
//   another inode            replaced (a repaired copy renamed in): opened
//                            and verified; the old mapping is let go;
//   no file                  keep serving the mapping (an unlinked file's
//                            pages stay readable), with a warning.
// A file that fails to open or verify is quarantined: left out of every
// snapshot, logged at error level with its reason, counted in metrics, named
// in /readyz's body, and tried again only when its identity changes. The
// other shards go on serving. A manifest that cannot be trusted (not JSON,
// an entry that is a path) is refused whole: the last good one stays, and
// nothing of the refused one is remembered, so fixing it is enough.
//
// Damage: a shard truncated under its mapping faults when read; the mmap
// addon turns the fault into zero pages and counts it (native/mmap.cc). Any
// search may see that first, so searches end with damageOf(lease): a read
// of a mapping that has faulted, or a shard taken out of service while the
// search held it, makes the answer end `failed` (DATA_DAMAGED) instead of
// `succeeded` with rows missing. Checking is one native atomic load and one
// comparison per search while nothing is damaged.
//
// Opening a shard maps it and checks its header and table of contents on
// this thread (a few pages, whatever its size); its body is verified (every
// byte against its checksum, ~5.9 GB/s a thread) on the verifier's threads
// (shard-verifier.ts) before it is served, unless DIR/verified.json records
// that this very file (the same identity) was verified before
// (shard/verified.ts): a restart serves at once, at any data size. At
// start-up, shards that need verifying are verified in the background;
// until they are, searches wait for them (started()), /readyz says
// `verifying ...`, and nothing unverified is ever served.
//
// Change detection: fs.watch on the directory (the manifest renamed in, a
// shard file written) plus a check every LIMITS.manifestPollMs as a safety
// net (fs.watch can miss events on some filesystems, and says nothing of a
// disk's own errors).

import { existsSync, statSync, watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { BroadcastChannel } from 'node:worker_threads';
import { LIMITS } from '../../config/limits.js';
import { hasCode, STREAM_MESSAGES } from '../../errors/catalogue.js';
import { failIf } from '../../lib/faults.js';
import { silentLog, type Log } from '../../lib/log.js';
import { SHARD_FILE_SUFFIX } from '../../shard/format.js';
import { weightOf } from '../../shard/compaction-policy.js';
import { MANIFEST_FILE, readManifest } from '../../shard/manifest.js';
import { faultsTotal, fileIdentity, inodeOf, mappingFaults, releaseMapping } from '../../shard/mapped-file.js';
import { ShardReader, type ShardHandle } from '../../shard/shard-reader.js';
import { readVerified, VERIFIED_FILE, writeVerified } from '../../shard/verified.js';
import { RETIRED_SHARDS_CHANNEL } from './scan-protocol.js';
import { ShardVerifier } from './shard-verifier.js';

export interface Snapshot {
  readonly generation: number;
  readonly shards: readonly ShardReader[];
}

/** A shard's weight (compaction-policy.ts weightOf) and whether compaction wrote it. */
export interface ShardWeight {
  readonly weight: number;
  readonly merged: boolean;
}

/** A snapshot as one search holds it: damageOf(lease) says whether its answer can be trusted. */
export interface Lease {
  readonly snapshot: Snapshot;
  /** The damage count when the lease was taken. */
  readonly damage: number;
}

/** A listed shard file that is not served, and why. */
export interface Quarantined {
  readonly file: string;
  readonly reason: string;
  /** When it was taken out of service (epoch ms). */
  readonly since: number;
}

/** What the server's metrics read about the shards, at scrape time. */
export interface ShardSetStats {
  shards: number;
  generation: number;
  /** Bytes of every mapping held: the current shards and those a search still holds after a reload. */
  mappedBytes: number;
  /** The newest time_last of the current shards (epoch seconds); undefined with no shards. */
  newestObservation: number | undefined;
  /** Reloads that installed a new manifest, and reloads that failed (the previous shards kept serving). */
  reloads: number;
  reloadFailures: number;
  /** Listed shard files out of service. */
  quarantined: readonly Quarantined[];
  /** Reads of a mapped shard that faulted because its file shrank underneath. */
  faults: number;
  /** Shards mapped at start-up whose verification is still running (none are served until it ends). */
  verifying: number;
}

/** A snapshot and the searches that hold it. */
class HeldSnapshot implements Snapshot {
  leases = 0;
  constructor(readonly generation: number, readonly shards: readonly ShardReader[]) {}
}

/** A listed file's identity on disk now; undefined when there is no such file. */
type Observed = Map<string, string | undefined>;

/** A file opened and verified, or why not. */
type Opened = { file: string; reader: ShardReader } | { file: string; error: string; code: string | undefined };

/** A file mapped, its header checked and its body not yet (or why it could not be mapped). */
type Mapped = { file: string; handle: ShardHandle } | { file: string; error: string; code: string | undefined };

/** Why an open failed, as an Opened. */
function failure(file: string, err: unknown): { file: string; error: string; code: string | undefined } {
  const code = (err as { code?: unknown }).code;
  return { file, error: (err as Error).message, code: typeof code === 'string' ? code : undefined };
}

const SHRANK = 'read past its end: the file shrank under its mapping (truncated in place)';
const CHANGED = 'changed in place while mapped (its size or times moved)';

export class ShardSet {
  private snapshot = new HeldSnapshot(-1, []);
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastStamp = '';
  /** The files and generation of the last manifest accepted. */
  private listed: readonly string[] = [];
  /** What the last manifest accepted says of each file: see weightOf. */
  private entries = new Map<string, ShardWeight>();
  private generation = -1;
  /** Why the manifest on disk was refused; undefined once one is accepted. */
  private manifestRefused: string | undefined;
  private checking = false;
  private checkAgain = false;
  /** Snapshots replaced while some search held them: their shards may not be released yet. */
  private readonly retired = new Set<HeldSnapshot>();
  private readonly released = new BroadcastChannel(RETIRED_SHARDS_CHANNEL);
  /** Listed files out of service, by name, with the identity they had then (a new one is tried again). */
  private readonly quarantine = new Map<string, Quarantined & { identity: string | undefined; transient: boolean }>();
  /** Shards found damaged: a search that held one must not succeed. */
  private readonly damaged = new WeakMap<ShardReader, string>();
  private damageCount = 0;
  private faultsSeen = 0;
  /** Listed files found missing, warned about once. */
  private readonly gone = new Set<string>();
  private reloads = 0;
  private reloadFailures = 0;
  private readonly verifier: ShardVerifier;
  /** Files verified on this machine, by name: what DIR/verified.json holds and is rewritten from. */
  private readonly verified: Map<string, string>;
  private verifiedWarned = false;
  /** Until the first snapshot is installed: settles then (start-up verification). */
  private starting: Promise<void> | undefined;
  /** Shards mapped at start-up and not verified yet, and their bytes, for /readyz. */
  private verifying = { shards: 0, bytes: 0 };

  constructor(readonly dataDir: string, private readonly log: Log = silentLog) {
    this.released.unref();
    this.verifier = new ShardVerifier(dataDir);
    this.verified = new Map(readVerified(dataDir));
  }

  /**
   * Loads the current manifest (start-up): maps every listed shard on this
   * thread and verifies, in the background, those the verified record does
   * not vouch for; the first snapshot is installed once they are
   * (started()). A bad shard is quarantined, a bad manifest refused: neither
   * throws.
   */
  load(): void {
    const stamp = this.stamp();
    this.lastStamp = stamp;
    if (!this.readListed()) return;
    const observed: Observed = new Map(this.listed.map((f) => [f, identityNow(this.pathOf(f))]));
    const mapped = this.mapFiles(this.toOpen(observed, true));
    const unverified = this.unverified(mapped);
    if (unverified.length === 0) {
      this.settle(observed, mapped.map((m) => this.attach(m)));
      return;
    }
    this.verifying = { shards: unverified.length, bytes: unverified.reduce((n, h) => n + h.buffer.byteLength, 0) };
    this.log.info({ shards: unverified.length, bytes: this.verifying.bytes }, 'verifying shards before they are served');
    this.starting = this.verifyMapped(mapped).then((outcomes) => {
      this.settle(observed, outcomes);
      this.log.info({ shards: this.snapshot.shards.length, quarantined: this.quarantine.size }, 'shards verified; serving');
    }, (err: unknown) => {
      this.log.error({ err }, 'verifying shards failed; serving none');
    }).finally(() => {
      this.starting = undefined;
      this.verifying = { shards: 0, bytes: 0 };
    });
  }

  /** load(), then the first snapshot once it is installed (tools and benchmarks; a server does not wait). */
  async open(): Promise<Snapshot> {
    this.load();
    await this.starting;
    return this.snapshot;
  }

  /** Settles once the first snapshot is installed; undefined when it already is (searches need not wait). */
  started(): Promise<void> | undefined {
    return this.starting;
  }

  current(): Snapshot {
    return this.snapshot;
  }

  /** The current snapshot, leased: its shards stay mapped until release(lease). */
  lease(): Lease {
    this.snapshot.leases++;
    return { snapshot: this.snapshot, damage: this.damageCount };
  }

  /**
   * Another lease on the snapshot `lease` holds, current or not: a watch's
   * catch-up reads the snapshot its watch joined at while the watch feed
   * moves on (local-watch-feed.ts). Released like any lease.
   */
  retain(lease: Lease): Lease {
    (lease.snapshot as HeldSnapshot).leases++;
    return { snapshot: lease.snapshot, damage: lease.damage };
  }

  release(lease: Lease): void {
    const held = lease.snapshot as HeldSnapshot;
    if (--held.leases > 0 || held === this.snapshot) return;
    this.retired.delete(held);
    this.letGoOf(held);
  }

  /**
   * Why the answer of a search holding `lease` cannot be trusted, or
   * undefined: one of its shards was found damaged since it was leased (a
   * fault in its mapping counts the moment it happened).
   */
  damageOf(lease: Lease): string | undefined {
    this.sweepFaults();
    if (lease.damage === this.damageCount) return undefined;
    for (const s of lease.snapshot.shards) if (this.damaged.has(s)) return STREAM_MESSAGES.DATA_DAMAGED;
    return undefined;
  }

  /**
   * The last accepted manifest's word on a listed shard file: the RRsets
   * ingest published that it stands for, and whether compaction made it.
   * Compaction keeps the sum of weights, so a snapshot change whose new
   * merged shards weigh what the shards that left weighed holds nothing
   * that was not there before (local-watch-feed.ts). Undefined for a file
   * the manifest no longer lists.
   */
  weightOf(file: string): ShardWeight | undefined {
    return this.entries.get(file);
  }

  /** Whether `reader` is in the current snapshot. */
  serves(reader: ShardReader): boolean {
    return this.snapshot.shards.includes(reader);
  }

  /**
   * Marks a shard damaged (the scrub found its bytes changed, its mapping
   * faulted): searches holding it will fail. If it is served, its file is
   * quarantined and a snapshot without it installed; if it is not (a reload
   * replaced it meanwhile), its name now belongs to another file, which is
   * left alone.
   */
  takeOutOfService(reader: ShardReader, reason: string): void {
    if (this.damaged.has(reader)) return;
    this.markDamaged(reader, reason);
    if (!this.serves(reader)) return;
    this.quarantineFile(reader.name, identityNow(this.pathOf(reader.name)), reason, false);
    this.install(this.generation, this.snapshot.shards.filter((s) => s !== reader));
  }

  /** Walks the shards held (a few hundred at most): for a scrape, never per request. */
  stats(): ShardSetStats {
    const current = this.snapshot.shards;
    let mappedBytes = 0;
    for (const s of this.held()) mappedBytes += s.buffer.byteLength;
    let newest: number | undefined;
    for (const s of current) if (newest === undefined || s.timeMax > newest) newest = s.timeMax;
    return {
      shards: current.length, generation: this.snapshot.generation, mappedBytes, newestObservation: newest,
      reloads: this.reloads, reloadFailures: this.reloadFailures,
      quarantined: [...this.quarantine.values()].map(({ file, reason, since }) => ({ file, reason, since })),
      faults: this.faultsSeen, verifying: this.verifying.shards,
    };
  }

  /** Why nothing can be served (/readyz 503), or undefined. */
  notReady(): string | undefined {
    if (this.starting !== undefined) {
      const { shards, bytes } = this.verifying;
      return `verifying ${shards} shard${shards === 1 ? '' : 's'} (${(bytes / 1e9).toFixed(1)} GB) before serving`;
    }
    if (this.snapshot.shards.length > 0) return undefined;
    if (this.manifestRefused !== undefined) return this.manifestRefused;
    return this.quarantine.size > 0 ? `no shards mapped; ${this.degraded()!}` : 'no shards mapped';
  }

  /** What is served without (/readyz's body while ready), or undefined when nothing is. */
  degraded(): string | undefined {
    const q = [...this.quarantine.values()].sort((x, y) => (x.file < y.file ? -1 : 1));
    const refused = this.manifestRefused !== undefined ? `${this.manifestRefused}; serving the last good manifest` : undefined;
    if (q.length === 0) return refused;
    const listed = q.slice(0, LIMITS.quarantineNamedMax).map((e) => `${e.file}: ${e.reason}`).join('; ');
    const more = q.length > LIMITS.quarantineNamedMax ? `; and ${q.length - LIMITS.quarantineNamedMax} more` : '';
    return `${q.length} shard${q.length === 1 ? '' : 's'} quarantined (${listed}${more})${refused !== undefined ? `; ${refused}` : ''}`;
  }

  /** Starts watching for manifest swaps and for shard files changed on disk. */
  watch(onReload?: (s: Snapshot) => void): void {
    const check = () => {
      void this.check().then((changed) => {
        if (changed) onReload?.(this.snapshot);
      });
    };
    try {
      this.watcher = watch(this.dataDir, (_event, file) => {
        if (file === MANIFEST_FILE || (file?.endsWith(SHARD_FILE_SUFFIX) === true && !file.startsWith('.'))) {
          setTimeout(check, LIMITS.manifestSettleMs);
        }
      });
      this.watcher.unref();
    } catch {
      // Directory watching unsupported here: the poll below covers it.
    }
    this.timer = setInterval(check, LIMITS.manifestPollMs);
    this.timer.unref();
  }

  /**
   * One look at the directory: the manifest if it changed, and every listed
   * file's identity. Resolves true when a new snapshot was installed. Checks
   * that come while one runs make it run once more, never twice at once.
   */
  async check(): Promise<boolean> {
    if (this.checking) {
      this.checkAgain = true;
      return false;
    }
    this.checking = true;
    const before = this.snapshot;
    try {
      await this.starting;
      do {
        this.checkAgain = false;
        await this.checkOnce();
      } while (this.checkAgain);
    } catch (err) {
      // A bug, or the directory gone: the last good snapshot keeps serving.
      this.reloadFailures++;
      this.log.error({ err, dataDir: this.dataDir }, 'shard check failed; still serving the previous shards');
    } finally {
      this.checking = false;
    }
    return this.snapshot !== before;
  }

  async close(): Promise<void> {
    this.watcher?.close();
    if (this.timer) clearInterval(this.timer);
    this.released.close();
    await this.verifier.close();
  }

  private async checkOnce(): Promise<void> {
    this.sweepFaults();
    // The stamp before the read: a manifest swapped while shards open is seen by the next check.
    const stamp = this.stamp();
    const generationBefore = this.generation;
    if (stamp !== this.lastStamp) {
      const accepted = this.readListed();
      this.lastStamp = stamp;
      if (!accepted) this.reloadFailures++;
    }
    const observed: Observed = new Map(await Promise.all(this.listed.map(async (f) =>
      [f, await identityLater(this.pathOf(f))] as const)));
    const mapped = this.mapFiles(this.toOpen(observed, this.generation !== generationBefore));
    const installed = this.settle(observed, await this.verifyMapped(mapped));
    if (this.generation !== generationBefore) {
      this.reloads++;
      this.log.info({ generation: this.generation, shards: this.snapshot.shards.length, quarantined: this.quarantine.size },
        'shards reloaded');
    } else if (installed) {
      this.log.info({ generation: this.generation, shards: this.snapshot.shards.length, quarantined: this.quarantine.size },
        'shards changed on disk; serving the checked set');
    }
  }

  /** Reads the manifest into `listed`; false (logged, nothing else changed) when it is refused. */
  private readListed(): boolean {
    try {
      const m = readManifest(this.dataDir);
      this.listed = m.shards.map((e) => e.file);
      this.entries = new Map(m.shards.map((e) => [e.file, { weight: weightOf(e), merged: e.rrsetsIngested !== undefined }]));
      this.generation = m.generation;
      if (this.manifestRefused !== undefined) this.log.info({ dataDir: this.dataDir }, 'manifest accepted again');
      this.manifestRefused = undefined;
      for (const f of [...this.quarantine.keys()]) if (!this.listed.includes(f)) this.quarantine.delete(f);
      return true;
    } catch (err) {
      const reason = (err as Error).message;
      if (reason !== this.manifestRefused) {
        this.log.error({ err, dataDir: this.dataDir }, 'manifest refused; still serving the last good one');
      }
      this.manifestRefused = reason;
      return false;
    }
  }

  /**
   * Listed files to open now: new ones, changed or replaced ones, and
   * quarantined ones whose identity moved, or, when they failed for a reason
   * other than their bytes (an injected fault, a descriptor limit), whose
   * manifest did (`relisted`).
   */
  private toOpen(observed: Observed, relisted: boolean): string[] {
    const served = this.byName();
    const open: string[] = [];
    for (const [file, identity] of observed) {
      const r = served.get(file);
      if (r !== undefined) {
        if (identity === undefined) {
          if (!this.gone.has(file)) this.log.warn({ file: this.pathOf(file) }, 'a listed shard file is gone; serving its mapping');
          this.gone.add(file);
          continue;
        }
        this.gone.delete(file);
        if (identity === r.identity) continue;
        if (inodeOf(identity) === inodeOf(r.identity)) this.markDamaged(r, CHANGED);
        open.push(file);
        continue;
      }
      const q = this.quarantine.get(file);
      if (q !== undefined && q.identity === identity && !(relisted && q.transient)) continue;
      if (identity === undefined) {
        this.quarantineFile(file, undefined, 'listed in the manifest, but there is no such file', false);
        continue;
      }
      open.push(file);
    }
    return open;
  }

  /**
   * Maps each file and checks its header, on this thread (a page each). The
   * shard-open fault (lib/faults.ts) is counted here.
   */
  private mapFiles(files: readonly string[]): Mapped[] {
    return files.map((file) => {
      try {
        failIf('shard-open', this.pathOf(file));
        return { file, handle: ShardReader.map(this.pathOf(file)) };
      } catch (err) {
        return failure(file, err);
      }
    });
  }

  /** The mapped files the verified record does not vouch for (their identity is not the one it recorded). */
  private unverified(mapped: readonly Mapped[]): ShardHandle[] {
    return mapped.flatMap((m) => ('handle' in m && this.verified.get(m.file) !== m.handle.identity ? [m.handle] : []));
  }

  /** Reads a verified file's table of contents: its reader, or why it cannot be read (a bug in its writer). */
  private attach(m: Mapped): Opened {
    if (!('handle' in m)) return m;
    try {
      return { file: m.file, reader: ShardReader.attach(m.handle) };
    } catch (err) {
      releaseMapping(m.handle.buffer);
      return failure(m.file, err);
    }
  }

  /**
   * Verifies the bodies of mapped shards that the verified record does not
   * vouch for, on the verifier's threads, records those that check out, and
   * attaches every shard that is verified.
   */
  private async verifyMapped(mapped: readonly Mapped[]): Promise<Opened[]> {
    const unverified = this.unverified(mapped);
    if (unverified.length === 0) return mapped.map((m) => this.attach(m));
    const verdicts = new Map((await this.verifier.verify(unverified)).map((v, i) => [unverified[i]!, v]));
    const out = mapped.map((m): Opened => {
      if (!('handle' in m)) return m;
      const why = verdicts.get(m.handle);
      if (why !== undefined) {
        releaseMapping(m.handle.buffer);
        return { file: m.file, error: why, code: 'SHARD_CORRUPT' };
      }
      if (verdicts.has(m.handle)) this.verified.set(m.file, m.handle.identity);
      return this.attach(m);
    });
    // Awaited (a small file): a restart right after finds the record written.
    await this.recordVerified();
    return out;
  }

  /** Rewrites DIR/verified.json for the files listed now; a failure is warned about once (it only costs a later verification). */
  private async recordVerified(): Promise<void> {
    for (const f of [...this.verified.keys()]) if (!this.listed.includes(f)) this.verified.delete(f);
    try {
      await writeVerified(this.dataDir, this.verified);
    } catch (err) {
      if (!this.verifiedWarned) {
        this.log.warn({ err, dataDir: this.dataDir },
          `could not record verified shards in ${VERIFIED_FILE}; the next start verifies them again`);
      }
      this.verifiedWarned = true;
    }
  }

  /**
   * Takes what was opened (a reader or why not, by path), quarantines the
   * failures, and installs the listed files' readers in manifest order.
   * True when the snapshot changed.
   */
  private settle(observed: Observed, outcomes: readonly Opened[]): boolean {
    const served = this.byName();
    for (const o of outcomes) {
      const file = o.file;
      if ('reader' in o) {
        served.set(file, o.reader);
        if (this.quarantine.delete(file)) this.log.info({ file: this.pathOf(file) }, 'shard back in service: it verified');
      } else {
        served.delete(file);
        this.quarantineFile(file, observed.get(file), o.error, !hasCode(o, 'SHARD_CORRUPT'));
        this.verified.delete(file);
      }
    }
    const shards: ShardReader[] = [];
    for (const f of this.listed) {
      const r = served.get(f);
      if (r !== undefined && !this.quarantine.has(f) && !this.damaged.has(r)) shards.push(r);
    }
    const same = shards.length === this.snapshot.shards.length && shards.every((s, i) => s === this.snapshot.shards[i]);
    if (same && this.generation === this.snapshot.generation) return false;
    this.install(this.generation, shards);
    return true;
  }

  /** Quarantines every shard whose mapping has faulted since the last sweep (one atomic load when none has). */
  private sweepFaults(): void {
    const total = faultsTotal();
    if (total === this.faultsSeen) return;
    this.faultsSeen = total;
    const hit = [...this.held()].filter((s) => !this.damaged.has(s) && mappingFaults(s.buffer) > 0);
    for (const s of hit) this.takeOutOfService(s, SHRANK);
  }

  private markDamaged(reader: ShardReader, reason: string): void {
    this.damaged.set(reader, reason);
    this.damageCount++;
  }

  /** transient: it failed for a reason other than its bytes, so a new manifest tries it again. */
  private quarantineFile(file: string, identity: string | undefined, reason: string, transient: boolean): void {
    const was = this.quarantine.get(file);
    if (was !== undefined && was.identity === identity && was.reason === reason) return;
    this.quarantine.set(file, { file, identity, reason, since: Date.now(), transient });
    this.log.error({ file: this.pathOf(file), reason }, 'shard quarantined: out of service until its file changes');
  }

  private pathOf(file: string): string {
    return path.join(this.dataDir, file);
  }

  private byName(): Map<string, ShardReader> {
    return new Map(this.snapshot.shards.map((s) => [s.name, s]));
  }

  /** Every shard mapped: the current snapshot's and those of retired snapshots a search still holds. */
  private held(): Set<ShardReader> {
    const held = new Set(this.snapshot.shards);
    for (const r of this.retired) for (const s of r.shards) held.add(s);
    return held;
  }

  /** Makes `shards` current; the old snapshot's shards that left go now, or when its last lease ends. */
  private install(generation: number, shards: ShardReader[]): void {
    const old = this.snapshot;
    this.snapshot = new HeldSnapshot(generation, Object.freeze(shards));
    if (old.leases > 0) this.retired.add(old);
    else this.letGoOf(old);
  }

  /** Releases the shards of a retired snapshot that neither the current one nor a held retired one still has. */
  private letGoOf(old: HeldSnapshot): void {
    const kept = this.held();
    for (const s of old.shards) {
      if (kept.has(s)) continue;
      releaseMapping(s.buffer);
      this.released.postMessage(s.identity);
    }
  }

  private stamp(): string {
    const file = path.join(this.dataDir, MANIFEST_FILE);
    if (!existsSync(file)) return 'none';
    const st = statSync(file);
    return `${st.ino}:${st.mtimeMs}:${st.size}`;
  }
}

const isMissing = (err: unknown): boolean => {
  return hasCode(err, 'ENOENT', 'ENOTDIR');
};

/** A file's identity now; undefined when there is no such file (other errors are thrown). */
function identityNow(file: string): string | undefined {
  try {
    return fileIdentity(statSync(file, { bigint: true }));
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
}

/** identityNow without blocking the thread (a stat on a slow disk or NFS can take long). */
async function identityLater(file: string): Promise<string | undefined> {
  try {
    return fileIdentity(await stat(file, { bigint: true }));
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
}
