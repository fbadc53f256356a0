/**
 * Loads a user's scenario module (`--scenario-file`), TypeScript included, from an installed package as well as from
 * this repository. The compiled CLI runs on plain Node.js, which loads a `.ts` file only where it strips types itself
 * (Node.js 22.18 and newer: `process.features.typescript`, https://nodejs.org/api/typescript.html). Elsewhere the
 * ts-node of the scenario's own project registers itself (a `cdk init app` project has it), resolved from the
 * scenario file's folder, so the CLI carries no TypeScript toolchain of its own. Runs in each worker thread too.
 */
import { dirname } from 'node:path';

const TYPESCRIPT = /\.[cm]?ts$/;

function nodeStripsTypes(): boolean {
  return Boolean((process.features as { typescript?: unknown }).typescript);
}

/** `require` of the scenario module, after registering a TypeScript loader when the file needs one and none is there. */
export function requireScenarioModule(file: string): unknown {
  if (TYPESCRIPT.test(file) && !nodeStripsTypes() && !require.extensions['.ts']) {
    let register: string;
    try {
      register = require.resolve('ts-node/register/transpile-only', { paths: [dirname(file)] });
    } catch {
      throw new Error(`${file}: Node.js ${process.version} cannot load TypeScript by itself: use Node.js 22.18 or newer (it strips types), `
        + 'add ts-node to the scenario\'s project, or compile the scenario to JavaScript');
    }
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require(register);
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(file);
}
