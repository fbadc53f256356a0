// The simulator CLI parses strictly: a misspelt flag, or another command's flag, fails before anything runs.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { POLICY_NAMES } from '../../lib/sim/suite';

const ROOT = join(__dirname, '..', '..');

function sim(...args: string[]): { status: number | null; stderr: string; stdout: string } {
  const r = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', join('bin', 'sim.ts'), ...args], { cwd: ROOT, encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr.trim(), stdout: r.stdout.trim() };
}

test('bench --seed 3 --polices library fails, naming the flag and what bench takes, and runs nothing', () => {
  const r = sim('bench', '--seed', '3', '--polices', 'library');
  expect(r.status).toBe(1);
  expect(r.stdout).toBe('');
  expect(r.stderr).toBe(
    "bench: Unknown option '--seed'; bench takes --seeds, --policies, --param, --scenario-file, --workers, --out, --chart-seed, --library-config, --platforms, --scenarios",
  );
});

test('a missing value and a stray argument fail too; a correct command line runs', () => {
  expect(sim('run', 'S1', '--seeds').stderr).toMatch(/^run: Option '--seeds <value>' argument missing; run takes --seeds, /);
  expect(sim('list', 'S1').stderr).toBe("list: unexpected argument 'S1'; list takes no options");
  const ok = sim('validate', '--arrivals', '200', '--json');
  expect([ok.status, JSON.parse(ok.stdout).length]).toEqual([0, 4]);
});

test('--help and -h print the usage and exit 0, before or after a command', () => {
  for (const args of [['--help'], ['-h'], ['help'], ['bench', '--help'], ['run', 'S1', '-h']]) {
    const r = sim(...args);
    expect([args.join(' '), r.status, r.stdout.startsWith('cdk-capacity-sim: simulate')]).toEqual([args.join(' '), 0, true]);
  }
  expect(sim('nonsense').status).toBe(2);
});

test('trace prints one run minute by minute for each policy asked, on one platform', () => {
  const r = sim('trace', 'S1', '--seed', '2', '--platforms', 'sagemaker', '--policies', 'cost-only,library', '--from', '20', '--to', '22',
    '--param', 'durationMinutes=40', '--param', 'onsetMinute=20', '--param', 'meanRate=5');
  expect(r.status).toBe(0);
  const lines = r.stdout.split('\n');
  expect(lines[0]).toMatch(/^S1 SageMaker seed 2: Preferred shortage; capacity events \[/);
  expect(lines.filter((l) => /^(cost-only|library): \d+\.\d\d% within the SLO/.test(l))).toHaveLength(2);
  expect(lines.filter((l) => /^2[01] (cost|capacity) \d+ \| l40s w/.test(l))).toHaveLength(4);
  expect(sim('trace', 'S1', '--platforms', 'eks,sagemaker').stderr).toBe("trace: --platforms 'eks,sagemaker': trace runs one platform (eks or sagemaker)");
  expect(sim('trace', 'S1', '--seeds', '2').stderr).toMatch(/^trace: Unknown option '--seeds'; trace takes --seed, /);
});

test('trace fails when the seed, the minute range or a policy is not one it can run, naming the value', () => {
  const fails = (...args: string[]) => {
    const r = sim('trace', ...args);
    return [r.status, r.stdout, r.stderr];
  };
  expect(fails('S1', '--seed', 'x')).toEqual([1, '', "trace: --seed 'x': must be an integer"]);
  expect(fails('S1', '--from', '30', '--to', '20')).toEqual([1, '', 'trace: --from 30 --to 20: minutes, from before to']);
  expect(fails('S1', '--policies', 'library,nope')).toEqual([1, '', `Unknown policy 'nope'. Known: ${POLICY_NAMES.join(', ')}`]);
  expect(fails()).toEqual([1, '', 'trace: which scenario? (S0..S9, P1, H1..H8; see list)']);
});
