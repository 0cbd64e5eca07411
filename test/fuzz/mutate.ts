// Byte-level mutations shared by the fuzz targets: flips, truncations,
// insertions, deletions, overwrites with boundary values and duplicated
// slices, applied to a valid input so that most cases stay close to valid.

import fc from 'fast-check';

export type Mutation =
  | { op: 'flip'; at: number; bit: number }
  | { op: 'set'; at: number; value: number }
  | { op: 'truncate'; at: number }
  | { op: 'insert'; at: number; bytes: Uint8Array }
  | { op: 'delete'; at: number; count: number }
  | { op: 'duplicate'; at: number; count: number };

const BOUNDARY_BYTES = [0x00, 0x01, 0x3f, 0x40, 0x7f, 0x80, 0xc0, 0xff, 0x0a, 0x0d, 0x20, 0x22, 0x28, 0x29, 0x2e, 0x3b, 0x5c];

export const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant('flip' as const), at: fc.nat(), bit: fc.nat(7) }),
  fc.record({ op: fc.constant('set' as const), at: fc.nat(), value: fc.oneof(fc.constantFrom(...BOUNDARY_BYTES), fc.nat(255)) }),
  fc.record({ op: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('insert' as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }) }),
  fc.record({ op: fc.constant('delete' as const), at: fc.nat(), count: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ op: fc.constant('duplicate' as const), at: fc.nat(), count: fc.integer({ min: 1, max: 32 }) }),
);

/** Up to `max` mutations (none at all sometimes: the valid input itself is a case too). */
export function mutationsArb(max = 4): fc.Arbitrary<Mutation[]> {
  return fc.array(mutationArb, { maxLength: max });
}

/** `input` with the mutations applied in order; positions wrap around the current length. */
export function mutate(input: Uint8Array, mutations: readonly Mutation[]): Uint8Array {
  let b = Uint8Array.from(input);
  for (const m of mutations) {
    const n = b.length;
    const at = n === 0 ? 0 : m.at % (n + 1);
    switch (m.op) {
      case 'flip':
        if (at < n) b[at] = b[at]! ^ (1 << m.bit);
        break;
      case 'set':
        if (at < n) b[at] = m.value;
        break;
      case 'truncate':
        b = b.slice(0, at);
        break;
      case 'insert':
        b = Uint8Array.from([...b.subarray(0, at), ...m.bytes, ...b.subarray(at)]);
        break;
      case 'delete':
        b = Uint8Array.from([...b.subarray(0, at), ...b.subarray(at + m.count)]);
        break;
      case 'duplicate':
        b = Uint8Array.from([...b.subarray(0, at + m.count), ...b.subarray(at)]);
        break;
    }
  }
  return b;
}
