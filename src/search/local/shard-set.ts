// ShardSet: the live shards of a data directory, reloaded when the manifest
// changes, without a restart and without disturbing queries in flight.
//
// A query leases the current snapshot when it is planned and gives it back
// when it has ended (lease/release: one count per snapshot, so a lookup pays
// one increment, not one per shard). A reload builds a new snapshot and
// swaps the reference; a shard that left the manifest (compaction merged it,
// its file is unlinked) is released once no leased snapshot holds it: its mapping gives the file back at once (shard/mapped-file.ts
// releaseMapping) and the scan workers drop it from their caches
// (RETIRED_SHARDS_CHANNEL). Without that, a deleted shard's disk space and
// page cache stayed pinned until the collector happened to free every view.
//
// Opening new shards (mapping and checking every byte, ~170 ms per GB) runs
// on a thread of its own (workers/open-shards.ts), never on the thread that
// answers requests; only the first load, before the server listens, opens on
// the calling thread.
//
// Change detection: fs.watch on the directory (rename of manifest.json) plus
// a stat poll every LIMITS.manifestPollMs as a safety net (fs.watch can miss
// events on some filesystems).

import { existsSync, statSync, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { BroadcastChannel } from 'node:worker_threads';
import { LIMITS } from '../../config/limits.js';
import { failIf } from '../../lib/faults.js';
import { runOnThreads } from '../../lib/threads.js';
import { MANIFEST_FILE, readManifest } from '../../shard/manifest.js';
import { releaseMapping } from '../../shard/mapped-file.js';
import { ShardReader, type ShardHandle } from '../../shard/shard-reader.js';
import { RETIRED_SHARDS_CHANNEL } from './scan-protocol.js';

export interface Snapshot {
  readonly generation: number;
  readonly shards: readonly ShardReader[];
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
}

/** A snapshot and the searches that hold it. */
class HeldSnapshot implements Snapshot {
  leases = 0;
  constructor(readonly generation: number, readonly shards: readonly ShardReader[]) {}
}

export class ShardSet {
  private snapshot = new HeldSnapshot(-1, []);
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastStamp = '';
  private reloading = false;
  /** Snapshots replaced while some search held them: their shards may not be released yet. */
  private readonly retired = new Set<HeldSnapshot>();
  private readonly released = new BroadcastChannel(RETIRED_SHARDS_CHANNEL);
  private reloads = 0;
  private reloadFailures = 0;

  constructor(readonly dataDir: string, private readonly log: (msg: string, extra?: object) => void = () => undefined) {
    this.released.unref();
  }

  /** Loads the current manifest on this thread (start-up); throws when a listed shard is corrupt. */
  load(): Snapshot {
    const stamp = this.stamp();
    const m = readManifest(this.dataDir);
    const byName = this.byName();
    return this.install(m.generation, m.shards.map((e) => byName.get(e.file) ?? ShardReader.open(this.toOpen(e.file))), stamp);
  }

  /** Loads the current manifest, opening new shards on another thread; throws when one is corrupt. */
  async reload(): Promise<Snapshot> {
    // The stamp before the read: a manifest swapped while new shards open is seen by the next check.
    const stamp = this.stamp();
    const m = readManifest(this.dataDir);
    const byName = this.byName();
    const fresh = m.shards.filter((e) => !byName.has(e.file)).map((e) => this.toOpen(e.file));
    if (fresh.length > 0) {
      const [opened] = await runOnThreads<readonly string[], ShardHandle[]>('open-shards', [fresh]);
      if (opened!.status === 'rejected') throw opened!.reason;
      for (const h of opened!.value) byName.set(h.name, ShardReader.attach(h.name, h.buffer));
    }
    return this.install(m.generation, m.shards.map((e) => byName.get(e.file)!), stamp);
  }

  current(): Snapshot {
    return this.snapshot;
  }

  /** The current snapshot, leased: its shards stay mapped until release(snapshot). */
  lease(): Snapshot {
    this.snapshot.leases++;
    return this.snapshot;
  }

  release(s: Snapshot): void {
    const held = s as HeldSnapshot;
    if (--held.leases > 0 || held === this.snapshot) return;
    this.retired.delete(held);
    this.letGoOf(held);
  }

  /** The path of a shard file about to be opened (the shard-open fault is counted here, on the thread that decides). */
  private toOpen(file: string): string {
    const full = path.join(this.dataDir, file);
    failIf('shard-open', full);
    return full;
  }

  private byName(): Map<string, ShardReader> {
    return new Map(this.snapshot.shards.map((s) => [s.name, s]));
  }

  /** Makes `shards` current; the old snapshot's shards that left go now, or when its last lease ends. */
  private install(generation: number, shards: ShardReader[], stamp: string): Snapshot {
    const old = this.snapshot;
    this.snapshot = new HeldSnapshot(generation, Object.freeze(shards));
    this.lastStamp = stamp;
    if (old.leases > 0) this.retired.add(old);
    else this.letGoOf(old);
    return this.snapshot;
  }

  /** Releases the shards of a retired snapshot that neither the current one nor a held retired one still has. */
  private letGoOf(old: HeldSnapshot): void {
    const kept = new Set(this.snapshot.shards);
    for (const r of this.retired) for (const s of r.shards) kept.add(s);
    for (const s of old.shards) {
      if (kept.has(s)) continue;
      releaseMapping(s.buffer);
      this.released.postMessage(s.name);
    }
  }

  /** Walks the shards held (a few hundred at most): for a scrape, never per request. */
  stats(): ShardSetStats {
    const current = this.snapshot.shards;
    const held = new Set(current);
    for (const r of this.retired) for (const s of r.shards) held.add(s);
    let mappedBytes = 0;
    for (const s of held) mappedBytes += s.buffer.byteLength;
    let newest: number | undefined;
    for (const s of current) if (newest === undefined || s.timeMax > newest) newest = s.timeMax;
    return {
      shards: current.length, generation: this.snapshot.generation, mappedBytes, newestObservation: newest,
      reloads: this.reloads, reloadFailures: this.reloadFailures,
    };
  }

  /** Starts watching for manifest swaps. */
  watch(onReload?: (s: Snapshot) => void): void {
    const check = () => {
      if (this.reloading || this.stamp() === this.lastStamp) return;
      this.reloading = true;
      const before = this.snapshot.generation;
      this.reload().then((s) => {
        if (s.generation === before) return;
        this.reloads++;
        this.log('shards reloaded', { generation: s.generation, shards: s.shards.length });
        onReload?.(s);
      }, (err: unknown) => {
        // Keep serving the last good snapshot; a half-published or corrupt
        // shard must not take the service down. Retried on the next change.
        this.reloadFailures++;
        this.log('shard reload failed; still serving the previous shards', { error: (err as Error).message });
        this.lastStamp = this.stamp();
      }).finally(() => {
        this.reloading = false;
      });
    };
    try {
      this.watcher = watch(this.dataDir, (_event, file) => {
        if (file === MANIFEST_FILE) setTimeout(check, LIMITS.manifestSettleMs);
      });
      this.watcher.unref();
    } catch {
      // Directory watching unsupported here: the poll below covers it.
    }
    this.timer = setInterval(check, LIMITS.manifestPollMs);
    this.timer.unref();
  }

  close(): void {
    this.watcher?.close();
    if (this.timer) clearInterval(this.timer);
    this.released.close();
  }

  private stamp(): string {
    const file = path.join(this.dataDir, MANIFEST_FILE);
    if (!existsSync(file)) return 'none';
    const st = statSync(file);
    return `${st.ino}:${st.mtimeMs}:${st.size}`;
  }
}
