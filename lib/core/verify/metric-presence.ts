/**
 * Does every metric the reconciler and the alarms read exist in CloudWatch under the dimension set they read? The reads
 * are the deployed reconciler's own GetMetricData batch (the same `signalPlan` / `buildQueryBatch` the handler runs),
 * each class's serving metrics the alarms read (`alarmReads`, from the module the alarms build them with) and the
 * reconciler's own metrics the run-fed alarms read (`runAlarmReads`), built from the configuration of the deployed
 * function, so every dimension value is resolved.
 *
 * ListMetrics returns a metric when it carries the dimensions asked for, even if it carries more, and only metrics with
 * datapoints in the past two weeks (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_ListMetrics.html):
 * the exact dimension set is compared here. A metric published continuously is asked for over the past three hours
 * (`RecentlyActive`): one that stopped fails, although the two weeks still list it. A metric never published yet fails
 * with that said, unless it is published only on an event a healthy deployment may never have had (a target's 5XX, a
 * capacity error): that one is SKIP, and is asked for over the two weeks (an event may be days apart). So is one only
 * an alarm reads, FILLed, that a healthy deployment lacks (a pooled variant's lower-priority pool: `absentWhile`). A
 * missing metric that is one operand of a MAX of SEARCHes (a pooled SageMaker variant's p95 latency) still fails, but
 * the reconciler then reads the other operands, and the detail says which and what is lost.
 */
import { type ReconcilerConfig } from '../reconciler/config';
import { buildQueryBatch } from '../reconciler/io';
import { signalPlan } from '../reconciler/signal-sources';
import { findPublishedMetric, type MetricStatSource } from '../metrics/aws-published';
import { parseMaxOfSearches, type SearchedMetric, searchesIn } from '../metrics/search';
import { KARPENTER_CAPACITY_ERROR_PUBLISHED_ON, KARPENTER_CAPACITY_NAMESPACE } from '../metrics/karpenter-capacity';
import { ALL_METRICS, classDimensions, dimensionMap, type MetricSpec, Metrics, serviceDimensions } from '../metrics/contract';
import { classRequests, classShedRequests, fallbackLoadReading, routeAwsDimensions, shedStatusClasses } from '../metrics/class-serving';
import { routingTarget } from '../reconciler/targets';
import { type CheckResult } from './result';
import { resolvePolicyConfig } from '../policy/defaults';

/** A metric the reconciler or the alarms read. A dimension whose value is `undefined` is searched over (any value). */
export interface ExpectedMetric {
  readonly namespace: string;
  readonly name: string;
  readonly dimensions: Readonly<Record<string, string | undefined>>;
  /** Which of the reconciler's signals read it, e.g. `l40s readyReplicas` (none when only the alarms do). */
  readonly readBy: readonly string[];
  /**
   * Which alarm series read it, e.g. `DeadlineExhaustion alarm's l40s requests` (`alarmReads`, `runAlarmReads`).
   * @default - none
   */
  readonly alarmReadBy?: readonly string[];
  /** The alarms of those series, by name, once each (`ReplicaShortage`). @default - none */
  readonly alarms?: readonly string[];
  /** Why it may be missing although the service runs and serves traffic: the contract's `MetricSpec.whyAbsent`. */
  readonly whyAbsent?: string;
  /**
   * What its readers read when it is missing: the other operands of the `MAX` of `SEARCH`es (`maxOfSearches`) that
   * every one of its queries is. Absent when a query reads it alone, or in an expression of another form.
   */
  readonly fallbacks?: readonly SearchedMetric[];
  /**
   * Why a healthy deployment may lack it, when every reader reads it FILLed (`AlarmRead.absentWhile`): its absence is
   * then SKIP, not FAIL. Absent when any reader, the reconciler's included, needs it.
   */
  readonly absentWhile?: string;
}

/** One metric as ListMetrics returns it. */
export interface ListedMetric {
  readonly Namespace?: string;
  readonly MetricName?: string;
  readonly Dimensions?: ReadonlyArray<{ readonly Name?: string; readonly Value?: string }>;
}

function key(m: Omit<ExpectedMetric, 'readBy'>): string {
  return JSON.stringify([m.namespace, m.name, Object.entries(m.dimensions).sort(([a], [b]) => a.localeCompare(b))]);
}

