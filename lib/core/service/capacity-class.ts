import { type AcceleratorTarget, type HardwareProfile } from '../hardware/profile';

/** Model data pinned by content and object version. */
export interface ModelDataArtifact {
  /** `s3://bucket/key` of the model archive or prefix. */
  readonly uri: string;
  /** SHA-256 of the object's content, 64 lower-case hex characters. */
  readonly sha256: string;
  /**
   * S3 object version (the bucket must be versioned).
   * @default - not pinned to a version; the digest still is
   */
  readonly versionId?: string;
}

/** What a class runs: its image by digest, its model data by digest, and who signed them. */
export interface ClassArtifact {
  /**
   * Container image by digest: `<registry>/<repository>@sha256:<64 hex>`. Mutable tags are rejected. A CDK token may
   * stand for the registry or repository (`repository.repositoryUriForDigest('sha256:<64 hex>')`), never end it.
   */
  readonly image: string;
  /**
   * Model data. Omit when the weights are baked into the image (whose digest then pins them).
   * @default - weights in the image
   */
  readonly modelData?: ModelDataArtifact;
  /**
   * Name of the AWS Signer profile that must have signed the image.
   * @default - the service's trust configuration decides
   */
  readonly signingProfileName?: string;
}

/** Facts of the model artifact that decide whether it fits a piece of hardware. */
export interface ModelFootprint {
  /** Size of the weights in accelerator memory, GiB (after quantization). */
  readonly weightsGiB: number;
  /** Runtime workspace (activations, CUDA graphs, compiler buffers), GiB. */
  readonly workspaceGiB: number;
  /** KV-cache bytes per token (2 x layers x KV heads x head dim x bytes per value). 0 for models without a KV cache. */
  readonly kvCacheBytesPerToken: number;
  /** Longest sequence (prompt + output) the runtime admits, in tokens. */
  readonly maxSequenceTokens: number;
  /** Tensor-parallel degree the artifact was built for, in tensor-parallel units (GPUs, or NeuronCores). */
  readonly tensorParallelDegree: number;
  /** e.g. `bf16`, `fp8`, `int4-awq`. */
  readonly quantization: string;
  /** Model revision (e.g. the upstream commit), for audit. */
  readonly revision: string;
  /** What the artifact was compiled for. */
  readonly acceleratorTarget: AcceleratorTarget;
}

/**
 * The model servers the library binds (see lib/core/runtime/engines.ts for the flags of each and their version
 * ranges). `custom` is an image the library cannot configure: it gets the engine-neutral `CAI_*` variables only, so
 * nothing checks that it honours the batch, memory and admission settings.
 */
export type RuntimeEngine = 'vllm' | 'tgi' | 'djl-lmi' | 'triton' | 'custom';

/**
 * What happens when the declared engine (version) has no bounded queue the library can set: `required` fails the
 * synth, `best-effort` accepts a server that queues past the deadline and warns at synth.
 */
export type QueueBoundPolicy = 'required' | 'best-effort';

/** How the model server runs on this class. Batch settings belong to the class: a smaller GPU needs smaller batches. */
export interface RuntimeSettings {
  /**
   * The model server of the image. Any other value is a synth error (the library would not know its flags).
   * `(string & {})` keeps values from configuration files assignable; they are checked at synth.
   */
  readonly engine: RuntimeEngine | (string & Record<never, never>);
  /**
   * Release of the engine in the image (e.g. `0.29.0`). Required for vLLM, whose bounded queue depends on it;
   * checked against the oldest release whose flag names the library renders for the other engines.
   * @default - not stated (an error for vLLM)
   */
  readonly engineVersion?: string;
  /**
   * Whether the server must bound its own queue at the class's admission limit.
   * @default 'required'
   */
  readonly queueBound?: QueueBoundPolicy;
  /**
   * Where the model is inside the image, when the weights are baked into it (no `artifact.modelData`).
   * @default - the model data's path (SageMaker /opt/ml/model; on EKS where the init container unpacks it)
   */
  readonly modelPath?: string;
  /** Sequences decoded together (vLLM `max_num_seqs`): sizes the KV cache. */
  readonly maxConcurrentSequences: number;
  /**
   * Tokens per batch step: vLLM `max_num_batched_tokens`, TGI `MAX_BATCH_PREFILL_TOKENS`, DJL LMI (GPU, 0.35.0 or
   * later) `OPTION_MAX_ROLLING_BATCH_PREFILL_TOKENS`, a custom image `CAI_MAX_BATCH_TOKENS`. A synth error where the
   * server would not read it (DJL before 0.35.0 or on NeuronX, Triton).
   * @default - the engine's default
   */
  readonly maxBatchTokens?: number;
  /** Longest a request may wait in the server's queue before it is rejected, in milliseconds. */
  readonly maxQueueDelayMs: number;
  /**
   * Extra engine arguments: appended to the server's on EKS; on SageMaker `SM_VLLM_<FLAG>` variables (vLLM),
   * `SAGEMAKER_TRITON_ADDITIONAL_ARGS` (Triton 2.36.0 or later) or `CAI_ENGINE_ARGS` (custom). A synth error where the
   * image takes none: DJL LMI (set `OPTION_*` / `SERVING_*` in `env`) and TGI on SageMaker (each launcher option is
   * also a variable).
   * @default - none
   */
  readonly args?: readonly string[];
  /**
   * Extra container environment.
   * @default - none
   */
  readonly env?: Readonly<Record<string, string>>;
}

