// deploy/: the container image and the systemd unit.
//
// - The image's runtime stage copies a list of paths from the build stage.
//   Without a container engine, the test assembles exactly those paths into
//   a scratch directory and runs the image's command, `rrscan serve`, and its
//   HEALTHCHECK from there: a path the list forgets fails here.
// - Where `docker info` succeeds, the image is built and run for real
//   (non-root, refuses a missing data directory, npm start's demo answers,
//   healthy); otherwise that part skips, saying why.
// - The unit passes `systemd-analyze verify` without a warning, and its
//   ExecStart line, pointed at this checkout, serves.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/config/limits.js';
import { cli, get, REPO, tempPaths } from '../helpers/rrscan.js';

const DOCKERFILE = readFileSync(path.join(REPO, 'deploy', 'Dockerfile'), 'utf8');
const UNIT = readFileSync(path.join(REPO, 'deploy', 'rrscan.service'), 'utf8');
const OPENAPI = readFileSync(path.join(REPO, 'api', 'openapi.json'), 'utf8');
const temp = tempPaths();
const running = new Set<ChildProcess>();
afterAll(() => {
  for (const p of running) if (p.exitCode === null) p.kill('SIGKILL');
  temp.removeAll();
});

/** Dockerfile instructions of the stage named `stage`, continuation lines joined. */
function stageOf(stage: string): string[] {
  const instructions = DOCKERFILE.replace(/\\\n\s*/g, ' ').split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'));
  const start = instructions.findIndex((l) => new RegExp(`^FROM \\S+ AS ${stage}$`).test(l));
  expect(start, `stage ${stage}`).toBeGreaterThanOrEqual(0);
  const next = instructions.findIndex((l, i) => i > start && l.startsWith('FROM '));
  return instructions.slice(start + 1, next < 0 ? undefined : next);
}

/** The runtime stage's ENV as a map. */
function runtimeEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const l of stageOf('runtime').filter((i) => i.startsWith('ENV '))) {
    for (const m of l.slice(4).matchAll(/(\w+)=(\S+)/g)) env[m[1]!] = m[2]!;
  }
  return env;
}

