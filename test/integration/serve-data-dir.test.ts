// What a new user meets first: `rrscan serve --data` on a path that is not
// there (a typo must not look like an empty dataset), on a directory with
// no shards (loud warning), and `npm start` on a fresh checkout.

import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addKey, begin, body, cli, get, none, REPO, startServer, tempPaths } from '../helpers/rrscan.js';

const temp = tempPaths();
afterAll(() => temp.removeAll());

describe('serve --data', () => {
  // With --processes 2 the supervisor refuses it once, before starting any member.
  it.each([[[]], [['--processes', '2']]])('refuses a directory that does not exist, in one line with exit status 2, ' +
    'and does not create it (%j)', (extra: string[]) => {
    const dir = path.join(temp.fresh(), 'no-such-dir');
    const r = cli(['serve', '--data', dir, '--port', '0', ...extra]);
    expect(r).toEqual({
      code: 2, stdout: '',
      stderr: `rrscan serve: ${dir}: no such data directory (check the path; \`rrscan ingest --data DIR FILE\` ` +
        'or `rrscan demo --data DIR` creates one)\n',
    });
    expect(existsSync(dir)).toBe(false);
  });

  it('refuses a path that is a file', () => {
    const file = path.join(temp.fresh(), 'manifest.json');
    writeFileSync(file, '{}\n');
    const r = cli(['serve', '--data', file, '--port', '0']);
    expect(r).toEqual({
      code: 2, stdout: '',
      stderr: `rrscan serve: ${file}: not a directory (--data names the directory that holds manifest.json and the shards)\n`,
    });
  });

  it('serves an empty directory but warns on stderr, in words and in the log at warn', async () => {
    const dir = temp.fresh();
    const server = await startServer(dir);
    try {
      const key = addKey(dir);
      const r = await get(server, '/pdns/v2/regex/rrnames/example', { 'X-API-Key': key });
      expect(r.status).toBe(200);
      expect(r.body).toBe(body(begin, none));
    } finally {
      await server.close();
    }
    const err = server.stderr();
    expect(err).toContain(`rrscan serve: WARNING: ${dir} holds no shards; every search will find nothing until data is ingested ` +
      `(rrscan ingest --data ${dir} FILE...)\n`);
    const warnings = err.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l['level'] === 40);
    expect(warnings.map((w) => [w['msg'], w['dataDir']])).toContainEqual(
      ['the data directory holds no shards: every search finds nothing until data is ingested', dir]);
  });
});

describe('npm start on a fresh checkout', () => {
  it('creates the demo data directory, a key, and answers a search with it', async () => {
    // RRSCAN_DATA names a directory that does not exist yet, as ./data does after `git clone`.
    const data = path.join(temp.fresh(), 'data');
    const proc = spawn('npm', ['start'], {
      cwd: REPO, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, RRSCAN_DATA: data, PORT: '0', RRSCAN_LOG_LEVEL: 'warn' },
    });
    let out = '';
    let err = '';
    proc.stderr.on('data', (d: Buffer) => { err += d.toString(); });
    try {
      const banner = await new Promise<RegExpExecArray>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`npm start did not serve: ${out}\n${err}`)), 90_000);
        proc.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /base URL: http:\/\/127\.0\.0\.1:(\d+)\/pdns\/v2\/\n\s+demo key: (\S+)/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m);
          }
        });
        proc.on('exit', (code) => reject(new Error(`npm start exited with ${code}: ${out}\n${err}`)));
      });
      const server = { port: Number(banner[1]) };
      expect(out).toContain(`rrscan: no shards in ${data}; generating the demo dataset (1000000 RRsets) once`);
      const r = await get(server, '/pdns/v2/regex/rrnames/paypal?limit=1', { 'X-API-Key': banner[2]! });
      expect(r.status).toBe(200);
      expect(r.body).toMatch(/^\{"cond":"begin"\}\n(\{"obj":\{"rrname":"[^"]*paypal[^"]*","rrtype":"[A-Z0-9]+"\}\}\n)+\{"cond":"limited"/);
      expect(err).not.toContain('WARNING');
      // Every example the README opens with answers something on the demo data: a newcomer's first searches.
      const examples = [...readFileSync(path.join(REPO, 'README.md'), 'utf8').matchAll(/curl -s(?:H "X-API-Key: \$KEY")? '[^']*:8080(\/pdns\/v2\/[^']+)'/g)]
        .map((m) => m[1]!);
      expect(examples.length).toBeGreaterThanOrEqual(5);
      for (const p of examples) {
        const answer = await get(server, p, { 'X-API-Key': banner[2]! });
        expect(answer.status, p).toBe(200);
        expect(answer.body.includes('"obj"') || answer.body === '{"ping":"ok"}\n', `${p}: ${answer.body.slice(0, 200)}`).toBe(true);
      }
    } finally {
      // npm runs the server in a child; the process group we started goes together, and is gone
      // before the directory is removed (a server still verifying writes its record there).
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        process.kill(-proc.pid!, 'SIGTERM');
        await exited;
        for (let i = 0; i < 100; i++) {
          try {
            process.kill(-proc.pid!, 0);
          } catch {
            break;
          }
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    }
  }, 120_000);
});
