import { type Duration, type Stack, Token } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as eks from 'aws-cdk-lib/aws-eks-v2';
import { type HardwareCatalog } from '../core/hardware/catalog';
import { type CapacityClass, type CapacityClassSpec } from '../core/service/capacity-class';
import { type ClassProblem } from '../core/service/checks';
import { memoryBreakdown } from '../core/service/sizing';
import { Checker, isFiniteLiteral } from '../core/validation/checker';
import { duplicates } from '../core/validation/names';
import { EKS_RULES, type ModelDataKeyFacts } from '../core/validation/rules';
import { isUnresolved } from '../core/validation/tokens';
import { durationSeconds, sizeGibibytes } from '../util/duration';
import { knownZones } from '../util/subnet-zones';
import { ROLE_INLINE_POLICY_CHARS } from './controller-policy-size';
import { serverFitProblem } from './node-sizing';
import { type EksClassOptions } from './class-options';
import { type ScalingOptions } from './scaling-options';
import { nodePoolNameProblem, scaledObjectNameProblem, SERVING_SERVICE_ACCOUNT } from './name-limits';
import { KARPENTER_NAMESPACE } from './karpenter';
import { KEDA_NAMESPACE } from './keda';
import { LOAD_BALANCER_CONTROLLER_NAMESPACE } from './load-balancer-controller';
import { OBSERVABILITY_NAMESPACE, observabilityProblems, type ObservabilityOptions } from './observability-addon';
import { chartVersionProblem, NEURON_DEVICE_PLUGIN_CHART } from './versions';
import { EKS_SCALING_DEFAULTS } from '../core/platform/control-loop';

/**
 * A class held (`placement.zones`) to a zone where the cluster has no node subnet: Karpenter launches only into the
 * subnets its EC2NodeClass selects, one per zone of them (aws/karpenter-provider-aws@v1.14.1
 * pkg/providers/subnet/subnet.go:129-162 `ZonalSubnetsForLaunch`), so a NodePool held to another zone never gets a node.
 */
export function placementVpcProblems(classes: readonly CapacityClass[], nodeSubnets: readonly ec2.ISubnet[]): ClassProblem[] {
  // The zones of the subnets tagged for its EC2NodeClasses (`nodeSubnets`); unknown at synth, nothing to judge.
  const zones = knownZones(nodeSubnets);
  if (!zones) return [];
  return classes.flatMap((cls) => {
    const rules = new Checker(EKS_RULES, '', cls.name);
    (cls.placement.zones ?? []).forEach((zone, i) => {
      if (!isUnresolved(zone)) rules.cross('placement.zones@nodeSubnets', { zone, nodeZones: zones }, `placement.zones[${i}]`);
    });
    return rules.problems;
  });
}

/**
 * A class whose pods may run in a zone the service's own load balancer is not enabled in: its held zones
 * (`placement.zones`), or without them every zone of the cluster's node subnets. `albZones` undefined (a rule on a
 * shared listener, or zones not known at synth): nothing to judge.
 */
export function loadBalancerZoneProblems(
  classes: readonly CapacityClass[], nodeSubnets: readonly ec2.ISubnet[], albZones: readonly string[] | undefined,
): ClassProblem[] {
  if (!albZones) return [];
  const nodeZones = knownZones(nodeSubnets);
  return classes.flatMap((cls) => {
    const held = cls.placement.zones;
    const pinned = held !== undefined && held.length > 0;
    if (pinned && held.some((z) => isUnresolved(z))) return [];
    const podZones = pinned ? held : nodeZones;
    if (!podZones) return [];
    const rules = new Checker(EKS_RULES, '', cls.name);
    rules.cross('placement.zones@loadBalancer', { podZones, pinned, albZones }, 'placement.zones');
    return rules.problems;
  });
}

/**
 * Namespaces no service may take for its own: Kubernetes' own, those of the controllers the library installs (KEDA; the
 * CloudWatch observability add-on; Karpenter and the load balancer controller run in kube-system), and `karpenter`,
 * where an existing Karpenter (`existingControllers.karpenter`) commonly runs.
 */
