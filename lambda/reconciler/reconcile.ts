/**
 * One reconciler run, the I/O shell around the pure step (lib/core/reconciler/step.ts): read the routing target and
 * one GetMetricData batch, call `step`, make the one write it plans, print its records. Clients, the clock, the run's
 * deadline and the memory of the previous run are injected, so tests drive it with mocks.
 */
import { type CloudWatchClient, GetMetricDataCommand, type MetricDataQuery, type MetricDataResult } from '@aws-sdk/client-cloudwatch';
import { unansweredQueries } from '../../lib/core/metrics/metric-data-status';
import { type ReconcilerConfig } from '../../lib/core/reconciler/config';
import { failureAuditLine, failureEmf, type FailureReason } from '../../lib/core/reconciler/faults';
import { reconcilerConfigProblems } from '../../lib/core/validation/reconciler-config';
import { type AlarmStateChangeEvent, alarmedClasses } from '../../lib/core/reconciler/alarm-trigger';
import { type RunMemory } from '../../lib/core/reconciler/memory';
import { metricQuery } from '../../lib/core/reconciler/observe';
import { beforeDeadline, DEFAULT_RETRY, isAccessDenied, isProgrammingError, type RetryOptions, withRetries } from '../../lib/core/reconciler/retry';
import { rememberRun, runRecords, type RunOutcome, step, targetRead, weightsInForce } from '../../lib/core/reconciler/step';
import { type RoutingFacts } from '../../lib/core/reconciler/routing-facts';
import { type Clients, type TargetIo } from './targets/io';

export { type Clients } from './targets/io';

export interface RunOptions {
  readonly nowMs: number;
  readonly log: (line: Record<string, unknown>) => void;
  readonly retry?: Partial<RetryOptions>;
  /**
   * Epoch milliseconds by which every AWS call must have answered: past it the calls are aborted and the run fails
   * with reason `timeout` (still printing its audit line and failure datapoint, which a run killed by the Lambda
   * timeout never does). @default - no deadline
   */
  readonly deadlineMs?: number;
  /**
   * The deadline as a signal the caller armed (`armDeadline`), for a caller whose own work before the run counts
   * against the same budget: the handler arms it at the invocation's start, so a cold start's client loading cannot
   * push the run's end into the time kept back for its records (review R120). `deadlineMs` then only names the
   * budget in the failure's detail. @default - armed when the run starts, to fire `deadlineMs - nowMs` later
   */
  readonly deadline?: AbortSignal;
  /** What the previous run in this execution environment left (`RunResult.memory`). @default - none */
  readonly memory?: RunMemory;
  /**
   * The event that triggered the run: a capacity alarm that has just gone to ALARM is evidence newer than the run's
   * signal windows (`alarmedClasses`). @default - a scheduled or manual run
   */
  readonly event?: AlarmStateChangeEvent;
}

export interface RunResult {
  /**
   * `applied`: one write made; `unchanged`: nothing to write; `skipped`: a write was due but not possible now;
   * `failed`: the run could not decide or an AWS call failed (weights unchanged).
   */
  readonly action: 'applied' | 'unchanged' | 'skipped' | 'failed';
  /** Why a run failed (the `Reason` of its `ReconcilerFailures` datapoint). */
  readonly reason?: FailureReason;
  readonly detail?: string;
  readonly weights?: Readonly<Record<string, number>>;
  /** Hand to the next run (`RunOptions.memory`). */
  readonly memory?: RunMemory;
}

/** The I/O module of each routing-target kind, loaded on demand: each pulls in only its own SDK client's commands. */
export const TARGET_IO: { readonly [K in RoutingFacts['kind']]: () => Promise<TargetIo> } = {
  sagemaker: () => import('./targets/sagemaker'),
  alb: () => import('./targets/alb'),
};

/** Most GetMetricData pages a run follows: one batch fits in one page (NextToken appears past 100,800 datapoints). */
export const MAX_METRIC_PAGES = 5;

/**
 * One run. Whatever goes wrong (an invalid configuration, facts that no longer match the target, an AWS error or
 * silence, a bug), the run writes nothing it cannot stand behind, prints an audit line and a `ReconcilerFailures` EMF
 * datapoint (which the construct's failure alarm watches), and returns `failed`; it never throws before its audit line.
 */
