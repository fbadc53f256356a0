/**
 * The runtime contract (lib/core/runtime): for each engine, a class rendered for SageMaker and for EKS carries
 * exactly the engine's own flags or variables, each a real name of the declared release (lists below, with sources).
 */
import fc from 'fast-check';
import {
  admissionLimits,
  bindRuntime,
  type CapacityClass,
  type CapacityClassSpec,
  defineCapacityClasses,
  ENGINE_FACTS,
  ENGINES,
  rejectionStatusClass,
  type RuntimeBinding,
} from '../../lib/core';
import { LLAMA_CONTRACT, llamaClasses } from '../util';

/**
 * vLLM 0.29.0 engine flags used here: vllm/engine/arg_utils.py (EngineArgs.add_cli_args) and
 * https://docs.vllm.ai/en/v0.6.3.post1/models/engine_args.html; --max-num-queued-reqs from vllm-project/vllm PR #49445
 * (first released in v0.29.0).
 */
const VLLM_FLAGS = new Set([
  'model',
  'port',
  'host',
  'max-num-seqs',
  'max-num-batched-tokens',
  'tensor-parallel-size',
  'max-model-len',
  'gpu-memory-utilization',
  'max-num-queued-reqs',
  'max-num-queued-tokens',
  'enable-prefix-caching',
  'quantization',
  'kv-cache-dtype',
]);
/** text-generation-launcher fields (`#[clap(long, env)]`): launcher/src/main.rs; SageMaker: sagemaker-entrypoint.sh. */
const TGI_VARIABLES = new Set([
  'MODEL_ID',
  'PORT',
  'NUM_SHARD',
  'MAX_CONCURRENT_REQUESTS',
  'MAX_TOTAL_TOKENS',
  'MAX_INPUT_TOKENS',
  'MAX_BATCH_PREFILL_TOKENS',
  'MAX_BATCH_TOTAL_TOKENS',
  'CUDA_MEMORY_FRACTION',
]);
const TGI_SAGEMAKER_VARIABLES = new Set([...TGI_VARIABLES, 'HF_MODEL_ID', 'SM_NUM_GPUS'].filter((v) => v !== 'MODEL_ID' && v !== 'NUM_SHARD' && v !== 'PORT'));
/**
 * DJL LMI: serving/docs/lmi/deployment_guide/configurations.md (OPTION_<name>), user_guides/vllm_user_guide.md
 * (option.max_model_len, option.gpu_memory_utilization >= 0.27.0), configurations_large_model_inference_containers.md
 * (option.n_positions >= 0.26.0), configurations_global.md (SERVING_<KEY>: SERVING_JOB_QUEUE_SIZE, inference_address).
 */
const DJL_VARIABLES = new Set([
  'OPTION_MODEL_ID',
  'OPTION_MAX_ROLLING_BATCH_SIZE',
  'OPTION_TENSOR_PARALLEL_DEGREE',
  'OPTION_MAX_MODEL_LEN',
  'OPTION_GPU_MEMORY_UTILIZATION',
  'OPTION_N_POSITIONS',
  'SERVING_JOB_QUEUE_SIZE',
  'SERVING_INFERENCE_ADDRESS',
]);
/** tritonserver options (docs/user_guide: --model-repository, --http-port). */
const TRITON_FLAGS = new Set(['model-repository', 'http-port']);

function classes(prefix: '' | 'ml.', change: (spec: CapacityClassSpec) => CapacityClassSpec = (s) => s): CapacityClass[] {
  return defineCapacityClasses(llamaClasses(prefix).map(change), { contract: LLAMA_CONTRACT });
}

const eks = (cls: CapacityClass) => bindRuntime(cls, LLAMA_CONTRACT, { platform: 'eks', port: 8080, modelDataPath: '/models/model' });
const sageMaker = (cls: CapacityClass) => bindRuntime(cls, LLAMA_CONTRACT, { platform: 'sagemaker', port: 8080 });

/** `--flag value` pairs of an argument list (after the positional model). */
function flagsOf(args: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) if (args[i].startsWith('--')) out[args[i].slice(2)] = args[++i];
  return out;
}

/** The variables a binding sets beyond the engine-neutral CAI_* set. */
function engineVariables(b: RuntimeBinding): Record<string, string> {
  return Object.fromEntries(Object.entries(b.env).filter(([k]) => !k.startsWith('CAI_')));
}

