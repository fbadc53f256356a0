// Bundles every Lambda handler in lambda/<name>/index.ts into assets/lambda/<name>/index.js.
// The constructs deploy these prebuilt bundles, so consumers installing the package from npm need
// neither esbuild nor Docker, and the handler code they deploy is exactly what our tests exercised.
//
// cdk.json's app, `npm run build` and the test setup all run this first, so it skips the build when the bundles are
// up to date: assets/lambda.stamp.json records the sha256 of every file esbuild read (from its metafile), of this
// script and tsconfig.json, esbuild's version, the names of the files in lambda/ and lib/, and of every bundle
// written; any difference rebuilds everything.
import { build, version as esbuildVersion } from 'esbuild';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stampFile = join(root, 'assets', 'lambda.stamp.json');
// stderr: under `cdk synth <Stack>` the app's stdout would land in the template that the CLI prints.
const say = (message) => {
  if (!process.env.QUIET_BUNDLE) console.error(message);
};
const handlers = readdirSync(join(root, 'lambda'), { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(root, 'lambda', d.name, 'index.ts')))
  .map((d) => d.name)
  .sort();
const outfile = (name) => join('assets', 'lambda', name, 'index.js');

const sha256 = (path) => (existsSync(join(root, path)) ? createHash('sha256').update(readFileSync(join(root, path))).digest('hex') : null);
const digests = (paths) => Object.fromEntries([...paths].sort().map((p) => [p, sha256(p)]));
// A new source file can change what an import resolves to (lib/x.ts beside lib/x/index.ts) without any input
// changing, so the names of all source files are part of the stamp too.
const filesUnder = (dir) =>
  readdirSync(join(root, dir), { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? filesUnder(`${dir}/${d.name}`) : [`${dir}/${d.name}`]));
const settings = () => ({
  esbuild: esbuildVersion,
  handlers,
  sourceFiles: createHash('sha256').update(['lambda', 'lib'].flatMap(filesUnder).sort().join('\n')).digest('hex'),
  config: digests([relative(root, fileURLToPath(import.meta.url)).split(sep).join('/'), 'tsconfig.json']),
});

function upToDate() {
  if (!existsSync(stampFile)) return false;
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(stampFile, 'utf8'));
  } catch {
    return false;
  }
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  return (
    same(stamp.settings, settings()) &&
    same(stamp.inputs, digests(Object.keys(stamp.inputs ?? {}))) &&
    same(stamp.outputs, digests(handlers.map(outfile)))
  );
}

if (upToDate()) {
  say(`Lambda bundles up to date: ${handlers.join(', ')}`);
} else {
  rmSync(join(root, 'assets', 'lambda'), { recursive: true, force: true });
  rmSync(stampFile, { force: true });
  const results = await Promise.all(
    handlers.map((name) =>
      build({
        absWorkingDir: root,
        entryPoints: [join('lambda', name, 'index.ts')],
        outfile: outfile(name),
        bundle: true,
        platform: 'node',
        target: 'node22',
        format: 'cjs',
        minify: true,
        sourcemap: false,
        legalComments: 'none',
        logLevel: 'warning',
        // The metafile lists the inputs for the stamp; it does not change the bundle, which stays byte-stable so
        // asset hashes only change when the code does.
        metafile: true,
      }),
    ),
  );
  // Metafile input paths are relative to absWorkingDir (root), with '/' separators.
  const inputs = new Set(results.flatMap((r) => Object.keys(r.metafile.inputs)));
  writeFileSync(
    stampFile,
    `${JSON.stringify({ settings: settings(), inputs: digests(inputs), outputs: digests(handlers.map(outfile)) }, null, 1)}\n`,
  );
  say(`bundled ${handlers.length} Lambda handler(s): ${handlers.join(', ') || '(none)'}`);
}
