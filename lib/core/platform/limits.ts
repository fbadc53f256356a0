/**
 * The service limits the library's rules are written against, in one place: the validation rules
 * (lib/core/validation/rules.ts, reconciler-rules.ts), the SageMaker variant planner and the EKS checks read them from here.
 */

/**
 * Limits of an Application Load Balancer listener action: a forward action takes at most 5 target groups (not
 * adjustable; https://docs.aws.amazon.com/elasticloadbalancing/latest/application/load-balancer-limits.html).
 */
export const ALB_LIMITS = {
  targetGroupsPerForwardAction: 5,
} as const;

/**
 * Limits of `AWS::SageMaker::EndpointConfig` (CreateEndpointConfig,
 * https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateEndpointConfig.html).
 */
export const SAGEMAKER_ENDPOINT_LIMITS = {
  /** Instance pools per production variant. */
  maxPoolsPerVariant: 5,
  /** Production variants per endpoint configuration. */
  maxVariants: 10,
  /** `VariantInstanceProvisionTimeoutInSeconds` bounds. */
  minProvisionTimeoutSeconds: 300,
  maxProvisionTimeoutSeconds: 3600,
} as const;
