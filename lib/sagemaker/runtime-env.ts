/**
 * The container environment of one capacity class on SageMaker: its runtime settings in the engine's own
 * variables, plus admission limits derived from its envelope and the service deadline. Pure (no aws-cdk-lib), so
 * the same numbers can be computed in tests, the simulator or a Lambda function.
 */
import { type CapacityClass, type ClassProblem, type ServiceContract, isUnresolved } from '../core';

/** How many requests a replica of a class may hold before it must reject, and why. */
export interface AdmissionLimits {
  /** Time a mean request needs once decoding starts: p95 TTFT + mean output tokens x p95 ITL, in ms. */
  readonly serviceTimeMs: number;
  /** Longest a request may queue: the class's maxQueueDelayMs, or less when the deadline leaves less. */
  readonly queueBudgetMs: number;
  /** Requests that can wait within the queue budget at the envelope's request rate (Little's law). */
  readonly queueSlots: number;
  /** In-flight requests the server admits: safe concurrency + queue slots. Past this it should shed (HTTP 429). */
  readonly maxConcurrentRequests: number;
}

/**
 * Admission limits of one replica. A request that waits longer than the deadline minus its own service time is
 * worthless, so the queue holds only what the replica drains in that budget at its measured rate.
 */
export function admissionLimits(cls: CapacityClass, contract: ServiceContract): AdmissionLimits {
  const e = cls.envelope;
  const meanOutput = contract.requestShape.meanOutputTokens;
  const serviceTimeMs = e.ttftP95Ms + meanOutput * (e.itlP95Ms ?? 0);
  const queueBudgetMs = Math.max(0, Math.min(cls.runtime.maxQueueDelayMs, contract.slo.deadlineMs - serviceTimeMs));
  const requestsPerSecond = e.tokensPerSecondPerReplica / meanOutput;
  const queueSlots = Math.floor(Number(((requestsPerSecond * queueBudgetMs) / 1000).toFixed(9)));
  return { serviceTimeMs, queueBudgetMs, queueSlots, maxConcurrentRequests: Math.floor(e.safeConcurrency) + queueSlots };
}

/** Problems of a class's admission limits against the deadline (the class can never answer in time). */
export function admissionProblems(cls: CapacityClass, contract: ServiceContract): ClassProblem[] {
  const limits = admissionLimits(cls, contract);
  if (limits.serviceTimeMs < contract.slo.deadlineMs) return [];
  return [
    {
      className: cls.name,
      field: 'envelope',
      message:
        `a mean request needs ${limits.serviceTimeMs} ms on this class (p95 TTFT ${cls.envelope.ttftP95Ms} ms + ` +
        `${contract.requestShape.meanOutputTokens} tokens x p95 ITL ${cls.envelope.itlP95Ms ?? 0} ms), not below the ` +
        `service deadline of ${contract.slo.deadlineMs} ms; it cannot answer in time even with an empty queue`,
    },
  ];
}

/** Prefix of the engine-neutral variables this library sets on every class. */
export const ENV_PREFIX = 'CAI_';

/**
 * Engine variables for the settings the library derives. Only engines whose SageMaker containers read these
 * variables are mapped; any other engine gets the engine-neutral `CAI_*` variables only.
 * - vLLM (SageMaker vLLM DLC and upstream sagemaker-entrypoint.sh): every `SM_VLLM_<FLAG>` becomes `--<flag>`.
 * - TGI (Hugging Face LLM DLC): launcher flags as upper-case variables; `SM_NUM_GPUS` sets the shard count.
 * - DJL LMI (including its NeuronX container): `OPTION_<NAME>` maps to `option.<name>` of serving.properties.
 */
function engineEnvironment(cls: CapacityClass, limits: AdmissionLimits): Record<string, string> {
  const r = cls.runtime;
  const f = cls.footprint;
  const env: Record<string, string | number | undefined> = {};
  switch (r.engine) {
    case 'vllm':
      env.SM_VLLM_MAX_NUM_SEQS = r.maxConcurrentSequences;
      env.SM_VLLM_MAX_NUM_BATCHED_TOKENS = r.maxBatchTokens;
      env.SM_VLLM_TENSOR_PARALLEL_SIZE = f.tensorParallelDegree;
      env.SM_VLLM_MAX_MODEL_LEN = f.maxSequenceTokens;
      env.SM_VLLM_GPU_MEMORY_UTILIZATION = cls.memory.utilizationCap;
      break;
    case 'tgi':
      env.MAX_CONCURRENT_REQUESTS = limits.maxConcurrentRequests;
      env.MAX_TOTAL_TOKENS = f.maxSequenceTokens;
      env.MAX_BATCH_PREFILL_TOKENS = r.maxBatchTokens;
      env.SM_NUM_GPUS = f.tensorParallelDegree;
      env.CUDA_MEMORY_FRACTION = cls.memory.utilizationCap;
      break;
    case 'djl-lmi':
      env.OPTION_MAX_ROLLING_BATCH_SIZE = r.maxConcurrentSequences;
      env.OPTION_TENSOR_PARALLEL_DEGREE = f.tensorParallelDegree;
      if (cls.hardware.acceleratorTarget === 'neuron') {
        env.OPTION_N_POSITIONS = f.maxSequenceTokens;
      } else {
        env.OPTION_MAX_MODEL_LEN = f.maxSequenceTokens;
        env.OPTION_GPU_MEMORY_UTILIZATION = cls.memory.utilizationCap;
      }
      break;
    default:
      break;
  }
  return stringify(env);
}

