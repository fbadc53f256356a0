/**
 * How a SageMaker variant's DescribeEndpoint summary counts instances per instance type, for the reconciler's read
 * (lambda/reconciler/targets/sagemaker.ts). Pure: no AWS SDK. Not in targets/sagemaker.ts: the simulator, which builds
 * its own counts, imports that module, and this rule is no part of what BENCHMARKS.md measures.
 */
import { type RoutedClassFacts } from '../routing-facts';

/**
 * A variant's instances by instance type (`TargetState.pools`), from its DescribeEndpoint summary: the `InstancePools`
 * it lists ("Each pool indicates the instance type and the current number of instances of that type",
 * ProductionVariantSummary), else, for a variant the facts give one class, all of `CurrentInstanceCount` on that
 * class's type. A variant with one class is rendered with a plain `InstanceType` and no pools (renderVariants,
 * lib/sagemaker/endpoint.ts), and its summary then lists none: `InstancePools` is optional and, when present, has at
 * least one entry (InstancePoolSummaryList, min 1), and the summary has no `InstanceType` (boto/botocore@1.43.67
 * botocore/data/sagemaker/2017-07-24/service-2.json:29430-29434, 41841-41899). A variant of several classes without
 * pools (not one this library renders) has no known split: none.
 */
export function instancesByType(
  classes: ReadonlyArray<Pick<RoutedClassFacts, 'instanceType'>> | undefined,
  summary: { readonly currentInstanceCount: number; readonly pools?: ReadonlyArray<{ readonly instanceType: string; readonly count: number }> },
): Record<string, number> {
  if (summary.pools && summary.pools.length > 0) return Object.fromEntries(summary.pools.map((p) => [p.instanceType, p.count]));
  return classes?.length === 1 ? { [classes[0].instanceType]: summary.currentInstanceCount } : {};
}
