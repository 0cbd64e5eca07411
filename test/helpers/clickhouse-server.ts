// Test harness: a private clickhouse-server (Debian's binary, package
// clickhouse-server; 18.16 there) on free loopback ports with a scratch
// directory for its data, temporary files and logs, like redis-server.ts.
// Nothing is mocked: the tests talk to a real server over HTTP.
//
// Contract: startClickHouse() resolves once GET /ping answers "Ok.";
// stop() kills the server by its PID (SIGKILL) and waits for it to exit,
// start() runs it again on the same ports and directory, close() stops it
// and deletes the directory. Tests that need it use describe.skipIf(!HAVE_CLICKHOUSE) and
// print CLICKHOUSE_SKIP_REASON when it is missing.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/lib/free-port.js';
import { onPath } from './redis-server.js';

// Debian puts it in /usr/sbin, often not on a user's PATH.
export const CLICKHOUSE_SERVER = onPath('clickhouse-server', ['/usr/sbin', '/usr/bin']);
export const HAVE_CLICKHOUSE = CLICKHOUSE_SERVER !== undefined;
export const CLICKHOUSE_SKIP_REASON =
  'clickhouse-server is not installed (Debian package clickhouse-server); the ClickHouse tests skip';

/** How long a starting server may take to answer /ping (18.16 answers within 0.1-0.5 s here). */
const START_TIMEOUT_MS = 30_000;
const PING_RETRY_MS = 25;

export interface ClickHouseServer {
  readonly httpPort: number;
  /** http://HOST:PORT (HOST a loopback address), the form `--clickhouse-url` takes. */
  readonly url: string;
  readonly dir: string;
  /** The server's error log so far, for failure messages. */
  errors(): string;
  /** Resident memory of the server process in KiB (from /proc), 0 when it is not running. */
  rssKiB(): number;
  /** Kills the server by PID with SIGKILL (no shutdown of its own) and waits until it has exited. */
  stop(): Promise<void>;
  /** Starts it again on the same ports and directory; resolves once it answers /ping. */
  start(): Promise<void>;
  /** Stops it and deletes its directory. */
  close(): Promise<void>;
}

/** What a test needs of any ClickHouse it talks to: a private server, or chdb-http (helpers/chdb-http.ts). */
export type ClickHouseUnderTest = Pick<ClickHouseServer, 'httpPort' | 'url' | 'dir' | 'errors' | 'rssKiB' | 'close'>;

async function pings(url: string): Promise<boolean> {
  try {
    const r = await fetch(`${url}/ping`, { signal: AbortSignal.timeout(1_000) });
    return (await r.text()) === 'Ok.\n';
  } catch {
    return false;
  }
}

/**
 * remote_servers for a cluster on loopback: one shard per entry, its
 * replicas at these native (TCP) ports. internal_replication: an INSERT
 * through a Distributed table goes to one replica of each shard and the
 * replicated tables copy it to the others (schema.md, Clusters).
 */
function remoteServers(cluster: string, shards: readonly (readonly Ports[])[], internalReplication = false): string {
  const xml = shards.map((replicas) => `<shard>${internalReplication ? '<internal_replication>true</internal_replication>' : ''}` +
    replicas.map((p) => `<replica><host>${p.host}</host><port>${p.tcp}</port></replica>`).join('') + '</shard>').join('');
  return `<remote_servers><${cluster}>${xml}</${cluster}></remote_servers>`;
}

/**
 * Timeout of a ClickHouse server's ZooKeeper session: a replica killed with
 * -9 keeps its `is_active` znode this long, and when it starts again it
 * waits for that to expire before it takes part. Short for the tests, not
 * so short that a busy 2-core machine loses sessions (heartbeats go every
 * third of it).
 */
const ZOOKEEPER_SESSION_MS = 3_000;

/** The <zookeeper> section of config.xml for a ZooKeeper on loopback at `port`. */
export function zookeeperConfig(port: number): string {
  return `<zookeeper><node><host>127.0.0.1</host><port>${port}</port></node>` +
    `<session_timeout_ms>${ZOOKEEPER_SESSION_MS}</session_timeout_ms></zookeeper>`;
}

function configXml(dir: string, p: Ports, extra = ''): string {
  return `<?xml version="1.0"?>
<yandex>
  ${extra}
  <logger><level>warning</level><log>${dir}/server.log</log><errorlog>${dir}/error.log</errorlog><console>0</console></logger>
  <listen_host>${p.host}</listen_host>
  <interserver_http_host>${p.host}</interserver_http_host>
  <http_port>${p.http}</http_port>
  <tcp_port>${p.tcp}</tcp_port>
  <interserver_http_port>${p.interserver}</interserver_http_port>
  <path>${dir}/data/</path>
  <tmp_path>${dir}/tmp/</tmp_path>
  <user_files_path>${dir}/user_files/</user_files_path>
  <format_schema_path>${dir}/format_schemas/</format_schema_path>
  <users_config>${dir}/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <max_concurrent_queries>100</max_concurrent_queries>
</yandex>
`;
}

