/**
 * The AWS serving metrics the alarms, the dashboard and verify read outside the reconciler: the requests that reached a
 * series and the requests its servers shed, Sum. Each capacity class has its own series (`observedClasses` of its
 * routing target: an ALB target group, a SageMaker variant, or with several instance pools the pool's `InstanceType`
 * series); a routed class has the series all its classes share (`routeAwsDimensions`). InferenceAlarms' DeadlineExhaustion
 * and FallbackShare read the routed classes' series (lib/control/service-metrics.ts `routeRequests`, `routeShedRequests`,
 * `fallbackShare`), FallbackShare its fallback pools' own series too (`fallbackLoadReading`); the dashboard draws each class's.
 *
 * Pure TypeScript (no aws-cdk-lib).
 */
import { type RoutingFacts } from '../reconciler/routing-facts';
import { routingTarget } from '../reconciler/targets';
import { type ObservedClassFacts } from '../reconciler/targets/kind';
import { type MetricStatSource } from './aws-published';

/** A series of AWS serving metrics: a capacity class's, or a routed class's (`routeAwsDimensions`). */
export interface ServingSeries {
  readonly awsDimensions: Readonly<Record<string, string>>;
}

/** Requests that reached the series: SageMaker Invocations or ALB RequestCount, Sum. */
export function classRequests(facts: RoutingFacts, series: ServingSeries): MetricStatSource {
  const { namespace, requests } = routingTarget(facts).servingMetrics;
  return { namespace, metricName: requests, dimensions: { ...series.awsDimensions }, stat: 'Sum' };
}

/**
 * Requests the series' servers shed, in one status class (`shedStatusClasses`: TGI 429 is 4xx, the others 503):
 * SageMaker Invocation4XX/5XXErrors or ALB HTTPCode_Target_4XX/5XX_Count, Sum.
 */
export function classShedRequests(facts: RoutingFacts, series: ServingSeries, rejectionStatus: '4xx' | '5xx'): MetricStatSource {
  const { namespace, clientErrors, serverErrors } = routingTarget(facts).servingMetrics;
  return { namespace, metricName: rejectionStatus === '4xx' ? clientErrors : serverErrors, dimensions: { ...series.awsDimensions }, stat: 'Sum' };
}

/**
 * The status classes servers shed in, given each one's `rejectionStatus` (unset is 5xx; `mixed`, a SageMaker variant
 * whose pools differ in the reconciler's configuration, is both): one metric each, 4xx first.
 */
export function shedStatusClasses(statuses: Iterable<'4xx' | '5xx' | 'mixed' | undefined>): Array<'4xx' | '5xx'> {
  const all = new Set([...statuses].flatMap((s) => (s === 'mixed' ? ['4xx', '5xx'] as const : [s ?? '5xx'])));
  return (['4xx', '5xx'] as const).filter((s) => all.has(s));
}

/**
 * A routed class's series: the dimensions all its classes' series share. One class (an ALB target group, a SageMaker
 * variant without pools) is its own series. A variant's instance pools are its variant-level series
 * [EndpointName, VariantName] plus an `InstanceType` ("In addition, CloudWatch publishes these metrics with an
 * InstanceType dimension", https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-heterogeneous.html,
 * "Monitoring instance pools"), so what they share is the variant-level series, which SageMaker documents for every
 * variant ("EndpointName, VariantName: Filters endpoint invocation metrics for a ProductionVariant of the specified
 * endpoint and variant", https://docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch.html, "Dimensions for
 * endpoint invocation metrics") and the reconciler reads a variant's requests and sheds on. The per-type series may be
 * missing on a deployment (lib/core/reconciler/targets/sagemaker.ts `signalSources`); this one is not.
 */
export function routeAwsDimensions(classes: readonly ServingSeries[]): Record<string, string> {
  const [first, ...others] = classes;
  return Object.fromEntries(Object.entries(first?.awsDimensions ?? {}).filter(([k, v]) => others.every((c) => c.awsDimensions[k] === v)));
}

/**
 * How the fallback share reads a routed class's fallback load (classes ranked below `bestRank`): a route with no class of
 * the best rank is fallback as a whole, read on its own series (`whole`); one that holds such a class beside fallback
 * classes (a SageMaker variant's lower-priority instance pools) reads those on their own series (`pools`), which the
 * share FILLs with 0: a missing per-type series then leaves that load out of the share (it reads low, never high), while
 * the total it is divided by is the routes' own series.
 */
export function fallbackLoadReading<C extends ObservedClassFacts>(classes: readonly C[], bestRank: number): { whole: boolean; pools: C[] } {
  const fallback = classes.filter((c) => c.facts.preferenceRank !== bestRank);
  const whole = fallback.length === classes.length;
  return { whole, pools: whole ? [] : fallback };
}
