import fc from 'fast-check';
import { admissionLimits } from '../../lib/core/runtime/admission';
import { type CapacityClass } from '../../lib/core/service/capacity-class';
import { defineCapacityClasses } from '../../lib/core/service/checks';
import { planCapacity } from '../../lib/core/service/sizing';
import { modelDataSource } from '../../lib/sagemaker/class-model';
import { hasInstanceStorage } from '../../lib/sagemaker/instance-storage';
import { fleetCost, planAsDeployed, planVariants, type VariantSpec } from '../../lib/sagemaker/variants';
import { LLAMA_CONTRACT } from '../util';
import { smClasses, TWO_VARIANTS } from './fixtures';

const OPTIONS = { provisionTimeoutSeconds: 900, warmFloorShare: 0.05 };

function resolved(): CapacityClass[] {
  return defineCapacityClasses(smClasses(), { contract: LLAMA_CONTRACT, platform: 'sagemaker' });
}

function layout(specs: VariantSpec[], classes = resolved(), contract = LLAMA_CONTRACT, options = OPTIONS) {
  const plan = planCapacity(contract, classes);
  return planVariants(classes, plan, specs, options);
}

describe('admission limits', () => {
  test('queue slots are what the replica drains within the queue budget at its measured rate', () => {
    const [l40s, a10g, inf2] = resolved();
    expect(admissionLimits(l40s, LLAMA_CONTRACT)).toEqual({
      serviceTimeMs: 9650,
      queueBudgetMs: 2000,
      queueSlots: 9,
      concurrencyLimit: 16,
      maxConcurrentRequests: 25,
      // 16 mean prompts (1000 tokens) within the 900 ms p95 TTFT: at least 17778 prompt tokens/s; over the 2 s queue
      // budget + 0.9 s TTFT that is 51555 prompt tokens not yet prefilled (vLLM --max-num-queued-tokens).
      prefillTokensPerSecond: 16000 / 0.9,
      maxQueuedPromptTokens: 51555,
    });
    // 400 tok/s / 250 = 1.6 req/s x 2 s = 3 slots (floor of 3.2) + 8.
    expect(admissionLimits(a10g, LLAMA_CONTRACT).maxConcurrentRequests).toBe(11);
    // 300 / 250 = 1.2 req/s x 2 s = 2 slots + 4.
    expect(admissionLimits(inf2, LLAMA_CONTRACT).maxConcurrentRequests).toBe(6);
  });

  test('the deadline shortens the queue budget below maxQueueDelayMs', () => {
    const [l40s] = resolved();
    // Service time 9650 ms; a 10.65 s deadline leaves 1000 ms of queueing: 4.8 req/s -> 4 slots.
    const tight = { ...LLAMA_CONTRACT, slo: { ...LLAMA_CONTRACT.slo, deadlineMs: 10650 } };
    expect(admissionLimits(l40s, tight)).toEqual({
      serviceTimeMs: 9650,
      queueBudgetMs: 1000,
      queueSlots: 4,
      concurrencyLimit: 16,
      maxConcurrentRequests: 20,
      prefillTokensPerSecond: 16000 / 0.9,
      maxQueuedPromptTokens: 33777, // (1 s + 0.9 s) x 17778
    });
  });

  test('property: admission never drops below safe concurrency and never grows with a tighter deadline', () => {
    const [l40s] = resolved();
    fc.assert(
      fc.property(fc.integer({ min: 1000, max: 120000 }), fc.integer({ min: 0, max: 60000 }), (deadline, shorter) => {
        const a = admissionLimits(l40s, { ...LLAMA_CONTRACT, slo: { ...LLAMA_CONTRACT.slo, deadlineMs: deadline } });
        const b = admissionLimits(l40s, { ...LLAMA_CONTRACT, slo: { ...LLAMA_CONTRACT.slo, deadlineMs: Math.max(1, deadline - shorter) } });
        return a.maxConcurrentRequests >= l40s.envelope.safeConcurrency && b.maxConcurrentRequests <= a.maxConcurrentRequests && a.queueBudgetMs >= 0;
      }),
      { seed: 42 },
    );
  });
});

