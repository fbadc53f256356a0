/**
 * The runtime contract: one function that turns a checked class into what its model server reads (command-line
 * arguments and container environment) on SageMaker or EKS, so that the settings the memory and admission checks
 * approved are the settings the server runs with. Pure (no aws-cdk-lib): the constructs, the tests and the simulator
 * call it alike.
 */
import { ALB_MAX_IDLE_TIMEOUT_SECONDS, KEEP_ALIVE_ABOVE_ANY_ALB_SECONDS } from '../platform/alb-connection';
import { type CapacityClass } from '../service/capacity-class';
import { type ClassProblem } from '../service/checks';
import { type ServiceContract } from '../service/contract';
import { isUnresolved } from '../validation/tokens';
import { type AdmissionLimits, admissionLimits, DJL_ASYNC_DEFAULT_SINCE, queueBoundOf, type ServerAdmission, serverAdmission } from './admission';
import { compareVersions, ENGINE_FACTS, ENGINES, type EngineName, isEngineName, parseVersion, type RejectionStatus } from './engines';
import { engineFact } from './facts';
import { SAGEMAKER_CACHE_DIR, SAGEMAKER_MODEL_PATH, type RuntimeTarget } from './platform';
import { shutdownSetting } from './shutdown';

export { SAGEMAKER_CACHE_DIR, SAGEMAKER_MODEL_PATH, SAGEMAKER_PORT, type RuntimeTarget, type ServingPlatform } from './platform';

/** Prefix of the engine-neutral variables this library sets on every class. */
export const ENV_PREFIX = 'CAI_';

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
  /** What the server really admits with these settings (the simulator admits the same). */
  readonly admission: ServerAdmission;
  /** Whether the server itself rejects requests past its in-flight bound (admission.maxInFlight). */
  readonly boundedQueue: boolean;
  /** The writable directory HOME, XDG_CACHE_HOME and the engine's cache variables point into. */
  readonly cacheDir: string;
  /** HTTP status of those rejections. */
  readonly rejectionStatus?: RejectionStatus;
  readonly problems: readonly ClassProblem[];
  /**
   * Consequences the user accepted (runtime.queueBound 'best-effort') and what an image must do that the library cannot
   * check (a custom image on SageMaker gets the argument `serve`, behind an ALB it must keep idle connections long
   * enough); the constructs emit them as warnings, one id per topic and class so that each can be acknowledged alone.
   */
  readonly warnings: readonly RuntimeWarning[];
}

export interface RuntimeWarning {
  readonly topic: 'unbounded-queue' | 'entrypoint' | 'keep-alive';
  readonly message: string;
}

type Warn = (topic: RuntimeWarning['topic'], message: string) => void;

type Value = string | number | undefined;

/** One derived setting in the engine's own name: a `--flag` (vLLM; SM_VLLM_* on SageMaker) or a variable. */
interface Setting {
  readonly name: string;
  readonly value: Value;
  /** A plain environment variable on every platform (cache locations), never a flag. */
  readonly environment?: boolean;
  /**
   * vLLM on EKS: the value alone, ahead of every flag (`vllm serve <model_tag>`); elsewhere the setting is a flag, or the
   * DLC variable of its name on SageMaker. It still counts as the flag of its name, so a user's own `--<name>` is refused.
   */
  readonly positional?: boolean;
}

/**
 * Binds a class to its engine on a platform. Every value the checks looked at goes into the engine's own flag or
 * variable; the admission limit goes into the engine's own bounded queue when the declared version has one.
 */
