/**
 * The library works when consumed from npm: `npm pack` (which runs `prepack`: empty dist, `npm run build`) in a temp copy of the
 * repository, then install the tarball into a scratch consumer app the way npm lays it out, without the registry: the
 * tarball is extracted to node_modules/cdk-capacity-aware-inference and each dependency and peer dependency it
 * declares is a symlink to the copy already installed here (only the declared ones, so an undeclared import fails).
 * `npm install --offline` needed registry metadata that `npm ci` never caches (ENOTCACHED on an empty cache), and a
 * registry install would make the test depend on the network. A stack with the reconciler is then synthesized from
 * the installed package alone: this proves the prebuilt handler bundle ships in the tarball and is found from there.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { ModuleKind, ScriptTarget, transpileModule } from 'typescript';

const ROOT = resolve(__dirname, '..', '..');
const SOURCES = [
  'lib', 'lambda', 'scripts', 'bin', 'docs', 'package.json', 'README.md', 'BENCHMARKS.md', 'CHANGELOG.md', 'LICENSE', 'tsconfig.json',
  'tsconfig.build.json',
];

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

interface Manifest {
  readonly repository: { readonly url: string };
  readonly homepage: string;
  readonly bugs: { readonly url: string };
  readonly keywords: string[];
  readonly engines: { readonly node: string };
  readonly bin: Record<string, string>;
  readonly dependencies?: Record<string, string>;
  readonly peerDependencies: Record<string, string>;
  readonly peerDependenciesMeta?: Record<string, { readonly optional?: boolean }>;
}

/** Runs a command the way a user of the installed package does: by its name, from the consumer app's node_modules/.bin. */
function command(consumerDir: string, name: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(join(consumerDir, 'node_modules', '.bin', name), args, { cwd: consumerDir, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('npm package', () => {
  let work: string;
  let tarball: string;
  let files: string[];
  let synth: { s3Key: string; resolvedFrom: string };
  let consumer: string;
  let declared: string[];
  let manifest: Manifest;
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
    // A file an earlier build left in dist (a module since renamed) must not ship: prepack starts from an empty dist.
    mkdirSync(join(copy, 'dist', 'lib'), { recursive: true });
    writeFileSync(join(copy, 'dist', 'lib', 'stale-leftover.js'), "require('./gone');\n");
    // `npm pack` runs prepack (empty dist, then `npm run build`: tsc, then the Lambda bundles) exactly as publishing does.
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
      manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Manifest;
      declared = Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies });
      for (const dep of declared) {
        mkdirSync(dirname(join(consumer, 'node_modules', dep)), { recursive: true });
        symlinkSync(join(ROOT, 'node_modules', dep), join(consumer, 'node_modules', dep), 'dir');
      }
      mkdirSync(join(consumer, 'node_modules', '.bin'));
      for (const [name, file] of Object.entries(manifest.bin)) {
        // npm makes each bin target executable when it installs the package.
        chmodSync(join(installed, file), 0o755);
        symlinkSync(join(installed, file), join(consumer, 'node_modules', '.bin', name));
      }
    });
    writeFileSync(join(consumer, 'app.js'), CONSUMER_APP);
    // The app asks for no built-in CloudFormation validation, but the floor of our aws-cdk-lib peer range (2.269.0, the
    // version installed here) ignores that prop and reads only CDK_VALIDATION (see test/setup-env.js, whose setting
    // does not reach a child process). Unasked, that version only warns on what it finds, so it could not fail this
    // synth; it cost ~6 s of it. No CDK_CONTEXT_JSON either: `node app.js` gets none outside the CDK CLI, and the test
    // reads the staged asset that setup-env.js's context would not stage.
    const { CDK_CONTEXT_JSON: _testContext, ...consumerEnv } = process.env;
    synth = timed('synth', () => JSON.parse(execFileSync(process.execPath, ['app.js'], {
      cwd: consumer, encoding: 'utf8', env: { ...consumerEnv, CDK_VALIDATION: 'false' },
    }).trim().split('\n').pop()!));
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
    expect(files).not.toContain('package/dist/lib/stale-leftover.js');
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

  test('the manifest says where the project lives, that it is a CDK construct library, and what it needs', () => {
    const repo = manifest.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
    expect(repo).toMatch(/^https:\/\//);
    expect(manifest.homepage).toBe(`${repo}#readme`);
    expect(manifest.bugs.url).toBe(`${repo}/issues`);
    expect(manifest.keywords).toEqual(expect.arrayContaining(['cdk', 'constructs']));
    expect(manifest.engines.node).toBe('>=22');
    // The kubectl layer is needed only for an EKS cluster the construct creates: an optional peer.
    expect(manifest.peerDependencies['@aws-cdk/lambda-layer-kubectl-v34']).toBeDefined();
    expect(manifest.peerDependenciesMeta).toEqual({ '@aws-cdk/lambda-layer-kubectl-v34': { optional: true } });
  });

  test('the docs ship, and every relative link of the shipped Markdown resolves inside the package', () => {
    const shipped = new Set(files.map((f) => f.replace(/^package\//, '')));
    expect([...shipped]).toEqual(expect.arrayContaining(['README.md', 'BENCHMARKS.md', 'docs/README.md', 'docs/verify.md', 'docs/game-day.md']));
    const repository = manifest.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
    const broken: string[] = [];
    for (const page of [...shipped].filter((f) => f.endsWith('.md'))) {
      // Fenced code blocks are text, not links.
      const text = readFileSync(join(consumer, 'node_modules', 'cdk-capacity-aware-inference', page), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1].split('#')[0];
        if (target === '') continue; // an anchor
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
          // A link to a repository file that does not ship goes to the repository the manifest names.
          if (/^https:\/\/github\.com\/[^/]+\/cdk-capacity-aware-inference\//.test(target) && !target.startsWith(`${repository}/`)) broken.push(`${page}: ${m[1]}`);
          continue;
        }
        const resolved = join(dirname(page), decodeURI(target)).replace(/\\/g, '/').replace(/\/$/, '');
        if (!shipped.has(resolved) && ![...shipped].some((f) => f.startsWith(`${resolved}/`))) broken.push(`${page}: ${m[1]}`);
      }
    }
    expect(broken).toEqual([]);
  });

  test('every command runs from the installed package by its installed name, and the README names each', () => {
    const readme = readFileSync(join(consumer, 'node_modules', 'cdk-capacity-aware-inference', 'README.md'), 'utf8');
    expect(Object.keys(manifest.bin).sort()).toEqual(['cdk-capacity-game-day', 'cdk-capacity-sign-model', 'cdk-capacity-sim', 'cdk-capacity-verify']);
    for (const name of Object.keys(manifest.bin)) {
      const r = command(consumer, name, ['--help']);
      expect({ name, status: r.status, stderr: r.stderr }).toEqual({ name, status: 0, stderr: '' });
      expect(r.stdout).toContain(name);
      expect(readme).toContain(name);
    }
  });

  test('the commands that call AWS carry their clients and none of aws-cdk-lib; a missing --stack is a usage error', () => {
    for (const name of ['verify', 'game-day', 'sign-model']) {
      const bundle = readFileSync(join(consumer, 'node_modules', 'cdk-capacity-aware-inference', 'dist', 'bin', `${name}.js`), 'utf8');
      expect(bundle.startsWith('#!/usr/bin/env node')).toBe(true);
      expect(bundle).not.toMatch(/require\("aws-cdk-lib/);
      // The one SDK module left out is the optional CRT signer (SigV4a), which the SDK requires lazily inside a try.
      expect(bundle).not.toMatch(/require\("@aws-sdk\/(?!signature-v4-crt")/);
    }
    const r = command(consumer, 'cdk-capacity-verify', ['--region', 'us-east-1']);
    expect([r.status, r.stderr.split('\n')[0]]).toEqual([2, '--stack <name> is required']);
  });

  test('sim --scenario-file runs the docs\' TypeScript scenario (also in a "type": "commonjs" package) and a JavaScript one from the installed package', () => {
    const docs = readFileSync(join(ROOT, 'docs', 'simulator.md'), 'utf8');
    const example = /`npx cdk-capacity-sim run --scenario-file \.\/my-scenario\.ts`[^\n]*\n\n```ts\n([\s\S]*?)```/.exec(docs)![1];
    writeFileSync(join(consumer, 'my-scenario.ts'), example);
    // A `cdk init app` project has ts-node and a CommonJS tsconfig.json; on Node.js 22.18+ the CLI needs neither (Node
    // strips the types).
    writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'commonjs', lib: ['es2022'], strict: true, esModuleInterop: true, skipLibCheck: true },
    }));
    for (const dep of ['ts-node', 'typescript']) {
      if (!existsSync(join(consumer, 'node_modules', dep))) symlinkSync(join(ROOT, 'node_modules', dep), join(consumer, 'node_modules', dep), 'dir');
    }
    // The same scenario as CommonJS JavaScript, as a user without TypeScript would write it.
    writeFileSync(join(consumer, 'my-scenario.js'), transpileModule(example, { compilerOptions: { module: ModuleKind.CommonJS, target: ScriptTarget.ES2022 } }).outputText);
    // The same TypeScript under a package.json that says "type": "commonjs" (what `npm init` writes): Node.js 22.18+
    // strips the types but loads it as CommonJS, where its import is a syntax error; the project's ts-node loads it.
    mkdirSync(join(consumer, 'commonjs'));
    writeFileSync(join(consumer, 'commonjs', 'package.json'), JSON.stringify({ name: 'scenarios', private: true, type: 'commonjs' }));
    writeFileSync(join(consumer, 'commonjs', 'my-scenario.ts'), example);
    for (const file of ['my-scenario.ts', 'my-scenario.js', 'commonjs/my-scenario.ts']) {
      const out = join(consumer, `reports-${file.replace('/', '-')}`);
      const r = command(consumer, 'cdk-capacity-sim', ['run', '--scenario-file', `./${file}`, '--seeds', '1', '--workers', '1', '--policies', 'library', '--out', out]);
      expect({ file, status: r.status, stderr: r.stderr.split('\n').filter((l) => !l.startsWith('Running') && !l.startsWith('[')) }).toEqual({ file, status: 0, stderr: [''] });
      const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as { scenarios: Array<{ scenarioId: string; platform: string }> };
      // A scenario runs on both platforms' default control loops unless --platforms says otherwise.
      expect(results.scenarios.map((x) => `${x.scenarioId} on ${x.platform}`).sort()).toEqual(['my-shortage on eks', 'my-shortage on sagemaker']);
    }
  });

  test('source maps resolve: each shipped map embeds its sources, each mapping comment names a shipped map', () => {
    const root = join(consumer, 'node_modules', 'cdk-capacity-aware-inference');
    const maps = files.filter((f) => f.endsWith('.js.map')).map((f) => f.replace(/^package\//, ''));
    expect(maps.length).toBeGreaterThan(50);
    for (const map of maps) {
      const m = JSON.parse(readFileSync(join(root, map), 'utf8')) as { sources: string[]; sourcesContent?: Array<string | null> };
      expect({ map, embedded: m.sourcesContent?.length === m.sources.length && m.sourcesContent.every((c) => typeof c === 'string') }).toEqual({ map, embedded: true });
    }
    for (const js of files.filter((f) => f.endsWith('.js')).map((f) => f.replace(/^package\//, ''))) {
      const ref = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(readFileSync(join(root, js), 'utf8'))?.[1];
      if (ref) expect({ js, map: existsSync(join(root, dirname(js), ref)) }).toEqual({ js, map: true });
    }
  });
});