/** The alarms whose reads are checked (lib/control/alarms.ts: construct ids and runbook entries). */
const DEADLINE_EXHAUSTION_ALARM = 'DeadlineExhaustion';
const FALLBACK_SHARE_ALARM = 'FallbackShare';
const REPLICA_SHORTAGE_ALARM = 'ReplicaShortage';
const HEARTBEAT_ALARM = 'ReconcilerHeartbeat';

/** One metric an alarm reads: the series (`reader`, as the check names it) and the alarm. */
export interface AlarmRead {
  readonly metric: SearchedMetric;
  readonly reader: string;
  readonly alarm: string;
  /** The alarm FILLs the series, and a healthy deployment lacks it while this holds. @default - the alarm needs it */
  readonly absentWhile?: string;
}

/**
 * A variant's lower-priority pool runs no instance until the pools above it run out of capacity: "SageMaker AI tries to
 * provision instances from the highest-priority pool (priority 1)" and falls back "to the next pool in priority order"
 * on an insufficient capacity error (https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-heterogeneous.html).
 * A pool without instances serves no invocation, so nothing publishes its per-InstanceType series (inferred: the page
 * does not say what a pool without instances publishes).
 */
const POOL_WITHOUT_INSTANCES = 'FILLed by the alarm: absent while the pool runs no instance (SageMaker provisions a variant\'s '
  + 'priority-1 pool first and a lower one only when the pools above it lack capacity)';

/**
 * The serving metrics that InferenceAlarms read (lib/core/metrics/class-serving.ts, which the alarms build them from):
 * DeadlineExhaustion reads every routed class's requests and shed requests on the routed class's own series (on
 * SageMaker the variant-level one, whatever its pools), FallbackShare the same requests (by requests, or by tokens where
 * the class has no token counter) and the per-InstanceType requests of a variant's fallback pools beside a preferred
 * one (`fallbackLoadReading`: FILLed, so without them the share reads low; absent while the pool runs no instance,
 * which is SKIP: `absentWhile`). The status a routed class sheds with is its route's in the reconciler's
 * configuration: a SageMaker variant whose pools shed in both (`mixed`) is checked for both,
 * each of which SageMaker publishes with every invocation ("for each 4xx response ... a 1; otherwise, 0",
 * https://docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch.html). Checked whether or not the stack holds
 * the alarms (they may be in another stack).
 */
export function alarmReads(config: ReconcilerConfig): AlarmRead[] {
  const target = routingTarget(config.facts);
  const observed = target.observedClasses(config.facts);
  const bestRank = Math.min(...observed.map((c) => c.facts.preferenceRank));
  const searched = (m: MetricStatSource): SearchedMetric => ({ namespace: m.namespace, name: m.metricName, dimensions: m.dimensions });
  return target.routes(config.facts).flatMap((route) => {
    const classes = observed.filter((c) => route.classes.some((rc) => rc.name === c.facts.name));
    const series = { awsDimensions: routeAwsDimensions(classes) };
    const deadline = `${DEADLINE_EXHAUSTION_ALARM} alarm's ${route.name}`;
    return [
      { metric: searched(classRequests(config.facts, series)), reader: `${deadline} requests`, alarm: DEADLINE_EXHAUSTION_ALARM },
      ...shedStatusClasses([config.signals?.[route.name]?.rejectionStatus]).map((s) => ({
        metric: searched(classShedRequests(config.facts, series, s)), reader: `${deadline} shed requests`, alarm: DEADLINE_EXHAUSTION_ALARM,
      })),
      ...fallbackLoadReading(classes, bestRank).pools.map((pool) => ({
        metric: searched(classRequests(config.facts, pool)), reader: `${FALLBACK_SHARE_ALARM} alarm's ${pool.facts.name} requests`, alarm: FALLBACK_SHARE_ALARM,
        absentWhile: POOL_WITHOUT_INSTANCES,
      })),
    ];
  });
}

/**
 * The reconciler's own metrics that InferenceAlarms' run-fed alarms read (lib/control/alarms.ts `reconcilerHeartbeat`,
 * `replicaShortages`): ReconcilerHeartbeat the `Decisions` [Service] rollup, whose absence is what it pages on; each
 * routed class's ReplicaShortage its `DesiredReplicas` and `ReadyReplicas`, or where a refused scale-out is rolled back
 * (SageMaker, `RoutingTarget.scaleOutsRollBack`) its `PendingScaleOut` and `RefusedScaleOuts`. The reconciler publishes
 * them every run, so a stack whose alarms would read nothing fails here rather than on the day the alarm should fire.
 * Checked whether or not the stack holds the alarms, like `alarmReads`.
 */
