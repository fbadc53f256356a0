import { type Duration } from 'aws-cdk-lib';

/** How KEDA reads the load metric and how fast replicas may change. */
export interface ScalingOptions {
  /** CloudWatch period of the load metric. @default Duration.minutes(1) */
  readonly metricPeriod?: Duration;
  /** How far back KEDA reads datapoints. @default 3 x metricPeriod */
  readonly metricCollectionTime?: Duration;
  /** The recommendation must stay lower this long before pods are removed. @default Duration.minutes(10) */
  readonly scaleDownStabilization?: Duration;
  /** Most pods added per scale-up period (no cold-start stampede). @default 2 */
  readonly maxScaleUpPods?: number;
  /** @default Duration.minutes(2) */
  readonly scaleUpPeriod?: Duration;
  /** @default Duration.seconds(30) */
  readonly pollingInterval?: Duration;
}