const RESERVED_NAMESPACES: readonly string[] = [
  ...new Set(['kube-system', 'kube-public', 'kube-node-lease', 'default', KEDA_NAMESPACE, OBSERVABILITY_NAMESPACE, KARPENTER_NAMESPACE,
    LOAD_BALANCER_CONTROLLER_NAMESPACE, 'karpenter']),
];

/** The name every EKS object of a class derives from: `<service>-<class>` unless the NodePool name is overridden. */
export function classObjectName(service: string, className: string): string {
  return `${service}-${className}`;
}

export interface EksCheckInput {
  readonly service: string;
  readonly namespace: string;
  readonly specs: readonly CapacityClassSpec[];
  /** The classes that passed the core checks. */
  readonly classes: readonly CapacityClass[];
  readonly catalog: HardwareCatalog;
  readonly classOptions: Readonly<Record<string, EksClassOptions>>;
  readonly scaling?: ScalingOptions;
  readonly loadBalancer?: { readonly deregistrationDelay?: Duration; readonly allowedCidrs?: readonly string[] };
  readonly amiAlias?: string;
  /** `modelDataEncryptionKey` (`modelDataKeyFacts`). */
  readonly modelDataKey?: ModelDataKeyFacts;
}

/** What an EksInferenceCluster is made of (the props it checks). */
export interface ClusterCheckInput {
  readonly stack: Stack;
  readonly clusterName: string;
  readonly cluster?: eks.ICluster;
  readonly clusterOptions?: { readonly systemNodeCount?: number };
  readonly vpc?: unknown;
  readonly isolatedSubnetEndpoints?: string;
  readonly kubectlLayer?: unknown;
  readonly chartVersions?: {
    readonly karpenter?: string;
    readonly keda?: string;
    readonly loadBalancerController?: string;
    readonly neuronDevicePlugin?: string;
  };
  readonly observability?: ObservabilityOptions;
  readonly neuronDevicePlugin?: boolean;
  readonly neuronDevicePluginImage?: string;
  readonly existingControllers?: {
    readonly karpenter?: { readonly nodeRoleName: string };
    readonly keda?: boolean;
    readonly kedaVersion?: string;
    readonly loadBalancerController?: { readonly role?: unknown; readonly roleInlinePolicyChars?: number };
    readonly neuronDevicePlugin?: boolean;
  };
}

const IAM_ROLE_NAME = /^[\w+=,.@-]{1,64}$/;

