import { type Action } from '@aws-sdk/client-elastic-load-balancing-v2';

/** What the routing target holds now. */
export interface TargetState {
  /** Weights in force, by routed class name. */
  readonly weights: Record<string, number>;
  /** SageMaker only: per variant, the instance count of each pool's instance type. */
  readonly pools: Record<string, Record<string, number>>;
  /** SageMaker only: ready (current) and desired instances per variant. */
  readonly replicas: Record<string, { ready: number; desired: number }>;
  /** Routed names (ALB: class names; SageMaker: variant names) the live target actually holds. */
  readonly present: readonly string[];
  /** Why weights cannot be written now (SageMaker endpoint not InService, listener without a forward action). */
  readonly notWritable?: string;
  /** ALB only: the listener's default actions as read, written back with new weights. */
  readonly actions?: Action[];
}
