/**
 * The one table of AWS-published metrics the library reads: namespace, name, the dimension sets AWS publishes it
 * under, and the documentation (or source) that defines it. The signal contract check (template-check.ts) accepts a
 * read of an AWS namespace only when it is in this table; everything else must be produced by the same app.
 *
 * Pure TypeScript (no aws-cdk-lib).
 */
import { AwsDim, AwsMetrics } from './contract';

/** Something that must run for an AWS-published metric to exist (nothing is published without it). */
export type PublishedMetricPrerequisite = 'amazon-cloudwatch-observability';

export interface AwsPublishedMetric {
  readonly namespace: string;
  readonly name: string;
  /** Every dimension set AWS publishes the metric under (order does not matter). */
  readonly dimensionSets: ReadonlyArray<readonly string[]>;
  /** Where AWS defines the metric. */
  readonly source: string;
  /** What must be installed for the metric to exist. @default - always published by the service */
  readonly requires?: PublishedMetricPrerequisite;
  /**
   * The event whose first occurrence publishes the metric, when AWS reports it only with a non-zero value (so a healthy
   * deployment may never have it): completes "not yet published (expected until the first ...)".
   * @default - published whenever the service reports (with traffic for request metrics)
   */
  readonly publishedOn?: string;
}

/** One CloudWatch metric, as the `MetricStat` of a GetMetricData query or of an alarm. */
export interface MetricStatSource {
  readonly namespace: string;
  readonly metricName: string;
  readonly dimensions: Readonly<Record<string, string>>;
  /** `Sum`, `Average`, `Minimum`, `Maximum` or a percentile such as `p95`. */
  readonly stat: string;
}

const LAMBDA_DOC = 'https://docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics-types.html';
const SAGEMAKER_DOC = 'https://docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch.html';
const ALB_DOC = 'https://docs.aws.amazon.com/elasticloadbalancing/latest/application/load-balancer-cloudwatch-metrics.html';
// The Deployment metrics exist only with enhanced observability; PodName carries the Deployment's name. Source:
// aws/amazon-cloudwatch-agent translator/translate/otel/exporter/awsemf/kubernetes.go getDeploymentMetricDeclarations
// (dimension sets [PodName, Namespace, ClusterName] and [ClusterName]) and
// https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Container-Insights-metrics-enhanced-EKS.html
const CI_SOURCE = 'https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Container-Insights-metrics-enhanced-EKS.html '
  + '(aws/amazon-cloudwatch-agent translator/translate/otel/exporter/awsemf/kubernetes.go)';

const sm = AwsMetrics.sageMaker;
const E = AwsDim.ENDPOINT_NAME;
const V = AwsDim.VARIANT_NAME;
// The variant-level set is published with or without instance pools ("Existing CloudWatch metrics that are aggregated
// across all instances in a variant ... continue to work the same way when you use instance pools"); with pools,
// "In addition, CloudWatch publishes these metrics with an InstanceType dimension" (SageMaker developer guide, "Deploy
// to multiple instance types with instance pools", section "Monitoring instance pools",
// https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-heterogeneous.html).
const SM_SETS = [[E, V], [E, V, AwsDim.INSTANCE_TYPE]] as const;
const ALB_SETS = [[AwsDim.LOAD_BALANCER, AwsDim.TARGET_GROUP]] as const;
// The load balancer as a whole: RequestCount and HTTPCode_ELB_5XX_Count are published under `LoadBalancer` alone (and
// by AvailabilityZone), which aws-cdk-lib's ApplicationLoadBalancer metrics read too (2.269.0
// aws-elasticloadbalancingv2/lib/alb/application-load-balancer.js, ApplicationLoadBalancerMetrics: dimensionsMap
// { LoadBalancer }); ALB_DOC, each metric's "Dimensions".
const ALB_LOAD_BALANCER_SET = [AwsDim.LOAD_BALANCER] as const;