/** Problems of the cluster a service runs on (a shared EksInferenceCluster, or the one a service builds for itself). */
export function clusterProblems(input: ClusterCheckInput): ClassProblem[] {
  const problems: ClassProblem[] = [];
  const add = (field: string, message: string) => problems.push({ field, message });
  const rules = new Checker(EKS_RULES);
  if (Token.isUnresolved(input.stack.region) || Token.isUnresolved(input.stack.account)) {
    add('env', `stack '${input.stack.stackName}' is environment-agnostic; allowed: a stack with env.account and env.region (the ALB access-log bucket policy names the region's ` +
      'log-delivery principal, KEDA triggers and the Load Balancer Controller name the region, Karpenter\'s IAM conditions the account)');
  }
  if (isUnresolved(input.clusterName)) {
    add('clusterName', 'is a CDK token; pass the literal cluster name (it appears in IAM condition keys and Karpenter discovery tags)');
  } else if (!input.cluster) {
    rules.check('clusterName', input.clusterName);
  }
  for (const [chart, version] of Object.entries(input.chartVersions ?? {})) {
    if (version === undefined) continue;
    const p = chartVersionProblem(version);
    if (p) add(`chartVersions.${chart}`, p);
    // A controller marked as running is not installed, so its chart version would be ignored (review R231).
    const existing = (input.existingControllers as Record<string, unknown> | undefined)?.[chart];
    if (existing !== undefined && existing !== false) {
      add(`chartVersions.${chart}`, `'${version}' is ignored: existingControllers.${chart} marks it as already running, so the library installs no chart of ` +
        'it; allowed: unset (upgrade the running controller yourself) or unset existingControllers.' + chart);
    }
  }
  if (input.cluster && input.clusterName !== undefined && !isUnresolved(input.clusterName) && !isUnresolved(input.cluster.clusterName) &&
    input.clusterName !== input.cluster.clusterName) {
    // The pod identity associations and the access entry name the imported cluster; Karpenter's and the controllers'
    // settings, the IAM conditions and the discovery tags would name this one (review R231).
    add('clusterName', `'${input.clusterName}' differs from the imported cluster's name '${input.cluster.clusterName}'; allowed: unset, or the same name`);
  }
  rules.optional('clusterOptions.systemNodeCount', input.clusterOptions?.systemNodeCount);
  rules.cross('isolatedSubnetEndpoints', input.isolatedSubnetEndpoints);
  for (const p of rules.problems) add(p.field, p.message);
  if (input.cluster) {
    if (!input.cluster.kubectlProvider) {
      add('cluster', 'has no kubectl provider, so no manifest or chart can be applied; import it with eks.Cluster.fromClusterAttributes(..., { kubectlProvider: ' +
        'eks.KubectlProvider.fromKubectlProviderAttributes(...) }) from aws-cdk-lib/aws-eks-v2 (ClusterAttributes.kubectlProviderOptions is ignored for an imported cluster)');
    }
    for (const [field, value] of [['clusterOptions', input.clusterOptions], ['vpc', input.vpc], ['kubectlLayer', input.kubectlLayer]] as const) {
      if (value !== undefined) add(field, "is a setting of a new cluster, but 'cluster' is given (an imported cluster); allowed: unset");
    }
  } else {
    if (input.kubectlLayer === undefined) {
      add('kubectlLayer', "is required for a new cluster (no 'cluster' given): pass new KubectlV34Layer(this, 'Kubectl') from @aws-cdk/lambda-layer-kubectl-v34, matching clusterOptions.version");
    }
    if (input.existingControllers !== undefined) add('existingControllers', "marks controllers of an imported cluster, but no 'cluster' is given (a new cluster runs none); allowed: unset");
  }
  const role = input.existingControllers?.karpenter?.nodeRoleName;
  if (role !== undefined && !isUnresolved(role) && !IAM_ROLE_NAME.test(role)) {
    add('existingControllers.karpenter.nodeRoleName', `'${role}' is not an IAM role name (1-64 of letters, digits and +=,.@_-)`);
  }
  const lbc = input.existingControllers?.loadBalancerController;
  const own = lbc?.roleInlinePolicyChars;
  if (own !== undefined && !(Number.isInteger(own) && own >= 0 && own < ROLE_INLINE_POLICY_CHARS)) {
    add('existingControllers.loadBalancerController.roleInlinePolicyChars', `is ${own}; allowed: a whole number of characters from 0 to `
      + `${ROLE_INLINE_POLICY_CHARS - 1} (IAM caps a role's inline policies at ${ROLE_INLINE_POLICY_CHARS} in all)`);
  } else if (own !== undefined && lbc?.role === undefined) {
    add('existingControllers.loadBalancerController.roleInlinePolicyChars', `is ${own} but no role is given, so nothing is added to a role; allowed: unset, or a role`);
  }
  const keda = input.existingControllers?.kedaVersion;
  if (keda !== undefined) {
    const p = existingKedaProblem(keda, input.existingControllers?.keda === true);
    if (p) add('existingControllers.kedaVersion', p);
  }
  neuronDevicePluginProblems(input, add);
  problems.push(...observabilityProblems(input.observability ?? {}));
  return problems;
}

/**
 * `neuronDevicePlugin` and `existingControllers.neuronDevicePlugin`: booleans, and not both saying where the plugin comes
 * from; `neuronDevicePluginImage`: a private ECR image pinned by digest, for a plugin the cluster installs from the pinned chart.
 */
