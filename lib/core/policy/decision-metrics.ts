/**
 * The reconciler's own metrics, in one place. The Lambda emits them as CloudWatch embedded metric format (EMF) and
 * reads some back to rebuild the policy state (mode, ramp, SageMaker replica history) between stateless runs.
 */
export const DECISION_METRICS = {
  /** 1 in capacity mode, 0 in cost mode. Dimensions: Service. */
  mode: 'PolicyMode',
  /** 1 while weights ramp back toward the cost plan. Dimensions: Service. */
  ramping: 'PolicyRamping',
  /** Share of traffic not on the preferred class, 0..1. Dimensions: Service. */
  fallbackShare: 'FallbackShare',
  /** 1 per decision. Dimensions: Service, Reason. */
  decisions: 'PolicyDecisions',
  /** Weight applied to the class. Dimensions: Service, Class. */
  routeWeight: 'RouteWeight',
  /** Ready and desired replicas the reconciler observed (SageMaker: from DescribeEndpoint). Dimensions: Service, Class. */
  readyReplicas: 'ReadyReplicas',
  desiredReplicas: 'DesiredReplicas',
} as const;

export const DECISION_DIMENSIONS = { service: 'Service', class: 'Class', reason: 'Reason' } as const;

/** Default namespace of the decision metrics. */
export const DEFAULT_DECISION_NAMESPACE = 'CapacityAwareInference';
