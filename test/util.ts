/**
 * Shared test fixtures and helpers: sample capacity classes, a validator of Kubernetes manifests against the
 * real schemas vendored in test/schemas, and a cdk-nag helper.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';
import { App, type AppProps, Stack } from 'aws-cdk-lib';
import { AwsSolutionsChecks, NIST80053R5Checks } from 'cdk-nag';
import { type IConstruct } from 'constructs';
import { parse as parseYaml } from 'yaml';
import { type CapacityClassSpec } from '../lib/core/service/capacity-class';
import { type ServiceContract } from '../lib/core/service/contract';
import { LLAMA_3_8B_BF16 } from '../lib/core/service/footprints';

// ---------------------------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------------------------

/** A digest-pinned image reference (the digest is made up, but well-formed). */
export function imageRef(repo: string, seed = 'a'): string {
  return `123456789012.dkr.ecr.us-east-1.amazonaws.com/${repo}@sha256:${seed.repeat(64).slice(0, 64)}`;
}

export const SHA_A = 'a'.repeat(64);

/** Llama-3-8B-class chat service: p95 TTFT 1.5 s, ITL 60 ms, 30 s deadline, 20 req/s peak of 250 output tokens. */
export const LLAMA_CONTRACT: ServiceContract = {
  name: 'llama3-chat',
  slo: { ttftP95Ms: 1500, itlP95Ms: 60, deadlineMs: 30000 },
  requestShape: { meanPromptTokens: 1000, meanOutputTokens: 250 },
  peakRequestsPerSecond: 20,
  headroom: 0.2,
};


/** Three EC2 classes in preference order: L40S (bf16), A10G (AWQ int4), Inferentia2 (Neuron, TP 2). */
export function llamaClasses(prefix = ''): CapacityClassSpec[] {
  return [
    {
      name: 'l40s',
      instanceType: `${prefix}g6e.xlarge`,
      artifact: { image: imageRef('vllm', 'a'), modelData: { uri: 's3://models-bucket/llama3-8b/bf16.tar', sha256: SHA_A, versionId: 'v1' } },
      footprint: LLAMA_3_8B_BF16,
      runtime: { engine: 'vllm', engineVersion: '0.29.0', maxConcurrentSequences: 16, maxQueueDelayMs: 2000 },
      envelope: { tokensPerSecondPerReplica: 1200, safeConcurrency: 16, ttftP95Ms: 900, itlP95Ms: 35, measuredOn: '2026-10-01', workload: 'azure-conv-2023' },
      maxReplicas: 8,
      usdPerHour: prefix ? 2.61 : undefined,
    },
    {
      name: 'a10g',
      instanceType: `${prefix}g5.xlarge`,
      artifact: { image: imageRef('vllm', 'b'), modelData: { uri: 's3://models-bucket/llama3-8b/awq.tar', sha256: 'b'.repeat(64), versionId: 'v1' } },
      footprint: { ...LLAMA_3_8B_BF16, weightsGiB: 5.7, quantization: 'int4-awq' },
      runtime: { engine: 'vllm', engineVersion: '0.29.0', maxConcurrentSequences: 8, maxQueueDelayMs: 2000 },
      envelope: { tokensPerSecondPerReplica: 400, safeConcurrency: 8, ttftP95Ms: 1200, itlP95Ms: 45, measuredOn: '2026-10-01', workload: 'azure-conv-2023' },
      maxReplicas: 24,
    },
    {
      name: 'inf2',
      instanceType: `${prefix}inf2.xlarge`,
      artifact: { image: imageRef('neuron', 'c'), modelData: { uri: 's3://models-bucket/llama3-8b/neuron-tp2.tar', sha256: 'c'.repeat(64) } },
      footprint: { ...LLAMA_3_8B_BF16, workspaceGiB: 3, tensorParallelDegree: 2, acceleratorTarget: 'neuron' },
      runtime: { engine: 'djl-lmi', engineVersion: '0.30.0', maxConcurrentSequences: 4, maxQueueDelayMs: 2000 },
      envelope: { tokensPerSecondPerReplica: 300, safeConcurrency: 4, ttftP95Ms: 1100, itlP95Ms: 25, measuredOn: '2026-10-01', workload: 'azure-conv-2023' },
      maxReplicas: 24,
    },
  ];
}

/**
 * A model-data fetcher with everything the fetch script runs: an image built FROM the AWS CLI v2 image with tar and
 * gzip added (the CLI image has no tar, lib/eks/model-data-fetch.ts), mirrored in ECR (a well-formed placeholder digest).
 */
