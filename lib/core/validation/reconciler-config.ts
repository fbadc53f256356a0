/**
 * The reconciler Lambda's check of the configuration it reads, before a run trusts it: the same rules the Reconciler
 * construct checked at synth (RECONCILER_RULES, ROUTING_FACTS_RULES, the policy's own class check), since the
 * environment can be edited and JSON turns NaN and Infinity into null.
 *
 * Apart from the run's fault handling (lib/core/reconciler/faults.ts), which the simulator runs: the simulator builds
 * its configuration itself and never checks it, and BENCHMARKS.md records a hash of its import closure
 * (lib/sim/source-hash.ts). With this check there, every Reconciler rule was in the closure, and a fix to one made the
 * benchmarks stale, to be rerun for identical results.
 */
import { policyClassProblems } from '../policy/defaults';
import { type ReconcilerConfig } from '../reconciler/config';
import { policyClassesFromFacts } from '../reconciler/from-facts';
import { nameProblem, numberProblem } from './checker';
import { type Problem } from './error';
import { policyConfigProblems } from './policy-config';
import { RECONCILER_RULES } from './reconciler-rules';
import { routingFactsProblems } from './serving';

/**
 * Every problem of the configuration the function received (the construct validated it at synth, but the
 * environment can be edited, and JSON turns NaN and Infinity into null): finite facts, valid policy, a service name.
 */
export function reconcilerConfigProblems(config: ReconcilerConfig): string[] {
  const problems: string[] = [];
  if (!config || typeof config !== 'object' || !config.facts) return ['configuration: missing or without routing facts'];
  // The same rules the Reconciler construct checked at synth (lib/core/validation): one rule per concept.
  const own = (field: string, problem: string | undefined) => (problem ? [`${field}: ${problem}`] : []);
  problems.push(...own('service', typeof config.service === 'string' && config.service.length > 0
    ? nameProblem(RECONCILER_RULES['serving.service'], config.service) : `is ${JSON.stringify(config.service)}; allowed: a non-empty string`));
  problems.push(...own('tokensPerRequest', numberProblem(RECONCILER_RULES['serving.tokensPerRequest'], config.tokensPerRequest)));
  problems.push(...own('metricDelaySeconds', numberProblem(RECONCILER_RULES.metricDelay, config.metricDelaySeconds)));
  problems.push(...policyConfigProblems(config.policy ?? {}).map((p) => `policy: ${p}`));
  const facts = routingFactsProblems(config.facts, 'facts');
  problems.push(...facts.map((p: Problem) => `${p.field}: ${p.message}`));
  // The policy's own class check (placement) and the fallback graces' routes only on facts it can read.
  if (facts.length === 0) {
    const classes = policyClassesFromFacts(config.facts, config.placement);
    problems.push(...policyClassProblems(classes).map((p) => `facts: ${p}`));
    problems.push(...fallbackGraceProblems(config.fallbackGraceSeconds, classes.map((c) => c.name)));
  }
  return problems;
}

/** `fallbackGraceSeconds`: positive seconds, each for a route of the facts (a grace under a name no route has is a stale edit). */
function fallbackGraceProblems(graces: ReconcilerConfig['fallbackGraceSeconds'], routes: readonly string[]): string[] {
  if (graces === undefined) return [];
  if (!graces || typeof graces !== 'object' || Array.isArray(graces)) return [`fallbackGraceSeconds: is ${JSON.stringify(graces)}; allowed: an object of seconds by route`];
  return Object.entries(graces).flatMap(([name, seconds]) => [
    ...(routes.includes(name) ? [] : [`fallbackGraceSeconds.${name}: no route of the facts is named '${name}'; allowed: ${routes.join(', ')}`]),
    ...(typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0 ? []
      : [`fallbackGraceSeconds.${name}: is ${JSON.stringify(seconds)}; allowed: seconds above 0`]),
  ]);
}
