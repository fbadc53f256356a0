// Checks that the vendored schemas in test/schemas are exactly the files SOURCES.md describes: every file listed in
// SHA256SUMS exists and has its recorded digest, and no unlisted file sits among them (a schema that nobody recorded
// would validate manifests with no known origin). Run by `npm test`; `node scripts/check-schemas.mjs [dir]`.
// The list is `sha256sum` format, so `cd test/schemas && sha256sum -c SHA256SUMS` checks the same thing.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'schemas'));
const NOT_SCHEMAS = new Set(['SHA256SUMS', 'SOURCES.md', '.gitattributes']);

function filesUnder(folder) {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(folder, entry.name)) : [join(folder, entry.name)],
  );
}

const problems = [];
const sums = join(dir, 'SHA256SUMS');
if (!existsSync(sums)) {
  console.error(`check-schemas: ${sums} is missing`);
  process.exit(1);
}
const recorded = new Map();
for (const [i, line] of readFileSync(sums, 'utf8').split('\n').entries()) {
  if (!line.trim()) continue;
  const match = /^([0-9a-f]{64}) [ *](.+)$/.exec(line);
  if (!match) problems.push(`SHA256SUMS line ${i + 1} is not '<sha256>  <path>': ${JSON.stringify(line)}`);
  else recorded.set(match[2], match[1]);
}
for (const [path, digest] of recorded) {
  const file = join(dir, path);
  if (!existsSync(file)) {
    problems.push(`${path}: listed in SHA256SUMS but missing`);
    continue;
  }
  const actual = createHash('sha256').update(readFileSync(file)).digest('hex');
  if (actual !== digest) problems.push(`${path}: sha256 ${actual}, SHA256SUMS records ${digest}`);
}
for (const file of filesUnder(dir)) {
  const path = relative(dir, file).split(sep).join('/');
  if (!NOT_SCHEMAS.has(path) && !recorded.has(path)) problems.push(`${path}: not listed in SHA256SUMS (and so not in SOURCES.md)`);
}

if (problems.length > 0) {
  console.error(`check-schemas: the vendored schemas in ${dir} do not match their recorded digests:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`schemas: ${recorded.size} vendored file(s) match SHA256SUMS`);
