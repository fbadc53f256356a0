// A simulated replica reproduces the envelope its class declares: offered its tokens/s, it holds what the library
// plans it holds in flight there (lib/sim/envelope-calibration.ts, `inFlightAtEnvelope`).
import { inFlightAtEnvelope, planCapacity } from '../../lib/core/service/sizing';
import { calibratedSlotRate, type EnvelopeCalibrationInput } from '../../lib/sim/envelope-calibration';
import { histogramPercentile, LATENCY_BUCKETS } from '../../lib/sim/histogram';
import { type ScenarioInstance, type SimClass } from '../../lib/sim/model';
import { type PolicyFactory } from '../../lib/sim/policy';
import { H8, P1, S1 } from '../../lib/sim/scenarios';
import { llamaChatService, sd21Service } from '../../lib/sim/services';
import { runSimulation } from '../../lib/sim/simulator';
import { tokenDistributionMean } from '../../lib/sim/workload';

const single: PolicyFactory = () => ({ name: 'single', decide: () => ({ weights: [1], mode: 'single', reason: 'one class' }) });

/**
 * One replica of the scenario's class, alone, offered its envelope's tokens/s as Poisson arrivals of the workload it
 * was measured on. Nothing bounds or drops its queue (the load test's admission bound is taken as not reached).
 */
function loadTest(scenario: ScenarioInstance, name: string, seconds: number): ScenarioInstance {
  const spec = scenario.classes.find((c) => c.name === name)!;
  const { admission: _admission, engine: _engine, ...rest } = spec;
  const cls: SimClass = { ...rest, preferenceRank: 0, minReplicas: 1, maxReplicas: 1, initialReplicas: 1 };
  const measuredOn = scenario.envelopeWorkload ?? scenario.workload;
  return {
    ...scenario,
    durationSeconds: seconds,
    classes: [cls],
    availability: undefined,
    interruptions: undefined,
    capacityEvents: undefined,
    speedFactors: undefined,
    workload: {
      pattern: 'poisson', meanRatePerSecond: cls.tokensPerSecondPerReplica / tokenDistributionMean(measuredOn.outputTokens),
      promptTokens: measuredOn.promptTokens, outputTokens: measuredOn.outputTokens,
    },
  };
}

/** Mean requests in flight over the run, past its first ten minutes. */
function meanInFlight(scenario: ScenarioInstance, seeds: readonly number[]): number {
  let sum = 0;
  let minutes = 0;
  for (const seed of seeds) {
    const s = runSimulation(scenario, single, { seed }).series;
    for (let m = 10; m < s.minutes; m++, minutes++) sum += s.inFlight[m];
  }
  return sum / minutes;
}

describe('each class\'s replica reproduces its declared envelope in the simulator itself', () => {
  test.each([
    ['S1', 'l40s'],
    ['S1', 'inf2'],
    ['P1', 'inf2'],
    ['P1', 'l4-triton'],
  ])('%s %s: at its tokens/s it holds its planned in-flight count', (id, name) => {
    const scenario = loadTest((id === 'S1' ? S1 : P1).build(1), name, 4 * 3600);
    const planned = scenario.classes[0].envelopeInFlight!;
    const held = meanInFlight(scenario, [1, 2, 3]);
    expect(held).toBeGreaterThan(planned * 0.9);
    expect(held).toBeLessThan(planned * 1.1);
  });

  test('the planned in-flight count is the safe concurrency, or fewer where the envelope\'s rate and latency say so', () => {
    const llama = llamaChatService();
    const sd21 = sd21Service();
    const at = (svc: typeof llama, name: string) =>
      inFlightAtEnvelope(svc.classes.find((c) => c.name === name)!.envelope, svc.contract.requestShape.meanOutputTokens);
    // L40S: 5.6 requests/s x 8.4 s (p95 TTFT 0.9 s + 214.5 tokens x 35 ms) = 47, above its 16.
    expect(at(llama, 'l40s')).toBe(16);
    // P1's Inferentia2: 1.75 images/s answered within 0.9 s hold 1.575, where it declares 2 (Little's law rounded up).
    expect(at(sd21, 'inf2')).toBeCloseTo(1.575, 6);
    // And SageMaker's concurrency target follows it: 1.575 / 1.2.
    expect(sd21.plan.classes.find((c) => c.name === 'inf2')!.targetConcurrencyPerReplica).toBe(1.31);
    // An answer of many tokens with no ITL measured has no known service time: no bound (review R262: a streaming class
    // under a contract without an ITL SLO read as answering at its first token, its target 4.2 instead of 13.33).
    const noItl = llama.classes.map((c) => ({ ...c, envelope: { ...c.envelope, itlP95Ms: undefined } }));
    const contract = { ...llama.contract, slo: { ttftP95Ms: llama.contract.slo.ttftP95Ms, deadlineMs: llama.contract.slo.deadlineMs } };
    expect(planCapacity(contract, noItl).classes.find((c) => c.name === 'l40s')!.targetConcurrencyPerReplica).toBe(13.33);
  });

  test('its latencies are what its slots and queue give: harsher than P1\'s declared p95, inside the LLM budget (review R261)', () => {
    // The known gap, pinned so that a change to the calibration shows in it: at its envelope a P1 replica's mean
    // latency is the 0.9 s its envelope records as p95, so its p95 is near twice that.
    const p95 = (id: 'S1' | 'P1', name: string) => {
      const scenario = loadTest((id === 'S1' ? S1 : P1).build(1), name, 4 * 3600);
      const s = runSimulation(scenario, single, { seed: 1 }).series;
      const total = new Float64Array(LATENCY_BUCKETS);
      for (let m = 10; m < s.minutes; m++) for (let b = 0; b < LATENCY_BUCKETS; b++) total[b] += s.latency[m * LATENCY_BUCKETS + b];
      return histogramPercentile(total, 0, 0.95);
    };
    expect(p95('P1', 'inf2')).toBeGreaterThan(1.4);
    expect(p95('P1', 'inf2')).toBeLessThan(2.0);
    // L40S: 95% of answers within 5.8 s, where its p95 TTFT + mean output x p95 ITL allow 8.4 s for a mean answer.
    expect(p95('S1', 'l40s')).toBeLessThan(8.4);
  });

  test('an explicit envelopeUtilization is a what-if that replaces the calibration', () => {
    const scenario = loadTest(P1.build(1), 'inf2', 4 * 3600);
    // The one-number model of stop 62 and before: at its envelope an Inferentia2 image took 0.85 x 2 / 1.75 = 0.97 s
    // of a slot, and the replica held more than twice the 1.575 its rate and latency allow.
    const old = { ...scenario, service: { ...scenario.service, envelopeUtilization: 0.85 } };
    expect(meanInFlight(old, [1])).toBeGreaterThan(2 * 1.575);
  });
});