describe('vLLM', () => {
  test('EKS: `vllm serve <model>` flags carry batch, batch tokens, TP, max length, memory cap and the queue limit', () => {
    const [l40s] = classes('', (s) => (s.name === 'l40s' ? { ...s, runtime: { ...s.runtime, maxBatchTokens: 8192 } } : s));
    const b = eks(l40s);
    expect(b.problems).toEqual([]);
    expect(b.args[0]).toBe('/models/model');
    expect(flagsOf(b.args)).toEqual({
      port: '8080',
      'max-num-seqs': '16',
      'max-num-batched-tokens': '8192',
      'tensor-parallel-size': '1',
      'max-model-len': '8192',
      'gpu-memory-utilization': '0.9',
      'max-num-queued-reqs': '25', // 16 serving + 9 queued: admissionLimits(l40s).maxConcurrentRequests
    });
    for (const flag of Object.keys(flagsOf(b.args))) expect(VLLM_FLAGS).toContain(flag);
    expect(engineVariables(b)).toEqual({});
    expect(b.rejectionStatus).toBe(503);
  });

  test('SageMaker: the DLC variables SM_VLLM_<FLAG> for the same flags, the model at /opt/ml/model', () => {
    const [l40s] = classes('ml.');
    const b = sageMaker(l40s);
    expect(b.problems).toEqual([]);
    expect(b.args).toEqual([]);
    expect(engineVariables(b)).toEqual({
      SM_VLLM_MODEL: '/opt/ml/model',
      SM_VLLM_MAX_NUM_SEQS: '16',
      SM_VLLM_TENSOR_PARALLEL_SIZE: '1',
      SM_VLLM_MAX_MODEL_LEN: '8192',
      SM_VLLM_GPU_MEMORY_UTILIZATION: '0.9',
      SM_VLLM_MAX_NUM_QUEUED_REQS: '25',
    });
    for (const name of Object.keys(engineVariables(b))) expect(VLLM_FLAGS).toContain(name.replace(/^SM_VLLM_/, '').toLowerCase().replace(/_/g, '-'));
  });

  test('the memory cap the server gets is the one the memory check used, and changing the class changes the flags', () => {
    const bigger = (seqs: number) => (s: CapacityClassSpec) =>
      s.name === 'l40s' ? { ...s, memory: { utilizationCap: 0.85 }, runtime: { ...s.runtime, maxConcurrentSequences: seqs } } : s;
    // At a 0.85 cap the memory check admits 19 sequences on the L40S, not 20: the server gets the cap it checked.
    expect(() => classes('', bigger(20))).toThrow('lower runtime.maxConcurrentSequences to at most 19');
    const [l40s] = classes('', bigger(18));
    const f = flagsOf(eks(l40s).args);
    expect(f['gpu-memory-utilization']).toBe('0.85');
    expect(f['gpu-memory-utilization']).toBe(String(l40s.memory.utilizationCap));
    expect(f['max-num-seqs']).toBe('18');
    expect(f['max-num-queued-reqs']).toBe(String(admissionLimits(l40s, LLAMA_CONTRACT).maxConcurrentRequests));
  });

  test('user flags pass through after the derived ones; a flag the library derives is a problem', () => {
    const [l40s] = classes('', (s) => ({ ...s, runtime: { ...s.runtime, args: ['--enable-prefix-caching', '--kv-cache-dtype', 'fp8'] } }));
    expect(eks(l40s).args.slice(-3)).toEqual(['--enable-prefix-caching', '--kv-cache-dtype', 'fp8']);
    const [sm] = classes('ml.', (s) => ({ ...s, runtime: { ...s.runtime, args: ['--enable-prefix-caching', '--swap-space=4'] } }));
    expect(sageMaker(sm).env).toMatchObject({ SM_VLLM_ENABLE_PREFIX_CACHING: 'true', SM_VLLM_SWAP_SPACE: '4' });
    const [bad] = classes('', (s) => ({ ...s, runtime: { ...s.runtime, args: ['--max-num-seqs', '64'] } }));
    expect(eks(bad).problems.map((p) => p.message)).toEqual([expect.stringContaining('sets --max-num-seqs, which the library derives')]);
  });

  test('fails when the class asks for a bounded queue on a vLLM release without one (before 0.29.0)', () => {
    const [old] = classes('', (s) => ({ ...s, runtime: { ...s.runtime, engineVersion: '0.28.1' } }));
    const b = eks(old);
    expect(b.problems).toEqual([
      expect.objectContaining({
        className: 'l40s',
        field: 'runtime.queueBound',
        message: expect.stringContaining("is 'required' but vllm 0.28.1 has no bounded queue (it exists from 0.29.0)"),
      }),
    ]);
    expect(b.problems[0].message).toContain("Allowed: runtime.engineVersion 0.29.0 or later, or runtime.queueBound 'best-effort'");
    expect(flagsOf(b.args)['max-num-queued-reqs']).toBeUndefined();
  });

  test("an older release with queueBound 'best-effort' renders no queue flag and warns with the consequence", () => {
    const [old] = classes('', (s) => ({ ...s, runtime: { ...s.runtime, engineVersion: '0.28.1', queueBound: 'best-effort' } }));
    const b = eks(old);
    expect(b.problems).toEqual([]);
    expect(b.boundedQueue).toBe(false);
    expect(b.warnings).toEqual([expect.stringContaining('requests past the admission limit of 25 in flight per replica (16 serving + 9 queued)')]);
  });

  test('fails when a vLLM class states no engineVersion, or one that is not a release number', () => {
    const [none] = classes('', (s) => ({ ...s, runtime: { ...s.runtime, engineVersion: undefined } }));
    expect(eks(none).problems.map((p) => `${p.field}: ${p.message}`)).toContainEqual(expect.stringMatching(/^runtime\.engineVersion: is not set; the vllm flags/));
    const [bad] = classes('', (s) => ({ ...s, runtime: { ...s.runtime, engineVersion: 'latest' } }));
    expect(eks(bad).problems.map((p) => p.message)).toContainEqual("'latest' is not a release number; allowed: 'X.Y.Z' (e.g. '0.29.0')");
  });
});

