/**
 * The engine facts table (lib/core/runtime/facts.ts) against what the library renders and scrapes: every flag and
 * variable a class gets, on each platform, for each engine and release, must be a fact that holds there; every value the
 * library relies on (statuses, floors, the batching mode, the scrape protocol, metric types) must equal its fact. A
 * rendered setting that contradicts the table fails here.
 */
import { admissionLimits, admitBurst, queueBoundOf, serverAdmission } from '../../lib/core/runtime/admission';
import { bindRuntime, type RuntimeBinding, SERVER_USER_NAME, type ServingPlatform } from '../../lib/core/runtime/binding';
import { ENGINE_PROMETHEUS_METRICS, scrapeJob } from '../../lib/core/runtime/engine-metrics';
import { compareVersions, ENGINE_FACTS, type EngineName } from '../../lib/core/runtime/engines';
import { ENGINE_FACT_TABLE as ENGINE_ONLY, engineFact, type EngineFact } from '../../lib/core/runtime/facts';
import { ABANDONMENT_FACTS } from '../../lib/core/runtime/abandonment';
import { SHUTDOWN_FACTS } from '../../lib/core/runtime/shutdown';
import { type CapacityClass, type CapacityClassSpec } from '../../lib/core/service/capacity-class';
import { defineCapacityClasses } from '../../lib/core/service/checks';
import { OBSERVABILITY_ADDON_VERSION } from '../../lib/eks/observability-addon';
import { LLAMA_CONTRACT, llamaClasses } from '../util';

/** The tables: the engine facts, how each engine stops, and what it does with a queued request whose client is gone. */
const ENGINE_FACT_TABLE: readonly EngineFact[] = [...ENGINE_ONLY, ...SHUTDOWN_FACTS, ...ABANDONMENT_FACTS];

/** One engine release on one kind of hardware, as a checked class on each platform. */
interface Case {
  readonly engine: EngineName;
  readonly version?: string;
  /** Index of the llama class to start from: 0 = L40S (GPU), 2 = inf2 (NeuronX). */
  readonly base: 0 | 2;
  readonly extra?: Partial<CapacityClassSpec['runtime']>;
}

const CASES: readonly Case[] = [
  { engine: 'vllm', version: '0.29.0', base: 0, extra: { maxBatchTokens: 8192 } },
  { engine: 'tgi', version: '2.0.0', base: 0, extra: { maxBatchTokens: 8192 } },
  { engine: 'tgi', version: '3.3.7', base: 0 },
  { engine: 'djl-lmi', version: '0.29.0', base: 0 },
  { engine: 'djl-lmi', version: '0.35.0', base: 0, extra: { maxBatchTokens: 8192 } },
  { engine: 'djl-lmi', version: '0.30.0', base: 2 },
  { engine: 'triton', base: 0, extra: { queueBound: 'best-effort', modelPath: '/opt/models' } },
  { engine: 'custom', base: 0, extra: { queueBound: 'best-effort' } },
];

function classOf(c: Case, prefix: '' | 'ml.'): CapacityClass {
  const specs = llamaClasses(prefix).map((s, i) =>
    i === c.base
      ? {
          ...s,
          artifact: c.engine === 'triton' ? { image: s.artifact.image } : s.artifact,
          runtime: { ...s.runtime, engine: c.engine, engineVersion: c.version, ...c.extra },
        }
      : s,
  );
  return defineCapacityClasses(specs, { contract: LLAMA_CONTRACT })[c.base];
}

function bind(c: Case, platform: ServingPlatform): RuntimeBinding {
  const cls = classOf(c, platform === 'sagemaker' ? 'ml.' : '');
  return platform === 'eks'
    ? bindRuntime(cls, LLAMA_CONTRACT, { platform, port: 8080, modelDataPath: '/models/model', cacheDir: '/models/cache', runAsUser: 1000 })
    : bindRuntime(cls, LLAMA_CONTRACT, { platform, port: 8080 });
}

