/**
 * The runtime contract (lib/core/runtime): for each engine, a class rendered for SageMaker and for EKS carries
 * exactly the engine's own flags or variables, each a real name of the declared release (lists below, with sources).
 */
import fc from 'fast-check';
import { admissionLimits } from '../../lib/core/runtime/admission';
import { bindRuntime, type RuntimeBinding } from '../../lib/core/runtime/binding';
import { ENGINE_FACTS, ENGINES, rejectionStatusClass } from '../../lib/core/runtime/engines';
import { ENGINE_FACT_TABLE, type FactSubject } from '../../lib/core/runtime/facts';
import { servesAfterSigtermSeconds, SHUTDOWN_FACTS, VLLM_EXIT_MARGIN_SECONDS, vllmShutdownTimeoutSeconds } from '../../lib/core/runtime/shutdown';
import { type CapacityClass, type CapacityClassSpec } from '../../lib/core/service/capacity-class';
import { defineCapacityClasses } from '../../lib/core/service/checks';
import { LLAMA_CONTRACT, llamaClasses } from '../util';

/** Names the facts tables (lib/core/runtime/facts.ts, shutdown.ts) hold for an engine: what every rendered name is checked against. */
function factNames(subject: FactSubject | 'any-engine', kind: 'flag' | 'variable'): Set<string> {
  return new Set([...ENGINE_FACT_TABLE, ...SHUTDOWN_FACTS].filter((f) => (f.subject === subject || f.subject === 'any-engine') && f.kind === kind).map((f) => f.name));
}
const VLLM_FLAGS = new Set([...factNames('vllm', 'flag'), 'enable-prefix-caching', 'kv-cache-dtype', 'quantization', 'swap-space']);
const TGI_VARIABLES = new Set([...factNames('tgi', 'variable'), ...factNames('any-engine', 'variable')]);
const DJL_VARIABLES = new Set([...factNames('djl-lmi', 'variable'), ...factNames('any-engine', 'variable')]);
const TRITON_FLAGS = factNames('triton', 'flag');
const CACHE_EKS = { HOME: '/models/cache', XDG_CACHE_HOME: '/models/cache/.cache' };
const CACHE_SM = { HOME: '/tmp/cai-cache', XDG_CACHE_HOME: '/tmp/cai-cache/.cache' };

function classes(prefix: '' | 'ml.', change: (spec: CapacityClassSpec) => CapacityClassSpec = (s) => s): CapacityClass[] {
  return defineCapacityClasses(llamaClasses(prefix).map(change), { contract: LLAMA_CONTRACT });
}

const eks = (cls: CapacityClass) => bindRuntime(cls, LLAMA_CONTRACT, { platform: 'eks', port: 8080, modelDataPath: '/models/model', cacheDir: '/models/cache' });
const sageMaker = (cls: CapacityClass) => bindRuntime(cls, LLAMA_CONTRACT, { platform: 'sagemaker', port: 8080 });

