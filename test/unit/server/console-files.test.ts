// What the console serves is decided once, at load: the servable files of
// its directories and nothing else, within the limits, or a refusal that
// says why (src/server/console-files.ts).

import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../../src/config/limits.js';
import { ConsoleFiles, etagMatches } from '../../../src/server/console-files.js';
import { tempPaths } from '../../helpers/rrscan.js';

const paths = tempPaths();
afterAll(() => paths.removeAll());

function dirWith(files: Record<string, string | Buffer>): string {
  const dir = paths.fresh();
  for (const [name, body] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), body);
  }
  return dir;
}

describe('ConsoleFiles.load', () => {
  it('serves the .html, .css and .js files at the top of each directory, and / as index.html', () => {
    const pages = dirWith({ 'index.html': '<p>', 'a.css': 'p{}', 'tsconfig.json': '{}', 'notes.md': '#', 'src/x.js': '1' });
    const code = dirWith({ 'main.js': 'go()', 'main.js.map': '{}' });
    const files = ConsoleFiles.load([pages, code, path.join(pages, 'missing')]);
    expect(files.get('/console/')).toBe(files.get('/console/index.html'));
    expect(files.get('/console/a.css')?.contentType).toBe('text/css; charset=utf-8');
    expect(files.get('/console/main.js')?.body.toString()).toBe('go()');
    for (const p of ['/console/tsconfig.json', '/console/notes.md', '/console/src/x.js', '/console/x.js', '/console/main.js.map',
      '/console', 'console/main.js', '/console/../main.js']) {
      expect(files.get(p), p).toBeUndefined();
    }
  });

  it('refuses a console without its page, or with files over the limits', () => {
    expect(() => ConsoleFiles.load([dirWith({ 'main.js': '' })])).toThrow(/^console page not found: no index\.html in /);
    const big = Buffer.alloc(LIMITS.consoleFileBytesMax + 1, 32);
    expect(() => ConsoleFiles.load([dirWith({ 'index.html': big })])).toThrow(/^console files exceed the limits/);
  });
});

describe('etagMatches', () => {
  it('matches the tag, its weak form, a list holding it, and *; nothing else', () => {
    expect(etagMatches('"a"', '"a"')).toBe(true);
    expect(etagMatches('W/"a"', '"a"')).toBe(true);
    expect(etagMatches('"b", "a"', '"a"')).toBe(true);
    expect(etagMatches('*', '"a"')).toBe(true);
    expect(etagMatches('', '"a"')).toBe(false);
    expect(etagMatches('"ab"', '"a"')).toBe(false);
    expect(etagMatches('a', '"a"')).toBe(false);
  });
});
