import { type PolicyConfig, type PolicyState } from '../core/policy/types';
import { type ReconcilerConfig } from '../core/reconciler/config';
import { type MetricQuery, type MetricResult, pendingScaleOut } from '../core/reconciler/io';
import { POLICY_MODE_VALUE } from '../core/metrics/contract';
import { provisioningGraceFromFacts } from '../core/reconciler/from-facts';
import { type RunMemory } from '../core/reconciler/memory';
import { metricQuery } from '../core/reconciler/observe';
import { type RoutedClassFacts, type RoutingFacts } from '../core/reconciler/routing-facts';
import { rememberRun, runRecords, step } from '../core/reconciler/step';
import { routingTarget } from '../core/reconciler/targets';
import { type TargetState } from '../core/reconciler/targets/kind';
import { LATENCY_BUCKETS, histogramPercentile } from './histogram';
import { declaredTokensPerRequest, poolsOf, type ScenarioInstance, type SimClass } from './model';
import { demandReading, measuredMinute, type PlatformModel, readsEngineTokens, scenarioPlatform } from './platform';
import { type Decision, type Observation, type PolicyFactory, type RoutingPolicy } from './policy';

/** Epoch of simulated time 0: the reconciler reads epoch seconds. */
export const EPOCH = 1_767_225_600; // 2026-01-01T00:00:00Z

/**
 * The library's policy as deployed: every minute the Reconciler Lambda's pure step (`step()` in
 * lib/core/reconciler/step.ts, which calls `observe()` and `decide()`) on the GetMetricData answer CloudWatch would
 * give (`metricQuery()`'s queries, answered from the simulated minutes that are published by then: the publication
 * delay, outages as missing datapoints, the Reconciler's own metric delay), the routing target as the target API
 * would describe it, and the run memory the previous run left. The write it plans is the write the simulator makes.
 *
 * Configured as the Reconciler construct configures itself for the scenario's classes (`libraryConfig`).
 */
export function libraryPolicy(overrides: Partial<PolicyConfig> = {}, options: LibraryPolicyOptions = {}): PolicyFactory {
  return ({ scenario }): RoutingPolicy => new DeployedReconciler(scenario, overrides, options);
}

/** How the simulated reconciler's execution environment behaves, and its deployment beyond the policy configuration. */
export interface LibraryPolicyOptions {
  /**
   * Drop the run memory every this many seconds of simulated time, as a Lambda cold start does: that run rebuilds its
   * state from its own metrics (`PolicyMode`, `PolicyRamping`, `CapacityEventEntries`, `ReplicaFloor`), answered from
   * the EMF records the earlier runs printed (`runRecords`), each readable from the next minute on.
   * @default never: the environment stays warm, and the reconciler answers its own history from memory
   */
  readonly coldStartEverySeconds?: number;
  /**
   * The deployed Reconciler's `metricDelay` (`ReconcilerConfig.metricDelaySeconds`), for a run that replays a
   * deployment (the game day's prediction).
   * @default the platform model's (`PlatformModel.reconciler.metricDelaySeconds`)
   */
  readonly metricDelaySeconds?: number;
  /**
   * The deployed Reconciler's fallback graces (`ReconcilerConfig.fallbackGraceSeconds`) by the simulator's route names,
   * for a run that replays a deployment: a Reconciler deployed before them has none, and the prediction must run what
   * is deployed, not what the classes would give today.
   * @default what the Reconciler construct resolves for the scenario's classes (`provisioningGraceFromFacts`)
   */
  readonly fallbackGraceSeconds?: Readonly<Record<string, number>>;
  /**
   * The deployed Reconciler's placement (`ReconcilerConfig.placement.sensitive`), for a run that replays a deployment:
   * a sensitive service's traffic never reaches a class that does not allow it, and its preferred class is the most
   * preferred one that does.
   * @default false
   */
  readonly sensitive?: boolean;
}

/**
 * The configuration the Reconciler construct renders for the scenario's service: its facts, its platform's metric delay
 * and period, and its defaults for these classes. The provisioning grace is the construct's (`defaultProvisioningGraceSeconds`
 * from the replica-ready time the classes declare, 300 s where none does); the latency SLO is the contract's end-to-end
 * deadline (the serving constructs hand it over, and the simulator measures end-to-end latency).
 */
