import { NODE_DATA_VOLUME } from '../../core/platform/limits';
import { amiFamily } from '../../core/validation/checker';
import {
  type DisruptionBudget,
  type EC2NodeClass,
  type NodePool,
  type NodeSelectorRequirement,
  type SelectorTerm,
  type Taint,
  type Toleration,
} from './types';

/** The taint each accelerator kind carries, so that only pods that request the accelerator land on its nodes. */
export const ACCELERATOR_TAINTS: Readonly<Record<'gpu' | 'neuron', Taint>> = {
  gpu: { key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' },
  neuron: { key: 'aws.amazon.com/neuron', value: 'true', effect: 'NoSchedule' },
};

/**
 * The taint every class NodePool carries beside its accelerator taint, under the library's own prefix (as CLASS_LABEL,
 * lib/eks/class-unit.ts), so that only the library's model servers land on its nodes (review R230). The accelerator
 * taint alone keeps out nothing that requests the accelerator: EKS enables ExtendedResourceToleration on every
 * platform version ("The following admission controllers are enabled for all `1.33` platform versions:
 * `NodeRestriction`, `ExtendedResourceToleration`, ...", https://docs.aws.amazon.com/eks/latest/userguide/platform-versions.html),
 * which gives a pod requesting `nvidia.com/gpu` a toleration of the taint of that key (kubernetes/kubernetes#55839).
 * Karpenter then picks, for another team's GPU pod without a nodeSelector, the class pool of highest weight ("If
 * Karpenter encounters a taint in the NodePool that is not tolerated by a Pod, Karpenter won't use that NodePool";
 * "If multiple NodePools are matched, Karpenter will use the NodePool with the highest weight":
 * aws/karpenter-provider-aws website/content/en/v1.14/concepts/nodepools.md:21,23, read at 98a11d41), and that pod
 * takes the class's limits (whole nodes, class-unit.ts) and keeps its nodes from ever being empty. Every DaemonSet a
 * class node needs must tolerate it, which test/eks/class-node-daemonsets.test.ts holds with its sources: the Neuron
 * device plugin is given it (lib/eks/neuron-device-plugin.ts); an NVIDIA device plugin the user installs for AL2023
 * nodes must be told (the eks-nvidia-device-plugin warning); Bottlerocket's runs on the host, not in a pod.
 */
export const SERVING_TAINT: Taint = { key: 'capacity-aware-inference/serving', value: 'true', effect: 'NoSchedule' };

/** The taints of a class's nodes: the library's own and the accelerator's. */
export function classTaints(acceleratorKind: 'gpu' | 'neuron'): Taint[] {
  return [SERVING_TAINT, ACCELERATOR_TAINTS[acceleratorKind]];
}

/** The taints of a class's nodes as warnings name them: `capacity-aware-inference/serving (NoSchedule) and ...`. */
export function describeClassTaints(acceleratorKind: 'gpu' | 'neuron'): string {
  return classTaints(acceleratorKind).map((t) => `${t.key} (${t.effect})`).join(' and ');
}

/** A toleration of `taint` whatever its value. */
export function tolerationOf(taint: Taint): Toleration {
  return { key: taint.key, operator: 'Exists', effect: taint.effect };
}

export interface NodePoolInput {
  readonly name: string;
  readonly nodeClassName: string;
  /** The class's instance types (all of one accelerator kind). */
  readonly instanceTypes: readonly string[];
  readonly capacityTypes: ReadonlyArray<'on-demand' | 'spot'>;
  readonly acceleratorKind: 'gpu' | 'neuron';
  /**
   * The Kubernetes extended resource of the accelerator and how many of it the class's nodes may have in total (their
   * whole capacity: Karpenter charges limits per node, not per pod request).
   */
  readonly acceleratorResource: string;
  readonly acceleratorLimit: number;
  readonly cpuLimit: number;
  /** Higher weights are tried first by Karpenter when several pools fit a pod (ours never overlap). */
  readonly weight: number;
  readonly labels: Readonly<Record<string, string>>;
  readonly zones?: readonly string[];
  /** How long an empty node waits before Karpenter removes it, e.g. `10m`. */
  readonly consolidateAfter: string;
  /** Node lifetime before Karpenter replaces it, e.g. `720h` or `Never`. */
  readonly expireAfter: string;
  /** Longest a draining node waits for its pods, e.g. `15m`. */
  readonly terminationGracePeriod: string;
}

/**
 * A NodePool for one capacity class. Consolidation is `WhenEmpty`: Karpenter never evicts a warm model server to pack
 * nodes tighter (a cold start costs minutes of weight download); it removes only nodes whose servers KEDA scaled away.
 * Drift replacement goes one node at a time.
 */
export function nodePool(input: NodePoolInput): NodePool {
  const requirements: NodeSelectorRequirement[] = [
    { key: 'node.kubernetes.io/instance-type', operator: 'In', values: [...input.instanceTypes] },
    { key: 'karpenter.sh/capacity-type', operator: 'In', values: [...input.capacityTypes] },
    { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
  ];
  if (input.zones && input.zones.length > 0) requirements.push({ key: 'topology.kubernetes.io/zone', operator: 'In', values: [...input.zones] });
  const budgets: DisruptionBudget[] = [
    { nodes: '0', reasons: ['Underutilized'] },
    { nodes: '10%', reasons: ['Empty'] },
    { nodes: '1', reasons: ['Drifted'] },
  ];
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: input.name, labels: input.labels },
    spec: {
      weight: input.weight,
      limits: { cpu: String(input.cpuLimit), [input.acceleratorResource]: String(input.acceleratorLimit) },
      disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: input.consolidateAfter, budgets },
      template: {
        metadata: { labels: input.labels },
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: input.nodeClassName },
          requirements,
          taints: classTaints(input.acceleratorKind),
          expireAfter: input.expireAfter,
          terminationGracePeriod: input.terminationGracePeriod,
        },
      },
    },
  };
}

