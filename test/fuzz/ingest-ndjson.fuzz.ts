// Fuzz target: the NDJSON reader (src/ingest/ndjson.ts), over generated
// exports and the same exports mutated byte by byte.
//
// Lines are DNSDB API v2 objects (bare or wrapped in {"obj":...}, rdata one
// string or an array) and COF objects (numeric rrtype, names without the
// trailing dot), with every field sometimes missing, of the wrong JSON type
// or out of range; SAF framing lines and {} keep-alives; blank lines; a BOM;
// LF or CRLF. Properties: see ingest-check.ts, and besides: every reject
// names a line of the file, no line is rejected twice, a line gives at most
// one observation or reject, and an unmutated export of valid objects gives
// exactly one observation per object and no reject.

import fc from 'fast-check';
import { afterAll, describe, expect, test } from 'vitest';
import { rrtypeFromText } from '../../src/dns/rrtype.js';
import { ndjsonObservations } from '../../src/ingest/ndjson.js';
import { checkAsyncProperty, FUZZ_TIMEOUT_MS, runsFor } from './fuzz-config.js';
import { checkIngestRun, fuzzDir, runIngest } from './ingest-check.js';
import { mutate, mutationsArb } from './mutate.js';
import { SEEDS } from './rdata-seeds.js';

const RUNS = runsFor(1_000);
const WHERE = /^line [1-9]\d*$/;
const tmp = fuzzDir('ndjson');
afterAll(() => tmp.remove());

interface Line {
  text: string;
  /** A record a valid export holds: one observation, no reject. */
  record: boolean;
}

/** A field: a valid value, or (rarely) a wrong one, or absent (undefined). */
function field<T>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<unknown>): fc.Arbitrary<{ v: unknown; ok: boolean }> {
  return fc.oneof(
    { weight: 12, arbitrary: good.map((v) => ({ v, ok: true })) },
    { weight: 1, arbitrary: bad.map((v) => ({ v, ok: false })) },
  );
}

const badValue = fc.oneof(fc.constantFrom(null, true, -1, 1.5, 1e30, '', 'x', [], {}, [1], '2024-13-45T99:00:00Z'),
  fc.string({ maxLength: 6 }));
const nameArb = fc.constantFrom('www.example.com.', 'Example.COM', 'a.b.', '*.wild.example.', 'xn--bcher-kva.example.', '.', 'x\\.y.');
const timeArb = fc.oneof(fc.nat({ max: 2_000_000_000 }), fc.constantFrom('2024-06-05T18:49:49Z', '2010-01-01 00:00:00+02:00'));

