/**
 * One reconciler run: read the target and one GetMetricData batch, call decide(), write weights only when they
 * changed, print EMF metrics and one audit line. Clients and the clock are injected so tests drive it with mocks.
 */
import { type CloudWatchClient, GetMetricDataCommand, type MetricDataQuery, type MetricDataResult } from '@aws-sdk/client-cloudwatch';
import { type ElasticLoadBalancingV2Client } from '@aws-sdk/client-elastic-load-balancing-v2';
import { type SageMakerClient } from '@aws-sdk/client-sagemaker';
import { decide } from '../../lib/core/policy/decide';
import { policyWindowPeriods, resolvePolicyConfig } from '../../lib/core/policy/defaults';
import { type PolicyInput } from '../../lib/core/policy/types';
import { type ReconcilerConfig } from '../../lib/core/reconciler/config';
import { policyClassesFromFacts } from '../../lib/core/reconciler/from-facts';
import { assembleSignals, auditLine, capacitiesToRaise, buildQueryBatch, decisionEmf, type RouteObservation, rebuildState, type WindowFrame, windowsFromResults } from '../../lib/core/reconciler/io';
import { signalPlan } from '../../lib/core/reconciler/signal-sources';
import {
  demandWindow,
  failureAuditLine,
  failureEmf,
  type FailureReason,
  missingTargets,
  reconcilerConfigProblems,
  weightInvariantProblems,
} from '../../lib/core/reconciler/faults';
import { latest } from '../../lib/core/policy/evidence';
import { DEFAULT_RETRY, type RetryOptions, withRetries } from '../../lib/core/reconciler/retry';
import { type TargetState } from './target-state';

export interface Clients {
  readonly cloudwatch: CloudWatchClient;
  /** Present for a SageMaker target. */
  readonly sagemaker?: SageMakerClient;
  /** Present for an ALB target. */
  readonly elbv2?: ElasticLoadBalancingV2Client;
}

export interface RunOptions {
  readonly nowMs: number;
  readonly log: (line: Record<string, unknown>) => void;
  readonly retry?: Partial<RetryOptions>;
}

export interface RunResult {
  /**
   * `applied`: weights written; `unchanged`: nothing to write; `skipped`: a write was due but not possible now;
   * `failed`: an AWS call failed after retries (weights unchanged).
   */
  readonly action: 'applied' | 'unchanged' | 'skipped' | 'failed';
  /** Why a run failed (the `Reason` of its `ReconcilerFailures` datapoint). */
  readonly reason?: FailureReason;
  readonly detail?: string;
  readonly weights?: Readonly<Record<string, number>>;
}

/** Reads and writes one kind of target. Loaded on demand: each pulls in only its own SDK client's commands. */
interface TargetIo {
  readTarget(config: ReconcilerConfig, clients: Clients): Promise<TargetState>;
  writeWeights(config: ReconcilerConfig, clients: Clients, target: TargetState, weights: Readonly<Record<string, number>>): Promise<void>;
  /** SageMaker only (the ALB target reports no desired counts, so nothing is ever raised there). */
  raiseCapacity?(config: ReconcilerConfig, clients: Clients, variantName: string, instances: number): Promise<void>;
}

function targetIo(config: ReconcilerConfig): Promise<TargetIo> {
  return config.facts.kind === 'sagemaker' ? import('./sagemaker-target') : import('./alb-target');
}

/**
 * One run. Whatever goes wrong (an invalid configuration, facts that no longer match the target, an AWS error, a bug),
 * the run writes no weight it cannot stand behind, prints an audit line and a `ReconcilerFailures` EMF datapoint (which
 * the construct's failure alarm watches), and returns `failed`; it never throws before its audit line.
 */
