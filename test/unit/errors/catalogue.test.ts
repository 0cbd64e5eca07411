import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  API_ERRORS, ApiError, CodedError, DnsFormatError, IngestError, asDiskFull, hasCode, isApiError,
} from '../../../src/errors/catalogue.js';
import { REPO } from '../../helpers/rrscan.js';

const SPEC = path.resolve(REPO, '../shared/spec/service-spec.md');

describe.skipIf(!existsSync(SPEC))('error catalogue against service-spec.md section 7', () => {
  const spec = existsSync(SPEC) ? readFileSync(SPEC, 'utf8') : '';

  it('has exactly the spec\'s 400 messages, with the Error: prefix and text/plain', () => {
    const section = spec.slice(spec.indexOf('400 messages'), spec.indexOf('Error bodies of standard search'));
    const specTexts = [...section.matchAll(/^- (.+?)(?: \(.*\))?$/gm)].map((m) => `Error: ${m[1]!.trim()}`);
    expect(specTexts.length).toBe(10);
    const ours = Object.values(API_ERRORS).filter((e) => e.status === 400);
    expect(ours.map((e) => e.text).sort()).toEqual(specTexts.sort());
    for (const e of ours) expect(e.contentType).toBe('text/plain');
  });

  it('uses the exact texts the spec and compat.md name', () => {
    expect(API_ERRORS.QUOTA_EXPIRED).toEqual({ status: 401, text: 'Error: Quota is expired', contentType: 'text/plain' });
    expect(API_ERRORS.RATE_LIMITED).toEqual({ status: 429, text: 'Error: Rate limit exceeded', contentType: 'text/plain' });
    expect(API_ERRORS.BAD_API_KEY).toEqual({ status: 403, text: 'Error: Bad API key', contentType: 'text/plain' });
    expect(spec).toContain('`Error: Quota is expired`');
    expect(spec).toContain('`Error: Rate limit exceeded`');
  });

  it('gives 500 and front-end 404 as text/html, every other status as text/plain (spec 4.5)', () => {
    for (const [code, e] of Object.entries(API_ERRORS)) {
      const html = e.status === 500 || e.status === 404;
      expect(e.contentType, code).toBe(html ? 'text/html' : 'text/plain');
    }
  });
});

describe('ApiError', () => {
  it('carries code, status and the catalogue body, and survives structured cloning by code', () => {
    const e = new ApiError('BAD_RRTYPE', 'TYPE99999');
    expect(e.status).toBe(400);
    expect(e.body).toBe('Error: RRTYPE has an unsupported value');
    const copy = structuredClone({ code: e.code, message: e.message });
    expect(isApiError(copy)).toBe(true);
    expect(isApiError({ code: 'NOPE' })).toBe(false);
  });
});

describe('hasCode', () => {
  it('matches our errors, their plain copies from other threads, and the errors of Node and SQLite, by code only', () => {
    const dns = new DnsFormatError('bad name');
    expect(dns).toBeInstanceOf(CodedError);
    expect(hasCode(dns, 'DNS_FORMAT')).toBe(true);
    expect(hasCode(dns, 'BAD_PATTERN', 'DNS_FORMAT')).toBe(true);
    expect(hasCode(dns, 'BAD_PATTERN')).toBe(false);
    // A worker's error reaches the caller as fields, without its class.
    const copy = structuredClone({ code: 'INGEST_BAD_INPUT', message: 'f: line 1: no', where: 'line 1' });
    expect(copy).not.toBeInstanceOf(IngestError);
    expect(hasCode(copy, 'INGEST_BAD_INPUT')).toBe(true);
    expect(hasCode(Object.assign(new Error('gone'), { code: 'ENOENT' }), 'ENOENT', 'ENOTDIR')).toBe(true);
    for (const notCoded of [undefined, null, 'DNS_FORMAT', 42, {}, { code: 7 }]) expect(hasCode(notCoded, 'DNS_FORMAT')).toBe(false);
  });

  it('takes only codes that exist: a misspelt one does not compile', () => {
    // @ts-expect-error: 'DNS_FROMAT' is no error's code (tsc -p tsconfig.test.json, part of `npm run lint`, checks this line)
    expect(hasCode(new DnsFormatError('x'), 'DNS_FROMAT')).toBe(false);
  });

  it('asDiskFull maps ENOSPC and EDQUOT through it, and leaves anything else as it is', () => {
    const enospc = Object.assign(new Error('write'), { code: 'ENOSPC' });
    expect(asDiskFull(enospc, '/data', 'manifest.json')).toMatchObject({ code: 'DISK_FULL', message: '/data: no space left on device (writing manifest.json)' });
    const other = Object.assign(new Error('nope'), { code: 'EACCES' });
    expect(asDiskFull(other, '/data', 'manifest.json')).toBe(other);
  });
});
