import * as fc from 'fast-check';
import { HardwareCatalog } from '../../lib/core/hardware/catalog';
import { type CapacityClass } from '../../lib/core/service/capacity-class';
import { defineCapacityClasses } from '../../lib/core/service/checks';
import {
  kvCacheGiB,
  memoryBreakdown,
  planCapacity,
  replicasAtTarget,
  usdPerMillionTokens,
} from '../../lib/core/service/sizing';
import { LLAMA_CONTRACT, llamaClasses } from '../util';

const classes = (): CapacityClass[] => defineCapacityClasses(llamaClasses(), { contract: LLAMA_CONTRACT });

describe('memory breakdown', () => {
  test('computes every term in GiB for Llama-3-8B bf16 on one L40S', () => {
    const [l40s] = classes();
    const m = memoryBreakdown(l40s, l40s.hardware);
    expect(m.usableGiB).toBeCloseTo(44.7 * 0.9);
    expect(m.kvCacheGiB).toBe(16); // 16 sequences x 8192 tokens x 128 KiB
    expect(m.requiredGiB).toBe(15 + 2 + 16 + 1);
    expect(m.shortfallGiB).toBe(0);
    expect(m.maxConcurrentSequencesThatFit).toBe(22);
  });

  test('counts NeuronCores: TP 2 on inf2.xlarge spans both cores of the 32 GiB chip', () => {
    const inf2 = classes()[2];
    const m = memoryBreakdown(inf2, inf2.hardware);
    expect(m.memoryPerUnitGiB).toBe(16);
    expect(m.usableGiB).toBeCloseTo(2 * 16 * 0.9);
  });

  test('a model without a KV cache fits any number of sequences once its weights fit', () => {
    const [l40s] = classes();
    const m = memoryBreakdown({ ...l40s, footprint: { ...l40s.footprint, kvCacheBytesPerToken: 0 } }, l40s.hardware);
    expect(m.maxConcurrentSequencesThatFit).toBe(Number.POSITIVE_INFINITY);
  });

  test('property: the largest batch reported to fit fits, and one more does not', () => {
    const hw = HardwareCatalog.builtIn().get('g6e.xlarge');
    const [base] = classes();
    fc.assert(
      fc.property(
        fc.double({ min: 1, max: 30, noNaN: true }),
        fc.integer({ min: 1, max: 32768 }),
        fc.integer({ min: 1024, max: 1048576 }),
        (weightsGiB, maxSequenceTokens, kvCacheBytesPerToken) => {
          const spec = { ...base, footprint: { ...base.footprint, weightsGiB, maxSequenceTokens, kvCacheBytesPerToken } };
          const fit = memoryBreakdown(spec, hw).maxConcurrentSequencesThatFit;
          const at = (n: number) => memoryBreakdown({ ...spec, runtime: { ...spec.runtime, maxConcurrentSequences: n } }, hw);
          if (fit > 0) expect(at(fit).shortfallGiB).toBe(0);
          expect(at(fit + 1).shortfallGiB).toBeGreaterThan(0);
        },
      ),
    );
  });

  test('kvCacheGiB is linear in every factor', () => {
    expect(kvCacheGiB(1, 1024, 1024 * 1024)).toBe(1);
    expect(kvCacheGiB(2, 1024, 1024 * 1024)).toBe(2);
  });
});

