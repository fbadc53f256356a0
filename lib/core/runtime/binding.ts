/**
 * The runtime contract: one function that turns a checked class into what its model server reads (command-line
 * arguments and container environment) on SageMaker or EKS, so that the settings the memory and admission checks
 * approved are the settings the server runs with. Pure (no aws-cdk-lib): the constructs, the tests and the simulator
 * call it alike.
 */
import { type CapacityClass } from '../service/capacity-class';
import { type ClassProblem } from '../service/checks';
import { type ServiceContract } from '../service/contract';
import { isUnresolved } from '../validation/tokens';
import { type AdmissionLimits, admissionLimits } from './admission';
import { compareVersions, ENGINE_FACTS, ENGINES, type EngineName, isEngineName, parseVersion, type RejectionStatus } from './engines';

/** Prefix of the engine-neutral variables this library sets on every class. */
export const ENV_PREFIX = 'CAI_';

/** SageMaker hosting sends requests to port 8080 of the container and mounts model data at /opt/ml/model. */
export const SAGEMAKER_PORT = 8080;
export const SAGEMAKER_MODEL_PATH = '/opt/ml/model';

export type ServingPlatform = 'sagemaker' | 'eks';

/** Where the class runs. */
export interface RuntimeTarget {
  readonly platform: ServingPlatform;
  /** Container port the server must listen on (8080 on SageMaker). */
  readonly port: number;
  /** Where the platform puts the class's model data inside the container, when it has model data. */
  readonly modelDataPath?: string;
}

/** What one class's model server is started with, and what was wrong with it. */
export interface RuntimeBinding {
  readonly engine: string;
  /** Container arguments (EKS; SageMaker starts the image's own entrypoint without arguments). */
  readonly args: readonly string[];
  /** The whole container environment: the user's variables, the engine's own and the engine-neutral CAI_* set. */
  readonly env: Readonly<Record<string, string>>;
  readonly port: number;
  /** Model path the server loads, when known. */
  readonly modelPath?: string;
  /** Default liveness and readiness paths of the engine's HTTP API. */
  readonly healthPath: string;
  readonly readyPath: string;
  readonly limits: AdmissionLimits;
  /** Whether the server itself rejects requests past limits.maxConcurrentRequests. */
  readonly boundedQueue: boolean;
  /** HTTP status of those rejections. */
  readonly rejectionStatus?: RejectionStatus;
  readonly problems: readonly ClassProblem[];
  /** Consequences the user accepted (runtime.queueBound 'best-effort'); the constructs emit them as warnings. */
  readonly warnings: readonly string[];
}

type Value = string | number | undefined;

/** One derived setting in the engine's own name: a `--flag` (vLLM; SM_VLLM_* on SageMaker) or a variable. */
interface Setting {
  readonly name: string;
  readonly value: Value;
}

/**
 * Binds a class to its engine on a platform. Every value the checks looked at goes into the engine's own flag or
 * variable; the admission limit goes into the engine's own bounded queue when the declared version has one.
 */
