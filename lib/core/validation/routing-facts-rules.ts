/**
 * The routing facts of a serving description: what the Reconciler and the observability constructs check at
 * construction, and the reconciler Lambda on the configuration it reads (lib/core/validation/serving.ts). Each routing
 * target kind checks its own entries (`checkFacts`, lib/core/reconciler/targets), typed against this table.
 *
 * A module of its own, apart from the Reconciler's props (reconciler-rules.ts): the simulator runs the routing
 * targets, and BENCHMARKS.md records a hash of its import closure (lib/sim/source-hash.ts), type imports included. With
 * the Reconciler's table beside this one, a fix to any Reconciler rule made the benchmarks stale, to be rerun for
 * identical results. This table is in the closure through those type imports alone: the simulator evaluates none of it.
 */
import { ALB_LIMITS as ALB, SAGEMAKER_ENDPOINT_LIMITS as SM } from '../platform/limits';
import { crossRule, nameRule, numberRule } from './checker';
import { duplicates, quoted } from './names';
import { REPLICA_READY_TIME_RULE } from './service-rules';

/**
 * The routing facts of a serving description (`servingDescription().routing`), checked wherever they are used: by the
 * Reconciler and the observability constructs at construction, by the reconciler Lambda on the configuration it reads.
 */
export const ROUTING_FACTS_RULES = {
  targets: crossRule<number>(
    `1 to ${ALB.targetGroupsPerForwardAction} ALB target groups`,
    (n) => (n >= 1 && n <= ALB.targetGroupsPerForwardAction ? undefined : `${n} target groups`),
    `an ALB forward action takes 1 to ${ALB.targetGroupsPerForwardAction}`,
  ),
  variants: crossRule<number>(
    `1 to ${SM.maxVariants} production variants`,
    (n) => (n >= 1 && n <= SM.maxVariants ? undefined : `${n} variants`),
    `a SageMaker endpoint configuration takes 1 to ${SM.maxVariants}`,
  ),
  // SageMaker's EndpointConfigName: "Length Constraints: Maximum length of 63. Pattern: ^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}"
  // (API reference, https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DescribeEndpointConfig.html; the same on
  // API_EndpointConfigSummary.html and API_PendingDeploymentSummary.html). A token is CloudFormation's generated name.
  endpointConfigName: nameRule('sageMakerName', {
    tokens: 'carry',
    why: 'the SageMaker endpoint configuration the facts describe, compared with DescribeEndpoint\'s EndpointConfigName',
  }),
  'variants[].classes': crossRule<number>(
    `1 to ${SM.maxPoolsPerVariant} classes (instance pools) per variant`,
    (n) => (n >= 1 && n <= SM.maxPoolsPerVariant ? undefined : `${n} classes`),
  ),
  'variants[].variantName': crossRule<readonly string[]>(
    'unique variant names',
    (names) => (duplicates(names).length === 0 ? undefined : `${quoted(duplicates(names))} occur more than once`),
  ),
  'variants[].variantName@classes': crossRule<{ readonly variantName: string; readonly classNames: readonly string[]; readonly allClassNames: readonly string[] }>(
    'a variant name that is no class name, or the name of its only class',
    ({ variantName, classNames, allClassNames }) => (!allClassNames.includes(variantName)
      || (classNames.length === 1 && classNames[0] === variantName) ? undefined : `'${variantName}' is the name of a capacity class it is not exactly`),
    'a routed class and a capacity class share the CapacityClass dimension: one name must mean the same replicas',
  ),
  'classes[].name': crossRule<readonly string[]>(
    'unique capacity class names',
    (names) => (duplicates(names).length === 0 ? undefined : `${quoted(duplicates(names))} occur more than once`),
  ),
  'classes[].preferenceRank': numberRule({ integer: true, min: 0 }),
  'classes[].tokensPerSecondPerReplica': numberRule({ above: 0, unit: 'tokens/s', why: 'from the measured envelope' }),
  'classes[].safeConcurrency': numberRule({ above: 0, unit: 'requests' }),
  'classes[].usdPerReplicaHour': numberRule({ min: 0, unit: 'USD' }),
  'classes[].maxReplicas': numberRule({ integer: true, min: 1 }),
  'classes[].replicaReadyTimeP95Seconds': REPLICA_READY_TIME_RULE,
  'variants[].maxInstances': numberRule({ integer: true, min: 1 }),
} as const;