export interface EC2NodeClassInput {
  readonly name: string;
  /** Name of the IAM role of the nodes (Karpenter creates the instance profile). */
  readonly roleName: string;
  /** Karpenter AMI alias, e.g. `bottlerocket@v1.47.0` or `al2023@v20260801`. */
  readonly amiAlias: string;
  /** The terms that select the node subnets (ORed). */
  readonly subnetSelectorTerms: readonly SelectorTerm[];
  /** Tags that select the node security groups. */
  readonly securityGroupTags: Readonly<Record<string, string>>;
  /** Root/data volume size in GiB: large enough for the image and the model weights. */
  readonly volumeSizeGiB: number;
  readonly labels: Readonly<Record<string, string>>;
  readonly tags: Readonly<Record<string, string>>;
}

/** An EC2NodeClass: IMDSv2 only with a hop limit of 1 (pods cannot reach node credentials), encrypted gp3 volumes. */
export function ec2NodeClass(input: EC2NodeClassInput): EC2NodeClass {
  // Bottlerocket keeps the OS on /dev/xvda and images and data on /dev/xvdb; AL2023 has one root volume. Mappings of
  // our own replace Karpenter's defaults whole (Bottlerocket's: a 4Gi /dev/xvda beside /dev/xvdb,
  // aws/karpenter-provider-aws@v1.14.1 pkg/providers/amifamily/bottlerocket.go DefaultBlockDeviceMappings), so the OS
  // volume is mapped here too, or it would keep the AMI's own mapping, encrypted only where the account encrypts by
  // default (R91).
  const bottlerocket = amiFamily(input.amiAlias) === 'bottlerocket';
  const deviceName = bottlerocket ? '/dev/xvdb' : '/dev/xvda';
  const osVolume = { deviceName: '/dev/xvda', ebs: { volumeSize: '4Gi', volumeType: 'gp3', encrypted: true, deleteOnTermination: true } } as const;
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: input.name, labels: input.labels },
    spec: {
      role: input.roleName,
      amiSelectorTerms: [{ alias: input.amiAlias }],
      subnetSelectorTerms: input.subnetSelectorTerms,
      securityGroupSelectorTerms: [{ tags: input.securityGroupTags }],
      metadataOptions: { httpEndpoint: 'enabled', httpProtocolIPv6: 'disabled', httpPutResponseHopLimit: 1, httpTokens: 'required' },
      blockDeviceMappings: [
        ...(bottlerocket ? [osVolume] : []),
        {
          deviceName,
          ebs: {
            volumeSize: `${input.volumeSizeGiB}Gi`, volumeType: 'gp3', encrypted: true, deleteOnTermination: true,
            throughput: NODE_DATA_VOLUME.throughputMiBps, iops: NODE_DATA_VOLUME.iops,
          },
        },
      ],
      tags: input.tags,
    },
  };
}
