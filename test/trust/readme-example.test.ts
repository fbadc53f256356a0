/** The example of docs/artifact-trust.md, compiled and run. */
import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
import { type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { type CapacityClassSpec, type ServiceContract, ApprovedImagesAdmission, ArtifactTrust, defineCapacityClasses } from '../../lib';
import { LLAMA_CONTRACT, llamaClasses, testStack } from '../util';

function readmeExample(stack: Stack, ciRole: iam.IRole, cluster: eks.ICluster, specs: CapacityClassSpec[], contract: ServiceContract) {
  const trust = new ArtifactTrust(stack, 'Trust', {
    repositoryNames: ['vllm', 'neuron'], // immutable tags, scan on push, KMS-encrypted, signed on push
    publishers: [ciRole], // may push images and sign model digests
  });
  const classes = defineCapacityClasses(specs, { contract });
  // Serving constructs take `artifactGate: trust`; each class's Model/Deployment then depends on trust.gateFor(this, cls).
  new ApprovedImagesAdmission(stack, 'Admission', { cluster, namespace: 'serving', images: classes.map((c) => c.artifact.image) });
  return { trust, classes };
}

test('the README example builds the trust construct and the admission policy', () => {
  const { stack } = testStack();
  const ciRole = new iam.Role(stack, 'Ci', { assumedBy: new iam.AccountRootPrincipal() });
  const cluster = new eks.Cluster(stack, 'Cluster', {
    version: eks.KubernetesVersion.V1_33,
    kubectlProviderOptions: { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') },
  });
  const { trust, classes } = readmeExample(stack, ciRole, cluster, llamaClasses(), LLAMA_CONTRACT);
  for (const cls of classes.filter((c) => c.artifact.modelData?.versionId)) trust.gateFor(stack, cls);
  const template = Template.fromStack(stack);
  template.resourceCountIs('Custom::ClassArtifactVerification', 2);
  template.resourceCountIs('Custom::AWSCDK-EKS-KubernetesResource', 1);
});
