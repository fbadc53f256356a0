/** The I/O of one routing-target kind in the Lambda: read the target, make one write, build its client. */
import { type ReconcilerConfig } from '../../../lib/core/reconciler/config';
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
  read(config: ReconcilerConfig, clients: Clients, signal?: AbortSignal): Promise<TargetRead>;
  write(config: ReconcilerConfig, clients: Clients, write: RoutingWrite, context: unknown, signal?: AbortSignal): Promise<void>;
  /** The SDK client this kind calls, built with the shell's options (one attempt, request timeouts). */
  client(options: object): Promise<Partial<Clients>>;
}