export function bindRuntime(cls: CapacityClass, contract: ServiceContract, target: RuntimeTarget): RuntimeBinding {
  const problems: ClassProblem[] = [];
  const warnings: RuntimeWarning[] = [];
  const warn: Warn = (topic, message) => warnings.push({ topic, message });
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
  const bound = queueBoundOf(cls);
  const boundedQueue = known && bound.kind !== 'none';
  if (known && bound.kind === 'none') queueBoundProblem(cls, engine, bound.reason, limits, problem, warn);
  const admission = serverAdmission(cls, contract);
  if (engine === 'custom' && target.platform === 'sagemaker') {
    // fact sagemaker.entrypoint.serve: an entrypoint that takes its arguments as a command or a model fails on `serve`.
    warn('entrypoint', `class '${cls.name}': SageMaker starts the container as \`<image> serve\`; the custom image's entrypoint must accept or ignore the argument 'serve'.`);
  }

  const cacheDir = target.cacheDir ?? (target.platform === 'sagemaker' ? SAGEMAKER_CACHE_DIR : undefined);
  if (cacheDir === undefined) throw new Error(`internal: no writable cache directory for class ${cls.name} on ${target.platform}`);
  const modelPath = resolveModelPath(cls, target, engine, problem);
  batchTokensProblem(cls, engine, problem);
  const settings = [
    ...engineSettings(cls, engine, target, admission, modelPath, problem),
    // How long the server finishes what it holds after SIGTERM (lib/core/runtime/shutdown.ts).
    ...[shutdownSetting(engine, contract, target.platform)].filter((s): s is Setting & { value: number } => s !== undefined),
    ...cacheSettings(cls, engine, cacheDir),
    ...accountSettings(cls, target),
    ...idleConnectionSettings(cls, engine, target, warn),
  ];
  const rendered = render(engine, target, settings);
  const user = userArguments(cls, engine, target, rendered, problem);

  const neutral = stringify({
    [`${ENV_PREFIX}SERVICE`]: contract.name,
    [`${ENV_PREFIX}CLASS`]: cls.name,
    [`${ENV_PREFIX}ENGINE`]: r.engine,
    [`${ENV_PREFIX}ENGINE_VERSION`]: r.engineVersion,
    [`${ENV_PREFIX}PORT`]: target.port,
    [`${ENV_PREFIX}MODEL_PATH`]: modelPath,
    [`${ENV_PREFIX}CACHE_DIR`]: cacheDir,
    [`${ENV_PREFIX}MAX_CONCURRENT_SEQUENCES`]: r.maxConcurrentSequences,
    [`${ENV_PREFIX}MAX_BATCH_TOKENS`]: r.maxBatchTokens,
    [`${ENV_PREFIX}TENSOR_PARALLEL_DEGREE`]: cls.footprint.tensorParallelDegree,
    [`${ENV_PREFIX}MAX_SEQUENCE_TOKENS`]: cls.footprint.maxSequenceTokens,
    [`${ENV_PREFIX}MEMORY_UTILIZATION_CAP`]: cls.memory.utilizationCap,
    [`${ENV_PREFIX}CONCURRENCY_LIMIT`]: limits.concurrencyLimit,
    [`${ENV_PREFIX}QUEUE_SLOTS`]: limits.queueSlots,
    [`${ENV_PREFIX}MAX_CONCURRENT_REQUESTS`]: limits.maxConcurrentRequests,
    [`${ENV_PREFIX}MAX_QUEUED_PROMPT_TOKENS`]: limits.maxQueuedPromptTokens,
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
  readinessEnvProblems(r.engine, r.env ?? {}, problem);
  return {
    engine: r.engine,
    args: [...rendered.args, ...user.args],
    env: { ...r.env, ...user.env, ...derived },
    port: target.port,
    modelPath,
    healthPath: facts.healthPath,
    readyPath: facts.readyPath,
    limits,
    admission,
    boundedQueue,
    cacheDir,
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

function queueBoundProblem(
  cls: CapacityClass,
  engine: EngineName,
  what: string,
  limits: AdmissionLimits,
  problem: (field: string, message: string) => void,
  warn: Warn,
): void {
  const facts = ENGINE_FACTS[engine];
  const consequence =
    `requests past the admission limit of ${limits.maxConcurrentRequests} in flight per replica ` +
    `(${limits.concurrencyLimit} serving + ${limits.queueSlots} queued) are not rejected by the server but queue past the deadline`;
  if ((cls.runtime.queueBound ?? 'required') === 'best-effort') {
    warn('unbounded-queue', `class '${cls.name}': ${what}; ${consequence}.`);
    return;
  }
  const neuronDjl = engine === 'djl-lmi' && cls.hardware.acceleratorTarget === 'neuron';
  const fix = neuronDjl
    ? `a NeuronX image older than ${DJL_ASYNC_DEFAULT_SINCE} (${facts.boundedQueueSince} or later), or `
    : facts.boundedQueueSince ? `runtime.engineVersion ${facts.boundedQueueSince} or later, or ` : '';
  problem('runtime.queueBound', `is 'required' but ${what}; ${consequence}. Allowed: ${fix}runtime.queueBound 'best-effort' to accept that (a synth warning)`);
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
  if (target.platform === 'eks' && engine !== 'custom') {
    // A pod has no model convention: nothing is mounted and nothing names a hub model.
    problem(
      'runtime.modelPath',
      `is not set and the class has no artifact.modelData, so ${engine} on EKS has no model to load; allowed: ` +
        'artifact.modelData (fetched and verified into the pod) or runtime.modelPath (weights inside the image)',
    );
  } else if (target.platform === 'sagemaker' && (engine === 'tgi' || engine === 'djl-lmi') && !cls.runtime.env?.HF_MODEL_ID) {
    // Fact tgi.entrypoint.sagemaker: the TGI entrypoint exits without HF_MODEL_ID; without model data /opt/ml/model is
    // empty. DJL LMI reads HF_MODEL_ID too.
    problem(
      'runtime.modelPath',
      `is not set and the class has no artifact.modelData, so ${engine} on SageMaker has no model to load (the TGI entrypoint ` +
        'exits without HF_MODEL_ID); allowed: artifact.modelData (mounted at /opt/ml/model), runtime.modelPath, or a hub id in runtime.env.HF_MODEL_ID',
    );
  } else if (target.platform === 'sagemaker' && engine === 'vllm') {
    // Fact vllm.entrypoint.sagemaker-variables: the DLC at cb035a10 passes only SM_VLLM_* (no HF_MODEL_ID fallback), so
    // without SM_VLLM_MODEL vLLM would start its own default model.
    problem(
      'runtime.modelPath',
      'is not set and the class has no artifact.modelData, so vllm on SageMaker gets no SM_VLLM_MODEL (the DLC would start ' +
        "vLLM's default model); allowed: artifact.modelData (mounted at /opt/ml/model) or runtime.modelPath (a path or hub id)",
    );
  }
  return undefined;
}

/** The class's settings in the engine's own names, for the platform. Values left undefined are the engine's defaults. */
function engineSettings(
  cls: CapacityClass,
  engine: EngineName,
  target: RuntimeTarget,
  admission: ServerAdmission,
  modelPath: string | undefined,
  problem: (field: string, message: string) => void,
): Setting[] {
  const r = cls.runtime;
  const f = cls.footprint;
  const sm = target.platform === 'sagemaker';
  const queue = admission.maxInFlight;
  const neuron = cls.hardware.acceleratorTarget === 'neuron';
  switch (engine) {
    case 'vllm': {
      const batchTokens = r.maxBatchTokens;
      const resolved = batchTokens !== undefined && !isUnresolved(batchTokens) && !isUnresolved(r.maxConcurrentSequences);
      if (resolved && batchTokens < r.maxConcurrentSequences) {
        problem(
          'runtime.maxBatchTokens',
          `is ${batchTokens}, below runtime.maxConcurrentSequences (${r.maxConcurrentSequences}); vLLM refuses to start when ` +
            `--max-num-batched-tokens < --max-num-seqs (vllm.flag.max-num-batched-tokens); allowed: ${r.maxConcurrentSequences} or more, or unset`,
        );
      }
      // Facts vllm.flag.*. On SageMaker the DLC turns SM_VLLM_<FLAG> into --<flag> (vllm.entrypoint.sagemaker-variables).
      return [
        // EKS: the positional model of `vllm serve`, the vllm-openai ENTRYPOINT, which deprecates --model (fact
        // vllm.argument.model_tag). SageMaker: SM_VLLM_MODEL, which the DLC passes to api_server as --model (vllm.flag.model).
        { name: 'model', value: modelPath, positional: true },
        { name: 'port', value: sm ? undefined : target.port }, // the SageMaker DLC passes --port 8080 itself
        { name: 'max-num-seqs', value: r.maxConcurrentSequences },
        { name: 'max-num-batched-tokens', value: r.maxBatchTokens },
        { name: 'tensor-parallel-size', value: f.tensorParallelDegree },
        { name: 'max-model-len', value: f.maxSequenceTokens },
        { name: 'gpu-memory-utilization', value: cls.memory.utilizationCap },
        // In-flight requests (waiting + running) and prompt tokens still to prefill, of the whole server: one replica is
        // one API server process (vllm.behaviour.api-server-count).
        { name: 'max-num-queued-reqs', value: queue },
        { name: 'max-num-queued-tokens', value: admission.maxQueuedPromptTokens },
      ];
    }
    case 'tgi': {
      // text-generation-launcher fields, each `#[clap(long, env)]`: the variable is the field name in upper case.
      const maxInputTokens = f.maxSequenceTokens - 1; // must be < MAX_TOTAL_TOKENS (tgi.variable.MAX_INPUT_TOKENS)
      const prefill = r.maxBatchTokens;
      if (prefill !== undefined && !isUnresolved(prefill) && !isUnresolved(f.maxSequenceTokens) && prefill < maxInputTokens) {
        problem(
          'runtime.maxBatchTokens',
          `is ${r.maxBatchTokens}, below the longest prompt TGI admits (MAX_INPUT_TOKENS = footprint.maxSequenceTokens - 1 = ${maxInputTokens}); ` +
            'TGI refuses to start when MAX_BATCH_PREFILL_TOKENS < MAX_INPUT_TOKENS (tgi.variable.MAX_BATCH_PREFILL_TOKENS); ' +
            `allowed: ${maxInputTokens} or more, or unset (then one longest prompt, ${maxInputTokens})`,
        );
      }
      const batchTotal = r.maxConcurrentSequences * f.maxSequenceTokens;
      if (prefill !== undefined && !isUnresolved(prefill) && !isUnresolved(batchTotal) && prefill > batchTotal) {
        problem(
          'runtime.maxBatchTokens',
          `is ${prefill}, above the batch token budget TGI is given (MAX_BATCH_TOTAL_TOKENS = runtime.maxConcurrentSequences x ` +
            `footprint.maxSequenceTokens = ${batchTotal}); TGI 2.x, and 3.x for models without flash attention, refuse to start when ` +
            'MAX_BATCH_PREFILL_TOKENS > MAX_BATCH_TOTAL_TOKENS, and no prefill batch of MAX_BATCH_SIZE prompts could use more ' +
            `(tgi.variable.MAX_BATCH_TOTAL_TOKENS); allowed: ${maxInputTokens} to ${batchTotal}, or unset`,
        );
      }
      return [
        { name: sm ? 'HF_MODEL_ID' : 'MODEL_ID', value: modelPath },
        { name: 'PORT', value: sm ? undefined : target.port }, // sagemaker-entrypoint.sh passes --port 8080
        // The SageMaker entrypoint maps SM_NUM_GPUS to NUM_SHARD.
        { name: sm ? 'SM_NUM_GPUS' : 'NUM_SHARD', value: f.tensorParallelDegree },
        { name: 'MAX_TOTAL_TOKENS', value: f.maxSequenceTokens },
        { name: 'MAX_INPUT_TOKENS', value: maxInputTokens },
        // Always rendered: unset, TGI 2.0-2.4 defaults it to MAX_BATCH_SIZE x MAX_INPUT_TOKENS and its warm-up prefill of
        // that size runs out of memory, and TGI 3.x defaults it to about 4096, below a longer MAX_INPUT_TOKENS
        // (tgi.variable.MAX_BATCH_PREFILL_TOKENS). One longest prompt is the smallest budget both accept.
        { name: 'MAX_BATCH_PREFILL_TOKENS', value: r.maxBatchTokens ?? maxInputTokens },
        // The batch bound: flash-attention models ignore MAX_BATCH_TOTAL_TOKENS and infer the token budget, while
        // MAX_BATCH_SIZE bounds every batch (tgi.variable.MAX_BATCH_SIZE). The token budget still binds non-flash models.
        { name: 'MAX_BATCH_SIZE', value: r.maxConcurrentSequences },
        { name: 'MAX_BATCH_TOTAL_TOKENS', value: batchTotal },
        { name: 'CUDA_MEMORY_FRACTION', value: neuron ? undefined : cls.memory.utilizationCap },
        { name: 'MAX_CONCURRENT_REQUESTS', value: queue },
      ];
    }
    case 'djl-lmi': {
      // OPTION_<NAME> overrides option.<name>; SERVING_<KEY> overrides the server's config.properties key.
      const version = r.engineVersion;
      const asyncByDefault = version !== undefined && parseVersion(version) !== undefined && compareVersions(version, DJL_ASYNC_DEFAULT_SINCE) >= 0;
      return [
        { name: 'OPTION_MODEL_ID', value: modelPath },
        { name: 'SERVING_INFERENCE_ADDRESS', value: sm ? undefined : `http://0.0.0.0:${target.port}` },
        // Rolling batch, where the worker takes jobs off the job queue into a batch of max_rolling_batch_size: the only
        // mode in which job_queue_size bounds in-flight requests (djl-lmi.behaviour.in-flight-bound). NeuronX: `auto`
        // becomes tnx, while its default without the option is no rolling batch; GPU from 0.35.0: vllm, with async mode
        // (the 0.35.0 default, unbounded) off. Older GPU releases keep their default rolling batch.
        { name: 'OPTION_ROLLING_BATCH', value: neuron ? (asyncByDefault ? undefined : 'auto') : asyncByDefault ? 'vllm' : undefined },
        { name: 'OPTION_ASYNC_MODE', value: asyncByDefault && !neuron ? 'false' : undefined },
        { name: 'OPTION_MAX_ROLLING_BATCH_SIZE', value: r.maxConcurrentSequences },
        // The vLLM rolling batch passes it on as max_num_batched_tokens (djl-lmi.variable.OPTION_MAX_ROLLING_BATCH_PREFILL_TOKENS).
        { name: 'OPTION_MAX_ROLLING_BATCH_PREFILL_TOKENS', value: asyncByDefault && !neuron ? r.maxBatchTokens : undefined },
        { name: 'OPTION_TENSOR_PARALLEL_DEGREE', value: f.tensorParallelDegree },
        { name: neuron ? 'OPTION_N_POSITIONS' : 'OPTION_MAX_MODEL_LEN', value: f.maxSequenceTokens },
        { name: 'OPTION_GPU_MEMORY_UTILIZATION', value: neuron ? undefined : cls.memory.utilizationCap },
        // Jobs waiting beside the rolling batch: in flight = batch + queue = the admission limit (at least batch + 1).
        { name: 'SERVING_JOB_QUEUE_SIZE', value: admission.jobQueueSize },
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

/**
 * A batch token budget only where the setting that carries it is known to be read (else it would be silently lost).
 * DJL: the vLLM rolling batch, which the library sets on GPU from 0.35.0, passes option.max_rolling_batch_prefill_tokens
 * on as vLLM's max_num_batched_tokens (fact djl-lmi.variable.OPTION_MAX_ROLLING_BATCH_PREFILL_TOKENS), so vLLM's own
 * rule holds: not below max_num_seqs (fact vllm.flag.max-num-batched-tokens). Before 0.35.0 the rolling batch is the
 * image's default, which the library does not set: lmi-dist and vLLM read the option, TensorRT-LLM reads
 * option.max_num_tokens instead; which option a NeuronX rolling batch reads is not confirmed. Triton: batching, like
 * its queue, is each model's config.pbtxt (fact triton.behaviour.queue), which the library does not write.
 */
function batchTokensProblem(cls: CapacityClass, engine: EngineName, problem: (field: string, message: string) => void): void {
  const tokens = cls.runtime.maxBatchTokens;
  const sequences = cls.runtime.maxConcurrentSequences;
  if (tokens === undefined || isUnresolved(tokens)) return;
  if (engine === 'triton') {
    problem('runtime.maxBatchTokens', `is ${tokens}, but Triton has no server flag or variable for a batch token budget: batching ` +
      'is configured per model in its config.pbtxt (max_batch_size, dynamic_batching), which the library does not write; allowed: unset ' +
      '(set the batching in the model repository)');
    return;
  }
  if (engine !== 'djl-lmi') return;
  const neuron = cls.hardware.acceleratorTarget === 'neuron';
  const version = cls.runtime.engineVersion;
  const release = `djl-lmi ${version ?? '(no release stated)'}`;
  if (neuron || version === undefined || !parseVersion(version) || compareVersions(version, DJL_ASYNC_DEFAULT_SINCE) < 0) {
    problem('runtime.maxBatchTokens', neuron
      ? `is ${tokens}, but which option the NeuronX rolling batch of ${release} reads for a batch token budget is not confirmed in the DJL ` +
        'source, so it could be silently ignored; allowed: unset (set the option your image documents in runtime.env)'
      : `is ${tokens}, but before ${DJL_ASYNC_DEFAULT_SINCE} the rolling batch of ${release} is the image's default, which the library does not ` +
        'set: lmi-dist and vLLM read option.max_rolling_batch_prefill_tokens, TensorRT-LLM reads option.max_num_tokens, so it could be silently ' +
        `ignored; allowed: runtime.engineVersion ${DJL_ASYNC_DEFAULT_SINCE} or later (the library sets the vLLM rolling batch and renders ` +
        "OPTION_MAX_ROLLING_BATCH_PREFILL_TOKENS), or unset with your image's own option in runtime.env (OPTION_MAX_ROLLING_BATCH_PREFILL_TOKENS, " +
        'OPTION_MAX_NUM_TOKENS)');
    return;
  }
  if (!isUnresolved(sequences) && tokens < sequences) {
    problem('runtime.maxBatchTokens', `is ${tokens}, below runtime.maxConcurrentSequences (${sequences}); DJL passes it to vLLM as ` +
      'max_num_batched_tokens, and vLLM refuses to start when it is below max_num_seqs (OPTION_MAX_ROLLING_BATCH_SIZE; ' +
      `vllm.flag.max-num-batched-tokens); allowed: ${sequences} or more, or unset`);
  }
}

/**
 * The writable cache locations: HOME (so ~/.cache, ~/.triton, ~/.djl.ai land on the cache volume; the EKS root
 * filesystem is read-only and uid 1000 has no home), XDG_CACHE_HOME, and each engine's own cache variable.
 */
function cacheSettings(cls: CapacityClass, engine: EngineName, cacheDir: string): Setting[] {
  const xdg = `${cacheDir}/.cache`;
  const own: Record<EngineName, Setting[]> = {
    vllm: [{ name: 'VLLM_CACHE_ROOT', value: `${xdg}/vllm` }, { name: 'HF_HOME', value: `${xdg}/huggingface` }],
    tgi: [{ name: 'HF_HOME', value: `${xdg}/huggingface` }],
    'djl-lmi': [{ name: 'DJL_CACHE_DIR', value: `${cacheDir}/.djl.ai` }, { name: 'HF_HOME', value: `${xdg}/huggingface` }],
    triton: [],
    custom: [],
  };
  const neuron = cls.hardware.acceleratorTarget === 'neuron' ? [{ name: 'NEURON_COMPILE_CACHE_URL', value: `${cacheDir}/neuron-compile-cache` }] : [];
  return [
    { name: 'HOME', value: cacheDir, environment: true },
    { name: 'XDG_CACHE_HOME', value: xdg, environment: true },
    ...[...own[engine], ...neuron].map((s) => ({ ...s, environment: true })),
  ];
}

/** The login name the server's account variables carry where the platform runs it as a uid of its own choosing. */
export const SERVER_USER_NAME = 'model-server';

/**
 * What the passwd entry the server's uid lacks would have given it, besides HOME (cacheSettings): its name. Python's
 * getpass.getuser() returns the first of LOGNAME, USER, LNAME and USERNAME that is set and only then asks the password
 * database, whose pwd.getpwuid() raises KeyError for a uid without an entry (https://docs.python.org/3/library/getpass.html;
 * fact any.variable.USER). PyTorch calls it while it is imported, to name its Inductor cache directory
 * (torch/_inductor/runtime/cache_dir_utils.py default_cache_dir, pytorch/pytorch#140765), and a module-level call there
 * does not read TORCHINDUCTOR_CACHE_DIR (vllm-project/vllm#46734): the server exits with "getpwuid(): uid not found: 1000"
 * before it parses an argument (vllm-project/vllm#44548; ai-dynamo/dynamo#12457 with vllm/vllm-openai at runAsUser 1000).
 * Torch 2.13 falls back to a uid-derived name (pytorch/pytorch#184208), but the TGI, DJL and Triton images and other
 * libraries in them are not bound to it; the variables are set for every engine, custom images included, wherever the
 * platform picks the uid (RuntimeTarget.runAsUser: EKS), and nowhere else. A value of the user's own
 * (`runtime.env`) wins.
 */
function accountSettings(cls: CapacityClass, target: RuntimeTarget): Setting[] {
  if (target.runAsUser === undefined) return [];
  // A name of the user's own wins (setting it was the workaround before the library did): any name serves, as long
  // as one is set. Only the variables the user left unset are derived.
  return ['USER', 'LOGNAME'].filter((name) => cls.runtime.env?.[name] === undefined)
    .map((name): Setting => ({ name, value: SERVER_USER_NAME, environment: true }));
}

interface Rendered {
  readonly args: string[];
  readonly env: Record<string, string>;
  /** Flags the library sets (without dashes), to reject user arguments that would override them. */
  readonly flags: ReadonlySet<string>;
}

/** vLLM flag as the SageMaker DLC variable: `max-num-seqs` is `SM_VLLM_MAX_NUM_SEQS`. */
export function sageMakerVllmVariable(flag: string): string {
  return `SM_VLLM_${variableOfFlag(flag)}`;
}

/** A launcher variable as its flag: `MAX_CONCURRENT_REQUESTS` is `max-concurrent-requests`. */
function flagOfVariable(name: string): string {
  return name.toLowerCase().replace(/_/g, '-');
}

/** A flag as its variable, `flagOfVariable` the other way: `max-batch-prefill-tokens` is `MAX_BATCH_PREFILL_TOKENS`. */
function variableOfFlag(flag: string): string {
  return flag.toUpperCase().replace(/-/g, '_');
}

/**
 * Behind an ALB (EKS) a server must keep an idle connection longer than the ALB's idle timeout (60 s and up), else the
 * ALB may send the next request on a connection the server is closing: a 502 (lib/core/platform/alb-connection.ts).
 * An engine that closes idle connections gets its keep-alive above any ALB's (vLLM: uvicorn's 5 s); one that never
 * closes them needs nothing (TGI, DJL, Triton: facts *.behaviour.idle-connections); a custom image is the user's to
 * check, and says so. On SageMaker the platform's front end holds the connection. A value of the user's own
 * (`runtime.env`) wins: no check derives it.
 */
function idleConnectionSettings(cls: CapacityClass, engine: EngineName, target: RuntimeTarget, warn: Warn): Setting[] {
  if (target.platform === 'sagemaker') return [];
  const idle = ENGINE_FACTS[engine].idleConnections;
  if (idle.kind === 'unknown') {
    warn('keep-alive', `class '${cls.name}': behind the ALB the custom image's HTTP keep-alive must outlast the ALB's idle timeout ` +
      `(at least 60 s, up to ${ALB_MAX_IDLE_TIMEOUT_SECONDS} s: more than ${ALB_MAX_IDLE_TIMEOUT_SECONDS} s is always enough), ` +
      'else the ALB may reuse a connection as the server closes it (a 502).');
    return [];
  }
  if (idle.kind === 'kept' || cls.runtime.env?.[idle.variable] !== undefined) return [];
  return [{ name: idle.variable, value: KEEP_ALIVE_ABOVE_ANY_ALB_SECONDS, environment: true }];
}

function render(engine: EngineName, target: RuntimeTarget, settings: readonly Setting[]): Rendered {
  const set = settings.filter((s): s is Setting & { value: string | number } => s.value !== undefined && !(typeof s.value === 'number' && isUnresolved(s.value)));
  const variables = stringify(Object.fromEntries(set.filter((s) => s.environment).map((s) => [s.name, s.value])));
  const own = set.filter((s) => !s.environment);
  const sm = target.platform === 'sagemaker';
  const flags = new Set(own.map((s) => s.name));
  if (engine === 'vllm') {
    const dlc = stringify(Object.fromEntries(own.map((s) => [sageMakerVllmVariable(s.name), s.value])));
    if (sm) return { args: [], env: { ...variables, ...dlc }, flags };
    const positional = own.filter((s) => s.positional).map((s) => String(s.value));
    return { args: [...positional, ...own.filter((s) => !s.positional).flatMap((s) => [`--${s.name}`, String(s.value)])], env: variables, flags };
  }
  if (engine === 'triton') {
    // NGC images start their entrypoint script with the container's arguments as the command.
    return sm ? { args: [], env: variables, flags: new Set() } : { args: ['tritonserver', ...own.map((s) => `--${s.name}=${s.value}`)], env: variables, flags };
  }
  const env = stringify(Object.fromEntries(own.map((s) => [s.name, s.value])));
  return { args: [], env: { ...variables, ...env }, flags: new Set(Object.keys(env).map(flagOfVariable)) };
}

/**
 * The class's own extra arguments, checked against what the library sets, delivered the one way the engine's image
 * takes them on the platform, or refused where it takes none (they would be silently lost):
 * - vLLM: appended (EKS); SM_VLLM_<FLAG> variables, which the SageMaker DLC turns into flags.
 * - TGI: appended on EKS (tgi-entrypoint.sh runs `text-generation-launcher $@`); refused on SageMaker, whose
 *   sagemaker-entrypoint.sh runs `text-generation-launcher --port 8080` alone (fact tgi.entrypoint.sagemaker): every
 *   launcher option is a variable too (tgi.entrypoint.launcher-variables), which the message names.
 * - DJL LMI: refused on both (fact djl-lmi.entrypoint.serve): it reads OPTION_* and SERVING_* variables.
 * - Triton: appended after `tritonserver` (EKS); on SageMaker the image's serve script appends
 *   SAGEMAKER_TRITON_ADDITIONAL_ARGS to its command line from 2.36.0 (fact triton.variable.SAGEMAKER_TRITON_ADDITIONAL_ARGS).
 * - custom: appended (EKS); on SageMaker verbatim in CAI_ENGINE_ARGS, for an entrypoint of the user's own that reads it.
 * Where a shell expands the arguments unquoted (TGI's `$@`, the Triton script's `$SAGEMAKER_ARGS`), an argument with
 * whitespace or a glob character would reach the server split or expanded: refused.
 */
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
  const sm = target.platform === 'sagemaker';
  const given = `are ${JSON.stringify(args)}`;
  if (engine === 'djl-lmi') {
    problem('runtime.args', `${given}, but the DJL LMI image starts its server only on the argument 'serve' (its CMD) and passes no other: ` +
      `${sm ? 'SageMaker gives it serve alone' : "on EKS the container's arguments replace serve and the entrypoint runs them as a shell command"}` +
      ' (djl-lmi.entrypoint.serve); DJL reads its settings from variables, so allowed: none, and runtime.env OPTION_<NAME> for the model ' +
      'option option.<name> (e.g. OPTION_ENFORCE_EAGER=true) or SERVING_<KEY> for the server property <key>');
    return { args: [], env: {} };
  }
  if (engine === 'tgi' && sm) {
    const instead = parsed.map((p) => (rendered.flags.has(p.flag) ? `--${p.flag} is derived by the library (change the class's settings)`
      : `${variableOfFlag(p.flag)}=${p.value ?? 'true'}`));
    problem('runtime.args', `${given}, but TGI's SageMaker entrypoint runs text-generation-launcher --port 8080 without the container's ` +
      'arguments, so they would be lost (tgi.entrypoint.sagemaker); every launcher option is also a variable (tgi.entrypoint.launcher-variables), ' +
      `so allowed: none, and runtime.env instead: ${instead.join(', ')}`);
    return { args: [], env: {} };
  }
  for (const flag of parsed.filter((p) => rendered.flags.has(p.flag))) {
    if (engine === 'vllm' && !sm && flag.flag === 'model') {
      // `vllm serve` moves a --model to the front as the positional model: with the library's own, two positionals, and
      // argparse exits (vllm.argument.model_tag).
      problem('runtime.args', 'sets --model, but the library passes the model (artifact.modelData or runtime.modelPath) as the positional model of ' +
        '`vllm serve`, and a second model stops the server at start; allowed: the model through those settings, and no --model');
      continue;
    }
    problem('runtime.args', `sets --${flag.flag}, which the library derives from the class's runtime, footprint and envelope settings; change those settings instead`);
  }
  const unquoted = (engine === 'tgi' && !sm) || (engine === 'triton' && sm);
  const split = args.filter((a) => /[\s*?[]/.test(a));
  if (unquoted && split.length > 0) {
    problem('runtime.args', `${given}; ${JSON.stringify(split)} would reach the server split at whitespace or expanded as a glob, because ` +
      `${engine === 'tgi' ? "the TGI image's tgi-entrypoint.sh passes its arguments on unquoted ($@)" : 'the Triton serve script expands them unquoted'}; ` +
      'allowed: arguments without whitespace and *?[ (put a long value in a file in the image or the model data and pass its path)');
  }
  if (engine === 'triton' && sm) return tritonSageMakerArguments(cls, args, parsed, given, problem);
  if (sm) {
    // A bare flag is an empty value: the DLC passes a non-empty value after the flag (`true` would reach argparse as an
    // argument) and an empty one as the bare flag (fact vllm.entrypoint.sagemaker-variables).
    if (engine === 'vllm') return { args: [], env: Object.fromEntries(parsed.map((p) => [sageMakerVllmVariable(p.flag), p.value ?? ''])) };
    return { args: [], env: {}, engineArgs: args.join(' ') };
  }
  return { args: [...args], env: {} };
}

/**
 * The flags Triton's SageMaker serve script sets to serve as SageMaker expects (its model directory, the SageMaker
 * API on, HTTP off, explicit model control, the model it loads): a later value would take the endpoint off it
 * (triton-inference-server/server@v2.71.0 docker/sagemaker/serve:63,159,180,183).
 */
const TRITON_SAGEMAKER_SERVE_FLAGS = ['model-repository', 'allow-sagemaker', 'allow-http', 'model-control-mode', 'load-model'];

function tritonSageMakerArguments(
  cls: CapacityClass,
  args: readonly string[],
  parsed: ReadonlyArray<{ flag: string }>,
  given: string,
  problem: (field: string, message: string) => void,
): { args: string[]; env: Record<string, string> } {
  const fact = engineFact('triton.variable.SAGEMAKER_TRITON_ADDITIONAL_ARGS');
  const version = cls.runtime.engineVersion;
  // An NGC container tag (YY.MM, e.g. 23.05 = Triton 2.34.0: server@v2.36.0 README.md:87 maps 23.07 to 2.36.0) would
  // compare above any 2.x release; a Triton release has major version 2 (review R234).
  if (version !== undefined && (parseVersion(version)?.[0] ?? 0) >= 20) {
    problem('runtime.engineVersion', `'${version}' looks like an NGC container tag (YY.MM); allowed: the Triton server release it ships ` +
      `(2.N.M, listed in the container's release notes), which decides whether ${fact.name} exists (from ${fact.since})`);
    return { args: [], env: {} };
  }
  if (version === undefined || !parseVersion(version) || compareVersions(version, fact.since!) < 0) {
    problem('runtime.args', `${given}, but SageMaker runs the Triton image's serve script, which passes on extra arguments only from ` +
      `${fact.since} (${fact.name}), and runtime.engineVersion is ${version === undefined ? 'not set' : `'${version}'`}; allowed: ` +
      `runtime.engineVersion ${fact.since} or later (the Triton server release, not the NGC container tag), or no runtime.args`);
    return { args: [], env: {} };
  }
  for (const p of parsed.filter((x) => TRITON_SAGEMAKER_SERVE_FLAGS.includes(x.flag))) {
    problem('runtime.args', `sets --${p.flag}, which Triton's SageMaker serve script sets for the endpoint to serve; allowed: other flags`);
  }
  return { args: [], env: { [fact.name]: args.join(' ') } };
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

/**
 * A readiness path answers 200 only once the model is loaded because the server binds its port only then (facts
 * `<engine>.path.ready`). DJL decides that with its `wait_model_loading` property, default true, which it also reads from
 * the variable SERVING_WAIT_MODEL_LOADING (ConfigManager turns every `SERVING_<X>` variable into the property `<x>` and
 * reads it with Boolean.parseBoolean, so anything but "true" turns it off: djl-serving@v0.35.0
 * serving/src/main/java/ai/djl/serving/util/ConfigManager.java, fact djl-lmi.path.ready). Set otherwise, the readiness probe
 * and the target group's health check would pass while the model loads, and requests would reach a loading server.
 */
function readinessEnvProblems(engine: string, env: Readonly<Record<string, string>>, problem: (field: string, message: string) => void): void {
  const wait = env.SERVING_WAIT_MODEL_LOADING;
  if (engine !== 'djl-lmi' || wait === undefined || wait.toLowerCase() === 'true') return;
  problem('runtime.env.SERVING_WAIT_MODEL_LOADING', `is '${wait}', which lets DJL answer its readiness path (/ping) before the model is loaded, `
    + 'so the load balancer would route to a loading server; allowed: unset or \'true\' (the default: the server binds its port once the model is loaded)');
}
