import type * as cognito from 'aws-cdk-lib/aws-cognito';
import * as iam from 'aws-cdk-lib/aws-iam';

/**
 * What a principal that writes a listener's actions back needs besides elasticloadbalancing:ModifyListener when one of
 * them is `authenticate-cognito`: Elastic Load Balancing checks cognito-idp:DescribeUserPoolClient on the action's user
 * pool with the caller's permissions. The AWS policies for principals that write listener actions grant it
 * (ElasticLoadBalancingFullAccess v9, AmazonEKSLoadBalancingPolicy v10, iann0036/iam-dataset@2073fa5
 * aws/managedpolicies; the AWS Load Balancer Controller's published IAM policy); the Service Authorization Reference
 * lists its resource as `userpool*` (arn:${Partition}:cognito-idp:${Region}:${Account}:userpool/${UserPoolId},
 * list_amazoncognitouserpools.html). Granted on the given pools only: the response holds the app client's secret.
 */
export function grantListenerAuthentication(grantee: iam.IGrantable, userPools: readonly cognito.IUserPool[]): iam.Grant | undefined {
  if (userPools.length === 0) return undefined;
  return iam.Grant.addToPrincipal({ grantee, actions: ['cognito-idp:DescribeUserPoolClient'], resourceArns: userPools.map((p) => p.userPoolArn) });
}
