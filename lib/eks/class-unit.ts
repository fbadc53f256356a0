/**
 * The Kubernetes objects of one capacity class (pure: no constructs). The service applies them as four manifests:
 * capacity (EC2NodeClass, NodePool), routing (Service, TargetGroupBinding), workload (service account, PriorityClass,
 * Deployment, PDB) and scaler (ScaledObject).
 */
import { Duration } from 'aws-cdk-lib';
import { type HardwareCatalog } from '../core/hardware/catalog';
import { AwsDim, AwsMetrics } from '../core/metrics/contract';
import { type RuntimeBinding } from '../core/runtime/binding';
import { type CapacityClass } from '../core/service/capacity-class';
import { type ClassPlan } from '../core/service/sizing';
import { classObjectName } from './checks';
import { type EksClassOptions } from './class-options';
import * as m from './manifests';
import { modelCacheGiB } from './model-data-fetch';
import { classInstanceTypes, mostReplicasPerNode, nodeVolumeGiB, podRequests, replicasPerNode } from './node-sizing';
import { SERVING_SERVICE_ACCOUNT } from './name-limits';
import { modelFetchOf } from './runtime';
import { type ScalingOptions } from './scaling-options';
import { EKS_NODE_DEFAULTS, EKS_SCALING_DEFAULTS, spotNodeGraceSeconds } from '../core/platform/control-loop';

export const DEFAULT_PORT = 8080;
export const SERVICE_PORT = 80;
export const CLASS_LABEL = 'capacity-aware-inference/class';

/** Everything one class's objects are derived from. */
export interface ClassUnitInput {
  readonly cls: CapacityClass;
  /** Preference rank (0 = preferred). */
  readonly rank: number;
  readonly plan: ClassPlan;
  readonly opts: EksClassOptions;
  /** The contract name. */
  readonly service: string;
  readonly namespace: string;
  /** Labels every object of the service carries. */
  readonly labels: Readonly<Record<string, string>>;
  readonly clusterName: string;
  readonly nodeRoleName: string;
  /** What selects the node subnets (lib/eks/subnet-discovery.ts `nodeSubnetSelectorTerms`). */
  readonly subnetSelectorTerms: readonly m.SelectorTerm[];
  readonly amiAlias: string;
  readonly deregistrationDelaySeconds: number;
  /** Seconds an admitted request may still need: the service deadline. */
  readonly deadlineSeconds: number;
  readonly scaling: ScalingOptions;
  readonly periodSeconds: number;
  readonly runtime: RuntimeBinding;
  readonly fetcherImage?: string;
  readonly catalog: HardwareCatalog;
  readonly triggerAuthenticationName: string;
  /** What the load trigger reads: the class's target group on the service's ALB. */
  readonly load: { readonly loadBalancerFullName: string; readonly targetGroupFullName: string; readonly region: string };
  readonly targetGroupArn: string;
  readonly vpcId: string;
}

/** The typed Kubernetes objects of one class, as applied. */
export interface ClassObjects {
  /** The class's own service account, when it reads model data (its pod identity reads only that object). */
  readonly serviceAccount?: m.ServiceAccount;
  readonly nodeClass: m.EC2NodeClass;
  readonly nodePool: m.NodePool;
  readonly priorityClass: m.PriorityClass;
  readonly deployment: m.Deployment;
  readonly service: m.Service;
  readonly podDisruptionBudget: m.PodDisruptionBudget;
  readonly scaledObject: m.ScaledObject;
  readonly targetGroupBinding: m.TargetGroupBinding;
}

export interface ClassUnitObjects {
  /** `<service>-<class>`: Deployment, Service, PDB, PriorityClass, ScaledObject, TargetGroupBinding. */
  readonly name: string;
  readonly nodePoolName: string;
  readonly objects: ClassObjects;
  /** What the ScaledObject was rendered from (the service re-renders it with the replica floor). */
  readonly scaledObjectInput: m.ScaledObjectInput;
}

