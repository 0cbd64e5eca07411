// A standard search's one sorted source: the rows of one ClickHouse SELECT
// (lookup-sql.ts), in the local merge's key order, each written as
// lookupLine's text.
//
// Backpressure as for flexible search (select-source.ts): the HTTP answer is
// paused while LIMITS.clickhouseLookupRowsBuffered rows wait for the merge.

import { LIMITS } from '../../config/limits.js';
import { isOneLabel, reverseName } from '../../dns/name.js';
import type { Sighting } from '../../model/sighting.js';
import type { LookupLineBytes } from '../../render/lookup-line-bytes.js';
import { lookupLine } from '../../render/result-lines.js';
import { RRSET_KEY_SEPARATOR as SEP, rrsetKeyTail, rrtypeKeyText } from '../../shard/rrset-order.js';
import { END, HAS, WAIT, type LookupSource, type SourceEvents, type SourceState } from '../sources.js';
import type { LookupShape } from './lookup-sql.js';
import { StreamedSelect } from './streamed-select.js';

/** One JSONEachRow row of lookup-sql.ts (UInt64 counts arrive as strings). */
interface Row {
  owner: string;
  rrtype: number;
  bailiwick?: string;
  texts?: string[];
  rdata?: string;
  target?: string;
  /** The index key the shards sort this row under (lookup-sql.ts). */
  ik: string;
  owner_rev?: string;
  c: string | number;
  tf: number;
  tl: number;
  ztf: number;
  ztl: number;
}

export class SelectLookupSource extends StreamedSelect implements LookupSource {
  private readonly rows: Row[] = [];
  private at = 0;

  constructor(private readonly shape: LookupShape, events: SourceEvents) {
    super(shape.sql, events);
  }

  /** Whether a row passes the one-label rule of `+.` and `.+` wildcards (the shards' rule, dns/name.ts). */
  private keeps(r: Row): boolean {
    const o = this.shape.oneLabel;
    if (o === undefined) return true;
    const name = (o.field === 'owner' ? r.owner : r.target) ?? '';
    return isOneLabel((o.reversed ? reverseName(name) : name).slice(o.prefix.length));
  }

  protected onLines(lines: string[]): boolean {
    if (this.closed) return false;
    if (this.at > 0) {
      this.rows.splice(0, this.at);
      this.at = 0;
    }
    try {
      for (const line of lines) {
        const r = JSON.parse(line) as Row;
        if (typeof r.owner !== 'string' || typeof r.rrtype !== 'number') throw new Error(`not a row: ${line.slice(0, 200)}`);
        if (this.keeps(r)) this.rows.push(r);
      }
    } catch (err) {
      return this.refuse(err);
    }
    this.events.ready();
    return this.rows.length < LIMITS.clickhouseLookupRowsBuffered;
  }

  state(): SourceState {
    if (this.at < this.rows.length) return HAS;
    return this.finished ? END : WAIT;
  }

  keyHead(): string {
    return this.rows[this.at]!.ik;
  }

  key(): string {
    const r = this.rows[this.at]!;
    if (this.shape.target === 'rrset') return `${r.ik}${SEP}${rrsetKeyTail(r.rrtype, r.bailiwick!, r.texts!)}`;
    return `${r.ik}${SEP}${rrtypeKeyText(r.rrtype)}${SEP}${r.rdata!}${SEP}${r.owner_rev!}`;
  }

  sighting(into: Sighting): Sighting {
    const r = this.rows[this.at]!;
    into.count = Number(r.c);
    into.timeFirst = r.tf;
    into.timeLast = r.tl;
    into.zoneTimeFirst = r.ztf;
    into.zoneTimeLast = r.ztl;
    return into;
  }

  line(w: LookupLineBytes, sighting: Readonly<Sighting>, humantime: boolean): void {
    const r = this.rows[this.at]!;
    const rrset = this.shape.target === 'rrset';
    w.line(lookupLine({
      rrname: r.owner, rrtype: r.rrtype, bailiwick: rrset ? r.bailiwick! : undefined, rdata: rrset ? r.texts! : r.rdata!, sighting,
    }, humantime));
  }

  advance(): void {
    this.at++;
    if (this.at >= this.rows.length) {
      this.rows.length = 0;
      this.at = 0;
      this.running?.resume();
    }
  }

}
