// From the console's form values to the API path they ask for (service-spec
// 4.1-4.4). Pure: no DOM. Paths are relative to the API root, which the page
// reaches as ../pdns/v2/ (so the console works behind a proxy's path prefix).

export interface FlexForm {
  method: string;
  what: string;
  pattern: string;
  rrtype: string;
  exclude: string;
  limit: string;
  fences: Record<string, string>;
}

export interface WatchForm {
  method: string;
  what: string;
  pattern: string;
  rrtype: string;
  exclude: string;
  limit: string;
  /** time_first_after: where a watch resumes from (the last time_first it received); empty: from now. */
  since: string;
}

export interface LookupForm {
  /** rrset/name, rdata/name, rdata/ip or rdata/raw. */
  kind: string;
  value: string;
  rrtype: string;
  bailiwick: string;
  limit: string;
}

export const TIME_FENCES = ['time_first_after', 'time_first_before', 'time_last_after', 'time_last_before'] as const;

/** A path segment or parameter value: encodeURIComponent leaves `!` as it is, spec 4.4 wants %21. */
export function encode(v: string): string {
  return encodeURIComponent(v).replace(/!/g, '%21');
}

/**
 * A time fence as the API takes it: epoch seconds or negative seconds ago as
 * typed, or a date (YYYY-MM-DD, optionally THH:MM[:SS]) read as UTC. Throws
 * a message for the analyst on anything else.
 */
export function fenceValue(name: string, text: string): string | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  if (/^-?\d+$/.test(t)) return t;
  const m = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2})?)?$/.exec(t);
  const ms = m ? Date.parse(m[1] ? `${t}Z` : `${t}T00:00:00Z`) : NaN;
  if (Number.isNaN(ms)) throw new Error(`${name}: give epoch seconds, negative seconds ago, or a UTC date YYYY-MM-DD[THH:MM]`);
  return String(Math.floor(ms / 1000));
}

function query(params: [string, string | undefined][]): string {
  const set = params.filter((p): p is [string, string] => p[1] !== undefined && p[1] !== '');
  return set.length === 0 ? '' : '?' + set.map(([k, v]) => `${k}=${encode(v)}`).join('&');
}

export function flexPath(f: FlexForm): string {
  if (f.pattern === '') throw new Error('Pattern: type a regular expression or glob');
  const type = f.rrtype.trim();
  const fences = TIME_FENCES.map((n): [string, string | undefined] => [n, fenceValue(n, f.fences[n] ?? '')]);
  return `${f.method}/${f.what}/${encode(f.pattern)}${type ? `/${encode(type)}` : ''}` +
    query([['exclude', f.exclude], ['limit', f.limit.trim()], ...fences]);
}

/** A standing watch (README "Standing watches"): a flexible search held open, pushing each new matching tuple. */
export function watchPath(f: WatchForm): string {
  if (f.pattern === '') throw new Error('Regex or glob: type the pattern to watch for');
  const type = f.rrtype.trim();
  return `watch/${f.method}/${f.what}/${encode(f.pattern)}${type ? `/${encode(type)}` : ''}` +
    query([['exclude', f.exclude], ['limit', f.limit.trim()], ['time_first_after', fenceValue('Resume from', f.since)]]);
}

export function lookupPath(f: LookupForm): string {
  const value = f.value.trim();
  if (value === '') throw new Error('Value: type a name, address or hex string to look up');
  const bailiwick = f.kind === 'rrset/name' ? f.bailiwick.trim() : '';
  // A bailiwick is the segment after the rrtype, so it needs one: ANY stands for "every type".
  const type = f.rrtype.trim() || (bailiwick ? 'ANY' : '');
  const tail = (type ? `/${encode(type)}` : '') + (bailiwick ? `/${encode(bailiwick)}` : '');
  return `lookup/${f.kind}/${encode(value)}${tail}` + query([['limit', f.limit.trim()]]);
}

/** The lookup a flexible search result leads to: its name's RRsets, or its record data (raw, so any type pivots exactly). */
export function pivotOf(obj: Record<string, unknown>): LookupForm | undefined {
  const rrtype = typeof obj['rrtype'] === 'string' ? obj['rrtype'] : '';
  if (typeof obj['rrname'] === 'string') return { kind: 'rrset/name', value: obj['rrname'], rrtype, bailiwick: '', limit: '' };
  if (typeof obj['raw_rdata'] === 'string') return { kind: 'rdata/raw', value: obj['raw_rdata'], rrtype, bailiwick: '', limit: '' };
  return undefined;
}
