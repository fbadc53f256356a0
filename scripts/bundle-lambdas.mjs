// Bundles every Lambda handler in lambda/<name>/index.ts into assets/lambda/<name>/index.js.
// The constructs deploy these prebuilt bundles, so consumers installing the package from npm need
// neither esbuild nor Docker, and the handler code they deploy is exactly what our tests exercised.
import { build } from 'esbuild';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const handlers = readdirSync(join(root, 'lambda'), { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(root, 'lambda', d.name, 'index.ts')))
  .map((d) => d.name);

rmSync(join(root, 'assets', 'lambda'), { recursive: true, force: true });
await Promise.all(
  handlers.map((name) =>
    build({
      entryPoints: [join(root, 'lambda', name, 'index.ts')],
      outfile: join(root, 'assets', 'lambda', name, 'index.js'),
      bundle: true,
      platform: 'node',
      target: 'node22',
      format: 'cjs',
      minify: true,
      sourcemap: false,
      legalComments: 'none',
      logLevel: 'warning',
      // Keep the bundles byte-stable so asset hashes only change when the code does.
      metafile: false,
    }),
  ),
);
if (!process.env.QUIET_BUNDLE) console.log(`bundled ${handlers.length} Lambda handler(s): ${handlers.join(', ') || '(none)'}`);