export const FETCHER_IMAGE = `123456789012.dkr.ecr.us-east-1.amazonaws.com/model-fetcher@sha256:${'f'.repeat(64)}`;

// ---------------------------------------------------------------------------------------------------------------
// Apps
// ---------------------------------------------------------------------------------------------------------------

/**
 * App props of unit tests: the built-in CloudFormation validation is off (it costs ~3 s per synth). Typed so that the
 * tests also compile on the oldest supported aws-cdk-lib, whose AppProps has no such field (and no such validation).
 */
export const UNIT_TEST_APP_PROPS: AppProps & { readonly builtinCloudFormationValidation?: boolean } = { builtinCloudFormationValidation: false };

/**
 * Turns aws-cdk-lib's built-in CloudFormation validation on (test/setup-env.js turns it off for unit tests); returns
 * the function that turns it off again. For the one validated synth of each example.
 */
export function builtinValidationOn(): () => void {
  const before = process.env.CDK_VALIDATION;
  process.env.CDK_VALIDATION = 'true';
  return () => {
    process.env.CDK_VALIDATION = before;
  };
}

/**
 * An app and stack for unit tests (UNIT_TEST_APP_PROPS). Assets are not staged into the assembly (test/setup-env.js)
 * unless `stageAssets` is set, for the tests that read a staged asset.
 */
/**
 * cdk.json's context: the feature flags a `cdk init` app gets at the pinned aws-cdk-lib. The example apps' tests use it,
 * so they synthesize as `cdk synth` (and a consumer's app) does; `new App()` alone reads no cdk.json.
 */
