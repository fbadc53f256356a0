/**
 * The service limits the library's rules are written against, in one place: the validation rules
 * (lib/core/validation/rules.ts, routing-facts-rules.ts), the SageMaker variant planner and the EKS checks read them from here.
 */

/**
 * Limits of an Application Load Balancer listener action: a forward action takes at most 5 target groups (not
 * adjustable; https://docs.aws.amazon.com/elasticloadbalancing/latest/application/load-balancer-limits.html).
 */
export const ALB_LIMITS = {
  targetGroupsPerForwardAction: 5,
} as const;

/**
 * Limits of `AWS::SageMaker::EndpointConfig` (CreateEndpointConfig,
 * https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateEndpointConfig.html).
 */
export const SAGEMAKER_ENDPOINT_LIMITS = {
  /** Instance pools per production variant. */
  maxPoolsPerVariant: 5,
  /** Production variants per endpoint configuration. */
  maxVariants: 10,
  /** `VariantInstanceProvisionTimeoutInSeconds` bounds. */
  minProvisionTimeoutSeconds: 300,
  maxProvisionTimeoutSeconds: 3600,
} as const;

/**
 * The longest evaluation range (EvaluationPeriods x Period) CloudWatch accepts for an alarm at a period: "An alarm's
 * total current evaluation period can be no longer than seven days, so Period multiplied by EvaluationPeriods can't be
 * more than 604,800 seconds. For alarms with a period of less than one hour (3,600 seconds), the total evaluation period
 * can't be longer than one day (86,400 seconds)." (PutMetricAlarm, Period:
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html;
 * boto/botocore@1.43.67 botocore/data/cloudwatch/2010-08-01/service-2.json:4322). A longer one fails at deploy.
 */
export function maxAlarmEvaluationSeconds(periodSeconds: number): number {
  return periodSeconds < 3600 ? 86_400 : 604_800;
}

/**
 * Lambda's longest function timeout, 900 seconds ("up to a maximum value of 900 seconds (15 minutes)",
 * https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html): a run's request reaches CloudWatch within it.
 */
export const LAMBDA_MAX_TIMEOUT_SECONDS = 900;

/**
 * The period GetMetricData needs a multiple of to return datapoints from `secondsBack` ago: "Start time between 3 hours
 * and 15 days ago - Use a multiple of 60 seconds (1 minute). Start time between 15 and 63 days ago - Use a multiple of
 * 300 seconds (5 minutes). Start time greater than 63 days ago - Use a multiple of 3600 seconds (1 hour)", "or no data
 * points in that time range is returned" (CloudWatch API reference, GetMetricData StartTime and MetricStat Period;
 * botocore 1.43.67 data/cloudwatch/2010-08-01/service-2.json, shapes GetMetricDataInput.StartTime and MetricStat.Period).
 * The Reconciler's periods are whole minutes already (`policy.period`); `metricQuery` (lib/core/reconciler/observe.ts)
 * keeps a StartTime it moves back within the multiple of its periods.
 */
export function historyPeriodMultiple(secondsBack: number): number {
  const day = 86_400;
  return secondsBack > 63 * day ? 3600 : secondsBack > 15 * day ? 300 : 60;
}

/**
 * EBS gp3: "The maximum ratio of provisioned IOPS to provisioned volume size is 500 IOPS per GiB"
 * (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html, gp3; awsdocs/amazon-ec2-user-guide
 * doc_source/ebs-volume-types.md). A volume asked for above it fails to create, and with it the instance launch.
 */
export const GP3_LIMITS = {
  maxIopsPerGiB: 500,
} as const;

/**
 * The data volume of every node the library's EC2NodeClasses launch (lib/eks/manifests/karpenter.ts): gp3 with these
 * IOPS and throughput, for the image pulls and the model fetch (500 MiB/s is within gp3's 0.25 MiB/s per IOPS).
 */
export const NODE_DATA_VOLUME = {
  iops: 6000,
  throughputMiBps: 500,
} as const;

/** The smallest data volume gp3 provisions at NODE_DATA_VOLUME's IOPS: 12 GiB. */
export const MIN_NODE_VOLUME_GIB = Math.ceil(NODE_DATA_VOLUME.iops / GP3_LIMITS.maxIopsPerGiB);

/**
 * The EKS AL2023 AMIs' root volume, GiB: built on a 20 GiB volume (awslabs/amazon-eks-ami
 * templates/al2023/variables-default.json `volume_size`), so their snapshot is 20 GiB and EC2 refuses a smaller root
 * volume ("Volume of size ... is smaller than snapshot", aws/karpenter-provider-aws#2400). On AL2023 the library's node
 * volume is that root volume (lib/eks/manifests/karpenter.ts); Bottlerocket keeps it apart.
 */
export const AL2023_ROOT_SNAPSHOT_GIB = 20;