function neuronDevicePluginProblems(input: ClusterCheckInput, add: (field: string, message: string) => void): void {
  const install = input.neuronDevicePlugin as unknown;
  const existing = input.existingControllers?.neuronDevicePlugin as unknown;
  for (const [field, value] of [['neuronDevicePlugin', install], ['existingControllers.neuronDevicePlugin', existing]] as const) {
    if (value !== undefined && typeof value !== 'boolean') add(field, `is ${JSON.stringify(value)}; allowed: true or false`);
  }
  if (install === true && existing === true) {
    add('neuronDevicePlugin', 'is true, but existingControllers.neuronDevicePlugin marks a Neuron device plugin the cluster runs already (a second one '
      + 'would be a second DaemonSet advertising the same NeuronCores); allowed: unset, with existingControllers.neuronDevicePlugin');
  }
  const image = input.neuronDevicePluginImage;
  if (image !== undefined) {
    const rules = new Checker(EKS_RULES);
    rules.cross('neuronDevicePluginImage', {
      image,
      source: existing === true ? 'existing' : install === false ? 'none' : 'install',
      chartVersion: input.chartVersions?.neuronDevicePlugin,
      pinnedChartVersion: NEURON_DEVICE_PLUGIN_CHART.version,
    });
    for (const p of rules.problems) add(p.field, p.message);
  }
}

/**
 * The first KEDA with `ScaledObject.spec.fallback.behavior`: kedacore/keda v2.17.0 CHANGELOG.md:103 ("Add Fallback
 * option `behavior` for dynamic fallback calculation", #6450) and apis/keda/v1alpha1/scaledobject_types.go:113-120
 * (`Behavior string` with the enum static, currentReplicas, currentReplicasIfHigher, currentReplicasIfLower); v2.16.0
 * has `FailureThreshold` and `Replicas` only (same file :109-112).
 */
const KEDA_FALLBACK_BEHAVIOR = [2, 17, 0] as const;