/** The objects of one class. */
export function classUnitObjects(u: ClassUnitInput): ClassUnitObjects {
  const name = classObjectName(u.service, u.cls.name);
  const nodePoolName = u.opts.nodePoolName ?? name;
  const selector = { 'app.kubernetes.io/name': 'model-server', 'app.kubernetes.io/instance': name };
  const labels = { ...u.labels, ...selector, [CLASS_LABEL]: u.cls.name };
  const modelFetch = modelFetchOf(u.cls, u.fetcherImage);
  const cacheGiB = modelCacheGiB(u.cls, modelFetch, u.opts.modelCacheSize?.toGibibytes());
  const { nodeClass, nodePool } = capacityObjects(u, nodePoolName, cacheGiB);
  const workload = workloadObjects(u, { name, nodePoolName, labels, selector, modelFetch, cacheGiB });
  const scaledObjectInput = scaledObjectInputOf(u, name, labels);
  const targetGroupBinding = m.targetGroupBinding(name, u.namespace, labels, {
    targetGroupArn: u.targetGroupArn,
    serviceName: name,
    servicePort: SERVICE_PORT,
    vpcId: u.vpcId,
  });
  return {
    name,
    nodePoolName,
    scaledObjectInput,
    objects: {
      ...(workload.serviceAccount ? { serviceAccount: workload.serviceAccount } : {}),
      nodeClass,
      nodePool,
      priorityClass: workload.priorityClass,
      deployment: workload.deployment,
      service: m.service(name, u.namespace, labels, selector, SERVICE_PORT),
      podDisruptionBudget: m.podDisruptionBudget(name, u.namespace, labels, selector),
      scaledObject: m.scaledObject(scaledObjectInput),
      targetGroupBinding,
    },
  };
}

/** Nodes the NodePool limits hold beyond what maxReplicas takes: one rollout surge pod or one drift replacement at a time. */
export const TRANSIENT_NODES = 1;

/** The class's Karpenter NodePool and EC2NodeClass: its instance types, capacity types and quota as limits. */
function capacityObjects(u: ClassUnitInput, nodePoolName: string, cacheGiB: number): { nodeClass: m.EC2NodeClass; nodePool: m.NodePool } {
  const { cls, opts } = u;
  const hw = cls.hardware;
  const nodeLabels = { ...u.labels, [CLASS_LABEL]: cls.name };
  const instanceTypes = classInstanceTypes(cls, opts);
  const hardwareOf = (type: string) => u.catalog.find(type) ?? hw;
  const perNode = (type: string) => replicasPerNode(cls, type, u.catalog);
  // Karpenter charges a NodePool's limits with each node's whole capacity, and launches no instance type that would
  // exceed what is left ("filterByRemainingResources is used to filter out instance types that if launched would
  // exceed the nodepool limits": kubernetes-sigs/karpenter v1.14.1 pkg/controllers/provisioning/scheduling/
  // scheduler.go:1068-1084, read by review R68; existing nodes are charged `node.Capacity()`). So the limits are whole
  // nodes: as many as maxReplicas takes on the type holding the fewest replicas, each counted at the largest type's
  // capacity; counted in replicas, a last node only partly needed, or a type with more accelerators than the replicas
  // need, would never launch. One node more than maxReplicas takes: a rollout's surge pod (`maxSurge: 1`,
  // `maxUnavailable: 0`) and drift's replacement (budget `Drifted: 1`; "Karpenter's drift resolution workflow requires
  // a replacement Node to be spun up and available before the drifted node is terminated", kubernetes-sigs/karpenter
  // PR #2906; aws/karpenter-provider-aws#8873 shows the deadlock on a static NodePool at its limit) each need one node at most beside a class
  // at maxReplicas; without it both wait until the load lets the class scale in. The HPA never runs more than
  // maxReplicas pods, so the node exists only while one of them is under way (empty nodes are consolidated).
  const maxInstances = Math.ceil(cls.maxReplicas / Math.min(...instanceTypes.map(perNode))) + TRANSIENT_NODES;
  const volumeGiB = nodeVolumeGiB(cls, opts, cacheGiB, u.catalog);
  const vcpuOf = (type: string) => hardwareOf(type).vcpu;
  const nodeClass = m.ec2NodeClass({
    name: nodePoolName,
    roleName: u.nodeRoleName,
    amiAlias: u.amiAlias,
    subnetSelectorTerms: u.subnetSelectorTerms,
    securityGroupTags: { 'aws:eks:cluster-name': u.clusterName },
    volumeSizeGiB: volumeGiB,
    labels: nodeLabels,
    tags: { 'capacity-aware-inference:service': u.service, 'capacity-aware-inference:class': cls.name },
  });
  const capacityTypes = opts.capacityTypes ?? ['on-demand'];
  const nodePool = m.nodePool({
    name: nodePoolName,
    nodeClassName: nodePoolName,
    instanceTypes,
    capacityTypes,
    acceleratorKind: hw.acceleratorKind,
    acceleratorResource: hw.kubernetesResourceName,
    acceleratorLimit: maxInstances * Math.max(...instanceTypes.map((type) => hardwareOf(type).tensorParallelUnits)),
    cpuLimit: maxInstances * Math.max(...instanceTypes.map(vcpuOf)),
    weight: Math.max(1, 100 - 10 * u.rank),
    labels: nodeLabels,
    zones: cls.placement.zones,
    // The simulator's idle nodes live as long (EKS_NODE_DEFAULTS, lib/core/platform/control-loop.ts).
    consolidateAfter: `${EKS_NODE_DEFAULTS.consolidateAfterSeconds / 60}m`,
    // Expiration is forceful: no disruption budget, no replacement launched first, and nodes launched together expire
    // together (aws/karpenter-provider-aws@v1.14.1 website/content/en/docs/concepts/disruption.md, "Expiration"), which
    // would take a class's replicas at once. Drift, budgeted one node at a time (`Drifted: 1`), replaces nodes when the
    // AMI (`bottlerocket@latest` resolves anew) or the NodePool changes.
    expireAfter: 'Never',
    terminationGracePeriod: `${nodeGraceSeconds(u, capacityTypes)}s`,
  });
  return { nodeClass, nodePool };
}

