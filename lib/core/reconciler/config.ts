/**
 * What the reconciler construct hands its Lambda function (one JSON environment variable) and the Lambda reads back:
 * plain data, no aws-cdk-lib. The construct builds and validates it at synth; the handler trusts its shape.
 */
import { type RoutingFacts } from './routing-facts';
import { type ClassSignalProducers } from './serving';
import { type MetricStatSource } from '../metrics/aws-published';

export { type MetricStatSource } from '../metrics/aws-published';
import { DEFAULT_POLICY_CONFIG } from '../policy/defaults';
import { type PolicyConfig } from '../policy/types';

/** Placement options of the service whose traffic is routed. */
export interface PlacementOptions {
  /** The service's requests are marked sensitive: classes with `allowSensitive: false` are forbidden. @default false */
  readonly sensitive?: boolean;
}

/**
 * Where one signal of one class comes from: a metric, or a metric-math expression (a `SEARCH` over the `InstanceType`
 * dimension SageMaker adds with instance pools). `scale` multiplies every datapoint (microseconds to milliseconds,
 * requests per period to tokens per second).
 */
export type SignalSource =
  | { readonly metric: MetricStatSource; readonly scale?: number }
  | { readonly expression: string; readonly scale?: number };

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
