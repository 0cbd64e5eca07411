// BIND 9 for end-to-end tests of live dnstap (dnstap-bind.test.ts,
// watch-bind.test.ts): Debian's named in the foreground with a scratch
// configuration, and dig. Tests skip with `skipReason` when either is
// missing (.ci/run installs bind9 and bind9-dnsutils).

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const NAMED = '/usr/sbin/named';
const haveDig = spawnSync('dig', ['-v'], { stdio: 'ignore' }).status === 0;
export const skipReason = !existsSync(NAMED) ? `${NAMED} not found (Debian package bind9)`
  : !haveDig ? 'dig not found (Debian package bind9-dnsutils)' : undefined;

export interface Named {
  proc: ChildProcess;
  output: () => string;
  stop(): Promise<void>;
}

/** named in the foreground with a scratch configuration; resolves once it logs "running". */
export async function startNamed(dir: string, conf: string): Promise<Named> {
  const file = path.join(dir, 'named.conf');
  writeFileSync(file, conf);
  const proc = spawn(NAMED, ['-g', '-c', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  proc.stderr.on('data', (d: Buffer) => { out += d.toString(); });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (/\brunning$/m.test(out)) {
        clearInterval(timer);
        resolve();
      }
    }, 50);
    void exited.then(() => {
      clearInterval(timer);
      reject(new Error(`named exited: ${out.slice(-2000)}`));
    });
    setTimeout(() => {
      clearInterval(timer);
      reject(new Error(`named did not start: ${out.slice(-2000)}`));
    }, 20_000);
  });
  return {
    proc, output: () => out,
    stop: async () => {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      setTimeout(() => proc.kill('SIGKILL'), 5_000).unref();
      await exited;
    },
  };
}

export const common = (dir: string, socket: string) => `
  directory "${dir}";
  pid-file "${dir}/named.pid";
  listen-on-v6 { none; };
  dnssec-validation no;
  max-cache-size 16m;
  dnstap-output unix "${socket}";
  dnstap-identity "${path.basename(dir)}";
`;

export function dig(port: number, args: string[]): string {
  const r = spawnSync('dig', ['@127.0.0.1', '-p', String(port), '+tries=2', '+time=3', '+short', ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`dig ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return r.stdout.trim();
}