export async function reconcile(config: ReconcilerConfig, clients: Clients, options: RunOptions): Promise<RunResult> {
  const service = typeof config?.service === 'string' && config.service.length > 0 ? config.service : 'unknown';
  const fail = (reason: FailureReason, detail: string, context: Record<string, unknown> = {}): RunResult => {
    options.log(failureEmf(service, reason, options.nowMs));
    options.log(failureAuditLine(Math.floor(options.nowMs / 1000), reason, detail, context));
    return { action: 'failed', reason, detail };
  };
  const problems = reconcilerConfigProblems(config);
  if (problems.length > 0) return fail('invalid-config', `weights unchanged: invalid configuration: ${problems.join('; ')}`);
  try {
    return await reconcileChecked(config, clients, options, fail);
  } catch (error) {
    return fail('internal-error', `weights unchanged: ${describe(error)}`);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

type Fail = (reason: FailureReason, detail: string, context?: Record<string, unknown>) => RunResult;

async function reconcileChecked(config: ReconcilerConfig, clients: Clients, options: RunOptions, fail: Fail): Promise<RunResult> {
  const policy = resolvePolicyConfig(config.policy);
  const period = policy.periodSeconds;
  const retry: RetryOptions = { ...DEFAULT_RETRY, ...options.retry };
  const now = Math.floor(options.nowMs / 1000 / period) * period;

  let target: TargetState;
  let results: MetricDataResult[];
  const slots = policyWindowPeriods(policy);
  const signalsEnd = Math.floor((options.nowMs / 1000 - config.metricDelaySeconds) / period) * period;
  const start = signalsEnd - slots * period;
  // One frame up to the end of the current period: external signals use its first `slots` periods, the reconciler's
  // own history all of it, including a decision an earlier run already recorded in this period (the ramp bound is per
  // period, however many runs share it).
  const frame: WindowFrame = { start, periodSeconds: period, slots: (now - start) / period + 1 };
  const batch = buildQueryBatch(signalPlan(config, period), period);
  const io = await targetIo(config);
  try {
    target = await withRetries(() => io.readTarget(config, clients), retry);
    results = await withRetries(() => getMetricData(clients.cloudwatch, batch.queries as MetricDataQuery[], start, now + period), retry);
  } catch (error) {
    return fail('aws-error', `weights unchanged: ${describe(error)}`);
  }
  const missing = missingTargets(config.facts, target.present);
  if (missing.length > 0) {
    const what = config.facts.kind === 'sagemaker' ? `variant(s) of endpoint ${config.facts.endpointName}` : `target group(s) of listener ${config.facts.listenerArn}`;
    return fail('target-mismatch',
      `weights unchanged: the routing facts name ${missing.map((m) => `'${m}'`).join(', ')}, not among the ${what} ` +
        `(it holds: ${target.present.map((m) => `'${m}'`).join(', ') || 'none'}); redeploy the construct so facts and target match`,
      { weights: target.weights });
  }

  const classes = policyClassesFromFacts(config.facts, config.placement, target.pools);
  const windows = windowsFromResults(results, batch, frame);
  const names = classes.map((c) => c.name);
  const all = assembleSignals(windows, batch, names);
  // A class holding weight that reports no demand while others do is missing data, not low demand.
  const demand = demandWindow(all.signals, names, frame.slots, target.weights);
  // External signals end `metricDelaySeconds` ago; cut them there so a not-yet-published period is not read as missing.
  const cut = (w: ReadonlyArray<number | null> | undefined) => (w ?? []).slice(0, slots);
  const signals: PolicyInput['signals'] = Object.fromEntries(
    names.map((n) => {
      const s = all.signals[n];
      const observed = target.replicas[n];
      // SageMaker: the newest replica counts come from DescribeEndpoint, the history from our own metrics.
      const withNow = (w: ReadonlyArray<number | null>, value: number | undefined) =>
        value === undefined ? cut(w) : [...cut(w).slice(1), value];
      return [n, {
        readyReplicas: withNow(s.readyReplicas, observed?.ready),
        desiredReplicas: withNow(s.desiredReplicas, observed?.desired),
        capacityErrors: cut(s.capacityErrors),
        latencyP95Ms: cut(s.latencyP95Ms),
        servedTokensPerSecond: cut(s.servedTokensPerSecond),
        rejectedTokensPerSecond: cut(s.rejectedTokensPerSecond),
      }];
    }),
  );
  const own = (signal: 'mode' | 'ramping') => windows.get(batch.index.find((e) => e.signal === signal)!.id)!;
  const previous = rebuildState(own('mode'), own('ramping'), target.weights, frame, now, policy);
  const input: PolicyInput = { now, classes, signals, demandTokensPerSecond: cut(demand), config: config.policy };
  const { decision, state } = decide(input, previous);

  const broken = weightInvariantProblems(decision.weights, classes);
  if (broken.length > 0) return fail('internal-error', `weights unchanged: the decision breaks a routing invariant: ${broken.join('; ')}`);

  // SageMaker: a replica floor raises a variant's desired instance count (EKS: KEDA reads the ReplicaFloor metric).
  // UpdateEndpointWeightsAndCapacities changes the weights of any variants *or* the capacity of one, and leaves the
  // endpoint Updating: weights go first (routing is the fast lever), one capacity per run after them.
  const raise = capacitiesToRaise(decision.replicaFloors, target.replicas)[0];
  let result: RunResult;
  if (!decision.weightsChanged && !raise) {
    result = { action: 'unchanged', weights: decision.weights };
  } else if (target.notWritable) {
    result = { action: 'skipped', detail: target.notWritable, weights: target.weights };
  } else if (decision.weightsChanged) {
    try {
      await withRetries(() => io.writeWeights(config, clients, target, decision.weights), retry);
      result = { action: 'applied', weights: decision.weights };
    } catch (error) {
      result = { action: 'failed', reason: 'aws-error', detail: `weights unchanged: ${describe(error)}`, weights: target.weights };
    }
  } else {
    const detail = `desired instances of ${raise.name} raised from ${raise.from} to its replica floor ${raise.to}`;
    try {
      await withRetries(() => io.raiseCapacity!(config, clients, raise.name, raise.to), retry);
      result = { action: 'applied', detail, weights: decision.weights };
    } catch (error) {
      result = { action: 'failed', reason: 'aws-error', detail: `${detail} failed: ${describe(error)}`, weights: target.weights };
    }
  }
  // Record what is in force: the new weights if written, the old ones otherwise (the next run reads them back).
  const inForce = { ...decision, weights: result.weights ?? decision.weights };
  const recorded = result.action === 'applied' || result.action === 'unchanged' ? state : { ...state, weights: target.weights };
  const written = result.action === 'applied' && decision.weightsChanged;
  const emf = decisionEmf(inForce, recorded, input, config.service, options.nowMs, policy.weightTotal, written, observed(config, target, signals));
  for (const record of emf) options.log(record);
  if (result.reason) options.log(failureEmf(config.service, result.reason, options.nowMs));
  options.log(auditLine(input, previous, decision, recorded, { action: result.action, detail: result.detail }));
  return result;
}

/** SageMaker: what DescribeEndpoint showed per variant, with ready instances per pool named by the pool's class. */
function observed(config: ReconcilerConfig, target: TargetState, signals: PolicyInput['signals']): Record<string, RouteObservation> {
  const out: Record<string, RouteObservation> = {};
  if (config.facts.kind === 'alb') {
    // EKS: the replica counts are the newest datapoints just read (ALB healthy hosts, Container Insights desired);
    // republishing them gives the contract's ReadyReplicas/DesiredReplicas one source on both paths (dashboards,
    // replica-shortage alarms).
    for (const { class: cls } of config.facts.targets) {
      const ready = latest(signals[cls.name]?.readyReplicas);
      const desired = latest(signals[cls.name]?.desiredReplicas);
      if (ready !== null && desired !== null) out[cls.name] = { ready, desired };
    }
    return out;
  }
  for (const v of config.facts.variants) {
    const replicas = target.replicas[v.variantName];
    if (!replicas) continue;
    const counts = target.pools[v.variantName] ?? {};
    out[v.variantName] = { ...replicas, pools: Object.fromEntries(v.classes.map((c) => [c.name, counts[c.instanceType] ?? 0])) };
  }
  return out;
}

async function getMetricData(cloudwatch: CloudWatchClient, queries: MetricDataQuery[], start: number, end: number): Promise<MetricDataResult[]> {
  const byId = new Map<string, MetricDataResult>();
  let nextToken: string | undefined;
  // One batch; NextToken only appears past 100,800 datapoints, but follow it rather than silently truncate.
  do {
    const page = await cloudwatch.send(new GetMetricDataCommand({
      MetricDataQueries: queries,
      StartTime: new Date(start * 1000),
      EndTime: new Date(end * 1000),
      ScanBy: 'TimestampAscending',
      NextToken: nextToken,
    }));
    for (const r of page.MetricDataResults ?? []) {
      const prior = byId.get(r.Id!);
      byId.set(r.Id!, prior
        ? { ...prior, Timestamps: [...(prior.Timestamps ?? []), ...(r.Timestamps ?? [])], Values: [...(prior.Values ?? []), ...(r.Values ?? [])] }
        : r);
    }
    nextToken = page.NextToken;
  } while (nextToken);
  return [...byId.values()];
}

