// The result lines of both searches, written out as JSON text directly:
// building objects and JSON.stringify cost a small lookup more than its
// search, and a flexible search renders thousands of lines per batch. One
// definition of each line, used by the scan workers and the front end alike
// (compat.md "Result objects").

import { rrtypeToText } from '../dns/rrtype.js';
import type { Sighting } from '../model/sighting.js';
import { jsonString } from './json-text.js';

/** Flexible search over rrnames (spec 2.2), with its newline. */
export function flexNameLine(nameJson: string, rrtype: number): string {
  return `{"obj":{"rrname":${nameJson},"rrtype":"${rrtypeToText(rrtype)}"}}\n`;
}

/** Flexible search over rdata (spec 2.3), with its newline; raw_rdata is upper-case hex. */
export function flexRdataLine(rdataJson: string, rrtype: number, rawHex: string): string {
  return `{"obj":{"rdata":${rdataJson},"rrtype":"${rrtypeToText(rrtype)}","raw_rdata":"${rawHex}"}}\n`;
}

/**
 * A watch's object over rrnames (README "Standing watches"): the flexible
 * result's fields and the tuple's first time, with its newline.
 */
export function watchNameLine(nameJson: string, rrtype: number, first: number): string {
  return `{"obj":{"rrname":${nameJson},"rrtype":"${rrtypeToText(rrtype)}","time_first":${first}}}\n`;
}

/** A watch's object over rdata, with its newline; raw_rdata is upper-case hex. */
export function watchRdataLine(rdataJson: string, rrtype: number, rawHex: string, first: number): string {
  return `{"obj":{"rdata":${rdataJson},"rrtype":"${rrtypeToText(rrtype)}","raw_rdata":"${rawHex}","time_first":${first}}}\n`;
}

/** A time as JSON: epoch seconds, or with humantime an RFC 3339 UTC string. */
export function timeJson(t: number, human: boolean): string {
  return human ? `"${new Date(t * 1000).toISOString().replace('.000Z', 'Z')}"` : String(t);
}

/** The time members a sighting has, each with its leading comma, in compat.md's order. */
function timeMembers(t: Sighting, human: boolean): string {
  let m = '';
  if (t.timeFirst !== 0) m += `,"time_first":${timeJson(t.timeFirst, human)}`;
  if (t.timeLast !== 0) m += `,"time_last":${timeJson(t.timeLast, human)}`;
  if (t.zoneTimeFirst !== 0) m += `,"zone_time_first":${timeJson(t.zoneTimeFirst, human)}`;
  if (t.zoneTimeLast !== 0) m += `,"zone_time_last":${timeJson(t.zoneTimeLast, human)}`;
  return m;
}

/** What a standard-search result line says. */
export interface LookupResult {
  rrname: string;
  rrtype: number;
  /** rrset lookups: the bailiwick ('' when unknown: left out) and the records; rdata lookups: undefined and one record. */
  bailiwick: string | undefined;
  rdata: readonly string[] | string;
  sighting: Sighting;
}

/** One standard-search result line, without its newline. */
export function lookupLine(r: LookupResult, humantime: boolean): string {
  const head = `{"obj":{"count":${r.sighting.count}${timeMembers(r.sighting, humantime)},"rrname":${jsonString(r.rrname)},` +
    `"rrtype":"${rrtypeToText(r.rrtype)}"`;
  if (typeof r.rdata === 'string') return `${head},"rdata":${jsonString(r.rdata)}}}`;
  let rdata = '';
  for (const text of r.rdata) rdata += (rdata === '' ? '' : ',') + jsonString(text);
  const bailiwick = r.bailiwick === undefined || r.bailiwick === '' ? '' : `,"bailiwick":${jsonString(r.bailiwick)}`;
  return `${head}${bailiwick},"rdata":[${rdata}]}}`;
}

/** The one object of a summarize answer, without its newline. */
export function summaryLine(total: Sighting, results: number, humantime: boolean): string {
  return `{"obj":{"count":${total.count},"num_results":${results}${timeMembers(total, humantime)}}}`;
}
