// One live dnstap Sender (src/ingest/live/sender.ts) over a real loopback
// socket: how long it counts as idle, which the receiver's sender cap uses
// to choose whom to close (receiver.ts).

import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { Sender, type SenderSink } from '../../../src/ingest/live/sender.js';
import type { Observation } from '../../../src/model/observation.js';
import { DNSTAP, READY, START, answer } from '../../helpers/live-ingest.js';
import { control } from './wire-fixtures.js';

import { silentLog as quiet } from '../../../src/lib/log.js';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A Sender on the accepting end of a loopback connection, and the client end that plays the DNS server. */
async function pair(): Promise<{ sender: Sender; client: net.Socket; taken: Observation[]; started: () => boolean; close(): void }> {
  const taken: Observation[] = [];
  let startedCalls = 0;
  const sink: SenderSink = { take: (o) => taken.push(o), started: () => startedCalls++, ended: () => undefined };
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const accepted = new Promise<net.Socket>((resolve) => server.once('connection', resolve));
  const client = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
  client.on('error', () => undefined);
  const sender = new Sender('test#1', await accepted, sink, quiet);
  return {
    sender, client, taken, started: () => startedCalls === 1,
    close: () => {
      sender.fail('test over');
      client.destroy();
      server.close();
    },
  };
}

/** Waits until `probe` holds (the socket's data arrives asynchronously). */
async function until(probe: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !probe(); i++) await sleep(10);
  expect(probe()).toBe(true);
}

describe('Sender idleness', () => {
  let done: (() => void) | undefined;
  afterEach(() => done?.());

  it('has none mid-handshake; counts from START, and from each frame after it', async () => {
    const p = await pair();
    done = p.close;
    expect(p.sender.handshaking).toBe(true);
    expect(p.sender.idleMs(performance.now())).toBeUndefined();
    p.client.write(control(READY, DNSTAP));
    await sleep(50);
    expect(p.sender.idleMs(performance.now())).toBeUndefined(); // ACCEPTed, START still to come
    p.client.write(control(START, DNSTAP));
    await until(p.started);
    expect(p.sender.handshaking).toBe(false);
    await sleep(200);
    expect(p.sender.idleMs(performance.now())).toBeGreaterThanOrEqual(190);
    p.client.write(answer('one.live.test.', '192.0.2.1'));
    await until(() => p.taken.length === 1);
    expect(p.sender.idleMs(performance.now())).toBeLessThan(100);
  });

  it('stops its clock while paused (backpressure is not silence) and starts it again on resume', async () => {
    const p = await pair();
    done = p.close;
    p.client.write(control(READY, DNSTAP));
    p.client.write(control(START, DNSTAP));
    await until(p.started);
    p.sender.pause();
    const atPause = p.sender.idleMs(performance.now())!;
    await sleep(300);
    expect(p.sender.idleMs(performance.now())).toBe(atPause);
    p.sender.resume();
    expect(p.sender.idleMs(performance.now())).toBeLessThan(atPause + 100);
    await sleep(200);
    expect(p.sender.idleMs(performance.now())).toBeGreaterThanOrEqual(atPause + 190);
  });

  it('has none once closed: the receiver never picks a sender that holds no connection', async () => {
    const p = await pair();
    done = p.close;
    p.client.write(control(READY, DNSTAP));
    p.client.write(control(START, DNSTAP));
    await until(p.started);
    expect(p.sender.closing).toBe(false);
    p.sender.evict('to make room');
    expect([p.sender.closing, p.sender.evicted, p.sender.idleMs(performance.now())]).toEqual([true, true, undefined]);
  });
});