describe('variant planning', () => {
  test('the reference layout', () => {
    const { variants, problems } = layout(TWO_VARIANTS);
    expect(problems).toEqual([]);
    expect(variants.map((v) => [v.name, v.role, v.minInstances, v.maxInstances, v.targetConcurrencyPerInstance, v.initialWeight])).toEqual([
      ['preferred', 'preferred', 5, 15, 6.67, 95],
      ['fallback', 'fallback', 1, 20, 3.33, 5],
    ]);
  });

  test('one variant per class: each fallback gets at most the warm floor', () => {
    const { variants, problems } = layout(['l40s', 'a10g', 'inf2'].map((c) => ({ name: c, classes: [c] })));
    expect(problems).toEqual([]);
    // The policy's cost plan at 6000 tok/s planned: l40s (cheapest per token) carries it; each ready fallback is lifted to
    // its warm floor, min(5 %, its standby's envelope share): a10g 1 x 400 = 6.7 % -> 5 %, inf2 1 x 300 = 5 %.
    expect(variants.map((v) => [v.name, v.initialWeight])).toEqual([
      ['l40s', 90],
      ['a10g', 5],
      ['inf2', 5],
    ]);
  });

  test('explicit weights are kept; all-zero weights are a problem', () => {
    const explicit = layout([{ ...TWO_VARIANTS[0], initialWeight: 3 }, { ...TWO_VARIANTS[1], initialWeight: 1 }]);
    expect(explicit.variants.map((v) => v.initialWeight)).toEqual([3, 1]);
    expect(layout([{ ...TWO_VARIANTS[0], initialWeight: 0 }, { ...TWO_VARIANTS[1], initialWeight: 0 }]).problems.map((p) => p.message)).toEqual([
      'every variant has an initial weight of 0; at least one variant must take traffic',
    ]);
  });

  test('property: for any peak and floor, weights are whole, sum to 100, and no fallback gets more than its standby carries', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.5, max: 32, noNaN: true }), fc.double({ min: 0, max: 0.2, noNaN: true }), (peak, floor) => {
        const contract = { ...LLAMA_CONTRACT, peakRequestsPerSecond: peak };
        const classes = defineCapacityClasses(smClasses(), { contract, platform: 'sagemaker' });
        const plan = planCapacity(contract, classes);
        const options = { provisionTimeoutSeconds: 900, warmFloorShare: floor };
        const { variants, problems } = planVariants(classes, plan, TWO_VARIANTS, options);
        if (problems.length > 0) return false;
        const sum = variants.reduce((s, v) => s + v.initialWeight, 0);
        const fallback = variants[1];
        // Peaks the preferred quota carries (8 x 1200 tok/s = 32 req/s planned): cost mode fills the cheapest per token
        // first and lifts the others to the warm floor, never above what a class's ready capacity carries (rounding: 1
        // unit). Beyond it the deficit is spread by ready capacity, as the reconciler would (and the endpoint refuses a
        // peak beyond every quota).
        const carried = (fallback.minInstances * fallback.pools[0].capacityClass.envelope.tokensPerSecondPerReplica) / plan.plannedTokensPerSecond;
        return (
          variants.every((v) => Number.isInteger(v.initialWeight) && v.initialWeight >= 0) &&
          variants.every((v) => v.minInstances >= 1 && v.minInstances <= v.maxInstances) &&
          sum === 100 &&
          fallback.initialWeight <= 100 * carried + 1
        );
      }),
      { seed: 7, numRuns: 200 },
    );
  });

  test('property: the scaling target never exceeds the safe concurrency of any pool of the variant', () => {
    const classes = resolved();
    fc.assert(
      fc.property(fc.shuffledSubarray(['l40s', 'a10g', 'inf2'], { minLength: 1 }), (names) => {
        const rest = ['l40s', 'a10g', 'inf2'].filter((n) => !names.includes(n));
        const specs: VariantSpec[] = [{ name: 'a', classes: names }, ...(rest.length ? [{ name: 'b', classes: rest }] : [])];
        const { variants } = layout(specs, classes);
        return variants.every((v) => v.pools.every((p) => v.targetConcurrencyPerInstance <= p.capacityClass.envelope.safeConcurrency));
      }),
      { seed: 3 },
    );
  });
});

describe('model data and instance storage', () => {
  test('a prefix is uncompressed files, a .tar.gz is an archive, anything else one object', () => {
    expect(modelDataSource('s3://b/llama/bf16/')).toEqual({ s3Uri: 's3://b/llama/bf16/', s3DataType: 'S3Prefix', compressionType: 'None' });
    expect(modelDataSource('s3://b/llama/model.tar.gz').compressionType).toBe('Gzip');
    expect(modelDataSource('s3://b/llama/model.tar')).toEqual({ s3Uri: 's3://b/llama/model.tar', s3DataType: 'S3Object', compressionType: 'None' });
  });

  test('instance storage: GPU families with NVMe have it, Inferentia2 does not', () => {
    expect(['ml.g5.xlarge', 'ml.g6e.xlarge', 'ml.p4d.24xlarge', 'ml.trn1.2xlarge'].map((t) => hasInstanceStorage(t))).toEqual([true, true, true, true]);
    expect(['ml.inf2.xlarge', 'ml.inf2.48xlarge'].map((t) => hasInstanceStorage(t))).toEqual([false, false]);
  });

  test('instance storage of a type outside the catalog: the d attribute of its family says so', () => {
    // Types a user registers with HardwareCatalog.with(): a KmsKeyId on any of them fails CreateEndpointConfig.
    const local = ['ml.c6gd.xlarge', 'ml.m6gd.large', 'ml.r6gd.xlarge', 'ml.r7gd.2xlarge', 'ml.g4dn.xlarge', 'ml.p3dn.24xlarge', 'ml.p4de.24xlarge', 'ml.c5d.large', 'ml.m6idn.xlarge', 'ml.dl1.24xlarge'];
    expect(local.filter((t) => !hasInstanceStorage(t))).toEqual([]);
    const ebsOnly = ['ml.c5.xlarge', 'ml.m7i.large', 'ml.p3.2xlarge', 'ml.c7g.xlarge', 'ml.r6g.large', 'ml.inf1.xlarge', 'ml.t3.medium'];
    expect(ebsOnly.filter((t) => hasInstanceStorage(t))).toEqual([]);
    // A family the name does not tell (a new GPU family): its hardware profile says so, and wins over the name.
    expect(hasInstanceStorage('ml.g7e.2xlarge')).toBe(false);
    expect(hasInstanceStorage('ml.g7e.2xlarge', true)).toBe(true);
    expect(hasInstanceStorage('ml.g5.xlarge', false)).toBe(false);
  });
});