export function libraryConfig(
  scenario: ScenarioInstance,
  overrides: Partial<PolicyConfig> = {},
  deployed: Pick<LibraryPolicyOptions, 'metricDelaySeconds' | 'fallbackGraceSeconds' | 'sensitive'> = {},
): ReconcilerConfig {
  const platform = scenarioPlatform(scenario);
  const facts = routingFacts(scenario);
  const placement = { sensitive: deployed.sensitive ?? false };
  const counted = scenario.classes.filter((c) => readsEngineTokens(platform, c)).map((c) => c.name);
  const { periodSeconds } = platform.reconciler;
  const metricDelaySeconds = deployed.metricDelaySeconds ?? platform.reconciler.metricDelaySeconds;
  const graces = provisioningGraceFromFacts(facts, placement, metricDelaySeconds, periodSeconds);
  const fallbackGraces = deployed.fallbackGraceSeconds ?? graces.fallbacks;
  return {
    facts,
    placement,
    policy: {
      latencySloP95Ms: scenario.service.deadlineSeconds * 1000,
      // As the Reconciler construct takes the serving's: floors sized at the target the simulated autoscalers keep.
      ...(scenario.headroom !== undefined ? { headroom: scenario.headroom } : {}),
      provisioningGraceSeconds: graces.defaultSeconds,
      ...overrides,
    },
    service: scenario.id,
    tokensPerRequest: declaredTokensPerRequest(scenario),
    metricDelaySeconds,
    ...(platform.kind === 'eks' ? { clusterName: 'sim', karpenterCapacityErrors: platform.capacityErrorSignal } : {}),
    // The contract's GeneratedTokens of each class whose engine counts tokens, as the Reconciler construct compacts
    // what the EKS InferenceService hands it (`routedProducers`, lib/core/reconciler/targets/alb.ts).
    ...(counted.length > 0 ? { contractTokenCounters: counted } : {}),
    ...(Object.keys(fallbackGraces).length > 0 ? { fallbackGraceSeconds: fallbackGraces } : {}),
  };
}

/**
 * Whether the Reconciler construct renders, for the scenario's routing target, a rule that runs it as soon as the
 * target takes writes again (`writableAgain`: SageMaker's IN_SERVICE event; none for an ALB). Every policy a
 * Reconciler runs gets it: the library's, and the baselines that react (`reconciled`, lib/sim/baselines.ts).
 */
export function runsWhenWritable(scenario: ScenarioInstance): boolean {
  return targetRunsWhenWritable(routingFacts(scenario));
}

function targetRunsWhenWritable(facts: RoutingFacts): boolean {
  return routingTarget(facts).writableAgain(facts) !== undefined;
}

/** What the routing target is called in the simulated account (facts need ARNs and names; nothing is called). */
function routingFacts(scenario: ScenarioInstance): RoutingFacts {
  const facts = (c: SimClass): RoutedClassFacts => ({
    name: c.name, preferenceRank: c.preferenceRank, tokensPerSecondPerReplica: c.tokensPerSecondPerReplica, safeConcurrency: c.safeConcurrency,
    usdPerReplicaHour: c.usdPerReplicaHour, allowSensitive: c.allowSensitive, maxReplicas: c.maxReplicas, instanceType: c.instanceType,
    ...(c.replicaReadyTimeP95Seconds !== undefined ? { replicaReadyTimeP95Seconds: c.replicaReadyTimeP95Seconds } : {}),
  });
  if ((scenario.platform ?? 'eks') === 'sagemaker') {
    return {
      kind: 'sagemaker',
      endpointName: 'sim',
      endpointArn: 'arn:aws:sagemaker:us-east-1:123456789012:endpoint/sim',
      // A column is a production variant; its instance pools are the classes `routedScenario` grouped into it.
      variants: scenario.classes.map((c) => ({ variantName: c.name, classes: poolsOf(scenario, c).map(facts), maxInstances: c.maxReplicas })),
    };
  }
  return {
    kind: 'alb',
    listenerArn: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/sim/0123456789abcdef/0123456789abcdef',
    loadBalancerFullName: 'app/sim/0123456789abcdef',
    targets: scenario.classes.map((c) => ({
      class: facts(c),
      targetGroupArn: `arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/${c.name}/0123456789abcdef`,
      targetGroupFullName: `targetgroup/${c.name}/0123456789abcdef`,
      namespace: 'sim',
      deploymentName: c.name,
      nodePoolName: c.name,
    })),
  };
}

