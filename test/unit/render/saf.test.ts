// The SAF lines of a 200 response (render/saf.ts, compat.md "Stream
// framing"): every line ends with "\n", none is blank, and each is the JSON
// object the spec names.

import { describe, expect, it } from 'vitest';
import { BEGIN_LINE, KEEPALIVE_LINE, terminatorLine, type Terminator } from '../../../src/render/saf.js';

describe('SAF lines', () => {
  it('begin and keep-alive are the spec\'s exact bytes', () => {
    expect(BEGIN_LINE).toBe('{"cond":"begin"}\n');
    expect(KEEPALIVE_LINE).toBe('{}\n');
  });

  it('a terminator without a message is its cond alone', () => {
    for (const cond of ['succeeded', 'limited', 'failed'] as Terminator[]) {
      expect(terminatorLine(cond)).toBe(`{"cond":"${cond}"}\n`);
    }
  });

  it('a terminator with a message carries it, cond first, escaped as JSON', () => {
    expect(terminatorLine('limited', 'Result limit reached')).toBe('{"cond":"limited","msg":"Result limit reached"}\n');
    expect(terminatorLine('succeeded', 'Query completed, no results found'))
      .toBe('{"cond":"succeeded","msg":"Query completed, no results found"}\n');
    const msg = 'bad "pattern" \\d\nat 3';
    const line = terminatorLine('failed', msg);
    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1)).not.toContain('\n');
    expect(JSON.parse(line)).toEqual({ cond: 'failed', msg });
  });
});
