import { type AlbRoutingFacts, type RoutedClassFacts, type RoutingFacts } from '../../lib/core/reconciler/routing-facts';
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

/** The llama service's ALB in the test account: one target group per class, in the order given. */
export function albFactsOf(classes: readonly RoutedClassFacts[]): AlbRoutingFacts {
  return {
    kind: 'alb',
    listenerArn: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/llama/50dc6c495c0c9188/f2f7dc8efc522ab2',
    loadBalancerFullName: 'app/llama/50dc6c495c0c9188',
    targets: classes.map((c, i) => ({
      class: c,
      targetGroupArn: `arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/${c.name}/6d0ecf831eec9f0${i}`,
      targetGroupFullName: `targetgroup/${c.name}/6d0ecf831eec9f0${i}`,
      namespace: 'llama',
      deploymentName: `llama-${c.name}`,
      nodePoolName: `llama-${c.name}`,
    })),
  };
}
