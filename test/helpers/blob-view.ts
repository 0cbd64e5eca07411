// A record blob for unit tests, built without the shard writer's checks so
// that tests can also hand the scanners empty records and bytes the writer
// would refuse. `shared` puts it in a SharedArrayBuffer, as shards are.

import type { BlobColumns } from '../../src/shard/blob.js';

export function makeView(records: readonly string[], shared = false): BlobColumns {
  const total = records.reduce((n, r) => n + r.length + 1, 0);
  const blob = shared ? Buffer.from(new SharedArrayBuffer(total)) : Buffer.alloc(total);
  const offsets = new Uint32Array(records.length + 1);
  let at = 0;
  records.forEach((r, i) => {
    offsets[i] = at;
    at += blob.write(r, at, 'latin1');
    blob[at++] = 0x0a;
  });
  offsets[records.length] = at;
  return { blob, offsets };
}