export function bindRuntime(cls: CapacityClass, contract: ServiceContract, target: RuntimeTarget): RuntimeBinding {
  const problems: ClassProblem[] = [];
  const warnings: string[] = [];
  const problem = (field: string, message: string) => problems.push({ className: cls.name, field, message });
  const r = cls.runtime;
  const limits = admissionLimits(cls, contract);
  const known = isEngineName(r.engine);
  if (!known) {
    problem(
      'runtime.engine',
      `'${r.engine}' is not an engine the library can bind; allowed: ${ENGINES.join(', ')} ` +
        "('custom' gets only the engine-neutral CAI_* variables, which the image must read itself)",
    );
  }
  const engine: EngineName = known ? (r.engine as EngineName) : 'custom';
  const facts = ENGINE_FACTS[engine];
  checkVersion(cls, engine, problem);
  const boundedQueue = known && hasBoundedQueue(engine, r.engineVersion);
  if (known && !boundedQueue) queueBoundProblem(cls, engine, limits, problem, warnings);

  const modelPath = resolveModelPath(cls, target, engine, problem);
  const settings = engineSettings(cls, engine, target, limits, boundedQueue, modelPath);
  const rendered = render(engine, target, settings, modelPath);
  const user = userArguments(cls, engine, target, rendered, problem);

  const neutral = stringify({
    [`${ENV_PREFIX}SERVICE`]: contract.name,
    [`${ENV_PREFIX}CLASS`]: cls.name,
    [`${ENV_PREFIX}ENGINE`]: r.engine,
    [`${ENV_PREFIX}ENGINE_VERSION`]: r.engineVersion,
    [`${ENV_PREFIX}PORT`]: target.port,
    [`${ENV_PREFIX}MODEL_PATH`]: modelPath,
    [`${ENV_PREFIX}MAX_CONCURRENT_SEQUENCES`]: r.maxConcurrentSequences,
    [`${ENV_PREFIX}MAX_BATCH_TOKENS`]: r.maxBatchTokens,
    [`${ENV_PREFIX}TENSOR_PARALLEL_DEGREE`]: cls.footprint.tensorParallelDegree,
    [`${ENV_PREFIX}MAX_SEQUENCE_TOKENS`]: cls.footprint.maxSequenceTokens,
    [`${ENV_PREFIX}MEMORY_UTILIZATION_CAP`]: cls.memory.utilizationCap,
    [`${ENV_PREFIX}CONCURRENCY_LIMIT`]: limits.concurrencyLimit,
    [`${ENV_PREFIX}QUEUE_SLOTS`]: limits.queueSlots,
    [`${ENV_PREFIX}MAX_CONCURRENT_REQUESTS`]: limits.maxConcurrentRequests,
    [`${ENV_PREFIX}QUEUE_BUDGET_MS`]: limits.queueBudgetMs,
    [`${ENV_PREFIX}DEADLINE_MS`]: contract.slo.deadlineMs,
    [`${ENV_PREFIX}MODEL_REVISION`]: cls.footprint.revision,
    [`${ENV_PREFIX}MODEL_DATA_URI`]: cls.artifact.modelData?.uri,
    [`${ENV_PREFIX}MODEL_DATA_SHA256`]: cls.artifact.modelData?.sha256,
    [`${ENV_PREFIX}MODEL_DATA_VERSION_ID`]: cls.artifact.modelData?.versionId,
    [`${ENV_PREFIX}ENGINE_ARGS`]: user.engineArgs,
  });
  const derived = { ...neutral, ...rendered.env };
  for (const key of Object.keys(r.env ?? {}).filter((k) => k in derived || k in user.env || k.startsWith(ENV_PREFIX))) {
    problem(
      `runtime.env.${key}`,
      "is set by the library (derived from the class's runtime, footprint and envelope so that it matches the memory and " +
        `admission checks); change those settings instead, and keep the ${ENV_PREFIX} prefix free`,
    );
  }
  return {
    engine: r.engine,
    args: [...rendered.args, ...user.args],
    env: { ...r.env, ...user.env, ...derived },
    port: target.port,
    modelPath,
    healthPath: facts.healthPath,
    readyPath: facts.readyPath,
    limits,
    boundedQueue,
    rejectionStatus: boundedQueue ? facts.rejectionStatus : undefined,
    problems,
    warnings,
  };
}

function checkVersion(cls: CapacityClass, engine: EngineName, problem: (field: string, message: string) => void): void {
  const facts = ENGINE_FACTS[engine];
  const version = cls.runtime.engineVersion;
  if (version === undefined) {
    if (facts.versionRequired) {
      problem(
        'runtime.engineVersion',
        `is not set; the ${engine} flags the library renders depend on the release (its bounded queue exists from ` +
          `${facts.boundedQueueSince}); allowed: the release of the class's image, e.g. '${facts.boundedQueueSince}'`,
      );
    }
    return;
  }
  if (isUnresolved(version) || !parseVersion(version)) {
    problem('runtime.engineVersion', `'${version}' is not a release number; allowed: 'X.Y.Z' (e.g. '${facts.boundedQueueSince ?? '1.0.0'}')`);
    return;
  }
  if (facts.minimumVersion && compareVersions(version, facts.minimumVersion) < 0) {
    problem('runtime.engineVersion', `${engine} ${version} is older than ${facts.minimumVersion}, the oldest release whose flag names the library renders; allowed: ${facts.minimumVersion} or later`);
  }
}

