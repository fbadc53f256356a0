import { type CapacityClass, type CapacityClassSpec, DEFAULT_MEMORY_POLICY } from './capacity-class';
import { type ServiceContract, serviceContractProblems } from './contract';
import { HardwareCatalog } from '../hardware/catalog';
import { type HardwareProfile, type Platform } from '../hardware/profile';
import { duplicates } from '../validation/names';
import { memoryBreakdown } from './sizing';
import { isDigestPinnedImage } from '../trust/image-reference';
import { meanServiceTimeMs } from '../runtime/admission';
import { isUnresolved } from '../validation/tokens';
import { Checker, isFiniteLiteral } from '../validation/checker';
import { CLASS_RULES } from '../validation/rules';

/** One thing wrong with a declared class. */
export interface ClassProblem {
  /** The class, or undefined for problems of the set (e.g. duplicate names). */
  readonly className?: string;
  /** Dotted path of the offending field, e.g. `runtime.maxConcurrentSequences`. */
  readonly field: string;
  /** Says what the value is and what is allowed. */
  readonly message: string;
}

export interface CheckOptions {
  /** @default HardwareCatalog.builtIn() */
  readonly catalog?: HardwareCatalog;
  /** When given, envelopes are checked against its SLO and queue delays against its deadline. */
  readonly contract?: ServiceContract;
  /** When given, every instance type must be offered there (`ml.` types on SageMaker). */
  readonly platform?: Platform;
}

/** Thrown with every problem of a set of classes at once. */
export class CapacityClassError extends Error {
  constructor(
    public readonly problems: readonly ClassProblem[],
    context = 'Invalid capacity classes',
  ) {
    super(`${context} (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n${problems.map(formatProblem).join('\n')}`);
    this.name = 'CapacityClassError';
  }
}

export function formatProblem(p: ClassProblem): string {
  return `  - ${p.className === undefined ? '' : `class '${p.className}' `}${p.field}: ${p.message}`;
}

const SHA256 = /^[0-9a-f]{64}$/;
const S3_URI = /^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]\/.+$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

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
  if (specs.length === 0) problems.push({ field: 'classes', message: 'no capacity classes were declared; at least one is required' });
  for (const name of duplicates(specs.map((s) => s.name))) {
    problems.push({ field: 'name', message: `'${name}' is used by more than one class; class names must be unique within a service` });
  }
  const classes: CapacityClass[] = [];
  specs.forEach((spec, rank) => {
    const own: ClassProblem[] = [];
    const add = (field: string, message: string) => own.push({ className: spec.name, field, message });
    const rules = new Checker(CLASS_RULES);
    const hardware = catalog.find(spec.instanceType);
    rules.check('name', spec.name);
    if (!hardware) {
      add('instanceType', `'${spec.instanceType}' is not in the hardware catalog; register it with HardwareCatalog.with({...})`);
    } else {
      checkHardwareFit(spec, hardware, options.platform, add);
    }
    checkArtifact(spec, add);
    checkFootprintAndRuntime(spec, options.contract, rules, add);
    checkEnvelope(spec, options.contract, rules, add);
    checkPlacement(spec, options.platform, rules);
    rules.check('maxReplicas', spec.maxReplicas);
    const usdPerHour = spec.usdPerHour ?? hardware?.onDemandUsdPerHour;
    if (hardware && usdPerHour === undefined) {
      add('usdPerHour', `no price is known for '${spec.instanceType}'; set usdPerHour (USD per instance-hour) on the class`);
    } else if (usdPerHour !== undefined) {
      rules.check('usdPerHour', usdPerHour);
    }
    for (const p of rules.problems) add(p.field, p.message);
    problems.push(...own);
    if (own.length === 0 && hardware && usdPerHour !== undefined) classes.push(resolve(spec, rank, hardware, usdPerHour));
  });
  return { classes, problems };
}

/** Checks and resolves classes, throwing one CapacityClassError that lists every problem. */
export function defineCapacityClasses(specs: readonly CapacityClassSpec[], options: CheckOptions = {}): CapacityClass[] {
  const { classes, problems } = checkCapacityClasses(specs, options);
  if (problems.length > 0) throw new CapacityClassError(problems);
  return classes;
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
  if (![spec.runtime.maxConcurrentSequences, spec.footprint.weightsGiB, spec.footprint.kvCacheBytesPerToken].every(isFiniteLiteral)) return;
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
  if (!isUnresolved(image) && !isDigestPinnedImage(image)) {
    add(
      'artifact.image',
      `'${image}' is not pinned by digest; use <registry>/<repository>@sha256:<64 hex characters> (a mutable tag can change under a running fleet)`,
    );
  }
  if (!modelData) return;
  if (!isUnresolved(modelData.uri) && !S3_URI.test(modelData.uri)) {
    add('artifact.modelData.uri', `'${modelData.uri}' is not an S3 URI; use s3://<bucket>/<key>`);
  }
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
  if (delayOk && isFiniteLiteral(deadline) && r.maxQueueDelayMs >= deadline) {
    rules.fail(
      'runtime.maxQueueDelayMs<deadline',
      `is ${r.maxQueueDelayMs} ms, not below the service deadline of ${deadline} ms; a request that waits that long cannot be answered in time`,
      'runtime.maxQueueDelayMs',
    );
  }
  const m = spec.memory ?? {};
  rules.optional('memory.utilizationCap', m.utilizationCap);
  rules.optional('memory.marginGiB', m.marginGiB);
}