export const AWS_PUBLISHED_METRICS: readonly AwsPublishedMetric[] = [
  ...[sm.invocations, sm.invocationsPerInstance, sm.modelLatency, sm.overheadLatency, sm.invocation4xxErrors,
    sm.invocation5xxErrors, sm.concurrentRequestsPerModel]
    .map((name) => ({ namespace: sm.namespace, name, dimensionSets: SM_SETS, source: SAGEMAKER_DOC })),
  ...[AwsMetrics.sageMakerEndpointInstances.gpuUtilization, AwsMetrics.sageMakerEndpointInstances.gpuMemoryUtilization]
    .map((name) => ({ namespace: AwsMetrics.sageMakerEndpointInstances.namespace, name, dimensionSets: [[E, V]], source: SAGEMAKER_DOC })),
  { namespace: AwsMetrics.alb.namespace, name: AwsMetrics.alb.requestCount, dimensionSets: [...ALB_SETS, ALB_LOAD_BALANCER_SET], source: ALB_DOC },
  ...[AwsMetrics.alb.requestCountPerTarget, AwsMetrics.alb.healthyHostCount, AwsMetrics.alb.unhealthyHostCount, AwsMetrics.alb.targetResponseTime]
    .map((name) => ({ namespace: AwsMetrics.alb.namespace, name, dimensionSets: ALB_SETS, source: ALB_DOC })),
  // "The number of HTTP 5XX server error codes that originate from the load balancer. This count does not include any
  // response codes generated by the targets", "Reporting criteria: There is a nonzero value" (ALB_DOC).
  {
    namespace: AwsMetrics.alb.namespace, name: AwsMetrics.alb.elb5xx, dimensionSets: [ALB_LOAD_BALANCER_SET], source: ALB_DOC,
    publishedOn: 'HTTP 5XX response of the load balancer itself',
  },
  // "Reporting criteria: There is a nonzero value" (ALB_DOC, HTTPCode_Target_4XX_Count / HTTPCode_Target_5XX_Count).
  ...([[AwsMetrics.alb.target4xx, 'HTTP 4XX response of a target'], [AwsMetrics.alb.target5xx, 'HTTP 5XX response of a target']] as const)
    .map(([name, publishedOn]) => ({ namespace: AwsMetrics.alb.namespace, name, dimensionSets: ALB_SETS, source: ALB_DOC, publishedOn })),
  ...[AwsMetrics.containerInsights.replicasDesired, AwsMetrics.containerInsights.replicasReady]
    .map((name) => ({
      namespace: AwsMetrics.containerInsights.namespace,
      name,
      dimensionSets: [[AwsDim.CLUSTER_NAME, AwsDim.NAMESPACE, AwsDim.POD_NAME], [AwsDim.CLUSTER_NAME]],
      source: CI_SOURCE,
      requires: 'amazon-cloudwatch-observability' as const,
    })),
  { namespace: AwsMetrics.lambda.namespace, name: AwsMetrics.lambda.errors, dimensionSets: [[AwsDim.FUNCTION_NAME]], source: LAMBDA_DOC },
];

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((d) => b.includes(d));
}

/** The table entry for a metric read with these dimension names, if AWS publishes it so. */
export function findPublishedMetric(namespace: string, name: string, dimensionNames: readonly string[]): AwsPublishedMetric | undefined {
  return AWS_PUBLISHED_METRICS.find((m) => m.namespace === namespace && m.name === name
    && m.dimensionSets.some((set) => sameSet(set, dimensionNames)));
}

/**
 * The dimensions of an AWS/SageMaker endpoint metric of one production variant: [EndpointName, VariantName], the
 * variant-level series SageMaker publishes with or without instance pools, or with `instanceType` the series of one
 * pool's instances, [EndpointName, VariantName, InstanceType], documented for a variant that uses instance pools (see
 * SM_SETS above): only a variant of several classes, since a one-class variant is rendered without pools.
 */
export function sageMakerVariantDimensions(endpointName: string, variantName: string, instanceType?: string): Record<string, string> {
  return {
    [AwsDim.ENDPOINT_NAME]: endpointName,
    [AwsDim.VARIANT_NAME]: variantName,
    ...(instanceType !== undefined ? { [AwsDim.INSTANCE_TYPE]: instanceType } : {}),
  };
}

/** An AWS/SageMaker endpoint metric of one production variant, all its instances (`sageMakerVariantDimensions`). */
export function sageMakerVariantMetric(metricName: string, endpointName: string, variantName: string, stat: string): MetricStatSource {
  return { namespace: AwsMetrics.sageMaker.namespace, metricName, dimensions: sageMakerVariantDimensions(endpointName, variantName), stat };
}

