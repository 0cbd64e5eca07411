// Character tests shared by the two readers of RE2 syntax: the binding's
// translation (binding-translation.ts) and the parser (regex-syntax.ts).

export const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
export const isHex = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

/** Code point at `i` and its UTF-16 width. */
export function codePointAt(s: string, i: number): [number, number] {
  const c = s.codePointAt(i)!;
  return [c, c > 0xffff ? 2 : 1];
}
