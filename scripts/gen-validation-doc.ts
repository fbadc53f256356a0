// Writes docs/validation.md from the validation rule tables (lib/core/validation-rules.ts).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { validationMatrixMarkdown } from '../lib/core/validation-doc';

writeFileSync(join(__dirname, '..', 'docs', 'validation.md'), validationMatrixMarkdown());
