/**
 * What a serving construct (SageMakerCapacityEndpoint, EksInferenceService) hands the reconciler and the
 * observability constructs: its contract facts, its routing facts and where each of its signals is produced. Plain
 * data (no aws-cdk-lib), so the reconciler can pass it to its Lambda function.
 */
import { type RoutingFacts } from './routing-facts';
import { type MetricStatSource } from '../metrics/aws-published';

/** Signals of one capacity class that the platform produces (beyond the AWS-published ones every class has). */
export interface ClassSignalProducers {
  /** Capacity errors (Sum per period; > 0 means the class could not get capacity). @default - none on this platform */
  readonly capacityErrors?: MetricStatSource;
  /**
   * Output tokens the class generated (Sum per period), where the model server counts them.
   * @default - none: demand is estimated as requests x the contract's mean output tokens
   */
  readonly generatedTokens?: MetricStatSource;
  /**
   * How often `generatedTokens` gets a datapoint (the scrape interval of the agent that publishes it), when that is
   * longer than a minute: the reconciler then reads it over whole multiples of its period, so no period is left
   * without tokens. @default 60
   */
  readonly generatedTokensIntervalSeconds?: number;
  /** Requests waiting in the engine queue (Average). @default - none */
  readonly requestsWaiting?: MetricStatSource;
  /**
   * The HTTP status class the class's model server sheds overload with (`rejectionStatusClass` of its engine: 429 for
   * TGI, 503 for vLLM, DJL LMI and Triton): the platform metric (4XX or 5XX) the reconciler counts as rejected demand.
   * `mixed` appears only in a reconciler's configuration, for a SageMaker variant whose pools shed in different status
   * classes: both metrics are read.
   * @default '5xx'
   */
  readonly rejectionStatus?: '4xx' | '5xx' | 'mixed';
}

export interface ServingSignals {
  /** By capacity class name. A class without an entry produces none of these signals. */
  readonly classes: Readonly<Record<string, ClassSignalProducers>>;
  /** EKS: the `ClusterName` dimension of the Container Insights replica metrics the platform's add-on publishes. */
  readonly containerInsightsClusterName?: string;
}

/** Everything the control loop needs from the serving construct. */
export interface ServingDescription {
  /** The `Service` dimension of every contract metric (the service contract's name). */
  readonly service: string;
  /** Mean output tokens per request (the contract's request shape): turns request counts into token demand. */
  readonly tokensPerRequest: number;
  readonly routing: RoutingFacts;
  readonly signals: ServingSignals;
  /**
   * The p95 latency, in milliseconds, above which the service breaks its contract as the routing target's latency
   * signal measures it (ALB TargetResponseTime, SageMaker ModelLatency): the reconciler's latency trigger watches it
   * unless its policy names another. The serving constructs give the contract's end-to-end deadline (`slo.deadlineMs`):
   * both signals time a whole non-streamed response, and a streamed one no later than its end.
   * @default - no latency trigger unless the reconciler's policy sets `latencySloP95`
   */
  readonly latencySloP95Ms?: number;
  /**
   * The headroom the serving's capacity plan was made with (the contract's `headroom`): its autoscalers target
   * envelope / (1 + headroom) per replica (lib/core/service/sizing.ts). The reconciler's policy takes it, so that the
   * replica floors and capacity writes it sizes at that target are counts the autoscalers keep; a policy `headroom`
   * that differs from it fails at synth.
   * @default - the reconciler's policy headroom (0.2 unless set)
   */
  readonly headroom?: number;
}
