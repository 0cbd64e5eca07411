// What every ingest parser must do with any input, checked the same way for
// zone files, NDJSON, pcap/pcapng and dnstap (test/fuzz/ingest-*.fuzz.ts):
// - it ends (the property's per-case time limit catches a hang) and either
//   yields observations or reports bad input through ctx.reject with an
//   IngestError naming the file and a place in it; an IngestError may also
//   be thrown (--max-errors reached, or a whole-file refusal), never any
//   other exception;
// - what it yields is canonical: names as normalizeName gives them, rdata
//   text that reads back to its wire, known non-meta types, ordered times;
// - its output stays proportional to its input (no unbounded memory).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { normalizeName } from '../../src/dns/name.js';
import { rdataFromText } from '../../src/dns/rdata/index.js';
import { isMetaType } from '../../src/dns/rrtype.js';
import type { IngestContext } from '../../src/ingest/context.js';
import type { Observation } from '../../src/model/observation.js';

export interface IngestRun {
  obs: Observation[];
  rejects: Error[];
  /** What the parser threw, if anything. */
  thrown: unknown;
  /** The error ctx.reject threw to stop the run (the --max-errors'th reject), if it did. */
  stoppedBy: Error | undefined;
}

/** A directory of the target's input files, removed by `remove()`. */
export function fuzzDir(prefix: string): { dir: string; write(name: string, bytes: Uint8Array | string): string; remove(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), `rrscan-fuzz-${prefix}-`));
  return {
    dir,
    write: (name, bytes) => {
      const file = path.join(dir, name);
      writeFileSync(file, bytes);
      return file;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * Runs a parser over `file` with a context that keeps every reject and, like
 * the CLI's --max-errors, throws the reject after `maxErrors` of them.
 */
export async function runIngest(file: string, maxErrors: number,
  parse: (file: string, ctx: IngestContext) => AsyncIterable<Observation>): Promise<IngestRun> {
  const run: IngestRun = { obs: [], rejects: [], thrown: undefined, stoppedBy: undefined };
  const ctx: IngestContext = {
    file,
    reject(err: Error) {
      run.rejects.push(err);
      if (run.rejects.length > maxErrors) {
        run.stoppedBy = err;
        throw err;
      }
    },
    progress() {},
  };
  try {
    for await (const o of parse(file, ctx)) run.obs.push(o);
  } catch (err) {
    run.thrown = err;
  }
  return run;
}

interface IngestErrorShape {
  code?: unknown;
  file?: unknown;
  where?: unknown;
  reason?: unknown;
}

function checkIngestError(err: unknown, files: readonly string[], where: RegExp, what: string): void {
  const e = err as IngestErrorShape;
  expect(e?.code, `${what} is not an IngestError: ${String(err)}\n${(err as Error)?.stack ?? ''}`).toBe('INGEST_BAD_INPUT');
  expect(files, `${what} names file ${String(e.file)}`).toContain(e.file);
  expect(String(e.where), `${what} where`).toMatch(where);
  expect(typeof e.reason === 'string' && e.reason.length > 0, `${what} reason`).toBe(true);
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/**
 * The checks above. `files`: the files an error may name; `where`: the
 * parser's form of a place; `inputBytes`: what it read, which bounds what it
 * may yield (a record in a capture can expand by compression pointers, so
 * the bound is generous but linear); `readsMax`: how many times the parser
 * may read its input (a zone file may $INCLUDE itself).
 */
export function checkIngestRun(run: IngestRun, files: readonly string[], where: RegExp, inputBytes: number, readsMax = 1): void {
  if (run.thrown !== undefined) {
    checkIngestError(run.thrown, files, where, 'thrown error');
    // A reject past --max-errors is the only way a record error stops the run.
    if (run.stoppedBy !== undefined) expect(run.thrown).toBe(run.stoppedBy);
  }
  run.rejects.forEach((r, i) => checkIngestError(r, files, where, `reject ${i + 1}`));
  let yielded = 0;
  for (const o of run.obs) {
    const what = `observation ${o.rrname} type ${o.rrtype}`;
    expect(normalizeName(o.rrname), what).toBe(o.rrname);
    if (o.bailiwick !== '') expect(normalizeName(o.bailiwick), what).toBe(o.bailiwick);
    expect(Number.isInteger(o.rrtype) && o.rrtype > 0 && o.rrtype <= 0xffff && !isMetaType(o.rrtype), what).toBe(true);
    expect(o.rdata.length, what).toBeGreaterThan(0);
    for (const r of o.rdata) {
      expect(r.text, what).toMatch(/^[\x20-\x7e]*$/);
      expect(hex(rdataFromText(o.rrtype, r.text)), `${what}: ${r.text}`).toBe(hex(r.wire));
      yielded += r.wire.length + r.text.length;
    }
    yielded += o.rrname.length;
    for (const [first, last] of [[o.timeFirst, o.timeLast], [o.zoneTimeFirst, o.zoneTimeLast]] as const) {
      expect(Number.isInteger(first) && Number.isInteger(last) && first >= 0 && first <= last, `${what} times ${first}..${last}`)
        .toBe(true);
    }
    expect(Number.isSafeInteger(o.count) && o.count >= 0, `${what} count`).toBe(true);
  }
  expect(yielded, 'output proportional to input').toBeLessThanOrEqual(readsMax * (64 * inputBytes + 4096));
}