export async function reconcile(config: ReconcilerConfig, clients: Clients, options: RunOptions): Promise<RunResult> {
  const service = typeof config?.service === 'string' && config.service.length > 0 ? config.service : 'unknown';
  const fail = (reason: FailureReason, detail: string, context: Record<string, unknown> = {}): RunResult => {
    options.log(failureEmf(service, reason, options.nowMs));
    options.log(failureAuditLine(Math.floor(options.nowMs / 1000), reason, detail, context));
    return { action: 'failed', reason, detail, ...(options.memory ? { memory: options.memory } : {}) };
  };
  const problems = reconcilerConfigProblems(config);
  if (problems.length > 0) return fail('invalid-config', `weights unchanged: invalid configuration: ${problems.join('; ')}`);
  const deadline = options.deadline
    ? { signal: options.deadline, clear: () => undefined }
    : armDeadline(options.deadlineMs === undefined ? undefined : options.deadlineMs - options.nowMs);
  try {
    return await reconcileChecked(config, clients, options, deadline.signal, fail);
  } catch (error) {
    return fail('internal-error', `weights unchanged: ${describe(error)}`);
  } finally {
    deadline.clear();
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** An AbortSignal that fires `budgetMs` from now, the run's deadline (never, without a budget); `clear` disarms it. */
export function armDeadline(budgetMs: number | undefined): { signal: AbortSignal; clear: () => void } {
  const controller = new AbortController();
  if (budgetMs === undefined) return { signal: controller.signal, clear: () => undefined };
  const timer = setTimeout(() => controller.abort(new Error('run deadline')), Math.max(0, budgetMs));
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}

type Fail = (reason: FailureReason, detail: string, context?: Record<string, unknown>) => RunResult;

async function reconcileChecked(
  config: ReconcilerConfig,
  clients: Clients,
  options: RunOptions,
  signal: AbortSignal,
  fail: Fail,
): Promise<RunResult> {
  const retry: RetryOptions = { ...DEFAULT_RETRY, ...options.retry, signal };
  // Past the deadline every call is aborted: say so, rather than reporting the abort as an AWS error.
  const awsFailure = (error: unknown) => (signal.aborted
    ? { reason: 'timeout' as const, detail: `AWS did not answer before the run's deadline (${Math.round(((options.deadlineMs ?? options.nowMs) - options.nowMs) / 1000)} s)` }
    : { reason: isProgrammingError(error) ? 'internal-error' as const : 'aws-error' as const, detail: describe(error) });
  const io = await TARGET_IO[config.facts.kind]();
  const query = metricQuery(config, options.nowMs);
  let read: Awaited<ReturnType<TargetIo['read']>>;
  try {
    read = await withRetries(beforeDeadline(() => io.read(config, clients, retry), signal), retry);
  } catch (error) {
    const f = awsFailure(error);
    return fail(f.reason, `weights unchanged: ${f.detail}`);
  }
  let results: MetricDataResult[];
  try {
    const queries = query.batch.queries as MetricDataQuery[];
    const metrics = () => getMetricData(clients.cloudwatch, queries, query.startTime, query.endTime, signal);
    results = await withRetries(beforeDeadline(metrics, signal), retry);
  } catch (error) {
    const f = awsFailure(error);
    return fail(f.reason, `weights unchanged: ${f.detail}`, targetRead(read.state));
  }
  const alarmed = alarmedClasses(config, options.event);
  const s = step(config, read.state, results, options.nowMs, options.memory, alarmed);
  let outcome: RunOutcome;
  if (!s.ok) {
    outcome = s.deferred ? { action: 'skipped', detail: s.detail } : { action: 'failed', reason: s.reason, detail: s.detail };
  } else if (s.plan.action !== 'write') {
    outcome = s.plan.action === 'skipped' ? { action: 'skipped', detail: s.plan.detail }
      : { action: 'unchanged', ...(s.plan.detail ? { detail: s.plan.detail } : {}) };
  } else {
    const write = s.plan.write;
    let attempts = 0;
    const once = async () => {
      // A retry first asks whether the attempt whose answer was lost landed (`TargetIo.landed`).
      if (attempts++ > 0 && io.landed && await io.landed(config, clients, write, signal)) return;
      await io.write(config, clients, write, read.context, signal);
    };
    try {
      await withRetries(beforeDeadline(once, signal), retry);
      outcome = { action: 'applied', ...(s.plan.detail ? { detail: s.plan.detail } : {}) };
    } catch (error) {
      const f = awsFailure(error);
      // A write the deadline cut off was sent and may have landed: say so, not "unchanged"; the next run reads what is in force.
      const what = f.reason === 'timeout' ? `${s.plan.detail ?? 'the write'}: outcome unknown (sent, and it may have landed; the next run reads the target)`
        : s.plan.detail ? `${s.plan.detail} failed` : 'weights unchanged';
      // A denial is the run's own fault whatever the endpoint's status: it fails, never deferred.
      const taken = f.reason === 'timeout' || isAccessDenied(error) ? undefined : await takenMeanwhile(io, config, clients, signal);
      outcome = taken
        ? { action: 'skipped', detail: `${s.plan.detail ?? 'the weights write'} deferred: ${taken} (it was taken after this run read it: ${f.detail})` }
        : { action: 'failed', reason: f.reason, detail: `${what}: ${f.detail}` };
    }
  }
  // The audit line names the alarm evidence the run counted: no datapoint of the window shows it yet.
  for (const record of runRecords(config, s, outcome, options.nowMs)) {
    options.log(record.audit === 'routing-decision' && alarmed.length > 0 ? { ...record, alarmEvidence: alarmed } : record);
  }
  const memory = rememberRun(s, outcome, options.memory);
  const weights = s.ok ? weightsInForce(s, outcome) : undefined;
  return {
    action: outcome.action,
    ...(outcome.reason ? { reason: outcome.reason } : {}),
    ...(outcome.detail !== undefined ? { detail: outcome.detail } : {}),
    ...(weights ? { weights } : {}),
    ...(memory ? { memory } : {}),
  };
}

async function getMetricData(
  cloudwatch: CloudWatchClient,
  queries: MetricDataQuery[],
  start: number,
  end: number,
  signal: AbortSignal,
): Promise<MetricDataResult[]> {
  const byId = new Map<string, MetricDataResult>();
  let nextToken: string | undefined;
  let pages = 0;
  // One batch; NextToken only appears past 100,800 datapoints, but follow it rather than silently truncate, up to a
  // bound: a service that keeps paging must not keep the run from its deadline.
  do {
    if (++pages > MAX_METRIC_PAGES) throw new Error(`GetMetricData still paging after ${MAX_METRIC_PAGES} pages`);
    const page = await cloudwatch.send(new GetMetricDataCommand({
      MetricDataQueries: queries,
      StartTime: new Date(start * 1000),
      EndTime: new Date(end * 1000),
      ScanBy: 'TimestampAscending',
      NextToken: nextToken,
    }), { abortSignal: signal });
    const unanswered = unansweredQueries(page);
    if (unanswered) throw unanswered;
    for (const r of page.MetricDataResults ?? []) {
      const prior = byId.get(r.Id!);
      byId.set(r.Id!, prior
        ? { ...prior, Timestamps: [...(prior.Timestamps ?? []), ...(r.Timestamps ?? [])], Values: [...(prior.Values ?? []), ...(r.Values ?? [])] }
        : r);
    }
    nextToken = page.NextToken;
  } while (nextToken);
  return [...byId.values()];
}

/** The target's reason to take no write now, asked after a write failed (`TargetIo.takenMeanwhile`); undefined: none, or unreadable. */
async function takenMeanwhile(io: TargetIo, config: ReconcilerConfig, clients: Clients, signal?: AbortSignal): Promise<string | undefined> {
  if (!io.takenMeanwhile || signal?.aborted) return undefined;
  try {
    return await io.takenMeanwhile(config, clients, signal);
  } catch (error) {
    if (isProgrammingError(error)) throw error;
    return undefined;
  }
}
