// Compiles every ```ts block of README.md against the library's sources, so that documented examples cannot rot.
// Imports of 'cdk-capacity-aware-inference' resolve to lib/index.ts. Blocks fenced as ```ts nocompile are skipped.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, '.readme-check');
const blocks = [...readFileSync(join(root, 'README.md'), 'utf8').matchAll(/^```ts\n([\s\S]*?)^```/gm)].map((m) => m[1]);

rmSync(out, { recursive: true, force: true });
mkdirSync(out);
// Each block is its own module, so blocks may declare the same names.
blocks.forEach((code, i) => writeFileSync(join(out, `block-${String(i + 1).padStart(2, '0')}.ts`), `${code}\nexport {};\n`));
writeFileSync(
  join(out, 'tsconfig.json'),
  JSON.stringify({
    extends: '../tsconfig.json',
    compilerOptions: { noEmit: true, noUnusedLocals: false, baseUrl: '..', paths: { 'cdk-capacity-aware-inference': ['lib/index.ts'] } },
    include: ['*.ts'],
  }),
);
try {
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(out, 'tsconfig.json')], { stdio: 'inherit' });
  console.log(`README: ${blocks.length} TypeScript example(s) compile`);
} catch {
  console.error(`README: examples do not compile (see the errors above; the blocks are in ${out})`);
  process.exit(1);
}
