/**
 * The size of the Load Balancer Controller role's inline policies, as IAM counts it. IAM counts all of a role's inline
 * policy documents together, whitespace excluded, against 10,240 characters (IAM and STS quotas, "Role policy size":
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html). The role names every class's target
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
const LONGEST_TARGET_GROUP_ARN_PREFIX = `arn:aws-us-gov:elasticloadbalancing:${LONGEST_REGION}:123456789012:targetgroup/${'n'.repeat(32)}/`;

/** Where a service's target groups are registered: the cluster stack's policy, or a policy of its own (another stack). */
export interface TargetRegistration {
  readonly targetGroups: number;
  readonly ownPolicy: boolean;
}

/**
 * The characters IAM counts for the inline policies this library gives the controller's role, each token at its
 * longest. `withReadStatement`: the policy in the cluster's stack also holds the controller's read statement (a
 * controller this library installs).
 */
export function controllerInlinePolicyChars(registrations: readonly TargetRegistration[], withReadStatement: boolean): number {
  let next = 0;
  const arns = (n: number) => Array.from({ length: n }, () => LONGEST_TARGET_GROUP_ARN_PREFIX + (next++).toString(16).padStart(16, '0'));
  const chars = (statements: iam.PolicyStatement[]) => JSON.stringify(new iam.PolicyDocument({ statements }).toJSON()).length;
  const inStack = registrations.filter((r) => !r.ownPolicy).reduce((n, r) => n + r.targetGroups, 0);
  const shared = [
    ...(withReadStatement ? [LoadBalancerController.readStatement(LONGEST_REGION)] : []),
    ...(inStack > 0 ? [LoadBalancerController.targetRegistrationStatement(arns(inStack))] : []),
  ];
  const own = registrations.filter((r) => r.ownPolicy).map((r) => chars([LoadBalancerController.targetRegistrationStatement(arns(r.targetGroups))]));
  return (shared.length > 0 ? chars(shared) : 0) + own.reduce((a, b) => a + b, 0);
}
