// Fuzz target: the zone-file reader (src/ingest/zone.ts), over generated
// master files and the same files mutated byte by byte.
//
// A case is two files in one directory, main.zone and other.zone, of lines
// from a grammar: records of every seed type with owners absolute, relative,
// "@" or blank, optional TTL and class in either order, rdata sometimes
// spread over lines in parentheses, comments; $ORIGIN, $TTL, $GENERATE and
// unknown directives; $INCLUDE of the other file, of the file itself (include
// cycles), of a missing file, a directory, a path through a file and an
// over-long name. Properties: see
// ingest-check.ts; a case built only from the valid part of the grammar, and
// not mutated, is read without a single reject.

import fc from 'fast-check';
import { afterAll, describe, expect, test } from 'vitest';
import { LIMITS } from '../../src/config/limits.js';
import { zoneObservations } from '../../src/ingest/zone.js';
import { checkAsyncProperty, FUZZ_TIMEOUT_MS, runsFor } from './fuzz-config.js';
import { checkIngestRun, fuzzDir, runIngest } from './ingest-check.js';
import { mutate, mutationsArb } from './mutate.js';
import { SEEDS } from './rdata-seeds.js';

const RUNS = runsFor(500);
const WHERE = /^(line [1-9]\d*|whole file)$/;
const tmp = fuzzDir('zone');
afterAll(() => tmp.remove());

interface Line {
  text: string;
  /** From the valid part of the grammar: read without a reject. */
  valid: boolean;
}

const valid = (text: string): Line => ({ text, valid: true });
const invalid = (text: string): Line => ({ text, valid: false });

const ownerArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('www', 'WWW.Example.COM.', '@', 'a.b', '*.wild', 'ns1.example.com.', 'x\\.y', 'xn--bcher-kva')
    .map((o) => ({ owner: o, valid: true })) },
  { weight: 1, arbitrary: fc.constantFrom('', '..', 'a..b', `${'x'.repeat(64)}.`, '"quoted"', '$X')
    .map((o) => ({ owner: o, valid: false })) },
);
const ttlArb = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ text: '', valid: true }) },
  { weight: 3, arbitrary: fc.constantFrom('3600', '0', '1h', '1W2d', '2147483647').map((t) => ({ text: t, valid: true })) },
  { weight: 1, arbitrary: fc.constantFrom('4294967296', '1x', '99999999999').map((t) => ({ text: t, valid: false })) },
);
const classArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('', 'IN', 'in', 'CLASS1').map((c) => ({ text: c, valid: true })) },
  { weight: 1, arbitrary: fc.constantFrom('CH', 'HS', 'CLASS3', 'NONE').map((c) => ({ text: c, valid: false })) },
);

const recordArb: fc.Arbitrary<Line[]> = fc.record({
  owner: ownerArb,
  ttl: ttlArb,
  cls: classArb,
  classFirst: fc.boolean(),
  seed: fc.constantFrom(...SEEDS),
  layout: fc.constantFrom('one', 'one', 'parens', 'comment'),
}).map(({ owner, ttl, cls, classFirst, seed: [type, text], layout }) => {
  const middle = (classFirst ? [cls.text, ttl.text] : [ttl.text, cls.text]).filter((t) => t !== '').join(' ');
  const head = `${owner.owner === '' ? '' : owner.owner}\t${middle}${middle ? ' ' : ''}${type}`;
  const ok = owner.valid && ttl.valid && cls.valid && owner.owner !== '';
  if (layout === 'parens') return [{ text: `${head} (`, valid: ok }, { text: `\t${text} ) ; end`, valid: ok }];
  return [{ text: `${head} ${text}${layout === 'comment' ? ' ; a comment' : ''}`, valid: ok }];
});

const directiveArb: fc.Arbitrary<Line[]> = fc.oneof(
  fc.constantFrom('$ORIGIN example.com.', '$ORIGIN sub', '$ORIGIN Zone.EXAMPLE.', '$TTL 300', '$TTL 1d', '$INCLUDE other.zone',
    '$INCLUDE other.zone sub.example.').map((d) => [valid(d)]),
  fc.constantFrom('$INCLUDE missing.zone', '$INCLUDE .', '$INCLUDE other.zone/x', `$INCLUDE ${'n'.repeat(300)}`, '$INCLUDE', '$ORIGIN',
    '$TTL x', '$GENERATE 1-4 h$ A 192.0.2.$', '$BOGUS x', '$ORIGIN a b', '$INCLUDE a b c').map((d) => [invalid(d)]),
  // Include cycles: main.zone includes itself, or other.zone includes main.zone which includes it.
  fc.constantFrom('$INCLUDE main.zone', '$INCLUDE main.zone sub').map((d) => [invalid(d)]),
);

const fileArb = fc.array(fc.oneof(
  { weight: 8, arbitrary: recordArb },
  { weight: 2, arbitrary: directiveArb },
  { weight: 1, arbitrary: fc.constantFrom('', '; comment only', '   ', '\t; indented comment').map((t) => [valid(t)]) },
), { maxLength: 12 }).map((groups) => groups.flat());

function render(lines: readonly Line[], crlf: boolean, finalNewline: boolean): string {
  const eol = crlf ? '\r\n' : '\n';
  return lines.map((l) => l.text).join(eol) + (finalNewline && lines.length > 0 ? eol : '');
}

describe('fuzz: zone ingest', () => {
  test('generated and mutated zone files: observations or IngestErrors naming the line, nothing else', async () => {
    const arb = fc.record({
      main: fileArb,
      // other.zone never includes anything but main.zone, so "valid" includes of it end.
      other: fileArb.map((ls) => ls.filter((l) => !l.text.startsWith('$INCLUDE other'))),
      crlf: fc.boolean(),
      finalNewline: fc.boolean(),
      mutations: mutationsArb(),
      maxErrors: fc.oneof(fc.constant(Infinity), fc.nat(3)),
      origin: fc.option(fc.constantFrom('example.com.', 'Example.COM', '.', 'a..b'), { nil: undefined, freq: 3 }),
    });
    await checkAsyncProperty('ingest zone', RUNS, fc.asyncProperty(arb, async (c) => {
      const mainBytes = mutate(Buffer.from(render(c.main, c.crlf, c.finalNewline)), c.mutations);
      const main = tmp.write('main.zone', mainBytes);
      const otherText = render(c.other, c.crlf, true);
      const other = tmp.write('other.zone', otherText);
      const run = await runIngest(main, c.maxErrors, (file, ctx) => zoneObservations(file, ctx,
        c.origin === undefined ? { observedAt: 1_700_000_000 } : { origin: c.origin, observedAt: 1_700_000_000 }));
      // A bad --origin is refused for the whole file.
      // Each $INCLUDE followed reads a file again (with another origin, so new names): LIMITS.zoneIncludesMax bounds the reads.
      checkIngestRun(run, [main, other], c.origin === 'a..b' ? /^--origin$/ : WHERE, mainBytes.length + otherText.length,
        LIMITS.zoneIncludesMax + 1);
      const includesOther = c.main.some((l) => l.text.startsWith('$INCLUDE other'));
      const clean = c.mutations.length === 0 && c.origin !== 'a..b' && c.main.every((l) => l.valid) &&
        (!includesOther || c.other.every((l) => l.valid && !l.text.startsWith('$INCLUDE')));
      if (clean) expect({ rejects: run.rejects.map(String), thrown: run.thrown }).toEqual({ rejects: [], thrown: undefined });
    }), 10_000);
  }, FUZZ_TIMEOUT_MS);
});
