/**
 * The integration tests' committed snapshots, checked offline: each integ app (test/integ/integ.*.ts) is synthesized
 * with cdk.json's feature flags (integ-app.ts) and every template it writes, and its integ manifest (integ.json: test
 * cases, stacks, assertion stack), must equal the committed ones in test/integ/<file>.snapshot/, so a changed template
 * fails until the snapshot is updated on purpose (`UPDATE_INTEG_SNAPSHOTS=1 npx jest test/integ`). Nothing here
 * contacts AWS or needs integ-runner. Running them in an account: README "Integration tests".
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type IntegAppBuilder, integSynthContext } from './integ-app';
import { eksImportedClusterApp } from './integ.eks-imported-cluster';
import { eksNewClusterApp } from './integ.eks-new-cluster';
import { sageMakerReconcilerApp } from './integ.sagemaker-reconciler';
import { trustGateApp } from './integ.trust-gate';

const APPS: Record<string, IntegAppBuilder> = {
  'integ.sagemaker-reconciler.ts': sageMakerReconcilerApp,
  'integ.eks-new-cluster.ts': eksNewClusterApp,
  'integ.eks-imported-cluster.ts': eksImportedClusterApp,
  'integ.trust-gate.ts': trustGateApp,
};

/** A template with each assertion's `salt` (integ-tests-alpha sets it to the synth time so the assertion reruns) masked. */
function withoutSalt(json: string): unknown {
  return JSON.parse(json, (key, value: unknown) => (key === 'salt' ? '<synth time>' : value));
}

const snapshotted = (f: string) => f.endsWith('.template.json') || f === 'integ.json';

test('every integ app in test/integ is checked', () => {
  const files = readdirSync(__dirname).filter((f) => /^integ\..+\.ts$/.test(f)).sort();
  expect(Object.keys(APPS).sort()).toEqual(files);
});

describe.each(Object.entries(APPS))('%s', (file, build) => {
  test('synthesizes the committed snapshot', () => {
    const out = join(process.env.TMPDIR!, file);
    build({ outdir: out, context: integSynthContext() }).synth();
    const written = readdirSync(out).filter(snapshotted).sort();
    const snapshot = join(__dirname, `${file}.snapshot`);
    if (process.env.UPDATE_INTEG_SNAPSHOTS) {
      rmSync(snapshot, { recursive: true, force: true });
      mkdirSync(snapshot);
      for (const f of written) writeFileSync(join(snapshot, f), readFileSync(join(out, f)));
    }
    expect(readdirSync(snapshot).sort()).toEqual(written);
    for (const f of written) {
      expect({ file: f, body: withoutSalt(readFileSync(join(out, f), 'utf8')) })
        .toEqual({ file: f, body: withoutSalt(readFileSync(join(snapshot, f), 'utf8')) });
    }
  });
});
