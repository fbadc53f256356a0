import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

/**
 * The sources whose behavior BENCHMARKS.md reports: the policy, the simulator, and the module that computes the
 * deployed admission limits the simulator enforces. A change to any of them without a rerun makes BENCHMARKS.md stale.
 */
export const BENCHMARK_SOURCES: readonly string[] = ['lib/core/policy', 'lib/sim', 'lib/core/runtime/admission.ts'];

/**
 * SHA-256 over the benchmark sources (repository-relative paths and contents, in path order). A development tool: it
 * reads the TypeScript sources from a checkout, so it works from the repository, not from an installed package.
 */
export function benchmarkSourceHash(root: string = resolve(__dirname, '..', '..')): string {
  const files: string[] = [];
  const walk = (path: string) => {
    if (statSync(path).isDirectory()) for (const entry of readdirSync(path).sort()) walk(join(path, entry));
    else if (path.endsWith('.ts')) files.push(path);
  };
  for (const source of BENCHMARK_SOURCES) walk(join(root, source));
  const hash = createHash('sha256');
  for (const file of files.sort()) {
    hash.update(relative(root, file).split('\\').join('/'));
    hash.update('\0');
    hash.update(readFileSync(file));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** The line BENCHMARKS.md carries, and the test looks for. */
export function sourceHashLine(hash: string): string {
  return `Generated from sources sha256:${hash} (${BENCHMARK_SOURCES.join(', ')}).`;
}
