// Fault injection, for tests only: the environment variable RRSCAN_FAULTS
// makes named places in the code fail on purpose, so that tests can prove
// what a failure there does to a client, to its quota and to the server
// (test/integration/faults.test.ts). Unset or empty, nothing here does
// anything: fault() is one load of a constant and a branch that is never
// taken, and the server behaves exactly as without this module. Never set it
// in production; the server logs a warning at start-up when it is set.
//
// Grammar (no spaces; read once, when this module is first loaded):
//   RRSCAN_FAULTS = rule ("," rule)*
//   rule          = name (":" option)*
//   option        = "after=" N    let the first N occurrences pass (default 0)
//                 | "times=" N    fire at most N times, N >= 1 (default: no bound)
//                 | "on=" TEXT    count only occurrences whose subject contains TEXT
//                 | "p=" P        fire with probability P (0 < P <= 1) ...
//                 | "seed=" N     ... drawn from a PRNG seeded with N (default 1)
// An occurrence is one call of fault() for the rule's name (and, with `on`,
// a subject containing TEXT); the rule fires on occurrence after+1 and later,
// at most `times` times, each time with probability p. A name may appear in
// several rules; fault() fires when any of them does (each rule counts every
// occurrence it sees, so every rule of the name is asked each time).
// Example: `scan-throw:on=boom:after=2,keystore-charge:times=1`.
//
// Names, where they occur and what the subject is (the call sites are one
// line each; grep for the name):
//   scan-throw        a scan worker is about to post a batch (flex-scan.ts);
//                     subject: the task's pattern. Throws inside the scan,
//                     which reports it as an error message.
//   scan-exit         the same place; the worker thread exits mid-task
//                     (Piscina fails the task and starts a new thread).
//   shard-open        a server opens a shard file (search/local/shard-set.ts),
//                     at start-up and at each reload; subject: the file path.
//                     Counted on the thread that decides to open it: at a
//                     reload the file is mapped and checked on another.
//   shard-read        a lookup reads an index row of a shard on the front-end
//                     thread (lookup-sources.ts), or a scan worker attaches a
//                     shard for a task (flex-scan.ts); subject: the shard's name.
//   keystore-licence  the key store looks up a key's licence (sqlite-key-store.ts).
//   keystore-charge   the key store charges a batch of requests (sqlite-key-store.ts).
// Counts are per thread: each scan worker reads the variable itself (worker
// threads inherit the environment), counts its own occurrences, and a
// thread that replaces a dead one starts again from zero. A rule with `on`
// aimed at one test's pattern is therefore the deterministic way to fail
// scans; the front-end thread's counts (shard-read of lookups, the key
// store) follow the order of the requests.
//
// A variable that does not parse (an unknown name above all) throws when the
// module loads, so the process that was to be tested fails at start-up
// instead of running without its faults.

import { InjectedFaultError } from '../errors/catalogue.js';

export const FAULT_NAMES = Object.freeze([
  'scan-throw', 'scan-exit', 'shard-open', 'shard-read', 'keystore-licence', 'keystore-charge',
] as const);
export type FaultName = (typeof FAULT_NAMES)[number];

export const FAULTS_VARIABLE = 'RRSCAN_FAULTS';

interface Rule {
  readonly name: FaultName;
  readonly on: string | undefined;
  readonly after: number;
  readonly times: number;
  readonly p: number;
  readonly draw: () => number;
  seen: number;
  fired: number;
}

/** A seeded generator of numbers in [0, 1) (mulberry32): the same seed fires on the same occurrences. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function integer(rule: string, option: string, value: string, min: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min || !Number.isSafeInteger(Number(value))) {
    throw new Error(`${FAULTS_VARIABLE}: "${rule}": ${option} must be an integer >= ${min}, got "${value}"`);
  }
  return Number(value);
}

function parseRule(text: string): Rule {
  const [name, ...options] = text.split(':');
  if (!(FAULT_NAMES as readonly string[]).includes(name!)) {
    throw new Error(`${FAULTS_VARIABLE}: unknown fault "${name}" in "${text}"; known: ${FAULT_NAMES.join(', ')}`);
  }
  const given = new Map<string, string>();
  for (const o of options) {
    const eq = o.indexOf('=');
    const key = eq < 0 ? o : o.slice(0, eq);
    if (eq < 0 || !['after', 'times', 'on', 'p', 'seed'].includes(key)) {
      throw new Error(`${FAULTS_VARIABLE}: "${text}": unknown option "${o}"; options: after=N, times=N, on=TEXT, p=P, seed=N`);
    }
    if (given.has(key)) throw new Error(`${FAULTS_VARIABLE}: "${text}": ${key} given twice`);
    given.set(key, o.slice(eq + 1));
  }
  const on = given.get('on');
  if (on === '') throw new Error(`${FAULTS_VARIABLE}: "${text}": on= needs a text`);
  const p = given.has('p') ? Number(given.get('p')) : 1;
  if (!/^(?:0|1)?(?:\.\d+)?$/.test(given.get('p') ?? '1') || !(p > 0 && p <= 1)) {
    throw new Error(`${FAULTS_VARIABLE}: "${text}": p must be a number above 0 and at most 1, got "${given.get('p')}"`);
  }
  if (given.has('seed') && !given.has('p')) throw new Error(`${FAULTS_VARIABLE}: "${text}": seed= goes with p=`);
  return {
    name: name as FaultName,
    on,
    after: given.has('after') ? integer(text, 'after', given.get('after')!, 0) : 0,
    times: given.has('times') ? integer(text, 'times', given.get('times')!, 1) : Infinity,
    p,
    draw: seeded(given.has('seed') ? integer(text, 'seed', given.get('seed')!, 0) : 1),
    seen: 0,
    fired: 0,
  };
}

/** The rules of one RRSCAN_FAULTS value, and their counts. */
export class FaultPlan {
  private readonly rules: readonly Rule[];

  /** Parses the grammar of the module comment; throws, naming the mistake, when `text` does not follow it. */
  constructor(readonly text: string) {
    this.rules = text.split(',').map((r) => parseRule(r));
  }

  /** Counts one occurrence of `name` (with its subject) and answers whether it fails. */
  fires(name: FaultName, subject: string | undefined): boolean {
    let fire = false;
    for (const r of this.rules) {
      if (r.name !== name || (r.on !== undefined && (subject === undefined || !subject.includes(r.on)))) continue;
      r.seen++;
      if (r.seen <= r.after || r.fired >= r.times || (r.p < 1 && r.draw() >= r.p)) continue;
      r.fired++;
      fire = true;
    }
    return fire;
  }
}

const variable = process.env[FAULTS_VARIABLE];
const plan: FaultPlan | undefined = variable === undefined || variable === '' ? undefined : new FaultPlan(variable);

/** The active RRSCAN_FAULTS text, for the start-up warning; undefined when fault injection is off. */
export function activeFaults(): string | undefined {
  return plan?.text;
}

/** Whether this occurrence of `name` is to fail; always false when RRSCAN_FAULTS is unset. */
export function fault(name: FaultName, subject?: string): boolean {
  return plan !== undefined && plan.fires(name, subject);
}

/** Throws an InjectedFaultError when this occurrence of `name` is to fail; does nothing when RRSCAN_FAULTS is unset. */
export function failIf(name: FaultName, subject?: string): void {
  if (plan !== undefined && plan.fires(name, subject)) throw new InjectedFaultError(name, subject);
}