/** Whether a fact holds for this engine, platform and release. */
function holds(f: EngineFact, engine: EngineName, platform: ServingPlatform, version: string | undefined): boolean {
  if (f.subject !== engine && f.subject !== 'any-engine') return false;
  if (f.platforms && !f.platforms.includes(platform)) return false;
  if (version !== undefined && f.since !== undefined && compareVersions(version, f.since) < 0) return false;
  if (version !== undefined && f.until !== undefined && compareVersions(version, f.until) >= 0) return false;
  return true;
}

/**
 * The names a binding renders for the engine: EKS argument flags, vLLM's positional model (the one argument before its
 * flags) and every variable but the engine-neutral CAI_* set.
 */
function renderedNames(b: RuntimeBinding): Array<{ kind: 'flag' | 'argument' | 'variable'; name: string; value: string }> {
  const out: Array<{ kind: 'flag' | 'argument' | 'variable'; name: string; value: string }> = [];
  let args = b.args[0] === 'tritonserver' ? b.args.slice(1) : b.args;
  if (b.engine === 'vllm' && args.length > 0 && !args[0].startsWith('--')) {
    out.push({ kind: 'argument', name: 'model_tag', value: args[0] });
    args = args.slice(1);
  }
  for (let i = 0; i < args.length; i++) {
    const m = /^--([a-z0-9-]+)(?:=(.*))?$/.exec(args[i]);
    if (!m) throw new Error(`unexpected argument ${args[i]}`);
    out.push({ kind: 'flag', name: m[1], value: m[2] ?? args[++i] });
  }
  for (const [name, value] of Object.entries(b.env).filter(([k]) => !k.startsWith('CAI_'))) out.push({ kind: 'variable', name, value });
  return out;
}

describe('every rendered setting is a fact that holds for its engine, release and platform', () => {
  for (const c of CASES) {
    for (const platform of ['eks', 'sagemaker'] as const) {
      test(`${c.engine} ${c.version ?? '(any)'} ${c.base === 2 ? 'NeuronX' : 'GPU'} on ${platform}`, () => {
        const b = bind(c, platform);
        expect(b.problems).toEqual([]);
        const facts = ENGINE_FACT_TABLE.filter((f) => holds(f, c.engine, platform, c.version));
        for (const r of renderedNames(b)) {
          if (c.engine === 'vllm' && platform === 'sagemaker' && r.name.startsWith('SM_VLLM_')) {
            // The DLC turns SM_VLLM_<X> into --<x> for api_server: the flag must be a vLLM fact that holds on SageMaker (--model
            // does there only), and the entrypoint fact must hold here.
            const flag = r.name.slice('SM_VLLM_'.length).toLowerCase().replace(/_/g, '-');
            expect(ENGINE_FACT_TABLE.filter((f) => holds(f, 'vllm', platform, c.version) && f.kind === 'flag').map((f) => f.name)).toContain(flag);
            expect(holds(engineFact('vllm.entrypoint.sagemaker-variables'), 'vllm', platform, c.version)).toBe(true);
            continue;
          }
          expect({ ...r, fact: facts.some((f) => f.kind === r.kind && f.name === r.name) }).toEqual({ ...r, fact: true });
        }
      });
    }
  }
});

