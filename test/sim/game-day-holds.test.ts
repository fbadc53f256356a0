/**
 * The two holds a game day injects, as the simulator runs them for its prediction (bin/game-day-prediction.ts): on EKS a
 * NodePool limit (`AvailabilityStep.limit`: pods past it stay Pending, with no insufficient-capacity error), on
 * SageMaker a pinned scalable target (`ScalingPin`: MinCapacity = MaxCapacity, the cloud still has capacity).
 */
import { retryOnPreferred } from '../../lib/sim/baselines';
import { libraryPolicy } from '../../lib/sim/library-policy';
import { routedScenario, type ScenarioInstance } from '../../lib/sim/model';
import { type Observation, type PolicyFactory } from '../../lib/sim/policy';
import { S1 } from '../../lib/sim/scenarios';
import { runSimulation } from '../../lib/sim/simulator';

/** S1 shortened: demand rises 80% at minute 20; L40S (the preferred class, column 0) is held from 20 to 80. */
const SHORT = { durationMinutes: 100, onsetMinute: 20, shortageMinutes: 60 };
const FROM = 20 * 60;
const TO = 80 * 60;

/** Every run's observation, then retry-on-preferred's decision (all traffic it can to L40S). */
function recording(seen: Observation[]): PolicyFactory {
  return (ctx) => {
    const inner = retryOnPreferred(ctx);
    return { name: 'recording', decide: (o) => { seen.push(o); return inner.decide(o); } };
  };
}

function minutesOf(scenario: ScenarioInstance, key: 'capacityErrors' | 'desiredReplicas' | 'readyReplicas'): number[] {
  const s = runSimulation(scenario, retryOnPreferred, { seed: 1 }).series;
  return Array.from({ length: s.minutes }, (_, m) => s[key][m * s.classCount]);
}

test('EKS: a NodePool limit holds the class as a shortage does, but reports no capacity error', () => {
  const shortage = S1.build(1, SHORT);
  const held = shortage.availability!.l40s[1];
  expect(held).toEqual({ at: FROM, instances: 5 });
  const capped = shortage.availability!.l40s.map((s) => (s.at === FROM ? { ...s, limit: true } : s));
  const limited: ScenarioInstance = { ...shortage, availability: { l40s: capped } };
  // The shortage's launches past the cap are insufficient-capacity errors; the limit's are refused before any cloud is asked.
  expect(minutesOf(shortage, 'capacityErrors').slice(20, 80).some((e) => e > 0)).toBe(true);
  expect(minutesOf(limited, 'capacityErrors').every((e) => e === 0)).toBe(true);
  // Held alike: at most the cap's instances ready, and pods past it Pending (desired above ready).
  const ready = minutesOf(limited, 'readyReplicas').slice(21, 80);
  expect(Math.max(...ready)).toBe(Math.max(...minutesOf(shortage, 'readyReplicas').slice(21, 80)));
  expect(minutesOf(limited, 'desiredReplicas').slice(30, 80).some((d, i) => d > ready[i + 9])).toBe(true);
});

