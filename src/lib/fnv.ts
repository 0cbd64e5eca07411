// FNV-1a (32-bit), the one hash of the in-memory tables that key names and
// values by their bytes or characters (shard/interned-blob.ts,
// ingest/zone-rrsets.ts, demo/demo-part.ts): a few operations a byte,
// spread well enough over DNS names for open addressing, and stable across
// runs and threads (a demo part is chosen by it).

export const FNV_OFFSET = 0x811c9dc5;
export const FNV_PRIME = 0x01000193;

/** FNV-1a over a string's character codes (names and values are ASCII: one code a byte), as an unsigned 32-bit integer. */
export function fnv1aOfString(s: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), FNV_PRIME);
  return h >>> 0;
}
