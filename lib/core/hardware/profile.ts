/** The kind of accelerator an instance carries. */
export type AcceleratorKind = 'gpu' | 'neuron';

/** What an artifact was compiled for: CUDA runs on NVIDIA GPUs, Neuron on Inferentia and Trainium. */
export type AcceleratorTarget = 'cuda' | 'neuron';

/** Where an instance type is offered: EC2 (EKS nodes) or SageMaker (`ml.` types). */
export type Platform = 'ec2' | 'sagemaker';

/** Facts about one instance type, as plain data (the shape of the built-in catalog). */
export interface HardwareProfileData {
  /** e.g. `g6e.xlarge` or `ml.g6e.xlarge`. */
  readonly instanceType: string;
  readonly platform: Platform;
  readonly acceleratorKind: AcceleratorKind;
  /** e.g. `NVIDIA L40S`, `AWS Inferentia2`. */
  readonly acceleratorName: string;
  /** `nvidia` or `aws`. */
  readonly acceleratorManufacturer: string;
  /** Accelerator devices per instance (GPUs, or Neuron chips). */
  readonly acceleratorCount: number;
  /** Memory of one accelerator device in GiB (EC2 API MiB / 1024). */
  readonly acceleratorMemoryGiB: number;
  /**
   * Tensor-parallel units per device: 1 for GPUs, 2 NeuronCores per Inferentia2 or Trainium chip.
   * A tensor-parallel degree is counted in these units.
   */
  readonly coresPerAccelerator: number;
  readonly vcpu: number;
  /** Host memory in GiB. */
  readonly memoryGiB: number;
  /** On-demand price in USD per hour, where a source is known. */
  readonly onDemandUsdPerHour?: number;
  readonly priceAsOf?: string;
  readonly priceRegion?: string;
  /** Well-known Karpenter labels of the type (EC2 only). */
  readonly karpenterLabels?: Readonly<Record<string, string>>;
  /**
   * Whether the type has local NVMe instance storage (EC2 DescribeInstanceTypes `InstanceStorageSupported`). A SageMaker
   * endpoint configuration takes no customer KMS key for the volumes of such a type (CreateEndpointConfig fails).
   * @default - read from the family's name: the `d` attribute (c6gd, g4dn, p4de) or an accelerated family known to
   * carry NVMe without it (g5, g6, g6e, p5, trn1, ...: lib/sagemaker/instance-storage.ts); state it for a family that
   * is neither, such as a new GPU family.
   */
  readonly localInstanceStorage?: boolean;
  /** Where these facts come from. */
  readonly source?: string;
}

/** A hardware profile with derived facts. */
export interface HardwareProfile extends HardwareProfileData {
  /** The artifact target this hardware runs. */
  readonly acceleratorTarget: AcceleratorTarget;
  /** Tensor-parallel units on the instance (devices x cores per device). */
  readonly tensorParallelUnits: number;
  /** Memory of one tensor-parallel unit in GiB. */
  readonly memoryPerUnitGiB: number;
  /** The Kubernetes extended resource a pod requests for this accelerator. */
  readonly kubernetesResourceName: 'nvidia.com/gpu' | 'aws.amazon.com/neuroncore';
}

/** Derives the computed facts of a profile. */
export function toHardwareProfile(data: HardwareProfileData): HardwareProfile {
  const neuron = data.acceleratorKind === 'neuron';
  return {
    ...data,
    acceleratorTarget: neuron ? 'neuron' : 'cuda',
    tensorParallelUnits: data.acceleratorCount * data.coresPerAccelerator,
    memoryPerUnitGiB: data.acceleratorMemoryGiB / data.coresPerAccelerator,
    // Neuron pods request NeuronCores so that a tensor-parallel degree maps 1:1 onto the request.
    kubernetesResourceName: neuron ? 'aws.amazon.com/neuroncore' : 'nvidia.com/gpu',
  };
}
