import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
import { Fn, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import { type Construct } from 'constructs';
import { EksInferenceCluster } from '../../lib/eks/cluster';
import { EksInferenceService } from '../../lib/eks/inference-service';
import { LLAMA_CONTRACT, llamaClasses, nagFindings, testStack, FETCHER_IMAGE } from '../util';

function importCluster(stack: Stack, clusterName: string): eks.ICluster {
  const vpc = new ec2.Vpc(stack, 'Vpc', {
    availabilityZones: ['us-east-1a', 'us-east-1b'],
    natGateways: 1,
    restrictDefaultSecurityGroup: false,
    flowLogs: { all: {} },
  });
  return eks.Cluster.fromClusterAttributes(stack, 'Imported', {
    clusterName,
    vpc,
    clusterSecurityGroupId: 'sg-0123456789abcdef0',
    kubectlProvider: eks.KubectlProvider.fromKubectlProviderAttributes(stack, 'Kubectl', {
      serviceToken: 'arn:aws:lambda:us-east-1:123456789012:function:kubectl-provider',
    }),
  });
}

describe('EksInferenceService on an imported cluster', () => {
  let stack: Stack;
  let template: Template;

  beforeAll(() => {
    ({ stack } = testStack());
    const cluster = importCluster(stack, 'prod-inference');
    new EksInferenceService(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: llamaClasses().slice(0, 2), cluster, modelDataFetcherImage: FETCHER_IMAGE });
    template = Template.fromStack(stack);
  });

  test('creates no cluster and installs the charts through the imported kubectl provider', () => {
    template.resourceCountIs('AWS::EKS::Cluster', 0);
    template.resourcePropertiesCountIs(
      'Custom::AWSCDK-EKS-HelmChart',
      { ServiceToken: 'arn:aws:lambda:us-east-1:123456789012:function:kubectl-provider', Wait: true },
      3,
    );
  });

  test("uses the imported cluster's name for pod identity, IAM conditions and the ALB-to-pod rule", () => {
    template.hasResourceProperties('AWS::EKS::PodIdentityAssociation', { ClusterName: 'prod-inference', ServiceAccount: 'karpenter' });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Sid: 'AllowScopedDeletion',
            Condition: Match.objectLike({ StringEquals: { 'aws:ResourceTag/kubernetes.io/cluster/prod-inference': 'owned' } }),
          }),
        ]),
      },
    });
    template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', { GroupId: 'sg-0123456789abcdef0', FromPort: 8080, ToPort: 8080 });
  });

  test('cdk-nag finds nothing unacknowledged', () => {
    expect(nagFindings(stack)).toEqual([]);
  });

  test('fails when the imported cluster name is a token', () => {
    const { stack: other } = testStack();
    const cluster = importCluster(other, Fn.importValue('ClusterName'));
    expect(() => new EksInferenceService(other, 'Llama', { contract: LLAMA_CONTRACT, classes: llamaClasses(), cluster, modelDataFetcherImage: FETCHER_IMAGE })).toThrow(
      /clusterName: is a CDK token; pass the literal cluster name/,
    );
  });
});