describe('TGI', () => {
  const tgi = (prefix: '' | 'ml.') =>
    classes(prefix, (s) => ({ ...s, runtime: { ...s.runtime, engine: 'tgi', engineVersion: '3.0.0', maxBatchTokens: 8192 } }))[0];

  test('EKS: launcher variables with the admission limit as MAX_CONCURRENT_REQUESTS (429 past it)', () => {
    const b = eks(tgi(''));
    expect(b.problems).toEqual([]);
    expect(engineVariables(b)).toEqual({
      MODEL_ID: '/models/model',
      PORT: '8080',
      NUM_SHARD: '1',
      MAX_TOTAL_TOKENS: '8192',
      MAX_BATCH_PREFILL_TOKENS: '8192',
      MAX_BATCH_TOTAL_TOKENS: String(16 * 8192), // the KV cache the memory check sized
      CUDA_MEMORY_FRACTION: '0.9',
      MAX_CONCURRENT_REQUESTS: '25',
    });
    for (const name of Object.keys(engineVariables(b))) expect(TGI_VARIABLES).toContain(name);
    expect(b.rejectionStatus).toBe(429);
  });

  test('SageMaker: the Hugging Face LLM DLC names (HF_MODEL_ID, SM_NUM_GPUS; the entrypoint sets the port)', () => {
    const b = sageMaker(tgi('ml.'));
    expect(b.problems).toEqual([]);
    expect(engineVariables(b)).toEqual({
      HF_MODEL_ID: '/opt/ml/model',
      SM_NUM_GPUS: '1',
      MAX_TOTAL_TOKENS: '8192',
      MAX_BATCH_PREFILL_TOKENS: '8192',
      MAX_BATCH_TOTAL_TOKENS: String(16 * 8192),
      CUDA_MEMORY_FRACTION: '0.9',
      MAX_CONCURRENT_REQUESTS: '25',
    });
    for (const name of Object.keys(engineVariables(b))) expect(TGI_SAGEMAKER_VARIABLES).toContain(name);
  });

  test('fails when the declared TGI release is older than the flag names the library renders', () => {
    const cls = classes('', (s) => ({ ...s, runtime: { ...s.runtime, engine: 'tgi', engineVersion: '1.4.0' } }))[0];
    expect(eks(cls).problems.map((p) => p.message)).toContainEqual(expect.stringContaining('tgi 1.4.0 is older than 2.0.0'));
  });
});

