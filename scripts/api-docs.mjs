// Generates the API reference (docs/api/) from the TSDoc comments with TypeDoc and typedoc-plugin-markdown, offline.
//   node scripts/api-docs.mjs           regenerate docs/api/
//   node scripts/api-docs.mjs --check   fail if docs/api/ differs from what the sources generate (CI runs this)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');
const out = check ? mkdtempSync(join(tmpdir(), 'cai-api-')) : join(root, 'docs', 'api');
execFileSync(process.execPath, [join(root, 'node_modules', 'typedoc', 'bin', 'typedoc'), '--out', out], { cwd: root, stdio: 'inherit' });

function files(dir) {
  return readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? files(join(dir, name)) : [join(dir, name)]));
}
if (check) {
  const committed = join(root, 'docs', 'api');
  const want = new Map(files(out).map((f) => [relative(out, f), readFileSync(f, 'utf8')]));
  const have = new Map(files(committed).map((f) => [relative(committed, f), readFileSync(f, 'utf8')]));
  const stale = [...new Set([...want.keys(), ...have.keys()])].filter((f) => want.get(f) !== have.get(f)).sort();
  rmSync(out, { recursive: true, force: true });
  if (stale.length > 0) {
    console.error(`docs/api is out of date (${stale.join(', ')}): run npm run docs:api and commit the result`);
    process.exit(1);
  }
  console.log('docs/api is up to date');
}