function hasBoundedQueue(engine: EngineName, version: string | undefined): boolean {
  const since = ENGINE_FACTS[engine].boundedQueueSince;
  if (since === undefined) return false;
  // Engines whose version is optional: an undeclared version is taken to be a supported one (checked against the minimum when declared).
  if (version === undefined) return !ENGINE_FACTS[engine].versionRequired;
  return parseVersion(version) !== undefined && compareVersions(version, since) >= 0;
}

function queueBoundProblem(
  cls: CapacityClass,
  engine: EngineName,
  limits: AdmissionLimits,
  problem: (field: string, message: string) => void,
  warnings: string[],
): void {
  const facts = ENGINE_FACTS[engine];
  const what =
    engine === 'triton'
      ? "Triton's bounded queue is max_queue_size in each model's config.pbtxt, which no command-line flag sets"
      : engine === 'custom'
        ? `a custom engine's queue is whatever the image enforces (it gets ${ENV_PREFIX}MAX_CONCURRENT_REQUESTS)`
        : `${[engine, cls.runtime.engineVersion].filter(Boolean).join(' ')} has no bounded queue (it exists from ${facts.boundedQueueSince})`;
  const consequence =
    `requests past the admission limit of ${limits.maxConcurrentRequests} in flight per replica ` +
    `(${limits.concurrencyLimit} serving + ${limits.queueSlots} queued) are not rejected by the server but queue past the deadline`;
  if ((cls.runtime.queueBound ?? 'required') === 'best-effort') {
    warnings.push(`class '${cls.name}': ${what}; ${consequence}.`);
    return;
  }
  problem(
    'runtime.queueBound',
    `is 'required' but ${what}; ${consequence}. Allowed: ` +
      (facts.boundedQueueSince ? `runtime.engineVersion ${facts.boundedQueueSince} or later, or ` : '') +
      "runtime.queueBound 'best-effort' to accept that (a synth warning)",
  );
}

function resolveModelPath(
  cls: CapacityClass,
  target: RuntimeTarget,
  engine: EngineName,
  problem: (field: string, message: string) => void,
): string | undefined {
  const own = cls.runtime.modelPath;
  if (cls.artifact.modelData && own !== undefined) {
    problem('runtime.modelPath', `is '${own}' but the class also has artifact.modelData; the server loads the model data, so give one of them`);
  }
  if (cls.artifact.modelData) return target.platform === 'sagemaker' ? SAGEMAKER_MODEL_PATH : target.modelDataPath;
  if (own !== undefined) return own;
  // SageMaker containers fall back to /opt/ml/model or HF_MODEL_ID; a pod has no such convention.
  if (target.platform === 'eks' && engine !== 'custom') {
    problem(
      'runtime.modelPath',
      `is not set and the class has no artifact.modelData, so ${engine} on EKS has no model to load; allowed: ` +
        'artifact.modelData (fetched and verified into the pod) or runtime.modelPath (weights inside the image)',
    );
  }
  return undefined;
}

