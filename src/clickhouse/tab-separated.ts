// Reading ClickHouse's TabSeparated output: fields split at tabs, each
// unescaped (ClickHouse writes \b \f \r \n \t \0 \' \\ for those bytes and
// leaves everything else as it is), and the arrays of numbers and of plain
// strings that queries here select.

const UNESCAPE: Record<string, string> = { b: '\b', f: '\f', r: '\r', n: '\n', t: '\t', '0': '\0' };

/** A TabSeparated field as its value. */
export function tsvField(field: string): string {
  if (field.indexOf('\\') < 0) return field;
  let out = '';
  for (let i = 0; i < field.length; i++) {
    const c = field[i]!;
    if (c !== '\\' || i + 1 === field.length) {
      out += c;
      continue;
    }
    const n = field[++i]!;
    out += UNESCAPE[n] ?? n;
  }
  return out;
}

/** An Array of unsigned integers as TabSeparated writes it: "[1,28]". */
export function tsvNumbers(field: string): number[] {
  if (field === '[]') return [];
  return field.slice(1, -1).split(',').map(Number);
}

/** An Array(String) whose elements need no escaping (hex digits, say) as TabSeparated writes it: "['0A','FF']". */
export function tsvPlainStrings(field: string): string[] {
  if (field === '[]') return [];
  return field.slice(2, -2).split("','");
}
