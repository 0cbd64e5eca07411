// The request log's hand-written lines (src/server/log.ts) must say what
// pino would have said for the same members: the same JSON, the same order,
// whatever the characters a client's pattern or path holds.
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { logMember } from '../../../src/server/log.js';

/** The line pino writes for `fields` and `msg`, without its time member. */
function pinoLine(fields: Record<string, unknown>): string {
  let out = '';
  const sink = new Writable({ write(chunk: Buffer, _enc, cb) { out += chunk.toString(); cb(); } });
  pino({ base: undefined, timestamp: false }, sink).info(fields, 'request');
  return out;
}

const STRINGS = ['/pdns/v2/lookup/rrset/name/example.com.', 'a"b\\c', 'tab\there', 'nul\u0000', 'caf\u00e9 \u{1f600}', '', 'x'.repeat(150),
  '\u007f\u0080'];

describe('request log lines', () => {
  it('write each member as pino does (JSON-equal, same order, undefined left out)', () => {
    for (const s of STRINGS) {
      const fields = { status: 200, ms: 3, key: 'abcdef012345', results: 1, terminator: 'succeeded', path: s, id: undefined, swclient: s };
      const ours = `{"level":30${logMember('status', 200)}${logMember('ms', 3)}${logMember('key', 'abcdef012345')}` +
        `${logMember('results', 1)}${logMember('terminator', 'succeeded')}${logMember('path', s)}${logMember('id', undefined)}` +
        `${logMember('swclient', s)},"msg":"request"}\n`;
      const theirs = pinoLine(fields);
      expect(JSON.parse(ours)).toEqual(JSON.parse(theirs));
      expect(Object.keys(JSON.parse(ours) as object)).toEqual(Object.keys(JSON.parse(theirs) as object));
      // Where pino's text is valid JSON of the same value, ours is the same bytes but for how escapes are spelled.
      if (/^[\x20-\x7e]*$/.test(s)) expect(ours).toBe(theirs);
    }
  });

  it('escapes a lone surrogate, which pino writes raw (and UTF-8 then turns into U+FFFD)', () => {
    expect(JSON.parse(`{${logMember('p', 'a\ud800b').slice(1)}}`)).toEqual({ p: 'a\ud800b' });
  });

  it('writes numbers as numbers and what is not finite as null, as pino does', () => {
    expect(logMember('ms', 12)).toBe(',"ms":12');
    expect(logMember('ms', NaN)).toBe(',"ms":null');
  });
});
