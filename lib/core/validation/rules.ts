/**
 * Every documented input rule of every construct, by construct and prop. The checks read their rule from here (a
 * `Checker` over one of these tables), and `docs/validation.md` is generated from `VALIDATION_MATRIX`: what the
 * document says is what the code enforces.
 */
import { crossRule, nameRule, numberRule } from './checker';

/** The service contract (`contract` of every serving construct, and `defineCapacityClasses({ contract })`). */
export const CONTRACT_RULES = {
  name: nameRule('dns1123Label', { why: 'it names Kubernetes objects, SageMaker resources and the Service metric dimension' }),
  'slo.ttftP95Ms': numberRule({ above: 0, unit: 'ms' }),
  'slo.itlP95Ms': numberRule({ above: 0, unit: 'ms' }),
  'slo.deadlineMs': numberRule({ above: 0, unit: 'ms' }),
  'slo.deadlineMs>ttft': crossRule('a deadline above the p95 time to first token (a request cannot be answered before its first token)'),
  'requestShape.meanPromptTokens': numberRule({ min: 0, unit: 'tokens' }),
  'requestShape.meanOutputTokens': numberRule({ above: 0, unit: 'tokens', why: 'demand in tokens/s and admission limits divide by it; count 1 per request for models that do not generate tokens' }),
  peakRequestsPerSecond: numberRule({ above: 0, unit: 'requests/s', why: 'the fleet is planned for it' }),
  headroom: numberRule({ min: 0, max: 4, why: 'a fraction: 0.2 plans 20 % above peak' }),
} as const;

/** One capacity class (`classes[]` of every serving construct and of `defineCapacityClasses`). */
export const CLASS_RULES = {
  name: nameRule('dns1123Label', { why: 'it names Kubernetes objects and SageMaker resources' }),
  maxReplicas: numberRule({ integer: true, min: 1 }),
  usdPerHour: numberRule({ above: 0, unit: 'USD per instance-hour' }),
  'footprint.weightsGiB': numberRule({ above: 0, unit: 'GiB' }),
  'footprint.workspaceGiB': numberRule({ min: 0, unit: 'GiB' }),
  'footprint.kvCacheBytesPerToken': numberRule({ min: 0, unit: 'bytes' }),
  'footprint.maxSequenceTokens': numberRule({ integer: true, min: 1, unit: 'tokens' }),
  'footprint.tensorParallelDegree': numberRule({ integer: true, min: 1 }),
  'runtime.maxConcurrentSequences': numberRule({ integer: true, min: 1 }),
  'runtime.maxBatchTokens': numberRule({ integer: true, min: 1, unit: 'tokens' }),
  'runtime.maxQueueDelayMs': numberRule({ min: 0, unit: 'ms' }),
  'runtime.maxQueueDelayMs<deadline': crossRule('a queue delay below the service deadline (contract.slo.deadlineMs)'),
  'envelope.tokensPerSecondPerReplica': numberRule({ above: 0, unit: 'tokens/s' }),
  'envelope.safeConcurrency': numberRule({ above: 0, unit: 'requests' }),
  'envelope.ttftP95Ms': numberRule({ above: 0, unit: 'ms' }),
  'envelope.itlP95Ms': numberRule({ above: 0, unit: 'ms' }),
  'envelope.serviceTime<deadline': crossRule(
    'p95 TTFT + mean output tokens x p95 ITL below the service deadline (the same rule on EKS and SageMaker)',
    'a mean request that needs the whole deadline on an idle replica can never be answered in time',
  ),
  'envelope.plausible': crossRule('generated tokens only: tokens/s at the safe concurrency may not imply a mean inter-token latency more than 8x below the p95'),
  'envelope.latency<=slo': crossRule('at most the SLO of the contract (the envelope must be measured at the SLO)'),
  'runtime.maxConcurrentSequences>=safeConcurrency': crossRule(
    "at least the envelope's safe concurrency",
    'the envelope was measured with larger batches than this class runs; re-measure it or raise the batch size',
  ),
  'memory.utilizationCap': numberRule({ above: 0, max: 1 }),
  'memory.marginGiB': numberRule({ min: 0, unit: 'GiB' }),
  'placement.zones': nameRule('availabilityZone'),
  'placement.zones@sagemaker': crossRule(
    'no zones on SageMaker (omit placement.zones)',
    'SageMaker places endpoint instances itself and has no zone setting: the zones would be silently ignored',
  ),
} as const;

