import { type RoutingFacts } from '../../lib/core/reconciler/routing-facts';
import { ALB_TARGET_HEALTH_READ, albWeightsLocation } from '../../lib/core/reconciler/targets/alb';
import { type ServingSignals } from '../../lib/core/reconciler/serving';
import * as iam from 'aws-cdk-lib/aws-iam';
import { type IInferenceServing } from '../../lib/control/serving';

/**
 * The grant each serving construct writes for its own routing target (SageMakerCapacityEndpoint.grantRouting,
 * EksInferenceService.grantRouting, without the listener's Cognito authentication): the same actions on the same
 * resources, so a test of the Reconciler's policy sees what a deployed one gets.
 */
export function routingGrantOf(facts: RoutingFacts): (grantee: iam.IGrantable) => iam.Grant {
  return (grantee) => {
    if (facts.kind === 'sagemaker') {
      return iam.Grant.addToPrincipal({ grantee, actions: ['sagemaker:DescribeEndpoint', 'sagemaker:UpdateEndpointWeightsAndCapacities'], resourceArns: [facts.endpointArn] })
        .combine(iam.Grant.addToPrincipal({ grantee, actions: ['application-autoscaling:DescribeScalableTargets'], resourceArns: ['*'] }));
    }
    const at = albWeightsLocation(facts);
    return iam.Grant.addToPrincipal({ grantee, actions: [at.read, ALB_TARGET_HEALTH_READ].map((a) => `elasticloadbalancing:${a}`), resourceArns: ['*'] })
      .combine(iam.Grant.addToPrincipal({ grantee, actions: [`elasticloadbalancing:${at.write}`], resourceArns: [at.arn] }));
  };
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
