// checkLimits(): the relations between limits hold for the limits as
// shipped, and a limit edited against one of them is caught, by name.

import { describe, expect, it } from 'vitest';
import { LIMITS, checkLimits } from '../../../src/config/limits.js';

describe('checkLimits', () => {
  it('passes for the limits as shipped (it also ran when the module loaded)', () => {
    expect(() => checkLimits()).not.toThrow();
  });

  it('names the relation an edited limit breaks', () => {
    // The frozen object cannot be edited: a copy goes through the same rules.
    const edited = (change: Partial<Record<keyof typeof LIMITS, number>>) => () => checkLimits({ ...LIMITS, ...change });
    expect(edited({ resultsDefault: LIMITS.resultsMaxCeiling + 1 })).toThrow('resultsDefault must not exceed resultsMaxCeiling');
    expect(edited({ shardBytesMax: 2 ** 31 })).toThrow('FlatBuffers offsets are signed 32-bit');
    expect(edited({ keepAliveMs: LIMITS.searchTimeoutMs })).toThrow('keep-alives must come before the search timeout');
  });
});