export function cdkJsonContext(): Record<string, unknown> {
  return (JSON.parse(readFileSync(resolve(__dirname, '..', 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;
}

export function testStack(id = 'Test', options: { stageAssets?: boolean } = {}): { app: App; stack: Stack } {
  const app = new App({
    ...UNIT_TEST_APP_PROPS,
    ...(options.stageAssets ? { postCliContext: { 'aws:cdk:disable-asset-staging': false } } : {}),
  });
  const stack = new Stack(app, id, { env: { account: '123456789012', region: 'us-east-1' } });
  return { app, stack };
}

// ---------------------------------------------------------------------------------------------------------------
// cdk-nag
// ---------------------------------------------------------------------------------------------------------------

/** Unacknowledged AwsSolutions findings under `scope`, as `<rule> <resource path>` strings (easy to read in a diff). */
export function nagFindings(scope: IConstruct): string[] {
  const report = new AwsSolutionsChecks().validateScope(scope);
  return report.violations.flatMap((v) =>
    v.violatingResources.map((r) => `${v.ruleName} ${r.resourceLogicalId ?? ''} ${r.locations?.join(',') ?? ''}`.trim()),
  );
}

/** Unacknowledged NIST 800-53 rev 5 findings under `scope` (cdk-nag's NIST80053R5Checks), in the same form. */
export function nistFindings(scope: IConstruct): string[] {
  const report = new NIST80053R5Checks().validateScope(scope);
  return report.violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} ${(r as { constructPath?: string }).constructPath ?? ''}`.trim()));
}

// ---------------------------------------------------------------------------------------------------------------
// Kubernetes schema validation against the vendored schemas in test/schemas
// ---------------------------------------------------------------------------------------------------------------

/**
 * The vendored copies (see test/schemas/SOURCES.md; `npm test` checks their digests first). CAI_SCHEMAS_DIR is an
 * explicit override for trying other schema versions; a folder without the needed files fails the tests, never skips.
 */
export const SCHEMA_DIR = process.env.CAI_SCHEMAS_DIR || resolve(__dirname, 'schemas');
export const KUBERNETES_VERSION = 'v1.33.0';

const CRD_FOLDERS = ['karpenter', 'keda', 'aws-load-balancer-controller'];
let ajv: Ajv | undefined;
let crdSchemas: Map<string, object> | undefined;
const compiled = new Map<string, ValidateFunction>();

function getAjv(): Ajv {
  if (!ajv) {
    ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  }
  return ajv;
}

/** Kubernetes' API server rejects unknown fields; JSON Schema needs additionalProperties:false to do the same. */
function strict(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(strict);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) out[k] = strict(v);
  if (out.properties && out['x-kubernetes-preserve-unknown-fields'] !== true && out.additionalProperties === undefined) {
    out.additionalProperties = false;
  }
  if (out['x-kubernetes-int-or-string'] === true && out.type === undefined) {
    out.anyOf = [{ type: 'integer' }, { type: 'string' }];
  }
  return out;
}

/** Parses CRDs lazily: the ScaledJob CRD alone is 667 KB, and most test files need two or three kinds. */
function loadCrds(wanted: string): Map<string, object> {
  crdSchemas ??= new Map();
  if (crdSchemas.has(wanted)) return crdSchemas;
  const [group] = wanted.split('/');
  for (const folder of CRD_FOLDERS) {
    const dir = join(SCHEMA_DIR, folder);
    // CRD files are named <group>_<plural>.yaml.
    for (const file of readdirSync(dir).filter((f) => f.startsWith(`${group}_`) && f.endsWith('.yaml'))) {
      const crd = parseYaml(readFileSync(join(dir, file), 'utf8'));
      for (const version of crd.spec.versions) {
        const schema = strict(version.schema.openAPIV3Schema) as Record<string, unknown>;
        // metadata is validated by the API server's ObjectMeta, not by the CRD schema: accept the usual fields.
        const props = { ...(schema.properties as object), metadata: { type: 'object' } };
        crdSchemas.set(`${crd.spec.group}/${version.name}/${crd.spec.names.kind}`, { ...schema, properties: props });
      }
      if (crdSchemas.has(wanted)) return crdSchemas;
    }
  }
  return crdSchemas;
}

function coreSchemaFile(apiVersion: string, kind: string): string {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const groupPart = group ? `-${group.split('.')[0]}` : '';
  return join(SCHEMA_DIR, 'kubernetes', `${KUBERNETES_VERSION}-standalone-strict`, `${kind.toLowerCase()}${groupPart}-${version}.json`);
}

function validatorFor(apiVersion: string, kind: string): ValidateFunction {
  const key = `${apiVersion}/${kind}`;
  const cached = compiled.get(key);
  if (cached) return cached;
  let schema = loadCrds(key).get(key);
  if (schema === undefined) {
    const file = coreSchemaFile(apiVersion, kind);
    if (!existsSync(file)) throw new Error(`no schema for ${apiVersion} ${kind} (looked for a CRD and for ${file})`);
    const json = JSON.parse(readFileSync(file, 'utf8'));
    delete json.$schema;
    schema = json as object;
  }
  const fn = getAjv().compile(schema);
  compiled.set(key, fn);
  return fn;
}

export type KubernetesObject = { readonly apiVersion?: unknown; readonly kind?: unknown; readonly [key: string]: unknown };

/** Schema errors of one Kubernetes object, as readable strings (empty when valid). */
export function manifestErrors(manifest: KubernetesObject): string[] {
  const { apiVersion, kind } = manifest;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return ['manifest has no apiVersion or kind'];
  const validate = validatorFor(apiVersion, kind);
  if (validate(manifest)) return [];
  return (validate.errors ?? []).map((e) => `${kind} ${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
}

/** Asserts that every object validates against its real schema. */
export function expectValidManifests(manifests: readonly KubernetesObject[]): void {
  const errors = manifests.flatMap((m) => manifestErrors(m).map((e) => `${(m.metadata as { name?: string })?.name ?? '?'}: ${e}`));
  expect(errors).toEqual([]);
}

/** A manifest as CloudFormation will render it, with every intrinsic (always inside a JSON string) replaced by a placeholder. */
export function renderWithPlaceholders(value: unknown): string {
  if (typeof value === 'string') return value;
  const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  if (!join) return 'resolved-at-deploy';
  return join[1].map(renderWithPlaceholders).join(join[0]);
}

/** A pod's toleration as Kubernetes reads it: every field optional. */
export interface AnyToleration { readonly key?: string; readonly operator?: string; readonly value?: string; readonly effect?: string }

/**
 * Whether any of `tolerations` tolerates `taint`, by Kubernetes' rule (k8s.io/api core/v1 toleration.go
 * `ToleratesTaint`): an empty effect matches every effect, an empty key every key, `Exists` every value, `Equal` (or
 * no operator) the same value.
 */
export function tolerates(
  tolerations: readonly AnyToleration[],
  taint: { readonly key: string; readonly value?: string; readonly effect: string },
): boolean {
  return tolerations.some((t) => (!t.effect || t.effect === taint.effect) && (!t.key || t.key === taint.key)
    && (t.operator === 'Exists' || ((t.operator === undefined || t.operator === 'Equal') && (t.value ?? '') === (taint.value ?? ''))));
}
