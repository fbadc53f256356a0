/**
 * SageMaker endpoint I/O: DescribeEndpoint and its variants' scalable targets (Application Auto Scaling
 * DescribeScalableTargets: the bounds capacity writes respect), and UpdateEndpointWeightsAndCapacities for either every variant's weight
 * or one variant's desired instance count. "Updates variant weight of one or more variants associated with an existing
 * endpoint, or capacity of one variant associated with an existing endpoint. When it receives the request, SageMaker
 * sets the endpoint status to Updating. After updating the endpoint, it sets the status to InService."
 * (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_UpdateEndpointWeightsAndCapacities.html;
 * @aws-sdk/client-sagemaker UpdateEndpointWeightsAndCapacitiesCommand).
 */
import { ApplicationAutoScalingClient, DescribeScalableTargetsCommand } from '@aws-sdk/client-application-auto-scaling';
import { DescribeEndpointCommand, SageMakerClient, UpdateEndpointWeightsAndCapacitiesCommand } from '@aws-sdk/client-sagemaker';
import { VARIANT_SCALABLE_DIMENSION, VARIANT_SERVICE_NAMESPACE, variantResourceId } from '../../../lib/core/platform/sagemaker-scalable-target';
import { type ReconcilerConfig } from '../../../lib/core/reconciler/config';
import { type SageMakerRoutingFacts } from '../../../lib/core/reconciler/routing-facts';
import { endpointWritability, type RoutingWrite, type ScalingBounds } from '../../../lib/core/reconciler/targets';
import { instancesByType } from '../../../lib/core/reconciler/targets/sagemaker-instances';
import { type RetryOptions } from '../../../lib/core/reconciler/retry';
import { LAMBDA_CLIENT_OPTIONS } from '../../../lib/core/sdk-client-profiles';
import { type Clients, optionalRead, type TargetRead } from './io';

function facts(config: ReconcilerConfig): SageMakerRoutingFacts {
  if (config.facts.kind !== 'sagemaker') throw new Error('not a SageMaker target');
  return config.facts;
}

/**
 * DescribeEndpoint: variant weights, current and desired instances, instances per pool (a one-class variant, rendered
 * without pools: its current instances, `instancesByType`), the endpoint configuration it runs, and whether it can be
 * written; then each variant's live scaling bounds (`readScalingBounds`).
 */
export async function read(config: ReconcilerConfig, clients: Clients, retry: RetryOptions): Promise<TargetRead> {
  const f = facts(config);
  const signal = retry.signal;
  const endpoint = await clients.sagemaker!.send(new DescribeEndpointCommand({ EndpointName: f.endpointName }), { abortSignal: signal });
  const weights: Record<string, number> = {};
  const pools: Record<string, Record<string, number>> = {};
  const replicas: Record<string, { ready: number; desired: number }> = {};
  for (const v of endpoint.ProductionVariants ?? []) {
    if (!v.VariantName) continue;
    weights[v.VariantName] = v.DesiredWeight ?? v.CurrentWeight ?? 0;
    pools[v.VariantName] = instancesByType(f.variants.find((x) => x.variantName === v.VariantName)?.classes, {
      currentInstanceCount: v.CurrentInstanceCount ?? 0,
      pools: v.InstancePools?.map((p) => ({ instanceType: p.InstanceType!, count: p.CurrentInstanceCount ?? 0 })),
    });
    replicas[v.VariantName] = { ready: v.CurrentInstanceCount ?? 0, desired: v.DesiredInstanceCount ?? v.CurrentInstanceCount ?? 0 };
  }
  // Updating (a deployment, or our own previous write): SageMaker rejects a second update; a later tick writes. Failed
  // and the like: the run fails until an operator acts.
  const writability = endpointWritability(f.endpointName, endpoint.EndpointStatus, endpoint.FailureReason);
  // While an UpdateEndpoint is under way, DescribeEndpoint's ProductionVariants are the running (previous) deployment's;
  // the new variants are in PendingDeploymentSummary until it ends (API_PendingDeploymentSummary.html).
  const arriving = (endpoint.PendingDeploymentSummary?.ProductionVariants ?? []).flatMap((v) => (v.VariantName ? [v.VariantName] : []));
  // Bounds only gate capacity writes; weights (the fallback itself) must not wait on Application Auto Scaling. A failed
  // read (throttled, denied to a hand-written serving without the grant) leaves every variant's bounds unknown: no
  // capacity write this run (`capacityCeilings`), weights as decided.
  const bounds = await optionalRead((budget) => readScalingBounds(f, clients, budget), retry);
  const scalingBounds = 'value' in bounds ? bounds.value : {};
  const capacityUnwritable = 'failed' in bounds ? `no capacity write this run: DescribeScalableTargets failed (${bounds.failed})` : undefined;
  // The configuration the endpoint runs: the core defers a run whose facts describe another (`otherConfiguration`).
  const running = endpoint.EndpointConfigName ? { endpointConfigName: endpoint.EndpointConfigName } : {};
  const state = { weights, pools, replicas, present: Object.keys(weights), scalingBounds, ...running };
  const unwritable = { ...writability, ...(capacityUnwritable ? { capacityUnwritable } : {}) };
  return { state: { ...state, ...unwritable, ...(arriving.length > 0 ? { arriving } : {}) } };
}