/** `--flag value`, `--flag=value` and bare `--flag` arguments as `SM_VLLM_FLAG` variables. */
function vllmArgsEnvironment(cls: CapacityClass, problems: ClassProblem[]): Record<string, string> {
  const env: Record<string, string> = {};
  const args = cls.runtime.args ?? [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const match = /^--([a-z0-9][a-z0-9-]*)(?:=(.*))?$/.exec(arg);
    if (!match) {
      problems.push({
        className: cls.name,
        field: `runtime.args[${i}]`,
        message: `'${arg}' is not a vLLM flag; SageMaker passes vLLM flags as SM_VLLM_* variables, so give each as --name, --name=value or --name value`,
      });
      continue;
    }
    let value = match[2];
    if (value === undefined && i + 1 < args.length && !args[i + 1].startsWith('--')) value = args[++i];
    env[`SM_VLLM_${match[1].toUpperCase().replace(/-/g, '_')}`] = value ?? 'true';
  }
  return env;
}

/** The whole container environment of a class and the problems found building it. */
export function classEnvironment(
  cls: CapacityClass,
  contract: ServiceContract,
): { readonly environment: Record<string, string>; readonly problems: ClassProblem[] } {
  const problems: ClassProblem[] = [];
  const limits = admissionLimits(cls, contract);
  const neutral = stringify({
    [`${ENV_PREFIX}SERVICE`]: contract.name,
    [`${ENV_PREFIX}CLASS`]: cls.name,
    [`${ENV_PREFIX}ENGINE`]: cls.runtime.engine,
    [`${ENV_PREFIX}MAX_CONCURRENT_REQUESTS`]: limits.maxConcurrentRequests,
    [`${ENV_PREFIX}MAX_QUEUE_DELAY_MS`]: limits.queueBudgetMs,
    [`${ENV_PREFIX}DEADLINE_MS`]: contract.slo.deadlineMs,
    [`${ENV_PREFIX}MAX_CONCURRENT_SEQUENCES`]: cls.runtime.maxConcurrentSequences,
    [`${ENV_PREFIX}MAX_BATCH_TOKENS`]: cls.runtime.maxBatchTokens,
    [`${ENV_PREFIX}TENSOR_PARALLEL_DEGREE`]: cls.footprint.tensorParallelDegree,
    [`${ENV_PREFIX}MAX_SEQUENCE_TOKENS`]: cls.footprint.maxSequenceTokens,
    [`${ENV_PREFIX}MODEL_REVISION`]: cls.footprint.revision,
    [`${ENV_PREFIX}MODEL_DATA_SHA256`]: cls.artifact.modelData?.sha256,
    [`${ENV_PREFIX}MODEL_DATA_VERSION_ID`]: cls.artifact.modelData?.versionId,
    // Engines without a variable mapping get their flags verbatim, for an entrypoint that passes them on.
    [`${ENV_PREFIX}ENGINE_ARGS`]: cls.runtime.engine === 'vllm' || !cls.runtime.args?.length ? undefined : cls.runtime.args.join(' '),
  });
  const derived = { ...neutral, ...engineEnvironment(cls, limits) };
  const fromArgs = cls.runtime.engine === 'vllm' ? vllmArgsEnvironment(cls, problems) : {};
  for (const key of Object.keys(fromArgs).filter((k) => k in derived)) {
    problems.push({
      className: cls.name,
      field: 'runtime.args',
      message: `sets ${key}, which the library derives from the class's runtime and footprint settings; change those settings instead`,
    });
  }
  const user = cls.runtime.env ?? {};
  for (const key of Object.keys(user).filter((k) => k in derived || k.startsWith(ENV_PREFIX))) {
    problems.push({
      className: cls.name,
      field: `runtime.env.${key}`,
      message:
        'is set by the library (derived from the class\'s runtime, footprint and envelope so that it matches the memory and ' +
        `admission checks); change those settings instead, and keep the ${ENV_PREFIX} prefix free`,
    });
  }
  return { environment: { ...user, ...fromArgs, ...derived }, problems };
}

function stringify(env: Record<string, string | number | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    // A number token cannot be rendered into a string here; string tokens pass through and resolve at deploy time.
    if (value === undefined || (typeof value === 'number' && isUnresolved(value))) continue;
    out[key] = String(value);
  }
  return out;
}
