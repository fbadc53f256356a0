import { Fn, type Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
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
