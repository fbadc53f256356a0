// Bundles the commands that call AWS (bin/sign-model.ts, bin/verify.ts, bin/game-day.ts) into dist/bin/<name>.js with
// their AWS SDK clients (and Ajv for verify), the way the Lambda handlers are bundled: the clients are then
// devDependencies, and a user of the constructs alone does not install them. The simulator CLI needs no SDK and stays
// compiled by tsc (its worker threads load dist/lib/sim/worker.js by path). No source maps: the bundles ship without
// the TypeScript sources a map would point to.
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The bundled commands; tsconfig.build.json excludes their entry files from tsc. */
const BUNDLED_COMMANDS = ['sign-model', 'verify', 'game-day'];

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
for (const name of BUNDLED_COMMANDS) {
  await build({
    entryPoints: [join(root, 'bin', `${name}.ts`)],
    outfile: join(root, 'dist', 'bin', `${name}.js`),
    bundle: true,
    platform: 'node',
    // package.json engines: Node.js 22 or newer.
    target: 'node22',
    format: 'cjs',
    minify: false,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'warning',
  });
}
