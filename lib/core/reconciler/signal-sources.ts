/**
 * Where each policy signal comes from on each path: the executable form of the table in the README section
 * "Reconciler and routing policy". Pure: the construct uses it to validate and document, the Lambda to build its one
 * GetMetricData batch.
 */
import { AwsMetrics, Dim, type MetricSpec, Metrics } from '../metrics/contract';
import { karpenterCapacityErrorMetric } from '../metrics/karpenter-capacity';
import { deploymentReplicasMetric } from '../metrics/aws-published';
import { type ReconcilerConfig, type SignalSource } from './config';

/** CloudWatch sources of one routed class's signals. An absent entry is read from the target API, or is off. */
export interface ClassSignalSources {
  readonly readyReplicas?: SignalSource;
  readonly desiredReplicas?: SignalSource;
  readonly capacityErrors?: SignalSource;
  readonly latencyP95Ms?: SignalSource;
  readonly servedTokensPerSecond?: SignalSource;
  readonly rejectedTokensPerSecond?: SignalSource;
}

/** Every CloudWatch source the reconciler reads, by routed class name, plus its own state metrics. */
export interface SignalPlan {
  readonly classes: Readonly<Record<string, ClassSignalSources>>;
  /** The reconciler's own mode and ramp history, read back to rebuild the policy state. */
  readonly own: { readonly mode: SignalSource; readonly ramping: SignalSource };
}

function quote(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

export function signalPlan(config: ReconcilerConfig, periodSeconds: number): SignalPlan {
  const own = (spec: MetricSpec, dimensions: Record<string, string>): SignalSource => ({
    metric: { namespace: spec.namespace, metricName: spec.name, dimensions: { [Dim.SERVICE]: config.service, ...dimensions }, stat: spec.statistic },
  });
  const perRequest = config.tokensPerRequest / periodSeconds;
  const capacityErrors = (name: string): SignalSource | undefined => {
    const metric = config.signals?.[name]?.capacityErrors;
    return metric ? { metric } : undefined;
  };
  // Tokens the server counted (Sum per period) to tokens per second; without them, requests x mean tokens.
  const servedTokens = (name: string, requests: SignalSource): SignalSource => {
    const metric = config.signals?.[name]?.generatedTokens;
    return metric ? { metric, scale: 1 / periodSeconds } : requests;
  };
  // Rejected demand is what the server sheds: in the status class its engine answers overload with (TGI 429, the others
  // 503), counted by the platform's 4XX or 5XX metric. Demand = served + rejected, so the wrong class hides overload.
  const rejectedStatus = (name: string) => config.signals?.[name]?.rejectionStatus ?? '5xx';
  const classes: Record<string, ClassSignalSources> = {};
  const facts = config.facts;
  if (facts.kind === 'sagemaker') {
    for (const v of facts.variants) {
      // With instance pools every endpoint metric carries an InstanceType dimension: aggregate over it.
      const search = (metricName: string, stat: string) =>
        `SEARCH('{${AwsMetrics.sageMaker.namespace},EndpointName,InstanceType,VariantName} MetricName=${quote(metricName)} ` +
        `EndpointName=${quote(facts.endpointName)} VariantName=${quote(v.variantName)}', '${stat}', ${periodSeconds})`;
      classes[v.variantName] = {
        // History of what DescribeEndpoint showed on earlier runs; the newest value comes from DescribeEndpoint itself.
        readyReplicas: own(Metrics.readyReplicas, { [Dim.CLASS]: v.variantName }),
        desiredReplicas: own(Metrics.desiredReplicas, { [Dim.CLASS]: v.variantName }),
        capacityErrors: capacityErrors(v.variantName),
        // The slowest instance type's p95 stands for the variant (percentiles do not add up); microseconds to ms.
        latencyP95Ms: { expression: `MAX(${search(AwsMetrics.sageMaker.modelLatency, 'p95')})`, scale: 1 / 1000 },
        servedTokensPerSecond: servedTokens(v.variantName, { expression: `SUM(${search(AwsMetrics.sageMaker.invocations, 'Sum')})`, scale: perRequest }),
        rejectedTokensPerSecond: {
          expression: `SUM(${search(rejectedStatus(v.variantName) === '4xx' ? AwsMetrics.sageMaker.invocation4xxErrors : AwsMetrics.sageMaker.invocation5xxErrors, 'Sum')})`,
          scale: perRequest,
        },
      };
    }
  } else {
    for (const t of facts.targets) {
      const alb = (metricName: string, stat: string) => ({
        namespace: AwsMetrics.alb.namespace,
        metricName,
        dimensions: { TargetGroup: t.targetGroupFullName, LoadBalancer: facts.loadBalancerFullName },
        stat,
      });
      classes[t.class.name] = {
        // Pods are registered by TargetGroupBinding; healthy targets are pods whose readiness probe (model loaded) passes.
        readyReplicas: { metric: alb(AwsMetrics.alb.healthyHostCount, 'Minimum') },
        // Container Insights enhanced observability (the amazon-cloudwatch-observability add-on): PodName holds the
        // Deployment's name (lib/core/metrics/aws-published.ts).
        desiredReplicas: {
          metric: deploymentReplicasMetric(AwsMetrics.containerInsights.replicasDesired, config.clusterName ?? '', t.namespace, t.deploymentName),
        },
        capacityErrors: capacityErrors(t.class.name)
          ?? (config.karpenterCapacityErrors ? { metric: karpenterCapacityErrorMetric(config.clusterName ?? '', t.nodePoolName) } : undefined),
        // Seconds to milliseconds.
        latencyP95Ms: { metric: alb(AwsMetrics.alb.targetResponseTime, 'p95'), scale: 1000 },
        servedTokensPerSecond: servedTokens(t.class.name, { metric: alb(AwsMetrics.alb.requestCount, 'Sum'), scale: perRequest }),
        rejectedTokensPerSecond: { metric: alb(rejectedStatus(t.class.name) === '4xx' ? AwsMetrics.alb.target4xx : AwsMetrics.alb.target5xx, 'Sum'), scale: perRequest },
      };
    }
  }
  return { classes, own: { mode: own(Metrics.policyMode, {}), ramping: own(Metrics.policyRamping, {}) } };
}
