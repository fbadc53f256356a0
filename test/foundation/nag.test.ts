import * as iam from 'aws-cdk-lib/aws-iam';
import { acknowledgeManagedPolicies, acknowledgeWildcardResources } from '../../lib/util/nag';
import { nagFindings, testStack } from '../util';

function wildcardRole(id: string, resources: string[]) {
  const { app, stack } = testStack(id);
  const role = new iam.Role(stack, 'Role', {
    assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com'),
    managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('AmazonEKSWorkerNodePolicy')],
  });
  const policy = new iam.Policy(stack, 'Policy', { statements: [new iam.PolicyStatement({ actions: ['ec2:DescribeInstances'], resources })] });
  policy.attachToRole(role);
  // The acknowledgements are computed while the app synthesizes (the ARNs resolve then), as `cdk synth` does before cdk-nag runs.
  const synth = () => app.synth();
  return { stack, role, policy, synth };
}

describe('cdk-nag acknowledgements', () => {
  test('without acknowledgements the wildcard and managed-policy findings are reported', () => {
    const { stack } = wildcardRole('Bare', ['*']);
    expect(nagFindings(stack)).toEqual([
      expect.stringContaining('AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/AmazonEKSWorkerNodePolicy]'),
      expect.stringContaining('AwsSolutions-IAM5[Resource::*]'),
    ]);
  });

  test('acknowledgements computed from the resolved template suppress exactly those findings', () => {
    const { stack, role, policy, synth } = wildcardRole('Acked', ['*']);
    acknowledgeWildcardResources(policy, 'Describe actions have no resource-level permissions.');
    acknowledgeManagedPolicies(role, 'Worker nodes need the AWS-maintained node policy.');
    synth();
    expect(nagFindings(stack)).toEqual([]);
  });

  test('a filter keeps unexpected wildcards reported', () => {
    const { stack, role, policy, synth } = wildcardRole('Filtered', ['*', 'arn:aws:s3:::bucket/*']);
    acknowledgeWildcardResources(policy, 'Only the describe wildcard is expected.', (r) => r === '*');
    acknowledgeManagedPolicies(role, 'Worker nodes need the AWS-maintained node policy.');
    synth();
    expect(nagFindings(stack)).toEqual([expect.stringContaining('AwsSolutions-IAM5[Resource::arn:aws:s3:::bucket/*]')]);
  });
});
