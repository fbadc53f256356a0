/**
 * Every documented input rule of every construct, by construct and prop. The checks read their rule from here (a
 * `Checker` over one of these tables); a rule between props carries its own check, so the table holds the code and
 * the text. `docs/validation.md` is generated from `VALIDATION_MATRIX`: what the document says is what the code
 * enforces.
 */
import { BLUE_GREEN_EXECUTION_TIMEOUT_SECONDS, type BlueGreenSteps, blueGreenStepsFloor } from '../platform/blue-green-deployment';
import {
  AL2023_ROOT_SNAPSHOT_GIB, ALB_LIMITS as ALB, GP3_LIMITS, maxAlarmEvaluationSeconds, MIN_NODE_VOLUME_GIB, NODE_DATA_VOLUME,
  SAGEMAKER_ENDPOINT_LIMITS as SM,
} from '../platform/limits';
import { describeNodeEndpoints, GATEWAY_NODE_ENDPOINTS, ISOLATED_SUBNET_ENDPOINTS } from '../platform/isolated-node-endpoints';
import { KARPENTER_CONTROLLER } from '../platform/system-nodes';
import { parseSigningProfileArn, SIGNING_PROFILE_ARN_FORM } from '../trust/artifact-verification';
import { ECR_IMAGE_FORM, isDigestPinnedImage, parseEcrImage } from '../trust/image-reference';
import { crossRule, nameRule, numberRule } from './checker';
import { duplicates, quoted } from './names';
import { METRIC_DELAY_RULE, RECONCILER_RULES, SERVICE_DIMENSION_RULE, SERVING_RULE, WARM_FLOOR_SHARE_RULE } from './reconciler-rules';
import { ROUTING_FACTS_RULES } from './routing-facts-rules';
import { SAGEMAKER_SCALING_TARGET_RULES } from './sagemaker-scaling-rules';
import { CLASS_RULES, CONTRACT_RULES } from './service-rules';
import { isUnresolved } from './tokens';
import { latePeriods } from '../metrics/alarm-window';
import { METRIC_PERIOD_SECONDS } from '../metrics/contract';
import { hasInstancePools } from '../reconciler/targets/sagemaker-instances';

// The tables the reconciler Lambda checks its configuration with live in reconciler-rules.ts and routing-facts-rules.ts,
// the contract's and a class's in service-rules.ts, a SageMaker variant's scaling target in sagemaker-scaling-rules.ts
// (see there why); every construct's checks still find their table here.
export { CLASS_RULES, CONTRACT_RULES, RECONCILER_RULES, ROUTING_FACTS_RULES, SERVICE_DIMENSION_RULE, SERVING_RULE, WARM_FLOOR_SHARE_RULE };

/** Kubernetes DNS-1123 subdomain (apimachinery IsDNS1123Subdomain). */
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const IPV4_CIDR = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}\/(3[0-2]|[12]?\d)$/;

/** What a construct knows of its `modelDataEncryptionKey` (lib/trust/model-data-key.ts `modelDataKeyFacts`). */
export interface ModelDataKeyFacts {
  /** `keyArn` of the IKey: literal text and CDK tokens. */
  readonly keyArn: string;
  /** The construct path of the key when it is a kms.IAlias (a `new kms.Alias`, `Alias.fromAliasName`, ...). */
  readonly alias?: string;
}

/**
 * One serving construct per service name in a stack: the stack's template keeps one serving record per name
 * (`Metadata[SERVING_RECORD_METADATA_KEY][service]`, lib/core/service/serving-record.ts), which `verify` and the game day
 * read, so a second construct of that name would silently replace the first's (review R203).
 */
export const SERVICE_PER_STACK_RULE = crossRule<{ readonly service: string; readonly servedBy?: string }>(
  'a service name no other serving construct in this stack uses',
  ({ service, servedBy }) => (servedBy === undefined ? undefined : `is '${service}', which the serving construct at '${servedBy}' in this stack also serves`),
  "the stack's serving record, which verify and the game day read, holds one service per name",
);

/**
 * One serving construct per service name in each account and Region an app deploys to: the control loop reads and
 * writes its CloudWatch metrics by the dimensions [Service, CapacityClass] (lib/core/metrics/contract.ts `Dim`) within
 * an account and Region, so two of one name in different stacks would mix their series (one's KEDA ScaledObject reading
 * the other's ReplicaFloor; the Reconciler, the alarms and the dashboards reading both). Checked only where the stack
 * names both account and Region (`environmentKey`, lib/util/environment-key.ts); environment-agnostic stacks and
 * separate apps cannot be checked at synth (docs/reconciler.md).
 */
export const SERVICE_PER_ENVIRONMENT_RULE = crossRule<{ readonly service: string; readonly servedBy?: string; readonly where?: string }>(
  'a service name no other serving construct of this app uses in the same account and Region (another contract name, or a stack in '
    + 'another account or Region)',
  ({ service, servedBy, where }) => (servedBy === undefined ? undefined
    : `is '${service}', which the serving construct at '${servedBy}' also serves in ${where}`),
  'the control loop reads and writes its CloudWatch metrics by [Service, CapacityClass] in an account and Region: two services of one name '
    + "would read each other's replica floors, routing state and signals, and their alarms and dashboards would mix both",
);

/**
 * The model-data key of every reader (ArtifactTrust, EksInferenceService, SageMakerCapacityEndpoint). An alias is
 * refused: its `keyArn` is the alias ARN, and "when an alias is the value of a resource element, the policy applies to
 * the alias resource, not to any KMS key" (https://docs.aws.amazon.com/kms/latest/developerguide/alias-authorization.html),
 * so kms:Decrypt would never be granted. ':alias/' in the literal text of `keyArn` is an alias ARN even with tokens
 * around it (a token never encodes to that text); a key whose ARN is wholly a token passes.
 */
export const MODEL_DATA_KEY_RULE = crossRule<ModelDataKeyFacts>(
  "a KMS key, not an alias (a kms.Key, or kms.Key.fromKeyArn with the key's ARN: arn:<partition>:kms:<region>:<account>:key/<key id>)",
  ({ keyArn, alias }) => (alias !== undefined ? `is the alias '${alias}'`
    : keyArn.includes(':alias/') ? `is '${keyArn}', an alias ARN` : undefined),
  'IAM grants kms:Decrypt on a key ARN only; a policy naming an alias ARN applies to the alias, not to its key',
);

/**
 * An agent config that would not run Container Insights with enhanced observability. Unset, null or empty keeps the
 * add-on's default config, which does: the chart renders `{{- if $agent.config }}` its config `{{- else }}` its
 * defaultConfig, and Helm's `if` is false for null and for an empty map (templates/linux/cloudwatch-agent-custom-resource.yaml;
 * review R204).
 */
function enhancedContainerInsightsProblem(config: unknown): string | undefined {
  type AgentConfig = { logs?: { metrics_collected?: { kubernetes?: { enhanced_container_insights?: unknown } } } };
  const unset = config === undefined || config === null || (typeof config === 'object' && !Array.isArray(config) && Object.keys(config).length === 0);
  return unset || (config as AgentConfig).logs?.metrics_collected?.kubernetes?.enhanced_container_insights === true
    ? undefined : 'has no logs.metrics_collected.kubernetes.enhanced_container_insights: true';
}

/** What an approved-images policy can approve, as the rules say it (`admission.images`, EKS `additionalApprovedImages`). */
const APPROVABLE_IMAGES = 'distinct images pinned by digest (<registry>/<repository>@sha256:<64 hex>)';

/**
 * Why images cannot be approved, one clause each, or undefined: a token (an approval is named at synth by a hash of
 * its reference: `imageApproval`, lib/trust/admission-policy.ts), a reference not pinned by digest, one listed twice.
 * The one digest rule of every list of approved images.
 */
function unapprovableImages(images: readonly string[]): string | undefined {
  const found = [
    ...(images.some(isUnresolved) ? ['holds a CDK token (each approval is named, at synth, by a hash of its image reference)'] : []),
    ...images.filter((i) => !isUnresolved(i) && !isDigestPinnedImage(i)).map((i) => `'${i}' is not pinned by digest (a tag is mutable)`),
    ...duplicates(images).map((i) => `'${i}' is listed twice`),
  ];
  return found.length === 0 ? undefined : found.join('; ');
}

