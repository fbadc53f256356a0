// Writes docs/validation.md from the validation rule tables (lib/core/validation/*rules.ts, VALIDATION_MATRIX in doc.ts):
//   node scripts/gen-validation-doc.mjs
// test/core/validation.test.ts fails when the committed document differs from what this writes.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
require('ts-node').register({ transpileOnly: true, compilerOptions: { module: 'commonjs' } });
const { validationMatrixMarkdown } = require('../lib/core/validation/doc.ts');

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
writeFileSync(join(root, 'docs', 'validation.md'), validationMatrixMarkdown());