const USERS_XML = `<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>2000000000</max_memory_usage></default></profiles>
  <users><default>
    <password></password><networks><ip>127.0.0.0/8</ip></networks><profile>default</profile><quota>default</quota>
  </default></users>
  <quotas><default></default></quotas>
</yandex>
`;

/** Where a server listens: a loopback address (127.0.0.0/8 is all loopback on Linux) and three ports on it. */
interface Ports {
  host: string;
  http: number;
  tcp: number;
  interserver: number;
}

const freePorts = async (host = '127.0.0.1'): Promise<Ports> =>
  ({ host, http: await freePort(host), tcp: await freePort(host), interserver: await freePort(host) });

/** Starts on ports this helper chose, before giving up when another process took one of them first. */
const START_ATTEMPTS = 3;

/**
 * One private server; `extra` is more of config.xml (remote_servers for a cluster, zookeeper, macros).
 * Ports found free can be taken before ClickHouse binds them (by another test's server, or as any connection's
 * ephemeral port: seen in a full suite run, "Address already in use"), so when this helper chose them it chooses
 * again; ports the caller gave (a cluster's config names them) are tried once.
 */
export async function startClickHouse(ports?: Ports, extra = ''): Promise<ClickHouseServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOn(ports ?? await freePorts(), extra);
    } catch (err) {
      if (ports !== undefined || attempt >= START_ATTEMPTS || !String(err).includes('Address already in use')) throw err;
    }
  }
}

async function startOn(at: Ports, extra: string): Promise<ClickHouseServer> {
  if (CLICKHOUSE_SERVER === undefined) throw new Error(CLICKHOUSE_SKIP_REASON);
  const binary = CLICKHOUSE_SERVER;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rrscan-clickhouse-'));
  const httpPort = at.http;
  writeFileSync(path.join(dir, 'config.xml'), configXml(dir, at, extra));
  writeFileSync(path.join(dir, 'users.xml'), USERS_XML);
  const url = `http://${at.host}:${httpPort}`;
  let out = '';
  let proc: ChildProcess | undefined;
  const errors = (): string => {
    try {
      return out + readFileSync(path.join(dir, 'error.log'), 'utf8');
    } catch {
      return out;
    }
  };
  const start = async (): Promise<void> => {
    const child = spawn(binary, [`--config-file=${path.join(dir, 'config.xml')}`], { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir });
    proc = child;
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!(await pings(url))) {
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`clickhouse-server on port ${httpPort} did not answer (exit ${String(child.exitCode)}): ${errors()}`);
      }
      await new Promise((r) => setTimeout(r, PING_RETRY_MS));
    }
  };
  const stop = (): Promise<void> => new Promise((resolve) => {
    const child = proc;
    proc = undefined;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    process.kill(child.pid!, 'SIGKILL');
  });
  try {
    await start();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    httpPort, url, dir, errors, stop, start,
    rssKiB: () => {
      if (proc?.pid === undefined) return 0;
      try {
        const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${proc.pid}/status`, 'utf8'));
        return m ? Number(m[1]) : 0;
      } catch {
        return 0;
      }
    },
    close: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * `shards` private servers that each know cluster `name`: one one-replica
 * shard per server, so a Distributed table on any of them spans them all.
 * Shard i listens on 127.0.0.(i+1), as separate hosts would: nothing may
 * assume that the shards share an address.
 */
export async function startClickHouseCluster(name: string, shards: number): Promise<ClickHouseServer[]> {
  const ports: Ports[] = [];
  for (let i = 0; i < shards; i++) ports.push(await freePorts(`127.0.0.${i + 1}`));
  const extra = remoteServers(name, ports.map((p) => [p]));
  return Promise.all(ports.map((p) => startClickHouse(p, extra)));
}

/**
 * `shards` x `replicas` private servers that each know cluster `name` (one
 * shard per row, internal_replication on), share the ZooKeeper at
 * `zookeeperPort`, and carry the macros the replicated tables' paths use:
 * shard `s<i>`, replica `r<j>` (1-based). Answer [shard][replica].
 */
export async function startReplicatedCluster(name: string, shards: number, replicas: number,
  zookeeperPort: number): Promise<ClickHouseServer[][]> {
  const ports: Ports[][] = [];
  for (let s = 0; s < shards; s++) {
    const row: Ports[] = [];
    for (let r = 0; r < replicas; r++) row.push(await freePorts());
    ports.push(row);
  }
  const cluster = remoteServers(name, ports, true) + zookeeperConfig(zookeeperPort);
  return Promise.all(ports.map((row, s) => Promise.all(row.map((p, r) =>
    startClickHouse(p, `${cluster}<macros><shard>s${s + 1}</shard><replica>r${r + 1}</replica></macros>`)))));
}