class DeployedReconciler implements RoutingPolicy {
  readonly name = 'library';
  private readonly config: ReconcilerConfig;
  private memory: RunMemory | undefined;
  /** Integer weights in force at the target, by class (what DescribeEndpoint / DescribeRules would return). */
  private inForce: Record<string, number> | undefined;
  /** Physical values of closed minutes, cached: a minute's datapoint never changes once the minute is over. */
  private readonly cache = new Map<string, number>();
  private readonly platform: PlatformModel;
  /** With cold starts: the reconciler's own metrics as its EMF records published them, by series and minute (Maximum). */
  private readonly published = new Map<string, Map<number, number>>();
  private started = false;
  private lastRunAt = 0;
  /** What the Reconciler construct renders for this kind of target: a rule that runs it when writes are taken again. */
  readonly runsWhenWritable: boolean;

  constructor(private readonly scenario: ScenarioInstance, overrides: Partial<PolicyConfig>, private readonly options: LibraryPolicyOptions) {
    this.platform = scenarioPlatform(scenario);
    this.config = libraryConfig(scenario, overrides, options);
    this.runsWhenWritable = targetRunsWhenWritable(this.config.facts);
  }

  decide(o: Observation): Decision {
    const classes = this.scenario.classes;
    const nowMs = (EPOCH + o.now) * 1000;
    const weightTotal = 100;
    // The run starts in steady operation: the reconciler has been in cost mode for an hour with the weights in force.
    this.inForce ??= Object.fromEntries(classes.map((c, i) => [c.name, Math.round(o.weights[i] * weightTotal)]));
    if (!this.started) {
      const state: PolicyState = { mode: 'cost', weights: this.inForce, modeSince: EPOCH + o.now - 3600, ramping: false };
      this.memory = { period: EPOCH + o.now - 60, state, floors: null };
      this.started = true;
    }
    const every = this.options.coldStartEverySeconds;
    // The first run past each multiple of `every` (runs fire at the Reconciler's phase of the minute, not on it).
    if (every !== undefined && Math.floor(o.now / every) > Math.floor(this.lastRunAt / every)) this.memory = undefined;
    this.lastRunAt = o.now;
    const target = this.target(o);
    const s = step(this.config, target, this.answer(o, nowMs), nowMs, this.memory);
    if (!s.ok) throw new Error(`simulated reconciler run failed: ${s.reason}: ${s.detail}`);
    const plan = s.plan;
    const outcome = plan.action === 'write' ? 'applied' : plan.action;
    this.memory = rememberRun(s, { action: outcome }, this.memory);
    if (every !== undefined) this.publish(runRecords(this.config, s, { action: outcome }, nowMs), Math.floor(o.now / 60));
    let capacity: Decision['capacityWrite'];
    if (plan.action === 'write' && plan.write.kind === 'weights') this.inForce = { ...plan.write.weights };
    if (plan.action === 'write' && plan.write.kind === 'capacity') {
      const route = plan.write.route;
      capacity = { classIndex: classes.findIndex((c) => c.name === route), desired: plan.write.to };
    }
    const floors = s.floors;
    return {
      weights: classes.map((c) => this.inForce![c.name] ?? 0),
      mode: s.decision.mode,
      reason: s.decision.reason.message,
      minReplicas: classes.map((c) => floors?.[c.name] ?? 0),
      deployedWrite: true,
      capacityWrite: capacity,
    };
  }

