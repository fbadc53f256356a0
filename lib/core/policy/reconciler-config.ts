/**
 * What the reconciler construct hands its Lambda function (one JSON environment variable) and the Lambda reads back:
 * plain data, no aws-cdk-lib. The construct builds and validates it at synth; the handler trusts its shape.
 */
import { type RoutingFacts } from '../routing-facts';
import { type PlacementOptions } from './from-facts';
import { type PolicyConfig } from './types';

/** One CloudWatch metric, as the `MetricStat` of a GetMetricData query. */
export interface MetricStatSource {
  readonly namespace: string;
  readonly metricName: string;
  readonly dimensions: Readonly<Record<string, string>>;
  /** `Sum`, `Average`, `Minimum`, `Maximum` or a percentile such as `p95`. */
  readonly stat: string;
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
  /** `Service` dimension of the metric contract (lib/core/metrics.ts) on every metric the reconciler emits or reads. */
  readonly service: string;
  /** Mean output tokens per request: converts request counts into token demand. */
  readonly tokensPerRequest: number;
  /** CloudWatch publishes a period's datapoint late: the newest period read ends at least this long before now. */
  readonly metricDelaySeconds: number;
  /** EKS: the cluster name, the `ClusterName` dimension of Container Insights metrics. */
  readonly clusterName?: string;
  /** Capacity-error metric per routed class name (e.g. from Karpenter's logs or metrics delivered to CloudWatch). */
  readonly capacityErrors?: Readonly<Record<string, MetricStatSource>>;
}

/** The name of the environment variable that carries the JSON `ReconcilerConfig`. */
export const RECONCILER_CONFIG_ENV = 'RECONCILER_CONFIG';