export function runAlarmReads(config: ReconcilerConfig): AlarmRead[] {
  const target = routingTarget(config.facts);
  const own = (spec: MetricSpec, dims: Record<string, string>): SearchedMetric => ({
    namespace: spec.namespace, name: spec.name, dimensions: dimensionMap(spec, dims),
  });
  const shortage = target.scaleOutsRollBack
    ? [[Metrics.pendingScaleOut, 'pending scale-out'], [Metrics.refusedScaleOuts, 'refused scale-outs']] as const
    : [[Metrics.desiredReplicas, 'desired replicas'], [Metrics.readyReplicas, 'ready replicas']] as const;
  return [
    { metric: own(Metrics.decisions, serviceDimensions(config.service)), reader: `${HEARTBEAT_ALARM} alarm's decisions`, alarm: HEARTBEAT_ALARM },
    ...target.routes(config.facts).flatMap((route) => shortage.map(([spec, what]) => ({
      metric: own(spec, classDimensions(config.service, route.name)), reader: `${REPLICA_SHORTAGE_ALARM} alarm's ${route.name} ${what}`, alarm: REPLICA_SHORTAGE_ALARM,
    }))),
  ];
}

/**
 * Every metric of the reconciler's GetMetricData batch, with the signals that read it, and every serving metric the
 * alarms read (`alarmReads`), once each.
 */
export function expectedMetrics(config: ReconcilerConfig): ExpectedMetric[] {
  const period = resolvePolicyConfig(config.policy).periodSeconds;
  const batch = buildQueryBatch(signalPlan(config, period), period);
  // fallbacks: null once a query reads the metric without one.
  // absentWhile: null once a reader needs the metric.
  const byKey = new Map<string, {
    metric: SearchedMetric; readBy: string[]; alarmReadBy?: string[]; alarms?: string[];
    fallbacks?: SearchedMetric[] | null; absentWhile?: string | null;
  }>();
  batch.queries.forEach((q, i) => {
    const entry = batch.index[i];
    const reader = entry.className ? `${entry.className} ${entry.signal}` : entry.signal;
    // Every SEARCH of a metric-math expression is a metric it reads; in a MAX of SEARCHes, each the others' fallback.
    const alternatives = q.Expression ? parseMaxOfSearches(q.Expression) : undefined;
    const metrics: SearchedMetric[] = q.Expression
      ? alternatives ?? searchesIn(q.Expression)
      : q.MetricStat ? [{
        namespace: q.MetricStat.Metric.Namespace,
        name: q.MetricStat.Metric.MetricName,
        dimensions: Object.fromEntries(q.MetricStat.Metric.Dimensions.map((d) => [d.Name, d.Value])),
      }] : [];
    for (const metric of metrics) {
      const k = key(metric);
      const seen = byKey.get(k) ?? { metric, readBy: [] };
      seen.readBy.push(reader);
      const others = alternatives?.filter((a) => key(a) !== k) ?? [];
      seen.fallbacks = others.length === 0 || seen.fallbacks === null ? null
        : [...(seen.fallbacks ?? []), ...others.filter((o) => !seen.fallbacks?.some((f) => key(f) === key(o)))];
      byKey.set(k, seen);
    }
  });
  for (const { metric, reader, alarm, absentWhile } of [...alarmReads(config), ...runAlarmReads(config)]) {
    const k = key(metric);
    const seen = byKey.get(k) ?? { metric, readBy: [] };
    seen.alarmReadBy = [...seen.alarmReadBy ?? [], reader];
    seen.alarms = [...new Set([...seen.alarms ?? [], alarm])];
    const needed = seen.readBy.length > 0 || absentWhile === undefined || seen.absentWhile === null;
    seen.absentWhile = needed ? null : seen.absentWhile ?? absentWhile;
    byKey.set(k, seen);
  }
  return [...byKey.values()].map(({ metric, readBy, alarmReadBy, alarms, fallbacks, absentWhile }) => {
    const whyAbsent = ALL_METRICS.find((s) => s.namespace === metric.namespace && s.name === metric.name)?.whyAbsent;
    const optional = {
      ...(whyAbsent === undefined ? {} : { whyAbsent }), ...(fallbacks ? { fallbacks } : {}), ...(absentWhile ? { absentWhile } : {}),
    };
    return { ...metric, readBy, ...(alarmReadBy ? { alarmReadBy, alarms } : {}), ...optional };
  });
}