/** The class's settings in the engine's own names, for the platform. Values left undefined are the engine's defaults. */
function engineSettings(
  cls: CapacityClass,
  engine: EngineName,
  target: RuntimeTarget,
  limits: AdmissionLimits,
  boundedQueue: boolean,
  modelPath: string | undefined,
): Setting[] {
  const r = cls.runtime;
  const f = cls.footprint;
  const sm = target.platform === 'sagemaker';
  const queue = boundedQueue ? limits.maxConcurrentRequests : undefined;
  switch (engine) {
    case 'vllm':
      // vLLM CLI flags (vllm/engine/arg_utils.py). On SageMaker the DLC turns SM_VLLM_<FLAG> into --<flag>.
      return [
        { name: 'port', value: sm ? undefined : target.port }, // the SageMaker DLC listens on 8080 itself
        { name: 'max-num-seqs', value: r.maxConcurrentSequences },
        { name: 'max-num-batched-tokens', value: r.maxBatchTokens },
        { name: 'tensor-parallel-size', value: f.tensorParallelDegree },
        { name: 'max-model-len', value: f.maxSequenceTokens },
        { name: 'gpu-memory-utilization', value: cls.memory.utilizationCap },
        // In-flight requests (waiting + running) of the whole server: one replica is one server.
        { name: 'max-num-queued-reqs', value: queue },
      ];
    case 'tgi':
      // text-generation-launcher fields, each `#[clap(long, env)]`: the variable is the field name in upper case.
      return [
        { name: sm ? 'HF_MODEL_ID' : 'MODEL_ID', value: modelPath },
        { name: 'PORT', value: sm ? undefined : target.port }, // sagemaker-entrypoint.sh passes --port 8080
        // The SageMaker entrypoint maps SM_NUM_GPUS to NUM_SHARD.
        { name: sm ? 'SM_NUM_GPUS' : 'NUM_SHARD', value: f.tensorParallelDegree },
        { name: 'MAX_TOTAL_TOKENS', value: f.maxSequenceTokens },
        { name: 'MAX_BATCH_PREFILL_TOKENS', value: r.maxBatchTokens },
        // The batch's token budget is the KV cache the memory check sized: sequences x longest sequence.
        { name: 'MAX_BATCH_TOTAL_TOKENS', value: r.maxConcurrentSequences * f.maxSequenceTokens },
        { name: 'CUDA_MEMORY_FRACTION', value: cls.hardware.acceleratorTarget === 'neuron' ? undefined : cls.memory.utilizationCap },
        { name: 'MAX_CONCURRENT_REQUESTS', value: queue },
      ];
    case 'djl-lmi': {
      const neuron = cls.hardware.acceleratorTarget === 'neuron';
      // OPTION_<NAME> overrides option.<name>; SERVING_<KEY> overrides the server's config.properties key.
      return [
        { name: 'OPTION_MODEL_ID', value: modelPath },
        { name: 'SERVING_INFERENCE_ADDRESS', value: sm ? undefined : `http://0.0.0.0:${target.port}` },
        { name: 'OPTION_MAX_ROLLING_BATCH_SIZE', value: r.maxConcurrentSequences },
        { name: 'OPTION_TENSOR_PARALLEL_DEGREE', value: f.tensorParallelDegree },
        { name: neuron ? 'OPTION_N_POSITIONS' : 'OPTION_MAX_MODEL_LEN', value: f.maxSequenceTokens },
        { name: 'OPTION_GPU_MEMORY_UTILIZATION', value: neuron ? undefined : cls.memory.utilizationCap },
        // DJL's job queue counts the requests of the rolling batch too (job_queue_size must be at least
        // max_rolling_batch_size), so it takes the whole in-flight limit. A queue of 0 would reject everything.
        { name: 'SERVING_JOB_QUEUE_SIZE', value: queue === undefined ? undefined : Math.max(queue, r.maxConcurrentSequences) },
      ];
    }
    case 'triton':
      return sm ? [] : [
        { name: 'model-repository', value: modelPath },
        { name: 'http-port', value: target.port },
      ];
    case 'custom':
      return [];
  }
}

interface Rendered {
  readonly args: string[];
  readonly env: Record<string, string>;
  /** Flags the library sets (without dashes), to reject user arguments that would override them. */
  readonly flags: ReadonlySet<string>;
}

/** vLLM flag as the SageMaker DLC variable: `max-num-seqs` is `SM_VLLM_MAX_NUM_SEQS`. */
export function sageMakerVllmVariable(flag: string): string {
  return `SM_VLLM_${flag.toUpperCase().replace(/-/g, '_')}`;
}