  /** The routing target as its describe call shows it now. */
  private target(o: Observation): TargetState {
    const classes = this.scenario.classes;
    const live = o.live;
    return {
      weights: { ...this.inForce! },
      pools: live ? Object.fromEntries(classes.map((c, i) => [c.name, this.poolCounts(c, live[i].pools)])) : {},
      replicas: live ? Object.fromEntries(classes.map((c, i) => [c.name, { ready: live[i].ready, desired: live[i].desired }])) : {},
      present: classes.map((c) => c.name),
      // DescribeScalableTargets: each variant's MinCapacity and MaxCapacity, what the endpoint construct renders (or a pin).
      ...(this.platform.kind === 'sagemaker' && live ? { scalingBounds: Object.fromEntries(classes.map((c, i) => [c.name, live[i].bounds])) } : {}),
      ...(o.healthyTargets ? { healthyTargets: Object.fromEntries(classes.map((c, i) => [c.name, o.healthyTargets![i]])) } : {}),
      ...(o.updating ? { notWritable: 'endpoint sim is Updating; weights are written on a later tick' } : {}),
    };
  }

  /** A variant's instances per type as DescribeEndpoint lists its InstancePools (CurrentInstanceCount). */
  private poolCounts(column: SimClass, ready: readonly number[]): Record<string, number> {
    return Object.fromEntries(poolsOf(this.scenario, column).map((p, pi) => [p.instanceType, ready[pi]]));
  }

  /** The GetMetricData answer: every queried signal, one datapoint per published minute of the query's range. */
  private answer(o: Observation, nowMs: number): MetricResult[] {
    const q = metricQuery(this.config, nowMs);
    const metrics = o.metrics!;
    const classIndex = new Map(this.scenario.classes.map((c, i) => [c.name, i]));
    const answered = new Set<string>();
    const results: MetricResult[] = [];
    const first = Math.floor((q.startTime - EPOCH) / 60);
    const last = Math.floor((q.endTime - EPOCH) / 60) - 1;
    for (const e of q.batch.index) {
      const ci = e.className === undefined ? undefined : classIndex.get(e.className);
      const own = e.signal === 'mode' || e.signal === 'ramping' || e.signal === 'eventEntries' || e.signal === 'floor';
      // The reconciler's own history (mode, ramp, event, floors) comes from its run memory in a warm environment, and
      // from what its earlier runs published where the environment cold-starts.
      if (own && this.options.coldStartEverySeconds !== undefined) {
        results.push(this.ownHistory(q.batch.queries.find((x) => x.Id === e.id)!, e.id, e.signal === 'mode', first, last, o.now));
      }
      if (ci === undefined || own) continue;
      // A second source of a signal (4XX and 5XX of a mixed-engine variant) would count the same rejections twice.
      const key = `${ci}:${e.signal}`;
      if (answered.has(key)) continue;
      answered.add(key);
      const timestamps: Date[] = [];
      const values: number[] = [];
      for (let m = first; m <= last; m++) {
        const v = m < 0 || metrics.readable(m, o.now) ? this.physical(o, ci, m, e.signal) : undefined;
        if (v === undefined || !Number.isFinite(v)) continue;
        timestamps.push(new Date((EPOCH + m * 60) * 1000));
        values.push(v / e.scale);
      }
      results.push({ Id: e.id, Timestamps: timestamps, Values: values });
    }
    return results;
  }

  /** Records the metrics of one run's EMF records as CloudWatch would extract them, keyed like the queries that read them. */
  private publish(records: ReadonlyArray<Record<string, unknown>>, minute: number): void {
    for (const record of records) {
      const aws = record._aws as { CloudWatchMetrics: EmfDirective[] } | undefined;
      for (const directive of aws?.CloudWatchMetrics ?? []) {
        for (const dims of directive.Dimensions) {
          for (const { Name } of directive.Metrics) {
            const key = seriesKey(directive.Namespace, Name, Object.fromEntries(dims.map((d) => [d, String(record[d])])));
            const series = this.published.get(key) ?? new Map<number, number>();
            series.set(minute, Math.max(series.get(minute) ?? -Infinity, record[Name] as number));
            this.published.set(key, series);
          }
        }
      }
    }
  }

  /**
   * One of the reconciler's own series, as GetMetricData answers it after a cold start: the minutes its earlier runs
   * published (readable from the next minute on), and before time 0 the steady state the run starts in (cost mode, no
   * ramp, no event, no floor).
   */
  private ownHistory(query: MetricQuery, id: string, isMode: boolean, first: number, last: number, now: number): MetricResult {
    const metric = query.MetricStat!.Metric;
    const dimensions = Object.fromEntries(metric.Dimensions.map((d) => [d.Name, d.Value]));
    const series = this.published.get(seriesKey(metric.Namespace, metric.MetricName, dimensions));
    const timestamps: Date[] = [];
    const values: number[] = [];
    for (let m = first; m <= last && m * 60 < now; m++) {
      const v = m < 0 ? (isMode ? POLICY_MODE_VALUE.cost : 0) : series?.get(m);
      if (v === undefined) continue;
      timestamps.push(new Date((EPOCH + m * 60) * 1000));
      values.push(v);
    }
    return { Id: id, Timestamps: timestamps, Values: values };
  }

