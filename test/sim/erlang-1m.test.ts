import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { type MmcEstimate } from '../../lib/sim/validation';

// 1M arrivals per row through the simulator core. Run as a child process: jest's module sandbox slows this hot loop
// down 4-5x; the child runs it at native speed (about 2 s per row on an idle core).
describe('queueing core against Erlang C at 1M arrivals', () => {
  type Row = MmcEstimate & { c: number; rho: number; referenceMeanWait: number; referenceP99Wait: number };
  let rows: Row[];

  beforeAll(() => {
    const root = join(__dirname, '..', '..');
    const out = execFileSync(process.execPath, ['--require', 'ts-node/register/transpile-only', join(root, 'bin', 'sim.ts'), 'validate',
      '--arrivals', '1000000', '--json'], { cwd: root, encoding: 'utf8', env: { ...process.env, TS_NODE_PROJECT: join(root, 'tsconfig.json') } });
    rows = JSON.parse(out) as Row[];
  });

  test('reproduces P(wait) within 1 point for every reference row', () => {
    expect(rows).toHaveLength(4);
    const pWait: Record<number, number> = { 1: 0.8, 4: 0.5964, 8: 0.4576, 32: 0.4582 };
    for (const r of rows) expect(Math.abs(r.waited - pWait[r.c])).toBeLessThan(0.01);
  });

  // The spec's bound is 2% on the mean and 3% on p99. One 1M-arrival sample has a standard error of 1-2% at c <= 8
  // and 3-6% at c = 32, rho = 0.9 (waits are strongly autocorrelated), so each bound is the larger of the spec's and
  // 3 standard errors measured by batch means. `cdk-capacity-sim validate` (10M arrivals) checks the plain 2%/3%.
  test.each([[1, 0.8], [4, 0.8], [8, 0.8], [32, 0.9]])('M/M/%d at rho %d: mean and p99 wait', (c, rho) => {
    const r = rows.find((x) => x.c === c && x.rho === rho)!;
    expect(r.arrivals).toBeGreaterThan(990_000);
    const dMean = Math.abs(r.meanWait / r.referenceMeanWait - 1);
    const dP99 = Math.abs(r.p99Wait / r.referenceP99Wait - 1);
    expect(dMean).toBeLessThanOrEqual(Math.max(0.02, (3 * r.meanWaitStdError) / r.referenceMeanWait));
    expect(dP99).toBeLessThanOrEqual(Math.max(0.03, (3 * r.p99WaitStdError) / r.referenceP99Wait));
  });
});
