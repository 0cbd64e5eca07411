// The columns of each kind of result, the text of a cell, and the two
// exports. Pure: the same text is shown in the table and written to CSV.

export type ResultKind = 'rrnames' | 'rdata' | 'lookup' | 'watch-rrnames' | 'watch-rdata';

export const COLUMNS: Readonly<Record<ResultKind, readonly string[]>> = {
  rrnames: ['rrname', 'rrtype'],
  rdata: ['rdata', 'rrtype', 'raw_rdata'],
  // A watch's objects carry when the tuple was first seen: the time a client resumes from.
  'watch-rrnames': ['rrname', 'rrtype', 'time_first'],
  'watch-rdata': ['rdata', 'rrtype', 'raw_rdata', 'time_first'],
  lookup: ['rrname', 'rrtype', 'rdata', 'bailiwick', 'count', 'time_first', 'time_last'],
};

const iso = (epoch: unknown): string => (typeof epoch === 'number' ? new Date(epoch * 1000).toISOString().replace('.000Z', 'Z') : '');

/** A cell as shown: rdata sets one value a line, times in UTC; zone-file times stand in for missing sensor times. */
export function cellText(obj: Record<string, unknown>, column: string): string {
  if (column === 'time_first' || column === 'time_last') {
    if (obj[column] !== undefined) return iso(obj[column]);
    return obj[`zone_${column}`] === undefined ? '' : `${iso(obj[`zone_${column}`])} (zone)`;
  }
  const v = obj[column];
  if (v === undefined || v === null) return '';
  if (Array.isArray(v)) return v.map(String).join('\n');
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

export function toNdjson(rows: readonly Record<string, unknown>[]): string {
  return rows.map((r) => JSON.stringify(r) + '\n').join('');
}

/**
 * RFC 4180 CSV of the shown columns. DNS data is written by strangers (TXT
 * records above all), so a cell a spreadsheet would run as a formula gets a
 * leading apostrophe (OWASP's advice on CSV injection).
 */
export function toCsv(kind: ResultKind, rows: readonly Record<string, unknown>[]): string {
  const field = (s: string): string => {
    const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
    return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
  };
  const cols = COLUMNS[kind];
  return [cols.join(','), ...rows.map((r) => cols.map((c) => field(cellText(r, c))).join(','))].map((l) => l + '\r\n').join('');
}
