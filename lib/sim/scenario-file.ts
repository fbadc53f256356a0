/**
 * Loads a user's scenario module (`--scenario-file`), TypeScript included, from an installed package as well as from
 * this repository. The compiled CLI runs on plain Node.js, which loads a `.ts` file only where it strips types itself
 * (Node.js 22.18 and newer: `process.features.typescript`, https://nodejs.org/api/typescript.html). Elsewhere the
 * ts-node of the scenario's own project registers itself (a `cdk init app` project has it), resolved from the
 * scenario file's folder, so the CLI carries no TypeScript toolchain of its own. Runs in each worker thread too.
 *
 * Node.js strips types but does not convert module syntax: it loads a `.ts` file as CommonJS where the nearest
 * package.json says `"type": "commonjs"` (what `npm init` writes), and an `import` there is a syntax error
 * ("Modules: TypeScript", Determining module system). So the project's ts-node, which compiles to CommonJS, loads a
 * `.ts` or `.cts` file wherever the project has one; Node.js strips the types of the rest (`.mts` files included).
 */
import { dirname } from 'node:path';

const TYPESCRIPT = /\.[cm]?ts$/;

function nodeStripsTypes(): boolean {
  return Boolean((process.features as { typescript?: unknown }).typescript);
}

/** The scenario project's ts-node register hook, undefined when the project has none. */
function projectTsNode(file: string): string | undefined {
  try {
    return require.resolve('ts-node/register/transpile-only', { paths: [dirname(file)] });
  } catch {
    return undefined;
  }
}

function isModuleSyntaxInCommonJs(e: unknown): boolean {
  return e instanceof SyntaxError && /Cannot use import statement outside a module|Unexpected token 'export'/.test(e.message);
}

/** ts-node registered already (this repository's ts-node runs), or, before Node.js strips types, any `.ts` loader (jest). */
function loaderRegistered(): boolean {
  return Boolean((process as unknown as Record<symbol, unknown>)[Symbol.for('ts-node.register.instance')])
    || (!nodeStripsTypes() && Boolean(require.extensions['.ts']));
}

/** `require` of the scenario module, after registering a TypeScript loader when the file needs one and none is there. */
export function requireScenarioModule(file: string): unknown {
  const typescript = TYPESCRIPT.test(file);
  if (typescript && !loaderRegistered() && !(nodeStripsTypes() && file.endsWith('.mts'))) {
    const register = projectTsNode(file);
    if (register) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      require(register);
    } else if (!nodeStripsTypes()) {
      throw new Error(`${file}: Node.js ${process.version} cannot load TypeScript by itself: use Node.js 22.18 or newer (it strips types), `
        + 'add ts-node to the scenario\'s project, or compile the scenario to JavaScript');
    }
  }
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(file);
  } catch (e) {
    if (!typescript || !isModuleSyntaxInCommonJs(e)) throw e;
    throw new Error(`${file}: Node.js ${process.version} loads it as CommonJS (its package.json says "type": "commonjs"), where import `
      + 'and export are syntax errors: name it .mts, set "type": "module", add ts-node to the scenario\'s project, or compile it to JavaScript', { cause: e });
  }
}
