// The rrscan web console: one page that runs a flexible search, a standing
// watch or a lookup against the API it is served beside, renders results as
// the NDJSON stream delivers them (a watch's as they are pushed, for as long
// as it is open), shows keep-alives and the terminator, pivots from a
// flexible or watched result to its lookup, and exports what it shows. A
// watch that ends (or is stopped) leaves its last time_first in the form,
// so that Watch again resumes where it was.
//
// The key is typed by the analyst, kept in sessionStorage (this tab only;
// never in a URL, so never in a log or history) and sent as X-API-Key.
// Data from the server only ever reaches the page as textContent.

import { flexPath, lookupPath, pivotOf, TIME_FENCES, watchPath, type LookupForm } from './request.js';
import { safBatches, type SafLine } from './stream.js';
import { cellText, COLUMNS, toCsv, toNdjson, type ResultKind } from './table.js';

const KEY_STORAGE = 'rrscan-console-key';
/** Rows the page keeps; past this the stream is stopped (the form's limit is 10,000 names, a few rows each). */
const ROWS_MAX = 50_000;

const $ = <T extends HTMLElement>(id: string): T => {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`console page has no #${id}`);
  return el as T;
};
const value = (id: string): string => $<HTMLInputElement | HTMLSelectElement>(id).value;

interface Run {
  readonly kind: ResultKind;
  readonly abort: AbortController;
  readonly started: number;
  readonly rows: Record<string, unknown>[];
  keepAlives: number;
}

let current: Run | undefined;

function say(status: string, cls = ''): void {
  $('status').textContent = status;
  $('status').className = cls;
}

function fail(message: string): void {
  $('error').textContent = message;
}

function setRunning(running: boolean): void {
  $<HTMLButtonElement>('stop').disabled = !running;
  $('results').setAttribute('aria-busy', String(running));
  const none = current === undefined || current.rows.length === 0;
  $<HTMLButtonElement>('export-ndjson').disabled = none;
  $<HTMLButtonElement>('export-csv').disabled = none;
}

const isWatch = (kind: ResultKind): boolean => kind === 'watch-rrnames' || kind === 'watch-rdata';

function showProgress(run: Run, streaming = true): void {
  const secs = ((performance.now() - run.started) / 1000).toFixed(1);
  const ka = run.keepAlives === 0 ? '' : ` · ${run.keepAlives} keep-alive${run.keepAlives === 1 ? '' : 's'}` +
    (streaming ? (isWatch(run.kind) ? ' (watching)' : ' (server still scanning)') : '');
  $('progress').textContent = `${run.rows.length} result${run.rows.length === 1 ? '' : 's'} · ${secs} s${ka}`;
}

function resetTable(kind: ResultKind): void {
  const head = document.createElement('tr');
  for (const c of COLUMNS[kind]) {
    const th = document.createElement('th');
    th.scope = 'col';
    th.textContent = c;
    head.append(th);
  }
  $('results').querySelector('thead')!.replaceChildren(head);
  $('results').querySelector('tbody')!.replaceChildren();
}

function rowOf(kind: ResultKind, obj: Record<string, unknown>): HTMLTableRowElement {
  const tr = document.createElement('tr');
  COLUMNS[kind].forEach((c, i) => {
    const td = document.createElement('td');
    const text = cellText(obj, c);
    const pivot = i === 0 && kind !== 'lookup' ? pivotOf(obj) : undefined;
    if (pivot) {
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = text;
      b.setAttribute('aria-label', `Look up ${text} ${pivot.rrtype}`.trim());
      b.addEventListener('click', () => void pivotTo(pivot));
      td.append(b);
    } else td.textContent = text;
    tr.append(td);
  });
  return tr;
}

