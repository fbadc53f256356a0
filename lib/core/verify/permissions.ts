/**
 * Can each role make the calls its handler makes, and no more? The probes: every call of the handler on the resource
 * it calls it on (must be allowed), the same calls on a neighbouring resource, and the destructive calls nearest to
 * them (must be denied). Judged on IAM's policy simulator (SimulatePrincipalPolicy: every policy attached to the role
 * and its permissions boundary; https://docs.aws.amazon.com/IAM/latest/APIReference/API_SimulatePrincipalPolicy.html).
 */
import { type RoutingFacts } from '../reconciler/routing-facts';
import { routingTarget } from '../reconciler/targets';
import { type PermissionProbe } from './probe';
import { type CheckResult } from './result';

/**
 * The reconciler's calls (lambda/reconciler: GetMetricData in reconcile.ts; its target's reads and writes, whose probes
 * each target kind lists: `writerProbes` in lib/core/reconciler/targets/<kind>.ts) and the ones it must not make. It
 * publishes its metrics as EMF in its log, so cloudwatch:PutMetricData is denied.
 */
export function reconcilerProbes(facts: RoutingFacts): PermissionProbe[] {
  return [
    { action: 'cloudwatch:GetMetricData', resource: '*', expect: 'allowed', why: 'reads its signals (no resource-level permissions)' },
    { action: 'cloudwatch:PutMetricData', resource: '*', expect: 'denied', why: 'its metrics are EMF log lines' },
    { action: 'iam:PassRole', resource: '*', expect: 'denied', why: 'it never hands a role to a service' },
    ...routingTarget(facts).writerProbes(facts),
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
