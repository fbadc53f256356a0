// The default provisioning grace: one function (lib/core/policy/defaults.ts) from the declared replica-ready time of the
// class the grace rule watches, used by the Reconciler construct and the simulator alike.
import {
  defaultProvisioningGraceSeconds, fallbackProvisioningGraces, type GraceClass, graceWatchedClass, shortestSafeGraceSeconds,
} from '../../lib/core/policy/defaults';
import { windowDefaultsForPeriod } from '../../lib/core/reconciler/config';
import { graceClassesFromFacts, provisioningGraceFromFacts } from '../../lib/core/reconciler/from-facts';
import { type RoutedClassFacts, type RoutingFacts } from '../../lib/core/reconciler/routing-facts';
import { type CapacityClassSpec } from '../../lib/core/service/capacity-class';
import { checkCapacityClasses } from '../../lib/core/service/checks';
import { routingFactsProblems } from '../../lib/core/validation/serving';
import { LLAMA_CONTRACT, llamaClasses } from '../util';

const cls = (name: string, preferenceRank: number, replicaReadyTimeP95Seconds?: number, placementAllowed = true): GraceClass => ({
  name, preferenceRank, placementAllowed, ...(replicaReadyTimeP95Seconds !== undefined ? { replicaReadyTimeP95Seconds } : {}),
});

