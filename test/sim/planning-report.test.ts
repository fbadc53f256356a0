import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../bin/sim';
import { degradationReport, formatDegradationReport } from '../../lib/sim/planning';
import { checkTargets, markdownTable, takeaway, type TargetCheck, targetSummary } from '../../lib/sim/report';
import { llamaChatService } from '../../lib/sim/services';
import { estimate, pairedDifference } from '../../lib/sim/stats';
import { type JobResult, runJob, summarise } from '../../lib/sim/suite';

describe('capacity planning report', () => {
  const svc = llamaChatService();
  const r = degradationReport(svc.contract, svc.classes);

  test('reuses the domain plan: replicas, targets and cost come from planCapacity', () => {
    expect(r.plan.classes.map((c) => c.name)).toEqual(['l40s', 'inf2', 'a10g']);
    expect(r.plan.classes[0].targetTokensPerSecondPerReplica).toBeCloseTo(1200 / 1.2, 6);
    expect(r.plan.standbyUsdPerHour).toBeCloseTo(0.7582 + 1.006, 4);
  });

  test('each class saturates at its autoscaling maximum times its envelope, cumulatively in preference order', () => {
    const expected = r.plan.classes.map((p, i) => p.maxReplicas * svc.classes[i].envelope.tokensPerSecondPerReplica);
    expect(r.saturation.map((s) => s.tokensPerSecond)).toEqual(expected);
    expect(r.saturation[2].cumulativeTokensPerSecond).toBeCloseTo(r.saturation.reduce((a, s) => a + s.tokensPerSecond, 0), 6);
  });

  test('beyond what the fallbacks absorb, the rest is shed', () => {
    const threeX = r.withoutPreferred.find((s) => s.multipleOfPeak === 3)!;
    const fallbackCapacity = r.saturation[1].tokensPerSecond + r.saturation[2].tokensPerSecond;
    expect(threeX.carried.l40s).toBe(0);
    expect(threeX.shedShare).toBeCloseTo(1 - fallbackCapacity / threeX.demandTokensPerSecond, 6);
    const atPeak = r.withPreferred.find((s) => s.multipleOfPeak === 1)!;
    expect(atPeak.shedShare).toBe(0);
    expect(atPeak.fallbackShare).toBe(0);
  });

  test('prints the plan, standby cost and the degradation ladders', () => {
    const text = formatDegradationReport(svc.contract, svc.classes, r);
    expect(text).toContain('Capacity plan for llama3-chat');
    expect(text).toMatch(/of which warm standby of fallbacks \$1\.76\/h/);
    expect(text).toContain('Degradation with no capacity for l40s');
  });
});