function existingKedaProblem(version: string, marked: boolean): string | undefined {
  if (!marked) return `is '${version}' but existingControllers.keda is not true; allowed: a version only for a KEDA that runs already`;
  if (isUnresolved(version)) return undefined;
  const m = /^v?(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(version);
  if (!m) return `'${version}' is not a KEDA version; allowed: major.minor.patch, e.g. 2.20.2`;
  const [major, minor, patch] = m.slice(1, 4).map(Number);
  const [a, b, c] = KEDA_FALLBACK_BEHAVIOR;
  const supported = major !== a ? major > a : minor !== b ? minor > b : patch >= c;
  return supported ? undefined
    : `is '${version}', which has no ScaledObject fallback.behavior (its CRD prunes it, so a failing trigger scales to the static fallback replicas); allowed: ${a}.${b}.${c} or later`;
}

/** Problems specific to serving on EKS (the core checks run separately). Tokens follow the rules' token policy. */
export function eksProblems(input: EksCheckInput): ClassProblem[] {
  const problems: ClassProblem[] = [];
  const add = (field: string, message: string, className?: string) => problems.push({ className, field, message });
  const rules = new Checker(EKS_RULES);

  rules.check('contract.name', input.service);
  if (rules.check('namespace', input.namespace)) rules.cross('namespace@reserved', { namespace: input.namespace, reserved: RESERVED_NAMESPACES }, 'namespace');
  rules.cross('classes', input.specs.map((s) => s.name));
  checkScaling(input.scaling ?? {}, rules);
  if (input.modelDataKey) rules.cross('modelDataEncryptionKey', input.modelDataKey);
  const lb = input.loadBalancer ?? {};
  rules.optional('loadBalancer.deregistrationDelay', durationSeconds(lb.deregistrationDelay));
  (lb.allowedCidrs ?? []).forEach((cidr, i) => rules.cross('loadBalancer.allowedCidrs', cidr, `loadBalancer.allowedCidrs[${i}]`));
  rules.optional('amiAlias', input.amiAlias);
  for (const p of rules.problems) add(p.field, p.message);

  const known = new Set(input.specs.map((s) => s.name));
  for (const name of Object.keys(input.classOptions)) {
    if (!known.has(name)) add(`classOptions.${name}`, `names no declared class; known classes: ${[...known].join(', ')}`);
  }

  const nodePoolNames = input.specs.map((s) => input.classOptions[s.name]?.nodePoolName ?? classObjectName(input.service, s.name));
  for (const name of duplicates(nodePoolNames)) {
    const owners = input.specs.filter((_, i) => nodePoolNames[i] === name).map((s) => s.name);
    add('nodePoolName', `'${name}' is the NodePool of more than one class (${owners.join(', ')}); NodePool names must be unique in the cluster`);
  }
  for (const spec of input.specs) {
    const own = new Checker(EKS_RULES);
    const opts = input.classOptions[spec.name] ?? {};
    const objectName = classObjectName(input.service, spec.name);
    // Only when both parts are valid on their own: otherwise the part's own problem says it better.
    if (isNameLike(input.service) && isNameLike(spec.name)) {
      if (own.check('class.objectName', objectName, 'name')) own.cross('class.objectName@priorityClass', objectName, 'name');
      checkNameLimits(objectName, opts.nodePoolName, (field, message) => add(field, message, spec.name));
    }
    own.optional('classOptions.nodePoolName', opts.nodePoolName);
    if (opts.nodePoolName !== undefined && !isUnresolved(opts.nodePoolName)) {
      const p = nodePoolNameProblem(opts.nodePoolName);
      if (p) add('classOptions.nodePoolName', p, spec.name);
    }
    checkReplicas(spec, opts, own);
    own.optional('classOptions.targetRequestsPerReplicaPerPeriod', opts.targetRequestsPerReplicaPerPeriod);
    own.optional('classOptions.port', opts.port);
    for (const [field, path] of [['healthPath', opts.healthPath], ['readyPath', opts.readyPath], ['warmup.path', opts.warmup?.path]] as const) {
      if (path !== undefined) own.cross('classOptions.path', path, `classOptions.${field}`);
    }
    if (opts.warmup) own.check('classOptions.warmup.maxLatency', durationSeconds(opts.warmup.maxLatency));
    own.optional('classOptions.startupTimeout', durationSeconds(opts.startupTimeout));
    own.optional('classOptions.modelCacheSize', sizeGibibytes(opts.modelCacheSize));
    own.optional('classOptions.nodeVolumeSize', sizeGibibytes(opts.nodeVolumeSize));
    if (opts.capacityTypes !== undefined) own.cross('classOptions.capacityTypes', opts.capacityTypes);
    for (const p of own.problems) add(p.field, p.message, spec.name);
    const cls = input.classes.find((c) => c.name === spec.name);
    if (cls) {
      checkInstanceTypes(spec, cls, opts, input.catalog, (field, message) => add(field, message, spec.name));
      checkNeuronCoreRequest(spec, cls, opts, input.catalog, (field, message) => add(field, message, spec.name));
    }
  }
  return problems;
}

/**
 * A Neuron replica's pod requests `tensorParallelDegree` NeuronCores (manifests/workload.ts), and the class's NodePool
 * packs floor(cores / degree) of them on a node (class-unit.ts). Only 1 or all of a node's cores is a request the
 * default scheduler and the device plugin can place: "The scheduler extension is required for scheduling Pods that
 * request more than one Neuron core or device resource" and "requesting one or all Neuron cores or devices is always
 * valid" (aws-neuron/aws-neuron-sdk@3afa0fdf deploy/infrastructure/scheduler.rst); without it a pod may get cores that are
 * not connected and the Neuron runtime fails (aws/containers-roadmap#1735, aws-neuron/aws-neuron-sdk#110). Whether
 * the 2.31.0 device plugin alone picks connected cores is not documented: not confirmed, so such a class is refused.
 *
 * Why the library does not run the extension instead. On EKS it is a second kube-scheduler (`my-scheduler`) that pods
 * must name in `schedulerName` ("Amazon EKS does not natively support modifying the default scheduler, so this multiple
 * scheduler approach is required", deploy/includes/k8s-multiple-scheduler.rst); neuron-helm-chart 1.9.0 (b77a6f90
 * values.yaml `scheduler.customScheduler`) runs it from `eks-distro/kubernetes/kube-scheduler:v1.31.12`, while a
 * kube-scheduler may be at most one minor release older than the API server
 * (https://kubernetes.io/releases/version-skew-policy/; the library's clusters default to 1.33). Karpenter v1.14.1 would
 * provision for its pods (it reacts to any pod whose PodScheduled condition is Unschedulable, whichever scheduler set
 * it, and never reads schedulerName: pkg/utils/pod/scheduling.go:96-133), but it plans with resource counts alone and
 * knows no extender: a node with enough free but unconnected cores counts as room, so no node is launched and the pod
 * stays Pending, and a count the extension refuses on a type (trn1.32xlarge takes 1, 4, 8 or all 16 devices) gets a
 * node that never runs it. Requesting all of a node's cores for one replica is not done either: the NodePool of a class
 * with `additionalInstanceTypes` mixes core counts while its one Deployment requests one count, and the capacity plan
 * (replicasPerInstance, lib/core/service/checks.ts) would have to price cores the server never uses.
 */
function checkNeuronCoreRequest(spec: CapacityClassSpec, cls: CapacityClass, opts: EksClassOptions, catalog: HardwareCatalog, add: Add): void {
  const tp = spec.footprint.tensorParallelDegree;
  if (cls.hardware.acceleratorKind !== 'neuron' || !isFiniteLiteral(tp) || tp <= 1) return;
  const exact = catalog.list().filter((hw) => hw.platform === 'ec2' && hw.acceleratorKind === 'neuron' && hw.tensorParallelUnits === tp);
  const refuse = (field: string, type: string, cores: number) => {
    if (cores <= tp) return; // fewer cores than the degree is checkInstanceTypes' problem; as many is the whole node
    add(field, `'${type}' has ${cores} NeuronCores and footprint.tensorParallelDegree is ${tp}, so each replica's pod would request ${tp} of a ` +
      'node\'s NeuronCores; only the Neuron scheduler extension, which the library does not run (Karpenter cannot plan for it), ' +
      'gives such a pod connected cores, and on unconnected ones the Neuron runtime fails. Allowed: tensorParallelDegree 1 or ' +
      `${cores} (all of ${type}'s NeuronCores: one replica per node), or an instance type with ${tp} NeuronCores` +
      (exact.length > 0 ? ` (${exact.map((hw) => hw.instanceType).join(', ')})` : ' (none in the hardware catalog)'));
  };
  refuse('footprint.tensorParallelDegree', cls.instanceType, cls.hardware.tensorParallelUnits);
  for (const type of opts.additionalInstanceTypes ?? []) {
    const hw = catalog.find(type);
    if (hw?.platform === 'ec2' && hw.acceleratorKind === 'neuron') refuse('classOptions.additionalInstanceTypes', type, hw.tensorParallelUnits);
  }
}

/**
 * The controllers' own limits on `<service>-<class>` (ScaledObject, NodePool unless overridden), each with a problem
 * naming the limit: lib/eks/name-limits.ts cites where each comes from. The Service name (an RFC 1035 label) is the
 * `class.objectName` rule itself.
 */
function checkNameLimits(objectName: string, nodePoolOverride: string | undefined, add: Add): void {
  const scaled = scaledObjectNameProblem(objectName);
  if (scaled) add('class.objectName', `ScaledObject ${scaled}`);
  const pool = nodePoolOverride === undefined ? nodePoolNameProblem(objectName) : undefined;
  if (pool) add('class.objectName', `NodePool ${pool}`);
  // A class that reads model data gets a ServiceAccount of this name beside the namespace's shared one; the same name
  // would make the Workload's create fail with AlreadyExists (review R230).
  if (objectName === SERVING_SERVICE_ACCOUNT) {
    add('class.objectName', `'${objectName}' is the name of the namespace's shared ServiceAccount; allowed: any other service and class names`);
  }
}

function isNameLike(value: string): boolean {
  return typeof value === 'string' && !isUnresolved(value) && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(value);
}

type Add = (field: string, message: string) => void;

function checkScaling(s: ScalingOptions, rules: Checker<typeof EKS_RULES>): void {
  const period = durationSeconds(s.metricPeriod);
  const periodOk = rules.optional('scaling.metricPeriod', period);
  const collection = durationSeconds(s.metricCollectionTime);
  if (rules.optional('scaling.metricCollectionTime', collection) && collection !== undefined && periodOk && isFiniteLiteral(collection)) {
    rules.cross('scaling.metricCollectionTime%period', { collectionSeconds: collection, periodSeconds: period ?? EKS_SCALING_DEFAULTS.metricPeriodSeconds }, 'scaling.metricCollectionTime');
  }
  rules.optional('scaling.scaleDownStabilization', durationSeconds(s.scaleDownStabilization));
  rules.optional('scaling.maxScaleUpPods', s.maxScaleUpPods);
  rules.optional('scaling.scaleUpPeriod', durationSeconds(s.scaleUpPeriod));
  rules.optional('scaling.pollingInterval', durationSeconds(s.pollingInterval));
}

function checkReplicas(spec: CapacityClassSpec, opts: EksClassOptions, rules: Checker<typeof EKS_RULES>): void {
  const quota = spec.maxReplicas;
  const { minReplicas: min, maxReplicas: max } = opts;
  const maxOk = rules.optional('classOptions.maxReplicas', max);
  const minOk = rules.optional('classOptions.minReplicas', min);
  const range = { min: minOk ? min : undefined, max: maxOk ? max : undefined, quota: isFiniteLiteral(quota) ? quota : undefined };
  rules.cross('classOptions.replicaRange', { prop: 'maxReplicas', ...range }, 'classOptions.maxReplicas');
  rules.cross('classOptions.replicaRange', { prop: 'minReplicas', ...range }, 'classOptions.minReplicas');
}

function checkInstanceTypes(spec: CapacityClassSpec, cls: CapacityClass, opts: EksClassOptions, catalog: HardwareCatalog, add: Add): void {
  const target = spec.footprint.acceleratorTarget;
  for (const type of opts.additionalInstanceTypes ?? []) {
    const hw = catalog.find(type);
    const field = 'classOptions.additionalInstanceTypes';
    if (!hw) {
      add(field, `'${type}' is not in the hardware catalog, so it has no known accelerator; the class's artifact needs a ${target} accelerator`);
      continue;
    }
    if (hw.platform !== 'ec2') {
      add(field, `'${type}' is a SageMaker type; EKS nodes need EC2 instance types`);
      continue;
    }
    if (hw.acceleratorTarget !== target) {
      add(field, `'${type}' carries ${hw.acceleratorName} (${hw.acceleratorTarget}) but the artifact targets '${target}'; it has no accelerator of the artifact's kind`);
      continue;
    }
    if (hw.kubernetesResourceName !== cls.hardware.kubernetesResourceName) {
      add(field, `'${type}' exposes ${hw.kubernetesResourceName}, not ${cls.hardware.kubernetesResourceName} like ${cls.instanceType}`);
      continue;
    }
    const tp = spec.footprint.tensorParallelDegree;
    if (hw.tensorParallelUnits < tp) {
      add(field, `'${type}' has ${hw.tensorParallelUnits} tensor-parallel units; one replica needs ${tp}`);
      continue;
    }
    const m = memoryBreakdown(spec, hw);
    if (m.shortfallGiB > 0) add(field, `'${type}' cannot hold the model: needs ${m.requiredGiB.toFixed(1)} GiB, ${m.usableGiB.toFixed(1)} GiB usable`);
    const fit = serverFitProblem(cls, type, hw);
    if (fit) add(field, fit);
  }
}