type Labels = Readonly<Record<string, string>>;

/** The class's model servers: Deployment, PriorityClass and (with model data) its own service account. */
interface WorkloadNames {
  readonly name: string;
  readonly nodePoolName: string;
  readonly labels: Labels;
  readonly selector: Labels;
  readonly modelFetch?: m.ModelFetch;
  readonly cacheGiB: number;
}

interface WorkloadObjects {
  readonly priorityClass: m.PriorityClass;
  readonly serviceAccount?: m.ServiceAccount;
  readonly deployment: m.Deployment;
}

function workloadObjects(u: ClassUnitInput, w: WorkloadNames): WorkloadObjects {
  const { cls, opts, runtime } = u;
  const { name, nodePoolName, labels, selector, modelFetch, cacheGiB } = w;
  const hw = cls.hardware;
  const priorityClass = m.priorityClass(name, m.MODEL_SERVER_PRIORITY, `Model servers of capacity class ${cls.name}`, labels);
  // A class that reads model data gets its own service account, so that its pod identity reads only its own object.
  const serviceAccount = modelFetch ? m.serviceAccount(name, u.namespace, labels) : undefined;
  const requests = podRequests(cls);
  const deployment = m.deployment({
    name,
    namespace: u.namespace,
    labels,
    selector,
    image: cls.artifact.image,
    args: runtime.args,
    env: runtime.env,
    port: opts.port ?? DEFAULT_PORT,
    acceleratorKind: hw.acceleratorKind,
    acceleratorResource: hw.kubernetesResourceName,
    acceleratorCount: cls.footprint.tensorParallelDegree,
    cpu: String(requests.cpu),
    memory: `${requests.memoryGiB}Gi`,
    modelCacheSize: `${cacheGiB}Gi`,
    modelFetch,
    nodePoolName,
    priorityClassName: name,
    serviceAccountName: serviceAccount?.metadata.name ?? SERVING_SERVICE_ACCOUNT,
    readiness: {
      healthPath: opts.healthPath ?? runtime.healthPath,
      readyPath: opts.readyPath ?? runtime.readyPath,
      warmup: opts.warmup ? { path: opts.warmup.path, maxLatencySeconds: opts.warmup.maxLatency.toSeconds({ integral: false }) } : undefined,
      startupTimeoutSeconds: startupTimeoutSeconds(opts),
    },
    drainSeconds: u.deregistrationDelaySeconds,
    inFlightSeconds: u.deadlineSeconds,
  });
  return { priorityClass, serviceAccount, deployment };
}

