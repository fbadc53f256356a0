/**
 * How an Application Load Balancer holds connections to its targets. Its idle timeout is 1 to 4000 seconds
 * (https://docs.aws.amazon.com/elasticloadbalancing/latest/application/edit-load-balancer-attributes.html, "Connection
 * idle timeout"), and a target whose own keep-alive is shorter closes connections the ALB may reuse at that moment:
 * "we recommend that you configure the idle timeout of your application to be larger than the idle timeout configured
 * for the load balancer" (the same page), else clients see sporadic 502s.
 */
export const ALB_MAX_IDLE_TIMEOUT_SECONDS = 4000;

/** A server keep-alive longer than any ALB's idle timeout, for a listener whose timeout the library may not know. */
export const KEEP_ALIVE_ABOVE_ANY_ALB_SECONDS = ALB_MAX_IDLE_TIMEOUT_SECONDS + 5;

/** The idle timeout a request deadline asks for, before the ALB's cap: its 60 s default, or the deadline and 5 s where that is longer. */
export function wantedAlbIdleSeconds(requestDeadlineMs: number): number {
  return Math.max(60, Math.ceil(requestDeadlineMs / 1000) + 5);
}

/**
 * The ALB idle timeout the library renders for a deadline (lib/eks/routing.ts `albIdleTimeout`): a non-streamed answer
 * within its deadline is not cut off with a 504, since the timeout counts seconds without a byte on the connection. A
 * request that waits that long in its server's queue has its client and target connections closed by the ALB ("the
 * period of time an existing client or target connection can remain inactive, with no data being sent or received,
 * before the load balancer closes the connection": the page above, "Connection idle timeout").
 */
export function albIdleTimeoutSeconds(requestDeadlineMs: number): number {
  return Math.min(ALB_MAX_IDLE_TIMEOUT_SECONDS, wantedAlbIdleSeconds(requestDeadlineMs));
}
