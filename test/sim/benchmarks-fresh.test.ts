import { cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { benchmarkSourceHash, benchmarkSources, sourceHashLine } from '../../lib/sim/source-hash';

const ROOT = join(__dirname, '..', '..');

// BENCHMARKS.md must describe the code in the tree: a change to what the simulator's import closure does (the policy,
// the simulator, the admission limits, the catalog prices) without rerunning `npm run bench` turns this red.
test('BENCHMARKS.md was generated from the current behaviour of the benchmark sources', () => {
  const text = readFileSync(join(ROOT, 'BENCHMARKS.md'), 'utf8');
  const recorded = /Generated from sources sha256:([0-9a-f]{64})/.exec(text)?.[1];
  expect(recorded).toBeDefined();
  const current = benchmarkSourceHash();
  if (recorded !== current) {
    throw new Error(`BENCHMARKS.md is stale: it was generated from sources ${recorded}, the tree has ${current}. ` +
      `Rerun \`npm run bench -- --out <dir>\` and \`npm run bench:doc -- <dir>\`; its line is: ${sourceHashLine(current)}`);
  }
});

test('the closure reaches the policy, the admission limits and the catalog prices', () => {
  const sources = benchmarkSources();
  expect(sources).toEqual(expect.arrayContaining(['lib/sim/simulator.ts', 'lib/sim/worker.ts']));
  expect(sources.some((file) => file.endsWith('/decide.ts'))).toBe(true);
  expect(sources.some((file) => file.endsWith('/admission.ts'))).toBe(true);
  expect(sources.some((file) => file.endsWith('/catalog-data.ts'))).toBe(true);
});

// The Reconciler's rule tables and its Lambda's configuration check are outside the closure (the simulator never runs
// them: test/core/validation-closure.test.ts); what the simulated Reconciler runs of a real run stays in.
test('the closure reaches the reconciler run the simulated Reconciler makes: step, observe, the fault handling, the targets', () => {
  expect(benchmarkSources()).toEqual(expect.arrayContaining([
    'lib/core/reconciler/step.ts', 'lib/core/reconciler/observe.ts', 'lib/core/reconciler/faults.ts',
    'lib/core/reconciler/targets/alb.ts', 'lib/core/reconciler/targets/sagemaker.ts', 'lib/core/policy/defaults.ts',
  ]));
});

describe('the hash follows behaviour, not bytes', () => {
  // A copy of the real closure, so the edits below are the ones a developer makes.
  function copyOfClosure(): string {
    const root = mkdtempSync(join(tmpdir(), 'closure-'));
    for (const file of benchmarkSources()) {
      mkdirSync(dirname(join(root, file)), { recursive: true });
      cpSync(join(ROOT, file), join(root, file));
    }
    return root;
  }
  const edit = (root: string, file: string, change: (text: string) => string) =>
    writeFileSync(join(root, file), change(readFileSync(join(root, file), 'utf8')));
  const catalog = () => benchmarkSources().find((file) => file.endsWith('/catalog-data.ts'))!;

  test('a comment, a blank line and a re-indented import leave it unchanged', () => {
    const root = copyOfClosure();
    const before = benchmarkSourceHash(root);
    edit(root, catalog(), (text) => `// a new comment\n\n${text.replace('export const', '/* why */ export  const')}`);
    edit(root, 'lib/sim/simulator.ts', (text) => text.replace(/^import /m, '// moved\nimport  '));
    expect(benchmarkSourceHash(root)).toBe(before);
  });

  test('moving a module to another folder (and fixing its importers) leaves it unchanged', () => {
    const root = copyOfClosure();
    const before = benchmarkSourceHash(root);
    mkdirSync(join(root, 'lib', 'sim', 'moved'));
    renameSync(join(root, 'lib', 'sim', 'heap.ts'), join(root, 'lib', 'sim', 'moved', 'heap.ts'));
    for (const file of benchmarkSources().filter((f) => f.startsWith('lib/sim/') && f !== 'lib/sim/heap.ts')) {
      edit(root, file, (text) => text.split("from './heap'").join("from './moved/heap'"));
    }
    expect(benchmarkSources(root)).toContain('lib/sim/moved/heap.ts');
    expect(benchmarkSourceHash(root)).toBe(before);
  });

  test('fails when a rule of the fault handling the simulated Reconciler runs changes (its module lost the configuration check)', () => {
    const root = copyOfClosure();
    const before = benchmarkSourceHash(root);
    edit(root, 'lib/core/reconciler/faults.ts', (text) => text.replace('SILENT_WEIGHT_SHARE = 0.05;', 'SILENT_WEIGHT_SHARE = 0.06;'));
    expect(benchmarkSourceHash(root)).not.toBe(before);
  });

  test('fails when a class rule the simulator evaluates changes', () => {
    const root = copyOfClosure();
    const before = benchmarkSourceHash(root);
    edit(root, 'lib/core/validation/service-rules.ts', (text) => text.replace('maxReplicas: numberRule({ integer: true, min: 1 }),', 'maxReplicas: numberRule({ integer: true, min: 2 }),'));
    expect(benchmarkSourceHash(root)).not.toBe(before);
  });

  test('fails when a catalog price changes (it used to be outside the hashed folders)', () => {
    const root = copyOfClosure();
    const before = benchmarkSourceHash(root);
    edit(root, catalog(), (text) => text.replace('onDemandUsdPerHour: 1.006,', 'onDemandUsdPerHour: 1.007,'));
    expect(benchmarkSourceHash(root)).not.toBe(before);
  });
});
