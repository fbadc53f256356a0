import { CLASS_RULES as SERVICE_CLASS_RULES, CONTRACT_RULES as SERVICE_CONTRACT_RULES } from '../../lib/core/validation/service-rules';
import { CLASS_RULES, CONTRACT_RULES, ROUTING_FACTS_RULES, SAGEMAKER_RULES, VALIDATION_MATRIX } from '../../lib/core/validation/rules';
import { ROUTING_FACTS_RULES as FACTS_MODULE_RULES } from '../../lib/core/validation/routing-facts-rules';
import { SAGEMAKER_SCALING_TARGET_RULES } from '../../lib/core/validation/sagemaker-scaling-rules';
import { benchmarkSources } from '../../lib/sim/source-hash';

// BENCHMARKS.md records a hash of the simulator's import closure: a construct's rule table in it made every fix to an
// EKS, SageMaker or Reconciler rule stale the benchmarks. The simulator reaches only the tables it evaluates (the
// contract's, a class's, a variant's scaling target) and the routing facts' table, which the routing targets it runs are
// typed against (type imports count: lib/sim/source-hash.ts).
const RULE_TABLE = /^lib\/core\/validation\/([a-z-]+-)?rules\.ts$/;

test("the benchmark's import closure holds the contract's, a class's and a variant's scaling-target rules, no construct's table", () => {
  const sources = benchmarkSources();
  expect(sources.filter((file) => RULE_TABLE.test(file))).toEqual([
    'lib/core/validation/routing-facts-rules.ts', 'lib/core/validation/sagemaker-scaling-rules.ts', 'lib/core/validation/service-rules.ts',
  ]);
  expect(sources).not.toContain('lib/core/validation/rules.ts');
});

test("the Reconciler's own rules are outside the closure: its props' table and the Lambda's configuration check", () => {
  const sources = benchmarkSources();
  for (const file of [
    'lib/core/validation/reconciler-rules.ts', 'lib/core/validation/policy-config.ts', 'lib/core/validation/serving.ts',
    'lib/core/validation/reconciler-config.ts',
  ]) expect(sources).not.toContain(file);
  // What the simulator runs of the reconciler run's fault handling stays in.
  expect(sources).toContain('lib/core/reconciler/faults.ts');
});

test('the closure check sees rules.ts when a module imports it', () => {
  expect(benchmarkSources(undefined, ['lib/sagemaker/variants.ts'])).toContain('lib/core/validation/rules.ts');
});

test("the closure check sees the Reconciler's table when a module imports it (the Lambda's configuration check does)", () => {
  expect(benchmarkSources(undefined, ['lambda/reconciler/reconcile.ts'])).toEqual(expect.arrayContaining([
    'lib/core/validation/reconciler-config.ts', 'lib/core/validation/reconciler-rules.ts', 'lib/core/reconciler/faults.ts',
  ]));
});

test("the moved tables are the constructs' own: the same rule objects, SageMaker's keys in their order", () => {
  expect(CONTRACT_RULES).toBe(SERVICE_CONTRACT_RULES);
  expect(CLASS_RULES).toBe(SERVICE_CLASS_RULES);
  expect(VALIDATION_MATRIX['ServiceContract (contract)']).toBe(SERVICE_CONTRACT_RULES);
  expect(VALIDATION_MATRIX['CapacityClassSpec (classes[])']).toBe(SERVICE_CLASS_RULES);
  for (const [prop, rule] of Object.entries(SAGEMAKER_SCALING_TARGET_RULES)) expect(SAGEMAKER_RULES[prop as keyof typeof SAGEMAKER_RULES]).toBe(rule);
  const keys = Object.keys(SAGEMAKER_RULES);
  const at = keys.indexOf('variants[].scaling.maxInstances');
  expect(keys.slice(at, at + 4)).toEqual([
    'variants[].scaling.maxInstances', 'variants[].scaling.targetConcurrencyPerInstance', 'variants[].scaling.perPoolTargets',
    'variants[].initialWeight',
  ]);
});

test("the routing facts' table is one object: the one rules.ts re-exports and the matrix documents", () => {
  expect(ROUTING_FACTS_RULES).toBe(FACTS_MODULE_RULES);
  expect(Object.values(VALIDATION_MATRIX).filter((table) => table === FACTS_MODULE_RULES)).toHaveLength(1);
});