/** Container Insights desired replicas of one Deployment (enhanced observability; PodName holds the Deployment name). */
export function deploymentReplicasMetric(
  metricName: typeof AwsMetrics.containerInsights.replicasDesired | typeof AwsMetrics.containerInsights.replicasReady,
  clusterName: string,
  namespace: string,
  deploymentName: string,
): MetricStatSource {
  return {
    namespace: AwsMetrics.containerInsights.namespace,
    metricName,
    dimensions: { [AwsDim.CLUSTER_NAME]: clusterName, [AwsDim.NAMESPACE]: namespace, [AwsDim.POD_NAME]: deploymentName },
    stat: 'Maximum',
  };
}

/**
 * One query of a target-tracking policy's customized metric (the shape of Application Auto Scaling's
 * `TargetTrackingMetricDataQuery`, as aws-cdk-lib's `CfnScalingPolicy` takes it).
 */
export interface TargetTrackingQuery {
  readonly id: string;
  readonly label?: string;
  readonly metricStat?: {
    readonly metric: {
      readonly namespace: string;
      readonly metricName: string;
      readonly dimensions: ReadonlyArray<{ readonly name: string; readonly value: string }>;
    };
    readonly stat: string;
  };
  readonly expression?: string;
  readonly returnData: boolean;
}

/**
 * The per-pool scaling signal of a variant with instance pools (`variantScalingDefaults`, lib/core/platform/
 * control-loop.ts): each pool's `ConcurrentRequestsPerModel` on [EndpointName, VariantName, InstanceType] over the
 * pool's own target, and the largest of these ratios; target tracking holds it at 1.
 *
 * - Statistic `Average`, as AWS's own metric-math example for instance pools uses it (sagemaker/latest/dg/
 *   realtime-endpoints-heterogeneous.html, "Use weighted custom metrics for mixed fleets"; its expression is a
 *   weighted average of the types, this one their largest ratio). The metrics page lists only Min and Max as valid
 *   statistics of ConcurrentRequestsPerModel: the two documents disagree, the pools guide is the one written for
 *   this use.
 * - The largest of two ratios is spelt with arithmetic, `(a + b + ABS(a - b)) / 2`, folded pool by pool, and not with
 *   `MAX([...])`: CloudWatch documents how arithmetic treats a missing value ("Missing values in a time series are
 *   treated as 0", AmazonCloudWatch/latest/monitoring/using-metric-math.html), so a pool with no instances reads 0 and
 *   drops out (that such a pool's series has no datapoints is inferred: no model container reports for it); what MAX
 *   over an array does with a missing value is not documented.
 * - At most 5 pools, so at most 5 metrics: a math expression behind an alarm "can include as many as 10 metrics".
 * If the expression returned no data at all, its alarms would go to INSUFFICIENT_DATA and that policy would neither
 * scale out nor, since scale-in needs every policy ready, let the variant scale in; the predefined policy would still
 * scale out, but at the priority-1 pool's target, which overloads a slower pool's instances. So that a deployment
 * does not find out under load, verify's scaling check runs these queries through GetMetricData
 * (lib/core/verify/scaling-metric.ts).
 */
export function perPoolConcurrencyQueries(
  endpointName: string,
  variantName: string,
  pools: ReadonlyArray<{ readonly instanceType: string; readonly targetConcurrency: number }>,
): TargetTrackingQuery[] {
  const metrics = pools.map((p, i): TargetTrackingQuery => ({
    id: `pool${i + 1}`,
    label: `${sm.concurrentRequestsPerModel} ${p.instanceType}`,
    metricStat: {
      metric: {
        namespace: sm.namespace,
        metricName: sm.concurrentRequestsPerModel,
        dimensions: Object.entries(sageMakerVariantDimensions(endpointName, variantName, p.instanceType)).map(([name, value]) => ({ name, value })),
      },
      stat: 'Average',
    },
    returnData: false,
  }));
  const ratio = (i: number) => `pool${i + 1} / ${pools[i].targetConcurrency}`;
  const folds: TargetTrackingQuery[] = [];
  let largest = `(${ratio(0)})`;
  for (let i = 1; i < pools.length; i++) {
    const next = `(${ratio(i)})`;
    folds.push({ id: `largest${i + 1}`, expression: `(${largest} + ${next} + ABS(${largest} - ${next})) / 2`, returnData: i === pools.length - 1 });
    largest = `largest${i + 1}`;
  }
  if (folds.length === 0) folds.push({ id: 'largest1', expression: largest, returnData: true });
  const last = folds[folds.length - 1];
  folds[folds.length - 1] = { ...last, label: 'Largest pool concurrency over its target' };
  return [...metrics, ...folds];
}
