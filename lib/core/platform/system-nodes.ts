/**
 * What runs on the system node group of a cluster this library creates, and whether a node group holds it. The
 * controllers, the add-on's agents and the model-server scraper all stay off Karpenter's nodes, so the system node
 * group must hold every one of them, with room for a rolling update: a scraper that stays Pending silently drops the
 * token counters the control loop reads. Pure data and arithmetic; lib/eks renders the same requests
 * (KARPENTER_CONTROLLER, SCRAPER_RESOURCES) and picks the node group's default size from here.
 */

/** A container's requests as Kubernetes quantities (`250m`, `1`, `128Mi`, `1Gi`). */
export interface Requests {
  readonly cpu: string;
  readonly memory: string;
}

export interface SystemPod {
  readonly name: string;
  /** `daemonset`: one pod on every system node; `deployment`: `replicas` pods somewhere on the group. */
  readonly kind: 'daemonset' | 'deployment';
  /** @default 1 */
  readonly replicas?: number;
  /** The pod's requests (all its containers together). */
  readonly requests: Requests;
  /** A required pod anti-affinity on the hostname: at most one replica per node. */
  readonly onePerNode?: boolean;
  /** Where the figures come from. */
  readonly source: string;
}

/**
 * Karpenter's controller as lib/eks/karpenter.ts installs it: two replicas of 1 CPU and 1 GiB (the requests the chart's
 * values.yaml suggests in a comment and leaves unset: aws/karpenter-provider-aws v1.14.1 charts/karpenter/values.yaml:145-155),
 * one per node (its default required pod anti-affinity on `kubernetes.io/hostname`, values.yaml:100-102).
 */
export const KARPENTER_CONTROLLER = {
  replicas: 2,
  resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } },
} as const;

/**
 * The model-server scraper's resources: the add-on's agent defaults (aws-observability/helm-charts
 * amazon-cloudwatch-observability-6.4.0 charts/amazon-cloudwatch-observability/values.yaml:751-757), written out so
 * that a later chart default cannot change what the budget below counts.
 */
export const SCRAPER_RESOURCES = {
  requests: { cpu: '250m', memory: '128Mi' },
  limits: { cpu: '500m', memory: '512Mi' },
} as const;

const OBSERVABILITY_VALUES = 'aws-observability/helm-charts amazon-cloudwatch-observability-6.4.0 charts/amazon-cloudwatch-observability/values.yaml';

/**
 * Every pod of a new cluster that runs on the system nodes, at the pinned versions (lib/eks/versions.ts and
 * OBSERVABILITY_ADDON_VERSION). Not here: the add-on's dcgm-exporter and neuron-monitor and the Neuron device plugin
 * (required node affinity on accelerator instance types), kube-state-metrics, node-exporter and the OTLP cluster
 * scraper (only with otelContainerInsights, which the library leaves off), the Windows DaemonSets.
 */
