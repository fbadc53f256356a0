/**
 * ALB I/O: read the forward action that holds the weights (DescribeListeners for a listener's default actions,
 * DescribeRules for a rule on a shared listener: lib/core/reconciler/targets/alb.ts albWeightsLocation) and each target
 * group's health (DescribeTargetHealth), and write the action back with the target-group weights replaced
 * (ModifyListener, ModifyRule). Both replace the action list as a whole ("To
 * add an item to a list, remove an item from a list, or update an item in a list, you must provide the entire list",
 * ELBv2 API ModifyListener and ModifyRule), so every other action is written back as read, with one exception:
 * Describe never returns an `authenticate-oidc` action's `ClientSecret`, and "This parameter is required if you are
 * creating a rule. If you are modifying a rule, you can omit this parameter if you set UseExistingClientSecret to true"
 * (@aws-sdk/client-elastic-load-balancing-v2 AuthenticateOidcActionConfig). Without it every write would be rejected
 * and the weights would freeze. ModifyRule leaves what it is not given unchanged ("Any properties that you do not
 * specify are unchanged"), so the rule's conditions are never sent.
 */
import {
  type Action,
  DescribeListenersCommand,
  DescribeRulesCommand,
  DescribeTargetHealthCommand,
  ElasticLoadBalancingV2Client,
  ModifyListenerCommand,
  ModifyRuleCommand,
  TargetHealthStateEnum,
  type TargetGroupTuple,
} from '@aws-sdk/client-elastic-load-balancing-v2';
import { ALB_LIMITS as ALB } from '../../../lib/core/platform/limits';
import { type ReconcilerConfig } from '../../../lib/core/reconciler/config';
import { type AlbRoutingFacts } from '../../../lib/core/reconciler/routing-facts';
import { type RetryOptions } from '../../../lib/core/reconciler/retry';
import { type RoutingWrite, type TargetState } from '../../../lib/core/reconciler/targets';
import { albWeightsLocation } from '../../../lib/core/reconciler/targets/alb';
import { LAMBDA_CLIENT_OPTIONS } from '../../../lib/core/sdk-client-profiles';
import { type Clients, optionalRead, type TargetRead } from './io';

function facts(config: ReconcilerConfig): AlbRoutingFacts {
  if (config.facts.kind !== 'alb') throw new Error('not an ALB target');
  return config.facts;
}

/** The actions that hold the weights: the listener's default actions, or its rule's actions. */
async function readActions(f: AlbRoutingFacts, client: ElasticLoadBalancingV2Client, signal?: AbortSignal): Promise<Action[]> {
  const at = albWeightsLocation(f);
  if (at.read === 'DescribeRules') {
    const rules = await client.send(new DescribeRulesCommand({ RuleArns: [at.arn] }), { abortSignal: signal });
    return rules.Rules?.[0]?.Actions ?? [];
  }
  const listeners = await client.send(new DescribeListenersCommand({ ListenerArns: [at.arn] }), { abortSignal: signal });
  return listeners.Listeners?.[0]?.DefaultActions ?? [];
}

/**
 * Each class's healthy targets now: DescribeTargetHealth on its target group, counting `healthy` (the others: initial,
 * unhealthy, unused, draining, unhealthy.draining, unavailable; TargetHealthStateEnum of the SDK we pin; the answer is
 * not paginated), so an emptied group, which describes no target, is 0. A read that still fails once retried
 * (`optionalRead`: throttled while the load balancer controller re-registers pods, or denied to a hand-written serving
 * without the grant) is null for that class, so its unpublished ready counts stay unknown, as without the read.
 */
async function readHealthyTargets(f: AlbRoutingFacts, client: ElasticLoadBalancingV2Client, retry: RetryOptions): Promise<TargetHealth> {
  const reads = await Promise.all(f.targets.map((t) => optionalRead(async (signal) => {
    const health = await client.send(new DescribeTargetHealthCommand({ TargetGroupArn: t.targetGroupArn }), { abortSignal: signal });
    return (health.TargetHealthDescriptions ?? []).filter((d) => d.TargetHealth?.State === TargetHealthStateEnum.HEALTHY).length;
  }, retry)));
  const healthyTargets: Record<string, number | null> = {};
  const failed: string[] = [];
  f.targets.forEach((t, i) => {
    const r = reads[i];
    healthyTargets[t.class.name] = 'value' in r ? r.value : null;
    if ('failed' in r) failed.push(`${t.class.name}: ${r.failed}`);
  });
  return { healthyTargets, ...(failed.length > 0 ? { healthUnread: `DescribeTargetHealth failed (${failed.join('; ')})` } : {}) };
}

type TargetHealth = Pick<TargetState, 'healthyTargets' | 'healthUnread'>;

/** The target-group weights of the forward action that holds them, and each target group's healthy targets. */
export async function read(config: ReconcilerConfig, clients: Clients, retry: RetryOptions): Promise<TargetRead> {
  const f = facts(config);
  const elbv2 = clients.elbv2!;
  // One after the other: a failed actions read is retried as a whole (reconcile.ts), and must not leave health reads
  // running behind it against an API that may be throttling.
  const actions = await readActions(f, elbv2, retry.signal);
  const health = await readHealthyTargets(f, elbv2, retry);
  const forward = actions.find((a) => a.Type === 'forward');
  const groups = forward ? forwardGroups(forward) : [];
  const byArn = new Map(groups.map((tg) => [tg.TargetGroupArn, tg.Weight ?? 1]));
  const weights = Object.fromEntries(f.targets.map((t) => [t.class.name, byArn.get(t.targetGroupArn) ?? 0]));
  const at = albWeightsLocation(f);
  const notWritable = forward ? undefined : `${at.description} has no forward ${at.read === 'DescribeRules' ? 'action' : 'default action'}`;
  const present = f.targets.filter((t) => byArn.has(t.targetGroupArn)).map((t) => t.class.name);
  const unavailable = tooManyGroups(f, groups);
  return {
    state: { weights, pools: {}, replicas: {}, present, ...health, ...(notWritable ? { notWritable } : {}), ...(unavailable ? { unavailable } : {}) },
    context: actions,
  };
}

