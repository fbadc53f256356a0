import { type ScenarioInstance } from './model';
import { type PolicyFactory } from './policy';
import { runSimulation } from './simulator';

/** One class of `servers` single-slot replicas, exponential service with mean 1 s, Poisson arrivals at c x rho. */
export function mmcScenario(servers: number, rho: number, arrivals: number): ScenarioInstance {
  const rate = servers * rho;
  return {
    id: `mmc-${servers}-${rho}`,
    title: `M/M/${servers} at rho ${rho}`,
    durationSeconds: arrivals / rate,
    classes: [{
      name: 'server', preferenceRank: 0, tokensPerSecondPerReplica: 1000, safeConcurrency: 1, usdPerReplicaHour: 1,
      allowSensitive: true, maxReplicas: servers, instanceType: 'none', provisioningSeconds: 0, minReplicas: servers,
      initialReplicas: servers, targetTokensPerSecondPerReplica: 1000, targetRequestsPerSecondPerReplica: 1, targetConcurrencyPerReplica: 1,
    }],
    workload: { pattern: 'poisson', meanRatePerSecond: rate, promptTokens: { fixed: 0 }, outputTokens: { exponentialMean: 1000 } },
    service: { ttftSeconds: Infinity, itlSeconds: 0, deadlineSeconds: Infinity, prefillWeight: 0, envelopeUtilization: 1 },
  };
}

const single: PolicyFactory = () => ({ name: 'single', decide: () => ({ weights: [1], mode: 'single', reason: 'one class' }) });

export interface MmcEstimate {
  readonly arrivals: number;
  readonly meanWait: number;
  readonly p99Wait: number;
  /** Share of arrivals that waited at all (P(wait) of Erlang C). */
  readonly waited: number;
  /** Standard errors of the mean and p99 estimates, by batch means (20 batches in arrival order). */
  readonly meanWaitStdError: number;
  readonly p99WaitStdError: number;
}

function p99(values: Float64Array): number {
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(0.99 * sorted.length))];
}

function stdError(values: number[]): number {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const variance = values.reduce((a, b) => a + (b - mean) ** 2, 0) / (values.length - 1);
  return Math.sqrt(variance / values.length);
}

/** Simulates an M/M/c system through the same simulator core the scenarios use, and measures its waits. */
export function simulateMmc(servers: number, rho: number, arrivals: number, seed: number): MmcEstimate {
  const result = runSimulation(mmcScenario(servers, rho, arrivals), single, { seed, recordWaits: true });
  const waits = result.waits ?? new Float64Array(0);
  let sum = 0;
  let waited = 0;
  for (const w of waits) {
    sum += w;
    if (w > 0) waited++;
  }
  // Batch means: waits in a heavy-traffic queue are strongly autocorrelated, so the naive standard error is far too small.
  const batches = 20;
  const size = Math.floor(waits.length / batches);
  const batchMeans: number[] = [];
  const batchP99s: number[] = [];
  for (let b = 0; b < batches; b++) {
    const batch = waits.subarray(b * size, (b + 1) * size);
    batchMeans.push(batch.reduce((a, x) => a + x, 0) / batch.length);
    batchP99s.push(p99(batch));
  }
  return {
    arrivals: waits.length,
    meanWait: sum / waits.length,
    p99Wait: p99(waits),
    waited: waited / waits.length,
    meanWaitStdError: stdError(batchMeans),
    p99WaitStdError: stdError(batchP99s),
  };
}
