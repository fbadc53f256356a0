/**
 * Can each role make the calls its handler makes, and no more? The probes: every call of the handler on the resource
 * it calls it on (must be allowed), the same calls on a neighbouring resource, and the destructive calls nearest to
 * them (must be denied). Judged on IAM's policy simulator (SimulatePrincipalPolicy: every policy attached to the role
 * and its permissions boundary; https://docs.aws.amazon.com/IAM/latest/APIReference/API_SimulatePrincipalPolicy.html).
 */
import { type RoutingFacts } from '../reconciler/routing-facts';
import { albWeightsLocation } from '../reconciler/targets/alb';
import { type CheckResult } from './result';

export interface PermissionProbe {
  readonly action: string;
  readonly resource: string;
  readonly expect: 'allowed' | 'denied';
  readonly why: string;
}

/** The same ARN with its last path segment renamed: a resource of the same type the role was not granted. */
function neighbour(arn: string): string {
  return arn.replace(/([^/]+)$/, '$1-not-granted');
}

/**
 * The reconciler's calls (lambda/reconciler: GetMetricData in reconcile.ts; DescribeEndpoint and
 * UpdateEndpointWeightsAndCapacities in targets/sagemaker.ts; DescribeListeners and ModifyListener, or DescribeRules and
 * ModifyRule for a rule on a shared listener, in targets/alb.ts)
 * and the ones it must not make. It publishes its metrics as EMF in its log, so cloudwatch:PutMetricData is denied.
 */
export function reconcilerProbes(facts: RoutingFacts): PermissionProbe[] {
  const common: PermissionProbe[] = [
    { action: 'cloudwatch:GetMetricData', resource: '*', expect: 'allowed', why: 'reads its signals (no resource-level permissions)' },
    { action: 'cloudwatch:PutMetricData', resource: '*', expect: 'denied', why: 'its metrics are EMF log lines' },
    { action: 'iam:PassRole', resource: '*', expect: 'denied', why: 'it never hands a role to a service' },
  ];
  if (facts.kind === 'sagemaker') {
    const arn = facts.endpointArn;
    return [
      ...common,
      { action: 'sagemaker:DescribeEndpoint', resource: arn, expect: 'allowed', why: 'reads the variants\' weights and counts' },
      { action: 'sagemaker:UpdateEndpointWeightsAndCapacities', resource: arn, expect: 'allowed', why: 'writes the weights and replica floors' },
      { action: 'sagemaker:UpdateEndpointWeightsAndCapacities', resource: neighbour(arn), expect: 'denied', why: 'another endpoint' },
      { action: 'sagemaker:UpdateEndpoint', resource: arn, expect: 'denied', why: 'replaces the endpoint configuration' },
      { action: 'sagemaker:DeleteEndpoint', resource: arn, expect: 'denied', why: 'destructive' },
    ];
  }
  // The listener's default action, or the service's rule on a shared listener.
  const at = albWeightsLocation(facts);
  const other = at.write === 'ModifyRule' ? 'another rule (another service on the shared listener)' : 'another listener';
  return [
    ...common,
    { action: `elasticloadbalancing:${at.read}`, resource: '*', expect: 'allowed', why: 'reads the forward action (no resource-level permissions)' },
    { action: `elasticloadbalancing:${at.write}`, resource: at.arn, expect: 'allowed', why: 'writes the target-group weights' },
    { action: `elasticloadbalancing:${at.write}`, resource: neighbour(at.arn), expect: 'denied', why: other },
    { action: 'elasticloadbalancing:DeleteListener', resource: facts.listenerArn, expect: 'denied', why: 'destructive' },
    ...(at.write === 'ModifyRule'
      ? [{ action: 'elasticloadbalancing:ModifyListener', resource: facts.listenerArn, expect: 'denied' as const, why: 'the shared listener is not the service\'s' }]
      : []),
    ...facts.targets.slice(0, 1).map((t): PermissionProbe => ({
      action: 'elasticloadbalancing:RegisterTargets', resource: t.targetGroupArn, expect: 'denied', why: 'targets are the load balancer controller\'s',
    })),
  ];
}

/** The KEDA operator's one call (lib/eks/keda.ts) and its nearest neighbours. */
export function kedaOperatorProbes(): PermissionProbe[] {
  return [
    { action: 'cloudwatch:GetMetricData', resource: '*', expect: 'allowed', why: 'reads the scaling metrics' },
    { action: 'cloudwatch:PutMetricData', resource: '*', expect: 'denied', why: 'it only reads' },
    { action: 'cloudwatch:ListMetrics', resource: '*', expect: 'denied', why: 'not a call KEDA\'s aws-cloudwatch scaler makes' },
  ];
}

/** SimulatePrincipalPolicy's answer for one action and resource. */
export interface SimulatedDecision {
  readonly EvalActionName?: string;
  readonly EvalResourceName?: string;
  readonly EvalDecision?: string;
}

/** One result per probe, from the simulator's decisions for the role. */
export function permissionChecks(
  roleName: string,
  roleArn: string,
  probes: readonly PermissionProbe[],
  decisions: readonly SimulatedDecision[],
): CheckResult[] {
  return probes.map((p) => {
    const d = decisions.find((x) => x.EvalActionName === p.action && (x.EvalResourceName ?? '*') === p.resource)?.EvalDecision;
    const allowed = d === 'allowed';
    const ok = d !== undefined && allowed === (p.expect === 'allowed');
    return {
      id: `iam:${roleName}:${p.action}:${p.resource}`,
      status: ok ? 'pass' : 'fail',
      settles: `${roleName} ${p.expect === 'allowed' ? 'can' : 'cannot'} call ${p.action} on ${p.resource} (${p.why})`,
      detail: d === undefined ? 'the simulator returned no decision for it' : `SimulatePrincipalPolicy(${roleArn}): ${d}`,
    };
  });
}