describe('values the library relies on equal their facts', () => {
  test('rejection statuses', () => {
    expect(ENGINE_FACTS.vllm.rejectionStatus).toBe(engineFact('vllm.status.queue-full').value);
    expect(ENGINE_FACTS.tgi.rejectionStatus).toBe(engineFact('tgi.status.overloaded').value);
    expect(ENGINE_FACTS['djl-lmi'].rejectionStatus).toBe(engineFact('djl-lmi.status.queue-full').value);
    expect(ENGINE_FACTS.triton.rejectionStatus).toBe(engineFact('triton.status.queue-full').value);
    for (const c of CASES.filter((x) => x.engine !== 'triton' && x.engine !== 'custom')) {
      expect(bind(c, 'eks').rejectionStatus).toBe(ENGINE_FACTS[c.engine].rejectionStatus);
    }
  });

  test('release floors and the release the bounded queue comes with', () => {
    expect(ENGINE_FACTS.vllm.minimumVersion).toBe(engineFact('vllm.version.floor').value);
    expect(ENGINE_FACTS.vllm.boundedQueueSince).toBe(engineFact('vllm.flag.max-num-queued-reqs').since);
    expect(ENGINE_FACTS.tgi.minimumVersion).toBe(engineFact('tgi.version.floor').value);
    expect(ENGINE_FACTS['djl-lmi'].minimumVersion).toBe(engineFact('djl-lmi.version.floor').value);
    // Every flag the library renders for vLLM exists from the floor on.
    for (const f of ENGINE_FACT_TABLE.filter((x) => x.subject === 'vllm' && x.kind === 'flag' && x.since)) {
      expect(compareVersions(f.since!, ENGINE_FACTS.vllm.minimumVersion!)).toBeLessThanOrEqual(0);
    }
  });

  test('TGI: the input bound is below the total and within the prefill budget; the batch bound is the class batch', () => {
    for (const c of CASES.filter((x) => x.engine === 'tgi')) {
      const env = bind(c, 'eks').env;
      expect(Number(env.MAX_INPUT_TOKENS)).toBeLessThan(Number(env.MAX_TOTAL_TOKENS));
      // Always rendered (unset, TGI 2.x's default budget is batch x input and 3.x's about 4096): fails when it is left out.
      expect(Number(env.MAX_BATCH_PREFILL_TOKENS)).toBeGreaterThanOrEqual(Number(env.MAX_INPUT_TOKENS));
      expect(env.MAX_BATCH_SIZE).toBe(env.CAI_MAX_CONCURRENT_SEQUENCES);
    }
  });

  test('DJL: async mode off exactly from the release that made it the default; the in-flight bound is batch + queue', () => {
    const since = engineFact('djl-lmi.variable.OPTION_ASYNC_MODE').since!;
    for (const c of CASES.filter((x) => x.engine === 'djl-lmi')) {
      const b = bind(c, 'eks');
      const gpuFromAsync = c.base === 0 && compareVersions(c.version!, since) >= 0;
      expect(b.env.OPTION_ASYNC_MODE).toBe(gpuFromAsync ? 'false' : undefined);
      expect(b.admission.maxInFlight).toBe(Number(b.env.OPTION_MAX_ROLLING_BATCH_SIZE) + Number(b.env.SERVING_JOB_QUEUE_SIZE));
      expect(Number(b.env.SERVING_JOB_QUEUE_SIZE)).toBeGreaterThanOrEqual(1);
    }
  });

  test('probe paths: every named engine\'s liveness and readiness paths are its path facts, as read upstream', () => {
    const read = {
      vllm: ['/health', '/health'], tgi: ['/health', '/health'], 'djl-lmi': ['/ping', '/ping'], triton: ['/v2/health/live', '/v2/health/ready'],
    };
    for (const [engine, [live, ready]] of Object.entries(read) as Array<[EngineName, string[]]>) {
      expect([engineFact(`${engine}.path.live`).value, engineFact(`${engine}.path.ready`).value]).toEqual([live, ready]);
      expect([ENGINE_FACTS[engine].healthPath, ENGINE_FACTS[engine].readyPath]).toEqual([live, ready]);
      expect(ENGINE_FACTS[engine].sources).toContain(engineFact(`${engine}.path.ready`).source);
    }
    for (const c of CASES.filter((x) => x.engine !== 'custom')) {
      for (const platform of ['eks', 'sagemaker'] as const) {
        const b = bind(c, platform);
        expect([b.healthPath, b.readyPath]).toEqual(read[c.engine as keyof typeof read]);
      }
    }
    // Every path fact is one of these eight: a new engine path must be read, recorded and pinned here.
    expect(ENGINE_FACT_TABLE.filter((f) => f.kind === 'path').map((f) => f.id).sort()).toEqual(
      Object.keys(read).flatMap((e) => [`${e}.path.live`, `${e}.path.ready`]).sort());
    // Each readiness fact says the path answers nothing, or not 200, until the model is loaded.
    for (const engine of Object.keys(read)) {
      expect(engineFact(`${engine}.path.ready`).statement).toMatch(/answers nothing while loading|only while every model is READY/);
    }
  });

  test('vLLM on SageMaker: a bare user flag is an empty value, which the DLC renders as the bare flag', () => {
    const c: Case = { engine: 'vllm', version: '0.29.0', base: 0, extra: { args: ['--enforce-eager'] } };
    expect(bind(c, 'sagemaker').env.SM_VLLM_ENFORCE_EAGER).toBe('');
    expect(engineFact('vllm.entrypoint.sagemaker-variables').statement).toContain('a bare --x when it is empty');
  });

  test('Triton on SageMaker: user arguments go to the variable its serve script appends, a fact from 2.36.0 and on SageMaker only', () => {
    const c: Case = { engine: 'triton', version: '2.71.0', base: 0, extra: { queueBound: 'best-effort', modelPath: '/opt/models', args: ['--exit-timeout-secs=20'] } };
    const b = bind(c, 'sagemaker');
    expect(b.problems).toEqual([]);
    const fact = engineFact('triton.variable.SAGEMAKER_TRITON_ADDITIONAL_ARGS');
    expect(b.env[fact.name]).toBe('--exit-timeout-secs=20');
    expect(holds(fact, 'triton', 'sagemaker', '2.71.0')).toBe(true);
    expect(holds(fact, 'triton', 'sagemaker', '2.35.0')).toBe(false);
    expect(holds(fact, 'triton', 'eks', '2.71.0')).toBe(false);
  });

  test('user arguments reach no container where the entrypoint passes none: TGI on SageMaker, DJL anywhere (refused)', () => {
    expect(engineFact('tgi.entrypoint.sagemaker').statement).toContain('runs text-generation-launcher --port 8080 and no other argument');
    expect(engineFact('djl-lmi.entrypoint.serve').statement).toContain('on EKS container arguments replace the CMD');
    for (const [engine, platform] of [['tgi', 'sagemaker'], ['djl-lmi', 'eks'], ['djl-lmi', 'sagemaker']] as const) {
      const b = bind({ engine, version: engine === 'tgi' ? '3.3.7' : '0.35.0', base: 0, extra: { args: ['--x=1'] } }, platform);
      expect(b.problems.map((p) => p.field)).toEqual(['runtime.args']);
    }
  });

  test('every engine gets HOME and XDG_CACHE_HOME under its writable cache directory on both platforms', () => {
    for (const c of CASES) {
      for (const platform of ['eks', 'sagemaker'] as const) {
        const b = bind(c, platform);
        expect(b.env.HOME).toBe(b.cacheDir);
        expect(b.env.XDG_CACHE_HOME?.startsWith(`${b.cacheDir}/`)).toBe(true);
        for (const [k, v] of Object.entries(b.env)) if (/CACHE|HF_HOME/.test(k) && !k.startsWith('CAI_')) expect(v.startsWith(b.cacheDir)).toBe(true);
      }
    }
  });
});

