import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import * as ts from 'typescript';

/**
 * The entry points whose behaviour BENCHMARKS.md reports: the benchmark command and the worker module it loads by path
 * (parallel.ts starts it as a thread, so no import reaches it). Everything they import, transitively, is covered: the
 * policy, the simulator, the admission limits, the catalog prices the scenarios use, and the validation rules the
 * simulator evaluates. A module the simulator does not run stays out only while nothing in the closure imports it, even
 * for a type: every construct's own rule table and the reconciler Lambda's configuration check are kept in modules of
 * their own for that (test/core/validation-closure.test.ts).
 */
export const BENCHMARK_ENTRY_POINTS: readonly string[] = ['bin/sim.ts', 'lib/sim/worker.ts'];

/**
 * SHA-256 over the behaviour of the benchmark's import closure. A development tool: it reads the TypeScript sources
 * from a checkout (and needs the `typescript` devDependency), so it works from the repository, not from an installed
 * package.
 *
 * What is hashed is each top-level statement of each module, printed without comments and layout, import/re-export
 * lines left out, all statements sorted, without their paths: moving a file, splitting a module, renaming a folder or
 * fixing a comment keeps BENCHMARKS.md fresh, while any change to what the code does (a price in the catalog data, a
 * policy constant) makes it stale.
 */
export function benchmarkSourceHash(
  root: string = resolve(__dirname, '..', '..'), entryPoints: readonly string[] = BENCHMARK_ENTRY_POINTS,
): string {
  const statements = importClosure(root, entryPoints).flatMap((file) => behaviourOf(readFileSync(file, 'utf8')));
  const hash = createHash('sha256');
  for (const body of statements.sort()) {
    hash.update(body);
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** The repository-relative files of the closure, sorted (for messages; the hash does not depend on paths). */
export function benchmarkSources(
  root: string = resolve(__dirname, '..', '..'), entryPoints: readonly string[] = BENCHMARK_ENTRY_POINTS,
): string[] {
  return importClosure(root, entryPoints).map((file) => relative(root, file).split('\\').join('/')).sort();
}

/** The line BENCHMARKS.md carries, and the test looks for. */
export function sourceHashLine(hash: string): string {
  return `Generated from sources sha256:${hash} (the import closure of ${BENCHMARK_ENTRY_POINTS.join(', ')}).`;
}

function importClosure(root: string, entryPoints: readonly string[]): string[] {
  const seen = new Set<string>();
  const pending = entryPoints.map((entry) => join(root, entry));
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const specifier of relativeSpecifiers(readFileSync(file, 'utf8'))) pending.push(resolveModule(file, specifier));
  }
  return [...seen];
}

/** Every relative module the file imports or re-exports, type-only imports included (they are part of the closure). */
function relativeSpecifiers(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((ref) => ref.fileName).filter((name) => name.startsWith('.'));
}

function resolveModule(from: string, specifier: string): string {
  const base = resolve(dirname(from), specifier);
  const candidate = [`${base}.ts`, join(base, 'index.ts')].find((path) => existsSync(path));
  if (candidate === undefined) throw new Error(`benchmarkSourceHash: cannot resolve '${specifier}' imported by ${from}`);
  return candidate;
}

/**
 * The module's statements as the TypeScript printer writes them back without comments (layout and comments do not count),
 * skipping import declarations and `export ... from` lines (paths are not behaviour; the closure covers their targets).
 */
function behaviourOf(text: string): string[] {
  const source = ts.createSourceFile('module.ts', text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const printer = ts.createPrinter({ removeComments: true });
  return source.statements
    .filter((statement) => !ts.isImportDeclaration(statement) && !ts.isImportEqualsDeclaration(statement))
    .filter((statement) => !(ts.isExportDeclaration(statement) && statement.moduleSpecifier !== undefined))
    .map((statement) => printer.printNode(ts.EmitHint.Unspecified, statement, source));
}
