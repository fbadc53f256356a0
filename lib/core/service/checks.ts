import { type CapacityClass, type CapacityClassSpec, DEFAULT_MEMORY_POLICY } from './capacity-class';
import { type ServiceContract, serviceContractProblems } from './contract';
import { HardwareCatalog } from '../hardware/catalog';
import { type HardwareProfile, type Platform } from '../hardware/profile';
import { duplicates } from '../validation/names';
import { memoryBreakdown } from './sizing';
import { DIGEST_PINNED_FORM, isDigestPinnedImage } from '../trust/image-reference';
import { meanServiceTimeMs } from '../runtime/admission';
import { isUnresolved } from '../validation/tokens';
import { Checker, isFiniteLiteral, isObject, numberProblem } from '../validation/checker';
import { ConstructValidationError, type Problem } from '../validation/error';
import { CLASS_RULES, CONTRACT_RULES } from '../validation/service-rules';
import { type CapacityPlan } from './sizing';
import { parseS3Uri } from '../trust/s3-uri';

/** One thing wrong with a declared class: the one problem type of every construct (lib/core/validation/error.ts). */
export type ClassProblem = Problem;

export interface CheckOptions {
  /** @default HardwareCatalog.builtIn() */
  readonly catalog?: HardwareCatalog;
  /** When given, envelopes are checked against its SLO and queue delays against its deadline. */
  readonly contract?: ServiceContract;
  /** When given, every instance type must be offered there (`ml.` types on SageMaker). */
  readonly platform?: Platform;
  /** When given (a literal AWS region), every `placement.zones` entry must be a zone of it. */
  readonly region?: string;
  /**
   * Whether an empty list of classes is a problem. A construct that takes classes one by one (`addClass()`) reports
   * emptiness itself, when it is complete.
   * @default true
   */
  readonly requireClasses?: boolean;
}

const SHA256 = /^[0-9a-f]{64}$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The parts of a class every check reads (the envelope is checked on its own: its absence has a message of its own). */
const REQUIRED_PARTS: ReadonlyArray<readonly ['artifact' | 'footprint' | 'runtime', string]> = [
  ['artifact', 'an object with the image by digest (artifact.image) and, unless the weights are in the image, artifact.modelData'],
  ['footprint', 'an object with weightsGiB, workspaceGiB, kvCacheBytesPerToken, maxSequenceTokens, tensorParallelDegree, quantization, ' +
    'revision and acceleratorTarget'],
  ['runtime', 'an object with engine, maxConcurrentSequences and maxQueueDelayMs (and the optional engine settings)'],
];

