/**
 * `PolicyConfig` bounds, once: each field of the routing policy is checked against its one rule (RECONCILER_RULES
 * `policy.*`), whether it arrives as a Reconciler option (a Duration, at construction) or as the configuration the
 * reconciler Lambda reads. The rules between fields run on the configuration the overrides resolve to, where a field
 * that broke its own rule takes its default: every problem is reported once, under one name, without reading any
 * message text.
 */
import { type NumericPolicyField, POLICY_OPTION_OF, policyWindowPeriods, resolvePolicyConfig } from '../policy/defaults';
import { type PolicyConfig } from '../policy/types';
import { Checker } from './checker';
import { type Problem } from './error';
import { RECONCILER_RULES } from './reconciler-rules';

/** How problems name a field: the Reconciler's `policy.<option>`, or the configuration's `<field>`. */
export type PolicyFieldNames = 'option' | 'config';

/** Every problem of the policy overrides (values in the configuration's units: seconds, milliseconds, shares). */
export function policyProblems(overrides: Partial<PolicyConfig>, names: PolicyFieldNames): Problem[] {
  const c = new Checker(RECONCILER_RULES);
  const pathOf = (field: keyof PolicyConfig) =>
    names === 'config' ? field : `policy.${field === 'replicaFloorsApplied' ? field : POLICY_OPTION_OF[field]}`;
  const failed = new Set<string>();
  for (const [field, option] of Object.entries(POLICY_OPTION_OF) as Array<[NumericPolicyField, string]>) {
    // Every `policy.<option>` of POLICY_OPTION_OF is a number rule of RECONCILER_RULES (test/core/validation.test.ts).
    if (!c.optional(`policy.${option}` as 'policy.headroom', overrides[field], pathOf(field))) failed.add(field);
  }
  if (overrides.replicaFloorsApplied !== undefined) c.cross('policy.replicaFloorsApplied', overrides.replicaFloorsApplied, pathOf('replicaFloorsApplied'));
  // Between fields: on the resolved configuration, with each field that broke its own rule at its default.
  const valid = Object.fromEntries(Object.entries(overrides).filter(([field]) => !failed.has(field)));
  const p = resolvePolicyConfig(valid);
  for (const field of ['capacityErrorLookbackSeconds', 'provisioningGraceSeconds', 'stabilizationWindowSeconds'] as const) {
    c.cross('policy.windows%period', { seconds: p[field], periodSeconds: p.periodSeconds }, pathOf(field));
  }
  c.cross('policy.rampStep>=2', { rampStepShare: p.rampStepShare, weightTotal: p.weightTotal }, pathOf('rampStepShare'));
  c.cross('policy.minWeightChange<ramp', { minWeightChangeShare: p.minWeightChangeShare, rampStepShare: p.rampStepShare }, pathOf('minWeightChangeShare'));
  const longest = (['reentryMemorySeconds', 'provisioningGraceSeconds', 'stabilizationWindowSeconds', 'capacityErrorLookbackSeconds'] as const)
    .reduce((a, b) => (p[b] > p[a] ? b : a));
  c.cross('policy.window<=periods', { periods: policyWindowPeriods(p), periodSeconds: p.periodSeconds }, pathOf(longest));
  c.cross('policy.maxReturnHold>=stabilization', {
    maxReturnHoldSeconds: p.maxReturnHoldSeconds, stabilizationWindowSeconds: p.stabilizationWindowSeconds,
  }, pathOf('maxReturnHoldSeconds'));
  return c.problems;
}

/** Every problem of a configuration, as `<field>: <message>` lines (the reconciler Lambda's check). Empty when valid. */
export function policyConfigProblems(config: Partial<PolicyConfig>): string[] {
  return policyProblems(config, 'config').map((p) => `${p.field}: ${p.message}`);
}
