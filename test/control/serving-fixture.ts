import { type RoutingFacts } from '../../lib/core/reconciler/routing-facts';
import { type IInferenceServing, type ServingSignals } from '../../lib/core/reconciler/serving';

/** A serving construct stand-in: the facts a SageMaker or EKS construct would hand over. */
export function servingOf(
  facts: RoutingFacts,
  service: string,
  tokensPerRequest = 250,
  signals: ServingSignals = { classes: {} },
): IInferenceServing {
  // Like both serving constructs, it binds replica floors (SageMaker's binding deploys nothing).
  return { servingDescription: () => ({ service, tokensPerRequest, routing: facts, signals }), enableReplicaFloors: () => undefined };
}
