// Bundles the signing CLI (bin/sign-model.ts) into dist/bin/sign-model.js with its AWS SDK clients (KMS, S3), the
// way the Lambda handlers are bundled: the clients are then devDependencies, and a user of the constructs alone does
// not install them. The simulator CLI needs no SDK and stays compiled by tsc (its worker threads load
// dist/lib/sim/worker.js by path).
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
await build({
  entryPoints: [join(root, 'bin', 'sign-model.ts')],
  outfile: join(root, 'dist', 'bin', 'sign-model.js'),
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  minify: false,
  sourcemap: false,
  legalComments: 'none',
  logLevel: 'warning',
});
