/**
 * The shape of the code, pinned: no import cycle (type imports included) in the shipped code, a public surface that
 * stays curated, lib/core free of aws-cdk-lib and the AWS SDK, the reconciler Lambda bundling only what it runs, and no
 * function over 120 lines in lib/ and lambda/. Each check names what broke it.
 */
import { execFileSync } from 'node:child_process';
import { build } from 'esbuild';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import * as ts from 'typescript';
import { TARGET_KINDS } from '../../lib/core/reconciler/targets';

const ROOT = join(__dirname, '..', '..');
const tracked = (pattern: string) =>
  execFileSync('git', ['ls-files', pattern], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter((f) => f.endsWith('.ts'));
const SHIPPED = [...tracked('lib'), ...tracked('lambda'), ...tracked('bin')];

function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return ts.preProcessFile(text, true, true).importedFiles.map((ref) => ref.fileName);
}

function resolveRelative(from: string, specifier: string): string | undefined {
  const base = resolve(ROOT, dirname(from), specifier);
  const found = [`${base}.ts`, join(base, 'index.ts')].find((path) => existsSync(path));
  return found === undefined ? undefined : relative(ROOT, found);
}

/** Strongly connected components of more than one file (or a file importing itself): the import cycles. */
function importCycles(files: readonly string[], specifiersOf: (file: string) => string[] = importsOf): string[][] {
  const graph = new Map(files.map((file) => [file, specifiersOf(file).filter((s) => s.startsWith('.'))
    .map((s) => resolveRelative(file, s)).filter((f): f is string => f !== undefined)]));
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (file: string) => {
    index.set(file, counter);
    low.set(file, counter++);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.get(file)!.includes(file)) cycles.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return cycles;
}

test('the shipped code has no import cycle, type imports included', () => {
  expect(importCycles(SHIPPED)).toEqual([]);
});

test('every relative import of the shipped code resolves to a module the cycle check reads (none is skipped unseen)', () => {
  const unresolved = SHIPPED.flatMap((file) => importsOf(file)
    .filter((s) => s.startsWith('.') && !s.endsWith('.json') && resolveRelative(file, s) === undefined)
    .map((s) => `${file} imports ${s}`));
  expect(unresolved).toEqual([]);
});

test('fails when two modules import each other (the check sees type imports)', () => {
  // service/contract.ts imports the validation checker; a checker that imported the contract back, even for a type,
  // closes a cycle.
  const contract = 'lib/core/service/contract.ts';
  const checker = 'lib/core/validation/checker.ts';
  expect(importsOf(contract).map((s) => resolveRelative(contract, s))).toContain(checker);
  const withBackEdge = (file: string) => (file === checker ? [...importsOf(file), '../service/contract'] : importsOf(file));
  const cycles = importCycles(SHIPPED, withBackEdge).filter((cycle) => cycle.includes(checker));
  expect(cycles).toHaveLength(1);
  expect(cycles[0]).toEqual(expect.arrayContaining([contract, checker]));
});

test('lib/core imports neither aws-cdk-lib nor the AWS SDK (it runs in Lambda bundles and the simulator)', () => {
  const offenders = tracked('lib/core').flatMap((file) => importsOf(file)
    .filter((s) => s.startsWith('aws-cdk-lib') || s.startsWith('@aws-sdk/') || s === 'constructs')
    .map((s) => `${file} imports ${s}`));
  expect(offenders).toEqual([]);
});

/**
 * The project's files esbuild bundles for an entry (its metafile; bundle-lambdas.mjs bundles the same way). A Lambda's
 * asset hash is the hash of its bundle (lambda.Code.fromAsset of assets/lambda/<name>, which holds only index.js), so an
 * edit to a bundled module moves it and `cdk deploy` updates the function; an edit elsewhere does not.
 */
