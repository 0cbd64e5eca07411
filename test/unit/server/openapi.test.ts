// The OpenAPI document: valid OpenAPI 3.1 (checked against the official
// schema by @seriousme/openapi-schema-validator), identical to the committed
// api/openapi.json, and complete: every error text the server can send,
// every stream message, every route. RRSCAN_UPDATE_OPENAPI=1 (npm run
// openapi) rewrites api/openapi.json instead of comparing.

import { Validator } from '@seriousme/openapi-schema-validator';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_ERRORS, STREAM_MESSAGES, type ApiErrorCode } from '../../../src/errors/catalogue.js';
import { ERRORS_NOT_SENT, openApiDocument, openApiText } from '../../../src/server/openapi.js';
import { route } from '../../../src/server/router.js';
import { REPO } from '../../helpers/rrscan.js';

const COMMITTED = path.join(REPO, 'api', 'openapi.json');

interface Doc {
  servers: { url: string }[];
  paths: Record<string, { get: { parameters?: ({ $ref: string })[] } }>;
}

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const v = new Validator();
    const r = await v.validate(JSON.parse(openApiText()) as Record<string, unknown>);
    expect(r.errors).toBeUndefined();
    expect(r.valid).toBe(true);
    expect(v.version).toBe('3.1');
  });

  it('is what api/openapi.json holds (RRSCAN_UPDATE_OPENAPI=1 rewrites it)', () => {
    if (process.env['RRSCAN_UPDATE_OPENAPI'] === '1') writeFileSync(COMMITTED, openApiText());
    expect(readFileSync(COMMITTED, 'utf8'), 'api/openapi.json is stale: run `npm run openapi`').toBe(openApiText());
  });

  it('carries the exact text of every error the server sends, and of every stream message', () => {
    const doc = openApiText();
    for (const [code, e] of Object.entries(API_ERRORS) as [ApiErrorCode, (typeof API_ERRORS)[ApiErrorCode]][]) {
      const body = JSON.stringify(e.contentType === 'text/plain' ? `${e.text}\n` : e.text);
      if (ERRORS_NOT_SENT.includes(code)) expect(doc, code).not.toContain(body);
      else expect(doc, code).toContain(body);
    }
    for (const msg of Object.values(STREAM_MESSAGES)) expect(doc).toContain(msg);
  });

  it('leaves out only errors that nothing in src/ sends', () => {
    const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true })
      .flatMap((d) => (d.isDirectory() ? files(path.join(dir, d.name)) : d.name.endsWith('.ts') ? [path.join(dir, d.name)] : []));
    const users = files(path.join(REPO, 'src'))
      .filter((f) => !f.endsWith(path.join('errors', 'catalogue.ts')) && !f.endsWith(path.join('server', 'openapi.ts')))
      .filter((f) => ERRORS_NOT_SENT.some((c) => readFileSync(f, 'utf8').includes(`'${c}'`)));
    expect(users).toEqual([]);
  });

  it('documents paths that the router routes, under every base path it serves', () => {
    const doc = openApiDocument() as unknown as Doc;
    expect(doc.servers.map((s) => s.url)).toEqual(['/pdns/v2', '/dnsdb/v2', '/pdns/v2/dnsdb/v2']);
    const sample: Record<string, string> = {
      what_to_search: 'rrnames', value: 'x', rrtype: 'A', how: 'name', bailiwick: 'example.', endpoint: 'nope',
    };
    for (const server of doc.servers) {
      for (const p of Object.keys(doc.paths)) {
        const concrete = server.url + p.replace(/\{(\w+)\}/g, (_, n: string) => sample[n]!);
        expect(route(concrete).kind, concrete).toBe(p === '/{endpoint}' ? 'not_found' : expectedKind(p));
      }
    }
  });

  it('refers only to parameters it defines', () => {
    const doc = openApiDocument() as unknown as Doc & { components: { parameters: Record<string, unknown> } };
    for (const [p, item] of Object.entries(doc.paths)) {
      for (const r of item.get.parameters ?? []) expect(doc.components.parameters, p).toHaveProperty(r.$ref.split('/').pop()!);
    }
  });
});

function expectedKind(p: string): string {
  const first = p.split('/')[1]!;
  if (first === 'regex' || first === 'glob') return 'flex';
  if (first === 'openapi.json') return 'openapi';
  return first;
}