describe('DJL LMI', () => {
  test('NeuronX on both platforms: rolling batch, TP degree, n_positions, the job queue holds the in-flight limit', () => {
    const inf2Eks = classes('')[2];
    const inf2Sm = classes('ml.')[2];
    const e = eks(inf2Eks);
    const s = sageMaker(inf2Sm);
    expect(e.problems).toEqual([]);
    expect(s.problems).toEqual([]);
    expect(engineVariables(e)).toEqual({
      OPTION_MODEL_ID: '/models/model',
      SERVING_INFERENCE_ADDRESS: 'http://0.0.0.0:8080',
      OPTION_MAX_ROLLING_BATCH_SIZE: '4',
      OPTION_TENSOR_PARALLEL_DEGREE: '2',
      OPTION_N_POSITIONS: '8192',
      SERVING_JOB_QUEUE_SIZE: '6',
    });
    expect(engineVariables(s)).toEqual({
      OPTION_MODEL_ID: '/opt/ml/model',
      OPTION_MAX_ROLLING_BATCH_SIZE: '4',
      OPTION_TENSOR_PARALLEL_DEGREE: '2',
      OPTION_N_POSITIONS: '8192',
      SERVING_JOB_QUEUE_SIZE: '6',
    });
    for (const name of [...Object.keys(engineVariables(e)), ...Object.keys(engineVariables(s))]) expect(DJL_VARIABLES).toContain(name);
    expect(e.args).toEqual([]);
    expect(e.rejectionStatus).toBe(503);
  });

  test('GPU: max_model_len and the memory cap instead of n_positions', () => {
    const cls = classes('', (s) => ({ ...s, runtime: { ...s.runtime, engine: 'djl-lmi', engineVersion: '0.30.0' } }))[0];
    expect(engineVariables(eks(cls))).toMatchObject({ OPTION_MAX_MODEL_LEN: '8192', OPTION_GPU_MEMORY_UTILIZATION: '0.9', SERVING_JOB_QUEUE_SIZE: '25' });
    expect(engineVariables(eks(cls)).OPTION_N_POSITIONS).toBeUndefined();
  });
});

describe('Triton and custom engines', () => {
  test('Triton on EKS: tritonserver with the model repository and port; its queue lives in config.pbtxt', () => {
    const cls = classes('', (s) => ({
      ...s,
      artifact: { image: s.artifact.image },
      runtime: { ...s.runtime, engine: 'triton', engineVersion: undefined, modelPath: '/opt/models', queueBound: 'best-effort' },
    }))[0];
    const b = eks(cls);
    expect(b.problems).toEqual([]);
    expect(b.args).toEqual(['tritonserver', '--model-repository=/opt/models', '--http-port=8080']);
    for (const arg of b.args.slice(1)) expect(TRITON_FLAGS).toContain(arg.slice(2).split('=')[0]);
    expect([b.healthPath, b.readyPath]).toEqual(['/v2/health/live', '/v2/health/ready']);
    expect(b.warnings).toEqual([expect.stringContaining("Triton's bounded queue is max_queue_size in each model's config.pbtxt")]);
  });

  test('custom: the engine-neutral variables only, on both platforms; without best-effort it fails', () => {
    const change = (s: CapacityClassSpec): CapacityClassSpec => ({ ...s, runtime: { ...s.runtime, engine: 'custom', engineVersion: undefined, queueBound: 'best-effort' } });
    const e = eks(classes('', change)[0]);
    const s = sageMaker(classes('ml.', change)[0]);
    expect(engineVariables(e)).toEqual({});
    expect(engineVariables(s)).toEqual({});
    expect(e.args).toEqual([]);
    const strict = eks(classes('', (x) => ({ ...x, runtime: { ...x.runtime, engine: 'custom', engineVersion: undefined } }))[0]);
    expect(strict.problems.map((p) => p.field)).toEqual(['runtime.queueBound']);
  });

  test('fails when the engine is unknown, naming the value and the allowed engines', () => {
    const b = eks(classes('', (s) => ({ ...s, runtime: { ...s.runtime, engine: 'neuronx-distributed-inference' } }))[0]);
    expect(b.problems).toEqual([
      {
        className: 'l40s',
        field: 'runtime.engine',
        message:
          "'neuronx-distributed-inference' is not an engine the library can bind; allowed: vllm, tgi, djl-lmi, triton, custom " +
          "('custom' gets only the engine-neutral CAI_* variables, which the image must read itself)",
      },
    ]);
  });

  test('fails on EKS when the server has no model to load (no model data, no modelPath)', () => {
    const b = eks(classes('', (s) => ({ ...s, artifact: { image: s.artifact.image } }))[0]);
    expect(b.problems.map((p) => p.field)).toEqual(['runtime.modelPath']);
  });
});