/** A launcher variable as its flag: `MAX_CONCURRENT_REQUESTS` is `max-concurrent-requests`. */
function flagOfVariable(name: string): string {
  return name.toLowerCase().replace(/_/g, '-');
}

function render(engine: EngineName, target: RuntimeTarget, settings: readonly Setting[], modelPath: string | undefined): Rendered {
  const set = settings.filter((s): s is Setting & { value: string | number } => s.value !== undefined && !(typeof s.value === 'number' && isUnresolved(s.value)));
  const sm = target.platform === 'sagemaker';
  if (engine === 'vllm') {
    if (sm) {
      return {
        args: [],
        env: stringify({ ...Object.fromEntries(set.map((s) => [sageMakerVllmVariable(s.name), s.value])), [sageMakerVllmVariable('model')]: modelPath }),
        flags: new Set(set.map((s) => s.name)),
      };
    }
    // The upstream image's entrypoint is `vllm serve`: the model is its positional argument.
    return { args: [...(modelPath ? [modelPath] : []), ...set.flatMap((s) => [`--${s.name}`, String(s.value)])], env: {}, flags: new Set(set.map((s) => s.name)) };
  }
  if (engine === 'triton') {
    // NGC images start their entrypoint script with the container's arguments as the command.
    return sm ? { args: [], env: {}, flags: new Set() } : { args: ['tritonserver', ...set.map((s) => `--${s.name}=${s.value}`)], env: {}, flags: new Set(set.map((s) => s.name)) };
  }
  const env = stringify(Object.fromEntries(set.map((s) => [s.name, s.value])));
  return { args: [], env, flags: new Set(Object.keys(env).map(flagOfVariable)) };
}

/** The class's own extra arguments, checked against what the library sets. */
function userArguments(
  cls: CapacityClass,
  engine: EngineName,
  target: RuntimeTarget,
  rendered: Rendered,
  problem: (field: string, message: string) => void,
): { args: string[]; env: Record<string, string>; engineArgs?: string } {
  const args = cls.runtime.args ?? [];
  if (args.length === 0) return { args: [], env: {} };
  const parsed = parseFlags(args, (i, arg) =>
    problem(`runtime.args[${i}]`, `'${arg}' is not a flag; give each as --name, --name=value or --name value`),
  );
  for (const flag of parsed.filter((p) => rendered.flags.has(p.flag))) {
    problem('runtime.args', `sets --${flag.flag}, which the library derives from the class's runtime, footprint and envelope settings; change those settings instead`);
  }
  if (target.platform === 'sagemaker') {
    // SageMaker starts the image's entrypoint without arguments: the vLLM DLC reads SM_VLLM_* variables, other
    // images get the arguments verbatim in CAI_ENGINE_ARGS for an entrypoint that passes them on.
    if (engine === 'vllm') return { args: [], env: Object.fromEntries(parsed.map((p) => [sageMakerVllmVariable(p.flag), p.value ?? 'true'])) };
    return { args: [], env: {}, engineArgs: args.join(' ') };
  }
  return { args: [...args], env: {} };
}

/** `--flag value`, `--flag=value` and bare `--flag` arguments. */
function parseFlags(args: readonly string[], bad: (index: number, arg: string) => void): { flag: string; value?: string }[] {
  const out: { flag: string; value?: string }[] = [];
  for (let i = 0; i < args.length; i++) {
    const match = /^--([a-z0-9][a-z0-9-]*)(?:=(.*))?$/.exec(args[i]);
    if (!match) {
      bad(i, args[i]);
      continue;
    }
    let value = match[2];
    if (value === undefined && i + 1 < args.length && !args[i + 1].startsWith('--')) value = args[++i];
    out.push({ flag: match[1], value });
  }
  return out;
}

function stringify(env: Record<string, Value>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    // A number token cannot be rendered into a string here; string tokens pass through and resolve at deploy time.
    if (value === undefined || (typeof value === 'number' && isUnresolved(value))) continue;
    out[key] = String(value);
  }
  return out;
}
