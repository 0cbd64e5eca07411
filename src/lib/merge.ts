// k-way merge of sorted streams, grouping items with equal keys.
//
// Shards are each sorted by the same key, so one global order is a merge
// away; standard search and compaction both read shards this way. Memory is
// one head per input. Inputs are few (shards), so a linear scan for the
// minimum beats a heap here. Within one input keys never descend; equal
// keys of one input come out as separate groups.

export interface Keyed {
  readonly key: string;
}

/** Yields, in key order, the group of items (one per input at most) sharing each key. */
export function* mergeSorted<T extends Keyed>(inputs: Iterator<T>[]): Generator<T[]> {
  const heads: (T | undefined)[] = inputs.map((it) => {
    const r = it.next();
    return r.done ? undefined : r.value;
  });
  for (;;) {
    // One input left (an exact name that one shard holds): pass it through
    // without reading keys, which the inputs may build lazily.
    let live = -1;
    let count = 0;
    for (let i = 0; i < heads.length && count < 2; i++) {
      if (heads[i] !== undefined) {
        live = i;
        count++;
      }
    }
    if (count === 0) return;
    if (count === 1) {
      yield [heads[live]!];
      const r = inputs[live]!.next();
      heads[live] = r.done ? undefined : r.value;
      continue;
    }
    let min: string | undefined;
    for (const h of heads) if (h !== undefined && (min === undefined || h.key < min)) min = h.key;
    const group: T[] = [];
    for (let i = 0; i < heads.length; i++) {
      const h = heads[i];
      if (h === undefined || h.key !== min!) continue;
      group.push(h);
      const r = inputs[i]!.next();
      heads[i] = r.done ? undefined : r.value;
    }
    yield group;
  }
}
