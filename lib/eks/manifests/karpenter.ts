import { NODE_DATA_VOLUME } from '../../core/platform/limits';
import { amiFamily } from '../../core/validation/checker';
import { type DisruptionBudget, type EC2NodeClass, type NodePool, type NodeSelectorRequirement, type SelectorTerm, type Taint } from './types';

/** The taint each accelerator kind carries, so that only pods that request the accelerator land on its nodes. */
export const ACCELERATOR_TAINTS: Readonly<Record<'gpu' | 'neuron', Taint>> = {
  gpu: { key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' },
  neuron: { key: 'aws.amazon.com/neuron', value: 'true', effect: 'NoSchedule' },
};

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
          taints: [ACCELERATOR_TAINTS[input.acceleratorKind]],
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
