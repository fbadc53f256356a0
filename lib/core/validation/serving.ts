/**
 * The one answer to "is this serving description valid", and within it to "are these routing facts valid": the
 * Reconciler and the observability constructs check the description a serving construct hands them, and the
 * reconciler Lambda checks the facts of the configuration it reads (JSON turns NaN into null, and the environment can
 * be edited). Every rule's code and text live in ROUTING_FACTS_RULES / RECONCILER_RULES (docs/validation.md).
 */
import { type RoutedClassFacts, type RoutingFacts } from '../reconciler/routing-facts';
import { type ServingDescription } from '../reconciler/serving';
import { isKnownTargetKind, routingTarget, TARGET_KINDS } from '../reconciler/targets';
import { Checker } from './checker';
import { type Problem } from './error';
import { RECONCILER_RULES, SERVING_RULE } from './reconciler-rules';
import { ROUTING_FACTS_RULES } from './routing-facts-rules';

/** The capacity classes of the facts in declaration order (an ALB target's class, each pool of each SageMaker variant). */
export function factsClasses(facts: RoutingFacts): RoutedClassFacts[] {
  return isKnownTargetKind(facts) ? routingTarget(facts).classes(facts) : [];
}

/**
 * Every problem of the routing facts, filed under `prefix` (`serving.routing` where a construct reads a serving
 * description, `facts` in the reconciler's configuration). Empty when they are valid.
 */
export function routingFactsProblems(facts: RoutingFacts, prefix: string): Problem[] {
  const c = new Checker(ROUTING_FACTS_RULES, `${prefix}.`);
  if (!isKnownTargetKind(facts)) {
    c.add('kind', `is ${JSON.stringify((facts as { kind?: unknown } | undefined)?.kind)}; allowed: ${TARGET_KINDS.map((k) => `'${k}'`).join(' or ')}`);
    return c.problems;
  }
  routingTarget(facts).checkFacts(facts, c);
  const classes = factsClasses(facts);
  c.cross('classes[].name', classes.map((cls) => cls.name), 'classes');
  for (const cls of classes) {
    const path = `classes['${cls.name}']`;
    c.check('classes[].preferenceRank', cls.preferenceRank, `${path}.preferenceRank`);
    c.check('classes[].tokensPerSecondPerReplica', cls.tokensPerSecondPerReplica, `${path}.tokensPerSecondPerReplica`);
    c.check('classes[].safeConcurrency', cls.safeConcurrency, `${path}.safeConcurrency`);
    c.check('classes[].usdPerReplicaHour', cls.usdPerReplicaHour, `${path}.usdPerReplicaHour`);
    c.check('classes[].maxReplicas', cls.maxReplicas, `${path}.maxReplicas`);
    c.optional('classes[].replicaReadyTimeP95Seconds', cls.replicaReadyTimeP95Seconds, `${path}.replicaReadyTimeP95Seconds`);
  }
  return c.problems;
}

/** The props of the old control-construct API (before they took the serving construct), named in the migration hint. */
const LEGACY_PROPS = ['service', 'facts', 'tokensPerRequest', 'clusterName', 'capacityErrorMetrics'];

/**
 * The `serving` prop itself: a serving construct, not missing and not the pre-migration props. Undefined when it is
 * one (its description can then be read), else the problem.
 */
export function servingPropProblem(props: object | undefined): Problem | undefined {
  const c = new Checker({ serving: SERVING_RULE });
  const given = (props ?? {}) as Record<string, unknown>;
  c.cross('serving', { serving: given.serving, legacyProps: LEGACY_PROPS.filter((p) => given[p] !== undefined) });
  return c.problems[0];
}

/**
 * Every problem of a serving description: the Service dimension, the mean output tokens, the routing facts and the
 * classes its signal producers name. Fields are under `serving.`.
 */
export function servingDescriptionProblems(d: ServingDescription): Problem[] {
  const c = new Checker(RECONCILER_RULES);
  c.check('serving.service', d.service);
  c.check('serving.tokensPerRequest', d.tokensPerRequest);
  const known = d.routing ? factsClasses(d.routing).map((cls) => cls.name) : [];
  for (const name of Object.keys(d.signals?.classes ?? {})) c.cross('serving.signals.classes', { name, known }, `serving.signals.classes['${name}']`);
  return [...c.problems, ...routingFactsProblems(d.routing, 'serving.routing')];
}
