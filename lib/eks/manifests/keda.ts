import { EKS_SCALING_DEFAULTS, REPLICA_FLOOR_TRIGGER } from '../../core/platform/control-loop';
import { type AwsCloudWatchTriggerMetadata, type ScaledObject, type TriggerAuthentication } from './types';
import { DEFAULT_POLICY_CONFIG } from '../../core/policy/defaults';

/** KEDA authenticates to CloudWatch with the operator's own pod identity: workloads get no AWS permissions. */
export function triggerAuthentication(name: string, ns: string, labels: Readonly<Record<string, string>>): TriggerAuthentication {
  return {
    apiVersion: 'keda.sh/v1alpha1',
    kind: 'TriggerAuthentication',
    metadata: { name, namespace: ns, labels },
    spec: { podIdentity: { provider: 'aws', identityOwner: 'keda' } },
  };
}

/**
 * The CloudWatch metric a class scales on: the class's total load (e.g. the target group's request count). The HPA
 * divides it by the replica count (`AverageValue`), so the target is a per-replica load.
 */
export interface LoadMetric {
  readonly namespace: string;
  readonly metricName: string;
  readonly dimensionName: string;
  readonly dimensionValue: string;
  readonly statistic: 'Sum' | 'Average' | 'Maximum';
  readonly region: string;
}

/**
 * A metric's dimensions as the KEDA `aws-cloudwatch` trigger takes them: the names, and the values in the same order,
 * each joined by ';' (kedacore/keda@v2.20.2 pkg/scalers/aws_cloudwatch_scaler.go:35-36, `separator=;`).
 */
export function triggerDimensions(dimensions: Readonly<Record<string, string>>): Pick<LoadMetric, 'dimensionName' | 'dimensionValue'> {
  return { dimensionName: Object.keys(dimensions).join(';'), dimensionValue: Object.values(dimensions).join(';') };
}

export interface ScaledObjectInput {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly deploymentName: string;
  readonly triggerAuthenticationName: string;
  readonly metric: LoadMetric;
  /** Per-replica value at which the class holds its SLO with headroom (from the envelope, via the capacity plan). */
  readonly target: number;
  readonly minReplicas: number;
  readonly maxReplicas: number;
  /** Replicas to hold when the metric cannot be read (KEDA fallback). */
  readonly fallbackReplicas: number;
  /** CloudWatch period of the metric, seconds. */
  readonly periodSeconds: number;
  /** How far back KEDA looks for datapoints, seconds (at least one period). */
  readonly collectionSeconds: number;
  /** Skip the newest, still-filling period, seconds. */
  readonly endTimeOffsetSeconds: number;
  /** How long the recommendation must stay lower before replicas are removed, seconds. */
  readonly scaleDownStabilizationSeconds: number;
  /** Most pods added per `scaleUpPeriodSeconds`. */
  readonly scaleUpPods: number;
  readonly scaleUpPeriodSeconds: number;
  readonly pollingIntervalSeconds: number;
  /**
   * The replica floor a Reconciler publishes for the class: rendered as a second trigger of this ScaledObject, so
   * that every `kubectl apply` of the object carries it (a merge patch replaces `triggers` whole).
   * @default - no floor trigger
   */
  readonly replicaFloor?: ReplicaFloorMetric;
}

/**
 * A ScaledObject on one CloudWatch load metric with `metricType: AverageValue`: desired replicas =
 * ceil(load / per-replica target), Little's law at the envelope (and the metric type KEDA's fallback supports).
 * Scale-up is rate-limited: one alarm must not start a
 * stampede of cold model containers that compete for the same registry and storage bandwidth. Scale-down waits out a
 * stabilization window, and removes one pod per period.
 */
export function scaledObject(input: ScaledObjectInput): ScaledObject {
  return {
    apiVersion: 'keda.sh/v1alpha1',
    kind: 'ScaledObject',
    metadata: { name: input.name, namespace: input.namespace, labels: input.labels },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: input.deploymentName },
      pollingInterval: input.pollingIntervalSeconds,
      // Governs only a scale to zero, which minReplicaCount >= 1 rules out (KEDA docs, ScaledObject spec, cooldownPeriod;
      // review R203): the HPA's scale-down stabilization below paces scale-in. Kept at the same value so a reader sees one wait.
      cooldownPeriod: input.scaleDownStabilizationSeconds,
      minReplicaCount: input.minReplicas,
      maxReplicaCount: input.maxReplicas,
      fallback: { failureThreshold: 3, replicas: input.fallbackReplicas, behavior: 'currentReplicasIfHigher' },
      advanced: {
        restoreToOriginalReplicaCount: false,
        horizontalPodAutoscalerConfig: {
          behavior: {
            scaleUp: {
              stabilizationWindowSeconds: 0,
              selectPolicy: 'Min',
              policies: [{ type: 'Pods', value: input.scaleUpPods, periodSeconds: input.scaleUpPeriodSeconds }],
            },
            scaleDown: {
              stabilizationWindowSeconds: input.scaleDownStabilizationSeconds,
              selectPolicy: 'Min',
              policies: [{ type: 'Pods', value: EKS_SCALING_DEFAULTS.maxScaleDownPods, periodSeconds: EKS_SCALING_DEFAULTS.scaleDownPeriodSeconds }],
            },
          },
        },
      },
      triggers: [
        cloudWatchTrigger('per-replica-load', input.metric, {
          periodSeconds: input.periodSeconds,
          collectionSeconds: input.collectionSeconds,
          endTimeOffsetSeconds: input.endTimeOffsetSeconds,
          target: input.target,
        }, input.triggerAuthenticationName),
        ...(input.replicaFloor
          ? [replicaFloorTrigger(input.replicaFloor, input.triggerAuthenticationName, input.replicaFloor.reconcilerPeriodSeconds)]
          : []),
      ],
    },
  };
}

