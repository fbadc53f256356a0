/**
 * Loads a user's scenario module (`--scenario-file`), TypeScript included, from an installed package as well as from
 * this repository. The compiled CLI runs on plain Node.js, which loads a `.ts` file only where it strips types itself
 * (Node.js 22.18 and newer: `process.features.typescript`, https://nodejs.org/api/typescript.html). Elsewhere the
 * ts-node of the scenario's own project registers itself (a `cdk init app` project has it), resolved from the
 * scenario file's folder, so the CLI carries no TypeScript toolchain of its own. Runs in each worker thread too.
 *
 * Node.js strips types but does not convert module syntax: it loads a `.cts` file, and a `.ts` file whose nearest
 * package.json says `"type": "commonjs"` (what `npm init` writes), as CommonJS, where an `import` is a syntax error
 * (https://nodejs.org/api/typescript.html, "Determining module system"). Those go through the project's ts-node, which
 * compiles them to CommonJS. The rest stay with Node.js: ts-node 10 refuses a `.ts` file under `"type": "module"`
 * (ERR_REQUIRE_ESM), which Node.js loads as an ES module.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const TYPESCRIPT = /\.[cm]?ts$/;

function nodeStripsTypes(): boolean {
  return Boolean((process.features as { typescript?: unknown }).typescript);
}

/** The `type` of the package.json nearest to the file (Node.js's rule), undefined when none says. */
function packageType(file: string): string | undefined {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) return (JSON.parse(readFileSync(manifest, 'utf8')) as { type?: string }).type;
    if (dirname(dir) === dir) return undefined;
  }
}

/** The scenario project's ts-node register hook, undefined when the project has none. */
function projectTsNode(file: string): string | undefined {
  try {
    return require.resolve('ts-node/register/transpile-only', { paths: [dirname(file)] });
  } catch {
    return undefined;
  }
}

/** What the running Node.js and the scenario's project offer. */
export interface LoaderEnvironment {
  readonly stripsTypes: boolean;
  readonly loaderRegistered: boolean;
  /** The nearest package.json's `type`. */
  readonly packageType?: string;
  /** The project has ts-node. */
  readonly tsNode: boolean;
  readonly nodeVersion: string;
}

/** What loads a scenario file: Node.js itself, the project's ts-node, or nothing (an error saying what to change). */
export type ScenarioLoader = 'node' | 'ts-node' | { readonly error: string };

/**
 * The loader for a file, from what the running Node.js and the scenario's project offer. `loaderRegistered`: a `.ts`
 * loader is in place already (this repository's ts-node, or jest's transform).
 */
export function scenarioLoader(file: string, env: LoaderEnvironment): ScenarioLoader {
  if (!TYPESCRIPT.test(file) || env.loaderRegistered) return 'node';
  const commonJs = file.endsWith('.cts') || (file.endsWith('.ts') && env.packageType === 'commonjs');
  if (env.stripsTypes && !commonJs) return 'node';
  if (env.tsNode) return 'ts-node';
  if (env.stripsTypes) return 'node'; // a CommonJS file without import or export still loads; one with them fails, explained
  return { error: `${file}: Node.js ${env.nodeVersion} cannot load TypeScript by itself: use Node.js 22.18 or newer (it strips types), `
    + 'add ts-node to the scenario\'s project, or compile the scenario to JavaScript' };
}

/** ts-node registered already (this repository's), or, before Node.js strips types, any `.ts` loader. */
function loaderRegistered(): boolean {
  return Boolean((process as unknown as Record<symbol, unknown>)[Symbol.for('ts-node.register.instance')])
    || (!nodeStripsTypes() && Boolean(require.extensions['.ts']));
}

function isModuleSyntaxInCommonJs(e: unknown): boolean {
  return e instanceof SyntaxError && /Cannot use import statement outside a module|Unexpected token 'export'/.test(e.message);
}

/** `require` of the scenario module, after registering a TypeScript loader when the file needs one and none is there. */
export function requireScenarioModule(file: string): unknown {
  const register = TYPESCRIPT.test(file) ? projectTsNode(file) : undefined;
  const loader = scenarioLoader(file, {
    stripsTypes: nodeStripsTypes(),
    loaderRegistered: loaderRegistered(),
    packageType: packageType(file),
    tsNode: register !== undefined,
    nodeVersion: process.version,
  });
  if (typeof loader === 'object') throw new Error(loader.error);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  if (loader === 'ts-node') require(register!);
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(file);
  } catch (e) {
    if (!TYPESCRIPT.test(file) || !isModuleSyntaxInCommonJs(e)) throw e;
    throw new Error(`${file}: Node.js ${process.version} loads it as CommonJS (a .cts file, or its package.json says "type": "commonjs"), `
      + 'where import and export are syntax errors: name it .mts, set "type": "module", add ts-node to the scenario\'s project, '
      + 'or compile it to JavaScript', { cause: e });
  }
}
