/**
 * The AWS serving metrics each capacity class is watched on outside the reconciler: the requests that reached it and
 * the requests its server shed, Sum, under the class's own dimensions (`observedClasses` of its routing target: an ALB
 * target group, a SageMaker variant, or with several instance pools the pool's `InstanceType` series). The alarms and
 * the dashboard build them from here (lib/control/service-metrics.ts `ServiceMetrics.requests` / `shedRequests`, which
 * InferenceAlarms' DeadlineExhaustion and FallbackShare read), and verify checks that CloudWatch lists them.
 *
 * Pure TypeScript (no aws-cdk-lib).
 */
import { type RoutingFacts } from '../reconciler/routing-facts';
import { routingTarget } from '../reconciler/targets';
import { type ObservedClassFacts } from '../reconciler/targets/kind';
import { type MetricStatSource } from './aws-published';

/** Requests that reached the class: SageMaker Invocations or ALB RequestCount, Sum. */
export function classRequests(facts: RoutingFacts, cls: ObservedClassFacts): MetricStatSource {
  const { namespace, requests } = routingTarget(facts).servingMetrics;
  return { namespace, metricName: requests, dimensions: { ...cls.awsDimensions }, stat: 'Sum' };
}

/**
 * Requests the class's server shed, in the status class its engine sheds with (`rejectionStatus`: TGI 429 is 4xx, the
 * others 503): SageMaker Invocation4XX/5XXErrors or ALB HTTPCode_Target_4XX/5XX_Count, Sum.
 */
export function classShedRequests(facts: RoutingFacts, cls: ObservedClassFacts, rejectionStatus: '4xx' | '5xx'): MetricStatSource {
  const { namespace, clientErrors, serverErrors } = routingTarget(facts).servingMetrics;
  return { namespace, metricName: rejectionStatus === '4xx' ? clientErrors : serverErrors, dimensions: { ...cls.awsDimensions }, stat: 'Sum' };
}