/** A ListMetrics request's filter, plain data shaped like the SDK's ListMetricsInput. */
export interface ListMetricsFilter {
  readonly Namespace: string;
  readonly MetricName: string;
  readonly Dimensions: Array<{ Name: string; Value?: string }>;
  readonly RecentlyActive?: typeof RECENTLY_ACTIVE;
}

/**
 * ListMetrics' one recency filter: "To filter the results to show only metrics that have had data points published in
 * the past three hours, specify this parameter with a value of PT3H. This is the only valid value for this parameter."
 * The results are "an approximation": they may include a metric last published "as much as 50 minutes more" ago, never
 * leave out one published within it (@aws-sdk/client-cloudwatch@3.1162.0 dist-types/models/models_0.d.ts:3914-3923).
 */
export const RECENTLY_ACTIVE = 'PT3H';
const RECENT_HOURS = 3;

/** The ListMetrics filter for one expected metric (names always, values where pinned), over the past two weeks. */
export function listMetricsFilter(m: ExpectedMetric): ListMetricsFilter {
  return {
    Namespace: m.namespace,
    MetricName: m.name,
    Dimensions: Object.entries(m.dimensions).map(([Name, Value]) => (Value === undefined ? { Name } : { Name, Value })),
  };
}

/**
 * The filter over the past three hours, for a metric published continuously (the reconciler's each run, the platform's
 * while the service runs or has traffic): one that stopped would still be listed for two weeks. None for a metric
 * published only on an event (`publishedOnlyOn`), which a healthy service may not have had for hours.
 */
export function recentlyActiveFilter(m: ExpectedMetric): ListMetricsFilter | undefined {
  return publishedOnlyOn(m) === undefined ? { ...listMetricsFilter(m), RecentlyActive: RECENTLY_ACTIVE } : undefined;
}

/** The listed metric that carries exactly the expected dimension names, with the pinned values. */
export function exactlyListed(expected: ExpectedMetric, listed: readonly ListedMetric[]): ListedMetric | undefined {
  const names = Object.keys(expected.dimensions);
  return listed.find((l) => {
    const dims = l.Dimensions ?? [];
    return dims.length === names.length
      && names.every((n) => dims.some((d) => d.Name === n && (expected.dimensions[n] === undefined || d.Value === expected.dimensions[n])));
  });
}

function describeSet(names: readonly string[]): string {
  return `[${[...names].sort().join(', ')}]`;
}

/**
 * The event whose first occurrence publishes this metric, or undefined when it is published without one. The fact is
 * where the metric is declared: the AWS-published table (`publishedOn`) or the capacity-error filters.
 */
export function publishedOnlyOn(m: Omit<ExpectedMetric, 'readBy'>): string | undefined {
  if (m.namespace === KARPENTER_CAPACITY_NAMESPACE) return KARPENTER_CAPACITY_ERROR_PUBLISHED_ON;
  return findPublishedMetric(m.namespace, m.name, Object.keys(m.dimensions))?.publishedOn;
}

/** The dimensions a metric searches over (any value). */
function searchedOver(m: { readonly dimensions: Readonly<Record<string, string | undefined>> }): string[] {
  return Object.entries(m.dimensions).filter(([, v]) => v === undefined).map(([k]) => k);
}

/**
 * What a metric with fallbacks costs while it is missing: its readers read the fallbacks alone. Without a dimension it
 * searches over (per-InstanceType series behind a variant-level one), the largest value of any one is lost; without a
 * coarser series beside the ones that search over more (a variant-level p95 beside per-InstanceType ones), only the fill-in.
 */
function fallbackReading(expected: ExpectedMetric, fallbacks: readonly SearchedMetric[]): string {
  const series = fallbacks.map((f) => `${f.name} under ${describeSet(Object.keys(f.dimensions))}`).join(' and ');
  const lostPer = searchedOver(expected).filter((d) => fallbacks.every((f) => !(d in f.dimensions)));
  const keptPer = [...new Set(fallbacks.flatMap(searchedOver))].filter((d) => !(d in expected.dimensions));
  const loss = lostPer.length > 0
    ? `, not per ${lostPer.join(', ')}: the largest value of any one ${lostPer.join(', ')} is lost `
      + '(one that takes few of the requests can hide in the series over all of them)'
    : keptPer.length > 0 ? `: the per-${keptPer.join(', ')} reading stays; lost is this series' fill-in for when those are missing` : '';
  const verb = expected.readBy.length === 1 ? 'reads' : 'read';
  return `the reconciler's ${expected.readBy.join(', ')} ${verb} ${series} alone (checked on its own)${loss}`;
}