/** `EksInferenceService` props beyond the contract and the classes. */
export const EKS_RULES = {
  modelDataEncryptionKey: MODEL_DATA_KEY_RULE,
  'contract.name@stack': SERVICE_PER_STACK_RULE,
  'contract.name@environment': SERVICE_PER_ENVIRONMENT_RULE,
  'contract.name': nameRule('dns1035Label', { why: "it prefixes every class's Kubernetes Service name, and Service names are DNS-1035 labels" }),
  namespace: nameRule('dns1123Label'),
  // The service owns its namespace: the library creates it with Pod Security Admission `enforce: restricted` (which
  // refuses the privileged pods of the cluster's own controllers when they are recreated) and deletes it with the
  // service (taking the controllers installed there with it).
  'namespace@reserved': crossRule<{ readonly namespace: string; readonly reserved: readonly string[] }>(
    "a namespace of the service's own, not Kubernetes' (kube-system, kube-public, kube-node-lease, default) nor one the library's "
      + 'controllers or an existing Karpenter run in',
    ({ namespace, reserved }) => (reserved.includes(namespace) ? `is '${namespace}', which is reserved (${reserved.join(', ')})` : undefined),
    'the service creates its namespace with Pod Security Admission enforce: restricted and deletes it when the service is removed',
  ),
  // ValidatePriorityClass refuses "system-" names other than the built-in classes: "priority class names with 'system-'
  // prefix are reserved for system use only" (kubernetes/kubernetes pkg/apis/scheduling/validation/validation.go,
  // read at 00447344; review R203).
  'class.objectName@priorityClass': crossRule<string>(
    "a name that does not start with 'system-'",
    (name) => (name.startsWith('system-') ? `is '${name}'` : undefined),
    "'<service>-<class>' also names the class's PriorityClass, and the API server keeps the 'system-' prefix for its own",
  ),
  // A mutating webhook (Istio's, Linkerd's, an APM agent's) adds its container to each pod on CREATE, and mutating
  // admission runs before validating admission ("In the first phase, mutating admission controllers are run. In the
  // second phase, validating admission controllers are run": https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/),
  // so the namespace's approved-images policy judges every pod with its injected containers, at the references the
  // injector writes. The Deployment's template has none, so it is admitted and the deploy completes (review R255).
  additionalApprovedImages: crossRule<{ readonly images: readonly string[]; readonly cluster: string; readonly admission: boolean }>(
    `unset, or ${APPROVABLE_IMAGES}, on an EksInferenceCluster with approvedImagesAdmission: true`,
    ({ images, cluster, admission }) => {
      if (images.length === 0) return undefined;
      return admission ? unapprovableImages(images)
        : `is set, but the cluster '${cluster}' has no approvedImagesAdmission (a prop of EksInferenceCluster): no policy would use them`;
    },
    "each is approved in the namespace's approved-images policy like a class image; a pod with an injected image the policy does not "
      + 'approve is refused on creation, while the Deployment is admitted and the deploy completes',
  ),
  clusterName: nameRule('eksClusterName', { why: 'it appears in IAM condition keys and Karpenter discovery tags' }),
  // Keyed by account, Region and the construct's literal cluster name (`clusterName`, which an imported cluster whose
  // name is a token must give: `clusterName` above): two imports of one cluster under different literal names, or two
  // apps, are not seen. The Neuron device plugin is claimed when the first Neuron class attaches. Helm: aws-cdk-lib
  // 2.269.0 custom-resource-handlers/dist/aws-eks-v2/kubectl-handler/helm/__init__.py:97,100,213-214 (review R230).
  'cluster@environment': crossRule<{
    readonly clusterName: string;
    readonly where: string;
    /** What both install, each with the prop that marks it as running already. */
    readonly installs: ReadonlyArray<{ readonly name: string; readonly instead: string }>;
    readonly installedBy: string;
  }>(
    'each controller, add-on and log group of the library installed once per cluster in an account and Region: one EksInferenceCluster '
      + "shared by the cluster's services (their `cluster`), or a second one that marks what the first installs as running "
      + '(existingControllers, observability.existingAddon, observability.existingLogGroups; an EksInferenceService given an '
      + 'eks.ICluster installs everything)',
    ({ clusterName, where, installs, installedBy }) => (installs.length === 0 ? undefined
      : `installs ${installs.map((i) => i.name).join(', ')} on the cluster '${clusterName}' in ${where}, which the EksInferenceCluster at `
        + `'${installedBy}' installs too (what marks them as running: ${installs.map((i) => i.instead).join(', ')})`),
    'the Helm handler runs helm upgrade --install, so a second release of one name takes over the first, and deleting either uninstalls it; '
      + "the add-on, its log groups and the controllers' pod identity associations exist once per cluster: a second fails to deploy",
  ),
  classes: crossRule<readonly string[]>(
    `1 to ${ALB.targetGroupsPerForwardAction} classes`,
    (names) => (names.length <= ALB.targetGroupsPerForwardAction ? undefined : `${names.length} classes are declared (${names.join(', ')})`),
    `each class is one target group of the ALB listener, and an ALB forward action takes at most ${ALB.targetGroupsPerForwardAction} target groups`,
  ),
  'class.objectName': nameRule('dns1035Label', { why: "'<service>-<class>' names the class's Service, Deployment and NodePool" }),
  'classOptions.nodePoolName': nameRule('dns1123Label', { why: 'also the karpenter.sh/nodepool label value' }),
  'classOptions.minReplicas': numberRule({ integer: true, min: 1, why: 'a warm replica keeps the class routable' }),
  'classOptions.maxReplicas': numberRule({ integer: true, min: 1 }),
  'classOptions.replicaRange': crossRule<{ readonly prop: 'minReplicas' | 'maxReplicas'; readonly min?: number; readonly max?: number; readonly quota?: number }>(
    'minReplicas <= maxReplicas <= the class quota (maxReplicas of the class)',
    ({ prop, min, max, quota }) => {
      if (prop === 'maxReplicas') return max !== undefined && quota !== undefined && max > quota
        ? `${max} is above the class quota of ${quota} replicas (maxReplicas of the class)` : undefined;
      if (min === undefined) return undefined;
      if (max !== undefined && min > max) return `${min} is above classOptions.maxReplicas ${max}`;
      return quota !== undefined && min > quota ? `${min} is above the class quota of ${quota} replicas` : undefined;
    },
  ),
  'classOptions.targetRequestsPerReplicaPerPeriod': numberRule({ above: 0, unit: 'requests per period' }),
  'classOptions.port': numberRule({ integer: true, min: 1024, max: 65535, why: 'the server runs as non-root' }),
  'classOptions.path': crossRule<string>(
    "a path starting with '/' of at most 1024 characters (the ALB health check path limit)",
    (path) => (isUnresolved(path) || (typeof path === 'string' && path.startsWith('/') && path.length <= 1024) ? undefined : `is '${path}'`),
  ),
  'classOptions.warmup.maxLatency': numberRule({ above: 0, max: 3600, unit: 's' }),
  'classOptions.startupTimeout': numberRule({ integer: true, min: 10, max: 86400, unit: 's' }),
  'classOptions.modelCacheSize': numberRule({ integer: true, min: 1, unit: 'GiB' }),
  'metric(className)': crossRule<{ readonly className: string; readonly declared: readonly string[] }>(
    'the name of a class of this service',
    ({ className, declared }) => (declared.includes(className) ? undefined
      : `is '${className}', no class of this service (classes: ${quoted(declared) || 'none'})`),
    'a metric with an unknown TargetGroup would be an empty metric: an alarm on it would never fire',
  ),
  'classOptions.nodeVolumeSize': numberRule({
    integer: true, min: MIN_NODE_VOLUME_GIB, max: 16384, unit: 'GiB',
    why: `the node data volume is gp3 at ${NODE_DATA_VOLUME.iops} IOPS and gp3 provisions at most ${GP3_LIMITS.maxIopsPerGiB} IOPS per GiB, `
      + 'so a smaller volume fails the instance launch; a gp3 volume holds at most 16 TiB',
  }),
  'classOptions.nodeVolumeSize@modelVolumes': crossRule<{
    readonly sizeGiB: number; readonly cacheGiB: number; readonly replicas: number; readonly instanceType: string; readonly osGiB: number;
  }>(
    "at least the model volume of a replica (modelCacheSize) times the replicas the class's fullest node holds, "
      + `plus ${AL2023_ROOT_SNAPSHOT_GIB} GiB for the AL2023 root snapshot on an al2023 alias`,
    ({ sizeGiB, cacheGiB, replicas, instanceType, osGiB }) => (sizeGiB >= osGiB + cacheGiB * replicas ? undefined
      : `is ${sizeGiB} GiB, below ${osGiB > 0 ? `the AL2023 root snapshot (${osGiB} GiB) and ` : ''}the model volumes of the ${replicas} `
        + `replica${replicas === 1 ? '' : 's'} a ${instanceType} node holds (${osGiB > 0 ? `${osGiB} + ` : ''}${replicas} x ${cacheGiB} GiB = `
        + `${osGiB + replicas * cacheGiB} GiB)`),
    "each replica's model volume is an emptyDir on the node's data volume: a full volume puts the node under disk pressure, and the kubelet evicts its pods; "
      + 'on AL2023 that volume is the root volume, and EC2 refuses a root volume smaller than the AMI\'s snapshot',
  ),
  'placement.zones@loadBalancer': crossRule<{ readonly podZones: readonly string[]; readonly pinned: boolean; readonly albZones: readonly string[] }>(
    "zones the service's load balancer is enabled in (loadBalancer.vpcSubnets, by default one private subnet per zone, public when internetFacing)",
    ({ podZones, pinned, albZones }) => {
      const outside = podZones.filter((z) => !albZones.includes(z));
      if (outside.length === 0) return undefined;
      const where = pinned ? `holds the class to ${quoted(outside)}` : `is unset, so the class's pods may run in every zone of the cluster's node subnets, ${quoted(outside)} among them`;
      return `${where}, where the load balancer is not enabled (its zones: ${quoted(albZones)})`;
    },
    // The controller the EKS path installs (LOAD_BALANCER_CONTROLLER_CHART 3.5.0, appVersion v3.5.0) sets a gated pod's
    // condition True only when its target's state is healthy, False for any other state, and a pod not yet registered
    // reads as 'initial' (kubernetes-sigs/aws-load-balancer-controller@v3.5.0 pkg/targetgroupbinding/resource_manager.go:515-528
    // calculateReadinessGateTransition, :427-433); a pod without the gate is True at once (:516-518), which is why the
    // gate is injected first (test/eks/readiness-gate.test.ts).
    'a target registered in an Availability Zone the load balancer does not enable receives no traffic (Elastic Load Balancing guide, '
      + '"Availability Zones and load balancer nodes") and is never healthy, and the load balancer controller\'s pod readiness gate '
      + 'turns a pod Ready only for a healthy target (kubernetes-sigs/aws-load-balancer-controller@v3.5.0 '
      + 'pkg/targetgroupbinding/resource_manager.go:515-528, calculateReadinessGateTransition): its pods would never be Ready, '
      + "stalling rollouts on billed nodes; set placement.zones, loadBalancer.vpcSubnets or the cluster's nodeSubnets so that they agree",
  ),
  'placement.zones@nodeSubnets': crossRule<{ readonly zone: string; readonly nodeZones: readonly string[] }>(
    "zones of the cluster's node subnets: nodeSubnets, by default the VPC's private subnets with egress",
    ({ zone, nodeZones }) => (nodeZones.includes(zone) ? undefined
      : `is '${zone}', where the cluster has no node subnet (the zones of its node subnets: ${quoted(nodeZones)}); subnets of that zone `
        + "tagged for Karpenter by hand are not seen at synth: select them with the cluster's nodeSubnets (e.g. { subnetType: PRIVATE_ISOLATED })"),
    'Karpenter launches a node only in a subnet its EC2NodeClass selects, and the construct tags only the node subnets (an isolated '
      + 'subnet only when nodeSubnets selects it): a NodePool held to a zone without one never gets a node',
  ),
  // lib/eks/cluster.ts skips the endpoint checks for 'elsewhere' only, so any other value would run them as 'in-vpc'.
  isolatedSubnetEndpoints: crossRule<unknown>(
    ISOLATED_SUBNET_ENDPOINTS.map((e) => `'${e}'`).join(' or '),
    (v) => (v === undefined || (ISOLATED_SUBNET_ENDPOINTS as readonly unknown[]).includes(v) ? undefined : `is ${JSON.stringify(v)}`),
    "the VPC endpoint checks run for any value but 'elsewhere': a misspelt 'elsewhere' would check endpoints the subnets do not use",
  ),
  // Decided at synth (endpoints may be added to the VPC after the cluster): lib/eks/isolated-subnets.ts. The endpoints a
  // feature needs (describeNodeEndpoints('feature')) only warn.
  'nodeSubnets@endpoints': crossRule<{ readonly subnets: readonly string[]; readonly vpc: string; readonly missing: readonly string[] }>(
    `isolated node subnets (PRIVATE_ISOLATED) in a VPC with endpoints they reach for ${describeNodeEndpoints('join')}: interface `
      + `endpoints with private DNS, or for ${GATEWAY_NODE_ENDPOINTS.join(', ')} a gateway endpoint on the subnets' route tables (or an `
      + 'interface endpoint whose private DNS is for all resolvers, privateDnsOnlyForInboundResolverEndpoint ALL_RESOLVERS); or '
      + "isolatedSubnetEndpoints: 'elsewhere' when they reach these services through endpoints outside the VPC",
    ({ subnets, vpc, missing }) => (missing.length === 0 ? undefined
      : `selects isolated subnets (${quoted(subnets)}) of the VPC ${vpc}, which has no endpoint for ${quoted(missing)} they can reach`),
    'nodes there reach AWS only through VPC endpoints: the VPC CNI reads the node\'s network interfaces through EC2 before the kubelet '
      + "reports the node Ready, and every image, the VPC CNI's own among them, is pulled through ECR's API, its registry and S3: the "
      + 'node would never turn Ready',
  ),
  'clusterOptions.endpointAccess@nodeSubnets': crossRule<{ readonly subnets: readonly string[] }>(
    'eks.EndpointAccess.PRIVATE or PUBLIC_AND_PRIVATE when nodeSubnets selects isolated subnets',
    ({ subnets }) => (subnets.length === 0 ? undefined
      : `is eks.EndpointAccess.PUBLIC, but nodeSubnets selects isolated subnets (${quoted(subnets)}), from which the public endpoint `
        + 'cannot be reached'),
    'nodes register with the API server through its private endpoint when they have no internet access '
      + '(https://docs.aws.amazon.com/eks/latest/userguide/private-clusters.html): they would never join',
  ),
  // The chart's helper renders `printf "%s:%s" repository tag` and has no digest value (lib/eks/neuron-device-plugin.ts
  // cites the template): the library splits the reference at its last ':' so that it renders whole, which is known of
  // the pinned chart only.
  neuronDevicePluginImage: crossRule<{
    readonly image: string;
    /** How Neuron nodes get their plugin: the cluster installs it, runs one already, or neither. */
    readonly source: 'install' | 'existing' | 'none';
    readonly chartVersion?: string;
    readonly pinnedChartVersion: string;
  }>(
    `a literal private ECR image pinned by digest (${ECR_IMAGE_FORM}), on a cluster that installs the plugin (neuronDevicePlugin `
      + 'not false, no existingControllers.neuronDevicePlugin) from the pinned chart (chartVersions.neuronDevicePlugin unset)',
    ({ image, source, chartVersion, pinnedChartVersion }) => {
      if (isUnresolved(image)) return "is a CDK token (the chart's values and the nodes' pull grant need the literal reference)";
      if (!parseEcrImage(image)) {
        return `is '${image}', not a private ECR image pinned by digest${image.includes('@sha256:') ? '' : ' (a tag can move under a running fleet)'}`;
      }
      if (source === 'none') return `is '${image}', but neuronDevicePlugin is false: no plugin is installed to run it`;
      if (source === 'existing') return `is '${image}', but existingControllers.neuronDevicePlugin marks a plugin the cluster runs already: none is installed to run it`;
      return chartVersion !== undefined && chartVersion !== pinnedChartVersion
        ? `is '${image}' with chartVersions.neuronDevicePlugin '${chartVersion}', whose image template is read here for ${pinnedChartVersion} only`
        : undefined;
    },
    "the device plugin's image is pulled by every Neuron node; the chart takes it as a repository and a tag, which the library "
      + 'fills so that the pinned chart renders the digest reference whole',
  ),
  // 'reserved' (a Karpenter capacity type) needs the EC2NodeClass's capacityReservationSelectorTerms, which the library
  // does not render: without them the NodeClass has no reservations and Karpenter no reserved offerings
  // (aws/karpenter-provider-aws@v1.14.1 pkg/controllers/nodeclass/capacityreservation.go:54-59, review R91), so a
  // 'reserved'-only class would never launch and a mixed one would silently run on-demand.
  'classOptions.capacityTypes': crossRule<readonly string[]>(
    "a non-empty list of 'on-demand' and 'spot' ('reserved' needs capacity reservation selector terms, which the library does not render)",
    (types) => (types.length > 0 && types.every((t) => ['on-demand', 'spot'].includes(t)) ? undefined : `is [${types.join(', ')}]`),
  ),
  'scaling.metricPeriod': numberRule({ integer: true, min: 60, multipleOf: 60, unit: 's', why: 'ALB metrics have 1-minute resolution; KEDA takes periods of 60 s or more only in whole minutes' }),
  'scaling.metricCollectionTime': numberRule({ integer: true, min: 60, unit: 's' }),
  'scaling.metricCollectionTime%period': crossRule<{ readonly collectionSeconds: number; readonly periodSeconds: number }>(
    'a whole multiple of scaling.metricPeriod, at least one (KEDA aws-cloudwatch scaler)',
    ({ collectionSeconds: c, periodSeconds: p }) => (c % p === 0 && c >= p ? undefined : `is ${c} s with a metric period of ${p} s`),
  ),
  'scaling.scaleDownStabilization': numberRule({ integer: true, min: 0, max: 3600, unit: 's', why: 'HPA behavior stabilizationWindowSeconds' }),
  'scaling.maxScaleUpPods': numberRule({ integer: true, min: 1 }),
  'scaling.scaleUpPeriod': numberRule({ integer: true, min: 1, max: 1800, unit: 's', why: 'HPA scaling policy periodSeconds' }),
  'scaling.pollingInterval': numberRule({ integer: true, min: 1, unit: 's' }),
  'loadBalancer.deregistrationDelay': numberRule({ integer: true, min: 0, max: 3600, unit: 's', why: 'ALB deregistration_delay.timeout_seconds' }),
  'loadBalancer.allowedCidrs': crossRule<string>(
    "IPv4 CIDR blocks such as '10.0.0.0/16'",
    (cidr) => (isUnresolved(cidr) || IPV4_CIDR.test(cidr) ? undefined : `is '${cidr}'`),
  ),
  // Karpenter's controller replicas run one per node (its chart's required pod anti-affinity on kubernetes.io/hostname,
  // aws/karpenter-provider-aws v1.14.1 charts/karpenter/values.yaml:100-102) and the chart waits for them to be ready:
  // on fewer nodes one stays Pending and the deploy fails when the chart's wait times out.
  'clusterOptions.systemNodeCount': numberRule({
    integer: true, min: KARPENTER_CONTROLLER.replicas, max: 450,
    why: `Karpenter's ${KARPENTER_CONTROLLER.replicas} controller replicas run one per system node, and its chart waits for both; a managed node group holds at most 450`,
  }),
  // The NodePools require kubernetes.io/os linux (lib/eks/manifests/karpenter.ts), and the library's default Kubernetes
  // version is 1.33: the reasons of the karpenterAmiAlias format (lib/core/validation/checker.ts).
  amiAlias: nameRule('karpenterAmiAlias', {
    why: 'a Windows alias launches Windows nodes, which no NodePool of the library accepts (they require linux); EKS publishes no AL2 AMIs '
      + 'for Kubernetes 1.33 and later, and none at all since 2025-11-26',
  }),
  'observability.addonVersion': crossRule<string>(
    "an exact add-on version 'v<major>.<minor>.<patch>-eksbuild.<build>' (the pinned one is OBSERVABILITY_ADDON_VERSION)",
    (v) => (isUnresolved(v) || /^v\d+\.\d+\.\d+-eksbuild\.\d+$/.test(v) ? undefined : `is '${v}'`),
  ),
  // At most 240 s: the agent turns each counter into per-scrape deltas from the value it kept from the previous scrape,
  // and drops kept values 5 minutes old before storing new ones (aws/amazon-cloudwatch-agent@v1.300070.0
  // plugins/inputs/prometheus/delta_calculator.go:15,41,55-60 and internal/mapWithExpiry/mapWIthExpiry.go:25,40; review
  // R202), so at 300 s a scrape processed a little later than the one before finds no previous value and publishes no
  // GeneratedTokens for its interval.
  'observability.scrapeInterval': numberRule({ integer: true, min: 10, max: 240, unit: 's', why: 'the scrape job of the agent configuration' }),
  // Each delta is stamped with its scrape's time (the agent's prometheus metrics_handler.go:62, R202): an interval that
  // neither divides a minute nor is whole minutes puts one delta in one minute and two in the next (45 s: 0.75x and 1.5x
  // the rate) on the dashboard and the alarms, which read per minute; the Reconciler reads the counter over the least
  // common multiple of its period and the interval (`counterPerSecond`), which these intervals keep to whole minutes.
  'observability.scrapeInterval@periods': crossRule<number>(
    'a divisor of 60 s (10, 12, 15, 20, 30 or 60 s) or whole minutes (120, 180 or 240 s)',
    (seconds) => (60 % seconds === 0 || seconds % 60 === 0 ? undefined : `is ${seconds} s`),
    'the agent publishes one token delta per scrape, stamped with the scrape\'s time: other intervals put a different number of '
      + 'scrapes in consecutive minutes, and the token rate the Reconciler and the alarms read would swing by that ratio',
  ),
  'observability.existingAddon': crossRule<{ readonly set: readonly string[]; readonly createsLogGroup: boolean }>(
    'no addonVersion, and no logRetention or logEncryptionKey unless existingAddon.applicationLogGroupExists is false',
    ({ set, createsLogGroup }) => {
      const dropped = set.filter((prop) => prop === 'addonVersion' || !createsLogGroup);
      return dropped.length === 0 ? undefined
        : `is set together with ${dropped.map((prop) => `observability.${prop}`).join(', ')}, which ${dropped.length === 1 ? 'has' : 'have'} no effect`;
    },
    'with an existing add-on the construct installs no add-on and, unless told to create it, no log group: those settings would be dropped',
  ),
  'observability.existingLogGroups': crossRule<readonly string[]>(
    'no logRetention, logEncryptionKey or existingAddon with existingLogGroups (for an add-on you run, existingAddon.applicationLogGroupExists)',
    (set) => (set.length === 0 ? undefined : `is true together with ${set.map((prop) => `observability.${prop}`).join(', ')}`),
    'an existing log group keeps its own retention and key',
  ),
  'observability.existingAddon.configurationValues': crossRule<unknown>(
    'the configuration values as an object, or as the JSON string CloudFormation takes',
    (v) => (typeof v === 'object' && v !== null && !Array.isArray(v) ? undefined : `is ${typeof v === 'string' ? 'a string that is not a JSON object' : JSON.stringify(v)}`),
    'the checks below read it; an unreadable value would skip them',
  ),
  'observability.existingAddon.configurationValues.containerLogs.enabled': crossRule<unknown>(
    'true or unset',
    (v) => (v === false ? 'is false' : undefined),
    'the Karpenter capacity-error filters read the application logs Fluent Bit ships',
  ),
  'observability.existingAddon.configurationValues.containerInsights.enabled': crossRule<unknown>(
    'true or unset',
    (v) => (v === false ? 'is false' : undefined),
    'the reconciler reads the desired replica counts Container Insights publishes',
  ),
  'observability.existingAddon.configurationValues.agent.config': crossRule<unknown>(
    'unset, or an agent config with logs.metrics_collected.kubernetes.enhanced_container_insights: true',
    enhancedContainerInsightsProblem,
    'Container Insights publishes desired replica counts only with enhanced observability',
  ),
  'observability.existingAddon.configurationValues.agents[].config': crossRule<unknown>(
    'unset on the default agent (an agents entry with no name or the name cloudwatch-agent), or an agent config with '
      + 'logs.metrics_collected.kubernetes.enhanced_container_insights: true',
    enhancedContainerInsightsProblem,
    'each agents entry runs with its own config over agent.config, and the default agent is the one Container Insights runs in',
  ),
} as const;