  /** A signal's value for class `ci` in minute `m`, in the policy's units (tokens/s, milliseconds, replicas). */
  private physical(o: Observation, ci: number, m: number, signal: string): number | undefined {
    const key = `${ci}:${m}:${signal}`;
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    const s = o.metrics!.series;
    const cell = m * s.classCount + ci;
    // Before time 0: the steady state the run starts in.
    const d = m < 0 ? o.metrics!.steady(ci) : undefined;
    const minute = () => d ?? measuredMinute(s, cell);
    const reading = () => demandReading(this.platform, this.scenario.classes[ci], minute(), declaredTokensPerRequest(this.scenario));
    let v: number | undefined;
    switch (signal) {
      // EKS: HealthyHostCount, Minimum (the fewest healthy targets of the minute); no datapoint for a target group with no
      // healthy target at the minute's close (`PlatformModel.targetGroupHealth`).
      case 'readyReplicas':
        v = d ? d.readyReplicas : s.readyReplicas[cell];
        if (v === 0 && this.platform.targetGroupHealth) v = undefined;
        else if (!d && this.platform.targetGroupHealth) v = s.minReadyReplicas[cell];
        break;
      // EKS: the healthy targets the run at minute m's start counted and published (HealthyTargets): the count at the
      // close of the minute before.
      case 'readyReplicasSeen':
        if (this.platform.targetGroupHealth) v = m <= 0 ? o.metrics!.steady(ci).readyReplicas : s.readyReplicas[cell - s.classCount];
        break;
      case 'desiredReplicas': v = d ? d.desiredReplicas : s.desiredReplicas[cell]; break;
      // One run a minute: the run's pending scale-out is the minute's desired minus ready.
      case 'pendingScaleOut':
        v = pendingScaleOut(d
          ? { ready: d.readyReplicas, desired: d.desiredReplicas }
          : { ready: s.readyReplicas[cell], desired: s.desiredReplicas[cell] });
        break;
      case 'capacityErrors': v = d ? 0 : s.capacityErrors[cell]; break;
      // No completions, no latency datapoint (CloudWatch publishes none for an idle target).
      case 'latencyP95Ms': {
        const p95 = d ? d.latencyP95Seconds : histogramPercentile(s.latency.subarray(cell * LATENCY_BUCKETS), 0, 0.95);
        v = Number.isFinite(p95) ? p95 * 1000 : undefined;
        break;
      }
      // Where the engine counts tokens: vLLM counts them at every engine step and the agent stamps each delta at its
      // scrape (up to a minute later); the simulator counts a request's tokens in the minute it completes (within its
      // deadline). Both shift tokens by less than one period. A class none of whose replicas' counters published a
      // delta in the minute (none running, or each at its first sample) has no GeneratedTokens datapoint.
      case 'servedTokensPerSecond':
        v = !d && readsEngineTokens(this.platform, this.scenario.classes[ci]) && s.scrapedReplicas[cell] === 0 ? undefined : reading().served / 60;
        break;
      case 'rejectedTokensPerSecond': v = reading().rejected / 60; break;
      default: v = undefined;
    }
    if (v !== undefined) this.cache.set(key, v);
    return v;
  }
}

/** One metric directive of an EMF record (`emfRecord`, lib/core/metrics/contract.ts). */
interface EmfDirective {
  readonly Namespace: string;
  readonly Dimensions: string[][];
  readonly Metrics: Array<{ readonly Name: string }>;
}

/** A metric series' identity: namespace, name and dimensions (order-free). */
function seriesKey(namespace: string, name: string, dimensions: Record<string, string>): string {
  return JSON.stringify([namespace, name, Object.entries(dimensions).sort(([a], [b]) => a.localeCompare(b))]);
}