describe('the engine-neutral variables', () => {
  test('one set, the same names and values on SageMaker and EKS (but the model path)', () => {
    const neutral = (b: RuntimeBinding) => Object.fromEntries(Object.entries(b.env).filter(([k]) => k.startsWith('CAI_') && k !== 'CAI_MODEL_PATH'));
    for (const i of [0, 1, 2]) expect(neutral(eks(classes('')[i]))).toEqual(neutral(sageMaker(classes('ml.')[i])));
    expect(neutral(eks(classes('')[0]))).toEqual({
      CAI_SERVICE: 'llama3-chat',
      CAI_CLASS: 'l40s',
      CAI_ENGINE: 'vllm',
      CAI_ENGINE_VERSION: '0.29.0',
      CAI_PORT: '8080',
      CAI_MAX_CONCURRENT_SEQUENCES: '16',
      CAI_TENSOR_PARALLEL_DEGREE: '1',
      CAI_MAX_SEQUENCE_TOKENS: '8192',
      CAI_MEMORY_UTILIZATION_CAP: '0.9',
      CAI_CONCURRENCY_LIMIT: '16',
      CAI_QUEUE_SLOTS: '9',
      CAI_MAX_CONCURRENT_REQUESTS: '25',
      CAI_QUEUE_BUDGET_MS: '2000',
      CAI_DEADLINE_MS: '30000',
      CAI_MODEL_REVISION: 'meta-llama/Meta-Llama-3-8B-Instruct@5f0b02c',
      CAI_MODEL_DATA_URI: 's3://models-bucket/llama3-8b/bf16.tar',
      CAI_MODEL_DATA_SHA256: 'a'.repeat(64),
      CAI_MODEL_DATA_VERSION_ID: 'v1',
    });
  });

  test('fails when runtime.env sets a derived or CAI_ variable', () => {
    const b = eks(classes('', (s) => ({ ...s, runtime: { ...s.runtime, env: { CAI_CLASS: 'x', HF_HUB_OFFLINE: '1' } } }))[0]);
    expect(b.problems.map((p) => p.field)).toEqual(['runtime.env.CAI_CLASS']);
    expect(b.env.HF_HUB_OFFLINE).toBe('1');
  });
});

describe('engine facts', () => {
  test('rejection status class per engine: what the reconciler counts as rejected', () => {
    expect(ENGINES.map((e) => [e, rejectionStatusClass(e)])).toEqual([
      ['vllm', '5xx'],
      ['tgi', '4xx'],
      ['djl-lmi', '5xx'],
      ['triton', '5xx'],
      ['custom', undefined],
    ]);
    expect(rejectionStatusClass('unknown')).toBeUndefined();
  });

  test('every engine but custom names its sources', () => {
    for (const e of ENGINES.filter((x) => x !== 'custom')) expect(ENGINE_FACTS[e].sources.length).toBeGreaterThan(0);
  });

  test('property: the queue limit the server gets is always the admission limit (serving + queued), never below serving', () => {
    const [l40s] = classes('');
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 20000 }), fc.integer({ min: 1, max: 16 }), (delay, safe) => {
        const cls = { ...l40s, runtime: { ...l40s.runtime, maxQueueDelayMs: delay }, envelope: { ...l40s.envelope, safeConcurrency: safe } };
        const limits = admissionLimits(cls, LLAMA_CONTRACT);
        const queued = Number(flagsOf(eks(cls).args)['max-num-queued-reqs']);
        return queued === limits.maxConcurrentRequests && queued === limits.concurrencyLimit + limits.queueSlots && queued >= safe;
      }),
      { seed: 7 },
    );
  });
});