/** A VPC option of the endpoint: input is whether `vpc` is given too. */
const VPC_OPTION_RULE = crossRule<boolean>(
  'only with vpc',
  (vpc) => (vpc ? undefined : 'is set but vpc is not'),
  'without vpc the model containers run in the network SageMaker manages, and the Models get no VpcConfig for the subnets or groups to go in',
);

/** `SageMakerCapacityEndpoint` props beyond the contract and the classes. */
export const SAGEMAKER_RULES = {
  modelDataEncryptionKey: MODEL_DATA_KEY_RULE,
  'contract.name@stack': SERVICE_PER_STACK_RULE,
  'contract.name@environment': SERVICE_PER_ENVIRONMENT_RULE,
  endpointName: nameRule('sageMakerName', { tokens: 'carry' }),
  'metrics.publishFrequency': crossRule<number>(
    '10, 30, 60, 120, 180, 240 or 300 seconds',
    // MetricPublishFrequencyInSeconds values CloudFormation accepts (aws-properties-sagemaker-endpointconfig-metricsconfig).
    (seconds) => ([10, 30, 60, 120, 180, 240, 300].includes(seconds) ? undefined : isUnresolved(seconds) ? 'is a CDK token' : `is ${seconds} s`),
    'the periods SageMaker enhanced metrics publish at',
  ),
  'metrics.publishFrequency@enhancedMetrics': crossRule<{ readonly seconds: number; readonly enhancedMetrics: boolean }>(
    `at most ${METRIC_PERIOD_SECONDS} seconds while enhancedMetrics is on`,
    ({ seconds, enhancedMetrics }) => (!enhancedMetrics || isUnresolved(seconds) || seconds <= METRIC_PERIOD_SECONDS ? undefined
      : `is ${seconds} s with enhancedMetrics on`),
    // MetricsConfig.MetricPublishFrequencyInSeconds: "When EnableEnhancedMetrics is set to True, this interval applies to
    // both utilization and invocation metrics" (SageMaker API reference, MetricsConfig).
    'enhanced metrics publish the invocation metrics (requests, latency, errors) at this frequency too, and the Reconciler, ' +
      `the dashboards and the alarms read them per ${METRIC_PERIOD_SECONDS} s period: a longer one leaves most periods empty`,
  ),
  'metric(variantName)': crossRule<{ readonly variantName: string; readonly declared: readonly string[] }>(
    'the name of a declared variant (call the metric methods after addVariant())',
    ({ variantName, declared }) => (declared.includes(variantName) ? undefined
      : `is '${variantName}', no variant of this endpoint (declared: ${quoted(declared) || 'none'})`),
    'a metric with an unknown VariantName dimension is valid CloudWatch and stays empty: an alarm on it would never fire',
  ),
  'metric(instanceType)': crossRule<{ readonly instanceType: string; readonly variantName: string; readonly poolTypes: readonly string[] }>(
    "the instance type of one of the variant's pools, on a variant of several classes (read a one-class variant without it)",
    ({ instanceType, variantName, poolTypes }) => (poolTypes.length === 0 ? undefined
      : !hasInstancePools(poolTypes.length) ? `is '${instanceType}' on variant '${variantName}', which has one class and so no instance pools`
        : poolTypes.includes(instanceType) ? undefined
          : `is '${instanceType}', no pool of variant '${variantName}' (pools: ${quoted(poolTypes)})`),
    // "In addition, CloudWatch publishes these metrics with an InstanceType dimension" is said of variants that use
    // instance pools (https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-heterogeneous.html, "Monitoring
    // instance pools"); a one-class variant is rendered with a plain InstanceType (renderVariants).
    'a metric with an InstanceType dimension SageMaker does not publish for the variant stays empty',
  ),
  'variants[].name': nameRule('sageMakerName'),
  // The routing facts' rule (ROUTING_FACTS_RULES), held by the endpoint when the variant and the class are given: the
  // Reconciler and the observability constructs read the facts, and a variant the endpoint accepted must not fail
  // there under their name (docs/validation.md, "When input is checked").
  'variants[].name@classes': ROUTING_FACTS_RULES['variants[].variantName@classes'],
  // A Reconciler, InferenceObservability, InferenceAlarms or InferenceDashboard reads the variants once, when it is
  // created (servingDescription()): what is added after is deployed but never routed, charted or alarmed (review R231).
  'addClass()/addVariant()@read': crossRule<{ readonly what: string; readonly read: boolean }>(
    'every class and variant added before the endpoint is first read (servingDescription(), routingFacts()): before the Reconciler, '
      + 'InferenceObservability, InferenceAlarms or InferenceDashboard on it is created',
    ({ what, read }) => (read ? `got ${what} after the endpoint was read` : undefined),
    'each of them reads the variants once, when it is created: a class or variant added later would be in the endpoint configuration '
      + 'but not in the reconciler configuration, the dashboard or the alarms',
  ),
  'variants[].classes[].priority': numberRule({ integer: true, min: 1, max: SM.maxPoolsPerVariant }),
  'variants[].scaling.minInstances': numberRule({ integer: true, min: 1, why: 'an instance-based variant cannot scale to 0' }),
  'variants[].scaling.maxInstances': numberRule({ integer: true, min: 1 }),
  ...SAGEMAKER_SCALING_TARGET_RULES,
  'variants[].initialWeight': numberRule({ min: 0 }),
  provisionTimeout: numberRule({ integer: true, min: 300, max: 3600, unit: 's', why: 'VariantInstanceProvisionTimeoutInSeconds' }),
  'variants[].provisionTimeout': numberRule({ integer: true, min: 300, max: 3600, unit: 's', why: 'VariantInstanceProvisionTimeoutInSeconds' }),
  containerStartupHealthCheckTimeout: numberRule({ integer: true, min: 60, max: 3600, unit: 's' }),
  modelDataDownloadTimeout: numberRule({ integer: true, min: 60, max: 3600, unit: 's' }),
  standbyInstances: numberRule({ integer: true, min: 1, why: 'SageMaker variants cannot scale to 0' }),
  // The standby is a fallback variant's default scaling minimum, and the plan keeps each class's minimum within its
  // maximum (lib/core/service/sizing.ts, planCapacity): a larger standby was clamped to it without a word (review R231).
  'standbyInstances@variants': crossRule<{
    readonly standby: number; readonly variant: string;
    /** The variant's pools as planned: the largest `maxReplicas` bounds the variant's default range. */
    readonly pools: readonly { readonly name: string; readonly replicasForPeak: number; readonly quota: number; readonly maxReplicas: number }[];
  }>(
    "at most the planned maximum of every fallback variant that does not set scaling.minInstances (the instances its largest pool needs for the planned peak with headroom, within that class's maxReplicas); "
      + 'to keep more warm in one variant, set its scaling.minInstances (and maxInstances)',
    ({ standby, variant, pools }) => {
      const largest = pools.reduce((a, b) => (b.maxReplicas > a.maxReplicas ? b : a));
      if (standby <= largest.maxReplicas) return undefined;
      const bound = largest.replicasForPeak <= largest.quota
        ? `the ${largest.replicasForPeak} instances of '${largest.name}' that carry the planned peak with headroom (within its maxReplicas ${largest.quota})`
        : `the maxReplicas quota of '${largest.name}', ${largest.quota} (below the ${largest.replicasForPeak} instances the planned peak needs)`;
      return `is ${standby}, above the ${largest.maxReplicas} instances fallback variant '${variant}' may run: ${bound}`;
    },
    "the standby is each fallback variant's scaling minimum, and a minimum is never above the variant's maximum: a larger one would be cut to it",
  ),
  warmFloorShare: WARM_FLOOR_SHARE_RULE,
  scaleOutCooldown: numberRule({ integer: true, min: 0, unit: 's', tokens: 'carry' }),
  scaleInCooldown: numberRule({ integer: true, min: 0, unit: 's', tokens: 'carry' }),
  'dataCapture.samplingPercentage': numberRule({ integer: true, min: 1, max: 100, tokens: 'carry' }),
  // Without vpc the Models get no VpcConfig (SageMaker's own network): subnets and groups given anyway would be dropped.
  'vpcSubnets@vpc': VPC_OPTION_RULE,
  'securityGroups@vpc': VPC_OPTION_RULE,
  // BlueGreenUpdatePolicy.TerminationWaitInSeconds takes 0 to 3600 (SageMaker API reference, BlueGreenUpdatePolicy);
  // below one alarm period (every alarm this library makes, and CloudWatch's standard resolution, is 60 s) the old fleet
  // is gone before an alarm on the new one can have a datapoint, so the rollback could never happen.
  'deployment.bakeTime': numberRule({
    integer: true, min: 60, max: 3600, unit: 's',
    why: 'TerminationWaitInSeconds allows up to 3600 s, and a bake shorter than one 60 s alarm period ends before a rollback alarm can fire',
  }),
  // BlueGreenUpdatePolicy.MaximumExecutionTimeoutInSeconds: 600 to 28800 (SageMaker API reference, BlueGreenUpdatePolicy).
  'deployment.maximumExecutionTimeout': numberRule({
    integer: true, min: BLUE_GREEN_EXECUTION_TIMEOUT_SECONDS.min, max: BLUE_GREEN_EXECUTION_TIMEOUT_SECONDS.max, unit: 's',
    why: 'MaximumExecutionTimeoutInSeconds',
  }),
  // The steps and their sources: lib/core/platform/blue-green-deployment.ts. Equal to the floor is allowed: every step
  // then has its whole limit; the API's own rule (above the bake) holds, since the fleet's limits are at least 420 s.
  'deployment.maximumExecutionTimeout@steps': crossRule<{ readonly timeout: number; readonly steps: BlueGreenSteps }>(
    "at least what the deployment's own steps may take: bakeTime + the longest variant's provisionTimeout + modelDataDownloadTimeout + " +
      "containerStartupHealthCheckTimeout (unset, none is rendered and SageMaker's own default applies)",
    ({ timeout, steps }) => {
      const floor = blueGreenStepsFloor(steps);
      if (floor === undefined || timeout >= floor.seconds) return undefined;
      const v = floor.variant;
      return `is ${timeout} s, below the ${floor.seconds} s the deployment's steps may take: variant '${v.name}' ` +
        `provisionTimeout ${v.provisionSeconds} s + modelDataDownloadTimeout ${v.modelDataDownloadSeconds} s + ` +
        `containerStartupHealthCheckTimeout ${v.containerStartupSeconds} s, then bakeTime ${steps.bakeSeconds} s`;
    },
    'a blue/green deployment provisions the new fleet (VariantInstanceProvisionTimeoutInSeconds), downloads the model ' +
      '(ModelDataDownloadTimeoutInSeconds) and passes the start-up health check (ContainerStartupHealthCheckTimeoutInSeconds) ' +
      'before the traffic shift and the bake (TerminationWaitInSeconds), all within MaximumExecutionTimeoutInSeconds; the instance ' +
      'launch once capacity is found, the image pull and the traffic shift have no documented duration and are not counted',
  ),
  'deployment.rollbackAlarms': crossRule<number>(
    '1 to 10 alarms (given in deployment.rollbackAlarms or with addRollbackAlarm())',
    (count) => (count >= 1 && count <= 10 ? undefined : `has ${count} alarms`),
    // AutoRollbackConfig.Alarms: "Minimum number of 1 item. Maximum number of 10 items" (SageMaker API reference); a
    // bake without an alarm watches nothing and only keeps a second fleet running.
    'AutoRollbackConfiguration.Alarms takes 1 to 10 alarms, and without one a bake cannot roll anything back',
  ),
  'deployment@instanceTypes': crossRule<readonly string[]>(
    'no ml.inf1 pool type while deployment is set',
    (types) => {
      const inf1 = types.filter((t) => !isUnresolved(t) && t.startsWith('ml.inf1.'));
      return inf1.length === 0 ? undefined : `has pool type ${quoted(inf1)}`;
    },
    // "Endpoints that use Inf1 (Inferentia-based) instances" cannot use deployment guardrails and "fall back to using a
    // blue/green deployment with all at once traffic shifting and no final baking period"
    // (https://docs.aws.amazon.com/sagemaker/latest/dg/deployment-guardrails-exclusions.html): the bake and the rollback
    // would silently not happen.
    'SageMaker ignores deployment guardrails on endpoints with Inf1 instances (no bake, no rollback)',
  ),
} as const;

