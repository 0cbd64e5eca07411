// Checks real responses against the OpenAPI document the server serves: the
// request path must match a documented path under one of its servers, the
// status must be one the operation lists, the content type one that status
// lists, required headers present, and the body must validate against the
// schema given, each NDJSON line on its own (in the order the stream
// framing requires). Anything the document does not describe is a failure.
//
// The JSON Schema validator is ajv's draft 2020-12 build (the dialect of
// OpenAPI 3.1 schemas), resolved from @seriousme/openapi-schema-validator,
// which depends on it: the top-level `ajv` in node_modules is eslint's 6.x,
// which has no 2020-12 support. ajv-formats adds `date-time`.

import { createRequire } from 'node:module';
import path from 'node:path';
import { lines, REPO, type Reply } from './rrscan.js';

type Json = Record<string, unknown>;
type Validate = ((data: unknown) => boolean) & { errors?: unknown[] | null };
interface Ajv {
  addSchema(schema: object, key: string): Ajv;
  getSchema(ref: string): Validate | undefined;
  compile(schema: object): Validate;
  errorsText(errors?: unknown[] | null): string;
}

const fromValidator = createRequire(path.join(REPO, 'node_modules/@seriousme/openapi-schema-validator/index.js'));
const Ajv2020 = (fromValidator('ajv/dist/2020.js') as { default: new (opts: object) => Ajv }).default;
const addFormats = (createRequire(path.join(REPO, 'node_modules/ajv-formats/dist/index.js'))('ajv-formats') as
  { default: (ajv: Ajv) => void }).default;

const DOC_ID = 'rrscan-openapi.json';
const TERMINATORS = ['Succeeded', 'Limited', 'Failed'];

export interface Checked {
  /** The documented path template and status that described the response. */
  path: string;
  status: string;
}

export class OpenApiConformance {
  private readonly ajv: Ajv;
  private readonly doc: { servers: { url: string }[]; paths: Record<string, Record<string, Json>>; components: Json };
  private readonly servers: string[];
  private readonly inline = new Map<Json, Validate>();

  constructor(doc: object) {
    this.doc = doc as OpenApiConformance['doc'];
    // strict: false: the document is an OpenAPI document, not a bare schema (openapi, paths... are not keywords).
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(this.ajv);
    this.ajv.addSchema(doc, DOC_ID);
    // Longest first, so /pdns/v2/dnsdb/v2/... is not read as /pdns/v2 + /dnsdb/v2/...
    this.servers = this.doc.servers.map((s) => s.url).sort((a, b) => b.length - a.length);
  }

  /** The documented path template for a request path (concrete segments win over templated ones), or throws. */
  pathOf(requestPath: string): string {
    const raw = requestPath.split('?')[0]!;
    const server = this.servers.find((s) => raw.startsWith(`${s}/`));
    if (server === undefined) throw new Error(`${requestPath}: under none of the document's servers`);
    const segs = raw.slice(server.length).split('/').slice(1);
    let best: { path: string; literal: number } | undefined;
    for (const p of Object.keys(this.doc.paths)) {
      const t = p.split('/').slice(1);
      if (t.length !== segs.length) continue;
      let literal = 0;
      const fits = t.every((part, i) => {
        if (/^\{\w+\}$/.test(part)) return segs[i] !== '';
        literal++;
        return part === segs[i];
      });
      if (fits && (best === undefined || literal > best.literal)) best = { path: p, literal };
    }
    if (best === undefined) throw new Error(`${requestPath}: no documented path matches`);
    return best.path;
  }

  /**
   * Throws unless every path segment and query parameter of GET `requestPath`
   * is a parameter its operation documents, with a value its schema allows:
   * for requests the server accepted, so that the documented parameters are
   * neither missing nor stricter than the server.
   */
  checkRequest(requestPath: string): void {
    const p = this.pathOf(requestPath);
    const op = this.doc.paths[p]!['get'] as { parameters?: Json[] };
    const documented = (op.parameters ?? []).map((x) => this.resolve(x) as { name: string; in: string; schema: Json });
    const [rawPath, rawQuery = ''] = requestPath.split(/\?(.*)/s);
    const server = this.servers.find((s) => rawPath!.startsWith(`${s}/`))!;
    const segs = rawPath!.slice(server.length).split('/').slice(1);
    p.split('/').slice(1).forEach((t, i) => {
      const name = /^\{(\w+)\}$/.exec(t)?.[1];
      if (name === undefined) return;
      const param = documented.find((d) => d.in === 'path' && d.name === name);
      if (param === undefined) throw new Error(`${requestPath}: path parameter {${name}} is not defined`);
      this.validate(`${requestPath}: path parameter ${name}`, param.schema, decodeURIComponent(segs[i]!));
    });
    for (const pair of rawQuery.split('&').filter((x) => x !== '')) {
      const eq = pair.indexOf('=');
      const name = decodeURIComponent(eq < 0 ? pair : pair.slice(0, eq));
      const param = documented.find((d) => d.in === 'query' && d.name === name);
      if (param === undefined) throw new Error(`${requestPath}: query parameter ${name} is not documented for ${p}`);
      this.validate(`${requestPath}: query parameter ${name}`, param.schema, decodeURIComponent(eq < 0 ? '' : pair.slice(eq + 1)));
    }
  }

