// The web console's static files (issue 16), served under /console/ by the
// same uWS app as the API.
//
// Every file is read once, at start-up, into memory: the HTML and CSS from
// console/ and the compiled browser code from dist/console/ (`npm run
// build`). A request is answered from a Map keyed by the raw request path,
// so nothing a client sends ever reaches the file system: `..`, percent
// escapes, doubled slashes and symlinks all name no entry and get the front
// end's 404. Nothing is read per request, so a console request holds the
// front-end thread for a Map lookup and one corked write.
//
// Caching: the file names carry no content hash, so every answer says
// `no-cache` (revalidate each time) with a strong ETag of the content; a
// browser that has the file gets 304 and no body. A new build is therefore
// seen on the next load, without stale code mixed with a new page.

import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { LIMITS } from '../config/limits.js';
import { DIST_ROOT, PACKAGE_ROOT } from '../config/paths.js';
import { API_ERRORS } from '../errors/catalogue.js';
import type { HttpRequest, HttpResponse } from '../lib/uws.js';

export const CONSOLE_PATH = '/console';

/** Content types by file name extension; files of other kinds (source maps, the tsconfig) are not served. */
const CONTENT_TYPES: Readonly<Record<string, string>> = Object.freeze({
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
});

/**
 * Headers of every console file. The page runs only its own script and
 * style and talks only to its own origin (the API), so the policy allows
 * exactly that: no inline script, no third-party anything, no framing.
 */
export const CONSOLE_HEADERS: ReadonlyArray<readonly [string, string]> = Object.freeze([
  ['Cache-Control', 'no-cache'],
  ['X-Content-Type-Options', 'nosniff'],
  ['Referrer-Policy', 'no-referrer'],
  ['Content-Security-Policy', "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"],
] as const);

export interface ConsoleFile {
  readonly body: Buffer;
  readonly contentType: string;
  /** Strong validator: a hash of the body, quoted as HTTP wants it. */
  readonly etag: string;
}

/** The directories whose files make up the console, in the package root. */
export function consoleDirs(): string[] {
  return [path.join(PACKAGE_ROOT, 'console'), path.join(DIST_ROOT, 'console')];
}

export class ConsoleFiles {
  private constructor(private readonly files: ReadonlyMap<string, ConsoleFile>) {}

  /**
   * Reads the servable files of `dirs` (not their subdirectories). Throws when
   * a file or the whole set is larger than the limits, or when the page
   * itself (index.html) is missing: a console without it serves nothing.
   */
  static load(dirs: readonly string[] = consoleDirs()): ConsoleFiles {
    const files = new Map<string, ConsoleFile>();
    let total = 0;
    for (const dir of dirs) {
      if (!existsSync(dir)) continue;
      for (const name of readdirSync(dir).sort()) {
        const contentType = CONTENT_TYPES[path.extname(name)];
        const file = path.join(dir, name);
        if (contentType === undefined || !statSync(file).isFile()) continue;
        const body = readFileSync(file);
        total += body.length;
        if (body.length > LIMITS.consoleFileBytesMax || total > LIMITS.consoleBytesMax || files.size >= LIMITS.consoleFilesMax) {
          throw new Error(`console files exceed the limits (${file}: ${body.length} bytes, ${total} in all, ${files.size + 1} files)`);
        }
        const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
        files.set(`${CONSOLE_PATH}/${name}`, { body, contentType, etag });
      }
    }
    const index = files.get(`${CONSOLE_PATH}/index.html`);
    if (index === undefined) throw new Error(`console page not found: no index.html in ${dirs.join(' or ')}`);
    files.set(`${CONSOLE_PATH}/`, index);
    return new ConsoleFiles(files);
  }

  /** The file a raw request path names, exactly as sent; undefined for every other path. */
  get(rawPath: string): ConsoleFile | undefined {
    return this.files.get(rawPath);
  }
}

/** True when an If-None-Match header value names this ETag (a list, or `*`). */
export function etagMatches(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch === '') return false;
  return ifNoneMatch.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag === etag || tag === `W/${etag}`;
  });
}

/** How an answer goes out: without its body for HEAD, and with `Connection: close` for an HTTP/1.0 request (http10.ts). */
export interface AnswerShape {
  readonly head: boolean;
  readonly http10: boolean;
}

/** Ends a corked answer whose status and headers are written: with `body`, or for HEAD with its length and no body. */
function endWith(res: HttpResponse, shape: AnswerShape, body: string | Buffer): void {
  if (shape.http10) res.writeHeader('Connection', 'close');
  if (!shape.head) {
    res.end(body);
    return;
  }
  // uWS 20.30's endWithoutBody(length) writes the header but then waits for that many body bytes: the header is written here.
  res.writeHeader('Content-Length', String(Buffer.byteLength(body)));
  res.endWithoutBody();
}

/**
 * Answers one GET or HEAD under /console/ synchronously (nothing is awaited,
 * so uWS needs no onAborted): the file, 304 when the browser's copy is
 * current, or the front end's 404. `files` is undefined when the console
 * was not built.
 */
export function serveConsoleFile(files: ConsoleFiles | undefined, res: HttpResponse, req: HttpRequest, shape: AnswerShape): void {
  const file = files?.get(req.getUrl());
  const ifNoneMatch = req.getHeader('if-none-match');
  res.cork(() => {
    if (file === undefined) {
      res.writeStatus('404 Not Found').writeHeader('Content-Type', `${API_ERRORS.NOT_FOUND.contentType}; charset=utf-8`);
      endWith(res, shape, API_ERRORS.NOT_FOUND.text);
      return;
    }
    const fresh = etagMatches(ifNoneMatch, file.etag);
    res.writeStatus(fresh ? '304 Not Modified' : '200 OK');
    if (!fresh) res.writeHeader('Content-Type', file.contentType);
    res.writeHeader('ETag', file.etag);
    for (const [k, v] of CONSOLE_HEADERS) res.writeHeader(k, v);
    if (!fresh) return endWith(res, shape, file.body);
    if (shape.http10) res.writeHeader('Connection', 'close');
    res.endWithoutBody();
  });
}

/** `/console` has no trailing slash: send the browser to the page, whose relative links need the slash. */
export function redirectToConsole(res: HttpResponse, shape: AnswerShape): void {
  res.cork(() => {
    res.writeStatus('301 Moved Permanently').writeHeader('Location', `${CONSOLE_PATH}/`)
      .writeHeader('Content-Type', 'text/plain; charset=utf-8');
    endWith(res, shape, `${CONSOLE_PATH}/\n`);
  });
}