describe('calibratedSlotRate', () => {
  const s1 = S1.build(1);
  const l40s = s1.classes[0];
  const input: EnvelopeCalibrationInput = {
    tokensPerSecondPerReplica: l40s.tokensPerSecondPerReplica, safeConcurrency: l40s.safeConcurrency, inFlight: 16,
    promptTokens: s1.workload.promptTokens, outputTokens: s1.workload.outputTokens, prefillWeight: s1.service.prefillWeight, workNorm: 0.8,
  };
  // At the envelope's load, the share of the replica's slots busy: tokens/s x work per token / (slots x slot rate).
  const utilisation = (i: EnvelopeCalibrationInput) => {
    const workPerToken = (tokenDistributionMean(i.outputTokens) + i.prefillWeight * tokenDistributionMean(i.promptTokens)) * i.workNorm
      / tokenDistributionMean(i.outputTokens);
    return (i.tokensPerSecondPerReplica * workPerToken) / (i.safeConcurrency * calibratedSlotRate(i));
  };

  test('below saturation at the envelope, and faster for a replica that holds fewer in flight there', () => {
    expect(utilisation(input)).toBeLessThan(1);
    expect(utilisation({ ...input, inFlight: 12 })).toBeLessThan(utilisation(input));
    expect(utilisation({ ...input, inFlight: 20 })).toBeGreaterThan(utilisation(input));
  });

  test('a token is as fast whatever the run\'s work units: H8\'s longer answers do not slow its replicas', () => {
    const a = calibratedSlotRate(input);
    const b = calibratedSlotRate({ ...input, workNorm: 0.95 });
    expect(b / 0.95).toBeCloseTo(a / 0.8, 3);
    // H8 calibrates on the workload the contract declares, not the one it serves.
    const h8 = H8.build(1);
    expect(h8.envelopeWorkload?.outputTokens).toEqual(s1.workload.outputTokens);
    expect(h8.workload.outputTokens).not.toEqual(s1.workload.outputTokens);
  });

  test('deterministic, and refuses an envelope it cannot calibrate to rather than search forever', () => {
    expect(calibratedSlotRate({ ...input, inFlight: 15 })).toBe(calibratedSlotRate({ ...input, inFlight: 15 }));
    expect(() => calibratedSlotRate({ ...input, tokensPerSecondPerReplica: 0 })).toThrow(/tokens\/s per replica 0 \(must be a positive number\)/);
    expect(() => calibratedSlotRate({ ...input, outputTokens: { fixed: 0 } })).toThrow(/mean output tokens 0/);
    expect(() => calibratedSlotRate({ ...input, inFlight: NaN })).toThrow(/in-flight requests at the envelope NaN/);
    // The simulator's replica has the safe concurrency's whole requests as slots (`slotsPerReplica`): below 1, none.
    expect(() => calibratedSlotRate({ ...input, safeConcurrency: 0.5 }))
      .toThrow(/safe concurrency 0.5 \(must be at least 1: a replica needs a slot\)/);
  });
});