describe('defaultProvisioningGraceSeconds', () => {
  test('published windows (ALB): the shortest safe grace is the ready time in whole periods plus two, at any delay', () => {
    const safe = (ready: number, delay = 120, period = 60) => shortestSafeGraceSeconds([cls('l40s', 0, ready)], 'published', delay, period);
    expect(safe(360)).toBe(480);
    expect(safe(420)).toBe(540);
    expect(safe(361)).toBe(540);
    expect(safe(412.5)).toBe(540);
    expect(safe(360, 300)).toBe(480);
    expect(safe(420, 120, 120)).toBe(720);
    expect(safe(100)).toBe(240);
  });

  test('published windows: at 60 s periods and the default 120 s delay the default is the ceil((ready + delay) / 60) minutes of earlier builds', () => {
    for (let ready = 1; ready <= 3600; ready += 7) {
      expect(defaultProvisioningGraceSeconds([cls('l40s', 0, ready)], 'published', 120)).toBe(Math.max(300, Math.ceil((ready + 120) / 60) * 60));
    }
  });

  test('live-newest windows (SageMaker): the shortest safe grace is ceil((ready - delay) / period) + 2 periods, at least 2', () => {
    const safe = (ready: number, delay = 120, period = 60) => shortestSafeGraceSeconds([cls('l40s', 0, ready)], 'live-newest', delay, period);
    expect(safe(360)).toBe(360);
    expect(safe(359)).toBe(360);
    expect(safe(420)).toBe(420);
    expect(safe(450)).toBe(480);
    expect(safe(600, 300)).toBe(420);
    expect(safe(30, 900)).toBe(120);
    expect(safe(400, 120, 300)).toBe(900);
    expect(safe(1200, 120, 120)).toBe(1320);
    expect(shortestSafeGraceSeconds([cls('l40s', 0)], 'live-newest', 120, 60)).toBeUndefined();
  });

  test('the default: the ready time plus the delay in whole periods, raised to the safe grace where that is longer', () => {
    const grace = (window: 'published' | 'live-newest', ready: number, delay = 120, period = 60) =>
      defaultProvisioningGraceSeconds([cls('l40s', 0, ready)], window, delay, period);
    expect(grace('live-newest', 360)).toBe(480);
    expect(grace('live-newest', 420)).toBe(540);
    expect(grace('live-newest', 540)).toBe(660);
    expect(grace('live-newest', 100)).toBe(300);
    // A delay shorter than the period: the safe grace is the longer.
    expect(grace('live-newest', 420, 0)).toBe(540);
    expect(grace('live-newest', 400, 120, 300)).toBe(900);
    // EKS keeps the delay's margin at longer delays (not measured shorter), and the safe count at longer periods.
    expect(grace('published', 420, 300)).toBe(720);
    expect(grace('published', 420, 120, 120)).toBe(720);
    expect(grace('published', 100)).toBe(300);
  });

  // The window as observe() builds it on SageMaker: each run publishes the counts it read as its period's sample (a
  // period's ready Minimum and desired Maximum over its runs); a run's window is the newest n - 1 published periods,
  // ending `delay` back, then its live count. Runs come once per period at some offset, and others anywhere between (an
  // alarm's, the endpoint turning InService). A scale-out from t0 shows desired above ready from t0 until t0 + ready.
  // The shortest safe grace never sees it in every slot, at any onset, offset and extra run; one period less does.
  test.each([
    [360, 120, 60], [359, 120, 60], [420, 60, 60], [480, 300, 60], [700, 120, 120], [250, 120, 60], [3000, 600, 300], [330, 120, 60],
    [390, 120, 180], [400, 120, 300], [370, 30, 60], [250, 90, 60], [450, 120, 60],
  ])('live-newest: a scale-out of %s s never fills the shortest safe window (delay %s s, period %s s)', (ready, delay, period) => {
    const n = shortestSafeGraceSeconds([cls('l40s', 0, ready)], 'live-newest', delay, period)! / period;
    const step = Math.max(1, Math.floor(period / 12));
    const fills = (slots: number) => {
      for (let offset = 0; offset < period; offset += step) {
        for (let extra = 0; extra < period; extra += step) {
          // The runs of period p: its scheduled one and one extra.
          const runsOf = (p: number): number[] => [p + offset, p + extra];
          for (let t0 = 0; t0 < 2 * period; t0 += step) {
            for (let k = 0; k * period < t0 + ready + 2 * period; k++) {
              for (const now of runsOf(k * period)) {
                if (now < t0 || now >= t0 + ready) continue;
                const end = Math.floor((now - delay) / period) * period;
                const periods = Array.from({ length: slots - 1 }, (_, i) => end - (slots - 1 - i) * period);
                // A published period reads behind when some run in it saw the scale-out under way (desired's Maximum).
                if (periods.every((p) => runsOf(p).some((at) => at >= t0 && at < t0 + ready))) return true;
              }
            }
          }
        }
      }
      return false;
    };
    expect(fills(n)).toBe(false);
    if (n > 2) expect(fills(n - 1)).toBe(true);
  });

  test('300 s when the watched class declares no ready time, whatever the window and metric delay', () => {
    expect(defaultProvisioningGraceSeconds([cls('l40s', 0), cls('inf2', 1, 900)], 'published', 120)).toBe(300);
    expect(defaultProvisioningGraceSeconds([cls('l40s', 0)], 'live-newest', 900)).toBe(300);
  });

  test('whole periods: the default rounds up as windowDefaultsForPeriod rounds 300 s', () => {
    for (const period of [120, 300, 420]) {
      for (const window of ['published', 'live-newest'] as const) {
        expect(defaultProvisioningGraceSeconds([cls('l40s', 0)], window, 120, period)).toBe(windowDefaultsForPeriod(period).provisioningGraceSeconds ?? 300);
      }
    }
    // 361 s touches up to 5 two-minute periods: 6 x 120 s.
    expect(defaultProvisioningGraceSeconds([cls('l40s', 0, 361)], 'published', 120, 120)).toBe(720);
  });

  test('it watches the preferred class as decide() picks it: the most preferred one the placement allows', () => {
    const classes = [cls('inf2', 2, 1200), cls('l40s', 0, 360), cls('a10g', 1, 600)];
    expect(graceWatchedClass(classes)?.name).toBe('l40s');
    expect(defaultProvisioningGraceSeconds(classes, 'published', 120)).toBe(480);
    const forbidden = [cls('l40s', 0, 360, false), cls('a10g', 1, 600), cls('inf2', 2, 1200)];
    expect(graceWatchedClass(forbidden)?.name).toBe('a10g');
    expect(defaultProvisioningGraceSeconds(forbidden, 'published', 120)).toBe(720);
    // A fallback's declaration alone does not move it.
    expect(defaultProvisioningGraceSeconds([cls('l40s', 0), cls('a10g', 1, 600)], 'published', 120)).toBe(300);
  });

  test('each other allowed class that declares a ready time gets the grace it would get watched (fallbackProvisioningGraces)', () => {
    const classes = [cls('inf2', 2, 1200), cls('l40s', 0, 360), cls('a10g', 1, 600), cls('l4', 3)];
    // inf2: (1200 + 120) s in whole minutes, 22 published periods; a10g: 720 s, 12 periods (ceil(600 / 60) + 2).
    expect(fallbackProvisioningGraces(classes, 'published', 120, 60)).toEqual({ inf2: 1320, a10g: 720 });
    for (const c of classes.filter((x) => x.replicaReadyTimeP95Seconds !== undefined && x.name !== 'l40s')) {
      for (const window of ['published', 'live-newest'] as const) {
        const watched = defaultProvisioningGraceSeconds([{ ...c, preferenceRank: -1 }], window, 120, 60);
        expect(fallbackProvisioningGraces(classes, window, 120, 60)[c.name]).toBe(watched);
      }
    }
    // The watched class is the policy's grace; a forbidden class is never routed or floored.
    const forbidden = [cls('l40s', 0, 360, false), cls('a10g', 1, 600), cls('inf2', 2, 1200, false)];
    expect(fallbackProvisioningGraces(forbidden, 'published', 120, 60)).toEqual({});
    // Shorter than the watched class's is its own too, never below the 300 s default.
    expect(fallbackProvisioningGraces([cls('inf2', 0, 1200), cls('l40s', 1, 100)], 'published', 120, 60)).toEqual({ l40s: 300 });
  });
});

