/**
 * How a SageMaker variant's DescribeEndpoint summary counts instances per instance type, for the reconciler's read
 * (lambda/reconciler/targets/sagemaker.ts). Pure: no AWS SDK. Not in targets/sagemaker.ts: the simulator, which builds
 * its own counts, imports that module, and this rule is no part of what BENCHMARKS.md measures.
 */
import { type RoutedClassFacts } from '../routing-facts';

/**
 * Whether a variant of `classCount` classes is rendered with `InstancePools` (renderVariants, lib/sagemaker/endpoint.ts)
 * or, with one class, a plain `InstanceType`: no AWS page says a one-entry pool list is accepted, and one class has
 * nothing to fall back to (review R209). What follows from it is decided here once: how instances are counted
 * (`instancesByType`), which latency and per-class series exist (SageMaker publishes the InstanceType dimension only
 * for variants with pools), and which variants the Reconciler may lower (a scale-in of a variant with pools releases
 * its lowest-priority pool first, not the one it would lower).
 */
export function hasInstancePools(classCount: number): boolean {
  return classCount > 1;
}

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
  return classes && classes.length > 0 && !hasInstancePools(classes.length) ? { [classes[0].instanceType]: summary.currentInstanceCount } : {};
}
