// Fuzz target: the pcap/pcapng reader (src/ingest/pcap/), over generated
// captures of DNS traffic (UDP, TCP, fragmented IPv4; Ethernet, VLAN, SLL,
// SLL2, BSD null, raw IP; classic pcap in both byte orders and nanosecond
// form, pcapng) and the same captures with bytes flipped, cut, inserted,
// deleted and duplicated. Some generated responses are well framed but hold
// rdata that does not decode. Properties: see ingest-check.ts; an unmutated
// capture without such rdata is read without a single reject.

import fc from 'fast-check';
import { afterAll, describe, expect, test } from 'vitest';
import { pcapObservations } from '../../src/ingest/pcap/index.js';
import { pcapArb } from './capture-gen.js';
import { checkAsyncProperty, FUZZ_TIMEOUT_MS, runsFor } from './fuzz-config.js';
import { checkIngestRun, fuzzDir, runIngest } from './ingest-check.js';
import { mutate, mutationsArb } from './mutate.js';

const RUNS = runsFor(1_000);
const WHERE = /^(packet [1-9]\d* \(byte offset \d+\)|byte offset \d+)$/;
const tmp = fuzzDir('pcap');
afterAll(() => tmp.remove());

describe('fuzz: pcap ingest', () => {
  test('generated and mutated captures: observations or IngestErrors naming the packet, nothing else', async () => {
    const maxErrors = fc.oneof(fc.constant(Infinity), fc.nat(3));
    await checkAsyncProperty('ingest pcap', RUNS, fc.asyncProperty(pcapArb, mutationsArb(), maxErrors, async (valid, ms, max) => {
      const input = mutate(valid.bytes, ms);
      const file = tmp.write('capture.pcap', input);
      const run = await runIngest(file, max, pcapObservations);
      checkIngestRun(run, [file], WHERE, input.length);
      if (ms.length === 0 && valid.clean) {
        expect({ rejects: run.rejects.map(String), thrown: run.thrown }).toEqual({ rejects: [], thrown: undefined });
      }
    }), 10_000);
  }, FUZZ_TIMEOUT_MS);
});