/** The replica floor a Reconciler publishes for one class (its `ReplicaFloor` metric, lib/core/metrics/contract.ts). */
export interface ReplicaFloorMetric {
  readonly namespace: string;
  readonly metricName: string;
  readonly dimensions: Readonly<Record<string, string>>;
  readonly region: string;
  /** The reconciler's period, which the trigger's collection window spans three times. @default 60 */
  readonly reconcilerPeriodSeconds?: number;
}

/**
 * A second ScaledObject trigger on the replica floor: the HPA takes the highest recommendation of its metrics, so it
 * runs at least that many replicas; one controller (the HPA) decides, the floor is one more input to it.
 * `AverageValue` with target 1: desired replicas = ceil(floor / 1). The reconciler publishes a datapoint every run
 * (0 when there is no floor), Maximum over 60 s. KEDA reads the newest datapoint of the window
 * [end - metricCollectionTime, end), end truncated to metricStatPeriod (kedacore/keda@v2.20.2
 * pkg/scalers/aws_cloudwatch_scaler.go:185-188, 200, 305), so the window spans three reconciler periods: one missed
 * run keeps the floor, whatever the period; a missing metric reads as 0 (no floor, minMetricValue), never as a failure
 * that would trip KEDA's fallback. metricCollectionTime must be a multiple of metricStatPeriod (same file :88): the
 * period is whole minutes.
 */
export function replicaFloorTrigger(floor: ReplicaFloorMetric, authName: string, reconcilerPeriodSeconds = DEFAULT_POLICY_CONFIG.periodSeconds): ScaledObject['spec']['triggers'][number] {
  const metric: LoadMetric = {
    namespace: floor.namespace,
    metricName: floor.metricName,
    ...triggerDimensions(floor.dimensions),
    statistic: 'Maximum',
    region: floor.region,
  };
  return cloudWatchTrigger('replica-floor', metric, {
    ...REPLICA_FLOOR_TRIGGER, collectionSeconds: REPLICA_FLOOR_TRIGGER.collectionPeriods * Math.max(60, reconcilerPeriodSeconds),
  }, authName);
}

/**
 * One KEDA `aws-cloudwatch` trigger with `metricType: AverageValue` (desired replicas = ceil(value / target)), the
 * shape of both the load trigger and the replica-floor trigger.
 */
function cloudWatchTrigger(
  name: string,
  metric: LoadMetric,
  t: { readonly periodSeconds: number; readonly collectionSeconds: number; readonly endTimeOffsetSeconds: number; readonly target: number },
  authName: string,
): ScaledObject['spec']['triggers'][number] {
  const metadata: AwsCloudWatchTriggerMetadata = {
    namespace: metric.namespace,
    metricName: metric.metricName,
    dimensionName: metric.dimensionName,
    dimensionValue: metric.dimensionValue,
    metricStat: metric.statistic,
    metricStatPeriod: String(t.periodSeconds),
    metricCollectionTime: String(t.collectionSeconds),
    metricEndTimeOffset: String(t.endTimeOffsetSeconds),
    targetMetricValue: formatNumber(t.target),
    // Scaling to zero is not allowed (minReplicas >= 1), so activation only matters for the trigger's active flag.
    activationTargetMetricValue: '0',
    // No datapoints (no requests on ALB metrics, no floor published) read as zero, not as a metric failure.
    minMetricValue: '0',
    awsRegion: metric.region,
  };
  return { type: 'aws-cloudwatch', name, metricType: 'AverageValue', metadata, authenticationRef: { kind: 'TriggerAuthentication', name: authName } };
}

/** Numbers as KEDA parses them: plain decimals, no exponent, at most 4 decimals. */
function formatNumber(value: number): string {
  return String(Math.round(value * 1e4) / 1e4);
}
