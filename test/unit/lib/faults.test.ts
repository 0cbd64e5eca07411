// The RRSCAN_FAULTS grammar and its triggers (src/lib/faults.ts), on FaultPlan
// directly: the module's own plan is read from the environment once, and this
// test process runs without the variable, so fault() must answer false.

import { describe, expect, it } from 'vitest';
import { InjectedFaultError } from '../../../src/errors/catalogue.js';
import { activeFaults, failIf, fault, FAULT_NAMES, FaultPlan, type FaultName } from '../../../src/lib/faults.js';

/** Which of `n` occurrences of `name` (with `subject`) fire. */
function firing(plan: FaultPlan, n: number, name: FaultName = 'scan-throw', subject?: string): number[] {
  const out: number[] = [];
  for (let i = 1; i <= n; i++) if (plan.fires(name, subject)) out.push(i);
  return out;
}

describe('RRSCAN_FAULTS unset', () => {
  it('is inert: nothing fires and nothing throws', () => {
    expect(process.env['RRSCAN_FAULTS']).toBeUndefined();
    expect(activeFaults()).toBeUndefined();
    for (const name of FAULT_NAMES) {
      expect(fault(name, 'x')).toBe(false);
      expect(() => failIf(name, 'x')).not.toThrow();
    }
  });
});

describe('triggers', () => {
  it('fires on every occurrence by default', () => {
    expect(firing(new FaultPlan('scan-throw'), 4)).toEqual([1, 2, 3, 4]);
  });

  it('after=N lets N pass; times=N bounds how often it fires', () => {
    expect(firing(new FaultPlan('scan-throw:after=2'), 5)).toEqual([3, 4, 5]);
    expect(firing(new FaultPlan('scan-throw:times=1'), 3)).toEqual([1]);
    expect(firing(new FaultPlan('scan-throw:after=1:times=2'), 6)).toEqual([2, 3]);
  });

  it('counts only its own name', () => {
    const plan = new FaultPlan('shard-read:after=1');
    expect(plan.fires('scan-throw', undefined)).toBe(false);
    expect(firing(plan, 3, 'shard-read')).toEqual([2, 3]);
  });

  it('on=TEXT counts only subjects containing TEXT, and never an occurrence without a subject', () => {
    const plan = new FaultPlan('scan-throw:on=boom:after=1');
    expect(plan.fires('scan-throw', 'quiet')).toBe(false);
    expect(plan.fires('scan-throw', undefined)).toBe(false);
    expect(plan.fires('scan-throw', 'xboomx')).toBe(false);
    expect(plan.fires('scan-throw', 'quiet')).toBe(false);
    expect(plan.fires('scan-throw', 'boom')).toBe(true);
  });

  it('several rules of one name count apart, and any of them fires', () => {
    const plan = new FaultPlan('scan-throw:on=a:times=1,scan-throw:on=b:after=1');
    expect([plan.fires('scan-throw', 'a'), plan.fires('scan-throw', 'a'), plan.fires('scan-throw', 'b'),
      plan.fires('scan-throw', 'b'), plan.fires('scan-throw', 'ab')]).toEqual([true, false, false, true, true]);
  });

  it('p=P fires on about P of the occurrences, the same ones for the same seed', () => {
    const a = firing(new FaultPlan('scan-throw:p=0.25:seed=7'), 4000);
    expect(a.length).toBeGreaterThan(900);
    expect(a.length).toBeLessThan(1100);
    expect(firing(new FaultPlan('scan-throw:p=0.25:seed=7'), 4000)).toEqual(a);
    expect(firing(new FaultPlan('scan-throw:p=0.25:seed=8'), 4000)).not.toEqual(a);
    expect(firing(new FaultPlan('scan-throw:p=1'), 3)).toEqual([1, 2, 3]);
  });
});

describe('refusals', () => {
  it.each([
    ['scan-thrown', /unknown fault "scan-thrown".*known: scan-throw, scan-exit, shard-open, shard-read, keystore-licence, keystore-charge/],
    ['', /unknown fault ""/],
    ['scan-throw,', /unknown fault ""/],
    ['scan-throw:after', /unknown option "after"/],
    ['scan-throw:every=2', /unknown option "every=2"/],
    ['scan-throw:after=-1', /after must be an integer >= 0, got "-1"/],
    ['scan-throw:times=0', /times must be an integer >= 1, got "0"/],
    ['scan-throw:after=1:after=2', /after given twice/],
    ['scan-throw:on=', /on= needs a text/],
    ['scan-throw:p=0', /p must be a number above 0 and at most 1/],
    ['scan-throw:p=1.5', /p must be a number above 0 and at most 1/],
    ['scan-throw:p=abc', /p must be a number above 0 and at most 1/],
    ['scan-throw:seed=3', /seed= goes with p=/],
  ])('refuses %j', (text, message) => {
    expect(() => new FaultPlan(text)).toThrow(message);
  });
});

describe('InjectedFaultError', () => {
  it('names the fault and the subject and carries a code', () => {
    const e = new InjectedFaultError('shard-read', 'a.rrs');
    expect([e.message, e.code, e.name]).toEqual(['injected fault: shard-read (a.rrs)', 'INJECTED_FAULT', 'InjectedFaultError']);
  });
});