/** Spawns a long-running command and resolves with the port it prints in its banner. */
function serving(argv: string[], opts: { cwd: string; env: Record<string, string> }): Promise<{ proc: ChildProcess; port: number }> {
  const proc = spawn(argv[0]!, argv.slice(1), { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(proc);
  let out = '';
  let err = '';
  proc.stderr.on('data', (d: Buffer) => { err += d.toString(); });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${argv.join(' ')} did not serve: ${out}\n${err}`)), 60_000);
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /http:\/\/[^\s/]+:(\d+)\/pdns\/v2\//.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ proc, port: Number(m[1]) });
      }
    });
    proc.on('exit', (code) => reject(new Error(`${argv.join(' ')} exited with ${code}: ${out}\n${err}`)));
  });
}

function stop(proc: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (proc.exitCode !== null) return resolve();
    proc.once('exit', () => resolve());
    proc.kill('SIGTERM');
  });
}

describe('deploy/Dockerfile', () => {
  it('is multi-stage: the runtime stage runs as a non-root user with the data directory as a volume and a healthcheck', () => {
    const runtime = stageOf('runtime');
    expect(stageOf('build').some((l) => l.startsWith('RUN npm ci'))).toBe(true);
    expect(runtime.filter((l) => l.startsWith('USER '))).toEqual(['USER rrscan']);
    expect(runtime).toContain('VOLUME ["/data"]');
    expect(runtimeEnv()).toMatchObject({ RRSCAN_DATA: '/data', RRSCAN_HOST: '0.0.0.0', PORT: '8080' });
    expect(runtime.some((l) => l.startsWith('HEALTHCHECK '))).toBe(true);
    expect(runtime).toContain('STOPSIGNAL SIGTERM');
  });

  it('tells how to give docker stop more time than the shutdown grace (an image cannot set it)', () => {
    const seconds = Number(/--stop-timeout (\d+)/.exec(DOCKERFILE)?.[1]);
    expect(seconds * 1000).toBeGreaterThan(LIMITS.shutdownGraceMs + LIMITS.groupStopMarginMs);
    expect(DOCKERFILE).toContain(`docker stop --time ${seconds}`);
  });

  it('copies into the runtime stage everything a server reads: rrscan serve, npm start\'s command and the healthcheck run from it', async () => {
    // Assemble /app from the COPY --from=build lines, with this checkout's built files.
    const app = path.join(temp.fresh(), 'app');
    mkdirSync(app);
    const copies = stageOf('runtime').filter((l) => l.startsWith('COPY --from=build '));
    expect(copies.length).toBeGreaterThan(0);
    for (const c of copies) {
      const paths = c.split(/\s+/).slice(2);
      const dest = paths.pop()!;
      for (const src of paths) {
        expect(src.startsWith('/app/'), src).toBe(true);
        const rel = path.relative('/app', src);
        const destDir = path.join(app, path.relative('/app', dest));
        const to = dest.endsWith('/') ? path.join(destDir, path.basename(rel)) : destDir;
        // node_modules: this checkout's (a symlink; the image prunes dev dependencies, which a server never loads).
        if (rel === 'node_modules') symlinkSync(path.join(REPO, 'node_modules'), to);
        else cpSync(path.join(REPO, rel), to, { recursive: true });
      }
    }
    const data = path.join(temp.fresh(), 'data');
    expect(cli(['demo', '--data', data, '--rrsets', '2000']).code).toBe(0);
    const bin = path.join(app, 'bin', 'rrscan.js');

    const serve = await serving([process.execPath, bin, 'serve', '--data', data, '--port', '0'], { cwd: app, env: {} });
    try {
      expect((await get(serve, '/pdns/v2/ping')).body).toBe('{"ping":"ok"}\n');
      expect((await get(serve, '/pdns/v2/openapi.json')).body).toBe(OPENAPI);
      const page = await get(serve, '/console/');
      expect([page.status, page.headers['content-type']]).toEqual([200, 'text/html; charset=utf-8']);
      expect(readFileSync(path.join(REPO, 'console', 'index.html'), 'utf8')).toBe(page.body);
    } finally {
      await stop(serve.proc);
    }

    // The image's CMD with its ENV (the data directory already holds the demo, so no million-RRset wait), then its HEALTHCHECK.
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(DOCKERFILE)![1]!) as string[];
    expect(cmd).toEqual(['node', 'bin/rrscan.js', 'start']);
    const env = { ...runtimeEnv(), RRSCAN_DATA: data, PORT: '0' };
    const start = await serving([process.execPath, ...cmd.slice(1)], { cwd: app, env });
    try {
      const key = readFileSync(path.join(data, 'demo-key.txt'), 'utf8').trim();
      const r = await get(start, '/pdns/v2/regex/rrnames/example?limit=1', { 'X-API-Key': key });
      expect(r.status).toBe(200);
      const health = JSON.parse(/HEALTHCHECK .* CMD (\[.*\])$/m.exec(DOCKERFILE.replace(/\\\n\s*/g, ' '))![1]!) as string[];
      expect(health[0]).toBe('node');
      const probe = (port: number) =>
        spawnSync(process.execPath, health.slice(1), { env: { ...process.env, PORT: String(port) }, timeout: 10_000 });
      expect(probe(start.port).status).toBe(0);
      await stop(start.proc);
      expect(probe(start.port).status).toBe(1);
    } finally {
      await stop(start.proc);
    }
  }, 90_000);
});

const dockerInfo = spawnSync('docker', ['info'], { encoding: 'utf8', timeout: 20_000 });
const DOCKER_SKIP = dockerInfo.error ? `docker not found (${dockerInfo.error.message})`
  : dockerInfo.status !== 0 ? `docker info failed, no container engine here: ${(dockerInfo.stderr || dockerInfo.stdout).trim().split('\n').pop()}`
    : undefined;
if (DOCKER_SKIP) console.warn(`deploy.test.ts: image build skipped: ${DOCKER_SKIP}`);

describe.skipIf(DOCKER_SKIP !== undefined)('the image, built and run', () => {
  const tag = `rrscan-test:${process.pid}`;
  const docker = (...args: string[]) => spawnSync('docker', args, { encoding: 'utf8', timeout: 1_800_000, maxBuffer: 64 << 20 });
  afterAll(() => {
    docker('rmi', '-f', tag);
  });

  it('builds, runs as non-root, refuses a missing data directory, and serves the demo with npm start until healthy', async () => {
    const build = docker('build', '-f', path.join(REPO, 'deploy', 'Dockerfile'), '-t', tag, REPO);
    expect(build.status, build.stderr).toBe(0);
    expect(docker('run', '--rm', tag, 'id', '-u').stdout.trim()).not.toBe('0');
    const missing = docker('run', '--rm', tag, 'rrscan', 'serve', '--data', '/no/such/dir');
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('/no/such/dir: no such data directory');

    const id = docker('run', '-d', '-p', '127.0.0.1::8080', tag, 'npm', 'start').stdout.trim();
    try {
      const port = Number(/:(\d+)$/m.exec(docker('port', id, '8080').stdout.trim())![1]);
      let health = '';
      for (let i = 0; i < 300 && health !== 'healthy'; i++) {
        await new Promise((r) => setTimeout(r, 1000));
        health = docker('inspect', '-f', '{{.State.Health.Status}}', id).stdout.trim();
        // The healthcheck's first probe comes after its interval; ping answers as soon as the demo is served.
        if ((await get({ port }, '/pdns/v2/ping').catch(() => ({ status: 0 }))).status === 200) break;
      }
      expect((await get({ port }, '/pdns/v2/openapi.json')).body).toBe(OPENAPI);
      const key = docker('exec', id, 'cat', '/data/demo-key.txt').stdout.trim();
      expect((await get({ port }, '/pdns/v2/regex/rrnames/paypal?limit=1', { 'X-API-Key': key })).status).toBe(200);
      expect(docker('stop', '-t', '40', id).status).toBe(0);
    } finally {
      docker('rm', '-f', '-v', id);
    }
  }, 1_800_000);
});

describe('deploy/rrscan.service', () => {
  const analyze = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
  const skip = analyze.error ? `systemd-analyze not found (${analyze.error.message})` : undefined;
  if (skip) console.warn(`deploy.test.ts: unit check skipped: ${skip}`);

  it.skipIf(skip !== undefined)('passes systemd-analyze verify without a word', () => {
    const r = spawnSync('systemd-analyze', ['verify', path.join(REPO, 'deploy', 'rrscan.service')], { encoding: 'utf8' });
    expect({ code: r.status, out: r.stdout, err: r.stderr }).toEqual({ code: 0, out: '', err: '' });
  });

  it('hardens the service, and lets it write its data directory and nothing else', () => {
    const keys = new Map(UNIT.split('\n').filter((l) => /^\w+=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    expect(Object.fromEntries(['User', 'NoNewPrivileges', 'ProtectSystem', 'ProtectHome', 'PrivateTmp', 'PrivateDevices',
      'RestrictAddressFamilies', 'CapabilityBoundingSet', 'LimitNOFILE'].map((k) => [k, keys.get(k)]))).toEqual({
      User: 'rrscan', NoNewPrivileges: 'yes', ProtectSystem: 'strict', ProtectHome: 'yes', PrivateTmp: 'yes', PrivateDevices: 'yes',
      RestrictAddressFamilies: 'AF_INET AF_INET6 AF_UNIX', CapabilityBoundingSet: '', LimitNOFILE: '65536',
    });
    const dataDir = /--data (\S+)/.exec(keys.get('ExecStart')!)![1];
    expect(keys.get('ReadWritePaths')).toBe(dataDir);
    expect(`/var/lib/${keys.get('StateDirectory')}`).toBe(dataDir);
  });

  it('gives a stop more time than the shutdown grace before systemd kills the server', () => {
    const stop = /^TimeoutStopSec=(\d+)s$/m.exec(UNIT);
    expect(/^KillSignal=SIGTERM$/m.test(UNIT)).toBe(true);
    expect(Number(stop?.[1]) * 1000).toBeGreaterThan(LIMITS.shutdownGraceMs + LIMITS.groupStopMarginMs);
  });

  it('starts the server with its ExecStart line (pointed at this checkout and a scratch data directory)', async () => {
    const data = temp.fresh();
    expect(cli(['demo', '--data', data, '--rrsets', '500']).code).toBe(0);
    const exec = /^ExecStart=(.*)$/m.exec(UNIT)![1]!.split(' ')
      .map((a) => a.replace('/opt/rrscan', REPO).replace('/var/lib/rrscan', data).replace(/^8080$/, '0'));
    expect(exec[0]).toBe('/usr/bin/node');
    const s = await serving([process.execPath, ...exec.slice(1)], { cwd: REPO, env: { NODE_ENV: 'production', RRSCAN_LOG_LEVEL: 'warn' } });
    try {
      expect((await get(s, '/pdns/v2/ping')).body).toBe('{"ping":"ok"}\n');
    } finally {
      await stop(s.proc);
    }
  });
});