describe('statistics', () => {
  test('95% interval uses the t distribution over seeds', () => {
    const e = estimate([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(e.mean).toBe(5.5);
    expect(e.ci95).toBeCloseTo(2.262 * Math.sqrt(9.1666667 / 10), 4);
    expect(estimate([1, Infinity, 3]).infinite).toBe(1);
  });

  test('paired differences cancel the seed effect', () => {
    const d = pairedDifference([10, 20, 30], [9, 19, 29]);
    expect(d.mean).toBe(1);
    expect(d.ci95).toBe(0);
  });
});

describe('suite summary and targets', () => {
  let results: JobResult[];
  beforeAll(() => {
    const params = { durationMinutes: 40, onsetMinute: 10, shortageMinutes: 15, meanRate: 6 };
    results = [1, 2].map((seed) => runJob({ scenarioId: 'S1', params, seed, policies: ['library', 'retry-on-preferred', 'oracle'], charts: seed === 1 }));
  });

  test('summarises per policy with paired regret against the oracle', () => {
    const s = summarise(results, ['library', 'retry-on-preferred', 'oracle']);
    expect(s.seeds).toEqual([1, 2]);
    const oracle = s.policies.find((p) => p.policy === 'oracle')!;
    expect(oracle.regret.mean).toBe(0);
    const lib = s.policies.find((p) => p.policy === 'library')!;
    const expected = lib.values.usdPerMillionSloTokens.map((c, i) => c / oracle.values.usdPerMillionSloTokens[i] - 1);
    expect(lib.regret.mean).toBeCloseTo((expected[0] + expected[1]) / 2, 12);
    expect(s.charts?.library.share.length).toBe(40);
    expect(markdownTable(s)).toContain('| retry-on-preferred |');
    const targets = checkTargets(s);
    expect(targets.map((t) => t.target)).toEqual(expect.arrayContaining(['no baseline better on both SLO and cost', 'SLO within 0.2 pt of the best real baseline']));
  });
});

describe('a baseline better on both', () => {
  // Only the fields checkTargets reads for this target; the seeds are paired (same trace per seed).
  const policy = (name: string, slo: number[], usd: number[], lib?: { slo: number[]; usd: number[] }) => ({
    policy: name,
    metrics: {
      sloAttainment: estimate(slo), usdPerMillionSloTokens: estimate(usd), timeToFallbackSeconds: estimate([]), physicalFloorSeconds: estimate([]),
    } as unknown as Record<string, ReturnType<typeof estimate>>,
    fleetRegret: estimate([]),
    ...(lib ? { vsLibrary: { sloAttainment: pairedDifference(slo, lib.slo), usdPerMillionSloTokens: pairedDifference(usd, lib.usd) } } : {}),
  });
  const scenario = (lib: { slo: number[]; usd: number[] }, other: { slo: number[]; usd: number[] }) => ({
    scenarioId: 'S4', platform: 'sagemaker', seeds: [1, 2, 3, 4], policies: [policy('library', lib.slo, lib.usd), policy('cost-only', other.slo, other.usd, lib)],
  }) as unknown as Parameters<typeof checkTargets>[0];
  const check = (s: Parameters<typeof checkTargets>[0]) => checkTargets(s).find((t) => t.target === 'no baseline better on both SLO and cost')!;

  test('fails when a miss does not say how strong it is: the paired intervals, and whether more seeds could overturn it', () => {
    // Better on both by the means, from one seed: the paired intervals include zero.
    const noisy = check(scenario(
      { slo: [0.99, 0.99, 0.99, 0.99], usd: [0.7, 0.7, 0.7, 0.7] },
      { slo: [0.99, 0.99, 0.99, 0.995], usd: [0.7, 0.7, 0.7, 0.66] },
    ));
    expect(noisy.met).toBe(false);
    expect(noisy.miss).toBe('cost-only 99.13% at 0.690 (library - cost-only, paired over 4 seeds: SLO -0.13 ±0.40 pt, cost +0.010 ±0.032; neither significant)');
    // The same every seed: both differences are significant.
    const steady = check(scenario(
      { slo: [0.99, 0.98, 0.99, 0.98], usd: [0.7, 0.71, 0.7, 0.71] },
      { slo: [0.995, 0.985, 0.995, 0.985], usd: [0.69, 0.7, 0.69, 0.7] },
    ));
    expect(steady.miss).toContain('SLO and cost significant');
    // A difference that rounds to zero reads +0.00, not -0.00.
    const tiny = check(scenario(
      { slo: [0.99, 0.98, 0.99, 0.98], usd: [0.7, 0.71, 0.7, 0.71] },
      { slo: [0.9900001, 0.98, 0.99, 0.98], usd: [0.69, 0.7, 0.69, 0.7] },
    ));
    expect(tiny.miss).toContain('SLO +0.00 ±');
    // One seed: no interval to give.
    const one = check({ ...scenario({ slo: [0.99], usd: [0.7] }, { slo: [0.995], usd: [0.69] }), seeds: [1] });
    expect(one.miss).toBe('cost-only 99.50% at 0.690 (paired: 1 seed with both values, no interval)');
  });
});

describe('time to fallback', () => {
  const scenario = (ttf: number[]) => ({
    scenarioId: 'S1', platform: 'eks', seeds: ttf.map((_, i) => i + 1), capacityEvents: [{ className: 'l40s', onset: 600, restoration: 1200 }],
    policies: [{
      policy: 'library',
      metrics: {
        sloAttainment: estimate(ttf.map(() => 0.99)), usdPerMillionSloTokens: estimate(ttf.map(() => 0.7)),
        timeToFallbackSeconds: estimate(ttf), physicalFloorSeconds: estimate(ttf.map(() => 540)),
        modeChanges: estimate(ttf.map(() => 2)), modeChangesPerEvent: estimate(ttf.map(() => 2)),
        ...Object.fromEntries(['rejectedShare', 'excessRejectedShare', 'sloAttainmentAdmitted', 'costUsd', 'fallbackCostUsd']
          .map((k) => [k, estimate(ttf.map(() => 0.5))])),
      },
      fleetRegret: estimate([]),
    }],
  }) as unknown as Parameters<typeof checkTargets>[0];
  const check = (ttf: number[]) => checkTargets(scenario(ttf)).find((t) => t.target.startsWith('time to fallback'))!;

  test('a fallback that never came reads "never" without a unit, and one seed "1 seed never"', () => {
    expect(check([600, 700])).toMatchObject({ value: '650 s (floor 540 s)', met: true });
    expect(check([600, Infinity])).toMatchObject({ value: '600 s (floor 540 s)', met: false, miss: '1 seed never' });
    expect(check([Infinity, Infinity])).toMatchObject({ value: 'never (floor 540 s)', met: false, miss: '2 seeds never' });
    expect(takeaway(scenario([Infinity]))[0]).toContain('its fallbacks carried 90% of the deficit after never (physical floor 540 s)');
  });
});

describe('the targets summary', () => {
  const check = (scenarioId: string, platform: 'eks' | 'sagemaker', target: string, met: boolean): TargetCheck =>
    ({ scenarioId, platform, target, value: '', met, miss: met ? '' : 'x' });
  const checks = [
    check('S0', 'eks', 'zero mode changes', true), check('S0', 'sagemaker', 'zero mode changes', true),
    check('S1', 'eks', 'time to fallback', true), check('S1', 'sagemaker', 'time to fallback', false),
    check('S2', 'eks', 'time to fallback', false), check('S2', 'sagemaker', 'time to fallback', false),
    check('S3', 'eks', 'regret', false),
  ];

  test('groups the checks by target in the order first checked, with met of checked and the scenarios that missed, per platform', () => {
    const summary = targetSummary(checks);
    expect(summary.map((t) => [t.target, t.checked, t.missed])).toEqual([['zero mode changes', 2, 0], ['time to fallback', 4, 3], ['regret', 1, 1]]);
    expect(summary[1].byPlatform).toEqual([
      { platform: 'eks', checked: 2, missedIn: ['S2'] }, { platform: 'sagemaker', checked: 2, missedIn: ['S1', 'S2'] },
    ]);
    // A target checked on one platform only is not checked (0) on the other, not met there.
    expect(summary[2].byPlatform[1]).toEqual({ platform: 'sagemaker', checked: 0, missedIn: [] });
  });
});

describe('CLI', () => {
  const root = join(__dirname, '..', '..');
  const cli = (args: string[]) => execFileSync(process.execPath, ['--require', 'ts-node/register/transpile-only', join(root, 'bin', 'sim.ts'), ...args],
    { cwd: root, encoding: 'utf8', env: { ...process.env, TS_NODE_PROJECT: join(root, 'tsconfig.json') }, stdio: ['ignore', 'pipe', 'pipe'] });

  test('run writes the HTML report, SVG charts and Markdown per platform, and prints the comparison', () => {
    const out = mkdtempSync(join(tmpdir(), 'sim-'));
    const stdout = cli(['run', 'S1', '--seeds', '2', '--workers', '2', '--policies', 'library,two-state-switch,oracle', '--out', out,
      '--param', 'durationMinutes=30', '--param', 'onsetMinute=10', '--param', 'shortageMinutes=10', '--param', 'meanRate=4']);
    expect(stdout).toContain('S1 Preferred shortage on EKS (2 seeds');
    expect(stdout).toContain('S1 Preferred shortage on SageMaker (2 seeds');
    expect(stdout).toMatch(/^library\s+\d/m);
    expect(stdout).toMatch(/^Verdict: the library's policy meets its targets in \d+ of \d+ checks on EKS and \d+ of \d+ checks on SageMaker/m);
    const html = readFileSync(join(out, 'index.html'), 'utf8');
    expect(html).toContain('<svg');
    for (const platform of ['eks', 'sagemaker']) {
      for (const chart of ['traffic-share', 'latency', 'replicas', 'modes']) expect(existsSync(join(out, `S1-${platform}-${chart}.svg`))).toBe(true);
    }
    const md = readFileSync(join(out, 'results.md'), 'utf8');
    // A one-line verdict, then the table of contents, then the details.
    expect(md.split('\n')[0]).toMatch(/^\*\*Verdict: /);
    expect(md).toContain('- [S1 Preferred shortage](#s1-preferred-shortage)');
    expect(md).toContain('| policy | SLO % EKS | SLO % SageMaker |');
    expect(md).toContain('## Targets of the library\'s policy');
    // The verdict names each missed target once, with its count, never a list of scenarios; the table says where.
    const verdictLine = stdout.split('\n').find((l) => l.startsWith('Verdict: '))!;
    expect(verdictLine).not.toMatch(/S1 (EKS|SageMaker) \(/);
    const missed = /missed, in scenario-platform pairs: (.*); each miss is in the targets table\.$/.exec(verdictLine);
    expect(missed).not.toBeNull();
    const clauses = missed![1].split(/(?<=\)), /);
    expect(new Set(clauses.map((c) => c.replace(/ \(\d+ of \d+\)$/, ''))).size).toBe(clauses.length);
    // This run misses time to fallback on both platforms: one clause, counted over both.
    expect(clauses).toContain('time to fallback <= floor + 2 control periods (2 of 2)');
    expect(md).toContain('| target | EKS | SageMaker |');
    expect(md).toContain('| time to fallback <= floor + 2 control periods | 0 of 1; missed: S1 | 0 of 1; missed: S1 |');
    expect(html).toContain('<tr class="miss"><td>time to fallback &lt;= floor + 2 control periods</td><td>0 of 1; missed: S1</td>');
  });

  test("a user's scenario file is reported without the library's targets", () => {
    const out = mkdtempSync(join(tmpdir(), 'sim-'));
    const file = join(out, 'mine.ts');
    writeFileSync(file, [
      `import { defineScenario, S1 } from ${JSON.stringify(join(root, 'lib', 'sim', 'scenarios'))};`,
      "export const scenario = defineScenario('MINE', 'My shortage', 'S1, shorter.', {}, (seed) => ({ ...S1.build(seed, " +
        "{ durationMinutes: 20, onsetMinute: 5, shortageMinutes: 5, meanRate: 3 }), id: 'MINE', title: 'My shortage' }));",
    ].join('\n'));
    const stdout = cli(['run', '--scenario-file', file, '--seeds', '1', '--workers', '1', '--platforms', 'eks', '--policies', 'library,cost-only', '--out', out]);
    expect(stdout).not.toContain('Targets of the library');
    expect(stdout).not.toContain('MISSED');
    expect(stdout).toMatch(/^Verdict: MINE on EKS: library [\d.]+% SLO at \$[\d.]+ per 1M SLO tokens/m);
    const md = readFileSync(join(out, 'results.md'), 'utf8');
    expect(md).not.toContain('Targets of the library');
    expect(md).not.toContain('SageMaker');
  });

  test('plan prints the capacity plan of a built-in service', async () => {
    const out: string[] = [];
    expect(await main(['plan', '--service', 'sd21'], { out: (l) => out.push(l), err: (l) => out.push(l) })).toBe(0);
    expect(out.join('\n')).toContain('Capacity plan for sd21');
  });
});