/** `InferenceAlarms`, `InferenceDashboard` and `InferenceObservability` props. */
export const OBSERVABILITY_RULES = {
  serving: SERVING_RULE,
  'serving.service': SERVICE_DIMENSION_RULE,
  'serving.tokensPerRequest': numberRule({ above: 0, unit: 'tokens' }),
  // Most metrics the dashboard and the alarms read are published once a minute (AWS/ApplicationELB, the EMF and
  // metric-filter metrics, none at StorageResolution 1; a SageMaker endpoint with enhanced metrics publishes its
  // invocation metrics every 10 s by default, `metrics.publishFrequency`, which a whole-minute period aggregates): a
  // sub-minute period is for high-resolution metrics only, and an alarm at one "does not receive data for the attempts
  // that do not correspond to a one-minute data resolution"
  // (PutMetricAlarm, Period: https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html),
  // so with missing data not breaching over every period of its window it could never fire. At most one day: every
  // alarm's default duration, late margin included, then fits the 7 days CloudWatch evaluates at such a period (alarm.duration).
  period: crossRule<number>(
    'a whole number of minutes from 1 minute to 1 day',
    (s) => (Number.isInteger(s) && s >= 60 && s % 60 === 0 && s <= 86400 ? undefined
      : isUnresolved(s) ? 'is a CDK token (the alarms compute their evaluation periods from it)' : `is ${s} s`),
    'the dashboard and the alarms read metrics published once a minute; a period under a minute is for high-resolution metrics only',
  ),
  // The Reconciler's policy.period, so its rule: the Reconciler refuses alarms made for another period ('policy.period@alarms').
  // Its 6-hour bound also keeps every default run-fed alarm within CloudWatch's (at 6 h the heartbeat's 2 periods, the
  // FILLed SageMaker replica shortage's 1 + 1, are half a day of 7), test/control/observability.test.ts; a 4-day period
  // gave the heartbeat 8 days, which PutMetricAlarm refuses.
  'alarm.reconcilerPeriod': RECONCILER_RULES['policy.period'],
  // The Reconciler's own rule: both say how late the same metrics publish (the Reconciler refuses a longer one of its own).
  metricDelay: METRIC_DELAY_RULE,
  // The alarms that FILL evaluate `metricDelay`'s periods more than their duration (lateTolerantWindow,
  // lib/core/metrics/alarm-window.ts): that margin counts against CloudWatch's bound too, so a duration that leaves it
  // no room is refused here instead of the alarm losing it (an alarm that FILLs with M = N never sees a late datapoint).
  'alarm.duration': crossRule<{
    readonly seconds: number; readonly human: string; readonly periodSeconds: number;
    /** Set for an alarm that FILLs (its N exceeds M by this delay's periods). */
    readonly metricDelaySeconds?: number;
  }>(
    'a whole number of periods, at least one, whose evaluation range (the duration, plus the periods of metricDelay for the alarms that FILL: '
      + 'deadlineExhaustion, preferredCapacityErrors, a SageMaker replicaShortage, a fallbackShare that reads a preferred variant\'s fallback '
      + 'instance pools) is at most 1 day at periods under 1 hour, 7 days otherwise',
    ({ seconds, human, periodSeconds, metricDelaySeconds }) => {
      if (isUnresolved(seconds)) return 'is a CDK token (the alarm computes its evaluation periods from it)';
      const found = `is ${human} with a period of ${periodSeconds} s`;
      if (!(Number.isFinite(seconds) && seconds >= periodSeconds && seconds % periodSeconds === 0)) return found;
      const bound = maxAlarmEvaluationSeconds(periodSeconds);
      const late = metricDelaySeconds === undefined ? 0 : latePeriods(periodSeconds, metricDelaySeconds);
      const maxSeconds = (Math.floor(bound / periodSeconds) - late) * periodSeconds;
      if (seconds <= maxSeconds) return undefined;
      const most = `; at most ${maxSeconds} s (Duration.minutes(${maxSeconds / 60}))`;
      return late === 0 ? `${found}, longer than the ${bound} s CloudWatch evaluates at that period${most}`
        : `${found} and a metricDelay of ${metricDelaySeconds} s: the alarm FILLs, so it evaluates ${late} period${late === 1 ? '' : 's'} more `
          + `for a late datapoint, ${seconds + late * periodSeconds} s in all, over the ${bound} s CloudWatch evaluates at that period${most}`;
    },
    'PutMetricAlarm: Period x EvaluationPeriods at most 604,800 s, and at most 86,400 s at a period under 3,600 s',
  ),
  'fallbackShare.basis': crossRule<unknown>("'tokens' or 'requests'", (v) => (v === undefined || v === 'tokens' || v === 'requests' ? undefined : `is ${JSON.stringify(v)}`)),
  // PutMetricAlarm's Metrics: "up to 20 MetricDataQuery structures ... as many as 10 structures that contain a MetricStat
  // parameter to retrieve a metric, and as many as 10 structures that contain the Expression parameter"
  // (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_MetricDataQuery.html); nested expressions count.
  'alarm.metrics': crossRule<{ readonly metrics: number; readonly expressions: number; readonly what: string; readonly fix: string }>(
    'at most 10 metrics and 10 math expressions in one alarm, or the alarm disabled',
    ({ metrics, expressions, what, fix }) => (metrics <= 10 && expressions <= 10 ? undefined
      : `needs ${metrics} metric${metrics === 1 ? '' : 's'} and ${expressions} math expression${expressions === 1 ? '' : 's'} in one alarm (${what}); ${fix}`),
    'PutMetricAlarm takes at most 10 metrics and 10 expressions',
  ),
  'fallbackShare.thresholdPercent': numberRule({ above: 0, below: 100, unit: '%' }),
  'deadlineExhaustion.thresholdPercent': numberRule({ above: 0, below: 100, unit: '%' }),
  'deadlineExhaustion.minRequestsPerPeriod': numberRule({ integer: true, min: 1 }),
  'preferredCapacityErrors.threshold': numberRule({ integer: true, min: 1, why: 'capacity errors per period' }),
  // Set on a serving that produces no capacity errors, the alarm asked for would silently not exist (review R231): the
  // option is per serving construct, so it is refused rather than ignored; `enabled: false` asks for nothing and passes.
  'preferredCapacityErrors@producers': crossRule<{
    readonly set: readonly string[]; readonly preferred: readonly string[]; readonly produced: boolean;
    /** The routing target, as the dashboard's summary names it ("SageMaker endpoint `llm`"). */
    readonly target: string;
  }>(
    'unset or { enabled: false } where no preferred class has a capacity-error metric (every SageMaker endpoint: it publishes none, '
      + 'and its shortages alarm through replicaShortage, one alarm per variant on the instances desired but not ready, in capacityAlarms)',
    ({ set, preferred, produced, target }) => (produced || set.length === 0 ? undefined
      : `sets ${set.join(', ')}, but ${target} has no capacity-error metric for its preferred class ${quoted(preferred)}, so no such alarm is created`),
    'the alarm reads a capacity-error metric of the preferred classes (EKS: the Karpenter log metric filter of the NodePool)',
  ),
  dashboardName: nameRule('cloudWatchDashboard', { tokens: 'carry' }),
} as const;

