// The simulator CLI parses strictly: a misspelt flag, or another command's flag, fails before anything runs. The
// command line runs in-process (`main`); one test runs the real process for the exit codes.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { main } from '../../bin/sim';
import { platformModel } from '../../lib/sim/platform';
import { POLICY_NAMES } from '../../lib/sim/suite';

const ROOT = join(__dirname, '..', '..');

async function sim(...args: string[]): Promise<{ status: number; stderr: string; stdout: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const status = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { status, stderr: err.join('\n').trim(), stdout: out.join('\n').trim() };
}

test('the process exits with the command line\'s code: 0 for help, 1 for a bad value, 2 for an unknown command', () => {
  const run = (...args: string[]) => spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', join('bin', 'sim.ts'), ...args],
    { cwd: ROOT, encoding: 'utf8' });
  const help = run('run', 'S1', '-h');
  expect([help.status, help.stdout.startsWith('cdk-capacity-sim: simulate')]).toEqual([0, true]);
  const bad = run('trace', 'S1', '--seed', 'x');
  expect([bad.status, bad.stdout, bad.stderr.trim()]).toEqual([1, '', "trace: --seed 'x': must be a whole number (digits only)"]);
  const unknown = run('nonsense');
  expect([unknown.status, unknown.stdout.startsWith('cdk-capacity-sim: simulate'), unknown.stderr]).toEqual([2, true, '']);
});

test('bench --seed 3 --polices library fails, naming the flag and what bench takes, and runs nothing', async () => {
  const r = await sim('bench', '--seed', '3', '--polices', 'library');
  expect(r.status).toBe(1);
  expect(r.stdout).toBe('');
  expect(r.stderr).toBe(
    "bench: Unknown option '--seed'; bench takes --seeds, --policies, --param, --scenario-file, --workers, --out, --chart-seed, --library-config, --platform-param, --platforms, --scenarios",
  );
});

test('a missing value and a stray argument fail too; a correct command line runs', async () => {
  expect((await sim('run', 'S1', '--seeds')).stderr).toMatch(/^run: Option '--seeds <value>' argument missing; run takes --seeds, /);
  expect((await sim('list', 'S1')).stderr).toBe("list: unexpected argument 'S1'; list takes no options");
  const ok = await sim('validate', '--arrivals', '200', '--json');
  expect([ok.status, JSON.parse(ok.stdout).length]).toEqual([0, 4]);
});

test('--help and -h print the usage and exit 0, before or after a command', async () => {
  for (const args of [['--help'], ['-h'], ['help'], ['bench', '--help'], ['run', 'S1', '-h']]) {
    const r = await sim(...args);
    expect([args.join(' '), r.status, r.stdout.startsWith('cdk-capacity-sim: simulate')]).toEqual([args.join(' '), 0, true]);
  }
  expect((await sim('nonsense')).status).toBe(2);
});

