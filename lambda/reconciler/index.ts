/**
 * Reconciler Lambda entry point: triggered every period by EventBridge, at once by capacity alarm state changes and (SageMaker)
 * by the endpoint's state change to IN_SERVICE (any event that is not an alarm's is a plain run).
 * Thin: read the configuration the construct validated at synth, run one reconciliation before a deadline that leaves
 * time to print its audit line, fail the invocation (so the function's Errors metric shows it) when the run failed.
 * Weights are left unchanged in that case.
 */
import { type AlarmStateChangeEvent } from '../../lib/core/reconciler/alarm-trigger';
import { RECONCILER_CONFIG_ENV, type ReconcilerConfig } from '../../lib/core/reconciler/config';
import { failureAuditLine, failureEmf, RECONCILER_SERVICE_ENV } from '../../lib/core/reconciler/faults';
import { type RunMemory } from '../../lib/core/reconciler/memory';
import { LAMBDA_CLIENT_OPTIONS } from '../../lib/core/sdk-client-profiles';
import { armDeadline, type Clients, reconcile, type RunResult, TARGET_IO } from './reconcile';
import { RECONCILER_FUNCTION_TIMEOUT_SECONDS } from '../../lib/core/reconciler/retry';

/**
 * Time kept back from the Lambda timeout for what follows the last AWS call: the records, the audit line, a backoff
 * sleep that began just before the deadline (DEFAULT_RETRY's longest is 800 ms; its cap, maxDelayMs, 3 s).
 */
export const DEADLINE_RESERVE_MS = 8_000;
/** The function's timeout (the construct sets it): the deadline when the runtime does not say how much time is left. */
export const FUNCTION_TIMEOUT_MS = RECONCILER_FUNCTION_TIMEOUT_SECONDS * 1000;

let clients: Clients | undefined;
let config: ReconcilerConfig | undefined;
// What the previous run in this execution environment left (reserved concurrency 1: one invocation at a time). Best
// effort: a run in a new environment starts without it, and then counts this period's ramp step as taken
// (`stepAssumed`, lib/core/reconciler/observe.ts), since the metrics may not show a step taken elsewhere yet.
let memory: RunMemory | undefined;

function loadConfig(): ReconcilerConfig {
  const raw = process.env[RECONCILER_CONFIG_ENV];
  // The construct always sets it; reaching this means the function was edited by hand.
  if (!raw) throw new Error(`${RECONCILER_CONFIG_ENV} is not set: deploy the function through the Reconciler construct`);
  return JSON.parse(raw) as ReconcilerConfig;
}

/**
 * Only the clients this target needs: the SageMaker client alone is most of the bundle, and loading the module of a
 * client that is never called would only lengthen the cold start. esbuild keeps dynamic imports lazy.
 */
async function makeClients(c: ReconcilerConfig): Promise<Clients> {
  const { CloudWatchClient } = await import('@aws-sdk/client-cloudwatch');
  const io = TARGET_IO[c.facts.kind];
  if (!io) throw new Error(`unknown routing target kind ${JSON.stringify(c.facts.kind)}`);
  return { cloudwatch: new CloudWatchClient(LAMBDA_CLIENT_OPTIONS), ...(await (await io()).client()) };
}

/** The Lambda context's clock: only what the handler reads. */
export interface InvocationContext {
  getRemainingTimeInMillis?(): number;
}

export async function handler(event: AlarmStateChangeEvent & { source?: string } = {}, context?: InvocationContext): Promise<RunResult> {
  const trigger = event['detail-type'] ?? 'manual';
  const log = (line: Record<string, unknown>) => console.log(JSON.stringify({ trigger, ...line }));
  const nowMs = Date.now();
  const remaining = context?.getRemainingTimeInMillis?.() ?? FUNCTION_TIMEOUT_MS;
  const budgetMs = Math.max(1_000, remaining - DEADLINE_RESERVE_MS);
  // Armed here, before the clients are loaded: the time left is the invocation's ("Returns the number of milliseconds
  // left before the execution times out", https://docs.aws.amazon.com/lambda/latest/dg/nodejs-context.html), so a cold
  // start's client loading must count against the budget, not be added to it (review R120).
  const deadline = armDeadline(budgetMs);
  try {
    try {
      config ??= loadConfig();
      clients ??= await makeClients(config);
    } catch (error) {
      // Even a run that cannot start leaves its audit line and the failure datapoint the failure alarm watches.
      const detail = `weights unchanged: cannot start: ${(error as Error).name}: ${(error as Error).message}`;
      log(failureEmf(process.env[RECONCILER_SERVICE_ENV] || 'unknown', 'invalid-config', nowMs));
      log(failureAuditLine(Math.floor(nowMs / 1000), 'invalid-config', detail));
      throw new Error(`reconciler: ${detail}`, { cause: error });
    }
    const result = await reconcile(config, clients, { nowMs, log, memory, event, deadlineMs: nowMs + budgetMs, deadline: deadline.signal });
    memory = result.memory;
    if (result.action === 'failed') throw new Error(`reconciler: ${result.detail}`);
    return result;
  } finally {
    deadline.clear();
  }
}
