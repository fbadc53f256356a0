/**
 * What a node of a class holds: its model servers' requests, how many of them fit on a node of each of the class's
 * instance types, and the data volume they share. Pure (the construct turns the problems into its synth error).
 */
import { type HardwareCatalog } from '../core/hardware/catalog';
import { type CapacityClass } from '../core/service/capacity-class';
import { type ClassProblem } from '../core/service/checks';
import { amiFamily, Checker, isFiniteLiteral, numberProblem } from '../core/validation/checker';
import { EKS_RULES } from '../core/validation/rules';
import { AL2023_ROOT_SNAPSHOT_GIB } from '../core/platform/limits';
import { sizeGibibytes } from '../util/duration';
import { type EksClassOptions } from './class-options';

/**
 * The share of a node's CPU and memory its model servers request: the rest is the kubelet's reservation and the
 * DaemonSets' (review R229 found about 0.25 vCPU left on g5.xlarge and inf2.xlarge with the observability add-on).
 */
const SERVER_SHARE_OF_NODE = 0.75;

/** A model server's CPU and memory requests: three quarters of its own instance type's, shared by its replicas. */
export function podRequests(cls: CapacityClass): { cpu: number; memoryGiB: number } {
  return {
    cpu: Math.max(1, Math.floor((cls.hardware.vcpu * SERVER_SHARE_OF_NODE) / cls.replicasPerInstance)),
    memoryGiB: Math.max(2, Math.floor((cls.hardware.memoryGiB * SERVER_SHARE_OF_NODE) / cls.replicasPerInstance)),
  };
}

/**
 * Why a node of `type` cannot run one of the class's model servers, or nothing: the pod's requests are sized on the
 * class's own type (`podRequests`), and a type whose share for servers is smaller than one pod's requests is one
 * Karpenter never launches for it ("nodeclaim.go" filters out instance types whose allocatable cannot hold the pods:
 * kubernetes-sigs/karpenter@v1.14.1 pkg/controllers/provisioning/scheduling/nodeclaim.go:575-596, review R229), so
 * the class's pods would stay Pending whenever only that type is available.
 */
export function serverFitProblem(cls: CapacityClass, type: string, hw: { readonly vcpu: number; readonly memoryGiB: number }): string | undefined {
  const requests = podRequests(cls);
  const cpu = hw.vcpu * SERVER_SHARE_OF_NODE;
  const memory = hw.memoryGiB * SERVER_SHARE_OF_NODE;
  if (cpu >= requests.cpu && memory >= requests.memoryGiB) return undefined;
  return `'${type}' (${hw.vcpu} vCPU, ${hw.memoryGiB} GiB) cannot run one model server: each requests ${requests.cpu} vCPU and ` +
    `${requests.memoryGiB} GiB (three quarters of ${cls.instanceType}'s, per replica), and a node gives its servers three quarters of its ` +
    `own (${cpu} vCPU, ${memory} GiB; the rest is the kubelet's and the DaemonSets'); allowed: a type with at least ` +
    `${Math.ceil(requests.cpu / SERVER_SHARE_OF_NODE)} vCPU and ${Math.ceil(requests.memoryGiB / SERVER_SHARE_OF_NODE)} GiB`;
}

/** The instance types the class's NodePool may launch: its own and `additionalInstanceTypes`. */
export function classInstanceTypes(cls: CapacityClass, opts: EksClassOptions): string[] {
  return [cls.instanceType, ...(opts.additionalInstanceTypes ?? [])];
}

/**
 * The pods a node of the type holds: by its accelerators, and by its CPU and memory at the pod's requests (sized on
 * the class's own type, `podRequests`), which an additional type with less of them per accelerator runs out of first.
 * Capacity, not allocatable (less by what the kubelet and the DaemonSets reserve): where CPU or memory binds, one pod
 * fewer may fit.
 */
export function replicasPerNode(cls: CapacityClass, type: string, catalog: HardwareCatalog): number {
  const t = catalog.find(type) ?? cls.hardware;
  const requests = podRequests(cls);
  return Math.max(1, Math.min(Math.floor(t.tensorParallelUnits / cls.footprint.tensorParallelDegree),
    Math.floor(t.vcpu / requests.cpu), Math.floor(t.memoryGiB / requests.memoryGiB)));
}

/** The most replicas a node of the class holds, and the type that holds them. */
export function mostReplicasPerNode(cls: CapacityClass, opts: EksClassOptions, catalog: HardwareCatalog): { replicas: number; instanceType: string } {
  return classInstanceTypes(cls, opts).map((instanceType) => ({ replicas: replicasPerNode(cls, instanceType, catalog), instanceType }))
    .reduce((a, b) => (b.replicas > a.replicas ? b : a));
}

/**
 * The node data volume, GiB: `nodeVolumeSize`, else the model volumes of as many replicas as the fullest node holds
 * (each replica's model volume is an emptyDir there, `cacheGiB`) and 100 GiB for the images.
 */
export function nodeVolumeGiB(cls: CapacityClass, opts: EksClassOptions, cacheGiB: number, catalog: HardwareCatalog): number {
  return opts.nodeVolumeSize?.toGibibytes() ?? cacheGiB * mostReplicasPerNode(cls, opts, catalog).replicas + 100;
}

/**
 * A `nodeVolumeSize` below the model volumes of the replicas a node holds. Each replica's model volume (`cacheGiB`,
 * `modelCacheSize`) is an emptyDir on the node's data volume: filled, the node reports disk pressure and the kubelet
 * evicts its pods (https://kubernetes.io/docs/concepts/scheduling-eviction/node-pressure-eviction/, `nodefs.available`).
 * The size's own bounds (whole GiB, at least MIN_NODE_VOLUME_GIB for the volume's IOPS) are the number rule's, checked
 * with the other options: this check runs only on a size that passes them.
 */
export function nodeVolumeProblems(
  cls: CapacityClass, opts: EksClassOptions, cacheGiB: number, catalog: HardwareCatalog, amiAlias: string,
): ClassProblem[] {
  const sizeGiB = sizeGibibytes(opts.nodeVolumeSize);
  if (sizeGiB === undefined || numberProblem(EKS_RULES['classOptions.nodeVolumeSize'], sizeGiB) !== undefined) return [];
  // A model volume not known at synth counts as 0: the AL2023 root snapshot alone still bounds the size.
  const osGiB = amiFamily(amiAlias) === 'al2023' ? AL2023_ROOT_SNAPSHOT_GIB : 0;
  const c = new Checker(EKS_RULES, '', cls.name);
  c.cross('classOptions.nodeVolumeSize@modelVolumes',
    { sizeGiB, cacheGiB: isFiniteLiteral(cacheGiB) ? cacheGiB : 0, osGiB, ...mostReplicasPerNode(cls, opts, catalog) }, 'classOptions.nodeVolumeSize');
  return c.problems;
}
