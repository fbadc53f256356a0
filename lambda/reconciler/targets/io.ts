/** The I/O of one routing-target kind in the Lambda: read the target, make one write, build its client. */
import { type ReconcilerConfig } from '../../../lib/core/reconciler/config';
import { beforeDeadline, isProgrammingError, type RetryOptions, withRetries } from '../../../lib/core/reconciler/retry';
import { type RoutingWrite, type TargetState } from '../../../lib/core/reconciler/targets';
import { type ApplicationAutoScalingClient } from '@aws-sdk/client-application-auto-scaling';
import { type CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { type ElasticLoadBalancingV2Client } from '@aws-sdk/client-elastic-load-balancing-v2';
import { type SageMakerClient } from '@aws-sdk/client-sagemaker';

/** The SDK clients of one run (injected, so tests drive it with mocks). */
export interface Clients {
  readonly cloudwatch: CloudWatchClient;
  /** Present for a SageMaker target. */
  readonly sagemaker?: SageMakerClient;
  /** Present for a SageMaker target: its variants' scalable targets (their live bounds). */
  readonly autoScaling?: ApplicationAutoScalingClient;
  /** Present for an ALB target. */
  readonly elbv2?: ElasticLoadBalancingV2Client;
}

export interface TargetRead {
  readonly state: TargetState;
  /** What the write needs from the read (ALB: the listener's default actions); opaque to everyone else. */
  readonly context?: unknown;
}

export interface TargetIo {
  /** `retry` (with the run's deadline as its signal) is for the reads the run can go on without (`optionalRead`). */
  read(config: ReconcilerConfig, clients: Clients, retry: RetryOptions): Promise<TargetRead>;
  write(config: ReconcilerConfig, clients: Clients, write: RoutingWrite, context: unknown, signal?: AbortSignal): Promise<void>;
  /**
   * Whether `write` is already in force at the target: asked before a write is retried, for a kind whose write cannot
   * be sent twice (an attempt whose answer was lost, a timeout or a 5xx, may have been applied). Absent: the write is
   * idempotent and is simply sent again.
   */
  landed?(config: ReconcilerConfig, clients: Clients, write: RoutingWrite, signal?: AbortSignal): Promise<boolean>;
  /**
   * Asked after a write failed: why the target takes no write now (a status that ends by itself, the read's
   * `notWritable`), or undefined. A kind whose target another writer can lock between the run's read and its write
   * (SageMaker: Application Auto Scaling's own update) defers such a write, as the read would have, instead of failing
   * the run. Absent: a failed write fails the run.
   */
  takenMeanwhile?(config: ReconcilerConfig, clients: Clients, signal?: AbortSignal): Promise<string | undefined>;
  /** The SDK clients this kind calls, built with the Lambda profile (LAMBDA_CLIENT_OPTIONS: one attempt, request timeouts). */
  client(): Promise<Partial<Clients>>;
}

/** Most time a read the run can go on without may take, its retry included: it must never eat the run's deadline. */
export const OPTIONAL_READ_TIMEOUT_MS = 6000;

/**
 * A read the run can go on without (SageMaker: the variants' scaling bounds; ALB: the target groups' health): one
 * retry (a throttled call) within `timeoutMs`, not the run's full budget, so that a slow service never costs the
 * weights their write. Once spent, or on an error no retry helps (AccessDenied to a hand-written serving without the
 * grant), the run goes on without it and the audit line says why. Past the run's deadline, and on a bug
 * (`isProgrammingError`), it throws.
 */
export async function optionalRead<T>(
  op: (signal: AbortSignal) => Promise<T>,
  retry: RetryOptions,
  timeoutMs = OPTIONAL_READ_TIMEOUT_MS,
): Promise<{ value: T } | { failed: string }> {
  const budget = AbortSignal.timeout(timeoutMs);
  const signal = retry.signal ? AbortSignal.any([retry.signal, budget]) : budget;
  try {
    return { value: await withRetries(beforeDeadline(() => op(signal), signal), { ...retry, maxAttempts: Math.min(retry.maxAttempts, 2), signal }) };
  } catch (e) {
    if (retry.signal?.aborted || isProgrammingError(e)) throw e;
    if (budget.aborted) return { failed: `no answer within ${timeoutMs / 1000} s` };
    const err = e as { name?: string; message?: string };
    return { failed: `${err.name ?? 'Error'}: ${err.message ?? String(e)}` };
  }
}