describe('graceClassesFromFacts', () => {
  const facts = (name: string, preferenceRank: number, ready?: number): RoutedClassFacts => ({
    name, preferenceRank, tokensPerSecondPerReplica: 1000, safeConcurrency: 8, usdPerReplicaHour: 1, allowSensitive: name !== 'inf2',
    maxReplicas: 10, instanceType: `ml.${name}.xlarge`, ...(ready !== undefined ? { replicaReadyTimeP95Seconds: ready } : {}),
  });

  test('SageMaker: a variant\'s ready time is the slowest its pools declare (a scale-out may land on any of them), on the live-newest window', () => {
    const sagemaker: RoutingFacts = {
      kind: 'sagemaker', endpointName: 'llm', endpointArn: 'arn:aws:sagemaker:us-east-1:123456789012:endpoint/llm',
      variants: [
        { variantName: 'preferred', classes: [facts('l40s', 0, 360), facts('a10g', 1, 540), facts('l4', 3)] },
        { variantName: 'fallback', classes: [facts('inf2', 2)] },
      ],
    };
    expect(graceClassesFromFacts(sagemaker).map((c) => [c.name, c.replicaReadyTimeP95Seconds])).toEqual([['preferred', 540], ['fallback', undefined]]);
    expect(provisioningGraceFromFacts(sagemaker, {}, 120, 60)).toEqual({
      defaultSeconds: 660, safeSeconds: 540, watched: expect.objectContaining({ name: 'preferred' }), fallbacks: {},
    });
    // Declared, the fallback variant is judged on its own, on the live-newest window: at a 60 s delay 600 + 60 s, where
    // an ALB's published window would need 12 whole periods (720 s).
    const withFallback = (...pools: RoutedClassFacts[]): RoutingFacts =>
      ({ ...sagemaker, variants: [sagemaker.variants[0], { variantName: 'fallback', classes: pools }] });
    expect(provisioningGraceFromFacts(withFallback(facts('inf2', 2, 600)), {}, 60, 60).fallbacks).toEqual({ fallback: 660 });
    expect(provisioningGraceFromFacts(withFallback(facts('inf2', 2, 600)), {}, 120, 60).fallbacks).toEqual({ fallback: 720 });
    // Its slowest pool counts, of those that declare one, as for the preferred variant.
    expect(provisioningGraceFromFacts(withFallback(facts('inf2', 2, 600), facts('g5', 3, 900)), {}, 120, 60).fallbacks).toEqual({ fallback: 1020 });
    expect(provisioningGraceFromFacts(withFallback(facts('inf2', 2, 600), facts('g5', 3)), {}, 120, 60).fallbacks).toEqual({ fallback: 720 });
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
    expect(provisioningGraceFromFacts(alb, {}, 120, 60)).toEqual(expect.objectContaining({ defaultSeconds: 1020, fallbacks: { l40s: 480 } }));
    // Sensitive requests never reach inf2 (allowSensitive false): l40s is the preferred class then, and inf2 needs no grace.
    expect(provisioningGraceFromFacts(alb, { sensitive: true }, 120, 60)).toEqual({
      defaultSeconds: 480, safeSeconds: 480, watched: expect.objectContaining({ name: 'l40s' }), fallbacks: {},
    });
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
