// The default provisioning grace: one function (lib/core/policy/defaults.ts) from the declared replica-ready time of the
// class the grace rule watches, used by the Reconciler construct and the simulator alike.
import { defaultProvisioningGraceSeconds, type GraceClass, graceWatchedClass } from '../../lib/core/policy/defaults';
import { windowDefaultsForPeriod } from '../../lib/core/reconciler/config';
import { graceClassesFromFacts } from '../../lib/core/reconciler/from-facts';
import { type RoutedClassFacts, type RoutingFacts } from '../../lib/core/reconciler/routing-facts';
import { type CapacityClassSpec } from '../../lib/core/service/capacity-class';
import { checkCapacityClasses } from '../../lib/core/service/checks';
import { routingFactsProblems } from '../../lib/core/validation/serving';
import { LLAMA_CONTRACT, llamaClasses } from '../util';

const cls = (name: string, preferenceRank: number, replicaReadyTimeP95Seconds?: number, placementAllowed = true): GraceClass => ({
  name, preferenceRank, placementAllowed, ...(replicaReadyTimeP95Seconds !== undefined ? { replicaReadyTimeP95Seconds } : {}),
});

describe('defaultProvisioningGraceSeconds', () => {
  test('the simulator\'s formula: max(300, ceil((ready + metric delay) / 60) x 60)', () => {
    const grace = (ready: number, delay = 120) => defaultProvisioningGraceSeconds([cls('l40s', 0, ready)], delay);
    expect(grace(360)).toBe(480);
    expect(grace(420)).toBe(540);
    expect(grace(361)).toBe(540);
    expect(grace(412.5)).toBe(540);
    expect(grace(360, 300)).toBe(660);
    // A fast class keeps the 300 s default.
    expect(grace(100)).toBe(300);
    expect(grace(180)).toBe(300);
  });

  test('300 s when the watched class declares no ready time, whatever the metric delay', () => {
    expect(defaultProvisioningGraceSeconds([cls('l40s', 0), cls('inf2', 1, 900)], 120)).toBe(300);
    expect(defaultProvisioningGraceSeconds([cls('l40s', 0)], 900)).toBe(300);
  });

  test('whole periods: the default rounds up as windowDefaultsForPeriod rounds 300 s', () => {
    for (const period of [120, 300, 420]) {
      expect(defaultProvisioningGraceSeconds([cls('l40s', 0)], 120, period)).toBe(windowDefaultsForPeriod(period).provisioningGraceSeconds ?? 300);
    }
    // 361 + 120 = 481 s -> 540 s -> 600 s at a 2-minute period.
    expect(defaultProvisioningGraceSeconds([cls('l40s', 0, 361)], 120, 120)).toBe(600);
  });

  test('it watches the preferred class as decide() picks it: the most preferred one the placement allows', () => {
    const classes = [cls('inf2', 2, 1200), cls('l40s', 0, 360), cls('a10g', 1, 600)];
    expect(graceWatchedClass(classes)?.name).toBe('l40s');
    expect(defaultProvisioningGraceSeconds(classes, 120)).toBe(480);
    const forbidden = [cls('l40s', 0, 360, false), cls('a10g', 1, 600), cls('inf2', 2, 1200)];
    expect(graceWatchedClass(forbidden)?.name).toBe('a10g');
    expect(defaultProvisioningGraceSeconds(forbidden, 120)).toBe(720);
    // A fallback's declaration alone does not move it.
    expect(defaultProvisioningGraceSeconds([cls('l40s', 0), cls('a10g', 1, 600)], 120)).toBe(300);
  });
});