/**
 * The NodePool's terminationGracePeriod. Karpenter deletes a draining node's pods, bypassing their PodDisruptionBudget,
 * at the node's grace expiry minus each pod's own terminationGracePeriodSeconds (kubernetes-sigs/karpenter@v1.14.1
 * pkg/controllers/node/termination/terminator/terminator.go:140-185), so the budget (one pod at a time) holds for the
 * difference: it must cover a replacement's start, or a drift would take the next pod before the one it replaced is
 * Ready (R91). A node holding several of the class's replicas has them evicted one at a time, each once the previous
 * one's replacement is Ready: the eviction queue honours the budget (terminator.go:112, eviction.go:173-205), the
 * grace's deletions do not (terminator.go:144-155). So the grace covers one start per replica of the fullest node,
 * else the last ones are deleted together when it runs out (R215). A start is bounded by `startupTimeout`, which does
 * not count the init container's model download (class-options.ts). Not for a pool that may run spot: an interrupted
 * instance is gone two minutes after its notice, and the node's pods terminate until its grace expiry (deletion +
 * grace: lifecycle/controller.go:298), so a pod the budget held past the notice would die with the instance, neither
 * deregistered nor drained (R93, R94). There the grace is at most `spotNodeGraceSeconds`
 * (lib/core/platform/control-loop.ts): every pod is gone within the notice, drained as far as its own grace fits before
 * then. A mixed pool (on-demand and spot) gets the spot grace for all its nodes: its drifts are not held for a
 * replacement.
 */
function nodeGraceSeconds(u: ClassUnitInput, capacityTypes: readonly string[]): number {
  const podGrace = m.podTerminationGraceSeconds(u.deregistrationDelaySeconds, u.deadlineSeconds);
  if (capacityTypes.includes('spot')) return spotNodeGraceSeconds(podGrace);
  return podGrace + 60 + mostReplicasPerNode(u.cls, u.opts, u.catalog).replicas * startupTimeoutSeconds(u.opts);
}

/** Longest a model server may take to start (`EksClassOptions.startupTimeout`, 30 minutes by default). */
function startupTimeoutSeconds(opts: EksClassOptions): number {
  return (opts.startupTimeout ?? Duration.minutes(30)).toSeconds();
}

/** KEDA's input for the class: the target group's request count per replica against the plan's target. */
function scaledObjectInputOf(u: ClassUnitInput, name: string, labels: Labels): m.ScaledObjectInput {
  const { opts, plan, scaling } = u;
  const p = u.periodSeconds;
  const minReplicas = opts.minReplicas ?? plan.minReplicas;
  const maxReplicas = Math.max(minReplicas, opts.maxReplicas ?? plan.maxReplicas);
  return {
    name,
    namespace: u.namespace,
    labels,
    deploymentName: name,
    triggerAuthenticationName: u.triggerAuthenticationName,
    metric: {
      namespace: AwsMetrics.alb.namespace,
      metricName: AwsMetrics.alb.requestCount,
      ...m.triggerDimensions({ [AwsDim.LOAD_BALANCER]: u.load.loadBalancerFullName, [AwsDim.TARGET_GROUP]: u.load.targetGroupFullName }),
      statistic: 'Sum',
      region: u.load.region,
    },
    target: opts.targetRequestsPerReplicaPerPeriod ?? plan.targetRequestsPerSecondPerReplica * p,
    minReplicas,
    maxReplicas,
    fallbackReplicas: Math.min(maxReplicas, Math.max(minReplicas, plan.steadyReplicas)),
    periodSeconds: p,
    // Defaults shared with the simulator's EKS model (lib/core/platform/control-loop.ts).
    collectionSeconds: scaling.metricCollectionTime?.toSeconds() ?? EKS_SCALING_DEFAULTS.metricCollectionPeriods * p,
    endTimeOffsetSeconds: EKS_SCALING_DEFAULTS.metricEndTimeOffsetPeriods * p,
    scaleDownStabilizationSeconds: scaling.scaleDownStabilization?.toSeconds() ?? EKS_SCALING_DEFAULTS.scaleDownStabilizationSeconds,
    scaleUpPods: scaling.maxScaleUpPods ?? EKS_SCALING_DEFAULTS.maxScaleUpPods,
    scaleUpPeriodSeconds: scaling.scaleUpPeriod?.toSeconds() ?? EKS_SCALING_DEFAULTS.scaleUpPeriodSeconds,
    pollingIntervalSeconds: scaling.pollingInterval?.toSeconds() ?? EKS_SCALING_DEFAULTS.pollingIntervalSeconds,
  };
}