/** `--flag value` pairs of an argument list. */
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
  test('EKS: the positional model and flags carry batch, batch tokens, TP, max length, memory cap and both admission caps', () => {
    const [l40s] = classes('', (s) => (s.name === 'l40s' ? { ...s, runtime: { ...s.runtime, maxBatchTokens: 8192 } } : s));
    const b = eks(l40s);
    expect(b.problems).toEqual([]);
    // The model first and positional, never --model, which `vllm serve` deprecates (fact vllm.argument.model_tag).
    expect(b.args.slice(0, 2)).toEqual(['/models/model', '--port']);
    expect(b.args.filter((a) => a === '--model' || a.startsWith('--model='))).toEqual([]);
    expect(flagsOf(b.args)).toEqual({
      port: '8080',
      'max-num-seqs': '16',
      'max-num-batched-tokens': '8192',
      'tensor-parallel-size': '1',
      'max-model-len': '8192',
      'gpu-memory-utilization': '0.9',
      'max-num-queued-reqs': '25', // 16 serving + 9 queued: admissionLimits(l40s).maxConcurrentRequests
      // 16 mean prompts of 1000 tokens prefilled within 900 ms, over the 2 s queue budget + 0.9 s TTFT
      'max-num-queued-tokens': '51555',
      // What it holds at SIGTERM may run for the deadline (30 s) less vLLM's exit margin (5 s) instead of being aborted
      // (the default 0): the kubelet's SIGKILL comes a deadline after SIGTERM.
      'shutdown-timeout': '25',
    });
    for (const flag of Object.keys(flagsOf(b.args))) expect(VLLM_FLAGS).toContain(flag);
    // The server keeps idle connections longer than any ALB's idle timeout (at most 4000 s), so the ALB never reuses
    // one the server is closing.
    expect(engineVariables(b)).toEqual({
      ...CACHE_EKS, VLLM_CACHE_ROOT: '/models/cache/.cache/vllm', HF_HOME: '/models/cache/.cache/huggingface', VLLM_HTTP_TIMEOUT_KEEP_ALIVE: '4005',
    });
    // A keep-alive of the user's own is theirs to choose (no check derives it).
    const own = eks(classes('', (s) => ({ ...s, runtime: { ...s.runtime, env: { VLLM_HTTP_TIMEOUT_KEEP_ALIVE: '900' } } }))[0]);
    expect([own.problems, own.env.VLLM_HTTP_TIMEOUT_KEEP_ALIVE]).toEqual([[], '900']);
    expect(b.rejectionStatus).toBe(503);
    expect(b.admission).toEqual({
      maxInFlight: 25, maxQueuedPromptTokens: 51555, holdsUnderBursts: false, countsSequences: true, rejectionStatus: 503,
    });
  });

  test('SageMaker: the DLC variables SM_VLLM_<FLAG> for the same flags, the model at /opt/ml/model', () => {
    const [l40s] = classes('ml.');
    const b = sageMaker(l40s);
    expect(b.problems).toEqual([]);
    expect(b.args).toEqual([]);
    expect(engineVariables(b)).toEqual({
      ...CACHE_SM,
      VLLM_CACHE_ROOT: '/tmp/cai-cache/.cache/vllm',
      HF_HOME: '/tmp/cai-cache/.cache/huggingface',
      SM_VLLM_MODEL: '/opt/ml/model',
      SM_VLLM_MAX_NUM_SEQS: '16',
      SM_VLLM_TENSOR_PARALLEL_SIZE: '1',
      SM_VLLM_MAX_MODEL_LEN: '8192',
      SM_VLLM_GPU_MEMORY_UTILIZATION: '0.9',
      SM_VLLM_MAX_NUM_QUEUED_REQS: '25',
      SM_VLLM_MAX_NUM_QUEUED_TOKENS: '51555',
      // SageMaker sends SIGKILL 30 s after SIGTERM: requests finish up to then, less vLLM's exit margin, instead of
      // being aborted.
      SM_VLLM_SHUTDOWN_TIMEOUT: '25',
    });
    const dlc = Object.keys(engineVariables(b)).filter((k) => k.startsWith('SM_VLLM_'));
    for (const name of dlc) expect(VLLM_FLAGS).toContain(name.replace(/^SM_VLLM_/, '').toLowerCase().replace(/_/g, '-'));
  });

  test('how long a server serves what it holds after SIGTERM: vLLM its rendered drain, TGI its own up to the SIGKILL, others until the SIGKILL', () => {
    // vLLM: exactly the --shutdown-timeout the binding renders (what the simulator ends a removed instance's requests at).
    for (const deadlineMs of [30000, 8000, 120000]) {
      for (const platform of ['eks', 'sagemaker'] as const) {
        expect(servesAfterSigtermSeconds('vllm', deadlineMs / 1000, platform))
          .toBe(vllmShutdownTimeoutSeconds({ ...LLAMA_CONTRACT, slo: { ...LLAMA_CONTRACT.slo, deadlineMs } }, platform));
      }
    }
    // SageMaker's SIGKILL 30 s after SIGTERM caps TGI's 90 s drain and bounds an engine whose stop is not read.
    expect(servesAfterSigtermSeconds('tgi', 30, 'sagemaker')).toBe(30);
    expect(servesAfterSigtermSeconds('djl-lmi', 30, 'sagemaker')).toBe(30);
    expect(servesAfterSigtermSeconds('djl-lmi', 10, 'sagemaker')).toBe(30);
    // EKS: the kubelet's SIGKILL a deadline after SIGTERM; TGI drains up to its 90 s within it.
    expect(servesAfterSigtermSeconds('tgi', 120, 'eks')).toBe(90);
    expect(servesAfterSigtermSeconds('triton', 45.5, 'eks')).toBe(46);
  });

  test("--shutdown-timeout leaves vLLM's exit margin before the SIGKILL, and never drains less than min(deadline, margin)", () => {
    // vLLM allows its engine max(timeout, 5) s to stop (vllm-project/vllm#34730): the margin is those 5 s.
    expect(VLLM_EXIT_MARGIN_SECONDS).toBe(5);
    const timeout = (deadlineMs: number, platform: 'eks' | 'sagemaker') =>
      vllmShutdownTimeoutSeconds({ ...LLAMA_CONTRACT, slo: { ...LLAMA_CONTRACT.slo, deadlineMs } }, platform);
    // EKS: the SIGKILL comes a deadline after SIGTERM (grace = preStop + deadline), so the margin comes off the deadline.
    expect([30000, 95500, 10000, 8000, 5000, 3000, 500].map((d) => timeout(d, 'eks'))).toEqual([25, 91, 5, 5, 5, 3, 1]);
    // SageMaker: the SIGKILL comes 30 s after SIGTERM (fact sagemaker.behaviour.container-stop), whatever the deadline.
    expect([120000, 30000, 26000, 25000, 8000, 3000].map((d) => timeout(d, 'sagemaker'))).toEqual([25, 25, 25, 25, 8, 3]);
    fc.assert(fc.property(fc.integer({ min: 1, max: 3_600_000 }), fc.constantFrom('eks' as const, 'sagemaker' as const), (deadlineMs, platform) => {
      const deadline = Math.ceil(deadlineMs / 1000);
      const killAfter = platform === 'eks' ? deadline : 30;
      const t = timeout(deadlineMs, platform);
      // Never beyond what a request may need, never 0 (abort everything), the margin kept wherever a drain of at least
      // the margin leaves it.
      expect(t).toBeLessThanOrEqual(deadline);
      expect(t).toBeGreaterThanOrEqual(Math.min(deadline, VLLM_EXIT_MARGIN_SECONDS));
      if (killAfter >= 2 * VLLM_EXIT_MARGIN_SECONDS) expect(killAfter - t).toBeGreaterThanOrEqual(VLLM_EXIT_MARGIN_SECONDS);
    }));
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
    // A bare flag is an empty value: the DLC appends any non-empty value after the flag, so `true` would reach argparse
    // as an argument (fact vllm.entrypoint.sagemaker-variables).
    const [sm] = classes('ml.', (s) => ({ ...s, runtime: { ...s.runtime, args: ['--enable-prefix-caching', '--swap-space=4'] } }));
    expect(sageMaker(sm).env).toMatchObject({ SM_VLLM_ENABLE_PREFIX_CACHING: '', SM_VLLM_SWAP_SPACE: '4' });
    const [bad] = classes('', (s) => ({ ...s, runtime: { ...s.runtime, args: ['--max-num-seqs', '64'] } }));
    expect(eks(bad).problems.map((p) => p.message)).toEqual([expect.stringContaining('sets --max-num-seqs, which the library derives')]);
  });

  test('a model of the user\'s own in runtime.args is refused: --model (either form) or a positional model', () => {
    const withArgs = (prefix: '' | 'ml.', args: string[]) => classes(prefix, (s) => ({ ...s, runtime: { ...s.runtime, args } }))[0];
    // EKS: `vllm serve` would move --model to the front beside the library's positional model, and argparse exits.
    for (const args of [['--model', '/other'], ['--model=/other']]) {
      expect(eks(withArgs('', args)).problems).toEqual([{ className: 'l40s', field: 'runtime.args', message:
        'sets --model, but the library passes the model (artifact.modelData or runtime.modelPath) as the positional model of `vllm serve`, ' +
        'and a second model stops the server at start; allowed: the model through those settings, and no --model' }]);
    }
    expect(eks(withArgs('', ['/other', '--enforce-eager'])).problems.map((p) => [p.field, p.message])).toEqual([
      ['runtime.args[0]', "'/other' is not a flag; give each as --name, --name=value or --name value"],
    ]);
    // SageMaker: SM_VLLM_MODEL is the library's.
    expect(sageMaker(withArgs('ml.', ['--model', '/other'])).problems.map((p) => p.message)).toEqual([expect.stringContaining('sets --model, which the library derives')]);
  });

  test('fails when runtime.args sets --shutdown-timeout, which the library derives from the deadline and the SIGKILL', () => {
    const [own] = classes('', (s) => ({ ...s, runtime: { ...s.runtime, args: ['--shutdown-timeout', '120'] } }));
    expect(eks(own).problems.map((p) => p.message)).toEqual([expect.stringContaining('sets --shutdown-timeout, which the library derives')]);
  });

  test('fails when the vLLM release is older than 0.29.0, the floor every rendered name and metric is cited at', () => {
    const [old] = classes('', (s) => ({ ...s, runtime: { ...s.runtime, engineVersion: '0.28.1' } }));
    const b = eks(old);
    expect(b.problems).toEqual([
      expect.objectContaining({ className: 'l40s', field: 'runtime.engineVersion', message: expect.stringContaining('vllm 0.28.1 is older than 0.29.0') }),
      expect.objectContaining({
        className: 'l40s',
        field: 'runtime.queueBound',
        message: expect.stringContaining("is 'required' but vllm 0.28.1 has no bounded queue (it exists from 0.29.0)"),
      }),
    ]);
    expect(b.problems[1].message).toContain("Allowed: runtime.engineVersion 0.29.0 or later, or runtime.queueBound 'best-effort'");
    expect(flagsOf(b.args)['max-num-queued-reqs']).toBeUndefined();
    // 0.6 images started `python3 -m vllm.entrypoints.openai.api_server` and had no kv_cache_usage_perc.
    expect(eks(classes('', (s) => ({ ...s, runtime: { ...s.runtime, engineVersion: '0.6.0', queueBound: 'best-effort' } }))[0]).problems)
      .toEqual([expect.objectContaining({ field: 'runtime.engineVersion', message: expect.stringContaining('older than 0.29.0') })]);
  });

  test("queueBound 'best-effort' on an engine without a bound the library sets renders no queue and warns with the consequence", () => {
    const [triton] = classes('', (s) => ({
      ...s, artifact: { image: s.artifact.image }, runtime: { ...s.runtime, engine: 'triton', engineVersion: undefined, modelPath: '/m', queueBound: 'best-effort' },
    }));
    const b = eks(triton);
    expect(b.problems).toEqual([]);
    expect(b.boundedQueue).toBe(false);
    expect(b.admission.maxInFlight).toBeUndefined();
    expect(b.warnings).toEqual([
      { topic: 'unbounded-queue', message: expect.stringContaining('requests past the admission limit of 25 in flight per replica (16 serving + 9 queued)') },
    ]);
  });

  test('fails when a vLLM class states no engineVersion, or one that is not a release number', () => {
    const [none] = classes('', (s) => ({ ...s, runtime: { ...s.runtime, engineVersion: undefined } }));
    expect(eks(none).problems.map((p) => `${p.field}: ${p.message}`)).toContainEqual(expect.stringMatching(/^runtime\.engineVersion: is not set; the vllm flags/));
    const [bad] = classes('', (s) => ({ ...s, runtime: { ...s.runtime, engineVersion: 'latest' } }));
    expect(eks(bad).problems.map((p) => p.message)).toContainEqual("'latest' is not a release number; allowed: 'X.Y.Z' (e.g. '0.29.0')");
  });

  test('fails when the batch token budget is below the batch size (vLLM refuses to start), on both platforms', () => {
    const [cls] = classes('', (s) => ({ ...s, runtime: { ...s.runtime, maxBatchTokens: 8 } }));
    const message = 'is 8, below runtime.maxConcurrentSequences (16); vLLM refuses to start when --max-num-batched-tokens < --max-num-seqs '
      + '(vllm.flag.max-num-batched-tokens); allowed: 16 or more, or unset';
    expect(eks(cls).problems).toEqual([expect.objectContaining({ field: 'runtime.maxBatchTokens', message })]);
    const [ml] = classes('ml.', (s) => ({ ...s, runtime: { ...s.runtime, maxBatchTokens: 8 } }));
    expect(sageMaker(ml).problems).toEqual([expect.objectContaining({ field: 'runtime.maxBatchTokens', message })]);
    const [equal] = classes('', (s) => ({ ...s, runtime: { ...s.runtime, maxBatchTokens: 16 } }));
    expect(eks(equal).problems).toEqual([]);
  });
});

