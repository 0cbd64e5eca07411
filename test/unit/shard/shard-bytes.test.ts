// The shard writer's output, byte for byte, on a fixed input. A refactoring
// of buildShardBody must leave this hash alone; a deliberate change of the
// shard format or of the demo stream changes it, and then the new hash goes
// here with the change. `node dist/bench/shard-bytes.js --records 200000`
// checks the same on a larger table.

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildShardBody } from '../../../src/shard/shard-writer.js';
import { SHARD_INPUT_NOW, shardInputTable } from '../../../bench/shard-input.js';

describe('buildShardBody bytes', () => {
  it('are unchanged for the demo\'s first 3,000 RRsets and the order edge cases', () => {
    const { body, stats } = buildShardBody(shardInputTable(3_000), 'x', SHARD_INPUT_NOW);
    expect(stats).toEqual({ rrsets: 3_182, owners: 1_235, rdata: 2_882, flexRdataValues: 1_508, bytes: 844_256 });
    expect(createHash('sha256').update(body).digest('hex')).toBe('094edceeb6c8377564b33b04610fd1392e4e6b4c46303676a008b0d56b591a55');
  });
});
