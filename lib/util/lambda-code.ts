import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as lambda from 'aws-cdk-lib/aws-lambda';

const PACKAGE_NAME = 'cdk-capacity-aware-inference';

/**
 * Code for one of the library's Lambda handlers, from the bundle that `npm run build` (and the test setup)
 * writes to `assets/lambda/<name>/index.js`.
 *
 * Why prebuilt bundles instead of `NodejsFunction`: consumers who install the package from npm then need
 * neither esbuild nor Docker nor our TypeScript sources, and they deploy exactly the code our tests ran.
 */
export function lambdaCode(name: string): lambda.Code {
  const dir = join(packageRoot(), 'assets', 'lambda', name);
  if (!existsSync(join(dir, 'index.js'))) {
    throw new Error(
      `${PACKAGE_NAME}: the bundled Lambda handler '${name}' is missing at ${dir}/index.js. ` +
        'Run `npm run build` (or `npm run bundle`) in the package before synthesizing.',
    );
  }
  return lambda.Code.fromAsset(dir);
}

function packageRoot(): string {
  // Works from lib/util (ts-node, jest) and from the compiled package alike: walk up to our package.json.
  let dir = __dirname;
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === PACKAGE_NAME) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`${PACKAGE_NAME}: cannot find the package root above ${__dirname}`);
    dir = parent;
  }
}
