// Fuzz target: the dnstap reader (src/ingest/dnstap.ts), over generated
// Frame Streams files (START, dnstap MESSAGE frames of response and query
// types with and without times, query_zone and response, other dnstap
// types, STOP) and the same files with bytes flipped, cut, inserted,
// deleted and duplicated. Some generated responses are well framed but hold
// rdata that does not decode. Properties: see ingest-check.ts; an unmutated
// file without such rdata is read without a single reject.

import fc from 'fast-check';
import { afterAll, describe, expect, test } from 'vitest';
import { dnstapObservations } from '../../src/ingest/dnstap.js';
import { dnstapArb } from './capture-gen.js';
import { checkAsyncProperty, FUZZ_TIMEOUT_MS, runsFor } from './fuzz-config.js';
import { checkIngestRun, fuzzDir, runIngest } from './ingest-check.js';
import { mutate, mutationsArb } from './mutate.js';

const RUNS = runsFor(1_000);
const WHERE = /^(frame [1-9]\d* \(byte offset \d+\)|byte offset \d+)$/;
const tmp = fuzzDir('dnstap');
afterAll(() => tmp.remove());

describe('fuzz: dnstap ingest', () => {
  test('generated and mutated Frame Streams: observations or IngestErrors naming the frame, nothing else', async () => {
    const maxErrors = fc.oneof(fc.constant(Infinity), fc.nat(3));
    await checkAsyncProperty('ingest dnstap', RUNS, fc.asyncProperty(dnstapArb, mutationsArb(), maxErrors, async (valid, ms, max) => {
      const input = mutate(valid.bytes, ms);
      const file = tmp.write('capture.fstrm', input);
      const run = await runIngest(file, max, dnstapObservations);
      checkIngestRun(run, [file], WHERE, input.length);
      if (ms.length === 0 && valid.clean) {
        expect({ rejects: run.rejects.map(String), thrown: run.thrown }).toEqual({ rejects: [], thrown: undefined });
      }
    }), 10_000);
  }, FUZZ_TIMEOUT_MS);
});
