/**
 * `verify --burst`: does each engine shed at the bound the library set? A short burst a little above one replica's
 * admission bound (`serverAdmission`, lib/core/runtime/admission.ts: the number the construct rendered into the
 * engine's flags) goes to one replica of the class, and the answers are counted: the engine's own rejection status
 * (ENGINE_FACTS[engine].rejectionStatus, from the facts table lib/core/runtime/facts.ts: vLLM 503, TGI 429, DJL 503)
 * must appear, and no more often than the requests above the bound. Not read-only: the burst is real load.
 * The planning and the judging are here; bin/verify.ts sends the requests.
 */
import { serverAdmission } from '../runtime/admission';
import { ENGINE_FACTS, isEngineName } from '../runtime/engines';
import { type CapacityClass } from '../service/capacity-class';
import { type ServiceContract } from '../service/contract';
import { type CheckResult } from './result';

/** Most requests one class's burst may send: a bound larger than this is not checked by a "short" burst. */
export const MAX_BURST_REQUESTS = 512;

/**
 * The request each engine serves (non-streamed, the contract's request shape). Sources (version not pinned; what the
 * docs of each engine show): vLLM's OpenAI-compatible `POST /v1/completions` {prompt, max_tokens}
 * (https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html); TGI `POST /generate`
 * {inputs, parameters.max_new_tokens} (huggingface/text-generation-inference router/src/server.rs, utoipa path
 * "/generate", 429 "Model is overloaded"); DJL LMI `POST /invocations` {inputs, parameters.max_new_tokens}
 * (https://docs.djl.ai/master/docs/serving/serving/docs/lmi/user_guides/lmi_input_output_schema.html).
 */
export function engineRequest(engine: 'vllm' | 'tgi' | 'djl-lmi', prompt: string, maxNewTokens: number): { path: string; body: unknown } {
  if (engine === 'vllm') return { path: '/v1/completions', body: { prompt, max_tokens: maxNewTokens } };
  if (engine === 'tgi') return { path: '/generate', body: { inputs: prompt, parameters: { max_new_tokens: maxNewTokens } } };
  return { path: '/invocations', body: { inputs: prompt, parameters: { max_new_tokens: maxNewTokens } } };
}

export interface BurstPlan {
  readonly className: string;
  readonly engine: string;
  readonly url: string;
  readonly body: unknown;
  /** In-flight requests one replica admits (the library's bound). */
  readonly bound: number;
  /**
   * The fewest in flight at which shedding is still the library's bound: vLLM's prompt-token budget
   * (--max-num-queued-tokens) may shed a burst of the contract's prompts before the request count is reached.
   */
  readonly lowestBound: number;
  readonly requests: number;
  /** Between two sends; > 0 where the engine counts a request only after checking the next (vLLM, issue #58192). */
  readonly staggerMs: number;
  readonly timeoutMs: number;
  readonly rejectionStatus: number;
}

/** The burst for one class against `baseUrl` (which must reach ONE replica), or why the class cannot be checked. */
export function burstPlan(cls: CapacityClass, contract: ServiceContract, baseUrl: string): BurstPlan | { readonly skip: string } {
  const engine = cls.runtime.engine;
  if (!isEngineName(engine) || (engine !== 'vllm' && engine !== 'tgi' && engine !== 'djl-lmi')) {
    return { skip: `engine '${engine}': the library sets no admission bound for it, nothing to burst against` };
  }
  const admission = serverAdmission(cls, contract);
  const status = ENGINE_FACTS[engine].rejectionStatus;
  if (admission.maxInFlight === undefined || status === undefined) {
    return { skip: `${engine}${cls.runtime.engineVersion ? ` ${cls.runtime.engineVersion}` : ''} has no bounded queue as configured: nothing to burst against` };
  }
  const extra = Math.max(2, Math.ceil(admission.maxInFlight / 4));
  const requests = admission.maxInFlight + extra;
  if (requests > MAX_BURST_REQUESTS) return { skip: `its bound (${admission.maxInFlight} in flight) needs more than ${MAX_BURST_REQUESTS} requests` };
  const promptTokens = Math.max(1, Math.round(contract.requestShape.meanPromptTokens));
  const { path, body } = engineRequest(engine, 'hello '.repeat(promptTokens).trim(), Math.max(1, Math.round(contract.requestShape.meanOutputTokens)));
  const queuedTokens = admission.maxQueuedPromptTokens;
  const tokenBound = queuedTokens === undefined ? Infinity : Math.max(1, Math.floor(queuedTokens / promptTokens));
  return {
    className: cls.name, engine, url: `${baseUrl.replace(/\/+$/, '')}${path}`, body, bound: admission.maxInFlight,
    lowestBound: Math.min(admission.maxInFlight, tokenBound), requests,
    staggerMs: admission.holdsUnderBursts ? 0 : 50, timeoutMs: Math.min(300_000, Math.max(10_000, 2 * contract.slo.deadlineMs)),
    rejectionStatus: status,
  };
}

/** What the burst's requests got: an HTTP status, or 'error' (refused, reset, timed out). */
export type BurstAnswer = number | 'error';

/** PASS when the engine shed with its own status, at least once and never before the bound was full. */
export function burstCheck(plan: BurstPlan, answers: readonly BurstAnswer[]): CheckResult {
  const id = `burst:${plan.className}`;
  const settles = `class ${plan.className} (${plan.engine}) sheds with ${plan.rejectionStatus} above the bound the library set (${plan.bound} in flight per replica)`;
  const shed = answers.filter((a) => a === plan.rejectionStatus).length;
  const ok = answers.filter((a) => typeof a === 'number' && a >= 200 && a < 300).length;
  const others = new Map<string, number>();
  for (const a of answers) if (a !== plan.rejectionStatus && !(typeof a === 'number' && a >= 200 && a < 300)) others.set(String(a), (others.get(String(a)) ?? 0) + 1);
  const rest = [...others].map(([k, n]) => `${n} x ${k}`).join(', ');
  const counted = `sent ${answers.length}${plan.staggerMs > 0 ? ` ${plan.staggerMs} ms apart` : ' at once'} to ${plan.url}: ${ok} x 2xx, ${shed} x ${plan.rejectionStatus}${rest ? `, ${rest}` : ''}`;
  if (shed === 0) {
    return { id, status: 'fail', settles, detail: `${counted}; nothing was shed: the engine admits more than its bound, or the URL reaches more than one replica, or the requests ended before the burst filled it` };
  }
  if (shed > answers.length - plan.lowestBound) {
    const which = plan.lowestBound < plan.bound ? ` (${plan.lowestBound} with the prompt-token budget)` : '';
    return { id, status: 'fail', settles, detail: `${counted}; it shed ${shed}, more than the ${answers.length - plan.lowestBound} above the bound${which}: it sheds below the bound` };
  }
  return { id, status: 'pass', settles, detail: counted };
}