/** Whether `value` is a real calendar day `YYYY-MM-DD` (not 2026-13-45 or 2026-02-30). */
function isCalendarDate(value: unknown): boolean {
  const m = typeof value === 'string' ? ISO_DATE.exec(value) : null;
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/**
 * Checks a set of classes (in preference order) and returns the resolved classes with every problem found.
 * Values that are CDK tokens are skipped: they are resolved at deploy time.
 */
export function checkCapacityClasses(
  specs: readonly CapacityClassSpec[],
  options: CheckOptions = {},
): { readonly classes: CapacityClass[]; readonly problems: ClassProblem[] } {
  const catalog = options.catalog ?? HardwareCatalog.builtIn();
  const problems: ClassProblem[] = options.contract ? serviceContractProblems(options.contract) : [];
  if (specs.length === 0 && options.requireClasses !== false) problems.push(NO_CLASSES);
  for (const name of duplicates(specs.map((s) => s.name))) {
    problems.push({ field: 'name', message: `'${name}' is used by more than one class; class names must be unique within a service` });
  }
  // A contract without its slo or requestShape (from a configuration file, or JavaScript) is reported above, field by
  // field; no class is resolved against it, since binding a class's runtime and planning read both.
  const contract = options.contract;
  const contractComplete = contract === undefined || (isObject(contract) && isObject(contract.slo) && isObject(contract.requestShape));
  const classes: CapacityClass[] = [];
  specs.forEach((spec, rank) => {
    const own: ClassProblem[] = [];
    const add = (field: string, message: string) => own.push({ className: spec.name, field, message });
    const rules = new Checker(CLASS_RULES, '', spec.name);
    rules.check('name', spec.name);
    // The class's parts, as a configuration file may leave them out: each missing one is a problem, and the checks that
    // read it are skipped (they would throw a TypeError instead).
    const missing = REQUIRED_PARTS.filter(([part]) => !isObject(spec[part]));
    for (const [part, allowed] of missing) add(part, `is ${spec[part] === null ? 'null' : 'missing'}; allowed: ${allowed}`);
    const complete = missing.length === 0;
    const hardware = isUnresolved(spec.instanceType) ? undefined : catalog.find(spec.instanceType);
    if (isUnresolved(spec.instanceType)) {
      add('instanceType', `'${spec.instanceType}' is a CDK token, which is only resolved at deploy time; allowed: a literal instance type of the ` +
        "hardware catalog (e.g. 'g6e.xlarge', 'ml.g5.xlarge'), because the construct computes with it at synth (accelerator memory, price, " +
        'tensor-parallel units and the platform come from the catalog)');
    } else if (!hardware) {
      add('instanceType', `'${spec.instanceType}' is not in the hardware catalog; register it with HardwareCatalog.with({...})`);
    } else if (complete) {
      checkHardwareFit(spec, hardware, options.platform, add);
    }
    if (isObject(spec.artifact)) checkArtifact(spec, add);
    if (complete) checkFootprintAndRuntime(spec, options.contract, rules, add);
    checkEnvelope(spec, options.contract, rules, add);
    checkPlacement(spec, options, rules);
    rules.check('maxReplicas', spec.maxReplicas);
    const usdPerHour = spec.usdPerHour ?? hardware?.onDemandUsdPerHour;
    if (hardware && usdPerHour === undefined) {
      add('usdPerHour', `no price is known for '${spec.instanceType}'; set usdPerHour (USD per instance-hour) on the class`);
    } else if (usdPerHour !== undefined) {
      rules.check('usdPerHour', usdPerHour);
    }
    own.push(...rules.problems);
    problems.push(...own);
    if (own.length === 0 && contractComplete && hardware && usdPerHour !== undefined) classes.push(resolve(spec, rank, hardware, usdPerHour));
  });
  return { classes, problems };
}

/** The problem of a service without classes (a construct built with `addClass()` reports it once it is complete). */
export const NO_CLASSES: Problem = { field: 'classes', message: 'no capacity classes were declared; at least one is required' };

/** Checks and resolves classes, throwing one ConstructValidationError that lists every problem. */
export function defineCapacityClasses(specs: readonly CapacityClassSpec[], options: CheckOptions = {}): CapacityClass[] {
  const { classes, problems } = checkCapacityClasses(specs, options);
  if (problems.length > 0) throw new ConstructValidationError('defineCapacityClasses', undefined, problems);
  return classes;
}

/**
 * The problems of a capacity plan the serving constructs would deploy: a planned demand that every class at its quota
 * cannot carry (the fleet would be planned for capacity the account cannot get). Both serving constructs call it on
 * their plan; the simulator does not (its shortage scenarios run past the quotas on purpose).
 */
export function capacityPlanProblems(contract: ServiceContract, classes: readonly CapacityClass[], plan: CapacityPlan): Problem[] {
  if (classes.length === 0) return [];
  const c = new Checker(CONTRACT_RULES, 'contract.');
  c.cross('peakRequestsPerSecond@quotas', {
    peakRequestsPerSecond: contract.peakRequestsPerSecond,
    meanOutputTokens: contract.requestShape.meanOutputTokens,
    headroom: plan.headroom,
    plannedTokensPerSecond: plan.plannedTokensPerSecond,
    classes: classes.map((cls) => ({
      name: cls.name, maxReplicas: cls.maxReplicas, tokensPerSecondPerReplica: cls.envelope.tokensPerSecondPerReplica,
    })),
  }, 'peakRequestsPerSecond');
  return c.problems;
}

function resolve(spec: CapacityClassSpec, rank: number, hardware: HardwareProfile, usdPerHour: number): CapacityClass {
  // SageMaker runs one model container per instance: its envelope is measured per instance.
  const replicasPerInstance =
    hardware.platform === 'sagemaker' ? 1 : Math.max(1, Math.floor(hardware.tensorParallelUnits / spec.footprint.tensorParallelDegree));
  return {
    ...spec,
    preferenceRank: rank,
    hardware,
    usdPerHour,
    replicasPerInstance,
    usdPerReplicaHour: usdPerHour / replicasPerInstance,
    placement: { ...spec.placement, allowSensitive: spec.placement?.allowSensitive ?? true },
    memory: { ...DEFAULT_MEMORY_POLICY, ...spec.memory },
  };
}

type Add = (field: string, message: string) => void;

function checkHardwareFit(spec: CapacityClassSpec, hw: HardwareProfile, platform: Platform | undefined, add: Add): void {
  if (platform && hw.platform !== platform) {
    const allowed = platform === 'sagemaker' ? "a SageMaker 'ml.' instance type" : "an EC2 instance type (without the 'ml.' prefix)";
    add('instanceType', `'${spec.instanceType}' is a ${hw.platform} type; this service runs on ${platform} and needs ${allowed}`);
  }
  const target = spec.footprint.acceleratorTarget;
  if (target !== hw.acceleratorTarget) {
    add(
      'footprint.acceleratorTarget',
      `the artifact targets '${target}' but ${spec.instanceType} carries ${hw.acceleratorName} (${hw.acceleratorTarget}); ` +
        `a ${target === 'neuron' ? 'Neuron-compiled artifact runs only on Inferentia/Trainium' : 'CUDA artifact runs only on NVIDIA GPUs'}`,
    );
  }
  const tp = spec.footprint.tensorParallelDegree;
  if (isUnresolved(tp) || !Number.isInteger(tp) || tp < 1) return; // reported by checkFootprintAndRuntime
  const units = hw.tensorParallelUnits;
  const unitName = hw.acceleratorKind === 'neuron' ? 'NeuronCores' : 'GPUs';
  if (tp > units || units % tp !== 0) {
    const divisors = Array.from({ length: units }, (_, i) => i + 1).filter((d) => units % d === 0);
    add(
      'footprint.tensorParallelDegree',
      `${tp} does not divide the ${units} ${unitName} of ${spec.instanceType}; allowed: ${divisors.join(', ')}`,
    );
    return;
  }
  // The fit computes with every memory input: only with literals that passed their own rules (a token's encoding would
  // be printed as a usable size; the token is reported by its own rule).
  const memory = spec.memory ?? {};
  if (![spec.runtime.maxConcurrentSequences, spec.footprint.weightsGiB, spec.footprint.kvCacheBytesPerToken].every(isFiniteLiteral)) return;
  const memoryInputs: Array<[keyof typeof CLASS_RULES & `memory.${string}`, number | undefined]> = [
    ['memory.utilizationCap', memory.utilizationCap], ['memory.marginGiB', memory.marginGiB],
  ];
  if (memoryInputs.some(([rule, v]) => v !== undefined && numberProblem(CLASS_RULES[rule], v) !== undefined)) return;
  const m = memoryBreakdown(spec, hw);
  if (m.shortfallGiB > 0) {
    const gib = (v: number) => `${v.toFixed(1)} GiB`;
    const fix =
      m.maxConcurrentSequencesThatFit > 0
        ? `lower runtime.maxConcurrentSequences to at most ${m.maxConcurrentSequencesThatFit}, or use a larger instance`
        : 'the weights alone do not fit; use a larger instance, a higher tensor-parallel degree or a smaller quantization';
    add(
      'memory',
      `${spec.instanceType} cannot hold this model: needs ${gib(m.requiredGiB)} (weights ${gib(m.weightsGiB)} + workspace ${gib(m.workspaceGiB)} + ` +
        `KV cache ${gib(m.kvCacheGiB)} for ${spec.runtime.maxConcurrentSequences} x ${spec.footprint.maxSequenceTokens} tokens + ` +
        `margin ${gib(m.marginGiB)}) but ${m.tensorParallelDegree} x ${gib(m.memoryPerUnitGiB)} x ${m.utilizationCap} = ${gib(m.usableGiB)} ` +
        `is usable; short by ${gib(m.shortfallGiB)}. Fix: ${fix}`,
    );
  }
}

function checkArtifact(spec: CapacityClassSpec, add: Add): void {
  const { image, modelData } = spec.artifact;
  if (isUnresolved(image) && !isDigestPinnedImage(image)) {
    add(
      'artifact.image',
      `'${image}' holds a CDK token and does not end in a literal @sha256:<64 lower-case hex>, so it may resolve to a tag (a mutable tag can ` +
        `change under a running fleet); allowed: ${DIGEST_PINNED_FORM}`,
    );
  } else if (!isDigestPinnedImage(image)) {
    add(
      'artifact.image',
      `'${image}' is not pinned by digest; use <registry>/<repository>@sha256:<64 hex characters> (a mutable tag can change under a running fleet)`,
    );
  }
  if (!modelData) return;
  if (!isUnresolved(modelData.uri) && !parseS3Uri(modelData.uri)) {
    add('artifact.modelData.uri', `'${modelData.uri}' is not an S3 URI; use s3://<bucket>/<key>`);
  }
  // A token digest is carried: on EKS the init container verifies the fetched object against the deployed value (and
  // fails closed on a mismatch); SageMaker, which cannot verify what it downloads, refuses one (sageMakerModelDataProblems).
  if (!isUnresolved(modelData.sha256) && !SHA256.test(modelData.sha256)) {
    add('artifact.modelData.sha256', `'${modelData.sha256}' is not a SHA-256 digest; use 64 lower-case hex characters`);
  }
  if (modelData.versionId !== undefined && !isUnresolved(modelData.versionId) && modelData.versionId.trim() === '') {
    add('artifact.modelData.versionId', 'is empty; give the S3 object version or omit it');
  }
}

function checkFootprintAndRuntime(
  spec: CapacityClassSpec,
  contract: ServiceContract | undefined,
  rules: Checker<typeof CLASS_RULES>,
  add: Add,
): void {
  const f = spec.footprint ?? ({} as CapacityClassSpec['footprint']);
  rules.check('footprint.weightsGiB', f.weightsGiB);
  rules.check('footprint.workspaceGiB', f.workspaceGiB);
  rules.check('footprint.kvCacheBytesPerToken', f.kvCacheBytesPerToken);
  rules.check('footprint.maxSequenceTokens', f.maxSequenceTokens);
  rules.check('footprint.tensorParallelDegree', f.tensorParallelDegree);
  if (f.acceleratorTarget !== 'cuda' && f.acceleratorTarget !== 'neuron') {
    add('footprint.acceleratorTarget', `is '${f.acceleratorTarget}'; allowed: 'cuda', 'neuron'`);
  }
  const r = spec.runtime ?? ({} as CapacityClassSpec['runtime']);
  rules.check('runtime.maxConcurrentSequences', r.maxConcurrentSequences);
  rules.optional('runtime.maxBatchTokens', r.maxBatchTokens);
  const delayOk = rules.check('runtime.maxQueueDelayMs', r.maxQueueDelayMs);
  const deadline = contract?.slo?.deadlineMs;
  if (delayOk && isFiniteLiteral(deadline)) {
    rules.cross('runtime.maxQueueDelayMs<deadline', { maxQueueDelayMs: r.maxQueueDelayMs, deadlineMs: deadline }, 'runtime.maxQueueDelayMs');
  }
  rules.cross('runtime.queueBound', r.queueBound);
  rules.cross('runtime.modelPath', r.modelPath);
  const m = spec.memory ?? {};
  rules.optional('memory.utilizationCap', m.utilizationCap);
  rules.optional('memory.marginGiB', m.marginGiB);
}

/** Zones are Karpenter requirements on EKS; SageMaker has no zone setting, so they would be dropped without a word. */
function checkPlacement(spec: CapacityClassSpec, options: CheckOptions, rules: Checker<typeof CLASS_RULES>): void {
  const zones = spec.placement?.zones;
  if (zones === undefined) return;
  if (options.platform === 'sagemaker') {
    rules.cross('placement.zones@sagemaker', zones, 'placement.zones');
    return;
  }
  rules.cross('placement.zones[]', zones, 'placement.zones');
  zones.forEach((zone, i) => {
    const path = `placement.zones[${i}]`;
    if (rules.check('placement.zones', zone, path) && options.region !== undefined) rules.cross('placement.zones@region', { zone, region: options.region }, path);
  });
}

function checkEnvelope(spec: CapacityClassSpec, contract: ServiceContract | undefined, rules: Checker<typeof CLASS_RULES>, add: Add): void {
  const e = spec.envelope;
  if (!e) {
    add('envelope', 'is missing; a class without a measured performance envelope cannot take routed traffic (measure one with a load test at the SLO)');
    return;
  }
  const tpsOk = rules.check('envelope.tokensPerSecondPerReplica', e.tokensPerSecondPerReplica);
  const concurrencyOk = rules.check('envelope.safeConcurrency', e.safeConcurrency);
  const ttftOk = rules.check('envelope.ttftP95Ms', e.ttftP95Ms);
  const itlOk = rules.optional('envelope.itlP95Ms', e.itlP95Ms);
  rules.optional('envelope.replicaReadyTimeP95Seconds', e.replicaReadyTimeP95Seconds);
  if (!isCalendarDate(e.measuredOn)) add('envelope.measuredOn', `'${e.measuredOn}' is not a calendar date; use YYYY-MM-DD (e.g. '2026-10-01')`);
  if (!e.workload || e.workload.trim() === '') add('envelope.workload', 'is empty; say which workload the envelope was measured with');

  if (tpsOk && concurrencyOk && itlOk && e.itlP95Ms !== undefined) {
    rules.cross('envelope.plausible', { tokensPerSecondPerReplica: e.tokensPerSecondPerReplica, safeConcurrency: e.safeConcurrency, itlP95Ms: e.itlP95Ms }, 'envelope');
  }
  const batch = spec.runtime?.maxConcurrentSequences;
  const batchOk = Number.isInteger(batch) && isFiniteLiteral(batch) && batch >= 1;
  if (concurrencyOk && batchOk) {
    rules.cross('runtime.maxConcurrentSequences>=safeConcurrency', { maxConcurrentSequences: batch, safeConcurrency: e.safeConcurrency }, 'runtime.maxConcurrentSequences');
  }
  if (!contract) return;
  const out = contract.requestShape?.meanOutputTokens;
  const deadline = contract.slo?.deadlineMs;
  if (ttftOk && itlOk && isFiniteLiteral(out) && out > 0) {
    // The service time both platforms plan with: p95 TTFT + mean output tokens x p95 ITL on an idle replica.
    const serviceTimeMs = meanServiceTimeMs(e, out);
    if (isFiniteLiteral(deadline)) {
      rules.cross('envelope.serviceTime<deadline', { serviceTimeMs, ttftP95Ms: e.ttftP95Ms, meanOutputTokens: out, itlP95Ms: e.itlP95Ms ?? 0, deadlineMs: deadline }, 'envelope');
    }
    if (tpsOk && concurrencyOk) {
      rules.cross('envelope.plausibleLow', { tokensPerSecondPerReplica: e.tokensPerSecondPerReplica, safeConcurrency: e.safeConcurrency, meanOutputTokens: out, serviceTimeMs }, 'envelope');
    }
  }
  if (ttftOk && isFiniteLiteral(contract.slo?.ttftP95Ms)) {
    rules.cross('envelope.latency<=slo', { measuredMs: e.ttftP95Ms, sloMs: contract.slo.ttftP95Ms, what: 'time to first token' }, 'envelope.ttftP95Ms');
  }
  if (itlOk && isFiniteLiteral(contract.slo?.itlP95Ms)) {
    // Without it the class's service time reads every answer as its first token (review R260).
    rules.cross('envelope.itlP95Ms@slo', { itlP95Ms: e.itlP95Ms, sloItlP95Ms: contract.slo.itlP95Ms }, 'envelope.itlP95Ms');
  }
  if (itlOk && isFiniteLiteral(e.itlP95Ms) && isFiniteLiteral(contract.slo?.itlP95Ms)) {
    rules.cross('envelope.latency<=slo', { measuredMs: e.itlP95Ms, sloMs: contract.slo.itlP95Ms, what: 'inter-token latency' }, 'envelope.itlP95Ms');
  }
}
