/**
 * What the reconciler construct hands its Lambda function (one JSON environment variable) and the Lambda reads back:
 * plain data, no aws-cdk-lib. The construct builds and validates it at synth; the handler trusts its shape.
 */
import { type RoutingFacts } from './routing-facts';
import { type ClassSignalProducers } from './serving';
import { type MetricStatSource } from '../metrics/aws-published';

export { type MetricStatSource } from '../metrics/aws-published';
import { DEFAULT_POLICY_CONFIG } from '../policy/defaults';
import { isUnresolved } from '../validation/tokens';
import { type PolicyConfig } from '../policy/types';

/** Placement options of the service whose traffic is routed. */
export interface PlacementOptions {
  /** The service's requests are marked sensitive: classes with `allowSensitive: false` are forbidden. @default false */
  readonly sensitive?: boolean;
}

/**
 * Where one signal of one class comes from: a metric, or a metric-math expression (`SEARCH`es over the per-`InstanceType`
 * series SageMaker publishes, besides the variant-level ones, for a variant with several instance pools, and over the
 * variant-level series). An expression stands alone: it cannot name the batch's other queries. `scale` multiplies every
 * datapoint (microseconds to milliseconds, requests per period to tokens per second).
 */
export type SignalSource =
  | { readonly metric: MetricStatSource; readonly scale?: number; readonly periodSeconds?: number }
  | { readonly expression: string; readonly scale?: number; readonly periodSeconds?: number };

/**
 * The source of a counter published every `intervalSeconds` (e.g. a Prometheus scrape, one delta per scrape) read per
 * second: summed over the least common multiple of the reconciler period and the interval, so every query period
 * holds the same number of deltas and every reconciler period gets a value (each datapoint then stands for all the
 * periods its query period covers). The least whole number of periods spanning the interval is not enough: at a
 * 300 s period a 120 s scrape puts 2 or 3 deltas in consecutive periods, a 1.5x swing of the rate (review R204).
 * Both are whole seconds; the EKS scrape interval divides a minute or is whole minutes (EKS_RULES
 * `observability.scrapeInterval@periods`), so the result is whole minutes, as GetMetricData's periods are.
 */
export function counterPerSecond(metric: MetricStatSource, periodSeconds: number, intervalSeconds = periodSeconds): SignalSource {
  const queryPeriod = leastCommonMultiple(periodSeconds, Math.max(1, Math.round(intervalSeconds)));
  return { metric, scale: 1 / queryPeriod, ...(queryPeriod !== periodSeconds ? { periodSeconds: queryPeriod } : {}) };
}

/** The least common multiple of two positive whole numbers. */
export function leastCommonMultiple(a: number, b: number): number {
  const gcd = (x: number, y: number): number => (y === 0 ? x : gcd(y, x % y));
  return (a / gcd(a, b)) * b;
}

export interface ReconcilerConfig {
  /** The routing facts the serving construct produced. */
  readonly facts: RoutingFacts;
  readonly placement: PlacementOptions;
  /** Overrides of DEFAULT_POLICY_CONFIG. */
  readonly policy: Partial<PolicyConfig>;
  /** `Service` dimension of the metric contract (lib/core/metrics/contract.ts) on every metric the reconciler emits or reads. */
  readonly service: string;
  /** Mean output tokens per request: converts request counts into token demand. */
  readonly tokensPerRequest: number;
  /** CloudWatch publishes a period's datapoint late: the newest period read ends at least this long before now. */
  readonly metricDelaySeconds: number;
  /** EKS: the cluster name, the `ClusterName` dimension of Container Insights metrics. */
  readonly clusterName?: string;
  /**
   * The signals the serving platform produces, per routed class name (EKS: the class; SageMaker: the variant): capacity
   * errors (e.g. the Karpenter log metric filter) and served tokens where the model server counts them.
   */
  readonly signals?: Readonly<Record<string, ClassSignalProducers>>;
  /**
   * EKS: every target's capacity errors are the Karpenter log metric filter of its NodePool
   * (`karpenterCapacityErrorMetric(clusterName, nodePoolName)`), derived here rather than spelt out per class to keep
   * the configuration within Lambda's 4 KB environment.
   */
  readonly karpenterCapacityErrors?: boolean;
  /**
   * Routes whose generated tokens are the metric contract's `GeneratedTokens` (Service, CapacityClass), as the EKS
   * construct's scrape publishes them: derived here rather than spelt out per class, like `karpenterCapacityErrors`.
   */
  readonly contractTokenCounters?: readonly string[];
  /**
   * Each fallback route's own provisioning grace, seconds, by routed name: what its declared replica-ready time calls
   * for (`provisioningGraceFromFacts(...).fallbacks`), resolved at synth like the preferred route's
   * `policy.provisioningGraceSeconds`, since the facts in the function's 4 KB environment carry no ready times. Every run
   * hands it to the policy (`PolicyClass.provisioningGraceSeconds`). Absent: every route on the policy's grace.
   */
  readonly fallbackGraceSeconds?: Readonly<Record<string, number>>;
}

/** The name of the environment variable that carries the JSON `ReconcilerConfig`. */
export const RECONCILER_CONFIG_ENV = 'RECONCILER_CONFIG';

