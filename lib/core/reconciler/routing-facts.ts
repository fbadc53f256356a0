/**
 * What a serving construct (SageMaker endpoint, EKS ALB routing) tells the reconciler about itself:
 * where the weights live and which capacity class sits behind each weight. Plain data, so it can be passed
 * to a Lambda function as configuration and read there without aws-cdk-lib.
 */

import { type CapacityClass } from '../service/capacity-class';

/** The facts of one capacity class that routing decisions need. */
export interface RoutedClassFacts {
  /** Capacity class name (RFC 1123 label, unique per service). */
  readonly name: string;
  /** Preference rank: 0 is the most preferred class of the service. */
  readonly preferenceRank: number;
  /** Measured sustainable output tokens per second of one replica at the SLO (from the envelope). */
  readonly tokensPerSecondPerReplica: number;
  /** Measured safe in-flight requests of one replica at the SLO (from the envelope). */
  readonly safeConcurrency: number;
  /** Price of one replica-hour in USD (instance price divided by replicas per instance). */
  readonly usdPerReplicaHour: number;
  /** Whether the class may receive requests marked sensitive. */
  readonly allowSensitive: boolean;
  /** Upper bound on replicas (quota). */
  readonly maxReplicas: number;
  /** Instance type the class runs on. */
  readonly instanceType: string;
  /**
   * Measured p95 replica-ready time in seconds (from the envelope): the Reconciler construct's default provisioning
   * grace follows it (`graceClassesFromFacts`). @default - not measured
   */
  readonly replicaReadyTimeP95Seconds?: number;
}

/** A SageMaker real-time endpoint: weights are production-variant weights. */
export interface SageMakerRoutingFacts {
  readonly kind: 'sagemaker';
  readonly endpointName: string;
  readonly endpointArn: string;
  /**
   * The endpoint configuration these facts describe. A run that finds the endpoint on another configuration (a
   * deployment under way, or its end not yet reached the function) writes nothing: it would write the old fleet's
   * variants from the new facts, or the other way round, and a write then holds the endpoint Updating, which makes
   * CloudFormation's UpdateEndpoint fail.
   * @default - the configuration is not checked (facts and endpoint are trusted to match)
   */
  readonly endpointConfigName?: string;
  readonly variants: ReadonlyArray<{
    readonly variantName: string;
    /** Classes in this variant, in pool priority order (pool priority 1 first). */
    readonly classes: readonly RoutedClassFacts[];
    /**
     * The variant's scaling maximum (its scalable target's MaxCapacity): replica floors never ask for more.
     * @default - the sum of its pools' maxReplicas
     */
    readonly maxInstances?: number;
  }>;
}

/**
 * An ALB listener on EKS: weights are the forward action's target-group weights, one target group per class: the
 * listener's default action, or with `ruleArn` the actions of one rule on a listener shared with other services.
 */
export interface AlbRoutingFacts {
  readonly kind: 'alb';
  readonly listenerArn: string;
  /**
   * The listener rule whose forward action holds the weights (a service routed by host or path on a shared listener).
   * @default - the listener's default action
   */
  readonly ruleArn?: string;
  /** `app/<name>/<id>`, the `LoadBalancer` dimension of AWS/ApplicationELB metrics. */
  readonly loadBalancerFullName: string;
  readonly targets: ReadonlyArray<{
    readonly class: RoutedClassFacts;
    readonly targetGroupArn: string;
    /** `targetgroup/<name>/<id>`, the `TargetGroup` dimension of AWS/ApplicationELB metrics. */
    readonly targetGroupFullName: string;
    /** Kubernetes namespace, Deployment and Karpenter NodePool serving this class. */
    readonly namespace: string;
    readonly deploymentName: string;
    readonly nodePoolName: string;
  }>;
}

export type RoutingFacts = SageMakerRoutingFacts | AlbRoutingFacts;

/** The routing facts of a checked class; `maxReplicas` defaults to its quota (a capacity plan may bound it lower). */
export function routedClassFacts(cls: CapacityClass, maxReplicas: number = cls.maxReplicas): RoutedClassFacts {
  return {
    name: cls.name,
    preferenceRank: cls.preferenceRank,
    tokensPerSecondPerReplica: cls.envelope.tokensPerSecondPerReplica,
    safeConcurrency: cls.envelope.safeConcurrency,
    usdPerReplicaHour: cls.usdPerReplicaHour,
    allowSensitive: cls.placement.allowSensitive,
    maxReplicas,
    instanceType: cls.instanceType,
    ...(cls.envelope.replicaReadyTimeP95Seconds !== undefined ? { replicaReadyTimeP95Seconds: cls.envelope.replicaReadyTimeP95Seconds } : {}),
  };
}