/** `ArtifactTrust` and `ApprovedImagesAdmission` props. */
/** ECR's PutSigningConfiguration limits (see `signRepositoriesOf` below). */
const SIGNING_CONFIGURATION_MAX_RULES = 10;
const SIGNING_RULE_MAX_FILTERS = 100;

export const TRUST_RULES = {
  modelDataEncryptionKey: MODEL_DATA_KEY_RULE,
  signingProfileName: nameRule('signerProfile'),
  repositoryNames: nameRule('ecrRepository'),
  'verifierRetry.maxAttempts': numberRule({ integer: true, min: 1, max: 10 }),
  verifierTimeout: numberRule({ integer: true, min: 60, max: 900, unit: 's', why: 'the verifier keeps 15 s to answer CloudFormation; Lambda allows 900 s' }),
  // Signer: "135 months (11 years and 3 months), which is the maximum validity supported"
  // (https://docs.aws.amazon.com/signer/latest/developerguide/cli-profile.html); how it counts a month in DAYS is not
  // documented, so the bound takes 30-day months (4,050 days, the default here), which any count of months allows.
  signatureValidity: numberRule({ integer: true, min: 1, max: 135 * 30, unit: 'days', why: "AWS Signer's maximum is 135 months" }),
  // ECR managed signing: "Cross-region signing is not supported — Signing profiles must be in the same region as your
  // Amazon ECR registry" (https://docs.aws.amazon.com/AmazonECR/latest/userguide/managed-signing.html, Considerations).
  // Every profile a class's record approves is in the trust's stack Region (the trust's own, one built from a class's
  // `signingProfileName`, and `previousSigningProfileArns`, refused elsewhere), so an image of another Region's
  // registry is never signed by it and the verifier fails every deploy of the class (review R255).
  'artifact.image@region': crossRule<{ readonly image: string; readonly imageRegion: string; readonly trustRegion: string; readonly gatedBy: string }>(
    "a private ECR image of the ArtifactTrust's own Region (checked where the image and the trust's stack name literal Regions)",
    ({ image, imageRegion, trustRegion, gatedBy }) => (imageRegion === trustRegion ? undefined
      : `'${image}' (gated by '${gatedBy}') is in ${imageRegion}, and the ArtifactTrust's stack in ${trustRegion}`),
    "ECR managed signing signs an image only with a profile of its registry's Region (\"Cross-region signing is not supported\"), and "
      + "every profile a class's record approves is in the trust's Region: no signature could satisfy the verifier; push the image to "
      + "a repository of the trust's Region, or gate the class on an ArtifactTrust of the image's Region",
  ),
  'admission.policyName': crossRule<string>(
    'a DNS-1123 subdomain of at most 245 characters (the binding adds "-binding")',
    (name) => (isUnresolved(name) ? 'is a CDK token (the binding refers to the policy by its literal name)'
      : SUBDOMAIN.test(name) && name.length <= 245 ? undefined : `is '${name}'`),
  ),
  'admission.namespace': nameRule('dns1123Label', { tokens: 'carry' }),
  'admission.images': crossRule<readonly string[]>(
    `a non-empty list of ${APPROVABLE_IMAGES}`,
    (images) => (images.length === 0 ? 'is empty (a policy that allows nothing would reject every serving pod)' : unapprovableImages(images)),
  ),
  previousSigningProfileArns: crossRule<{
    readonly arns: readonly string[];
    /** The construct's own profile name, when it is given (a generated one is only known deployed). */
    readonly currentProfileName?: string;
    readonly region: string;
    readonly account: string;
  }>(
    `literal AWS Signer profile ARNs (${SIGNING_PROFILE_ARN_FORM}) in the stack's region, ` +
      "each listed once, none of them the construct's own profile",
    ({ arns, currentProfileName, region, account }) => {
      const found = arns.flatMap((arn, i) => {
        if (isUnresolved(arn)) return [`[${i}] is a CDK token (the verifier's grant and the region check need the literal ARN)`];
        const p = parseSigningProfileArn(arn);
        if (!p) return [`[${i}] '${arn}' is not a signing profile ARN`];
        if (!isUnresolved(region) && p.region !== region) return [`[${i}] '${arn}' is in ${p.region}, the stack in ${region}`];
        if (p.name === currentProfileName && (isUnresolved(account) || p.account === account)) {
          return [`[${i}] '${arn}' is the construct's own profile (signingProfileName '${currentProfileName}')`];
        }
        return [];
      });
      found.push(...duplicates(arns).map((a) => `'${a}' is listed twice`));
      return found.length === 0 ? undefined : found.join('; ');
    },
    "the profile the construct's profile replaced was in the stack's region, and the verifier asks Signer about every accepted " +
      "signature's revocation in that one region",
  ),
  multipartModelDigest: crossRule<unknown>("'metadata' or 'reject'", (v) => (v === undefined || v === 'metadata' || v === 'reject' ? undefined : `is ${JSON.stringify(v)}`)),
  // AWS::ECR::SigningConfiguration "creates or updates the signing configuration for an Amazon ECR registry", and its
  // primary identifier is RegistryId, the account (the CloudFormation registry schema, as vendored by
  // pulumi/pulumi-aws-native@43eed3b aws-cloudformation-schema/aws-ecr-signingconfiguration.json:3,57-75; a registry is
  // per account and Region). Its handlers call PutSigningConfiguration, which "Creates or updates the registry's signing
  // configuration" from the whole rule list
  // (https://docs.aws.amazon.com/AmazonECR/latest/APIReference/API_PutSigningConfiguration.html), and
  // DeleteSigningConfiguration, which deletes the registry's. Whether a second resource's create fails or overwrites the
  // first's rules is not documented (the handler's source is not public): either breaks the first, so both are refused.
  // Checked only where the stack names both account and Region (`environmentKey`, lib/util/environment-key.ts);
  // environment-agnostic stacks and separate apps cannot be checked at synth (docs/artifact-trust.md, "The registry's
  // signing configuration").
  'manageRegistrySigningConfiguration@environment': crossRule<{ readonly explicit: boolean; readonly managedBy?: string; readonly where?: string }>(
    'one ArtifactTrust per account and Region of the app managing the registry signing configuration: it signs the repositories of the '
      + 'others with their own profiles (signRepositoriesOf(other)), and the others set manageRegistrySigningConfiguration: false',
    ({ explicit, managedBy, where }) => (managedBy === undefined ? undefined
      : `is ${explicit ? 'true' : 'unset (true, since the construct creates repositories)'}, and the ArtifactTrust at '${managedBy}' also `
        + `manages the registry signing configuration in ${where}`),
    'a registry (an account and Region) has one signing configuration, which AWS::ECR::SigningConfiguration creates or updates with its '
      + "whole rule list: a second one fails, or replaces the first's rules, leaving the first's new images unsigned (its checks then "
      + 'refuse them), and deleting either stack deletes the configuration of both',
  ),
  // One rule per signing profile, each with its repositories. The resource schema allows 50 rules
  // (AWS::ECR::SigningConfiguration, https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-ecr-signingconfiguration.html),
  // but the API it writes through takes "Maximum of 10 rules" and "Maximum of 100 filters per rule" (SigningConfiguration
  // and SigningRule, @aws-sdk/client-ecr 3.1169.0 dist-types/models/models_0.d.ts:1236,1249; review R214): the lower
  // bounds hold. "If no filters are specified, all images pushed to the registry are signed using the rule's signing
  // profile" (.../aws-properties-ecr-signingconfiguration-rule.html).
  // The same limit, checked at synth over every rule of the configuration this construct manages: repositories added
  // with addRepository(), its own or a signed ArtifactTrust's after signRepositoriesOf(), are only counted then.
  'repositoryNames@signingRule': crossRule<{ readonly trust: string; readonly itself: boolean; readonly repositories: number }>(
    `at most ${SIGNING_RULE_MAX_FILTERS} repositories (repositoryNames and addRepository()) per ArtifactTrust the managed registry signing `
      + 'configuration signs: each is one rule of it',
    ({ trust, itself, repositories }) => (repositories <= SIGNING_RULE_MAX_FILTERS ? undefined
      : `${itself ? 'this construct' : `the ArtifactTrust at '${trust}' (signRepositoriesOf)`} has ${repositories} repositories, `
        + `more than a rule's ${SIGNING_RULE_MAX_FILTERS} repository filters`),
    `PutSigningConfiguration takes at most ${SIGNING_RULE_MAX_FILTERS} repository filters per rule: the deployment would fail`,
  ),
  signRepositoriesOf: crossRule<{
    /** The other ArtifactTrust's path. */
    readonly other: string;
    readonly itself: boolean;
    /** Whether this construct manages the registry signing configuration. */
    readonly manages: boolean;
    readonly otherManages: boolean;
    readonly otherRepositories: number;
    /** `<account>/<region>` of each, where its stack names both. */
    readonly here?: string;
    readonly there?: string;
    /** Rules of the configuration with this one. */
    readonly rules: number;
  }>(
    'another ArtifactTrust of the same account and Region, with repositories and manageRegistrySigningConfiguration: false, given to the '
      + 'ArtifactTrust that manages the registry signing configuration, with at most 100 repositories; at most 10 rules in all (its own and one per ArtifactTrust it signs)',
    ({ other, itself, manages, otherManages, otherRepositories, here, there, rules }) => {
      if (!manages) return `is '${other}', and this construct does not manage the registry signing configuration (manageRegistrySigningConfiguration false, or unset without repositories)`;
      if (itself) return 'is this construct, whose own rule signs its repositories';
      const found = [
        ...(otherManages ? ['manages a registry signing configuration of its own'] : []),
        ...(otherRepositories === 0 ? ['has no repositories (a rule without repository filters signs every repository of the registry)'] : []),
        ...(here !== undefined && there !== undefined && here !== there ? [`is in ${there}, this construct in ${here}`] : []),
        ...(otherRepositories > SIGNING_RULE_MAX_FILTERS ? [`has ${otherRepositories} repositories, more than a rule's ${SIGNING_RULE_MAX_FILTERS} repository filters`] : []),
        ...(rules > SIGNING_CONFIGURATION_MAX_RULES ? [`would be rule ${rules} of the configuration`] : []),
      ];
      return found.length === 0 ? undefined : `is '${other}', which ${found.join(', ')}`;
    },
    "the configuration signs the images pushed to its own registry, with each rule's profile for the repositories the rule names; "
      + `the registry's signing configuration holds at most ${SIGNING_CONFIGURATION_MAX_RULES} rules of at most ${SIGNING_RULE_MAX_FILTERS} repository filters each`,
  ),
} as const;

/** Every table, by the construct (or function) whose props it checks: the source of `docs/validation.md`. */
export const VALIDATION_MATRIX = {
  'ServiceContract (contract)': CONTRACT_RULES,
  'CapacityClassSpec (classes[])': CLASS_RULES,
  EksInferenceService: EKS_RULES,
  SageMakerCapacityEndpoint: SAGEMAKER_RULES,
  Reconciler: RECONCILER_RULES,
  'Routing facts (servingDescription().routing, for the Reconciler and the observability constructs)': ROUTING_FACTS_RULES,
  'InferenceAlarms / InferenceDashboard / InferenceObservability': OBSERVABILITY_RULES,
  'ArtifactTrust / ApprovedImagesAdmission': TRUST_RULES,
} as const;