/** Performance of one replica of this class, measured by a load test at the SLO: never guessed. */
export interface PerformanceEnvelope {
  /** Sustainable generated tokens per second of one replica while meeting the SLO. */
  readonly tokensPerSecondPerReplica: number;
  /** In-flight requests one replica holds while meeting the SLO: a whole number, at least 1 (docs/capacity-classes.md, "Measuring the envelope"). */
  readonly safeConcurrency: number;
  /** p95 time to first token at that point, in milliseconds. */
  readonly ttftP95Ms: number;
  /**
   * p95 inter-token latency at that point, in milliseconds. Required when the contract's SLO bounds it (`slo.itlP95Ms`).
   * @default - not measured (models that do not stream tokens)
   */
  readonly itlP95Ms?: number;
  /**
   * p95 time, in seconds, from a replica being asked for to it taking traffic: the metric contract's `ReplicaReadyTime`
   * (Service, CapacityClass; p95), which a deployment's model servers report, plus any wait for an instance or node
   * before the replica is scheduled (it counts from there). Read it from a deployment and declare it: the Reconciler's
   * provisioning grace follows it by default (`defaultProvisioningGraceSeconds`), and so does the simulator's.
   * @default - not measured: the provisioning grace stays at 300 s
   */
  readonly replicaReadyTimeP95Seconds?: number;
  /** When it was measured, `YYYY-MM-DD`. */
  readonly measuredOn: string;
  /** What workload it was measured with (tool, prompt/output distribution, trace). */
  readonly workload: string;
}

/** Where a class may serve. */
export interface PlacementPolicy {
  /**
   * Whether requests or data marked sensitive may go to this class (e.g. false for a fallback in another
   * account or zone).
   * @default true
   */
  readonly allowSensitive?: boolean;
  /**
   * Availability zones the class may run in.
   * @default - any zone of the region
   */
  readonly zones?: readonly string[];
}

/** How much accelerator memory the model server may use. */
export interface MemoryPolicy {
  /** Fraction of accelerator memory the server may claim (vLLM `gpu_memory_utilization`). @default 0.9 */
  readonly utilizationCap?: number;
  /** Safety margin on top of weights, workspace and KV cache, GiB. @default 1 */
  readonly marginGiB?: number;
}

/** A capacity class as declared by the user. */
export interface CapacityClassSpec {
  /** Unique within the service; an RFC 1123 label (it names Kubernetes objects and SageMaker resources). */
  readonly name: string;
  /** The instance type it runs on (`g6e.xlarge` on EKS, `ml.g6e.xlarge` on SageMaker). */
  readonly instanceType: string;
  readonly artifact: ClassArtifact;
  readonly footprint: ModelFootprint;
  readonly runtime: RuntimeSettings;
  /** Measured performance. Required: a class without an envelope cannot take routed traffic. */
  readonly envelope: PerformanceEnvelope;
  /** Most replicas this class may run (the account's quota for the type, converted to replicas). */
  readonly maxReplicas: number;
  /**
   * Price in USD per instance-hour.
   * @default - the hardware catalog's on-demand price; a type without a known price is an error
   */
  readonly usdPerHour?: number;
  /** @default - sensitive requests allowed, any zone */
  readonly placement?: PlacementPolicy;
  /** @default - utilization cap 0.9, margin 1 GiB */
  readonly memory?: MemoryPolicy;
}

/** A checked class with its hardware and derived facts. */
export interface CapacityClass extends CapacityClassSpec {
  /** 0 for the most preferred class of the service. */
  readonly preferenceRank: number;
  readonly hardware: HardwareProfile;
  /** Price per instance-hour actually used for planning. */
  readonly usdPerHour: number;
  /** Model server replicas one instance holds (tensor-parallel units / degree on EC2; 1 on SageMaker). */
  readonly replicasPerInstance: number;
  readonly usdPerReplicaHour: number;
  readonly placement: Required<Pick<PlacementPolicy, 'allowSensitive'>> & PlacementPolicy;
  readonly memory: Required<MemoryPolicy>;
}

export const DEFAULT_MEMORY_POLICY: Required<MemoryPolicy> = { utilizationCap: 0.9, marginGiB: 1 };