/**
 * A forward action's weighted target groups: its `ForwardConfig`'s, or else its lone `TargetGroupArn`, which takes all
 * the traffic ("The default value is 1 ... if only one target group is provided, there is no need to set the weight").
 */
function forwardGroups(a: Action): TargetGroupTuple[] {
  if (a.ForwardConfig?.TargetGroups && a.ForwardConfig.TargetGroups.length > 0) return a.ForwardConfig.TargetGroups;
  return a.TargetGroupArn ? [{ TargetGroupArn: a.TargetGroupArn, Weight: 1 }] : [];
}

/** The target groups of the action that are not this service's (another team's canary, say): written back as read. */
function foreignGroups(f: AlbRoutingFacts, groups: readonly TargetGroupTuple[]): TargetGroupTuple[] {
  const ours = new Set(f.targets.map((t) => t.targetGroupArn));
  return groups.filter((tg) => !ours.has(tg.TargetGroupArn ?? ''));
}

/**
 * Why no write can succeed until someone acts: the write holds every class's target group and the foreign ones, and
 * "Target Groups per Action per Application Load Balancer" is 5, not adjustable (load-balancer-limits.html): each
 * ModifyListener would be refused with a validation error, run after run.
 */
function tooManyGroups(f: AlbRoutingFacts, groups: readonly TargetGroupTuple[]): string | undefined {
  const foreign = foreignGroups(f, groups);
  const total = f.targets.length + foreign.length;
  if (total <= ALB.targetGroupsPerForwardAction) return undefined;
  return `the forward action of ${albWeightsLocation(f).description} would hold ${total} target groups (this service's ${f.targets.length} and `
    + `${foreign.length} others: ${foreign.map((tg) => tg.TargetGroupArn).join(', ')}); an action holds at most ${ALB.targetGroupsPerForwardAction}: `
    + 'remove the others from it';
}

/** The actions to write: the forward action with our weights, every other action as read (see above). */
export function actionsToWrite(f: AlbRoutingFacts, read: readonly Action[], weights: Readonly<Record<string, number>>): Action[] {
  return read.map((a) => {
    if (a.Type === 'authenticate-oidc' && a.AuthenticateOidcConfig) {
      const { ClientSecret: _, ...oidc } = a.AuthenticateOidcConfig;
      return { ...a, AuthenticateOidcConfig: { ...oidc, UseExistingClientSecret: true } };
    }
    if (a.Type !== 'forward') return a;
    const others = foreignGroups(f, forwardGroups(a));
    return {
      Type: 'forward',
      Order: a.Order,
      ForwardConfig: {
        TargetGroups: [...f.targets.map((t) => ({ TargetGroupArn: t.targetGroupArn, Weight: weights[t.class.name] })), ...others],
        TargetGroupStickinessConfig: a.ForwardConfig?.TargetGroupStickinessConfig,
      },
    };
  });
}

/**
 * The actions as they are now, when every action but our weights is as the run read it; else an error, and no write.
 * ModifyListener and ModifyRule replace the whole list and take no condition on what they replace, and the run writes
 * seconds after its read (health and metric reads between): an action a deployment or an operator added meanwhile (an
 * `authenticate-oidc` in front of the forward) would be written away, leaving the route open until the next deploy
 * (review R95). So the list is read again just before the write and the write is made from that read; if anything but
 * the weights changed, the run writes nothing and the next run decides on the new list.
 */
async function unchangedActions(
  f: AlbRoutingFacts, client: ElasticLoadBalancingV2Client, read: readonly Action[], signal?: AbortSignal,
): Promise<Action[]> {
  const now = await readActions(f, client, signal);
  const shape = (actions: readonly Action[]) => canonical(actionsToWrite(f, actions, {}));
  if (shape(now) !== shape(read)) {
    const at = albWeightsLocation(f);
    throw Object.assign(new Error(`the actions of ${at.description} changed since this run read them (a deployment or an operator): `
      + 'nothing written; the next run reads them again'), { name: 'ActionsChanged' });
  }
  return now;
}

/** JSON with object keys sorted: two reads of the same actions compare equal whatever order the SDK built them in. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v)
    ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    : v));
}

export async function write(config: ReconcilerConfig, clients: Clients, w: RoutingWrite, context: unknown, signal?: AbortSignal): Promise<void> {
  const f = facts(config);
  // The planner never asks an ALB for a capacity write (floors are published metrics there).
  if (w.kind !== 'weights') throw new Error(`an ALB listener takes no ${w.kind} write`);
  const current = await unchangedActions(f, clients.elbv2!, (context as Action[] | undefined) ?? [], signal);
  const actions = actionsToWrite(f, current, w.weights);
  const at = albWeightsLocation(f);
  if (at.write === 'ModifyRule') {
    await clients.elbv2!.send(new ModifyRuleCommand({ RuleArn: at.arn, Actions: actions }), { abortSignal: signal });
  } else {
    await clients.elbv2!.send(new ModifyListenerCommand({ ListenerArn: at.arn, DefaultActions: actions }), { abortSignal: signal });
  }
}

export async function client(): Promise<Partial<Clients>> {
  return { elbv2: new ElasticLoadBalancingV2Client(LAMBDA_CLIENT_OPTIONS) };
}