/** Zones are Karpenter requirements on EKS; SageMaker has no zone setting, so they would be dropped without a word. */
function checkPlacement(spec: CapacityClassSpec, platform: Platform | undefined, rules: Checker<typeof CLASS_RULES>): void {
  const zones = spec.placement?.zones;
  if (zones === undefined) return;
  if (platform === 'sagemaker') {
    rules.fail('placement.zones@sagemaker', `is [${zones.join(', ')}]`, 'placement.zones');
    return;
  }
  zones.forEach((zone, i) => rules.check('placement.zones', zone, `placement.zones[${i}]`));
  for (const zone of duplicates(zones)) rules.fail('placement.zones', `'${zone}' is listed twice`, 'placement.zones');
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
  if (!ISO_DATE.test(e.measuredOn ?? '')) add('envelope.measuredOn', `'${e.measuredOn}' is not a date; use YYYY-MM-DD`);
  if (!e.workload || e.workload.trim() === '') add('envelope.workload', 'is empty; say which workload the envelope was measured with');

  if (tpsOk && concurrencyOk && itlOk && e.itlP95Ms !== undefined) {
    // With C sequences decoding at once, each gets X/C tokens/s: a mean inter-token latency of 1000*C/X ms.
    // Batched decoding stalls behind prefills, so p95 can sit several times above the mean; a mean more than 8x
    // faster than the p95 is no longer a tail: the envelope counts prompt tokens or understates its concurrency.
    const impliedMeanItlMs = (1000 * e.safeConcurrency) / e.tokensPerSecondPerReplica;
    if (impliedMeanItlMs < e.itlP95Ms / 8) {
      rules.fail(
        'envelope.plausible',
        `${e.tokensPerSecondPerReplica} tokens/s at a safe concurrency of ${e.safeConcurrency} implies a mean inter-token latency of ` +
          `${impliedMeanItlMs.toFixed(1)} ms, implausibly far below the measured p95 of ${e.itlP95Ms} ms; ` +
          'tokensPerSecondPerReplica must count generated tokens only, at that concurrency',
        'envelope',
      );
    }
  }
  const batch = spec.runtime?.maxConcurrentSequences;
  const batchOk = Number.isInteger(batch) && isFiniteLiteral(batch) && batch >= 1;
  if (concurrencyOk && batchOk && e.safeConcurrency > batch) {
    rules.fail(
      'runtime.maxConcurrentSequences>=safeConcurrency',
      `${batch} is below the envelope's safe concurrency of ${e.safeConcurrency}`,
      'runtime.maxConcurrentSequences',
    );
  }
  if (!contract) return;
  checkServiceTime(e, contract, ttftOk && itlOk, rules);
  if (ttftOk && isFiniteLiteral(contract.slo?.ttftP95Ms) && e.ttftP95Ms > contract.slo.ttftP95Ms) {
    rules.fail('envelope.latency<=slo', `${e.ttftP95Ms} ms exceeds the SLO's p95 time to first token of ${contract.slo.ttftP95Ms} ms`, 'envelope.ttftP95Ms');
  }
  if (itlOk && isFiniteLiteral(e.itlP95Ms) && isFiniteLiteral(contract.slo?.itlP95Ms) && e.itlP95Ms > contract.slo.itlP95Ms) {
    rules.fail('envelope.latency<=slo', `${e.itlP95Ms} ms exceeds the SLO's p95 inter-token latency of ${contract.slo.itlP95Ms} ms`, 'envelope.itlP95Ms');
  }
}

/**
 * The deadline rule both platforms share: a mean request needs p95 TTFT + mean output tokens x p95 ITL on an idle
 * replica; if that is not below the deadline, the class can never answer in time (queueing only adds to it).
 */
function checkServiceTime(e: CapacityClassSpec['envelope'], contract: ServiceContract, envelopeOk: boolean, rules: Checker<typeof CLASS_RULES>): void {
  const out = contract.requestShape?.meanOutputTokens;
  const deadline = contract.slo?.deadlineMs;
  if (!envelopeOk || !isFiniteLiteral(out) || !isFiniteLiteral(deadline) || !isFiniteLiteral(e.ttftP95Ms)) return;
  const itl = e.itlP95Ms ?? 0;
  const serviceTimeMs = meanServiceTimeMs(e, out);
  if (serviceTimeMs < deadline) return;
  rules.fail(
    'envelope.serviceTime<deadline',
    `a mean request needs ${serviceTimeMs} ms on this class (p95 TTFT ${e.ttftP95Ms} ms + ${out} tokens x p95 ITL ${itl} ms), ` +
      `not below the service deadline of ${deadline} ms; it cannot answer in time even with an empty queue`,
    'envelope',
  );
}
