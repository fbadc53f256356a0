/**
 * The routing-target kinds by `RoutingFacts.kind`: the one place a kind is looked up. Adding a kind is one module
 * implementing `RoutingTarget` (targets/kind.ts), one entry here and one I/O module in lambda/reconciler/targets/.
 */
import { type RoutingFacts } from '../routing-facts';
import { ALB_TARGET } from './alb';
import { type RoutingTarget } from './kind';
import { SAGEMAKER_TARGET } from './sagemaker';

export * from './kind';
export { capacitiesToRaise, endpointWritability } from './sagemaker';

const TARGETS: { readonly [K in RoutingFacts['kind']]: RoutingTarget<Extract<RoutingFacts, { kind: K }>> } = {
  sagemaker: SAGEMAKER_TARGET,
  alb: ALB_TARGET,
};

/**
 * The module of the facts' kind, bound to them. Throws on an unknown kind (a hand-edited configuration): callers that
 * must not throw check `isKnownTargetKind` first.
 */
export function routingTarget<F extends RoutingFacts>(facts: F): RoutingTarget<F> {
  const target = TARGETS[facts.kind as RoutingFacts['kind']] as unknown as RoutingTarget<F> | undefined;
  if (!target) throw new Error(`unknown routing target kind ${JSON.stringify(facts.kind)} (known: ${Object.keys(TARGETS).join(', ')})`);
  return target;
}

/** The kinds this library routes, for messages. */
export const TARGET_KINDS: readonly string[] = Object.keys(TARGETS);

/** Whether the facts name a kind this library routes (a configuration may have been edited by hand). */
export function isKnownTargetKind(facts: unknown): facts is RoutingFacts {
  const kind = (facts as { kind?: unknown } | null | undefined)?.kind;
  return typeof kind === 'string' && Object.prototype.hasOwnProperty.call(TARGETS, kind);
}