/** The policy windows that must be a whole number of periods (`policyConfigProblems`). */
const PERIOD_WINDOWS = ['capacityErrorLookbackSeconds', 'provisioningGraceSeconds', 'stabilizationWindowSeconds'] as const;

/**
 * The default windows for a reconciler period: each default that is not a whole number of periods is rounded up to the
 * next one (a 2-minute period: capacity-error lookback 180 s -> 240 s, provisioning grace 300 s -> 360 s; a 5-minute
 * period: 180 s -> 300 s). Up, never down: a shorter grace would read an ordinary scale-out as a shortage, a shorter
 * lookback would forget a capacity error before Karpenter retries the offering. Empty for the default period or an
 * invalid one (which the period's own rule reports).
 */
export function windowDefaultsForPeriod(periodSeconds: number | undefined): Partial<PolicyConfig> {
  if (periodSeconds === undefined || !Number.isInteger(periodSeconds) || periodSeconds <= 0) return {};
  const out: Partial<Record<(typeof PERIOD_WINDOWS)[number], number>> = {};
  for (const key of PERIOD_WINDOWS) {
    const d = DEFAULT_POLICY_CONFIG[key];
    if (d % periodSeconds !== 0) out[key] = Math.ceil(d / periodSeconds) * periodSeconds;
  }
  return out;
}

/** Lambda's limit on the total size of a function's environment variables (quota L-6581F036, not adjustable). */
export const ENVIRONMENT_LIMIT_BYTES = 4096;

// Longest values, from the naming rules: partition <= 9 ("aws-iso-b"), region <= 16 (the longest today has 14, e.g.
// "ap-southeast-5"), account 12; load balancer and target group names <= 32 characters, their ids 16 hex digits
// (https://docs.aws.amazon.com/elasticloadbalancing/latest/application/load-balancer-cloudwatch-metrics.html: "the
// final portion of the ... ARN", e.g. app/my-load-balancer/50dc6c495c0c9188); SageMaker endpoint names <= 63; EKS
// cluster names <= 100.
// `arn:<partition>:` + `<region>:<account>:`; the service and its ':' are added per field (`elasticloadbalancing:`).
const ARN_PREFIX = 'arn:'.length + 9 + 1 + 16 + 1 + 12 + 1;
const ELB_NAME = 32;
const ELB_ID = 16;
const LB_FULL_NAME = 'app/'.length + ELB_NAME + 1 + ELB_ID;
const TG_FULL_NAME = 'targetgroup/'.length + ELB_NAME + 1 + ELB_ID;
/** The longest value CloudFormation can resolve a token to, by the configuration field it stands in. */
const TOKEN_BOUNDS: ReadonlyArray<readonly [RegExp, number]> = [
  [/^facts\.listenerArn$/, ARN_PREFIX + 'elasticloadbalancing:listener/'.length + LB_FULL_NAME + 1 + ELB_ID],
  [/^facts\.ruleArn$/, ARN_PREFIX + 'elasticloadbalancing:listener-rule/'.length + LB_FULL_NAME + 1 + ELB_ID + 1 + ELB_ID],
  [/^facts\.loadBalancerFullName$/, LB_FULL_NAME],
  [/^facts\.targets\.\d+\.targetGroupArn$/, ARN_PREFIX + 'elasticloadbalancing:'.length + TG_FULL_NAME],
  [/^facts\.targets\.\d+\.targetGroupFullName$/, TG_FULL_NAME],
  [/^facts\.endpointArn$/, ARN_PREFIX + 'sagemaker:endpoint/'.length + 63],
  [/^facts\.endpointName$/, 63],
  // CloudFormation's generated name of the endpoint configuration (SageMaker names: at most 63).
  [/^facts\.endpointConfigName$/, 63],
  [/^clusterName$/, 100],
  // The Service dimension rule allows 255 characters.
  [/^service$/, 255],
];
/** A token in any other field: a generous bound (a field of our facts never holds one; a custom serving might). */
export const UNKNOWN_TOKEN_BYTES = 256;

/**
 * The bytes the reconciler's environment takes once CloudFormation resolves it: the UTF-8 bytes of every variable's
 * name and value (the measure the CloudFormation linter applies to Lambda's 4 KB limit, cfn-lint rule E3697; AWS states
 * only "4 KB"), each unresolved token counted at the longest value its field can resolve to, never at its placeholder.
 * The variables are the ones the Reconciler sets: `configVariable` holds the JSON configuration, `serviceVariable` the
 * service name on its own.
 */
export function environmentBytes(config: ReconcilerConfig, configVariable: string, serviceVariable: string): number {
  let tokenBytes = 0;
  const blank = (value: unknown, path: string): unknown => {
    if (typeof value === 'string' && isUnresolved(value)) {
      tokenBytes += TOKEN_BOUNDS.find(([re]) => re.test(path))?.[1] ?? UNKNOWN_TOKEN_BYTES;
      return '';
    }
    if (Array.isArray(value)) return value.map((v, i) => blank(v, `${path}.${i}`));
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, blank(v, path ? `${path}.${k}` : k)]));
    }
    return value;
  };
  const bytes = (s: string) => new TextEncoder().encode(s).length;
  const configJson = JSON.stringify(blank(config, ''));
  const service = blank(config.service, 'service') as string;
  return bytes(configVariable) + bytes(configJson) + bytes(serviceVariable) + bytes(service) + tokenBytes;
}