/** Handles the lines of one chunk; returns the terminator when the chunk held it. */
function take(run: Run, lines: SafLine[]): SafLine | undefined {
  const rows = document.createDocumentFragment();
  let end: SafLine | undefined;
  for (const l of lines) {
    if (l.obj !== undefined && run.rows.length < ROWS_MAX) {
      run.rows.push(l.obj);
      rows.append(rowOf(run.kind, l.obj));
    } else if (l.cond === 'begin') {
      say(isWatch(run.kind) ? 'Watching… (new names appear as they are published; Stop ends it)' : 'Searching…');
    } else if (l.cond !== undefined) end = l;
    else if (l.obj === undefined) run.keepAlives++;
  }
  $('results').querySelector('tbody')!.append(rows);
  showProgress(run);
  return end;
}

/** After a watch: the last time_first it received goes into the form, so that Watch again resumes from there. */
function keepResumePoint(run: Run): void {
  if (!isWatch(run.kind)) return;
  const last = run.rows.at(-1)?.['time_first'];
  if (typeof last === 'number') $<HTMLInputElement>('w-since').value = String(last);
}

function sayEnd(run: Run, end: SafLine | undefined): void {
  showProgress(run, false);
  keepResumePoint(run);
  const secs = ((performance.now() - run.started) / 1000).toFixed(1);
  const n = `${run.rows.length} result${run.rows.length === 1 ? '' : 's'} in ${secs} s`;
  if (end === undefined) {
    say('Incomplete');
    fail('The stream ended without a terminator: the answer is incomplete.');
  } else if (end.cond === 'failed') {
    say(`Failed: ${end.msg ?? ''}`, 'failed');
    fail(`The search failed: ${end.msg ?? '(no message)'}`);
  } else say(`${end.cond === 'limited' ? 'Limited' : 'Succeeded'}: ${end.msg ? `${end.msg}, ` : ''}${n}`, end.cond ?? '');
}

/** Why a request was refused, from its status and the server's exact text. */
async function refusal(res: Response): Promise<string> {
  const text = (await res.text()).trim();
  // 404 and 500 pages are the front end's HTML: their status says it all.
  const said = (res.headers.get('content-type') ?? '').startsWith('text/plain') ? text : `HTTP ${res.status} ${res.statusText}`;
  const hint: Record<number, string> = {
    401: ' (the key may not use this API)', 403: ' (check the API key)', 429: ' (the key\'s quota is used up)',
  };
  return `${res.status}: ${said}${hint[res.status] ?? ''}`;
}