const objectArb: fc.Arbitrary<Line> = fc.record({
  seed: fc.constantFrom(...SEEDS),
  rrname: field(nameArb, fc.oneof(badValue, fc.constantFrom('a..b', `${'x'.repeat(64)}.`))),
  typeForm: fc.constantFrom('mnemonic', 'mnemonic', 'number', 'lower'),
  typeOk: fc.oneof({ weight: 12, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  rdataForm: fc.constantFrom('string', 'array', 'array2'),
  rdataOk: fc.oneof({ weight: 10, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  count: fc.option(field(fc.nat(), badValue), { nil: undefined }),
  times: fc.constantFrom('sensor', 'zone', 'both', 'first-only', 'none'),
  first: timeArb,
  span: fc.nat(1_000_000),
  bailiwick: fc.option(field(nameArb, badValue), { nil: undefined }),
  wrapped: fc.boolean(),
  extra: fc.option(fc.constantFrom({ sensor_id: 'x' }, { raw_rdata: 'ZZ' }, { rrtype2: 1 }), { nil: undefined }),
}).map((g) => {
  const [mnemonic, text] = g.seed;
  const code = rrtypeFromText(mnemonic)!;
  const rrtype = !g.typeOk ? 'NOTATYPE' : g.typeForm === 'number' ? code : g.typeForm === 'lower' ? mnemonic.toLowerCase() : mnemonic;
  const rdataText = g.rdataOk ? text : `${text} trailing junk`;
  const rdata = g.rdataForm === 'string' ? rdataText : g.rdataForm === 'array' ? [rdataText] : [rdataText, rdataText];
  const o: Record<string, unknown> = { rrname: g.rrname.v, rrtype, rdata };
  if (g.count !== undefined) o['count'] = g.count.v;
  // Times in either form; relative order kept so that first <= last.
  const t0 = g.first;
  const t1 = typeof t0 === 'number' ? t0 + g.span : t0;
  if (g.times === 'sensor' || g.times === 'both') Object.assign(o, { time_first: t0, time_last: t1 });
  if (g.times === 'zone' || g.times === 'both') Object.assign(o, { zone_time_first: t0, zone_time_last: t1 });
  if (g.times === 'first-only') o['time_first'] = t0;
  if (g.bailiwick !== undefined) o['bailiwick'] = g.bailiwick.v;
  if (g.extra !== undefined) Object.assign(o, g.extra);
  const ok = g.rrname.ok && g.typeOk && g.rdataOk && (g.count?.ok ?? true) && g.times !== 'none' && (g.bailiwick?.ok ?? true);
  return { text: JSON.stringify(g.wrapped ? { obj: o } : o), record: ok };
});

const lineArb: fc.Arbitrary<Line> = fc.oneof(
  { weight: 10, arbitrary: objectArb },
  { weight: 1, arbitrary: fc.constantFrom('{"cond":"begin"}', '{"cond":"succeeded"}', '{}', '{"cond":"limited","msg":"Result limit reached"}',
    '').map((text) => ({ text, record: false })) },
  { weight: 1, arbitrary: fc.constantFrom('not json', '[1,2]', '"str"', '{"obj":5}', '{"rrname":"a."}', '{', 'null')
    .map((text) => ({ text, record: false })) },
);

const fileArb = fc.record({
  lines: fc.array(lineArb, { maxLength: 10 }),
  crlf: fc.boolean(),
  bom: fc.boolean(),
  finalNewline: fc.boolean(),
});

describe('fuzz: NDJSON ingest', () => {
  test('generated and mutated exports: one observation or one reject per line at most, IngestErrors naming the line', async () => {
    await checkAsyncProperty('ingest ndjson', RUNS, fc.asyncProperty(fileArb, mutationsArb(), fc.oneof(fc.constant(Infinity), fc.nat(3)),
      async (f, ms, max) => {
        const eol = f.crlf ? '\r\n' : '\n';
        const text = (f.bom ? '\uFEFF' : '') + f.lines.map((l) => l.text).join(eol) + (f.finalNewline && f.lines.length > 0 ? eol : '');
        const input = mutate(Buffer.from(text, 'utf8'), ms);
        const file = tmp.write('export.ndjson', input);
        const run = await runIngest(file, max, ndjsonObservations);
        checkIngestRun(run, [file], WHERE, input.length);
        const lineCount = Buffer.from(input).toString('latin1').split('\n').length;
        const rejected = run.rejects.map((r) => Number(/\d+/.exec((r as { where?: string }).where ?? '')![0]));
        expect(rejected.every((n) => n >= 1 && n <= lineCount), `rejected lines ${rejected} of ${lineCount}`).toBe(true);
        expect(new Set(rejected).size).toBe(rejected.length);
        expect(run.obs.length + run.rejects.length).toBeLessThanOrEqual(lineCount);
        if (ms.length === 0) {
          const records = f.lines.filter((l) => l.record).length;
          const bad = f.lines.filter((l) => !l.record && !/^(\{"cond":.*\}|\{\}|)$/.test(l.text)).length;
          if (bad === 0) {
            expect({ rejects: run.rejects.map(String), thrown: run.thrown }).toEqual({ rejects: [], thrown: undefined });
            expect(run.obs.length).toBe(records);
          }
        }
      }), 10_000);
  }, FUZZ_TIMEOUT_MS);
});