test('trace prints one run minute by minute for each policy asked, on one platform', async () => {
  const r = await sim('trace', 'S1', '--seed', '2', '--platforms', 'sagemaker', '--policies', 'cost-only,library', '--from', '20', '--to', '22',
    '--param', 'durationMinutes=40', '--param', 'onsetMinute=20', '--param', 'meanRate=5');
  expect(r.status).toBe(0);
  const lines = r.stdout.split('\n');
  expect(lines[0]).toMatch(/^S1 SageMaker seed 2: Preferred shortage; capacity events \[/);
  expect(lines.filter((l) => /^(cost-only|library): \d+\.\d\d% within the SLO/.test(l))).toHaveLength(2);
  expect(lines.filter((l) => /^2[01] (cost|capacity) \d+ \| l40s w/.test(l))).toHaveLength(4);
  expect((await sim('trace', 'S1', '--platforms', 'eks,sagemaker')).stderr).toBe("trace: --platforms 'eks,sagemaker': trace runs one platform (eks or sagemaker)");
  expect((await sim('trace', 'S1', '--seeds', '2')).stderr).toMatch(/^trace: Unknown option '--seeds'; trace takes --seed, /);
});

test('trace fails when the seed, the minute range or a policy is not one it can run, naming the value', async () => {
  const fails = async (...args: string[]) => {
    const r = await sim('trace', ...args);
    return [r.status, r.stdout, r.stderr];
  };
  expect(await fails('S1', '--seed', 'x')).toEqual([1, '', "trace: --seed 'x': must be a whole number (digits only)"]);
  expect(await fails('S1', '--from', '30', '--to', '20')).toEqual([1, '', 'trace: --from 30 --to 20: minutes, from before to']);
  expect(await fails('S1', '--from', '', '--to', '20')).toEqual([1, '', "trace: --from '': must be a whole number of minutes (digits only)"]);
  expect(await fails('S1', '--to', '1e1')).toEqual([1, '', "trace: --to '1e1': must be a whole number of minutes (digits only)"]);
  expect(await fails('S1', '--policies', 'library,nope')).toEqual([1, '', `Unknown policy 'nope'. Known: ${POLICY_NAMES.join(', ')}`]);
  expect(await fails()).toEqual([1, '', 'trace: which scenario? (S0..S9, P1, H1..H9; see list)']);
});

test('--platform-param changes an assumed SageMaker update timing, and fails on an unknown key or a value outside its range before anything runs', async () => {
  const args = ['trace', 'H3', '--seed', '1', '--platforms', 'sagemaker', '--from', '0', '--to', '1'];
  const model = platformModel('sagemaker', { alarmPhaseSeconds: 7, rollbackSeconds: 3, writableRunSeconds: 2 }).endpointUpdate!;
  expect([model.alarmPhaseSeconds, model.rollbackSeconds, model.writableRunSeconds]).toEqual([7, 3, 2]);
  expect(platformModel('sagemaker').endpointUpdate!.alarmPhaseSeconds).toBeUndefined();
  expect(() => platformModel('sagemaker', { writableRunSeconds: 2.5 })).toThrow('platform parameter writableRunSeconds is 2.5; allowed:');
  const headline = async (...extra: string[]) => (await sim(...args, ...extra)).stdout.split('\n').find((l) => l.startsWith('library:'));
  const byDefault = await headline();
  // H3's reclaims make scale-outs wait and roll back: without rollback time the run is another one.
  expect(await headline('--platform-param', 'rollbackSeconds=0')).not.toBe(byDefault);
  // Every variant's alarms at second 0 of the minute, with the Reconciler's tick, not at seeded phases: another run.
  expect(await headline('--platform-param', 'alarmPhaseSeconds=0')).not.toBe(byDefault);
  expect((await sim(...args, '--platform-param', 'alarmPhaseSeconds=60')).stderr)
    .toBe('--platform-param: platform parameter alarmPhaseSeconds is 60; allowed: a whole number of seconds from 0 to 59');
  expect((await sim(...args, '--platform-param', 'rollbackSeconds=26')).stderr)
    .toBe('--platform-param: platform parameter rollbackSeconds is 26; allowed: a whole number of seconds from 0 to 25');
  expect((await sim(...args, '--platform-param', 'scaleInSeconds=601')).stderr)
    .toBe('--platform-param: platform parameter scaleInSeconds is 601; allowed: a whole number of seconds from 0 to 600');
  expect((await sim('bench', '--platform-param', 'retry=5')).stderr)
    .toBe("--platform-param: platform parameter 'retry' is not known; allowed: alarmPhaseSeconds, rollbackSeconds, writableRunSeconds, weightsSeconds, scaleInSeconds, reconcilerPhaseSeconds");
  expect((await sim('bench', '--platform-param', 'writableRunSeconds')).stderr).toBe("--platform-param 'writableRunSeconds': use key=number");
  for (const bad of ['writableRunSeconds=', 'writableRunSeconds=1e1', 'writableRunSeconds=0x10', '5=9']) {
    expect((await sim('bench', '--platform-param', bad)).stderr).toBe(`--platform-param '${bad}': use key=number`);
  }
  expect((await sim('bench', '--platform-param', 'writableRunSeconds=-1')).stderr)
    .toBe('--platform-param: platform parameter writableRunSeconds is -1; allowed: a whole number of seconds from 0 to 60');
  // SageMaker runs only: asked of an EKS run (trace's default platform), it would be silently ignored.
  expect((await sim('trace', 'H3', '--platform-param', 'writableRunSeconds=5')).stderr)
    .toBe('--platform-param writableRunSeconds applies to SageMaker runs only; this one runs eks (add --platforms sagemaker)');
  expect((await sim('run', 'H3', '--platforms', 'eks', '--platform-param', 'writableRunSeconds=5')).stderr)
    .toBe('--platform-param writableRunSeconds applies to SageMaker runs only; this one runs eks (add --platforms sagemaker)');
});

test('fails, before anything runs, on a --param or --library-config key the run does not have, naming it and what is allowed', async () => {
  const fails = async (...args: string[]) => {
    const r = await sim(...args);
    return [r.status, r.stdout, r.stderr];
  };
  const s1 = 'durationMinutes, onsetMinute, meanRate, shortageMinutes, surge, preferredInstancesDuringShortage';
  expect(await fails('run', 'S1', '--param', 'foo=1')).toEqual([1, '', `--param foo: not a parameter of S1; allowed: ${s1}; see 'list'`]);
  expect(await fails('trace', 'S1', '--param', 'foo=1')).toEqual([1, '', `--param foo: not a parameter of S1; allowed: ${s1}; see 'list'`]);
  // A key some scenarios of the bench lack would change only the others.
  expect(await fails('bench', '--scenarios', 'S0,P1', '--param', 'meanRate=10')).toEqual([
    1, '', "--param meanRate: not a parameter of P1; allowed: none (the parameters every scenario run has; --scenarios runs fewer); see 'list'",
  ]);
  const fields = 'periodSeconds, headroom, warmFloorShare, weightTotal, capacityErrorLookbackSeconds, provisioningGraceSeconds, '
    + 'stabilizationWindowSeconds, latencySloP95Ms, latencyBreachPeriods, rampStepShare, minWeightChangeShare, demandWindowPeriods, '
    + 'demandQuantile, reentryMemorySeconds, maxReturnHoldSeconds';
  for (const command of [['run', 'S1'], ['trace', 'S1']]) {
    expect(await fails(...command, '--library-config', 'headrom=0.1')).toEqual([1, '', `--library-config headrom: not a field of PolicyConfig; allowed: ${fields}`]);
  }
});

test('fails, before anything runs, on no seeds, a backward range, or a worker count that is not a whole number from 1', async () => {
  const fails = async (...args: string[]) => {
    const r = await sim('run', 'S1', ...args);
    return [r.status, r.stdout, r.stderr];
  };
  const use = 'use a count of at least 1 (10: seeds 1-10), a range from low to high (1-10) or a list of whole numbers (1,2,3)';
  expect(await fails('--seeds', '0')).toEqual([1, '', `--seeds '0': no seed to run; ${use}`]);
  expect(await fails('--seeds', '5-1')).toEqual([1, '', `--seeds '5-1': the range runs backwards; ${use}`]);
  expect(await fails('--seeds', '1,,2')).toEqual([1, '', `--seeds '1,,2': not a seed; ${use}`]);
  for (const workers of ['abc', '0', '1.5', '-2']) {
    expect(await fails('--workers', workers)).toEqual([1, '', `--workers '${workers}': not a count of worker threads; allowed: a whole number from 1`]);
  }
  expect(await fails('--seeds', '1-3', '--chart-seed', '7')).toEqual([1, '', "--chart-seed '7': not a seed of this run; allowed: 1, 2, 3"]);
  // Number('') is 0, a seed of this run.
  expect(await fails('--seeds', '0-2', '--chart-seed', '')).toEqual([1, '', "--chart-seed '': not a seed of this run; allowed: 0, 1, 2"]);
});

test('validate fails, before anything runs, on an arrival count or a seed that is not one (they read as NaN)', async () => {
  for (const arrivals of ['abc', '0', '1.5', '-2', '']) {
    const r = await sim('validate', '--arrivals', arrivals);
    expect([r.status, r.stdout, r.stderr]).toEqual([1, '', `--arrivals '${arrivals}': not a count of arrivals; allowed: a whole number from 1`]);
  }
  for (const seed of ['abc', '', '1e3', '-1']) {
    const r = await sim('validate', '--seed', seed, '--arrivals', '200');
    expect([r.status, r.stdout, r.stderr]).toEqual([1, '', `validate: --seed '${seed}': must be a whole number (digits only)`]);
  }
});

test('plan fails, before it reports, on a peak that is not a rate the contract admits; a decimal one is planned for', async () => {
  const allowed = 'allowed: a finite number above 0 requests/s (the fleet is planned for it)';
  for (const peak of ['abc', '0', '-1', '1e3', '0x10', '']) {
    const r = await sim('plan', '--peak', peak);
    expect([r.status, r.stdout, r.stderr]).toEqual([1, '', `--peak '${peak}': not a peak rate; ${allowed}`]);
  }
  const ok = await sim('plan', '--peak', '2.5');
  expect([ok.status, ok.stderr]).toEqual([0, '']);
  expect(ok.stdout).not.toContain('NaN');
  expect(ok.stdout).toContain('2.5');
});
