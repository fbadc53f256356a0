/**
 * The size of the Load Balancer Controller role's inline policies, as IAM counts it. IAM counts all of a role's inline
 * policy documents together, whitespace excluded, against 10,240 characters (IAM and STS quotas, "Role policy size":
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html). The role has a policy per class's target
 * group, so a cluster's services are checked against it at synth, not refused at deployment.
 */
import * as iam from 'aws-cdk-lib/aws-iam';
import { LoadBalancerController } from './load-balancer-controller';

export const ROLE_INLINE_POLICY_CHARS = 10_240;

/**
 * The longest values the tokens of these policies take: a 15-character region (us-isof-south-1, aws-cdk-lib
 * region-info) and the longest partition (aws-us-gov), which no region pairs with a name that long: an upper bound. A
 * target group's name has at most 32 characters (CreateTargetGroup) and its id 16 hex digits.
 */
const LONGEST_REGION = 'us-isof-south-1';
const LONGEST_TARGET_GROUP_ARN = `arn:aws-us-gov:elasticloadbalancing:${LONGEST_REGION}:123456789012:targetgroup/${'n'.repeat(32)}/${'f'.repeat(16)}`;

/**
 * The characters IAM counts for the inline policies this library gives the controller's role, each token at its
 * longest: one policy per target group (`LoadBalancerController.targetGroupPolicy`) and, with `withReadStatement` (a
 * controller this library installs), the controller's own policy with its read statement.
 */
export function controllerInlinePolicyChars(targetGroups: number, withReadStatement: boolean): number {
  const chars = (statement: iam.PolicyStatement) => JSON.stringify(new iam.PolicyDocument({ statements: [statement] }).toJSON()).length;
  const read = withReadStatement ? chars(LoadBalancerController.readStatement(LONGEST_REGION)) : 0;
  return read + targetGroups * chars(LoadBalancerController.targetRegistrationStatement([LONGEST_TARGET_GROUP_ARN]));
}
