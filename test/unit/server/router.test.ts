import { describe, expect, it } from 'vitest';
import { acceptsNdjson, route } from '../../../src/server/router.js';

describe('route', () => {
  it('serves /pdns/v2, /dnsdb/v2 and /pdns/v2/dnsdb/v2', () => {
    for (const p of ['/pdns/v2', '/dnsdb/v2', '/pdns/v2/dnsdb/v2']) {
      expect(route(`${p}/ping`)).toEqual({ kind: 'ping' });
      expect(route(`${p}/rate_limit`)).toEqual({ kind: 'rate_limit' });
      expect(route(`${p}/openapi.json`)).toEqual({ kind: 'openapi' });
      expect(route(`${p}/regex/rrnames/a%2Fb`)).toEqual({ kind: 'flex', segments: ['regex', 'rrnames', 'a/b'] });
    }
  });
  it('splits before decoding, decodes once', () => {
    expect(route('/pdns/v2/glob/rdata/%252A%2Fx/NS')).toEqual({ kind: 'flex', segments: ['glob', 'rdata', '%2A/x', 'NS'] });
    expect(route('/dnsdb/v2/lookup/rrset/name/%2A.example.com/A/')).toEqual(
      { kind: 'lookup', segments: ['lookup', 'rrset', 'name', '*.example.com', 'A'] });
  });
  it('gives the front end\'s 404 to everything else', () => {
    for (const p of ['/', '/pdns', '/pdns/v2', '/pdns/v2/', '/pdns/v1/ping', '/pdns/v2/bogus/x', '/x/pdns/v2/ping', '/pdns/v2/ping/x',
      '/pdns/v2/openapi.json/x']) {
      expect(route(p), p).toEqual({ kind: 'not_found' });
    }
  });
  it('refuses a mangled escape', () => {
    expect(() => route('/pdns/v2/regex/rrnames/%zz')).toThrow(expect.objectContaining({ code: 'EXCEPTION' }));
  });
});

describe('acceptsNdjson (spec 4.5)', () => {
  it('takes NDJSON, */* and no header; the first supported listed type wins; q is ignored', () => {
    expect(acceptsNdjson('')).toBe(true);
    expect(acceptsNdjson('application/x-ndjson')).toBe(true);
    expect(acceptsNdjson('*/*')).toBe(true);
    expect(acceptsNdjson('text/html, application/x-ndjson;q=0.1')).toBe(true);
    expect(acceptsNdjson('text/html')).toBe(false);
    expect(acceptsNdjson('text/csv, image/png')).toBe(false);
  });
});
