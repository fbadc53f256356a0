import { DescribeEndpointCommand, UpdateEndpointWeightsAndCapacitiesCommand } from '@aws-sdk/client-sagemaker';
import { type ReconcilerConfig } from '../../lib/core/reconciler/config';
import { type Clients } from './reconcile';
import { type TargetState } from './target-state';

/** DescribeEndpoint: variant weights, current and desired instances, instances per pool, and whether it can be written. */
export async function readTarget(config: ReconcilerConfig, clients: Clients): Promise<TargetState> {
  if (config.facts.kind !== 'sagemaker') throw new Error('not a SageMaker target');
  const facts = config.facts;
  const endpoint = await clients.sagemaker!.send(new DescribeEndpointCommand({ EndpointName: facts.endpointName }));
  const weights: Record<string, number> = {};
  const pools: Record<string, Record<string, number>> = {};
  const replicas: Record<string, { ready: number; desired: number }> = {};
  for (const v of endpoint.ProductionVariants ?? []) {
    if (!v.VariantName) continue;
    weights[v.VariantName] = v.DesiredWeight ?? v.CurrentWeight ?? 0;
    pools[v.VariantName] = Object.fromEntries((v.InstancePools ?? []).map((p) => [p.InstanceType!, p.CurrentInstanceCount ?? 0]));
    replicas[v.VariantName] = { ready: v.CurrentInstanceCount ?? 0, desired: v.DesiredInstanceCount ?? v.CurrentInstanceCount ?? 0 };
  }
  const status = endpoint.EndpointStatus;
  // Updating (a deployment, or our own previous write): SageMaker rejects a second update; the next tick retries.
  const notWritable = status === 'InService' ? undefined : `endpoint ${facts.endpointName} is ${status}; weights are written on a later tick`;
  return { weights, pools, replicas, notWritable, present: Object.keys(weights) };
}

/**
 * UpdateEndpointWeightsAndCapacities with every variant's weight (capacities stay with Application Auto Scaling).
 * https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_UpdateEndpointWeightsAndCapacities.html
 */
export async function writeWeights(
  config: ReconcilerConfig,
  clients: Clients,
  _target: TargetState,
  weights: Readonly<Record<string, number>>,
): Promise<void> {
  if (config.facts.kind !== 'sagemaker') throw new Error('not a SageMaker target');
  const facts = config.facts;
  await clients.sagemaker!.send(new UpdateEndpointWeightsAndCapacitiesCommand({
    EndpointName: facts.endpointName,
    DesiredWeightsAndCapacities: facts.variants.map((v) => ({ VariantName: v.variantName, DesiredWeight: weights[v.variantName] })),
  }));
}

/**
 * The same call with one variant's desired instance count and no weights: the API updates the weights of any variants
 * or the capacity of one (page above). Application Auto Scaling keeps scaling that variant from the new count.
 */
export async function raiseCapacity(config: ReconcilerConfig, clients: Clients, variantName: string, instances: number): Promise<void> {
  if (config.facts.kind !== 'sagemaker') throw new Error('not a SageMaker target');
  await clients.sagemaker!.send(new UpdateEndpointWeightsAndCapacitiesCommand({
    EndpointName: config.facts.endpointName,
    DesiredWeightsAndCapacities: [{ VariantName: variantName, DesiredInstanceCount: instances }],
  }));
}
