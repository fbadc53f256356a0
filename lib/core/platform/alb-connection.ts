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