describe('TGI', () => {
  const tgi = (prefix: '' | 'ml.') =>
    classes(prefix, (s) => ({ ...s, runtime: { ...s.runtime, engine: 'tgi', engineVersion: '3.0.0', maxBatchTokens: 8192 } }))[0];

  test('EKS: launcher variables with a batch-size bound, an input-token bound and the admission limit (429 past it)', () => {
    const b = eks(tgi(''));
    expect(b.problems).toEqual([]);
    expect(engineVariables(b)).toEqual({
      ...CACHE_EKS,
      HF_HOME: '/models/cache/.cache/huggingface', // the image's HF_HOME=/data is not writable under a read-only root
      MODEL_ID: '/models/model',
      PORT: '8080',
      NUM_SHARD: '1',
      MAX_TOTAL_TOKENS: '8192',
      MAX_INPUT_TOKENS: '8191', // < MAX_TOTAL_TOKENS; 2.0 would default it from the model and may exit
      MAX_BATCH_PREFILL_TOKENS: '8192',
      MAX_BATCH_SIZE: '16', // flash-attention models ignore MAX_BATCH_TOTAL_TOKENS: this bounds the batch
      MAX_BATCH_TOTAL_TOKENS: String(16 * 8192), // the KV cache the memory check sized (non-flash models)
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
      ...CACHE_SM,
      HF_HOME: '/tmp/cai-cache/.cache/huggingface',
      HF_MODEL_ID: '/opt/ml/model',
      SM_NUM_GPUS: '1',
      MAX_TOTAL_TOKENS: '8192',
      MAX_INPUT_TOKENS: '8191',
      MAX_BATCH_PREFILL_TOKENS: '8192',
      MAX_BATCH_SIZE: '16',
      MAX_BATCH_TOTAL_TOKENS: String(16 * 8192),
      CUDA_MEMORY_FRACTION: '0.9',
      MAX_CONCURRENT_REQUESTS: '25',
    });
    for (const name of Object.keys(engineVariables(b))) {
      const fact = ENGINE_FACT_TABLE.find((f) => f.name === name && (f.subject === 'tgi' || f.subject === 'any-engine'));
      expect(fact?.platforms ?? ['sagemaker']).toContain('sagemaker');
    }
  });

  test('fails when the declared TGI release is older than the flag names the library renders', () => {
    const cls = classes('', (s) => ({ ...s, runtime: { ...s.runtime, engine: 'tgi', engineVersion: '1.4.0' } }))[0];
    expect(eks(cls).problems.map((p) => p.message)).toContainEqual(expect.stringContaining('tgi 1.4.0 is older than 2.0.0'));
  });

  test('fails when the prefill budget is below the longest prompt (TGI refuses to start)', () => {
    const cls = classes('', (s) => ({ ...s, runtime: { ...s.runtime, engine: 'tgi', engineVersion: '2.0.4', maxBatchTokens: 4096 } }))[0];
    expect(eks(cls).problems).toEqual([
      expect.objectContaining({ field: 'runtime.maxBatchTokens', message: expect.stringContaining('is 4096, below the longest prompt TGI admits (MAX_INPUT_TOKENS = footprint.maxSequenceTokens - 1 = 8191)') }),
    ]);
  });

  test('fails when the prefill budget is above the batch token budget it renders (TGI refuses to start)', () => {
    const cls = classes('', (s) => ({ ...s, runtime: { ...s.runtime, engine: 'tgi', engineVersion: '2.0.4', maxBatchTokens: 200_000 } }))[0];
    expect(eks(cls).problems).toEqual([expect.objectContaining({
      field: 'runtime.maxBatchTokens',
      message: 'is 200000, above the batch token budget TGI is given (MAX_BATCH_TOTAL_TOKENS = runtime.maxConcurrentSequences x footprint.maxSequenceTokens '
        + '= 131072); TGI 2.x, and 3.x for models without flash attention, refuse to start when MAX_BATCH_PREFILL_TOKENS > MAX_BATCH_TOTAL_TOKENS, '
        + 'and no prefill batch of MAX_BATCH_SIZE prompts could use more (tgi.variable.MAX_BATCH_TOTAL_TOKENS); allowed: 8191 to 131072, or unset',
    })]);
    // The budget itself is accepted.
    const atBudget = classes('', (s) => ({ ...s, runtime: { ...s.runtime, engine: 'tgi', engineVersion: '2.0.4', maxBatchTokens: 131_072 } }))[0];
    expect(eks(atBudget).problems).toEqual([]);
  });

  test('runtime.args: appended on EKS; refused on SageMaker, whose entrypoint passes none, naming the variable of each option', () => {
    const withArgs = (prefix: '' | 'ml.', args: string[]) => classes(prefix, (s) => ({ ...s, runtime: { ...s.runtime, engine: 'tgi', engineVersion: '3.3.7', args } }))[0];
    const e = eks(withArgs('', ['--max-waiting-tokens', '10', '--disable-custom-kernels']));
    expect(e.problems).toEqual([]);
    expect(e.args).toEqual(['--max-waiting-tokens', '10', '--disable-custom-kernels']);
    const s = sageMaker(withArgs('ml.', ['--max-waiting-tokens=10', '--disable-custom-kernels', '--max-batch-size', '4']));
    expect(s.problems).toEqual([{
      className: 'l40s',
      field: 'runtime.args',
      message: 'are ["--max-waiting-tokens=10","--disable-custom-kernels","--max-batch-size","4"], but TGI\'s SageMaker entrypoint runs ' +
        "text-generation-launcher --port 8080 without the container's arguments, so they would be lost (tgi.entrypoint.sagemaker); every launcher " +
        'option is also a variable (tgi.entrypoint.launcher-variables), so allowed: none, and runtime.env instead: MAX_WAITING_TOKENS=10, ' +
        "DISABLE_CUSTOM_KERNELS=true, --max-batch-size is derived by the library (change the class's settings)",
    }]);
    // Nothing of them reaches the container: no CAI_ENGINE_ARGS that no TGI entrypoint reads.
    expect(s.env.CAI_ENGINE_ARGS).toBeUndefined();
  });

  test('runtime.args on EKS: refused with whitespace or a glob character, which tgi-entrypoint.sh would split or expand ($@ unquoted)', () => {
    const b = eks(classes('', (s) => ({ ...s, runtime: { ...s.runtime, engine: 'tgi', engineVersion: '3.3.7', args: ['--json-output', '--otlp-service-name', 'my service'] } }))[0]);
    expect(b.problems).toEqual([expect.objectContaining({
      field: 'runtime.args',
      message: expect.stringContaining('["my service"] would reach the server split at whitespace or expanded as a glob, because the TGI image\'s tgi-entrypoint.sh'),
    })]);
  });

  test('fails on SageMaker when the TGI entrypoint would have no HF_MODEL_ID (no model data, no modelPath)', () => {
    const cls = classes('ml.', (s) => ({ ...s, artifact: { image: s.artifact.image }, runtime: { ...s.runtime, engine: 'tgi', engineVersion: '3.3.7' } }))[0];
    expect(sageMaker(cls).problems.map((p) => `${p.field}: ${p.message}`)).toEqual([
      expect.stringMatching(/^runtime\.modelPath: is not set and the class has no artifact.modelData, so tgi on SageMaker has no model to load/),
    ]);
    const hub = classes('ml.', (s) => ({ ...s, artifact: { image: s.artifact.image }, runtime: { ...s.runtime, engine: 'tgi', engineVersion: '3.3.7', env: { HF_MODEL_ID: 'meta-llama/Meta-Llama-3-8B-Instruct' } } }))[0];
    expect(sageMaker(hub).problems).toEqual([]);
    // vLLM's DLC reads only SM_VLLM_*: HF_MODEL_ID does not name its model.
    const vllm = classes('ml.', (s) => ({ ...s, artifact: { image: s.artifact.image }, runtime: { ...s.runtime, env: { HF_MODEL_ID: 'meta-llama/Meta-Llama-3-8B-Instruct' } } }))[0];
    expect(sageMaker(vllm).problems.map((p) => p.message)).toEqual([expect.stringContaining('so vllm on SageMaker gets no SM_VLLM_MODEL')]);
  });
});

