import type * as iam from 'aws-cdk-lib/aws-iam';
import { type PlacementOptions } from '../core/reconciler/config';
import { type ServingDescription } from '../core/reconciler/serving';

/**
 * A serving construct, as the reconciler and the observability constructs take it (SageMakerCapacityEndpoint,
 * EksInferenceService, or your own). Its plain-data description lives in core (`ServingDescription`); the grant and the
 * floor binding are construct work, so the interface lives here.
 */
export interface IInferenceServing {
  /** The serving facts, computed once the construct is complete. */
  servingDescription(): ServingDescription;
  /**
   * Grants `grantee` the routing writes on this serving's routing target, and the reads they need: exactly what the
   * reconciler calls (SageMaker: DescribeEndpoint and UpdateEndpointWeightsAndCapacities on the endpoint; EKS:
   * DescribeListeners and DescribeTargetHealth, which have no resource type, and ModifyListener on the listener; on a
   * shared listener DescribeRules and ModifyRule on the service's rule). The construct that owns the target writes its
   * statement; nothing else does. Without DescribeTargetHealth the reconciler still runs, but a class whose target
   * group emptied reads as missing data (ALB publishes no HealthyHostCount for it) and holds the weights.
   */
  grantRouting(grantee: iam.IGrantable): iam.Grant;
  /**
   * Called once by each Reconciler on this serving: make the platform's autoscaler honour the replica floors the
   * reconciler produces in capacity mode (EKS: a ScaledObject trigger on the published floor, read over a window that
   * spans the reconciler's period; SageMaker: nothing to deploy, the reconciler raises desired instance counts itself).
   * A serving without it gets no floors: the policy then grows fallbacks by the load it routes to them alone
   * (`PolicyConfig.replicaFloorsApplied: false`). An implementation must make the autoscaler read the floors: where they
   * are published, the policy routes the fallback that receives a deficit no load above its envelope to grow by.
   */
  enableReplicaFloors?(options: ReplicaFloorOptions): unknown;
  /**
   * Called once by each Reconciler on this serving with the placement it enforces (its `sensitive`): the weights the
   * serving deploys, which route every request until the reconciler's first run and again after each deployment that
   * rewrites them, must give a class the placement forbids no weight, as the reconciler never does. A Reconciler with
   * `sensitive: true` over a class with `allowSensitive: false` fails at synth on a serving without it, since nothing
   * then says its deployed weights leave that class out.
   */
  applyPlacement?(placement: PlacementOptions): unknown;
}

/** How the reconciler publishes replica floors. */
export interface ReplicaFloorOptions {
  /** The reconciler's period: it publishes every floor once per period (and at once on alarm runs). */
  readonly periodSeconds: number;
}