describe('graceClassesFromFacts', () => {
  const facts = (name: string, preferenceRank: number, ready?: number): RoutedClassFacts => ({
    name, preferenceRank, tokensPerSecondPerReplica: 1000, safeConcurrency: 8, usdPerReplicaHour: 1, allowSensitive: name !== 'inf2',
    maxReplicas: 10, instanceType: `ml.${name}.xlarge`, ...(ready !== undefined ? { replicaReadyTimeP95Seconds: ready } : {}),
  });

  test('SageMaker: a variant\'s ready time is the slowest its pools declare (a scale-out may land on any of them)', () => {
    const sagemaker: RoutingFacts = {
      kind: 'sagemaker', endpointName: 'llm', endpointArn: 'arn:aws:sagemaker:us-east-1:123456789012:endpoint/llm',
      variants: [
        { variantName: 'preferred', classes: [facts('l40s', 0, 360), facts('a10g', 1, 540), facts('l4', 3)] },
        { variantName: 'fallback', classes: [facts('inf2', 2)] },
      ],
    };
    expect(graceClassesFromFacts(sagemaker).map((c) => [c.name, c.replicaReadyTimeP95Seconds])).toEqual([['preferred', 540], ['fallback', undefined]]);
    expect(defaultProvisioningGraceSeconds(graceClassesFromFacts(sagemaker), 120)).toBe(660);
  });

  test('ALB: one class per target group, with the placement the Reconciler enforces', () => {
    const alb: RoutingFacts = {
      kind: 'alb', listenerArn: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/llm/0123456789abcdef/0123456789abcdef',
      loadBalancerFullName: 'app/llm/0123456789abcdef',
      targets: [facts('inf2', 0, 900), facts('l40s', 1, 360)].map((c) => ({
        class: c, targetGroupArn: `arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/${c.name}/0123456789abcdef`,
        targetGroupFullName: `targetgroup/${c.name}/0123456789abcdef`, namespace: 'llm', deploymentName: c.name, nodePoolName: c.name,
      })),
    };
    expect(defaultProvisioningGraceSeconds(graceClassesFromFacts(alb), 120)).toBe(1020);
    // Sensitive requests never reach inf2 (allowSensitive false): l40s is the preferred class then.
    expect(defaultProvisioningGraceSeconds(graceClassesFromFacts(alb, { sensitive: true }), 120)).toBe(480);
  });

  test('the facts\' ready time is checked like the envelope\'s: positive, finite, at most 3 hours', () => {
    const withReady = (ready: number): RoutingFacts => ({
      kind: 'sagemaker', endpointName: 'llm', endpointArn: 'arn:aws:sagemaker:us-east-1:123456789012:endpoint/llm',
      variants: [{ variantName: 'l40s', classes: [facts('l40s', 0, ready)] }],
    });
    expect(routingFactsProblems(withReady(10_800), 'serving.routing')).toEqual([]);
    expect(routingFactsProblems(withReady(-5), 'serving.routing').map((p) => `${p.field}: ${p.message}`)).toEqual([
      "serving.routing.classes['l40s'].replicaReadyTimeP95Seconds: is -5 s; allowed: a finite number above 0 and at most 10_800 s "
        + "(a p95 start-up time in seconds, at most what SageMaker's three start-up timeouts allow together)",
    ]);
  });
});

describe('envelope.replicaReadyTimeP95Seconds', () => {
  const problemsOf = (ready: number) => {
    const specs: CapacityClassSpec[] = llamaClasses()
      .map((c, i) => (i === 0 ? { ...c, envelope: { ...c.envelope, replicaReadyTimeP95Seconds: ready } } : c));
    return checkCapacityClasses(specs, { contract: LLAMA_CONTRACT }).problems.map((p) => `${p.className} ${p.field}: ${p.message}`);
  };

  test('a measured time in seconds up to 3 hours is accepted', () => {
    for (const ready of [0.5, 420, 10_800]) expect(problemsOf(ready)).toEqual([]);
  });

  test.each([0, -60, Number.NaN, Number.POSITIVE_INFINITY, 10_801, 420_000])('%s fails, naming the class, the value and what is allowed', (ready) => {
    expect(problemsOf(ready)).toEqual([
      `l40s envelope.replicaReadyTimeP95Seconds: is ${ready}${Number.isFinite(ready) ? ' s' : ''}; allowed: a finite number above 0 and at most 10_800 s `
        + "(a p95 start-up time in seconds, at most what SageMaker's three start-up timeouts allow together)",
    ]);
  });
});
