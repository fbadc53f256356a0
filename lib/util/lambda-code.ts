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

/**
 * The newest Node.js runtime the installed aws-cdk-lib knows (`Runtime.ALL`). The handlers are bundled for Node 22
 * (scripts/bundle-lambdas.mjs, `target: 'node22'`) and run on any later one. cdk-nag's AwsSolutions-L1 asks for the
 * newest version of the family in that same list (cdk-nag src/rules/lambda/LambdaLatestVersion.ts: the highest
 * version of `Runtime.ALL` in the family), so a runtime pinned in the source fails it as soon as a consumer's
 * aws-cdk-lib adds a newer one (a pinned NODEJS_24_X did on aws-cdk-lib 2.278.0, which added nodejs26.x).
 */
export function latestNodeRuntime(known: readonly lambda.Runtime[] = lambda.Runtime.ALL): lambda.Runtime {
  const version = (r: lambda.Runtime) => Number(/^nodejs(\d+)\.x$/.exec(r.name)?.[1] ?? -1);
  const newest = known.filter((r) => version(r) >= 22).sort((a, b) => version(b) - version(a))[0];
  if (!newest) throw new Error(`${PACKAGE_NAME}: aws-cdk-lib knows no Node.js runtime of 22 or later`);
  return newest;
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
