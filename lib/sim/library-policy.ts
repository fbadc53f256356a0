import { decide } from '../core/policy/decide';
import {
  type ClassSignals, type PolicyClass, type PolicyConfig, type PolicyInput, type PolicyState,
} from '../core/policy/types';
import { type ClassDatapoint } from './model';
import { platformModel } from './platform';
import { normalise, type PolicyFactory, type RoutingPolicy } from './policy';

/** Epoch of simulated time 0: decide() reads epoch seconds. */
const EPOCH = 1_767_225_600; // 2026-01-01T00:00:00Z

/**
 * The library's own `decide()` behind the simulator's RoutingPolicy interface: the same function the reconciler
 * Lambda runs, fed the same kind of signal windows (published 60 s datapoints only, with gaps where CloudWatch has
 * none), with its state carried between ticks exactly as returned.
 *
 * Configuration a user would set for this service: the latency SLO (the contract's end-to-end deadline, since the
 * simulator measures end-to-end latency) and a provisioning grace period covering the preferred class's slowest
 * replica start plus one metric delay, so that an ordinary scale-out is not mistaken for a shortage.
 */
export function libraryPolicy(overrides: Partial<PolicyConfig> = {}): PolicyFactory {
  return ({ scenario }): RoutingPolicy => {
    const classes: PolicyClass[] = scenario.classes.map((c) => ({
      name: c.name,
      preferenceRank: c.preferenceRank,
      tokensPerSecondPerReplica: c.tokensPerSecondPerReplica,
      usdPerReplicaHour: c.usdPerReplicaHour,
      placementAllowed: true,
      maxReplicas: c.maxReplicas,
    }));
    const preferred = scenario.classes.reduce((a, b) => (b.preferenceRank < a.preferenceRank ? b : a));
    const p = preferred.provisioningSeconds;
    const slowestStart = typeof p === 'number' ? p : p[1];
    const platform = platformModel(scenario.platform ?? 'eks');
    const delay = Math.max(scenario.metricDelaySeconds ?? 60, platform.reconciler.metricDelaySeconds);
    const grace = Math.max(300, Math.ceil((slowestStart + delay) / 60) * 60);
    const perRequest = (scenario.tokensPerRequest ?? 1) / 60;
    const config: Partial<PolicyConfig> = {
      latencySloP95Ms: scenario.service.deadlineSeconds * 1000,
      provisioningGraceSeconds: grace,
      ...overrides,
    };
    let state: PolicyState | undefined;
    let floors: number[] = scenario.classes.map(() => 0);
    // The weights last decided and last known in force: the deployed Reconciler reads the target's weights every run,
    // so a write the platform did not take (SageMaker Updating) is not remembered as made.
    let decided: Record<string, number> | undefined;
    let inForce: Record<string, number> | undefined;
    return {
      name: 'library',
      decide: (o) => {
        const signals: Record<string, ClassSignals> = {};
        const series = (w: ReadonlyArray<ClassDatapoint | undefined>, f: (d: ClassDatapoint) => number) => w.map((d) => (d ? f(d) : null));
        scenario.classes.forEach((c, i) => {
          const w = o.windows[i];
          const live = o.live?.[i];
          // SageMaker: the newest replica counts come from DescribeEndpoint, the history from the Reconciler's own metrics.
          const withNow = (history: Array<number | null>, value: number | undefined) =>
            (value === undefined ? history : [...history.slice(1), value]);
          signals[c.name] = {
            readyReplicas: withNow(series(w, (d) => d.readyReplicas), live?.ready),
            desiredReplicas: withNow(series(w, (d) => d.desiredReplicas), live?.desired),
            ...(o.capacityErrorSignal === false ? {} : { capacityErrors: series(w, (d) => d.capacityErrors) }),
            latencyP95Ms: series(w, (d) => (Number.isNaN(d.latencyP95Seconds) ? NaN : d.latencyP95Seconds * 1000)),
            servedTokensPerSecond: series(w, (d) => d.targetedRequests * perRequest),
            rejectedTokensPerSecond: series(w, (d) => d.serverRejected * perRequest),
          };
        });
        const input: PolicyInput = {
          now: EPOCH + o.now,
          classes,
          signals,
          demandTokensPerSecond: o.demand.map((d) => (d ? d.tokens / 60 : null)),
          config,
        };
        // The run starts in steady operation: the reconciler has been in cost mode for an hour with the weights in force.
        const previous: PolicyState = state ?? {
          mode: 'cost',
          weights: Object.fromEntries(scenario.classes.map((c, i) => [c.name, o.weights[i]])),
          modeSince: EPOCH + o.now - 3600,
          ramping: false,
        };
        if (decided && sameShares(o.weights, scenario.classes.map((c) => decided![c.name] ?? 0))) inForce = decided;
        const weightsInForce = inForce ?? previous.weights;
        const step = decide(input, { ...previous, weights: weightsInForce });
        state = step.state;
        decided = step.decision.weights;
        if (!inForce) inForce = weightsInForce;
        // Null holds the floors in force, as the reconciler leaves the platform's minimums as they are.
        const decidedFloors = step.decision.replicaFloors;
        if (decidedFloors !== null) floors = scenario.classes.map((c) => decidedFloors[c.name] ?? 0);
        return {
          weights: scenario.classes.map((c) => step.decision.weights[c.name] ?? 0),
          mode: step.decision.mode,
          reason: step.decision.reason.message,
          minReplicas: floors,
        };
      },
    };
  };
}

/** Whether weights in force (normalised) are the normalisation of `weights`. */
function sameShares(applied: readonly number[], weights: readonly number[]): boolean {
  const shares = normalise(weights);
  return applied.every((w, i) => Math.abs(w - shares[i]) <= 1e-12);
}
