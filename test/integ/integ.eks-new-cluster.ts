/**
 * Integration test (@aws-cdk/integ-tests-alpha assertions, run by @aws-cdk/integ-runner in an account) of an
 * EksInferenceService on a new cluster: an EksInferenceCluster (VPC, private EKS 1.33 cluster, Karpenter, KEDA, the
 * Load Balancer Controller, the observability add-on) and the example's chat service (vLLM on g6e.xlarge, TGI on
 * g5.xlarge, at 1 request/s: one replica each). What a deployed stack must show (eks-assertions.ts): each class's
 * NodePool Ready and its ScaledObject's HPA created by KEDA, and the listener forwarding to each class's target group
 * at its initial weight. The images are the example's
 * placeholders: their pods do not start (ImagePullBackOff), which none of these assertions reads; Karpenter still
 * launches a node per pending replica (README "Integration tests": cost).
 * Offline, `npm test` synthesizes this app and compares it with the committed snapshot (integ-snapshot.test.ts).
 */
import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
import { type App, Stack } from 'aws-cdk-lib';
import { IntegTest } from '@aws-cdk/integ-tests-alpha';
import { chatClasses } from '../../examples/eks-stable-diffusion/chat';
import { EksInferenceCluster } from '../../lib/eks/cluster';
import { EksInferenceService } from '../../lib/eks/inference-service';
import { EKS_INTEG_CONTRACT, eksServiceAssertions } from './eks-assertions';
import { integApp, type IntegAppOptions, integEnv, seedAvailabilityZones } from './integ-app';

export function eksNewClusterApp(options?: IntegAppOptions): App {
  const app = integApp(options);
  const env = integEnv();
  const stack = new Stack(app, 'IntegEksNewCluster', { env });
  seedAvailabilityZones(stack);
  const cluster = new EksInferenceCluster(stack, 'Cluster', { kubectlLayer: new KubectlV34Layer(stack, 'KubectlLayer') });
  const service = new EksInferenceService(stack, 'Chat', { contract: EKS_INTEG_CONTRACT, classes: chatClasses(stack.account, stack.region), cluster });

  const integ = new IntegTest(app, 'EksNewCluster', {
    testCases: [stack],
    diffAssets: true,
    assertionStack: new Stack(app, 'IntegEksNewClusterAssertions', { env }),
    stackUpdateWorkflow: false,
  });
  eksServiceAssertions(integ, stack, service);
  return app;
}

if (require.main === module) eksNewClusterApp().synth();
