// Flexible search (spec 4.2): a plan's sources merged into unique values,
// paged by offset and limit on UNIQUE values (spec 4.2 rule 6), each value
// written as its lines (one per rrtype). A value that several sources hold
// (one name in several shards) is one result whose rrtypes are the union of
// theirs.

import type { Effective } from '../query/params.js';
import type { FlexPlan } from './backend.js';
import { linesTo, paginate, type Combiner, type PageOutcome } from './paginator.js';
import type { ResultSink } from './sink.js';
import type { FlexSource } from './sources.js';

/** The line text and rrtypes of one value. */
export interface ValueLines {
  text: string;
  types: ArrayLike<number>;
}

/**
 * The lines of one value held by two sources: one line per rrtype,
 * ascending; for an rrtype both hold, the first's line (the lines are equal:
 * one value of one rrtype has one wire form).
 */
export function uniteLines(a: ValueLines, b: ValueLines): ValueLines {
  const la = a.text.split('\n');
  const lb = b.text.split('\n');
  const types: number[] = [];
  let text = '';
  let i = 0;
  let j = 0;
  while (i < a.types.length || j < b.types.length) {
    const ta = i < a.types.length ? a.types[i]! : Infinity;
    const tb = j < b.types.length ? b.types[j]! : Infinity;
    if (ta <= tb) {
      text += la[i]! + '\n';
      types.push(ta);
      i++;
      if (ta === tb) j++;
    } else {
      text += lb[j]! + '\n';
      types.push(tb);
      j++;
    }
  }
  return { text, types };
}

/** Folds the sources holding one value into its lines. */
class UnionOfLines implements Combiner<FlexSource, string> {
  private first: FlexSource | undefined;
  private text = '';
  private united: ValueLines | undefined;

  add(source: FlexSource): void {
    if (this.first === undefined) {
      this.first = source;
      this.text = source.lines();
      return;
    }
    const held = this.united ?? { text: this.text, types: this.first.types() };
    this.united = uniteLines(held, { text: source.lines(), types: source.types() });
    this.text = this.united.text;
  }

  take(): string {
    const text = this.text;
    this.first = undefined;
    this.united = undefined;
    this.text = '';
    return text;
  }
}

/** Runs a planned flexible search to its terminator, or to a `failed` one after `deadlineMs`. */
export function runFlexSearch(plan: FlexPlan, eff: Effective, deadlineMs: number, sink: ResultSink): PageOutcome | Promise<PageOutcome> {
  // A bad pattern fails fast, with RE2's own words, before anything runs.
  if (plan.error !== undefined) {
    plan.cancel();
    sink.end('failed', plan.error);
    return { results: 0, terminator: 'failed', message: plan.error };
  }
  return paginate(plan, new UnionOfLines(), linesTo(sink),
    { offset: eff.offset, limit: eff.limit, deadlineMs }, sink);
}
