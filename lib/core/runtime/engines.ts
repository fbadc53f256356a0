/**
 * What each model server reads, for a named version range: the flags or variables that bind a class's settings, the
 * bounded queue it enforces itself, and the HTTP status it answers when that queue is full. Every name here is taken
 * from the engine's own source or documentation (cited per entry); the tests assert rendered classes against these
 * lists, so a renamed flag fails a test instead of being silently ignored by the server.
 */

/** Model servers the library binds. `custom` gets the engine-neutral `CAI_*` variables only. */
export const ENGINES = ['vllm', 'tgi', 'djl-lmi', 'triton', 'custom'] as const;
export type EngineName = (typeof ENGINES)[number];

/** HTTP status a server answers when its own admission limit rejects a request. */
export type RejectionStatus = 429 | 503;

export interface EngineFacts {
  readonly name: EngineName;
  /** Oldest version whose flag names the library renders; older versions spell some of them differently. */
  readonly minimumVersion?: string;
  /** Oldest version with a bounded queue the library can set (undefined: none the library can set). */
  readonly boundedQueueSince?: string;
  /** Whether the class must state `runtime.engineVersion` (the flags the library renders depend on it). */
  readonly versionRequired: boolean;
  /** What the server answers when its bounded queue is full (undefined: the library does not know). */
  readonly rejectionStatus?: RejectionStatus;
  /** Liveness (process up) and readiness (model loaded) paths of the server's HTTP API. */
  readonly healthPath: string;
  readonly readyPath: string;
  /** Where the facts come from. */
  readonly sources: readonly string[];
}

export const ENGINE_FACTS: Readonly<Record<EngineName, EngineFacts>> = {
  vllm: {
    name: 'vllm',
    // `vllm serve` and --max-num-seqs/--max-num-batched-tokens/--tensor-parallel-size/--max-model-len/--gpu-memory-utilization:
    // https://docs.vllm.ai/en/v0.6.3.post1/models/engine_args.html (same names through vllm/engine/arg_utils.py at main).
    minimumVersion: '0.6.0',
    // --max-num-queued-reqs / --max-num-queued-tokens: vllm-project/vllm PR #49445 (merged 2026-07), first released in
    // v0.29.0 (release notes); enforced in AsyncLLM.check_admission, over the server as a whole, answering HTTP 503
    // (PR #56758 and issue #58192 describe the 503). Earlier releases queue without bound (issue #18826).
    boundedQueueSince: '0.29.0',
    versionRequired: true,
    rejectionStatus: 503,
    // The API server listens only once the engine (and the model) is up; /health answers 200 from then on.
    healthPath: '/health',
    readyPath: '/health',
    sources: [
      'https://docs.vllm.ai/en/v0.6.3.post1/models/engine_args.html',
      'https://github.com/vllm-project/vllm/pull/49445',
      'https://github.com/vllm-project/vllm/issues/58192',
    ],
  },
  tgi: {
    name: 'tgi',
    // launcher/src/main.rs (`#[clap(long, env)]` on every field: --max-concurrent-requests is MAX_CONCURRENT_REQUESTS, ...):
    // max_input_tokens replaced max_input_length in 2.0, so 2.0 is the oldest release these names fit.
    minimumVersion: '2.0.0',
    boundedQueueSince: '2.0.0',
    versionRequired: false,
    // router/src/server.rs: `(status = 429, description = "Model is overloaded")` past max_concurrent_requests.
    rejectionStatus: 429,
    healthPath: '/health',
    readyPath: '/health',
    sources: [
      'huggingface/text-generation-inference launcher/src/main.rs',
      'huggingface/text-generation-inference router/src/server.rs',
      'huggingface/text-generation-inference sagemaker-entrypoint.sh',
    ],
  },
  'djl-lmi': {
    name: 'djl-lmi',
    // serving/docs/lmi/deployment_guide/configurations.md: OPTION_<NAME> overrides option.<name>; option.n_positions
    // (NeuronX) since 0.26.0 (serving/docs/lmi/configurations_large_model_inference_containers.md);
    // option.gpu_memory_utilization and option.max_model_len (vLLM backend) since 0.27.0 (user_guides/vllm_user_guide.md).
    minimumVersion: '0.27.0',
    // job_queue_size ("after this limit is reached, requests will be rejected"), overridable as SERVING_JOB_QUEUE_SIZE
    // (serving/docs/configurations_global.md, DJL Serving 0.27.0). A full queue answers 503 WlmCapacityException
    // ("Worker queue capacity exceeded for model").
    boundedQueueSince: '0.27.0',
    versionRequired: false,
    rejectionStatus: 503,
    healthPath: '/ping',
    readyPath: '/ping',
    sources: [
      'deepjavalibrary/djl-serving serving/docs/lmi/deployment_guide/configurations.md',
      'deepjavalibrary/djl-serving serving/docs/configurations_global.md',
      'deepjavalibrary/djl-serving serving/docs/configurations_model.md',
    ],
  },
  triton: {
    name: 'triton',
    // tritonserver --http-port / --model-repository. Batch size and max_queue_size live in each model's config.pbtxt
    // (dynamic_batching { default_queue_policy { max_queue_size } }, server issue #6368), which the library does not
    // write: no command-line flag sets them.
    // A full queue answers 503 "exceeds maximum queue size" (NVIDIA/NeMo-Retriever issue #1077).
    versionRequired: false,
    rejectionStatus: 503,
    healthPath: '/v2/health/live',
    readyPath: '/v2/health/ready',
    sources: [
      'https://github.com/triton-inference-server/server/issues/6368',
      'https://github.com/triton-inference-server/tensorrtllm_backend/issues/412',
      'https://github.com/NVIDIA/NeMo-Retriever/issues/1077',
    ],
  },
  custom: {
    name: 'custom',
    versionRequired: false,
    healthPath: '/health',
    readyPath: '/ready',
    sources: [],
  },
};

export function isEngineName(value: string): value is EngineName {
  return (ENGINES as readonly string[]).includes(value);
}

/**
 * The status class a server's own admission rejection shows up in: `5xx` for vLLM, DJL LMI and Triton (503), `4xx`
 * for TGI (429), undefined for a custom engine. The platform's 4xx/5xx metrics (SageMaker Invocation4XXErrors /
 * Invocation5XXErrors, ALB HTTPCode_Target_4XX_Count / HTTPCode_Target_5XX_Count) count these rejections.
 */
export function rejectionStatusClass(engine: string): '4xx' | '5xx' | undefined {
  const status = isEngineName(engine) ? ENGINE_FACTS[engine].rejectionStatus : undefined;
  if (status === undefined) return undefined;
  return status >= 500 ? '5xx' : '4xx';
}

/** `X.Y.Z` (or `X.Y`, optionally with a pre-release or local suffix) as numbers, or undefined when it is not one. */
export function parseVersion(version: string): readonly [number, number, number] | undefined {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+.][0-9A-Za-z.-]+)?$/.exec(version.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : undefined;
}

/** Negative when a < b, 0 when equal, positive when a > b. Both must parse. */
export function compareVersions(a: string, b: string): number {
  const pa = parseVersion(a);
  const pb = parseVersion(b);
  if (!pa || !pb) throw new Error(`internal: cannot compare versions '${a}' and '${b}'`);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pa[i] - pb[i];
  return 0;
}
