/** scripts/check-schemas.mjs (run by `npm test`) proves the vendored schemas are the recorded ones: it must be able to fail. */
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');
const VENDORED = join(ROOT, 'test', 'schemas');

function check(dir: string): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, [join(ROOT, 'scripts', 'check-schemas.mjs'), dir], { encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('vendored schema digests', () => {
  let copy: string;
  beforeEach(() => {
    copy = mkdtempSync(join(tmpdir(), 'cai-schemas-'));
    cpSync(VENDORED, copy, { recursive: true });
  });
  afterEach(() => rmSync(copy, { recursive: true, force: true }));

  test('the vendored copies match SHA256SUMS', () => {
    expect(check(VENDORED)).toEqual({ status: 0, output: expect.stringMatching(/^schemas: 13 vendored file\(s\) match SHA256SUMS/) });
  });

  test('a changed byte in a schema fails the check, naming the file', () => {
    appendFileSync(join(copy, 'karpenter', 'karpenter.sh_nodepools.yaml'), ' ');
    const result = check(copy);
    expect(result.status).toBe(1);
    expect(result.output).toContain('karpenter/karpenter.sh_nodepools.yaml: sha256 ');
  });

  test('a schema nobody recorded fails the check', () => {
    writeFileSync(join(copy, 'keda', 'keda.sh_scaledjobs.yaml'), 'kind: CustomResourceDefinition\n');
    const result = check(copy);
    expect(result.status).toBe(1);
    expect(result.output).toContain('keda/keda.sh_scaledjobs.yaml: not listed in SHA256SUMS');
  });

  test('a recorded schema that is missing fails the check', () => {
    rmSync(join(copy, 'keda', 'keda.sh_scaledobjects.yaml'));
    const result = check(copy);
    expect(result.status).toBe(1);
    expect(result.output).toContain('keda/keda.sh_scaledobjects.yaml: listed in SHA256SUMS but missing');
  });
});