describe('one imported cluster, its controllers installed once per account and Region (review R230)', () => {
  const ALL_EXISTING = {
    existingControllers: { karpenter: { nodeRoleName: 'KarpenterNodeRole' }, keda: true, loadBalancerController: {} },
    observability: { existingAddon: {} },
  };
  const service = (
    scope: Construct, id: string, cluster: eks.ICluster | EksInferenceCluster, name = id.toLowerCase(), classes = llamaClasses().slice(0, 2),
  ) =>
    new EksInferenceService(scope, id, { contract: { ...LLAMA_CONTRACT, name }, classes, cluster, modelDataFetcherImage: FETCHER_IMAGE });

  test('two services given the same eks.ICluster: the second fails at synth, naming the first and how to share', () => {
    const { stack } = testStack();
    const cluster = importCluster(stack, 'prod-inference');
    service(stack, 'A', cluster);
    expect(() => service(stack, 'B', cluster)).toThrow(new RegExp(
      "^EksInferenceCluster 'Test/B/Default' is invalid \\(1 problem\\):\\n  - cluster: installs Karpenter, KEDA, the AWS Load Balancer Controller, "
      + "the amazon-cloudwatch-observability add-on, the add-on's log groups on the cluster 'prod-inference' in 123456789012/us-east-1, which the "
      + "EksInferenceCluster at 'Test/A/Default' installs too \\(what marks them as running: existingControllers.karpenter, existingControllers.keda, "
      + 'existingControllers.loadBalancerController, observability.existingAddon, observability.existingLogGroups\\); allowed: .*one EksInferenceCluster '
      + "shared by the cluster's services \\(their `cluster`\\), or a second one that marks what the first installs as running .*helm upgrade --install"));
  });

  test('one EksInferenceCluster for both services installs each controller, the add-on and its log groups once', () => {
    const { stack } = testStack();
    const shared = new EksInferenceCluster(stack, 'Cluster', { cluster: importCluster(stack, 'prod-inference') });
    service(stack, 'A', shared);
    service(stack, 'B', shared);
    const t = Template.fromStack(stack);
    t.resourceCountIs('Custom::AWSCDK-EKS-HelmChart', 3);
    t.resourceCountIs('AWS::EKS::Addon', 1);
    t.resourcePropertiesCountIs('AWS::EKS::PodIdentityAssociation', { ServiceAccount: 'karpenter' }, 1);
  });

  test('a second EksInferenceCluster passes once it marks what the first installs as running, and is told what it still installs', () => {
    const { stack } = testStack();
    const cluster = importCluster(stack, 'prod-inference');
    service(stack, 'A', cluster);
    expect(() => new EksInferenceCluster(stack, 'Partly', { cluster, existingControllers: ALL_EXISTING.existingControllers })).toThrow(
      new RegExp("cluster: installs the amazon-cloudwatch-observability add-on, the add-on's log groups on the cluster 'prod-inference' .*"
        + '\\(what marks them as running: observability.existingAddon, observability.existingLogGroups\\)'));
    expect(() => new EksInferenceCluster(stack, 'AppLogs', { cluster, ...ALL_EXISTING, observability: { existingAddon: { applicationLogGroupExists: false } } }))
      .toThrow(/cluster: installs the add-on's log groups .*\(what marks them as running: observability\.existingAddon\.applicationLogGroupExists/);
    const second = new EksInferenceCluster(stack, 'Second', { cluster, ...ALL_EXISTING });
    service(stack, 'B', second);
    Template.fromStack(stack).resourceCountIs('Custom::AWSCDK-EKS-HelmChart', 3);
  });

  test('across the stacks of one app in the same account and Region, not in another Region; a new cluster of that name too', () => {
    const { app, stack } = testStack();
    service(stack, 'A', importCluster(stack, 'prod-inference'));
    const same = new Stack(app, 'Same', { env: { account: '123456789012', region: 'us-east-1' } });
    expect(() => service(same, 'B', importCluster(same, 'prod-inference'))).toThrow(/which the EksInferenceCluster at 'Test\/A\/Default' installs too/);
    const west = new Stack(app, 'West', { env: { account: '123456789012', region: 'us-west-2' } });
    expect(() => service(west, 'B', importCluster(west, 'prod-inference'))).not.toThrow();
    expect(() => new EksInferenceCluster(stack, 'New', { clusterName: 'prod-inference', kubectlLayer: new KubectlV34Layer(stack, 'KubectlLayer') }))
      .toThrow(/EksInferenceCluster 'Test\/New' is invalid[\s\S]*clusterName: installs Karpenter, .* at 'Test\/A\/Default' installs too/);
  });

  test('an imported cluster whose name is a token is claimed under the literal clusterName it must be given (another literal is not seen)', () => {
    const { stack } = testStack();
    const cluster = importCluster(stack, Fn.importValue('ClusterName'));
    const named = (id: string, clusterName: string) => () => new EksInferenceService(stack, id, {
      contract: { ...LLAMA_CONTRACT, name: id.toLowerCase() }, classes: llamaClasses().slice(0, 2), cluster, clusterName,
      modelDataFetcherImage: FETCHER_IMAGE,
    });
    named('A', 'prod-inference')();
    expect(named('B', 'prod-inference-2')).not.toThrow();
    expect(named('C', 'prod-inference')).toThrow(/on the cluster 'prod-inference' in 123456789012\/us-east-1, which the EksInferenceCluster at 'Test\/A\/Default' installs too/);
  });

  test('the Neuron device plugin is claimed when the first Neuron class attaches', () => {
    const { stack } = testStack();
    const cluster = importCluster(stack, 'prod-inference');
    service(stack, 'A', new EksInferenceCluster(stack, 'First', { cluster }), 'a', llamaClasses());
    const second = new EksInferenceCluster(stack, 'Second', { cluster, ...ALL_EXISTING });
    service(stack, 'B', second);
    expect(() => service(stack, 'C', second, 'c', llamaClasses())).toThrow(new RegExp(
      "^EksInferenceService 'Test/C' is invalid \\(1 problem\\):\\n  - classes: installs the Neuron device plugin on the cluster 'prod-inference' "
      + "in 123456789012/us-east-1, which the EksInferenceCluster at 'Test/First' installs too \\(what marks them as running: existingControllers.neuronDevicePlugin\\)"));
    const third = new EksInferenceCluster(stack, 'Third', { cluster, ...ALL_EXISTING,
      existingControllers: { ...ALL_EXISTING.existingControllers, neuronDevicePlugin: true } });
    expect(() => service(stack, 'D', third, 'd', llamaClasses())).not.toThrow();
  });
});

describe('EksInferenceCluster settings an imported cluster would silently ignore (review R231)', () => {
  test('a clusterName other than the imported cluster\'s fails', () => {
    const { stack } = testStack();
    const cluster = importCluster(stack, 'prod');
    expect(() => new EksInferenceCluster(stack, 'Named', { cluster, clusterName: 'other' }))
      .toThrow("clusterName: 'other' differs from the imported cluster's name 'prod'; allowed: unset, or the same name");
    expect(() => new EksInferenceCluster(stack, 'Same', { cluster, clusterName: 'prod' })).not.toThrow();
  });

  test('a chart version of a controller marked as running fails', () => {
    const { stack } = testStack();
    const cluster = importCluster(stack, 'prod');
    expect(() => new EksInferenceCluster(stack, 'Pinned', { cluster, existingControllers: { keda: true }, chartVersions: { keda: '2.20.2' } }))
      .toThrow("chartVersions.keda: '2.20.2' is ignored: existingControllers.keda marks it as already running");
  });
});