export const SYSTEM_NODE_PODS: readonly SystemPod[] = [
  { name: 'cloudwatch-agent', kind: 'daemonset', requests: { cpu: '250m', memory: '128Mi' }, source: `${OBSERVABILITY_VALUES}:751-754 (agent.resources)` },
  { name: 'fluent-bit', kind: 'daemonset', requests: { cpu: '50m', memory: '25Mi' }, source: `${OBSERVABILITY_VALUES}:47-49` },
  {
    name: 'aws-node',
    kind: 'daemonset',
    requests: { cpu: '25m', memory: '0' },
    source: 'aws/eks-charts@5239609 stable/aws-vpc-cni values.yaml:190-192 (chart 1.22.4; the network policy agent requests nothing, :57)',
  },
  {
    name: 'kube-proxy',
    kind: 'daemonset',
    requests: { cpu: '100m', memory: '0' },
    source: 'not read at a pinned source (EKS installs it; no chart or manifest of it at a tag was found): counted at 100m, '
      + 'which only makes the budget stricter',
  },
  {
    name: 'eks-pod-identity-agent',
    kind: 'daemonset',
    requests: { cpu: '0', memory: '0' },
    source: 'aws/eks-pod-identity-agent@d4dc0f3 charts/eks-pod-identity-agent/values.yaml:165 (resources: {})',
  },
  {
    name: 'karpenter',
    kind: 'deployment',
    replicas: KARPENTER_CONTROLLER.replicas,
    onePerNode: true,
    requests: KARPENTER_CONTROLLER.resources.requests,
    source: 'lib/eks/karpenter.ts values (KARPENTER_CONTROLLER)',
  },
  {
    name: 'coredns',
    kind: 'deployment',
    replicas: 2,
    requests: { cpu: '100m', memory: '70Mi' },
    source: 'two replicas (docs.aws.amazon.com/eks/latest/userguide/coredns-autoscaling.html); the requests of an EKS CoreDNS '
      + 'Deployment as eksctl-io/eksctl pkg/addons/default/assets/coredns.yaml has it (the add-on build EKS installs was not read)',
  },
  { name: 'keda-operator', kind: 'deployment', requests: { cpu: '100m', memory: '100Mi' }, source: 'kedacore/charts v2.20.2 keda/values.yaml:95,548-554' },
  { name: 'keda-operator-metrics-apiserver', kind: 'deployment', requests: { cpu: '100m', memory: '100Mi' }, source: 'kedacore/charts v2.20.2 keda/values.yaml:166,556-562' },
  { name: 'keda-admission-webhooks', kind: 'deployment', requests: { cpu: '100m', memory: '100Mi' }, source: 'kedacore/charts v2.20.2 keda/values.yaml:239,564-570' },
  {
    name: 'aws-load-balancer-controller',
    kind: 'deployment',
    replicas: 2,
    requests: { cpu: '0', memory: '0' },
    source: 'aws/eks-charts@5239609 stable/aws-load-balancer-controller values.yaml:5,62 (chart 3.5.0, resources: {})',
  },
  { name: 'amazon-cloudwatch-observability-controller-manager', kind: 'deployment', requests: { cpu: '100m', memory: '64Mi' }, source: `${OBSERVABILITY_VALUES}:5,630-633` },
  { name: 'cai-model-server-scraper', kind: 'deployment', requests: SCRAPER_RESOURCES.requests, source: 'lib/eks/observability-addon.ts (SCRAPER_RESOURCES)' },
];

/** An instance type as the kubelet of an EKS-optimized AL2023 node sees it. */
export interface NodeShape {
  readonly instanceType: string;
  readonly vcpu: number;
  readonly memoryMiB: number;
  /** nodeadm's max pods: ENIs x (IPv4 addresses per ENI - 1) + 2. */
  readonly maxPods: number;
}

/**
 * The default system node type. Max pods from awslabs/amazon-eks-ami v20260724 nodeadm/internal/kubelet/instance-info.jsonl
 * (`m7i.large`: 3 ENIs, 10 IPv4 addresses each) and eni_max_pods.go:75-77.
 */
export const M7I_LARGE: NodeShape = { instanceType: 'm7i.large', vcpu: 2, memoryMiB: 8192, maxPods: 3 * (10 - 1) + 2 };

/** The default number of system nodes: the fewest m7i.large that hold SYSTEM_NODE_PODS (see systemNodeProblems). */
export const DEFAULT_SYSTEM_NODE_COUNT = 3;

/**
 * Share of the instance's memory the kubelet reports as capacity. The kernel keeps some, and no source here gives the
 * figure per type, so a low 90 % is assumed (fail safe); memory is far from the binding resource anyway.
 */
const MEMORY_CAPACITY_SHARE = 0.9;

export interface Resources {
  readonly cpuMillis: number;
  readonly memoryMiB: number;
  readonly pods: number;
}

/**
 * What the kubelet of an EKS AL2023 node offers pods (awslabs/amazon-eks-ami v20260724 nodeadm/internal/kubelet/config.go):
 * kube-reserved CPU of 6 % of the first core, 1 % of the second, 0.5 % of the third and fourth and 0.25 % above
 * (:410-440), kube-reserved memory of 11 MiB per max pod plus 255 MiB (:442-444), a 100Mi memory eviction threshold (:110-111).
 */