describe('the account variables', () => {
  test('every engine gets USER and LOGNAME where the platform picks the uid (EKS), and nowhere else', () => {
    for (const c of CASES) {
      expect({ engine: c.engine, USER: bind(c, 'eks').env.USER, LOGNAME: bind(c, 'eks').env.LOGNAME })
        .toEqual({ engine: c.engine, USER: SERVER_USER_NAME, LOGNAME: SERVER_USER_NAME });
      // SageMaker starts the image as its own user, which its passwd knows.
      expect({ engine: c.engine, USER: bind(c, 'sagemaker').env.USER, LOGNAME: bind(c, 'sagemaker').env.LOGNAME }).toEqual({ engine: c.engine });
    }
    expect(engineFact('any.variable.USER').statement).toContain('returns the first of LOGNAME, USER, LNAME, USERNAME that is set');
  });
});

describe('scraped metrics and the CloudWatch agent', () => {
  test('every scraped metric is a fact of its engine with a type the agent keeps', () => {
    for (const e of ENGINE_PROMETHEUS_METRICS) {
      for (const name of Object.keys(e.metrics)) {
        const fact = ENGINE_FACT_TABLE.find((f) => f.kind === 'metric' && f.subject === e.engine && f.name === name);
        expect({ name, type: fact?.metricType }).toEqual({ name, type: expect.stringMatching(/^(counter|gauge)$/) });
      }
    }
  });

  test('the agent the facts were read at is the one the pinned add-on runs', () => {
    // amazon-cloudwatch-observability v6.4.0 (chart 6.4.0) runs cloudwatch-agent 1.300070.0b1586.
    expect(OBSERVABILITY_ADDON_VERSION).toMatch(/^v6\.4\.0-eksbuild\.\d+$/);
    expect(engineFact('cloudwatch-agent.version').statement).toContain('add-on v6.4.0 runs agent 1.300070.0');
  });

  test('every job asks for the protocol under which a renamed counter keeps its type', () => {
    const job = scrapeJob({ service: 's', className: 'c', namespace: 'n', engine: 'vllm', port: 8000, classLabel: 'cai/class' }, 60)!;
    expect(job.scrape_protocols).toEqual([engineFact('cloudwatch-agent.flag.scrape_protocols').value]);
    expect(engineFact('cloudwatch-agent.behaviour.renamed-counter').statement).toContain('with Prometheus text 0.0.4 the TYPE line carries _total and the type is kept');
    // The renamed counters are exactly the ones that need it.
    const renamedCounters = Object.keys(ENGINE_PROMETHEUS_METRICS.find((x) => x.engine === 'vllm')!.metrics)
      .filter((n) => ENGINE_FACT_TABLE.find((f) => f.name === n)?.metricType === 'counter');
    expect(renamedCounters).toEqual(['vllm:generation_tokens_total', 'vllm:prompt_tokens_total']);
  });
});

