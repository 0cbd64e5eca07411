// The live dnstap receiver from the outside: `rrscan ingest --listen` as a
// real process, and a Frame Streams sender speaking to it over a real
// socket (the dnstap frames come from test/unit/ingest/wire-fixtures.ts).

import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { AA, QR, a, control, dnsMessage, dnstapFrame } from '../unit/ingest/wire-fixtures.js';
import { get, objects, rrscanCommand } from './rrscan.js';

export const DNSTAP = 'protobuf:dnstap.Dnstap';
export const ACCEPT = 1;
export const START = 2;
export const STOP = 3;
export const READY = 4;
export const FINISH = 5;

/** The response time of every answer(). */
export const T = 1_760_000_000;
const AUTH_RESPONSE = 2;

/** An AUTH_RESPONSE frame answering `name` A `ip` from zone `zone` (query_zone), with optional extra additional records. */
export function answer(name: string, ip: string, zone = 'live.test.', additional: { name: string; ip: string }[] = []): Uint8Array {
  const response = dnsMessage({
    flags: QR | AA, qname: name,
    answer: [{ name, type: 1, rdata: a(ip) }],
    additional: additional.map((r) => ({ name: r.name, type: 1, rdata: a(r.ip) })),
  });
  return dnstapFrame({ type: AUTH_RESPONSE, responseTimeSec: T, response, zone });
}

export interface Receiver {
  proc: ChildProcess;
  /** The `rrscan ingest listening on ADDR` addresses, in --listen order. */
  addresses: string[];
  stdout: () => string;
  stderr: () => string;
  /** The pino log lines so far, parsed. */
  logs: () => Record<string, unknown>[];
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL, and wait for the exit. */
  kill9(): Promise<void>;
}

/** `prefix`: a command that runs rrscan (full-disk.test.ts: nsenter into a mount namespace; it execs, so signals reach rrscan). */
export async function startReceiver(dataDir: string, listen: string[], extra: string[] = ['--flush-seconds', '1'],
  prefix: readonly string[] = []): Promise<Receiver> {
  const [file, args] = rrscanCommand(['ingest', '--data', dataDir, ...listen.flatMap((l) => ['--listen', l]), ...extra], prefix);
  const proc = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stderr.on('data', (d: Buffer) => { err += d.toString(); });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const addresses = await new Promise<string[]>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`receiver did not start: ${out}\n${err}`)), 30_000);
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const found = [...out.matchAll(/^rrscan ingest listening on (\S+)$/gm)].map((m) => m[1]!);
      if (found.length === listen.length) {
        clearTimeout(timer);
        resolve(found);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`receiver exited with ${code}: ${out}\n${err}`));
    });
  });
  return {
    proc, addresses, stdout: () => out, stderr: () => err,
    logs: () => err.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>),
    stop: async () => {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      return exited;
    },
    kill9: async () => {
      if (proc.exitCode === null) proc.kill('SIGKILL');
      await exited;
    },
  };
}

/** A raw Frame Streams connection to the receiver, for well- and ill-behaved senders. */
export class FrameSender {
  private received = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  closed = false;
  readonly done: Promise<void>;

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (d: Buffer) => {
      this.received = Buffer.concat([this.received, d]);
      this.wake();
    });
    socket.on('error', () => undefined);
    this.done = new Promise((resolve) => socket.once('close', () => {
      this.closed = true;
      this.wake();
      resolve();
    }));
  }

  /** `localAddress`: the source address of a tcp: connection (127.0.0.2 reaches a 127.0.0.1 listener on Linux). */
  static async connect(address: string, localAddress?: string): Promise<FrameSender> {
    const socket = address.startsWith('unix:') ? net.connect(address.slice(5))
      : net.connect({
        port: Number(address.slice(address.lastIndexOf(':') + 1)),
        host: address.slice(4, address.lastIndexOf(':')).replace(/^\[|\]$/g, ''),
        ...(localAddress !== undefined ? { localAddress } : {}),
      });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return new FrameSender(socket);
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  write(bytes: Uint8Array): Promise<void> {
    return new Promise((resolve) => this.socket.write(bytes, () => resolve()));
  }

  /** The next control frame the receiver sent: [type, content types]; undefined when the connection closed first. */
  async readControl(timeoutMs = 5_000): Promise<[number, string[]] | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const b = this.received;
      if (b.length >= 8 && b.length >= 8 + b.readUInt32BE(4)) {
        if (b.readUInt32BE(0) !== 0) throw new Error('the receiver sent a data frame');
        const len = b.readUInt32BE(4);
        const type = b.readUInt32BE(8);
        const types: string[] = [];
        for (let p = 12; p + 8 <= 8 + len;) {
          const flen = b.readUInt32BE(p + 4);
          if (b.readUInt32BE(p) === 1) types.push(b.subarray(p + 8, p + 8 + flen).toString('latin1'));
          p += 8 + flen;
        }
        this.received = b.subarray(8 + len);
        return [type, types];
      }
      if (this.closed) return undefined;
      if (Date.now() > deadline) throw new Error('no control frame from the receiver');
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  /** READY, expect ACCEPT, START: a started stream. */
  async handshake(): Promise<void> {
    await this.write(control(READY, DNSTAP));
    const accept = await this.readControl();
    if (accept?.[0] !== ACCEPT || accept[1][0] !== DNSTAP) throw new Error(`expected ACCEPT ${DNSTAP}, got ${JSON.stringify(accept)}`);
    await this.write(control(START, DNSTAP));
  }

  /** STOP, expect FINISH (within `timeoutMs`: a receiver working through a backlog answers late) and the close. */
  async finish(timeoutMs?: number): Promise<void> {
    await this.write(control(STOP));
    const fin = await this.readControl(timeoutMs);
    if (fin?.[0] !== FINISH) throw new Error(`expected FINISH, got ${JSON.stringify(fin)}`);
    await this.done;
  }

  end(): Promise<void> {
    this.socket.end();
    return this.done;
  }
}

/** Polls `probe` until it returns something other than undefined, or fails after `timeoutMs`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The results of a search against a running server (`obj` lines). */
export async function results(server: { port: number }, key: string, pathAndQuery: string): Promise<Record<string, unknown>[]> {
  const r = await get(server, pathAndQuery, { 'X-API-Key': key });
  if (r.status !== 200) throw new Error(`${pathAndQuery}: ${r.status} ${r.body}`);
  return objects(r.body);
}

/** Waits until a search returns `n` results (a flush has been published and the server reloaded); returns them. */
export function waitForResults(server: { port: number }, key: string, pathAndQuery: string, n: number,
  timeoutMs = 15_000): Promise<Record<string, unknown>[]> {
  return waitFor(`${n} results of ${pathAndQuery}`, async () => {
    const got = await results(server, key, pathAndQuery);
    return got.length === n ? got : undefined;
  }, timeoutMs);
}
