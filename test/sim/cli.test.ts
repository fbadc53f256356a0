// The simulator CLI parses strictly: a misspelt flag, or another command's flag, fails before anything runs.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

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
