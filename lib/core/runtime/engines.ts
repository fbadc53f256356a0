/**
 * What each model server reads, for a named version range: the release floor, the bounded queue it enforces itself,
 * the HTTP status it answers when that queue is full, and its liveness and readiness paths. Every value comes from the
 * engine facts table (facts.ts), which says where upstream it was read; the tests pin rendered classes against it.
 */
import { ENGINE_FACT_TABLE, engineFact, factNumber, factString } from './facts';

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
  /**
   * What the server does with an idle HTTP keep-alive connection, which matters behind an ALB (its idle timeout must be
   * the shorter: lib/core/platform/alb-connection.ts). `kept`: never closed; `closed`: after `afterSeconds`, unless the
   * `variable` sets longer (the binding sets it); `unknown`: a custom image, the user's to check.
   */
  readonly idleConnections: IdleConnections;
  /**
   * Liveness (process up) and readiness (model loaded) paths of the server's HTTP API: the EKS startup, readiness and
   * liveness probes and the target group's health check (facts `<engine>.path.live` / `<engine>.path.ready`).
   */
  readonly healthPath: string;
  readonly readyPath: string;
  /** Where the facts come from. */
  readonly sources: readonly string[];
}

export type IdleConnections =
  | { readonly kind: 'kept'; readonly fact: string }
  | { readonly kind: 'closed'; readonly afterSeconds: number; readonly variable: string; readonly fact: string }
  | { readonly kind: 'unknown' };

/** An engine that never closes an idle connection, from its fact. */
const kept = (fact: string): IdleConnections => ({ kind: 'kept', fact: engineFact(fact).id });

export const ENGINE_FACTS: Readonly<Record<EngineName, EngineFacts>> = {
  vllm: {
    name: 'vllm',
    // Facts vllm.version.floor, vllm.argument.model_tag (the positional model of `vllm serve`) and vllm.metric.kv_cache_usage_perc:
    // the release every rendered name and scraped metric is cited at.
    minimumVersion: factString('vllm.version.floor'),
    // --max-num-queued-reqs / --max-num-queued-tokens: PR #49445 (approved 2026-08-31), released in v0.29.0; 503 when
    // full (facts vllm.flag.max-num-queued-reqs, vllm.status.queue-full). Soft under bursts (vllm.behaviour.burst-bound).
    boundedQueueSince: engineFact('vllm.flag.max-num-queued-reqs').since,
    versionRequired: true,
    rejectionStatus: factNumber('vllm.status.queue-full') as RejectionStatus,
    // Uvicorn's keep-alive, 5 s by default.
    idleConnections: {
      kind: 'closed',
      afterSeconds: factNumber('vllm.variable.VLLM_HTTP_TIMEOUT_KEEP_ALIVE'),
      variable: engineFact('vllm.variable.VLLM_HTTP_TIMEOUT_KEEP_ALIVE').name,
      fact: 'vllm.variable.VLLM_HTTP_TIMEOUT_KEEP_ALIVE',
    },
    // The API server listens only once the engine (and the model) is up; /health answers 200 from then on, 503 once the
    // engine is dead. Read on the main branch, not at the 0.29.0 tag (vllm.path.ready says what that leaves open).
    healthPath: factString('vllm.path.live'),
    readyPath: factString('vllm.path.ready'),
    sources: factSources('vllm'),
  },
  tgi: {
    name: 'tgi',
    minimumVersion: factString('tgi.version.floor'),
    boundedQueueSince: factString('tgi.version.floor'),
    versionRequired: false,
    rejectionStatus: factNumber('tgi.status.overloaded') as RejectionStatus,
    idleConnections: kept('tgi.behaviour.idle-connections'),
    // The router binds its port only after every shard has loaded and warmed the model.
    healthPath: factString('tgi.path.live'),
    readyPath: factString('tgi.path.ready'),
    sources: factSources('tgi'),
  },
  'djl-lmi': {
    name: 'djl-lmi',
    minimumVersion: factString('djl-lmi.version.floor'),
    // job_queue_size bounds in-flight requests only in rolling-batch mode (djl-lmi.behaviour.in-flight-bound); from
    // 0.35.0 the vLLM backend defaults to async mode, where it never fills (djl-lmi.variable.OPTION_ASYNC_MODE), so the
    // release decides what the library renders: it must be declared.
    boundedQueueSince: factString('djl-lmi.version.floor'),
    versionRequired: true,
    rejectionStatus: factNumber('djl-lmi.status.queue-full') as RejectionStatus,
    idleConnections: kept('djl-lmi.behaviour.idle-connections'),
    // The server binds its port only after its startup models are loaded (wait_model_loading, on by default).
    healthPath: factString('djl-lmi.path.live'),
    readyPath: factString('djl-lmi.path.ready'),
    sources: factSources('djl-lmi'),
  },
  triton: {
    name: 'triton',
    // max_queue_size lives in each model's config.pbtxt, which the library does not write (triton.behaviour.queue).
    versionRequired: false,
    rejectionStatus: factNumber('triton.status.queue-full') as RejectionStatus,
    idleConnections: kept('triton.behaviour.idle-connections'),
    // Live once initialised; ready only while every model is (--strict-readiness, on by default).
    healthPath: factString('triton.path.live'),
    readyPath: factString('triton.path.ready'),
    sources: factSources('triton'),
  },
  custom: {
    name: 'custom',
    versionRequired: false,
    idleConnections: { kind: 'unknown' },
    // The library's convention for an image of the user's own, not an upstream fact: classOptions can set others.
    healthPath: '/health',
    readyPath: '/ready',
    sources: [],
  },
};

/** The distinct sources of an engine's facts (ENGINE_FACT_TABLE). */
function factSources(engine: EngineName): readonly string[] {
  return [...new Set(ENGINE_FACT_TABLE.filter((x) => x.subject === engine).map((x) => x.source))];
}

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