describe('capacity plan', () => {
  test('sizes each class for peak with headroom by its own envelope and prices the steady fleet', () => {
    const plan = planCapacity(LLAMA_CONTRACT, classes());
    // 20 req/s x 250 tokens = 5000 tokens/s; x 1.2 = 6000.
    expect(plan.peakTokensPerSecond).toBe(5000);
    expect(plan.plannedTokensPerSecond).toBe(6000);
    expect(plan.classes.map((c) => [c.name, c.role, c.replicasForPeak, c.minReplicas, c.maxReplicas])).toEqual([
      ['l40s', 'preferred', 5, 5, 5], // 6000 / 1200
      ['a10g', 'fallback', 15, 1, 15], // 6000 / 400
      ['inf2', 'fallback', 20, 1, 20], // 6000 / 300
    ]);
    expect(plan.classes[0].targetTokensPerSecondPerReplica).toBe(1000); // 1200 / 1.2
    expect(plan.classes[0].targetConcurrencyPerReplica).toBe(13.33); // 16 / 1.2
    expect(plan.classes[0].targetRequestsPerSecondPerReplica).toBe(4); // 1000 / 250
    expect(plan.steadyUsdPerHour).toBeCloseTo(5 * 1.861 + 1.006 + 0.7582, 4);
    expect(plan.standbyUsdPerHour).toBeCloseTo(1.006 + 0.7582, 4);
    expect(plan.steadyUsdPerMonth).toBeCloseTo(plan.steadyUsdPerHour * 730, 1);
    // Fallback quota: 24 x 400 + 24 x 300 = 16800 tokens/s >= 6000.
    expect(plan.fallbackCoverage).toBe(1);
    expect(plan.shedShareWithoutPreferred).toBe(0);
  });

  test('bounds replicas by quota and reports what the fallbacks cannot absorb', () => {
    const specs = llamaClasses().map((c) => ({ ...c, maxReplicas: 2 }));
    const plan = planCapacity(LLAMA_CONTRACT, defineCapacityClasses(specs));
    expect(plan.classes.map((c) => c.maxReplicas)).toEqual([2, 2, 2]);
    expect(plan.classes[1].saturationTokensPerSecond).toBe(800);
    // Fallbacks: 2 x 400 + 2 x 300 = 1400 tokens/s of a 5000 tokens/s peak.
    expect(plan.shedShareWithoutPreferred).toBeCloseTo(1 - 1400 / 5000, 4);
    expect(plan.fallbackCoverage).toBeCloseTo(1400 / 6000, 4);
  });

  test('cost per million tokens comes from the replica price and the envelope', () => {
    const [l40s] = classes();
    expect(usdPerMillionTokens(l40s)).toBeCloseTo((1.861 / (3600 * 1200)) * 1e6, 6);
  });

  test('property: planned replicas always carry peak plus headroom, and one fewer would not', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.01, max: 1e6, noNaN: true }), fc.double({ min: 0.1, max: 1e5, noNaN: true }), fc.double({ min: 0, max: 4, noNaN: true }),
        (demand, perReplica, headroom) => {
          const n = replicasAtTarget(demand, perReplica, headroom);
          const target = perReplica / (1 + headroom);
          expect(n * target).toBeGreaterThanOrEqual(demand * (1 - 1e-9));
          expect((n - 1) * target).toBeLessThan(demand);
        },
      ),
    );
  });

  test('property: more demand never needs fewer replicas or costs less', () => {
    const cls = classes();
    fc.assert(
      fc.property(fc.double({ min: 0.1, max: 200, noNaN: true }), fc.double({ min: 0, max: 200, noNaN: true }), (rps, extra) => {
        const a = planCapacity({ ...LLAMA_CONTRACT, peakRequestsPerSecond: rps }, cls);
        const b = planCapacity({ ...LLAMA_CONTRACT, peakRequestsPerSecond: rps + extra }, cls);
        a.classes.forEach((c, i) => expect(b.classes[i].replicasForPeak).toBeGreaterThanOrEqual(c.replicasForPeak));
        expect(b.steadyUsdPerHour).toBeGreaterThanOrEqual(a.steadyUsdPerHour);
        expect(b.fallbackCoverage).toBeLessThanOrEqual(a.fallbackCoverage);
      }),
    );
  });

  test('zero demand plans one replica per class and no shedding', () => {
    const plan = planCapacity({ ...LLAMA_CONTRACT, peakRequestsPerSecond: 0 }, classes());
    expect(plan.classes.map((c) => c.maxReplicas)).toEqual([1, 1, 1]);
    expect(plan.shedShareWithoutPreferred).toBe(0);
  });
});
