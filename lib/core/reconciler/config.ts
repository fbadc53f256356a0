/**
 * What the reconciler construct hands its Lambda function (one JSON environment variable) and the Lambda reads back:
 * plain data, no aws-cdk-lib. The construct builds and validates it at synth; the handler trusts its shape.
 */
import { type RoutingFacts } from './routing-facts';
import { type ClassSignalProducers } from './serving';
import { type MetricStatSource } from '../metrics/aws-published';

export { type MetricStatSource } from '../metrics/aws-published';
import { type PlacementOptions } from './from-facts';
import { type PolicyConfig } from '../policy/types';

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
