import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
import * as library from '../../lib';

const README = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');

/** The first fenced block after `<!-- marker -->`. */
function blockAfter(marker: string): string {
  const at = README.indexOf(`<!-- ${marker} -->`);
  if (at < 0) throw new Error(`README has no <!-- ${marker} --> marker`);
  const match = /```\w*\n([\s\S]*?)```/.exec(README.slice(at));
  if (!match) throw new Error(`no code block after ${marker}`);
  return match[1];
}

/** Runs a README TypeScript example with 'cdk-capacity-aware-inference' bound to this checkout's lib/. */
function run(code: string): void {
  const js = ts.transpileModule(code, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText;
  const requireShim = (name: string) => {
    if (name === 'cdk-capacity-aware-inference') return library;
    throw new Error(`README example requires ${name}`);
  };
  new Function('require', 'exports', js)(requireShim, {});
}

describe('README', () => {
  test('the rejected-class example fails with exactly the message the README shows', () => {
    let printed = '';
    try {
      run(blockAfter('readme-example: rejected-class'));
    } catch (e) {
      printed = `${(e as Error).name}: ${(e as Error).message}`;
    }
    expect(printed).toBe(blockAfter('readme-output: rejected-class').trimEnd());
  });

  test('the quickstart holds exactly the two commands, and CI runs them from the README itself', () => {
    // Same extraction as .ci/run: the ```sh block under "## Quickstart", comments dropped.
    const quickstart = /^## Quickstart\n[\s\S]*?^```sh\n([\s\S]*?)^```/m.exec(README)?.[1] ?? '';
    const commands = quickstart.split('\n').map((line) => line.replace(/\s*#.*$/, '')).filter((line) => line.trim());
    expect(commands).toEqual(['npm ci && npm run synth', 'npm ci && npm test']);
    const ci = readFileSync(join(__dirname, '..', '..', '.ci', 'run'), 'utf8');
    expect(ci).toContain("awk '/^## Quickstart/{q=1} q&&/^```sh/{b=1;next} b&&/^```/{exit} b' README.md");
    expect(ci).toMatch(/^\s*env -u CI bash -c "set -euo pipefail; \$command"$/m);
  });
});