/** Whose queries read a metric: "the reconciler's query reads", "the DeadlineExhaustion alarm's query reads", or several. */
function queriesOf(expected: ExpectedMetric): string {
  const whose = [...expected.readBy.length > 0 ? ["the reconciler's"] : [], ...(expected.alarms ?? []).map((a) => `the ${a} alarm's`)];
  return whose.length > 1 ? `${whose.join(' and ')} queries read` : `${whose[0]} query reads`;
}

/**
 * Pass when some listed metric carries exactly the expected dimension names, with the pinned values: among `recent`
 * (the `recentlyActiveFilter` answer) for a metric published continuously, which fails when only `listed` (the past two
 * weeks) has it; among `listed` for one published only on an event. Nothing listed is a failure, or SKIP for a metric
 * published only on an event (`publishedOnlyOn`); listed under other dimensions fails. A missing metric with fallbacks
 * (an operand of a MAX of SEARCHes) fails too, its detail saying what the reconciler then reads instead and what is lost.
 */
export function metricPresenceCheck(expected: ExpectedMetric, listed: readonly ListedMetric[], recent?: readonly ListedMetric[]): CheckResult {
  const names = Object.keys(expected.dimensions);
  const pinned = Object.entries(expected.dimensions).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${v}`);
  // A dimension searched over is `Name=*` in the id: a pooled variant's per-InstanceType p95 and its variant-level p95
  // are two checks.
  const id = `metric:${expected.namespace}:${expected.name}:`
    + Object.entries(expected.dimensions).map(([k, v]) => `${k}=${v ?? '*'}`).join(',');
  const settles = `${expected.namespace} ${expected.name} is published under ${describeSet(names)}`
    + `${pinned.length > 0 ? ` for ${pinned.join(', ')}` : ''} (read by ${[...expected.readBy, ...expected.alarmReadBy ?? []].join(', ')})`;
  const sets = listed.map((l) => (l.Dimensions ?? []).map((d) => d.Name ?? ''));
  const event = publishedOnlyOn(expected);
  const instead = expected.fallbacks ? `, so ${fallbackReading(expected, expected.fallbacks)}` : '';
  if (event === undefined && recent !== undefined) {
    if (exactlyListed(expected, recent)) {
      return { id, status: 'pass', settles, detail: `ListMetrics lists it under ${describeSet(names)} with data in the past ${RECENT_HOURS} h` };
    }
    if (exactlyListed(expected, listed) && expected.absentWhile !== undefined) {
      return {
        id, status: 'skip', settles,
        detail: `${expected.absentWhile}: ListMetrics lists it under ${describeSet(names)} in the past two weeks, not with RecentlyActive ${RECENTLY_ACTIVE}`,
      };
    }
    if (exactlyListed(expected, listed)) {
      return {
        id, status: 'fail', settles,
        detail: `last published more than ${RECENT_HOURS} h ago: ListMetrics lists it under ${describeSet(names)} in the past two weeks, not with `
          + `RecentlyActive ${RECENTLY_ACTIVE} (${expected.whyAbsent ?? 'traffic-driven metrics need traffic'})${instead}`,
      };
    }
  } else if (exactlyListed(expected, listed)) {
    return { id, status: 'pass', settles, detail: `ListMetrics lists it under ${describeSet(names)}` };
  }
  const other = [...new Set(sets.map(describeSet))];
  if (other.length === 0 && event !== undefined) {
    return { id, status: 'skip', settles, detail: `not yet published (expected until the first ${event}): ListMetrics lists no such metric` };
  }
  if (other.length === 0 && expected.absentWhile !== undefined) {
    return { id, status: 'skip', settles, detail: `${expected.absentWhile}: ListMetrics lists no such metric` };
  }
  return {
    id,
    status: 'fail',
    settles,
    detail: other.length > 0
      ? `ListMetrics lists it only under ${other.join(' and ')}: `
        + (instead ? `the reconciler reads nothing under ${describeSet(names)}${instead}` : `${queriesOf(expected)} nothing`)
      : 'ListMetrics lists no such metric: nothing published it in the past two weeks (new metrics take up to 15 minutes to appear; '
        + `${expected.whyAbsent ?? 'traffic-driven metrics need traffic'})${instead}`,
  };
}
