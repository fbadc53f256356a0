import { type Action, DescribeListenersCommand, ModifyListenerCommand } from '@aws-sdk/client-elastic-load-balancing-v2';
import { type ReconcilerConfig } from '../../lib/core/reconciler/config';
import { type Clients } from './reconcile';
import { type TargetState } from './target-state';

/** DescribeListeners: the target-group weights of the listener's forward default action. */
export async function readTarget(config: ReconcilerConfig, clients: Clients): Promise<TargetState> {
  if (config.facts.kind !== 'alb') throw new Error('not an ALB target');
  const facts = config.facts;
  const listeners = await clients.elbv2!.send(new DescribeListenersCommand({ ListenerArns: [facts.listenerArn] }));
  const actions = listeners.Listeners?.[0]?.DefaultActions ?? [];
  const forward = actions.find((a) => a.Type === 'forward');
  const byArn = new Map((forward?.ForwardConfig?.TargetGroups ?? []).map((tg) => [tg.TargetGroupArn, tg.Weight ?? 1]));
  if (!forward?.ForwardConfig && forward?.TargetGroupArn) byArn.set(forward.TargetGroupArn, 1);
  const weights = Object.fromEntries(facts.targets.map((t) => [t.class.name, byArn.get(t.targetGroupArn) ?? 0]));
  const notWritable = forward ? undefined : `listener ${facts.listenerArn} has no forward default action`;
  const present = facts.targets.filter((t) => byArn.has(t.targetGroupArn)).map((t) => t.class.name);
  return { weights, pools: {}, replicas: {}, actions, notWritable, present };
}

/**
 * ModifyListener with the forward action's target-group weights replaced. Every other default action (e.g. an
 * authenticate action before the forward) and any target group the reconciler does not own are written back as read.
 */
export async function writeWeights(
  config: ReconcilerConfig,
  clients: Clients,
  target: TargetState,
  weights: Readonly<Record<string, number>>,
): Promise<void> {
  if (config.facts.kind !== 'alb') throw new Error('not an ALB target');
  const facts = config.facts;
  const ours = new Set(facts.targets.map((t) => t.targetGroupArn));
  const actions: Action[] = (target.actions ?? []).map((a) => {
    if (a.Type !== 'forward') return a;
    const others = (a.ForwardConfig?.TargetGroups ?? []).filter((tg) => !ours.has(tg.TargetGroupArn ?? ''));
    return {
      Type: 'forward',
      Order: a.Order,
      ForwardConfig: {
        TargetGroups: [...facts.targets.map((t) => ({ TargetGroupArn: t.targetGroupArn, Weight: weights[t.class.name] })), ...others],
        TargetGroupStickinessConfig: a.ForwardConfig?.TargetGroupStickinessConfig,
      },
    };
  });
  await clients.elbv2!.send(new ModifyListenerCommand({ ListenerArn: facts.listenerArn, DefaultActions: actions }));
}