describe('DJL LMI', () => {
  test('NeuronX up to 0.34: explicit rolling batch (auto becomes tnx), and the job queue beside the batch holds the rest of the limit', () => {
    const inf2Eks = classes('')[2];
    const inf2Sm = classes('ml.')[2];
    const e = eks(inf2Eks);
    const s = sageMaker(inf2Sm);
    expect(e.problems).toEqual([]);
    expect(s.problems).toEqual([]);
    const djlCache = (dir: string) => ({ HOME: dir, XDG_CACHE_HOME: `${dir}/.cache`, DJL_CACHE_DIR: `${dir}/.djl.ai`, HF_HOME: `${dir}/.cache/huggingface`, NEURON_COMPILE_CACHE_URL: `${dir}/neuron-compile-cache` });
    expect(engineVariables(e)).toEqual({
      ...djlCache('/models/cache'),
      OPTION_MODEL_ID: '/models/model',
      SERVING_INFERENCE_ADDRESS: 'http://0.0.0.0:8080',
      OPTION_ROLLING_BATCH: 'auto',
      OPTION_MAX_ROLLING_BATCH_SIZE: '4',
      OPTION_TENSOR_PARALLEL_DEGREE: '2',
      OPTION_N_POSITIONS: '8192',
      // The worker takes jobs off the queue into the rolling batch: in flight = 4 in the batch + 2 queued = the limit of 6.
      SERVING_JOB_QUEUE_SIZE: '2',
    });
    expect(engineVariables(s)).toEqual({
      ...djlCache('/tmp/cai-cache'),
      OPTION_MODEL_ID: '/opt/ml/model',
      OPTION_ROLLING_BATCH: 'auto',
      OPTION_MAX_ROLLING_BATCH_SIZE: '4',
      OPTION_TENSOR_PARALLEL_DEGREE: '2',
      OPTION_N_POSITIONS: '8192',
      SERVING_JOB_QUEUE_SIZE: '2',
    });
    for (const name of [...Object.keys(engineVariables(e)), ...Object.keys(engineVariables(s))]) expect(DJL_VARIABLES).toContain(name);
    expect(e.args).toEqual([]);
    expect(e.rejectionStatus).toBe(503);
    expect(e.admission).toEqual({ maxInFlight: 6, jobQueueSize: 2, holdsUnderBursts: true, countsSequences: false, rejectionStatus: 503 });
  });

  test('GPU before 0.35: max_model_len and the memory cap, the default rolling batch, a job queue of limit - batch', () => {
    const cls = classes('', (s) => ({ ...s, runtime: { ...s.runtime, engine: 'djl-lmi', engineVersion: '0.30.0' } }))[0];
    expect(engineVariables(eks(cls))).toMatchObject({ OPTION_MAX_MODEL_LEN: '8192', OPTION_GPU_MEMORY_UTILIZATION: '0.9', SERVING_JOB_QUEUE_SIZE: '9' });
    expect(engineVariables(eks(cls)).OPTION_N_POSITIONS).toBeUndefined();
    expect(engineVariables(eks(cls)).OPTION_ROLLING_BATCH).toBeUndefined();
    expect(engineVariables(eks(cls)).OPTION_ASYNC_MODE).toBeUndefined();
  });

  test('GPU from 0.35: async mode (the default, unbounded) turned off and rolling batch vllm, so the job queue bounds', () => {
    const cls = classes('', (s) => ({ ...s, runtime: { ...s.runtime, engine: 'djl-lmi', engineVersion: '0.35.0' } }))[0];
    const b = eks(cls);
    expect(b.problems).toEqual([]);
    expect(engineVariables(b)).toMatchObject({ OPTION_ASYNC_MODE: 'false', OPTION_ROLLING_BATCH: 'vllm', OPTION_MAX_ROLLING_BATCH_SIZE: '16', SERVING_JOB_QUEUE_SIZE: '9' });
    expect(b.admission.maxInFlight).toBe(25);
  });

  test('refuses SERVING_WAIT_MODEL_LOADING other than true: /ping, the readiness path, would answer while the model loads', () => {
    const djl = (env: Record<string, string>) => classes('', (s) => ({ ...s, runtime: { ...s.runtime, engine: 'djl-lmi', engineVersion: '0.30.0', env } }))[0];
    for (const bind of [eks, sageMaker]) {
      expect(bind(djl({ SERVING_WAIT_MODEL_LOADING: 'false' })).problems).toEqual([expect.objectContaining({
        field: 'runtime.env.SERVING_WAIT_MODEL_LOADING', message: expect.stringContaining("is 'false', which lets DJL answer its readiness path (/ping) before the model is loaded"),
      })]);
      // DJL reads it with Boolean.parseBoolean: only "true" (any case) keeps the wait.
      expect(bind(djl({ SERVING_WAIT_MODEL_LOADING: '1' })).problems.map((p) => p.field)).toEqual(['runtime.env.SERVING_WAIT_MODEL_LOADING']);
      expect(bind(djl({ SERVING_WAIT_MODEL_LOADING: 'TRUE' })).problems).toEqual([]);
      expect(bind(djl({})).problems).toEqual([]);
    }
  });

  test('a batch at or above the limit still gets a job queue of one: the server admits batch + 1', () => {
    const cls = classes('', (s) => ({ ...s, runtime: { ...s.runtime, engine: 'djl-lmi', engineVersion: '0.30.0' }, envelope: { ...s.envelope, safeConcurrency: 4, tokensPerSecondPerReplica: 100 } }))[0];
    const b = eks(cls);
    expect(b.limits.maxConcurrentRequests).toBeLessThan(16);
    expect(engineVariables(b).SERVING_JOB_QUEUE_SIZE).toBe('1');
    expect(b.admission.maxInFlight).toBe(17);
  });

  test('fails when a NeuronX class of 0.35.0 or later asks for a bounded queue (its rolling batch is not confirmed)', () => {
    const cls = classes('', (s) => (s.name === 'inf2' ? { ...s, runtime: { ...s.runtime, engineVersion: '0.35.0' } } : s))[2];
    expect(eks(cls).problems).toEqual([
      expect.objectContaining({ field: 'runtime.queueBound', message: expect.stringContaining('djl-lmi 0.35.0 on NeuronX: which rolling batch its image runs is not confirmed') }),
    ]);
    expect(eks(cls).problems[0].message).toContain("Allowed: a NeuronX image older than 0.35.0 (0.27.0 or later), or runtime.queueBound 'best-effort'");
  });

  test('maxBatchTokens: OPTION_MAX_ROLLING_BATCH_PREFILL_TOKENS where the library sets the vLLM rolling batch (GPU from 0.35), on both platforms', () => {
    const djl = (prefix: '' | 'ml.', maxBatchTokens: number, engineVersion = '0.35.0') =>
      classes(prefix, (s) => ({ ...s, runtime: { ...s.runtime, engine: 'djl-lmi', engineVersion, maxBatchTokens } }))[0];
    for (const [prefix, bind] of [['', eks], ['ml.', sageMaker]] as const) {
      const b = bind(djl(prefix, 8192));
      expect(b.problems).toEqual([]);
      expect(engineVariables(b)).toMatchObject({ OPTION_ROLLING_BATCH: 'vllm', OPTION_MAX_ROLLING_BATCH_PREFILL_TOKENS: '8192' });
      for (const name of Object.keys(engineVariables(b))) expect(DJL_VARIABLES).toContain(name);
      // vLLM's max_num_batched_tokens may not be below max_num_seqs.
      expect(bind(djl(prefix, 8)).problems).toEqual([expect.objectContaining({
        field: 'runtime.maxBatchTokens', message: expect.stringContaining('is 8, below runtime.maxConcurrentSequences (16); DJL passes it to vLLM as max_num_batched_tokens'),
      })]);
    }
    expect(engineVariables(eks(djl('', 8192))).OPTION_MAX_ROLLING_BATCH_PREFILL_TOKENS).toBe('8192');
  });

  test('maxBatchTokens: refused where the rolling batch is the image\'s default (GPU before 0.35) or not confirmed (NeuronX): it could be ignored', () => {
    const gpu = classes('', (s) => ({ ...s, runtime: { ...s.runtime, engine: 'djl-lmi', engineVersion: '0.29.0', maxBatchTokens: 8192 } }))[0];
    const b = eks(gpu);
    expect(b.problems).toEqual([expect.objectContaining({ field: 'runtime.maxBatchTokens', message: expect.stringContaining(
      "is 8192, but before 0.35.0 the rolling batch of djl-lmi 0.29.0 is the image's default, which the library does not set: lmi-dist and vLLM " +
        'read option.max_rolling_batch_prefill_tokens, TensorRT-LLM reads option.max_num_tokens, so it could be silently ignored; allowed: ' +
        'runtime.engineVersion 0.35.0 or later',
    ) })]);
    expect(engineVariables(b).OPTION_MAX_ROLLING_BATCH_PREFILL_TOKENS).toBeUndefined();
    for (const version of ['0.30.0', '0.35.0']) {
      const inf2 = classes('', (s) => (s.name === 'inf2'
        ? { ...s, runtime: { ...s.runtime, engineVersion: version, queueBound: 'best-effort', maxBatchTokens: 4096 } } : s))[2];
      expect(eks(inf2).problems).toEqual([expect.objectContaining({
        field: 'runtime.maxBatchTokens', message: expect.stringContaining(`which option the NeuronX rolling batch of djl-lmi ${version} reads for a batch token budget is not confirmed`),
      })]);
    }
    // Without maxBatchTokens the image's own option may be set by hand.
    const own = classes('', (s) => ({ ...s, runtime: { ...s.runtime, engine: 'djl-lmi', engineVersion: '0.29.0', env: { OPTION_MAX_NUM_TOKENS: '50000' } } }))[0];
    expect(eks(own).problems).toEqual([]);
  });

  test('runtime.args: refused on both platforms; the image starts its server only on `serve` and DJL reads OPTION_* and SERVING_* variables', () => {
    const djl = (prefix: '' | 'ml.') => classes(prefix, (s) => ({ ...s, runtime: { ...s.runtime, engine: 'djl-lmi', engineVersion: '0.35.0', args: ['--enforce-eager'] } }))[0];
    expect(eks(djl('')).problems).toEqual([{ className: 'l40s', field: 'runtime.args', message: expect.stringContaining(
      "are [\"--enforce-eager\"], but the DJL LMI image starts its server only on the argument 'serve' (its CMD) and passes no other: on EKS the " +
        "container's arguments replace serve and the entrypoint runs them as a shell command (djl-lmi.entrypoint.serve)",
    ) }]);
    expect(eks(djl('')).args).toEqual([]);
    const s = sageMaker(djl('ml.'));
    expect(s.problems).toEqual([expect.objectContaining({ field: 'runtime.args', message: expect.stringContaining('SageMaker gives it serve alone') })]);
    expect(s.problems[0].message).toContain('allowed: none, and runtime.env OPTION_<NAME> for the model option option.<name> (e.g. OPTION_ENFORCE_EAGER=true)');
    expect(s.env.CAI_ENGINE_ARGS).toBeUndefined();
  });

  test('fails when a DJL class states no engineVersion (the release decides the batching mode)', () => {
    const cls = classes('', (s) => (s.name === 'inf2' ? { ...s, runtime: { ...s.runtime, engineVersion: undefined } } : s))[2];
    expect(eks(cls).problems.map((p) => p.field)).toEqual(['runtime.engineVersion', 'runtime.queueBound']);
  });
});