/** `EksInferenceService` props beyond the contract and the classes. */
export const EKS_RULES = {
  'contract.name': nameRule('dns1035Label', { why: "it prefixes every class's Kubernetes Service name, and Service names are DNS-1035 labels" }),
  namespace: nameRule('dns1123Label'),
  clusterName: nameRule('eksClusterName', { why: 'it appears in IAM condition keys and Karpenter discovery tags' }),
  classes: crossRule('1 to 5 classes', 'each class is one target group of the ALB listener, and an ALB forward action takes at most 5 target groups'),
  'class.objectName': nameRule('dns1035Label', { why: "'<service>-<class>' names the class's Service, Deployment and NodePool" }),
  'classOptions.nodePoolName': nameRule('dns1123Label', { why: 'also the karpenter.sh/nodepool label value' }),
  'classOptions.minReplicas': numberRule({ integer: true, min: 1, why: 'a warm replica keeps the class routable' }),
  'classOptions.maxReplicas': numberRule({ integer: true, min: 1 }),
  'classOptions.replicaRange': crossRule('minReplicas <= maxReplicas <= the class quota (maxReplicas of the class)'),
  'classOptions.targetRequestsPerReplicaPerPeriod': numberRule({ above: 0, unit: 'requests per period' }),
  'classOptions.port': numberRule({ integer: true, min: 1024, max: 65535, why: 'the server runs as non-root' }),
  'classOptions.path': crossRule("a path starting with '/' of at most 1024 characters (the ALB health check path limit)"),
  'classOptions.warmup.maxLatency': numberRule({ above: 0, max: 3600, unit: 's' }),
  'classOptions.startupTimeout': numberRule({ integer: true, min: 10, max: 86400, unit: 's' }),
  'classOptions.modelCacheSize': numberRule({ integer: true, min: 1, unit: 'GiB' }),
  'classOptions.nodeVolumeSize': numberRule({ integer: true, min: 1, max: 16384, unit: 'GiB', why: 'gp3 volume sizes (EC2NodeClass blockDeviceMappings)' }),
  'classOptions.capacityTypes': crossRule("a non-empty list of 'on-demand', 'spot' and 'reserved'"),
  'scaling.metricPeriod': numberRule({ integer: true, min: 60, multipleOf: 60, unit: 's', why: 'ALB metrics have 1-minute resolution; KEDA takes periods of 60 s or more only in whole minutes' }),
  'scaling.metricCollectionTime': numberRule({ integer: true, min: 60, unit: 's' }),
  'scaling.metricCollectionTime%period': crossRule('a whole multiple of scaling.metricPeriod, at least one (KEDA aws-cloudwatch scaler)'),
  'scaling.scaleDownStabilization': numberRule({ integer: true, min: 0, max: 3600, unit: 's', why: 'HPA behavior stabilizationWindowSeconds' }),
  'scaling.maxScaleUpPods': numberRule({ integer: true, min: 1 }),
  'scaling.scaleUpPeriod': numberRule({ integer: true, min: 1, max: 1800, unit: 's', why: 'HPA scaling policy periodSeconds' }),
  'scaling.pollingInterval': numberRule({ integer: true, min: 1, unit: 's' }),
  'loadBalancer.deregistrationDelay': numberRule({ integer: true, min: 0, max: 3600, unit: 's', why: 'ALB deregistration_delay.timeout_seconds' }),
  'loadBalancer.allowedCidrs': crossRule("IPv4 CIDR blocks such as '10.0.0.0/16'"),
  'clusterOptions.systemNodeCount': numberRule({ integer: true, min: 1, max: 450, why: 'the controllers need a node; a managed node group holds at most 450' }),
  amiAlias: nameRule('karpenterAmiAlias'),
} as const;

/** `SageMakerCapacityEndpoint` props beyond the contract and the classes. */
export const SAGEMAKER_RULES = {
  endpointName: nameRule('sageMakerName', { tokens: 'carry' }),
  'metrics.publishFrequency': crossRule('10, 30, 60, 120, 180, 240 or 300 seconds', 'the periods SageMaker enhanced metrics publish at'),
  'variants[].name': nameRule('sageMakerName'),
  'variants[].classes[].priority': numberRule({ integer: true, min: 1, max: 5 }),
  'variants[].scaling.minInstances': numberRule({ integer: true, min: 1, why: 'an instance-based variant cannot scale to 0' }),
  'variants[].scaling.maxInstances': numberRule({ integer: true, min: 1 }),
  'variants[].scaling.targetConcurrencyPerInstance': numberRule({ above: 0, unit: 'requests' }),
  'variants[].initialWeight': numberRule({ min: 0 }),
  provisionTimeout: numberRule({ integer: true, min: 300, max: 3600, unit: 's', why: 'VariantInstanceProvisionTimeoutInSeconds' }),
  'variants[].provisionTimeout': numberRule({ integer: true, min: 300, max: 3600, unit: 's', why: 'VariantInstanceProvisionTimeoutInSeconds' }),
  containerStartupHealthCheckTimeout: numberRule({ integer: true, min: 60, max: 3600, unit: 's' }),
  modelDataDownloadTimeout: numberRule({ integer: true, min: 60, max: 3600, unit: 's' }),
  standbyInstances: numberRule({ integer: true, min: 1, why: 'SageMaker variants cannot scale to 0' }),
  warmFloorShare: numberRule({ min: 0, below: 1 }),
  scaleOutCooldown: numberRule({ integer: true, min: 0, unit: 's', tokens: 'carry' }),
  scaleInCooldown: numberRule({ integer: true, min: 0, unit: 's', tokens: 'carry' }),
  'dataCapture.samplingPercentage': numberRule({ integer: true, min: 1, max: 100, tokens: 'carry' }),
} as const;