describe('the vLLM model argument', () => {
  test('EKS: the positional model of `vllm serve`, first; SageMaker: SM_VLLM_MODEL, which the DLC passes to api_server as --model', () => {
    const c = CASES.find((x) => x.engine === 'vllm')!;
    const eks = bind(c, 'eks');
    const sm = bind(c, 'sagemaker');
    expect([eks.args[0], eks.args.includes('--model')]).toEqual([eks.modelPath, false]);
    expect([sm.args, sm.env.SM_VLLM_MODEL]).toEqual([[], sm.modelPath]);
    expect(engineFact('vllm.argument.model_tag')).toMatchObject({ kind: 'argument', platforms: ['eks'] });
    expect(engineFact('vllm.argument.model_tag').statement).toContain('"will be removed in a future version"');
    expect(engineFact('vllm.flag.model')).toMatchObject({ kind: 'flag', platforms: ['sagemaker'] });
  });
});

describe('the table itself', () => {
  test('ids are unique; every fact names its source and status; what is not confirmed says so', () => {
    const ids = ENGINE_FACT_TABLE.map((f) => f.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const f of ENGINE_FACT_TABLE) {
      expect(f.source.length).toBeGreaterThan(10);
      expect(f.statement.length).toBeGreaterThan(10);
      expect(['source', 'docs', 'not-confirmed']).toContain(f.status);
    }
    expect(ENGINE_FACT_TABLE.filter((f) => f.status === 'not-confirmed').map((f) => f.id)).toEqual([
      'vllm.behaviour.burst-bound',
      'vllm.path.live',
      'vllm.path.ready',
      'djl-lmi.behaviour.neuron-0.35',
      'any.variable.NEURON_COMPILE_CACHE_URL',
      'any.behaviour.cache-size',
      'sagemaker.behaviour.writable-tmp',
      'triton.behaviour.cancel-on-disconnect',
      'sagemaker.behaviour.invocation-timeout',
    ]);
  });

  test('a fact read in source names the tag or commit it was read at (owner/repo@ref), as the status defines', () => {
    const unpinned = ENGINE_FACT_TABLE.filter((f) => f.status === 'source' && !/[\w.-]+\/[\w.-]+@[\w.]+/.test(f.source)).map((f) => f.id);
    expect(unpinned).toEqual([]);
  });

  test('fails on an unknown fact id rather than rendering nothing', () => {
    expect(() => engineFact('vllm.flag.max-num-queue-reqs')).toThrow("no engine fact 'vllm.flag.max-num-queue-reqs'");
  });
});

