// The public surface of the pure domain logic (no aws-cdk-lib, no AWS SDK): what a user writes against. Everything
// else in lib/core is internal to the package (its `exports` map admits no deep import), imported by path inside it.

// ---- service: the contract, capacity classes, their checks and the capacity plan
export * from './service/contract';
export * from './service/capacity-class';
export { defineCapacityClasses, checkCapacityClasses, type ClassProblem, type CheckOptions } from './service/checks';
export {
  planCapacity, memoryBreakdown, kvCacheGiB, usdPerMillionTokens, HOURS_PER_MONTH,
  type MemoryBreakdown, type PlanOptions, type ClassPlan, type CapacityPlan,
} from './service/sizing';
export { LLAMA_3_8B_BF16 } from './service/footprints';

// ---- hardware: instance profiles and the sourced catalog
export * from './hardware/profile';
export { HardwareCatalog } from './hardware/catalog';

// ---- runtime: what each engine reads, and the flags and variables a class binds to
export { ENGINES, ENGINE_FACTS, type EngineName, type EngineFacts, type RejectionStatus, type IdleConnections } from './runtime/engines';
export { bindRuntime, type ServingPlatform, type RuntimeTarget, type RuntimeBinding, type RuntimeWarning } from './runtime/binding';
export { admissionLimits, serverAdmission, type AdmissionLimits } from './runtime/admission';

// ---- metrics: the metric contract (names, namespace, dimensions) and the signal-contract check
export {
  METRIC_NAMESPACE, Metrics, AwsMetrics, Dim, AwsDim, ALL_METRICS, METRIC_PERIOD_SECONDS, POLICY_MODE_VALUE, CAPACITY_OUTCOMES,
  ADMISSION_DECISIONS, classDimensions, serviceDimensions, emfRecord, MetricContractError, type MetricSpec, type MetricUnit,
  type MetricEmitter, type MetricValue, type CapacityOutcome, type AdmissionDecision,
} from './metrics/contract';
export { AWS_PUBLISHED_METRICS, type AwsPublishedMetric, type PublishedMetricPrerequisite } from './metrics/aws-published';
export { karpenterCapacityErrorMetric, KARPENTER_CAPACITY_NAMESPACE } from './metrics/karpenter-capacity';
export { signalContractProblems, type CfnTemplate, type MetricRead, type MetricProducer } from './metrics/template-check';

// ---- policy: decide() and its types and defaults
export * from './policy/types';
export { DEFAULT_POLICY_CONFIG, resolvePolicyConfig } from './policy/defaults';
export { decide, initialPolicyState } from './policy/decide';

// ---- reconciler: what a serving construct tells the reconciler about itself
export * from './reconciler/routing-facts';
export { type ServingDescription, type ServingSignals, type ClassSignalProducers } from './reconciler/serving';
export { type PlacementOptions } from './reconciler/config';

// ---- trust: what "pinned" and "approved" mean
export { isDigestPinnedImage, type EcrImageReference } from './trust/image-reference';
export {
  verifyArtifacts, type ApprovedArtifacts, type ApprovedModelData, type VerificationEvidence, type VerificationVerdict,
  type MultipartDigestPolicy,
} from './trust/artifact-verification';

// ---- validation: the one error every construct throws, and recognising CDK tokens without aws-cdk-lib
export { ConstructValidationError, type Problem } from './validation/error';
export { isUnresolved } from './validation/tokens';
