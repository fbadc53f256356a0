/**
 * The library works when consumed from npm: `npm pack` (which runs `prepack` = `npm run build`) in a temp copy of the
 * repository, then install the tarball into a scratch consumer app the way npm lays it out, without the registry: the
 * tarball is extracted to node_modules/cdk-capacity-aware-inference and each dependency and peer dependency it
 * declares is a symlink to the copy already installed here (only the declared ones, so an undeclared import fails).
 * `npm install --offline` needed registry metadata that `npm ci` never caches (ENOTCACHED on an empty cache), and a
 * registry install would make the test depend on the network. A stack with the reconciler is then synthesized from
 * the installed package alone: this proves the prebuilt handler bundle ships in the tarball and is found from there.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');
const SOURCES = ['lib', 'lambda', 'scripts', 'bin', 'package.json', 'README.md', 'tsconfig.json', 'tsconfig.build.json'];

const CONSUMER_APP = `
const { App, Stack } = require('aws-cdk-lib');
const iam = require('aws-cdk-lib/aws-iam');
const { Reconciler } = require('cdk-capacity-aware-inference');
const app = new App({ outdir: 'cdk.out', builtinCloudFormationValidation: false });
const stack = new Stack(app, 'Consumer', { env: { account: '123456789012', region: 'us-east-1' } });
const cls = (name, rank, instanceType) => ({
  name, preferenceRank: rank, tokensPerSecondPerReplica: 300, safeConcurrency: 8, usdPerReplicaHour: 1,
  allowSensitive: true, maxReplicas: 4, instanceType,
});
const routing = {
  kind: 'sagemaker', endpointName: 'llm', endpointArn: 'arn:aws:sagemaker:us-east-1:123456789012:endpoint/llm',
  variants: [{ variantName: 'a', classes: [cls('a', 0, 'ml.inf2.xlarge')] }, { variantName: 'b', classes: [cls('b', 1, 'ml.g5.xlarge')] }],
};
new Reconciler(stack, 'Reconciler', {
  serving: {
    servingDescription: () => ({ service: 'consumer', tokensPerRequest: 200, routing, signals: { classes: {} } }),
    grantRouting: (grantee) => iam.Grant.addToPrincipal({
      grantee, actions: ['sagemaker:DescribeEndpoint', 'sagemaker:UpdateEndpointWeightsAndCapacities'], resourceArns: [routing.endpointArn],
    }),
  },
});
const template = app.synth().getStackByName('Consumer').template;
const fn = Object.values(template.Resources).find((r) => r.Type === 'AWS::Lambda::Function');
console.log(JSON.stringify({ s3Key: fn.Properties.Code.S3Key, resolvedFrom: require.resolve('cdk-capacity-aware-inference') }));
`;

describe('npm package', () => {
  let work: string;
  let tarball: string;
  let files: string[];
  let synth: { s3Key: string; resolvedFrom: string };
  let consumer: string;
  let declared: string[];
  const timings: Record<string, number> = {};
  const timed = <T>(name: string, fn: () => T): T => {
    const start = Date.now();
    const result = fn();
    timings[name] = Date.now() - start;
    return result;
  };

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'cai-pack-'));
    const copy = join(work, 'src');
    mkdirSync(copy);
    for (const entry of SOURCES) if (existsSync(join(ROOT, entry))) cpSync(join(ROOT, entry), join(copy, entry), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
    const quiet = { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false', QUIET_BUNDLE: '1' };
    // `npm pack` runs prepack (`npm run build`: tsc, then the Lambda bundles) exactly as publishing does.
    const name = timed('pack', () =>
      execFileSync('npm', ['pack', '--offline', '--silent', '--pack-destination', work], { cwd: copy, env: quiet, encoding: 'utf8' }).trim(),
    );
    tarball = join(work, name.split('\n').pop()!);
    files = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' }).split('\n').filter(Boolean);

    consumer = join(work, 'consumer');
    const installed = join(consumer, 'node_modules', 'cdk-capacity-aware-inference');
    mkdirSync(installed, { recursive: true });
    writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, version: '0.0.0' }));
    timed('install', () => {
      execFileSync('tar', ['xzf', tarball, '-C', installed, '--strip-components=1']);
      const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
      declared = Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies });
      for (const dep of declared) {
        mkdirSync(dirname(join(consumer, 'node_modules', dep)), { recursive: true });
        symlinkSync(join(ROOT, 'node_modules', dep), join(consumer, 'node_modules', dep), 'dir');
      }
    });
    writeFileSync(join(consumer, 'app.js'), CONSUMER_APP);
    synth = timed('synth', () => JSON.parse(execFileSync(process.execPath, ['app.js'], { cwd: consumer, encoding: 'utf8' }).trim().split('\n').pop()!));
  }, 300_000);

  afterAll(() => {
    // Printed so the cost of this test stays visible in CI logs.
    process.stdout.write(`npm package test timings (ms): ${JSON.stringify(timings)}\n`);
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('the tarball ships the compiled library and the prebuilt reconciler bundle, not sources or tests', () => {
    expect(files).toEqual(expect.arrayContaining([
      'package/package.json',
      'package/dist/lib/index.js',
      'package/dist/lib/index.d.ts',
      'package/dist/lib/control/reconciler.js',
      'package/assets/lambda/reconciler/index.js',
    ]));
    expect(files.filter((f) => /^package\/(lambda|test|lib)\//.test(f) || f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
  });

  test('a consumer app resolves the installed package and synthesizes the reconciler with the shipped handler', () => {
    expect(declared).toEqual(expect.arrayContaining(['aws-cdk-lib', 'constructs']));
    expect(synth.resolvedFrom).toBe(join(consumer, 'node_modules', 'cdk-capacity-aware-inference', 'dist', 'lib', 'index.js'));
    const asset = join(consumer, 'cdk.out', `asset.${synth.s3Key.replace('.zip', '')}`, 'index.js');
    const shipped = join(consumer, 'node_modules', 'cdk-capacity-aware-inference', 'assets', 'lambda', 'reconciler', 'index.js');
    expect(readFileSync(asset).equals(readFileSync(shipped))).toBe(true);
    // The bundle is the real handler (exports `handler`), loadable without the repository around it.
    const loaded = execFileSync(process.execPath, ['-e', `console.log(typeof require(${JSON.stringify(asset)}).handler)`], { encoding: 'utf8' });
    expect(loaded.trim()).toBe('function');
  });
});
