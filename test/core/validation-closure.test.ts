import { CLASS_RULES as SERVICE_CLASS_RULES, CONTRACT_RULES as SERVICE_CONTRACT_RULES } from '../../lib/core/validation/service-rules';
import { CLASS_RULES, CONTRACT_RULES, SAGEMAKER_RULES, VALIDATION_MATRIX } from '../../lib/core/validation/rules';
import { SAGEMAKER_SCALING_TARGET_RULES } from '../../lib/core/validation/sagemaker-scaling-rules';
import { benchmarkSources } from '../../lib/sim/source-hash';

// BENCHMARKS.md records a hash of the simulator's import closure: a construct's rule table in it made every fix to an
// EKS or SageMaker rule stale the benchmarks. The simulator reaches only the tables it evaluates.
test("the benchmark's import closure holds the contract's, a class's and a variant's scaling-target rules, no construct's table", () => {
  const sources = benchmarkSources();
  expect(sources).toEqual(expect.arrayContaining([
    'lib/core/validation/service-rules.ts', 'lib/core/validation/sagemaker-scaling-rules.ts',
  ]));
  expect(sources).not.toContain('lib/core/validation/rules.ts');
});

test('the closure check sees rules.ts when a module imports it', () => {
  expect(benchmarkSources(undefined, ['lib/sagemaker/variants.ts'])).toContain('lib/core/validation/rules.ts');
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