describe('fleet cost', () => {
  test('only fallback variants pay for standby; lower-priority pools inside a variant cost nothing until used', () => {
    const cost = fleetCost(layout(TWO_VARIANTS).variants);
    // 5 x ml.g6e.xlarge at 2.61 + 1 x ml.inf2.xlarge at 0.99.
    expect(cost.variants.map((v) => [v.variant, v.steadyInstances, v.instanceType, v.steadyUsdPerHour, v.maxUsdPerHour])).toEqual([
      ['preferred', 5, 'ml.g6e.xlarge', 13.05, 39.15],
      ['fallback', 1, 'ml.inf2.xlarge', 0.99, 19.8],
    ]);
    expect([cost.steadyUsdPerHour, cost.standbyUsdPerHour, cost.steadyUsdPerMonth]).toEqual([14.04, 0.99, 10249.2]);
  });

  test('the plan as deployed carries the layout\'s steady fleet: no standby of its own for a lower-priority pool (review R251)', () => {
    const classes = resolved();
    const plan = planCapacity(LLAMA_CONTRACT, classes);
    const { variants } = planVariants(classes, plan, TWO_VARIANTS, OPTIONS);
    // planCapacity() prices every class as a fleet of its own: an a10g standby the pooled 'preferred' variant never runs.
    expect([plan.steadyUsdPerHour, plan.standbyUsdPerHour]).toEqual([15.4484, 2.3984]);
    const deployed = planAsDeployed(plan, variants);
    expect(deployed.classes.map((c) => [c.name, c.steadyReplicas, c.steadyInstances, c.steadyUsdPerHour])).toEqual([
      ['l40s', 5, 5, 13.05],
      ['a10g', 0, 0, 0],
      ['inf2', 1, 1, 0.99],
    ]);
    const cost = fleetCost(variants);
    expect([deployed.steadyUsdPerHour, deployed.standbyUsdPerHour, deployed.steadyUsdPerMonth])
      .toEqual([cost.steadyUsdPerHour, cost.standbyUsdPerHour, cost.steadyUsdPerMonth]);
    // Only the steady fleet changes: bounds, targets and coverage are what the variants were sized from.
    const rest = (p: typeof plan) => ({ ...p, classes: p.classes.map((c) => ({ ...c, steadyReplicas: 0, steadyInstances: 0, steadyUsdPerHour: 0 })),
      steadyUsdPerHour: 0, standbyUsdPerHour: 0, steadyUsdPerMonth: 0 });
    expect(rest(deployed)).toEqual(rest(plan));
  });

  test('the plan as deployed: a variant\'s minimum runs on its priority-1 class, and one-class variants keep the per-class numbers', () => {
    const classes = resolved();
    const plan = planCapacity(LLAMA_CONTRACT, classes);
    // a10g first in a pooled fallback variant, with a minimum of 2: both instances are a10g, inf2 runs none.
    const pooledFallback = planVariants(classes, plan, [
      { name: 'preferred', classes: ['l40s'] }, { name: 'fallback', classes: ['a10g', 'inf2'], scaling: { minInstances: 2 } },
    ], OPTIONS).variants;
    const deployed = planAsDeployed(plan, pooledFallback);
    expect(deployed.classes.map((c) => [c.name, c.steadyInstances, c.steadyUsdPerHour])).toEqual([['l40s', 5, 13.05], ['a10g', 2, 2.8168], ['inf2', 0, 0]]);
    expect([deployed.steadyUsdPerHour, deployed.standbyUsdPerHour]).toEqual([15.8668, 2.8168]);
    // One class per variant at the default minimums is planCapacity()'s layout: the same numbers.
    const one = planVariants(classes, plan, [
      { name: 'l40s', classes: ['l40s'] }, { name: 'a10g', classes: ['a10g'] }, { name: 'inf2', classes: ['inf2'] },
    ], OPTIONS).variants;
    expect(planAsDeployed(plan, one)).toEqual(plan);
  });
});