async function bundledSources(entry: { file: string } | { contents: string }): Promise<string[]> {
  const result = await build({
    absWorkingDir: ROOT, bundle: true, platform: 'node', format: 'cjs', write: false, metafile: true, logLevel: 'silent', outfile: 'bundle.js',
    ...('file' in entry ? { entryPoints: [entry.file] } : { stdin: { contents: entry.contents, resolveDir: ROOT, loader: 'ts' as const } }),
  });
  return Object.keys(result.metafile.inputs).filter((f) => !f.startsWith('node_modules/') && f !== '<stdin>').sort();
}

/**
 * What the reconciler Lambda bundles but does not run: anything outside lib/core and its own directory, every
 * construct's rule table (rules.ts: its handler checks its configuration with reconciler-rules.ts and
 * routing-facts-rules.ts alone) and the checks of synthesized templates (template-check.ts), whose edits would
 * otherwise redeploy the function.
 */
function notForTheReconciler(sources: readonly string[]): string[] {
  const construct = ['lib/core/validation/rules.ts', 'lib/core/validation/doc.ts', 'lib/core/metrics/template-check.ts'];
  return sources.filter((f) => construct.includes(f) || !(f.startsWith('lib/core/') || f.startsWith('lambda/reconciler/')));
}

test('the reconciler Lambda bundles no construct\'s rule table and no template check: only what its handler runs', async () => {
  const sources = await bundledSources({ file: 'lambda/reconciler/index.ts' });
  expect(sources).toEqual(expect.arrayContaining(['lambda/reconciler/index.ts', 'lib/core/validation/reconciler-rules.ts', 'lib/core/reconciler/faults.ts']));
  expect(notForTheReconciler(sources)).toEqual([]);
});

test('fails when the handler\'s imports reach every construct\'s rule table', async () => {
  const sources = await bundledSources({ contents: "export * from './lambda/reconciler/index';\nexport { SAGEMAKER_RULES } from './lib/core/validation/rules';\n" });
  expect(notForTheReconciler(sources)).toEqual(['lib/core/validation/rules.ts']);
});

/** Where a routing target's kind may be asked: its own module (lib/core) and its I/O module (the Lambda). */
const ROUTING_KIND_HOMES = ['lib/core/reconciler/targets/', 'lambda/reconciler/targets/'];

/**
 * `<x>.kind` or a bare `kind`: a read of what may be a routing facts' kind. A platform's kind (the simulator's
 * `platform.kind`, a scenario's platform) is another concept, and is not one.
 */
function readsKind(node: ts.Expression): boolean {
  const e = ts.isParenthesizedExpression(node) ? node.expression : node;
  if (ts.isIdentifier(e)) return e.text === 'kind';
  if (!ts.isPropertyAccessExpression(e) || e.name.text !== 'kind') return false;
  const owner = ts.isIdentifier(e.expression) ? e.expression.text : ts.isPropertyAccessExpression(e.expression) ? e.expression.name.text : '';
  return !/platform/i.test(owner);
}

/**
 * Comparisons and switch cases of a kind read (readsKind) against a routing-target kind ('alb', 'sagemaker'):
 * `facts.kind === 'alb'`, `'sagemaker' !== config.facts.kind`, `switch (facts.kind) { case 'alb': ... }`. Producers
 * that build facts (`kind: 'alb'`) compare nothing and are not found.
 */