describe('admission as the server enforces it', () => {
  const [l40s] = defineCapacityClasses(llamaClasses(''), { contract: LLAMA_CONTRACT });

  test('vLLM: count and prompt-token caps; soft under bursts (issue #58192); n > 1 takes n slots', () => {
    const a = serverAdmission(l40s, LLAMA_CONTRACT);
    expect(a).toEqual({ maxInFlight: 25, maxQueuedPromptTokens: 51555, holdsUnderBursts: false, countsSequences: true, rejectionStatus: 503 });
    expect(queueBoundOf(l40s)).toEqual({ kind: 'vllm-queued-requests' });
  });

  test('a bursty mixed-length trace: the prompt-token cap sheds long prompts that would miss the TTFT SLO, the count cap alone does not', () => {
    const limits = admissionLimits(l40s, LLAMA_CONTRACT);
    // 15 requests arriving together at one replica: mostly short prompts, with long documents in between.
    const prompts = [200, 12000, 300, 14000, 250, 16000, 400, 180, 15000, 220, 350, 13000, 260, 300, 9000];
    const burst = prompts.map((promptTokens) => ({ promptTokens }));
    const ttftSloMs = LLAMA_CONTRACT.slo.ttftP95Ms + limits.queueBudgetMs;
    const count = admitBurst({ maxInFlight: limits.maxConcurrentRequests, prefillTokensPerSecond: limits.prefillTokensPerSecond }, burst);
    const { maxConcurrentRequests: maxInFlight, maxQueuedPromptTokens, prefillTokensPerSecond } = limits;
    const caps = { maxInFlight, maxQueuedPromptTokens, prefillTokensPerSecond };
    const tokens = admitBurst(caps, burst);
    const summary = (x: ReturnType<typeof admitBurst>) => ({
      admitted: x.admitted.filter(Boolean).length,
      inTime: x.projectedTtftMs.filter((t) => t !== undefined && t <= ttftSloMs).length,
      late: x.projectedTtftMs.filter((t) => t !== undefined && t > ttftSloMs).length,
    });
    // By count alone (25 in flight) all 15 get in and the last four wait past TTFT SLO + queue budget behind the
    // long documents; with the prompt-token cap three long documents are shed at once (503, retried on another class)
    // and every admitted request gets its first token in time.
    expect(summary(count)).toEqual({ admitted: 15, inTime: 11, late: 4 });
    expect(summary(tokens)).toEqual({ admitted: 12, inTime: 12, late: 0 });
    expect(tokens.admitted.map((a, i) => (a ? 0 : prompts[i])).filter((p) => p > 0)).toEqual([15000, 13000, 9000]);
  });

  test('the prompt-token cap never shuts out one longest prompt on an idle replica', () => {
    const slow = { ...l40s, envelope: { ...l40s.envelope, safeConcurrency: 1, ttftP95Ms: 2000 }, runtime: { ...l40s.runtime, maxQueueDelayMs: 0 } };
    const limits = admissionLimits(slow, LLAMA_CONTRACT);
    // 1 x 1000 tokens in 2 s over 0 + 2 s would be 1000 tokens: below one 8192-token sequence.
    expect(limits.maxQueuedPromptTokens).toBe(slow.footprint.maxSequenceTokens);
  });

  test('a request asking for n sequences takes n slots of the count cap', () => {
    const burst = [{ promptTokens: 10, n: 3 }, { promptTokens: 10, n: 2 }, { promptTokens: 10 }];
    const r = admitBurst({ maxInFlight: 4, prefillTokensPerSecond: 1000 }, burst);
    expect(r.admitted).toEqual([true, false, true]);
  });
});
