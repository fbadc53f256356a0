import { type RoutingFacts } from '../../lib/core/reconciler/routing-facts';
import { type ServingSignals } from '../../lib/core/reconciler/serving';
import * as iam from 'aws-cdk-lib/aws-iam';
import { type IInferenceServing } from '../../lib/control/serving';

/** The grant each serving construct writes for its own routing target (SageMakerCapacityEndpoint, EksInferenceService). */
export function routingGrantOf(facts: RoutingFacts): (grantee: iam.IGrantable) => iam.Grant {
  return (grantee) => (facts.kind === 'sagemaker'
    ? iam.Grant.addToPrincipal({ grantee, actions: ['sagemaker:DescribeEndpoint', 'sagemaker:UpdateEndpointWeightsAndCapacities'], resourceArns: [facts.endpointArn] })
    : iam.Grant.addToPrincipal({ grantee, actions: ['elasticloadbalancing:DescribeListeners', 'elasticloadbalancing:DescribeTargetHealth'], resourceArns: ['*'] })
      .combine(iam.Grant.addToPrincipal({ grantee, actions: ['elasticloadbalancing:ModifyListener'], resourceArns: [facts.listenerArn] })));
}

/** A serving construct stand-in: the facts a SageMaker or EKS construct would hand over. */
export function servingOf(
  facts: RoutingFacts,
  service: string,
  tokensPerRequest = 250,
  signals: ServingSignals = { classes: {} },
): IInferenceServing {
  // Like both serving constructs, it binds replica floors (SageMaker's binding deploys nothing).
  return {
    servingDescription: () => ({ service, tokensPerRequest, routing: facts, signals }),
    grantRouting: routingGrantOf(facts),
    enableReplicaFloors: () => undefined,
  };
}