describe('SageMaker: a pinned variant', () => {
  const base: ScenarioInstance = { ...S1.build(1, SHORT), platform: 'sagemaker', availability: {} };
  const pinned: ScenarioInstance = { ...base, scalingPins: [{ routedClass: 'l40s', from: FROM, to: TO }] };
  const seen: Observation[] = [];
  const run = runSimulation(pinned, recording(seen), { seed: 1 });
  const s = run.series;
  const rendered = routedScenario(pinned).classes[0];

  test('holds its instances in service at the pin: neither target tracking nor a capacity write moves it, and no error or rollback', () => {
    const count = seen[20].live![0].ready;
    for (let m = 21; m < 80; m++) {
      expect(seen[m].live![0]).toMatchObject({ desired: count, ready: count, bounds: { min: count, max: count } });
      expect(s.capacityErrors[m * s.classCount]).toBe(0);
    }
    // Unpinned, the same surge grows it (the cloud has the capacity).
    const free = minutesOf(base, 'readyReplicas');
    expect(Math.max(...free.slice(25, 80))).toBeGreaterThan(count);
  });

  test('the Reconciler reads the pinned bounds, and the rendered ones before and after', () => {
    expect(seen[10].live![0].bounds).toEqual({ min: rendered.minReplicas, max: rendered.maxReplicas });
    expect(seen[90].live![0].bounds).toEqual({ min: rendered.minReplicas, max: rendered.maxReplicas });
  });

  test('pinned at the count given (a game day\'s observed count), and a scale-out past it given up', () => {
    const at: ScenarioInstance = { ...base, scalingPins: [{ routedClass: 'l40s', from: FROM, to: TO, instances: 2 }] };
    const seen2: Observation[] = [];
    runSimulation(at, recording(seen2), { seed: 1 });
    expect(seen2[30].live![0]).toMatchObject({ desired: 2, ready: 2, bounds: { min: 2, max: 2 } });
  });

  test('the deployed Reconciler\'s step never writes a pinned variant past its live bounds (the simulator would not catch it: AWS applies it)', () => {
    // UpdateEndpointWeightsAndCapacities sets the desired count past Application Auto Scaling, so the step must cap its
    // own writes at the bounds it read (`capacityCeilings`, `capacityToLower`); here every write is checked against them.
    const writes: Array<{ desired: number; min: number; max: number }> = [];
    let pinnedRuns = 0;
    const checked: PolicyFactory = (ctx) => {
      const inner = libraryPolicy()(ctx);
      return {
        name: 'checked',
        decide: (o) => {
          const d = inner.decide(o);
          if (d.mode === 'capacity' && o.live!.some((l) => l.bounds!.min === l.bounds!.max)) pinnedRuns++;
          const w = d.capacityWrite;
          if (w && w.classIndex >= 0) writes.push({ desired: w.desired, ...o.live![w.classIndex].bounds! });
          return d;
        },
      };
    };
    // L40S short (S1's cap), so capacity mode writes the fallbacks' floors; Inferentia2, a fallback, pinned meanwhile.
    runSimulation({ ...S1.build(1, SHORT), platform: 'sagemaker', scalingPins: [{ routedClass: 'inf2', from: FROM, to: TO }] }, checked, { seed: 1 });
    expect(pinnedRuns).toBeGreaterThan(10);
    expect(writes.length).toBeGreaterThan(0);
    for (const w of writes) expect(w.desired).toBeLessThanOrEqual(w.max);
    // The pinned variant gets no floor above its count (the policy plans it within the live maximum): nothing to write.
    expect(writes.filter((w) => w.min === w.max).every((w) => w.desired === w.max)).toBe(true);
  });

  test('a pin of no routed class, or on EKS, fails naming the scenario and the class', () => {
    expect(() => runSimulation({ ...base, scalingPins: [{ routedClass: 'h100', from: FROM, to: TO }] }, retryOnPreferred, { seed: 1 }))
      .toThrow("Scenario S1: scaling pin of 'h100', which is no routed class");
    expect(() => runSimulation({ ...pinned, platform: 'eks' }, retryOnPreferred, { seed: 1 }))
      .toThrow("Scenario S1: scaling pins are SageMaker's (a variant's scalable target)");
  });

  test('fails when a pin names no routed class, ends before it starts, or pins a count below 1, naming the value and what is allowed', () => {
    const run = (pin: ScenarioInstance['scalingPins']) => () => runSimulation({ ...base, scalingPins: pin }, retryOnPreferred, { seed: 1 });
    expect(run([{ routedClass: 'h100', from: FROM, to: TO }])).toThrow("Scenario S1: scaling pin of 'h100', which is no routed class; allowed: l40s, inf2, a10g");
    expect(run([{ routedClass: 'l40s', from: TO, to: FROM }]))
      .toThrow(`Scenario S1: scaling pin of 'l40s': from ${TO} s to ${FROM} s; allowed: finite seconds, 0 <= from < to`);
    expect(run([{ routedClass: 'l40s', from: FROM, to: TO, instances: 0 }]))
      .toThrow("Scenario S1: scaling pin of 'l40s': instances 0; allowed: a whole number at least 1");
    expect(() => runSimulation({ ...pinned, platform: 'eks' }, retryOnPreferred, { seed: 1 })).toThrow('this scenario runs on eks');
  });
});

test('a variant\'s deployed maximum (the facts\' maxInstances) replaces the construct\'s default; a bad one fails', () => {
  const base: ScenarioInstance = { ...S1.build(1, SHORT), platform: 'sagemaker' };
  const variants = [{ name: 'l40s', classes: ['l40s'], maxInstances: 7 }, { name: 'rest', classes: ['inf2', 'a10g'], maxInstances: 3 }];
  const routed = routedScenario({ ...base, variants });
  expect(routed.classes.map((c) => [c.name, c.maxReplicas])).toEqual([['l40s', 7], ['rest', 3]]);
  expect(() => routedScenario({ ...base, variants: [{ ...variants[0], maxInstances: 0 }, variants[1]] }))
    .toThrow("Scenario S1: variant 'l40s' maxInstances is 0; allowed: a whole number at least 1");
});