export function allocatable(node: NodeShape): Resources {
  const total = node.vcpu * 1000;
  const bands: ReadonlyArray<readonly [number, number, number]> = [[0, 1000, 600], [1000, 2000, 100], [2000, 4000, 50], [4000, total, 25]];
  const reservedCpu = bands.reduce((sum, [from, to, basisPoints]) =>
    (total <= from ? sum : sum + Math.floor(((Math.min(total, to) - from) * basisPoints) / 10000)), 0);
  const reservedMemory = 11 * node.maxPods + 255 + 100;
  return { cpuMillis: total - reservedCpu, memoryMiB: Math.floor(node.memoryMiB * MEMORY_CAPACITY_SHARE) - reservedMemory, pods: node.maxPods };
}

/** Millicores of a CPU quantity (`250m`, `1`, `0.5`). */
export function cpuMillis(quantity: string): number {
  return quantity.endsWith('m') ? Number(quantity.slice(0, -1)) : Number(quantity) * 1000;
}

/** MiB of a memory quantity (`128Mi`, `1Gi`, `0`). */
export function memoryMiB(quantity: string): number {
  if (quantity.endsWith('Gi')) return Number(quantity.slice(0, -2)) * 1024;
  if (quantity.endsWith('Mi')) return Number(quantity.slice(0, -2));
  if (quantity === '0') return 0;
  throw new Error(`memory quantity '${quantity}' is not in Mi or Gi`);
}

const RESOURCES = ['cpuMillis', 'memoryMiB', 'pods'] as const;

function size(pod: SystemPod): Resources {
  return { cpuMillis: cpuMillis(pod.requests.cpu), memoryMiB: memoryMiB(pod.requests.memory), pods: 1 };
}

/**
 * Why `count` nodes of `node` cannot hold `pods`, or nothing. The DaemonSets take their share of every node, and the
 * one-per-node replicas (Karpenter: a higher priority than the pods that could be in its way) one node each. Every
 * other replica, plus one more of the largest (a rolling update surges one pod: the Deployments' default `maxSurge`
 * of 25 % rounds up to 1), must then fit whatever the order and whichever node the scheduler picks: a pod finds no
 * node only when each node has less than its size left, so it is sure to fit when the others take less than the sum,
 * over the nodes, of what is left beyond its size. Checked for CPU, memory and pod slots each.
 */
export function systemNodeProblems(node: NodeShape, count: number, pods: readonly SystemPod[] = SYSTEM_NODE_PODS): string[] {
  const problems: string[] = [];
  const free = Array.from({ length: count }, () => ({ ...allocatable(node) }));
  const take = (n: { cpuMillis: number; memoryMiB: number; pods: number }, s: Resources) => {
    for (const r of RESOURCES) n[r] -= s[r];
  };
  for (const pod of pods.filter((p) => p.kind === 'daemonset')) for (const n of free) take(n, size(pod));
  for (const pod of pods.filter((p) => p.onePerNode)) {
    const replicas = pod.replicas ?? 1;
    if (replicas > count) problems.push(`${pod.name}: ${replicas} replicas, at most one per node, on ${count} node(s)`);
    for (const n of free.slice(0, replicas)) take(n, size(pod));
  }
  for (const r of RESOURCES) {
    const short = free.findIndex((n) => n[r] < 0);
    if (short >= 0) problems.push(`${r}: the DaemonSets and one-per-node replicas overcommit a ${node.instanceType} node by ${-free[short][r]}`);
  }
  const rest = pods.filter((p) => p.kind === 'deployment' && !p.onePerNode).flatMap((p) => Array.from({ length: p.replicas ?? 1 }, () => p));
  if (rest.length === 0) return problems;
  for (const r of RESOURCES) {
    const largest = rest.reduce((a, b) => (size(b)[r] > size(a)[r] ? b : a));
    const placed = [...rest, largest];
    const total = placed.reduce((sum, p) => sum + size(p)[r], 0);
    for (const pod of new Set(placed)) {
      const s = size(pod)[r];
      const others = total - s;
      const room = free.reduce((sum, n) => sum + Math.max(0, n[r] - s + 1), 0);
      if (others >= room) {
        problems.push(`${pod.name}: may find no ${node.instanceType} node with ${s} ${r} left (the other pods take ${others}, `
          + `${room} is left beyond its size on ${count} node(s))`);
      }
    }
  }
  return problems;
}