/** `Reconciler` props (the routing policy's tunables included). */
export const RECONCILER_RULES = {
  service: crossRule('1 to 255 characters of letters, digits and . - _ : / (a CloudWatch dimension value)'),
  tokensPerRequest: numberRule({ above: 0, unit: 'tokens' }),
  facts: crossRule('1 to 5 ALB target groups, or 1 to 10 SageMaker variants of at least one pool each'),
  'policy.period': numberRule({ integer: true, min: 60, multipleOf: 60, unit: 's', why: 'the schedule runs at EventBridge rates of whole minutes' }),
  'policy.headroom': numberRule({ min: 0, max: 4 }),
  'policy.warmFloorShare': numberRule({ min: 0, max: 0.2 }),
  'policy.weightTotal': numberRule({ integer: true, min: 10, max: 999, why: 'ALB accepts at most 999 per target group' }),
  'policy.capacityErrorLookback': numberRule({ integer: true, min: 1, unit: 's' }),
  'policy.provisioningGrace': numberRule({ integer: true, min: 1, unit: 's' }),
  'policy.stabilizationWindow': numberRule({ integer: true, min: 1, unit: 's' }),
  'policy.windows%period': crossRule('a whole number of periods, at least one'),
  'policy.latencySloP95': numberRule({ above: 0, unit: 'ms' }),
  'policy.latencyBreachPeriods': numberRule({ integer: true, min: 1, max: 60 }),
  'policy.rampStepShare': numberRule({ above: 0, max: 1 }),
  'policy.rampStep>=2': crossRule('at least 2 weight units per tick (rampStepShare x weightTotal >= 2)'),
  'policy.minWeightChangeShare': numberRule({ min: 0, below: 1 }),
  'policy.minWeightChange<ramp': crossRule('below rampStepShare'),
  'policy.demandWindowPeriods': numberRule({ integer: true, min: 1, max: 60 }),
  'policy.demandQuantile': numberRule({ min: 0, max: 1 }),
  'policy.reentryMemory': numberRule({ integer: true, min: 0, unit: 's' }),
  'policy.maxReturnHold': numberRule({ integer: true, min: 1, unit: 's' }),
  'policy.maxReturnHold>=stabilization': crossRule('at least stabilizationWindow'),
  metricDelay: numberRule({ integer: true, min: 0, max: 900, unit: 's' }),
  capacityErrorMetrics: crossRule('one plain metric (no math expression) per routed class name'),
} as const;

/** `InferenceAlarms`, `InferenceDashboard` and `InferenceObservability` props. */
export const OBSERVABILITY_RULES = {
  service: crossRule('1 to 1024 characters (a CloudWatch dimension value)'),
  period: crossRule('10 s, 30 s or a whole number of minutes (CloudWatch periods)'),
  'alarm.duration': crossRule('a whole number of periods, at least one, at most 1 day'),
  'fallbackShare.thresholdPercent': numberRule({ above: 0, below: 100, unit: '%' }),
  'deadlineExhaustion.thresholdPercent': numberRule({ above: 0, below: 100, unit: '%' }),
  'deadlineExhaustion.minRequestsPerPeriod': numberRule({ integer: true, min: 1 }),
  'preferredCapacityErrors.threshold': numberRule({ integer: true, min: 1, why: 'capacity errors per period' }),
  dashboardName: nameRule('cloudWatchDashboard', { tokens: 'carry' }),
} as const;

/** `ArtifactTrust` and `ApprovedImagesAdmission` props. */
export const TRUST_RULES = {
  signingProfileName: nameRule('signerProfile'),
  repositoryNames: nameRule('ecrRepository'),
  'verifierRetry.maxAttempts': numberRule({ integer: true, min: 1, max: 10 }),
  verifierTimeout: numberRule({ integer: true, min: 60, max: 900, unit: 's', why: 'the verifier keeps 15 s to answer CloudFormation; Lambda allows 900 s' }),
  signatureValidity: numberRule({ integer: true, min: 1, unit: 'days' }),
  'admission.policyName': crossRule('a DNS-1123 subdomain of at most 245 characters (the binding adds "-binding")'),
  'admission.namespace': nameRule('dns1123Label', { tokens: 'carry' }),
  'admission.images': crossRule('a non-empty list of distinct images pinned by digest (<registry>/<repository>@sha256:<64 hex>)'),
} as const;

/** Every table, by the construct (or function) whose props it checks: the source of `docs/validation.md`. */
export const VALIDATION_MATRIX = {
  'ServiceContract (contract)': CONTRACT_RULES,
  'CapacityClassSpec (classes[])': CLASS_RULES,
  EksInferenceService: EKS_RULES,
  SageMakerCapacityEndpoint: SAGEMAKER_RULES,
  Reconciler: RECONCILER_RULES,
  'InferenceAlarms / InferenceDashboard / InferenceObservability': OBSERVABILITY_RULES,
  'ArtifactTrust / ApprovedImagesAdmission': TRUST_RULES,
} as const;