  /** Throws, saying what differs, unless the document describes this response to GET `requestPath`. */
  check(requestPath: string, reply: Reply): Checked {
    const p = this.pathOf(requestPath);
    const op = this.doc.paths[p]!['get'] as { responses: Record<string, Json> } | undefined;
    if (op === undefined) throw new Error(`${p}: no GET operation`);
    const status = String(reply.status);
    const documented = op.responses[status] ?? op.responses['default'];
    if (documented === undefined) {
      throw new Error(`GET ${requestPath} (${p}): status ${status} is not documented; body ${JSON.stringify(reply.body.slice(0, 200))}`);
    }
    const response = this.resolve(documented) as { headers?: Record<string, Json>; content?: Record<string, { schema?: Json }> };
    const where = `GET ${requestPath} (${p} ${status})`;
    for (const [name, h] of Object.entries(response.headers ?? {})) {
      if ((this.resolve(h) as { required?: boolean }).required && reply.headers[name.toLowerCase()] === undefined) {
        throw new Error(`${where}: required header ${name} missing`);
      }
    }
    const type = String(reply.headers['content-type'] ?? '').split(';')[0]!.trim();
    const media = response.content?.[type];
    if (media === undefined) {
      throw new Error(`${where}: content type ${type} is not documented (${Object.keys(response.content ?? {}).join(', ')})`);
    }
    if (media.schema !== undefined) this.checkBody(where, type, media.schema, reply.body);
    return { path: p, status };
  }

  private checkBody(where: string, type: string, schema: Json, body: string): void {
    if (type === 'application/x-ndjson') {
      const ls = lines(body);
      if (ls.length < 2) throw new Error(`${where}: a stream has a begin and a terminator line at least; got ${body}`);
      ls.forEach((l, i) => {
        this.validate(`${where} line ${i + 1}`, schema, l);
        const expected = i === 0 ? ['Begin'] : i === ls.length - 1 ? TERMINATORS : undefined;
        if (expected && !expected.some((name) => this.matches(this.ref('schemas', name), l))) {
          throw new Error(`${where} line ${i + 1}: expected ${expected.join(' or ')}, got ${JSON.stringify(l)}`);
        }
        if (i > 0 && i < ls.length - 1 && ['Begin', ...TERMINATORS].some((name) => this.matches(this.ref('schemas', name), l))) {
          throw new Error(`${where} line ${i + 1}: framing line in the middle of the stream: ${JSON.stringify(l)}`);
        }
      });
    } else if (type === 'application/json') {
      if (!body.endsWith('\n')) throw new Error(`${where}: JSON body without its newline`);
      this.validate(where, schema, JSON.parse(body) as unknown);
    } else {
      this.validate(where, schema, body);
    }
  }

  private ref(kind: string, name: string): Json {
    return { $ref: `#/components/${kind}/${name}` };
  }

  private compile(schema: Json): Validate {
    // A $ref into the document is compiled in the document's scope, so its own #/components/... references resolve.
    const ref = schema['$ref'];
    if (typeof ref === 'string' && Object.keys(schema).length === 1) {
      const v = this.ajv.getSchema(`${DOC_ID}${ref}`);
      if (v === undefined) throw new Error(`cannot resolve ${ref}`);
      return v;
    }
    // Inline schemas (the error bodies' enums) hold no references.
    let v = this.inline.get(schema);
    if (v === undefined) {
      v = this.ajv.compile(schema);
      this.inline.set(schema, v);
    }
    return v;
  }

  private matches(schema: Json, value: unknown): boolean {
    return this.compile(schema)(value);
  }

  private validate(where: string, schema: Json, value: unknown): void {
    const v = this.compile(schema);
    if (!v(value)) throw new Error(`${where}: ${JSON.stringify(value).slice(0, 300)} does not conform: ${this.ajv.errorsText(v.errors)}`);
  }

  private resolve(x: Json): Json {
    const ref = x['$ref'];
    if (typeof ref !== 'string') return x;
    let node: unknown = this.doc;
    for (const part of ref.replace(/^#\//, '').split('/')) node = (node as Json)[part];
    if (node === undefined) throw new Error(`cannot resolve ${ref}`);
    return this.resolve(node as Json);
  }
}
