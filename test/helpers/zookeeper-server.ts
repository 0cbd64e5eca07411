// Test harness: a private ZooKeeper (Debian's package zookeeper: its jar in
// /usr/share/java, run by the JDK's java) in standalone mode on a free
// loopback port with a scratch data directory, for the tests of ClickHouse
// replicas (ReplicatedMergeTree keeps its replication log in ZooKeeper on
// 18.16). Started as a plain JVM, not through zkServer.sh, so the PID the
// test kills is the server's own. Nothing is mocked.
//
// Contract: startZooKeeper() resolves once the server answers the `ruok`
// four-letter command with `imok`; close() kills it by its PID, waits for it
// to exit and deletes the directory. Tests that need it use
// describe.skipIf(!HAVE_ZOOKEEPER) and print ZOOKEEPER_SKIP_REASON when it
// is missing.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/lib/free-port.js';
import { onPath } from './redis-server.js';
import { probeAnswers } from './tcp-probe.js';

/** Debian's server jar; its manifest's Class-Path names the jars it needs, so it is the whole class path. */
const ZOOKEEPER_JAR = '/usr/share/java/zookeeper.jar';
const JAVA = onPath('java');
export const HAVE_ZOOKEEPER = JAVA !== undefined && existsSync(ZOOKEEPER_JAR);
export const ZOOKEEPER_SKIP_REASON =
  `ZooKeeper is not installed (Debian package zookeeper: ${ZOOKEEPER_JAR}, and java); the ClickHouse replica tests skip`;

/** How long a starting server may take to answer ruok (0.3-1 s here, most of it the JVM starting). */
const START_TIMEOUT_MS = 30_000;
const PING_RETRY_MS = 50;
/**
 * A small JVM: the tests keep a few hundred znodes. The serial collector and
 * C1 only start faster and use less memory on the shared 2-core machine.
 */
const JVM_FLAGS = ['-Xmx256m', '-Xss512k', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1'];
/**
 * Ticks of 500 ms let clients ask for sessions as short as 1 s (2 ticks):
 * a ClickHouse replica killed with -9 holds its `is_active` znode until its
 * session expires, and comes back only after that.
 */
const TICK_MS = 500;

export interface ZooKeeperServer {
  readonly port: number;
  readonly dir: string;
  /** The server's output so far, for failure messages. */
  output(): string;
  close(): Promise<void>;
}

/** Whether a server on the port answers the four-letter command ruok with imok (and then closes). */
const answersRuok = (port: number): Promise<boolean> =>
  probeAnswers(port, 'ruok', (reply, ended) => (ended ? reply === 'imok' : undefined));

function zooCfg(dir: string, port: number): string {
  return [
    `tickTime=${TICK_MS}`, `dataDir=${dir}/data`, `clientPort=${port}`, 'clientPortAddress=127.0.0.1',
    // No admin web server (it would take port 8080) and only the commands the harness uses.
    'admin.enableServer=false', '4lw.commands.whitelist=ruok,srvr',
    'maxClientCnxns=200', 'autopurge.purgeInterval=0', '',
  ].join('\n');
}

export async function startZooKeeper(): Promise<ZooKeeperServer> {
  if (!HAVE_ZOOKEEPER) throw new Error(ZOOKEEPER_SKIP_REASON);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rrscan-zookeeper-'));
  const port = await freePort();
  writeFileSync(path.join(dir, 'zoo.cfg'), zooCfg(dir, port));
  let out = '';
  const child: ChildProcess = spawn(JAVA!, [...JVM_FLAGS, '-cp', ZOOKEEPER_JAR,
    'org.apache.zookeeper.server.ZooKeeperServerMain', path.join(dir, 'zoo.cfg')], { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir });
  child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { out += d.toString(); });
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!(await answersRuok(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`zookeeper on port ${port} did not answer (exit ${String(child.exitCode)}): ${out}`);
    }
    await new Promise((r) => setTimeout(r, PING_RETRY_MS));
  }
  const stop = (): Promise<void> => new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    process.kill(child.pid!, 'SIGKILL');
  });
  return {
    port, dir,
    output: () => out,
    close: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