function routingKindSwitches(file: string, text: string, kinds: readonly string[]): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const isKind = (n: ts.Node) => ts.isStringLiteralLike(n) && kinds.includes(n.text);
  const equality = [
    ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken,
    ts.SyntaxKind.EqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsToken,
  ];
  const found: string[] = [];
  const at = (n: ts.Node) => `${file}:${source.getLineAndCharacterOfPosition(n.getStart(source)).line + 1} ${n.getText(source).split('\n')[0]}`;
  const visit = (node: ts.Node) => {
    if (ts.isBinaryExpression(node) && equality.includes(node.operatorToken.kind)
      && ((isKind(node.right) && readsKind(node.left)) || (isKind(node.left) && readsKind(node.right)))) found.push(at(node));
    if (ts.isSwitchStatement(node) && readsKind(node.expression)
      && node.caseBlock.clauses.some((c) => ts.isCaseClause(c) && isKind(c.expression))) found.push(at(node));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

test('no routing-kind switch outside the routing-target modules (one module per kind behind RoutingTarget)', () => {
  const outside = SHIPPED.filter((file) => !ROUTING_KIND_HOMES.some((home) => file.startsWith(home)));
  expect(outside.flatMap((file) => routingKindSwitches(file, readFileSync(join(ROOT, file), 'utf8'), TARGET_KINDS))).toEqual([]);
});

test('fails on a comparison or a switch on a routing facts kind; not on facts built with a kind, nor on a platform\'s kind', () => {
  const sample = [
    "if (config.facts.kind === 'alb') return [routedClass];",
    "const sm = 'sagemaker' !== facts.kind;",
    "switch (facts.kind) { case 'sagemaker': break; }",
    "const facts = { kind: 'alb', listenerArn };",
    "if (scenario.platform.kind === 'sagemaker') run();",
    "const x = target.platform === 'sagemaker';",
    "if (target.kind === 'nodepool') cap();",
  ].join('\n');
  expect(routingKindSwitches('sample.ts', sample, TARGET_KINDS)).toEqual([
    "sample.ts:1 config.facts.kind === 'alb'",
    "sample.ts:2 'sagemaker' !== facts.kind",
    "sample.ts:3 switch (facts.kind) { case 'sagemaker': break; }",
  ]);
});

/** Functions (declarations, methods, constructors, arrows, expressions) longer than `limit` lines, first to last line. */
function longFunctions(file: string, text: string, limit: number): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    // Every function-like node with a body (declarations, methods, constructors, accessors, arrows, expressions) and
    // class static blocks.
    const hasBody = (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body !== undefined) || ts.isClassStaticBlockDeclaration(node);
    if (hasBody) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const name = (node as ts.FunctionDeclaration).name?.getText(source) ?? (ts.isConstructorDeclaration(node) ? 'constructor' : '<anonymous>');
      if (last - first + 1 > limit) found.push(`${file}:${first + 1} ${name} (${last - first + 1} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

test('no function in lib/ or lambda/ is longer than 120 lines', () => {
  const files = [...tracked('lib'), ...tracked('lambda')];
  expect(files.flatMap((file) => longFunctions(file, readFileSync(join(ROOT, file), 'utf8'), 120))).toEqual([]);
});

test('fails when a function is longer than the limit (counted from its first to its last line)', () => {
  const body = Array.from({ length: 118 }, (_, i) => `  const x${i} = ${i};`).join('\n');
  expect(longFunctions('a.ts', `function fits() {\n${body}\n}\n`, 120)).toEqual([]);
  expect(longFunctions('b.ts', `const tooLong = () => {\n${body}\n  return 1;\n};\n`, 120)).toEqual(['b.ts:1 <anonymous> (121 lines)']);
  expect(longFunctions('c.ts', `class C {\n  get tooLong() {\n${body}\n    return 1;\n  }\n}\n`, 120)).toEqual(['c.ts:2 tooLong (121 lines)']);
});

/**
 * The program the public-surface checks read. First lib/ alone: imports of other packages (aws-cdk-lib, constructs,
 * node:) are left unresolved and no @types are loaded. Their declarations are ~3,000 files, whose parsing was most of
 * this file's time, and the checks need none of them: which names lib/index.ts exports, and which of those are
 * functions (a function declaration, or a constant whose type has a call signature). That holds while every exported
 * value is declared in lib/ and its type is not `any` (what a type from an unloaded package becomes); when an export
 * does not qualify, or a module of lib/ re-exports another package, the full program is built and read instead.
 */
function surfaceProgram(): ts.Program {
  const options: ts.CompilerOptions = { strict: true, skipLibCheck: true, noEmit: true };
  const libOnly = { ...options, types: [] };
  const host = ts.createCompilerHost(libOnly);
  host.resolveModuleNameLiterals = (literals, containingFile, _redirected, compilerOptions) => literals.map((literal) =>
    (literal.text.startsWith('.') ? ts.resolveModuleName(literal.text, containingFile, compilerOptions, host) : { resolvedModule: undefined }));
  const program = ts.createProgram({ rootNames: [join(ROOT, 'lib', 'index.ts')], options: libOnly, host });
  const checker = program.getTypeChecker();
  const resolved = (s: ts.Symbol) => (s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s);
  const judged = (s: ts.Symbol): boolean => {
    if (s.flags & ts.SymbolFlags.ValueModule) return checker.getExportsOfModule(s).map(resolved).every(judged);
    const declared = s.declarations !== undefined && s.declarations.length > 0;
    const anyValue = (s.flags & ts.SymbolFlags.Variable) !== 0 && s.valueDeclaration !== undefined
      && (checker.getTypeOfSymbolAtLocation(s, s.valueDeclaration).flags & ts.TypeFlags.Any) !== 0;
    return declared && !anyValue;
  };
  const reexportsPackage = program.getSourceFiles().filter((f) => !program.isSourceFileDefaultLibrary(f)).some((f) => f.statements.some((st) =>
    ts.isExportDeclaration(st) && st.moduleSpecifier !== undefined && ts.isStringLiteral(st.moduleSpecifier) && !st.moduleSpecifier.text.startsWith('.')));
  const entry = checker.getSymbolAtLocation(program.getSourceFile(join(ROOT, 'lib', 'index.ts'))!)!;
  if (!reexportsPackage && checker.getExportsOfModule(entry).map(resolved).every(judged)) return program;
  return ts.createProgram([join(ROOT, 'lib', 'index.ts')], options);
}

describe('the public surface', () => {
  const program = surfaceProgram();
  const checker = program.getTypeChecker();
  const exported = (entry: string) => {
    const symbol = checker.getSymbolAtLocation(program.getSourceFile(join(ROOT, entry))!)!;
    return checker.getExportsOfModule(symbol).map((s) => (s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s));
  };
  const resolved = (s: ts.Symbol) => (s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s);
  // A free function is a function declaration or a constant holding one (`export const f = () => ...`), also when it is
  // reached through a namespace re-export (`export * as ns from './module'`).
  const callable = (s: ts.Symbol) => (s.flags & ts.SymbolFlags.Function) !== 0 || ((s.flags & ts.SymbolFlags.Variable) !== 0
    && s.valueDeclaration !== undefined && checker.getTypeOfSymbolAtLocation(s, s.valueDeclaration).getCallSignatures().length > 0);
  const freeFunctions = (symbols: readonly ts.Symbol[], prefix: string): string[] => symbols.flatMap((s) => {
    if (s.flags & ts.SymbolFlags.ValueModule) return freeFunctions(checker.getExportsOfModule(s).map(resolved), `${prefix}${s.name}.`);
    return callable(s) ? [`${prefix}${s.name}`] : [];
  });
  const functions = (entry: string) => freeFunctions(exported(entry), '').sort();

  test('the package root exports at most 30 free functions (the rest are methods, constructs or internal)', () => {
    const found = functions('lib/index.ts');
    expect(found.length).toBeLessThanOrEqual(30);
  });

  test('internal helpers stay internal', () => {
    const names = new Set(exported('lib/index.ts').map((s) => s.name));
    for (const internal of ['buildQueryBatch', 'auditLine', 'Checker', 'numberRule', 'validationMatrixMarkdown', 'withRetries',
      'matchesFilterPattern', 'scrapeJob', 'eksProblems', 'karpenterControllerStatements']) {
      expect({ internal, exported: names.has(internal) }).toEqual({ internal, exported: false });
    }
  });
});
