// ShardSet: the live shards of a data directory, reloaded when the manifest
// changes, without a restart and without disturbing queries in flight.
//
// A query takes a snapshot (the current array) when it starts and uses it to
// the end; a reload builds a new array and swaps the reference. Old readers
// stay valid while any query or worker holds their SharedArrayBuffer: the
// mapping is released only when the last reference is collected, and the
// file's pages outlive its unlink.
//
// Change detection: fs.watch on the directory (rename of manifest.json) plus
// a stat poll every LIMITS.manifestPollMs as a safety net (fs.watch can miss events on
// some filesystems).

import { existsSync, statSync, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { LIMITS } from '../../config/limits.js';
import { MANIFEST_FILE, readManifest } from '../../shard/manifest.js';
import { ShardReader } from '../../shard/shard-reader.js';

export interface Snapshot {
  readonly generation: number;
  readonly shards: readonly ShardReader[];
}

export class ShardSet {
  private snapshot: Snapshot = { generation: -1, shards: [] };
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastStamp = '';
  private reloading = false;

  constructor(readonly dataDir: string, private readonly log: (msg: string, extra?: object) => void = () => undefined) {}

  /** Loads the current manifest; throws when a listed shard is corrupt. */
  load(): Snapshot {
    const m = readManifest(this.dataDir);
    const byName = new Map(this.snapshot.shards.map((s) => [s.name, s]));
    const shards = m.shards.map((e) => byName.get(e.file) ?? ShardReader.open(path.join(this.dataDir, e.file)));
    this.snapshot = Object.freeze({ generation: m.generation, shards: Object.freeze(shards) });
    this.lastStamp = this.stamp();
    return this.snapshot;
  }

  current(): Snapshot {
    return this.snapshot;
  }

  /** Starts watching for manifest swaps. */
  watch(onReload?: (s: Snapshot) => void): void {
    const check = () => {
      if (this.reloading || this.stamp() === this.lastStamp) return;
      this.reloading = true;
      try {
        const before = this.snapshot.generation;
        const s = this.load();
        if (s.generation !== before) {
          this.log('shards reloaded', { generation: s.generation, shards: s.shards.length });
          onReload?.(s);
        }
      } catch (err) {
        // Keep serving the last good snapshot; a half-published or corrupt
        // shard must not take the service down. Retried on the next change.
        this.log('shard reload failed; still serving the previous shards', { error: (err as Error).message });
        this.lastStamp = this.stamp();
      } finally {
        this.reloading = false;
      }
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
  }

  private stamp(): string {
    const file = path.join(this.dataDir, MANIFEST_FILE);
    if (!existsSync(file)) return 'none';
    const st = statSync(file);
    return `${st.ino}:${st.mtimeMs}:${st.size}`;
  }
}
