import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCHMARK_SOURCES, benchmarkSourceHash } from '../../lib/sim/source-hash';

// BENCHMARKS.md must describe the code in the tree: a change to the policy, the simulator or the admission limits
// without rerunning `npm run bench` (and regenerating BENCHMARKS.md) turns this red.
test('BENCHMARKS.md was generated from the current policy, simulator and admission sources', () => {
  const text = readFileSync(join(__dirname, '..', '..', 'BENCHMARKS.md'), 'utf8');
  const recorded = /Generated from sources sha256:([0-9a-f]{64})/.exec(text)?.[1];
  expect(recorded).toBeDefined();
  const current = benchmarkSourceHash();
  if (recorded !== current) {
    throw new Error(`BENCHMARKS.md is stale: it was generated from sources ${recorded}, the tree has ${current} ` +
      `(${BENCHMARK_SOURCES.join(', ')}). Rerun \`npm run bench\` and regenerate BENCHMARKS.md.`);
  }
});
