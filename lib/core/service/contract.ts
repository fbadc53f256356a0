import { Checker } from '../validation/checker';
import { type Problem } from '../validation/error';
import { CONTRACT_RULES } from '../validation/service-rules';

/** What the model service promises its callers. */
export interface LatencySlo {
  /** p95 time to first token, in milliseconds. */
  readonly ttftP95Ms: number;
  /**
   * p95 inter-token latency, in milliseconds.
   * @default - not checked (models that do not stream tokens, e.g. image generation)
   */
  readonly itlP95Ms?: number;
  /** End-to-end deadline of one request, in milliseconds: past it, an answer is worthless. */
  readonly deadlineMs: number;
}

/** The average request, from production traffic or the benchmark workload. */
export interface RequestShape {
  readonly meanPromptTokens: number;
  /** Mean generated tokens per request. For models that do not generate tokens, count one per request. */
  readonly meanOutputTokens: number;
}

/** The service contract: SLO, request shape and peak demand of one model service. */
export interface ServiceContract {
  /** Service name, used in resource names and metric dimensions (RFC 1123 label). */
  readonly name: string;
  readonly slo: LatencySlo;
  readonly requestShape: RequestShape;
  /** Peak demand in requests per second that the fleet is planned for. */
  readonly peakRequestsPerSecond: number;
  /**
   * Capacity planned above peak, as a fraction (0.2 = 20 %). Also sets scaling targets below the envelope
   * so that target tracking keeps the same margin.
   * @default 0.2
   */
  readonly headroom?: number;
}

/**
 * 20%: one minute of ordinary demand noise (the Azure LLM conversation trace has an inter-arrival CV of about 1) fits in
 * the spare ready capacity before the next tick reacts; bursts beyond that are the autoscaler's job. The Reconciler's
 * policy default too (lib/core/policy/defaults.ts).
 */
export const DEFAULT_HEADROOM = 0.2;

/** Peak demand in generated tokens per second. */
export function peakTokensPerSecond(contract: ServiceContract): number {
  return contract.peakRequestsPerSecond * contract.requestShape.meanOutputTokens;
}

/**
 * Every problem of a service contract: finite numbers in range, a literal (non-token) value wherever the plan computes
 * with it, a DNS-1123 name, a deadline above the first-token SLO. Fields are prefixed `contract.`.
 */
export function serviceContractProblems(contract: ServiceContract): Problem[] {
  const c = new Checker(CONTRACT_RULES, 'contract.');
  if (contract === undefined || contract === null || typeof contract !== 'object') {
    return [{ field: 'contract', message: `is ${String(contract)}; allowed: a service contract (name, slo, requestShape, peakRequestsPerSecond)` }];
  }
  c.check('name', contract.name);
  const slo = contract.slo ?? ({} as Partial<LatencySlo>);
  const shape = contract.requestShape ?? ({} as Partial<RequestShape>);
  const ttftOk = c.check('slo.ttftP95Ms', slo.ttftP95Ms);
  c.optional('slo.itlP95Ms', slo.itlP95Ms);
  const deadlineOk = c.check('slo.deadlineMs', slo.deadlineMs);
  if (ttftOk && deadlineOk) c.cross('slo.deadlineMs>ttft', { deadlineMs: slo.deadlineMs!, ttftP95Ms: slo.ttftP95Ms! }, 'slo.deadlineMs');
  c.check('requestShape.meanPromptTokens', shape.meanPromptTokens);
  c.check('requestShape.meanOutputTokens', shape.meanOutputTokens);
  c.check('peakRequestsPerSecond', contract.peakRequestsPerSecond);
  c.optional('headroom', contract.headroom);
  return c.problems;
}

/** Whether the contract's numbers can be planned with (no problem at all). */
export function isPlannableContract(contract: ServiceContract): boolean {
  return serviceContractProblems(contract).length === 0;
}
