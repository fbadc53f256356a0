/**
 * The integration tests' committed snapshots, checked offline: each integ app (test/integ/integ.*.ts) is synthesized
 * and every template it writes must equal the committed one in test/integ/<file>.snapshot/, so a changed template
 * fails until the snapshot is updated on purpose (`UPDATE_INTEG_SNAPSHOTS=1 npx jest test/integ`). Running them in an
 * account: docs/development.md "Integration tests".
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sageMakerReconcilerApp } from './integ.sagemaker-reconciler';

const APPS = { 'integ.sagemaker-reconciler.ts': sageMakerReconcilerApp };

/** A template with each assertion's `salt` (integ-tests-alpha sets it to the synth time so the assertion reruns) masked. */
function withoutSalt(json: string): unknown {
  return JSON.parse(json, (key, value: unknown) => (key === 'salt' ? '<synth time>' : value));
}

describe.each(Object.entries(APPS))('%s', (file, build) => {
  test('synthesizes the committed snapshot', () => {
    const out = join(process.env.TMPDIR!, file);
    build(out).synth();
    const templates = readdirSync(out).filter((f) => f.endsWith('.template.json')).sort();
    const snapshot = join(__dirname, `${file}.snapshot`);
    if (process.env.UPDATE_INTEG_SNAPSHOTS) {
      rmSync(snapshot, { recursive: true, force: true });
      mkdirSync(snapshot);
      for (const t of templates) writeFileSync(join(snapshot, t), readFileSync(join(out, t)));
    }
    expect(readdirSync(snapshot).sort()).toEqual(templates);
    for (const t of templates) {
      expect({ template: t, body: withoutSalt(readFileSync(join(out, t), 'utf8')) })
        .toEqual({ template: t, body: withoutSalt(readFileSync(join(snapshot, t), 'utf8')) });
    }
  });
});