describe('idle connections behind the ALB', () => {
  test('every engine either never closes an idle connection (a fact read in source) or gets a keep-alive above any ALB idle timeout', () => {
    for (const engine of ENGINES) {
      const idle = ENGINE_FACTS[engine].idleConnections;
      if (idle.kind === 'kept') {
        const fact = ENGINE_FACT_TABLE.find((f) => f.id === idle.fact)!;
        expect([fact.subject, fact.kind, fact.status]).toEqual([engine, 'behaviour', 'source']);
      } else if (idle.kind === 'closed') {
        expect(idle.afterSeconds).toBeLessThan(60); // shorter than any ALB idle timeout the library sets
        const fact = ENGINE_FACT_TABLE.find((f) => f.id === idle.fact)!;
        expect([fact.subject, fact.name]).toEqual([engine, idle.variable]);
      } else {
        expect(engine).toBe('custom');
      }
    }
  });

  test('fails when an engine that closes idle connections keeps its default behind the ALB, or gets the setting on SageMaker', () => {
    for (const engine of ENGINES) {
      const idle = ENGINE_FACTS[engine].idleConnections;
      if (idle.kind !== 'closed') continue;
      const [cls] = classes('', (s) => ({ ...s, runtime: { ...s.runtime, engine } }));
      expect(Number(eks(cls).env[idle.variable])).toBeGreaterThan(4000);
      const [sm] = classes('ml.', (s) => ({ ...s, runtime: { ...s.runtime, engine } }));
      expect(sageMaker(sm).env[idle.variable]).toBeUndefined();
    }
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
    expect(engineVariables(b)).toEqual(CACHE_EKS);
    for (const arg of b.args.slice(1)) expect(TRITON_FLAGS).toContain(arg.slice(2).split('=')[0]);
    expect([b.healthPath, b.readyPath]).toEqual(['/v2/health/live', '/v2/health/ready']);
    // Triton never closes an idle connection (triton.behaviour.idle-connections): nothing about keep-alive to say.
    expect(b.warnings).toEqual([{ topic: 'unbounded-queue', message: expect.stringContaining("Triton's bounded queue is max_queue_size in each model's config.pbtxt") }]);
  });

  test('Triton: maxBatchTokens is refused on both platforms (batching is each model\'s config.pbtxt)', () => {
    const triton = (prefix: '' | 'ml.') => classes(prefix, (s) => ({
      ...s, artifact: { image: s.artifact.image },
      runtime: { ...s.runtime, engine: 'triton', engineVersion: undefined, modelPath: '/opt/models', queueBound: 'best-effort', maxBatchTokens: 4096 },
    }))[0];
    for (const b of [eks(triton('')), sageMaker(triton('ml.'))]) {
      expect(b.problems).toEqual([expect.objectContaining({
        field: 'runtime.maxBatchTokens', message: expect.stringContaining('is 4096, but Triton has no server flag or variable for a batch token budget'),
      })]);
    }
  });

  test('Triton on SageMaker: runtime.args reach tritonserver through SAGEMAKER_TRITON_ADDITIONAL_ARGS from 2.36.0', () => {
    const triton = (engineVersion: string | undefined, args: string[]) => classes('ml.', (s) => ({
      ...s, artifact: { image: s.artifact.image },
      runtime: { ...s.runtime, engine: 'triton', engineVersion, modelPath: '/opt/models', queueBound: 'best-effort', args },
    }))[0];
    const b = sageMaker(triton('2.71.0', ['--exit-timeout-secs=20', '--log-info', 'true']));
    expect(b.problems).toEqual([]);
    expect(b.env.SAGEMAKER_TRITON_ADDITIONAL_ARGS).toBe('--exit-timeout-secs=20 --log-info true');
    expect(b.env.CAI_ENGINE_ARGS).toBeUndefined();
    expect(sageMaker(triton(undefined, ['--exit-timeout-secs=20'])).problems).toEqual([expect.objectContaining({
      field: 'runtime.args',
      message: expect.stringContaining('passes on extra arguments only from 2.36.0 (SAGEMAKER_TRITON_ADDITIONAL_ARGS), and runtime.engineVersion is not set'),
    })]);
    expect(sageMaker(triton('2.35.0', ['--exit-timeout-secs=20'])).problems[0].message).toContain("runtime.engineVersion is '2.35.0'");
    // An NGC container tag would compare above every 2.x release: 23.05 ships Triton 2.34.0, without the variable (R234).
    expect(sageMaker(triton('23.05', ['--exit-timeout-secs=20'])).problems).toEqual([expect.objectContaining({
      field: 'runtime.engineVersion', message: expect.stringContaining("'23.05' looks like an NGC container tag (YY.MM)"),
    })]);
    // The script splits the variable at whitespace and expands globs; the flags it sets for SageMaker stay its own.
    expect(sageMaker(triton('2.71.0', ['--backend-config=python,x=a b'])).problems.map((p) => p.message)).toEqual([
      expect.stringContaining('would reach the server split at whitespace or expanded as a glob, because the Triton serve script expands them unquoted'),
    ]);
    expect(sageMaker(triton('2.71.0', ['--model-control-mode=none'])).problems.map((p) => p.message)).toEqual([
      "sets --model-control-mode, which Triton's SageMaker serve script sets for the endpoint to serve; allowed: other flags",
    ]);
    // EKS: appended after the library's flags.
    const e = eks(classes('', (s) => ({
      ...s, artifact: { image: s.artifact.image },
      runtime: { ...s.runtime, engine: 'triton', engineVersion: undefined, modelPath: '/opt/models', queueBound: 'best-effort', args: ['--exit-timeout-secs=20'] },
    }))[0]);
    expect(e.args).toEqual(['tritonserver', '--model-repository=/opt/models', '--http-port=8080', '--exit-timeout-secs=20']);
  });

  test('custom on SageMaker: runtime.args verbatim in CAI_ENGINE_ARGS, for an entrypoint of its own that reads it', () => {
    const custom = classes('ml.', (s) => ({ ...s, runtime: { ...s.runtime, engine: 'custom', engineVersion: undefined, queueBound: 'best-effort', args: ['--a', '1', '--b'] } }))[0];
    const b = sageMaker(custom);
    expect(b.problems).toEqual([]);
    expect(b.env.CAI_ENGINE_ARGS).toBe('--a 1 --b');
  });

  test('custom: the engine-neutral variables only, on both platforms; without best-effort it fails', () => {
    const change = (s: CapacityClassSpec): CapacityClassSpec => ({ ...s, runtime: { ...s.runtime, engine: 'custom', engineVersion: undefined, queueBound: 'best-effort' } });
    const e = eks(classes('', change)[0]);
    const s = sageMaker(classes('ml.', change)[0]);
    expect(engineVariables(e)).toEqual(CACHE_EKS);
    expect(engineVariables(s)).toEqual(CACHE_SM);
    expect(e.args).toEqual([]);
    // SageMaker runs `<image> serve`: the image must accept that argument, which the library cannot check.
    const topics = (b: RuntimeBinding) => b.warnings.map((w) => w.topic);
    expect(s.warnings).toContainEqual({ topic: 'entrypoint', message: expect.stringContaining("the custom image's entrypoint must accept or ignore the argument 'serve'") });
    expect(topics(e)).not.toContain('entrypoint');
    // Behind the ALB the library cannot know a custom image's keep-alive: it says what it must be (not on SageMaker).
    expect(e.warnings).toContainEqual({ topic: 'keep-alive', message: expect.stringContaining("must outlast the ALB's idle timeout (at least 60 s, up to 4000 s") });
    expect(topics(s)).not.toContain('keep-alive');
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
    const neutral = (b: RuntimeBinding) => Object.fromEntries(Object.entries(b.env).filter(([k]) => k.startsWith('CAI_') && k !== 'CAI_MODEL_PATH' && k !== 'CAI_CACHE_DIR'));
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
      CAI_MAX_QUEUED_PROMPT_TOKENS: '51555',
      CAI_QUEUE_BUDGET_MS: '2000',
      CAI_DEADLINE_MS: '30000',
      CAI_MODEL_REVISION: 'meta-llama/Meta-Llama-3-8B-Instruct@5f0b02c',
      CAI_MODEL_DATA_URI: 's3://models-bucket/llama3-8b/bf16.tar',
      CAI_MODEL_DATA_SHA256: 'a'.repeat(64),
      CAI_MODEL_DATA_VERSION_ID: 'v1',
    });
  });

  test('fails when runtime.env sets a derived or CAI_ variable (cache locations included)', () => {
    const b = eks(classes('', (s) => ({ ...s, runtime: { ...s.runtime, env: { CAI_CLASS: 'x', HF_HUB_OFFLINE: '1', HOME: '/root' } } }))[0]);
    expect(b.problems.map((p) => p.field)).toEqual(['runtime.env.CAI_CLASS', 'runtime.env.HOME']);
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
