import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
import { type Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import { InferenceObservability } from '../../lib/control/observability';
import { Reconciler } from '../../lib/control/reconciler';
import { EksInferenceCluster } from '../../lib/eks/cluster';
import { EksInferenceService } from '../../lib/eks/inference-service';
import { type LoadBalancerOptions } from '../../lib/eks/routing';
import { FETCHER_IMAGE, LLAMA_CONTRACT, llamaClasses, nagFindings, nistFindings, testStack } from '../util';

/** A new cluster with the VPC the library creates, and one service with the given ALB options. */
function serviceOnDefaultCluster(loadBalancer: LoadBalancerOptions = {}): { stack: Stack; template: Template; service: EksInferenceService } {
  const { stack } = testStack();
  const cluster = new EksInferenceCluster(stack, 'Cluster', { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
  const service = new EksInferenceService(stack, 'Llama', {
    contract: LLAMA_CONTRACT, classes: llamaClasses(), cluster, modelDataFetcherImage: FETCHER_IMAGE, loadBalancer,
  });
  return { stack, template: Template.fromStack(stack), service };
}

describe('cdk-nag NIST 800-53 rev 5 on what EksInferenceCluster and EksInferenceService create', () => {
  let stack: Stack;
  let template: Template;

  beforeAll(() => {
    ({ stack, template } = serviceOnDefaultCluster());
  });

  test('a new cluster (its own VPC) and an internal service: no unacknowledged AwsSolutions or NIST finding', () => {
    expect(nagFindings(stack)).toEqual([]);
    expect(nistFindings(stack)).toEqual([]);
  });

  test('fails when the VPC the library creates auto-assigns public IPs, keeps default security-group rules or writes unencrypted flow logs', () => {
    const subnets = Object.values(template.findResources('AWS::EC2::Subnet'));
    expect(subnets).toHaveLength(6);
    expect(subnets.map((s) => s.Properties.MapPublicIpOnLaunch ?? false)).toEqual(subnets.map(() => false));
    template.resourceCountIs('Custom::VpcRestrictDefaultSG', 1);
    const flowLogGroup = Object.entries(template.findResources('AWS::Logs::LogGroup')).find(([id]) => id.startsWith('ClusterVpcFlowLogs'))!;
    expect(flowLogGroup[1].Properties.KmsKeyId).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^ClusterVpcFlowLogKey/), 'Arn'] });
    template.hasResourceProperties('AWS::EC2::FlowLog', { LogGroupName: { Ref: flowLogGroup[0] }, TrafficType: 'ALL' });
  });

  test('fails when the access-log bucket can lose a log object silently or keep it forever', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      VersioningConfiguration: { Status: 'Enabled' },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      LifecycleConfiguration: { Rules: [Match.objectLike({ ExpirationInDays: 90, NoncurrentVersionExpiration: { NoncurrentDays: 90 }, Status: 'Enabled' })] },
    });
    template.hasResource('AWS::S3::Bucket', { DeletionPolicy: 'Retain' });
  });

  test('the NIST rules acknowledged on the ALB, its listener, its bucket and the VPC, each with its reason', () => {
    const acknowledged = (path: string) => {
      const scope = stack.node.findChild('Llama').node.tryFindChild(path) ?? stack.node.findChild('Cluster').node.findChild(path);
      return scope.node.findAll().flatMap((c) => c.node.metadata)
        .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
        .flatMap((m) => Object.entries(m.data as Record<string, unknown>))
        .filter(([id]) => id.includes('NIST'))
        .map(([id, reason]) => `${id.replace(/^.*NIST\.800\.53\.R5-/, '')} ${JSON.stringify(reason).length > 80 ? 'with reason' : 'WITHOUT REASON'}`);
    };
    expect(acknowledged('LoadBalancer').sort()).toEqual([
      'ALBHttpToHttpsRedirection with reason', 'ALBWAFEnabled with reason', 'EC2RestrictedCommonPorts with reason',
      'EC2RestrictedSSH with reason', 'ELBDeletionProtectionEnabled with reason', 'ELBv2ACMCertificateRequired with reason',
    ]);
    expect(acknowledged('AccessLogs').sort()).toEqual(['S3BucketLoggingEnabled with reason', 'S3BucketReplicationEnabled with reason', 'S3DefaultEncryptionKMS with reason']);
    expect([...new Set(acknowledged('Vpc'))].sort()).toEqual(['IAMNoInlinePolicy with reason', 'VPCNoUnrestrictedRouteToIGW with reason']);
  });

  test('a web ACL and deletion protection when asked: the NIST rules then pass on their own', () => {
    const webAclArn = 'arn:aws:wafv2:us-east-1:123456789012:regional/webacl/inference/11111111-2222-3333-4444-555555555555';
    const { stack: s, template: t } = serviceOnDefaultCluster({ webAclArn, deletionProtection: true });
    const lb = Object.keys(t.findResources('AWS::ElasticLoadBalancingV2::LoadBalancer'))[0];
    t.hasResourceProperties('AWS::WAFv2::WebACLAssociation', { ResourceArn: { Ref: lb }, WebACLArn: webAclArn });
    t.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', {
      LoadBalancerAttributes: Match.arrayWith([{ Key: 'deletion_protection.enabled', Value: 'true' }]),
    });
    expect(nistFindings(s)).toEqual([]);
  });

  test('a service that builds its own cluster, with SSE-KMS model data, observed and reconciled: no finding in either pack', () => {
    const { app, stack: s } = testStack('Single');
    const key = new kms.Key(s, 'ModelDataKey', { enableKeyRotation: true });
    const service = new EksInferenceService(s, 'Llama', {
      contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(s, 'Kubectl'),
      modelDataEncryptionKey: key,
    });
    const observability = new InferenceObservability(s, 'Observability', { serving: service });
    new Reconciler(s, 'Reconciler', { serving: service, capacityAlarms: observability.capacityAlarms, alarmTopic: observability.alarms.topic });
    app.synth();
    // The model-data roles (one per class with model data) are pod-identity roles too.
    expect(Object.keys(service.servingRoles).length).toBeGreaterThan(0);
    expect([...nagFindings(s), ...nistFindings(s)]).toEqual([]);
  });

  test('fails when the library hides a weaker choice of the user: an internet-facing HTTP ALB without a web ACL stays a finding', () => {
    const { stack: s } = serviceOnDefaultCluster({ internetFacing: true });
    expect(nistFindings(s).sort()).toEqual([
      'NIST.800.53.R5-ALBHttpToHttpsRedirection Test/Llama/LoadBalancer/Listener/Resource',
      'NIST.800.53.R5-ALBWAFEnabled Test/Llama/LoadBalancer/Resource',
      'NIST.800.53.R5-ELBv2ACMCertificateRequired Test/Llama/LoadBalancer/Listener/Resource',
    ]);
  });
});
