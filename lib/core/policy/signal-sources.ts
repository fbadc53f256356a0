/**
 * Where each policy signal comes from on each path: the executable form of the table in the README section
 * "Reconciler and routing policy". Pure: the construct uses it to validate and document, the Lambda to build its one
 * GetMetricData batch.
 */
import { DECISION_DIMENSIONS, DECISION_METRICS } from './decision-metrics';
import { type ReconcilerConfig, type SignalSource } from './reconciler-config';

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
  /** The reconciler's own history, read back to rebuild state. */
  readonly own: { readonly mode: SignalSource; readonly ramping: SignalSource };
}

function quote(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

export function signalPlan(config: ReconcilerConfig, periodSeconds: number): SignalPlan {
  const own = (metricName: string, dimensions: Record<string, string>, stat = 'Maximum'): SignalSource => ({
    metric: { namespace: config.decisionNamespace, metricName, dimensions: { [DECISION_DIMENSIONS.service]: config.service, ...dimensions }, stat },
  });
  const perRequest = config.tokensPerRequest / periodSeconds;
  const capacityErrors = (name: string): SignalSource | undefined => {
    const metric = config.capacityErrors?.[name];
    return metric ? { metric } : undefined;
  };
  const classes: Record<string, ClassSignalSources> = {};
  const facts = config.facts;
  if (facts.kind === 'sagemaker') {
    for (const v of facts.variants) {
      // With instance pools every endpoint metric carries an InstanceType dimension: aggregate over it.
      const search = (metricName: string, stat: string) =>
        `SEARCH('{AWS/SageMaker,EndpointName,InstanceType,VariantName} MetricName=${quote(metricName)} ` +
        `EndpointName=${quote(facts.endpointName)} VariantName=${quote(v.variantName)}', '${stat}', ${periodSeconds})`;
      classes[v.variantName] = {
        // History of what DescribeEndpoint showed on earlier runs; the newest value comes from DescribeEndpoint itself.
        readyReplicas: own(DECISION_METRICS.readyReplicas, { [DECISION_DIMENSIONS.class]: v.variantName }),
        desiredReplicas: own(DECISION_METRICS.desiredReplicas, { [DECISION_DIMENSIONS.class]: v.variantName }),
        capacityErrors: capacityErrors(v.variantName),
        // The slowest instance type's p95 stands for the variant (percentiles do not add up); microseconds to ms.
        latencyP95Ms: { expression: `MAX(${search('ModelLatency', 'p95')})`, scale: 1 / 1000 },
        servedTokensPerSecond: { expression: `SUM(${search('Invocations', 'Sum')})`, scale: perRequest },
        rejectedTokensPerSecond: { expression: `SUM(${search('Invocation5XXErrors', 'Sum')})`, scale: perRequest },
      };
    }
  } else {
    for (const t of facts.targets) {
      const alb = (metricName: string, stat: string) => ({
        namespace: 'AWS/ApplicationELB',
        metricName,
        dimensions: { TargetGroup: t.targetGroupFullName, LoadBalancer: facts.loadBalancerFullName },
        stat,
      });
      const workload = (metricName: string) => ({
        namespace: 'ContainerInsights',
        metricName,
        dimensions: { ClusterName: config.clusterName ?? '', Namespace: t.namespace, PodName: t.deploymentName },
        stat: 'Maximum',
      });
      classes[t.class.name] = {
        // Pods are registered by TargetGroupBinding; healthy targets are pods whose readiness probe (model loaded) passes.
        readyReplicas: { metric: alb('HealthyHostCount', 'Minimum') },
        desiredReplicas: { metric: workload('replicas_desired') },
        capacityErrors: capacityErrors(t.class.name),
        latencyP95Ms: { metric: alb('TargetResponseTime', 'p95'), scale: 1000 },
        servedTokensPerSecond: { metric: alb('RequestCount', 'Sum'), scale: perRequest },
        rejectedTokensPerSecond: { metric: alb('HTTPCode_Target_5XX_Count', 'Sum'), scale: perRequest },
      };
    }
  }
  return { classes, own: { mode: own(DECISION_METRICS.mode, {}), ramping: own(DECISION_METRICS.ramping, {}) } };
}
