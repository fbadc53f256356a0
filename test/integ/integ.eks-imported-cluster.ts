/**
 * Integration test (@aws-cdk/integ-tests-alpha assertions, run by @aws-cdk/integ-runner in an account) of an
 * EksInferenceService on an imported cluster whose controllers run already, the way a platform team adopts the library:
 * - `IntegEksImportedHost` stands in for the platform team's cluster: an EksInferenceCluster with a literal name that
 *   installs Karpenter, KEDA, the Load Balancer Controller and the observability add-on;
 * - `IntegEksImported` imports it with aws-eks-v2 `Cluster.fromClusterAttributes` and
 *   `KubectlProvider.fromKubectlProviderAttributes` (the host's kubectl Lambda), marks every controller and the add-on
 *   existing (nothing installed twice) and runs the example's chat service on it.
 * What the imported stack must show (eks-assertions.ts): each class's NodePool Ready and its ScaledObject's HPA created
 * (Karpenter and KEDA of the host took the objects applied through the imported provider), and the listener at the initial weights.
 * Offline, `npm test` synthesizes this app and compares it with the committed snapshot (integ-snapshot.test.ts).
 */
import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
import { type App, Stack } from 'aws-cdk-lib';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { IntegTest } from '@aws-cdk/integ-tests-alpha';
import { chatClasses } from '../../examples/eks-stable-diffusion/chat';
import { EksInferenceCluster } from '../../lib/eks/cluster';
import { EksInferenceService } from '../../lib/eks/inference-service';
import { EKS_INTEG_CONTRACT, eksServiceAssertions } from './eks-assertions';
import { integApp, type IntegAppOptions, integEnv, seedAvailabilityZones } from './integ-app';

/** Literal: IAM conditions and Karpenter's discovery tags need the imported cluster's name at synth. */
const HOST_CLUSTER_NAME = 'cai-integ-imported';

export function eksImportedClusterApp(options?: IntegAppOptions): App {
  const app = integApp(options);
  const env = integEnv();

  const hostStack = new Stack(app, 'IntegEksImportedHost', { env });
  seedAvailabilityZones(hostStack);
  const host = new EksInferenceCluster(hostStack, 'Cluster', { clusterName: HOST_CLUSTER_NAME, kubectlLayer: new KubectlV34Layer(hostStack, 'KubectlLayer') });
  const hostCluster = host.cluster as eks.Cluster;

  const stack = new Stack(app, 'IntegEksImported', { env });
  const imported = eks.Cluster.fromClusterAttributes(stack, 'Imported', {
    clusterName: HOST_CLUSTER_NAME,
    vpc: host.vpc,
    clusterSecurityGroupId: hostCluster.clusterSecurityGroupId,
    kubectlProvider: eks.KubectlProvider.fromKubectlProviderAttributes(stack, 'KubectlProvider', { serviceToken: hostCluster.kubectlProvider!.serviceToken }),
  });
  const cluster = new EksInferenceCluster(stack, 'Cluster', {
    cluster: imported,
    existingControllers: {
      karpenter: { nodeRoleName: host.nodeRoleName },
      keda: true,
      // Imported by ARN: the grant on the services' target groups is then a policy of this stack (a grant on the host's
      // role object would put this stack's target groups into the host's template, a cycle).
      loadBalancerController: { role: iam.Role.fromRoleArn(stack, 'LoadBalancerControllerRole', host.loadBalancerController!.role.roleArn) },
    },
    // The host installed the add-on and its log groups.
    observability: { existingAddon: {} },
  });
  const service = new EksInferenceService(stack, 'Chat', { contract: EKS_INTEG_CONTRACT, classes: chatClasses(stack.account, stack.region), cluster });

  const integ = new IntegTest(app, 'EksImportedCluster', {
    testCases: [hostStack, stack],
    diffAssets: true,
    assertionStack: new Stack(app, 'IntegEksImportedAssertions', { env }),
    stackUpdateWorkflow: false,
  });
  eksServiceAssertions(integ, stack, service);
  return app;
}

if (require.main === module) eksImportedClusterApp().synth();