/**
 * DescribeScalableTargets for the facts' variants: each one's MinCapacity and MaxCapacity as Application Auto Scaling
 * holds them now, by variant name; a variant without a scalable target is left out (the clamp, `capacityCeilings` in
 * lib/core/reconciler/targets/sagemaker.ts, then writes no capacity for it). "Gets information about the scalable
 * targets in the specified namespace. You can filter the results using ResourceIds and ScalableDimension." Up to 50
 * results a page, NextToken for more (https://docs.aws.amazon.com/autoscaling/application/APIReference/API_DescribeScalableTargets.html).
 * A failure, once retried (`optionalRead`), leaves every bound unknown for this run.
 */
async function readScalingBounds(f: SageMakerRoutingFacts, clients: Clients, signal?: AbortSignal): Promise<Record<string, ScalingBounds>> {
  const byResource = new Map(f.variants.map((v) => [variantResourceId(f.endpointName, v.variantName), v.variantName]));
  const out: Record<string, ScalingBounds> = {};
  let next: string | undefined;
  do {
    const page = await clients.autoScaling!.send(new DescribeScalableTargetsCommand({
      ServiceNamespace: VARIANT_SERVICE_NAMESPACE, ScalableDimension: VARIANT_SCALABLE_DIMENSION,
      ResourceIds: [...byResource.keys()], NextToken: next,
    }), { abortSignal: signal });
    for (const t of page.ScalableTargets ?? []) {
      const variant = t.ResourceId && byResource.get(t.ResourceId);
      if (variant && t.ScalableDimension === VARIANT_SCALABLE_DIMENSION && typeof t.MaxCapacity === 'number') {
        out[variant] = { min: t.MinCapacity ?? 0, max: t.MaxCapacity };
      }
    }
    next = page.NextToken;
  } while (next);
  return out;
}

/**
 * Weights: every routed variant's weight, and 0 for a variant the facts no longer name (capacities stay with
 * Application Auto Scaling). Capacity: one variant's desired instance count and no weights; Application Auto Scaling
 * keeps scaling that variant from the new count.
 */
export async function write(config: ReconcilerConfig, clients: Clients, w: RoutingWrite, _context: unknown, signal?: AbortSignal): Promise<void> {
  const f = facts(config);
  const desired = w.kind === 'weights'
    ? [
      ...f.variants.map((v) => ({ VariantName: v.variantName, DesiredWeight: w.weights[v.variantName] })),
      ...w.zeroed.map((name) => ({ VariantName: name, DesiredWeight: 0 })),
    ]
    : [{ VariantName: w.route, DesiredInstanceCount: w.to }];
  const command = new UpdateEndpointWeightsAndCapacitiesCommand({ EndpointName: f.endpointName, DesiredWeightsAndCapacities: desired });
  await clients.sagemaker!.send(command, { abortSignal: signal });
}

/**
 * Whether `w` is what the endpoint now asks for: every routed variant's `DesiredWeight`, or the variant's
 * `DesiredInstanceCount` ("The requested weight, as specified in the UpdateEndpointWeightsAndCapacities request";
 * "The number of instances requested in the UpdateEndpointWeightsAndCapacities request": ProductionVariantSummary,
 * @aws-sdk/client-sagemaker 3.1142.0 dist-types/models/models_2.d.ts). Asked before a retry: an attempt SageMaker
 * accepted but whose answer was lost has set the endpoint Updating, which rejects the same write sent again, and the
 * run would report a write in force as failed.
 */
export async function landed(config: ReconcilerConfig, clients: Clients, w: RoutingWrite, signal?: AbortSignal): Promise<boolean> {
  const f = facts(config);
  const endpoint = await clients.sagemaker!.send(new DescribeEndpointCommand({ EndpointName: f.endpointName }), { abortSignal: signal });
  const byName = new Map((endpoint.ProductionVariants ?? []).map((v) => [v.VariantName, v]));
  if (w.kind === 'capacity') return byName.get(w.route)?.DesiredInstanceCount === w.to;
  const wanted = [...f.variants.map((v) => [v.variantName, w.weights[v.variantName]] as const), ...w.zeroed.map((n) => [n, 0] as const)];
  return wanted.every(([name, weight]) => byName.get(name)?.DesiredWeight === weight);
}

/**
 * Why the endpoint takes no write now, read after a write failed: Application Auto Scaling can start its own update
 * (a variant's scale-out) between the run's DescribeEndpoint and its write, most likely on the run SageMaker's
 * IN_SERVICE event triggers, when both wait for the same moment; SageMaker then refuses the write. The refusal's error
 * text is not documented, so the status is read again instead: one that ends by itself (`endpointWritability`'s
 * `notWritable`) defers the write to a later run; InService, or one that needs an operator, leaves the run failed.
 */
export async function takenMeanwhile(config: ReconcilerConfig, clients: Clients, signal?: AbortSignal): Promise<string | undefined> {
  const f = facts(config);
  const endpoint = await clients.sagemaker!.send(new DescribeEndpointCommand({ EndpointName: f.endpointName }), { abortSignal: signal });
  return endpointWritability(f.endpointName, endpoint.EndpointStatus, endpoint.FailureReason).notWritable;
}

export async function client(): Promise<Partial<Clients>> {
  return { sagemaker: new SageMakerClient(LAMBDA_CLIENT_OPTIONS), autoScaling: new ApplicationAutoScalingClient(LAMBDA_CLIENT_OPTIONS) };
}
