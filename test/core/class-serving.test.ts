/**
 * The series the alarms read a routed class on (lib/core/metrics/class-serving.ts): a SageMaker variant's variant-level
 * series whatever its pools, an ALB target group's own; the status classes a route's servers shed in; which fallback
 * load the fallback share reads on a pool's own series.
 */
import { findPublishedMetric, sageMakerVariantDimensions } from '../../lib/core/metrics/aws-published';
import { classRequests, fallbackLoadReading, routeAwsDimensions, shedStatusClasses } from '../../lib/core/metrics/class-serving';
import { type AlbRoutingFacts, type RoutedClassFacts, type RoutingFacts, type SageMakerRoutingFacts } from '../../lib/core/reconciler/routing-facts';
import { routingTarget } from '../../lib/core/reconciler/targets';

const cls = (name: string, preferenceRank: number, instanceType: string): RoutedClassFacts => ({
  name, preferenceRank, tokensPerSecondPerReplica: 300, safeConcurrency: 8, usdPerReplicaHour: 1, allowSensitive: true, maxReplicas: 4, instanceType,
});

const SAGEMAKER: SageMakerRoutingFacts = {
  kind: 'sagemaker', endpointName: 'llm', endpointArn: 'arn:aws:sagemaker:us-east-1:123456789012:endpoint/llm',
  variants: [
    { variantName: 'preferred', classes: [cls('l40s', 0, 'ml.g6e.xlarge'), cls('a10g', 1, 'ml.g5.xlarge')] },
    { variantName: 'fallback', classes: [cls('inf2', 2, 'ml.inf2.xlarge')] },
    { variantName: 'spare', classes: [cls('trn1', 3, 'ml.trn1.2xlarge'), cls('g4dn', 4, 'ml.g4dn.xlarge')] },
  ],
};
const ALB: AlbRoutingFacts = {
  kind: 'alb', listenerArn: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/sd/abc/def', loadBalancerFullName: 'app/sd/abc',
  targets: [cls('l40s', 0, 'g6e.xlarge'), cls('a10g', 1, 'g5.xlarge')].map((c) => ({
    class: c, targetGroupArn: `arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/${c.name}/1`, targetGroupFullName: `targetgroup/${c.name}/1`,
    namespace: 'serving', deploymentName: `sd-${c.name}`, nodePoolName: `sd-${c.name}`,
  })),
};

/** Each route's name, its series, and its classes as observed. */
function routesOf(facts: RoutingFacts) {
  const target = routingTarget(facts);
  const observed = target.observedClasses(facts);
  return target.routes(facts).map((r) => {
    const classes = observed.filter((c) => r.classes.some((rc) => rc.name === c.facts.name));
    return { name: r.name, classes, awsDimensions: routeAwsDimensions(classes) };
  });
}

test('a SageMaker variant is its variant-level series [EndpointName, VariantName], with or without instance pools', () => {
  expect(routesOf(SAGEMAKER).map((r) => [r.name, r.awsDimensions])).toEqual(
    ['preferred', 'fallback', 'spare'].map((v) => [v, sageMakerVariantDimensions('llm', v)]),
  );
  // Its pools keep their per-InstanceType series (the dashboard draws them).
  expect(routesOf(SAGEMAKER)[0].classes.map((c) => c.awsDimensions.InstanceType)).toEqual(['ml.g6e.xlarge', 'ml.g5.xlarge']);
  // A set SageMaker publishes its request metrics under, with or without pools (aws-published.ts SM_SETS).
  for (const r of routesOf(SAGEMAKER)) {
    const m = classRequests(SAGEMAKER, r);
    expect(findPublishedMetric(m.namespace, m.metricName, Object.keys(m.dimensions))).toBeDefined();
  }
});

test('an ALB route is its one class\'s target group series', () => {
  expect(routesOf(ALB).map((r) => r.awsDimensions)).toEqual(routesOf(ALB).map((r) => r.classes[0].awsDimensions));
  expect(routesOf(ALB)[0].awsDimensions).toEqual({ LoadBalancer: 'app/sd/abc', TargetGroup: 'targetgroup/l40s/1' });
});

test.each([
  [[undefined], ['5xx']],
  [['4xx'], ['4xx']],
  [['4xx', '4xx'], ['4xx']],
  [['5xx', '4xx'], ['4xx', '5xx']],
  [[undefined, '4xx'], ['4xx', '5xx']],
  [['mixed'], ['4xx', '5xx']],
] as const)('servers shedding in %j are read in %j', (statuses, classes) => {
  expect(shedStatusClasses(statuses)).toEqual(classes);
});

test('fallback load: a route without a preferred class is read whole; a preferred route\'s fallback pools on their own series', () => {
  const reading = routesOf(SAGEMAKER).map((r) => {
    const { whole, pools } = fallbackLoadReading(r.classes, 0);
    return [r.name, whole, pools.map((p) => p.facts.name)];
  });
  expect(reading).toEqual([['preferred', false, ['a10g']], ['fallback', true, []], ['spare', true, []]]);
});