async function run(path: string, kind: ResultKind): Promise<void> {
  current?.abort.abort();
  const key = sessionStorage.getItem(KEY_STORAGE) ?? '';
  fail('');
  if (key === '') {
    fail('Type your API key first.');
    $('key').focus();
    return;
  }
  const me: Run = { kind, abort: new AbortController(), started: performance.now(), rows: [], keepAlives: 0 };
  current = me;
  resetTable(kind);
  $('request').textContent = `GET /pdns/v2/${path}`;
  $('progress').textContent = '';
  say('Sending…');
  setRunning(true);
  try {
    const res = await fetch(new URL(`../pdns/v2/${path}`, location.href), {
      headers: { 'X-API-Key': key, Accept: 'application/x-ndjson' }, signal: me.abort.signal, cache: 'no-store',
    });
    if (!res.ok || res.body === null) {
      say('Refused');
      fail(await refusal(res));
      return;
    }
    let end: SafLine | undefined;
    for await (const lines of safBatches(res.body)) {
      end = take(me, lines) ?? end;
      if (me.rows.length >= ROWS_MAX) {
        me.abort.abort();
        say(`Stopped at ${ROWS_MAX} rows, the most this page keeps: narrow the search.`);
        return;
      }
    }
    sayEnd(me, end);
  } catch (err) {
    if (me.abort.signal.aborted) {
      keepResumePoint(me);
      if (current === me && me.rows.length < ROWS_MAX) say(`Stopped: ${me.rows.length} results shown.`);
    } else {
      say('Error');
      fail(`The request failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  } finally {
    if (current === me) setRunning(false);
  }
}

function runForm(build: () => string, kind: () => ResultKind): void {
  let path: string;
  try {
    path = build();
  } catch (err) {
    fail((err as Error).message);
    return;
  }
  void run(path, kind());
}

function lookupForm(): LookupForm {
  return {
    kind: value('l-kind'), value: value('l-value'), rrtype: value('l-rrtype'), bailiwick: value('l-bailiwick'), limit: value('l-limit'),
  };
}

/** A flexible result's lookup: shown in the lookup form (so it can be edited and rerun), run, and focus moved to the new results. */
async function pivotTo(p: LookupForm): Promise<void> {
  $<HTMLSelectElement>('l-kind').value = p.kind;
  $<HTMLInputElement>('l-value').value = p.value;
  $<HTMLInputElement>('l-rrtype').value = p.rrtype;
  $<HTMLInputElement>('l-bailiwick').value = '';
  syncBailiwick();
  $('results-h').focus();
  runForm(() => lookupPath(lookupForm()), () => 'lookup');
}

function syncBailiwick(): void {
  $<HTMLInputElement>('l-bailiwick').disabled = value('l-kind') !== 'rrset/name';
}

function download(text: string, type: string, ext: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = `rrscan-${current?.kind ?? 'results'}-${new Date().toISOString().replace(/[:.]/g, '-')}.${ext}`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function showKeyState(): void {
  const has = (sessionStorage.getItem(KEY_STORAGE) ?? '') !== '';
  $('key-state').textContent = has ? 'Key set for this tab (sent as X-API-Key).' : 'No key yet: type it and press Enter.';
}

function wire(): void {
  $<HTMLInputElement>('key').value = sessionStorage.getItem(KEY_STORAGE) ?? '';
  showKeyState();
  $('key-form').addEventListener('submit', (e) => {
    e.preventDefault();
    sessionStorage.setItem(KEY_STORAGE, value('key').trim());
    showKeyState();
    $('f-pattern').focus();
  });
  $('forget').addEventListener('click', () => {
    sessionStorage.removeItem(KEY_STORAGE);
    $<HTMLInputElement>('key').value = '';
    showKeyState();
    $('key').focus();
  });
  $('flex-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const fences = Object.fromEntries(TIME_FENCES.map((n) => [n, value(`f-${n}`)]));
    runForm(() => flexPath({ method: value('f-method'), what: value('f-what'), pattern: value('f-pattern'), rrtype: value('f-rrtype'),
      exclude: value('f-exclude'), limit: value('f-limit'), fences }), () => value('f-what') as ResultKind);
  });
  $('watch-form').addEventListener('submit', (e) => {
    e.preventDefault();
    runForm(() => watchPath({ method: value('w-method'), what: value('w-what'), pattern: value('w-pattern'), rrtype: value('w-rrtype'),
      exclude: value('w-exclude'), limit: value('w-limit'), since: value('w-since') }), () => `watch-${value('w-what')}` as ResultKind);
  });
  $('lookup-form').addEventListener('submit', (e) => {
    e.preventDefault();
    runForm(() => lookupPath(lookupForm()), () => 'lookup');
  });
  $('l-kind').addEventListener('change', syncBailiwick);
  syncBailiwick();
  $('stop').addEventListener('click', () => current?.abort.abort());
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && current !== undefined && !$<HTMLButtonElement>('stop').disabled) current.abort.abort();
  });
  $('export-ndjson').addEventListener('click', () => download(toNdjson(current?.rows ?? []), 'application/x-ndjson', 'ndjson'));
  $('export-csv').addEventListener('click', () => current && download(toCsv(current.kind, current.rows), 'text/csv', 'csv'));
  // Keep-alives arrive only while the server is silent; the clock shows the wait in between.
  setInterval(() => {
    if (current !== undefined && !$<HTMLButtonElement>('stop').disabled) showProgress(current);
  }, 500);
}

wire();
