// Compiles every ```ts block of README.md and docs/*.md against the library's sources, so that documented examples
// cannot rot. Imports of 'cdk-capacity-aware-inference' (and its /core and /sim entry points) resolve to lib/.
// Blocks fenced as ```ts nocompile are skipped. docs/api/ is generated from the sources and not checked here.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, '.readme-check');
const pages = [join(root, 'README.md'), ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => join(root, 'docs', f))];
const blocks = pages.flatMap((page) =>
  [...readFileSync(page, 'utf8').matchAll(/^```ts\n([\s\S]*?)^```/gm)].map((m, i) => ({ page, code: m[1], index: i + 1 })),
);

rmSync(out, { recursive: true, force: true });
mkdirSync(out);
// Each block is its own module, so blocks may declare the same names; the file name says where it comes from.
for (const b of blocks) {
  writeFileSync(join(out, `${basename(b.page, '.md')}-${String(b.index).padStart(2, '0')}.ts`), `${b.code}\nexport {};\n`);
}
writeFileSync(
  join(out, 'tsconfig.json'),
  JSON.stringify({
    extends: '../tsconfig.json',
    compilerOptions: {
      noEmit: true,
      noUnusedLocals: false,
      baseUrl: '..',
      paths: {
        'cdk-capacity-aware-inference': ['lib/index.ts'],
        'cdk-capacity-aware-inference/core': ['lib/core/index.ts'],
        'cdk-capacity-aware-inference/sim': ['lib/sim/index.ts'],
      },
    },
    include: ['*.ts'],
  }),
);
try {
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(out, 'tsconfig.json')], { stdio: 'inherit' });
  console.log(`docs: ${blocks.length} TypeScript example(s) in ${pages.length} page(s) compile`);
} catch {
  console.error(`docs: examples do not compile (see the errors above; the blocks are in ${out})`);
  process.exit(1);
}
