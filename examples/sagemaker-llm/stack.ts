/**
 * A Llama-3-8B-class chat service on a SageMaker real-time endpoint that survives a shortage of its preferred GPU.
 *
 * Three capacity classes in preference order: L40S (ml.g6e, bf16, vLLM), A10G (ml.g5, AWQ int4, vLLM) and
 * Inferentia2 (ml.inf2, Neuron-compiled for tensor parallelism 2, DJL LMI NeuronX). Two routing groups: `preferred`
 * holds the GPU pools (g6e first, g5 when g6e is short), `fallback` runs on Inferentia2 with a warm standby (one class: a
 * plain instance type, no pools).
 *
 * Replace the image digests, model-data URIs and digests with your own (the trust constructs sign and verify them),
 * the envelopes with your load-test results, and the prices with your region's.
 *
 * Two stacks: `SageMakerLlmTrust` (the ECR repositories, the signing profile, the keys and the verifier) and
 * `SageMakerLlm` (the endpoint, gated on that trust). Deploy the trust stack, push and sign the images and model data,
 * then deploy the serving stack: its checks would find the repositories empty before (docs/artifact-trust.md, "First
 * deployment").
 */
import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { type Construct } from 'constructs';
import {
  type CapacityClassSpec,
  ArtifactTrust,
  InferenceObservability,
  LLAMA_3_8B_BF16,
  Reconciler,
  SageMakerCapacityEndpoint,
  type ServiceContract,
} from '../../lib';


export const LLAMA_CHAT_CONTRACT: ServiceContract = {
  name: 'llama3-chat',
  slo: { ttftP95Ms: 1500, itlP95Ms: 60, deadlineMs: 30000 },
  requestShape: { meanPromptTokens: 1000, meanOutputTokens: 250 },
  peakRequestsPerSecond: 20,
  headroom: 0.2,
};

/** The ECR repositories of the example's images (created by ArtifactTrust: immutable, scanned, signed on push). */
export const LLAMA_CHAT_REPOSITORIES = ['inference/vllm-sagemaker', 'inference/djl-lmi-neuronx'];

/**
 * Where the publishing step puts the model data (one folder of the account's model bucket): every class's model data is
 * under it, and the trust's verifier reads under it, so that a rollback to an earlier model (a new key per model on
 * SageMaker) is checked rather than denied (docs/artifact-trust.md, "Limits").
 */
export function llamaModelDataLocation(account: string, region: string): string {
  return `s3://models-${account}-${region}/llama3-8b/`;
}

/** The classes in preference order, for an account and region (images live in that account's ECR). */
export function llamaChatClasses(account: string, region: string): CapacityClassSpec[] {
  const ecr = `${account}.dkr.ecr.${region}.amazonaws.com`;
  const models = llamaModelDataLocation(account, region);
  const measured = { measuredOn: '2026-10-01', workload: 'llmperf, azure-conv-2023 prompt/output distribution' };
  return [
    {
      name: 'l40s',
      instanceType: 'ml.g6e.xlarge',
      artifact: {
        image: `${ecr}/inference/vllm-sagemaker@sha256:${'1'.repeat(64)}`,
        // SageMaker downloads the current object at the key at every scale-out: the key names its content (its SHA-256).
        modelData: { uri: `${models}bf16-${'2'.repeat(64)}.tar.gz`, sha256: '2'.repeat(64), versionId: 'example-version-bf16' },
      },
      footprint: LLAMA_3_8B_BF16,
      // The vLLM DLC's release: --max-num-queued-reqs (the server's own bounded queue) exists from vLLM 0.29.0.
      runtime: { engine: 'vllm', engineVersion: '0.29.0', maxConcurrentSequences: 16, maxBatchTokens: 8192, maxQueueDelayMs: 2000, args: ['--enable-prefix-caching'] },
      envelope: { tokensPerSecondPerReplica: 1200, safeConcurrency: 16, ttftP95Ms: 900, itlP95Ms: 35, ...measured },
      maxReplicas: 8,
      usdPerHour: 2.61, // placeholder: the built-in catalog has no sourced SageMaker price for ml.g6e.xlarge
    },
    {
      name: 'a10g',
      instanceType: 'ml.g5.xlarge',
      artifact: {
        image: `${ecr}/inference/vllm-sagemaker@sha256:${'1'.repeat(64)}`,
        modelData: { uri: `${models}awq-int4-${'3'.repeat(64)}.tar.gz`, sha256: '3'.repeat(64), versionId: 'example-version-awq' },
      },
      footprint: { ...LLAMA_3_8B_BF16, weightsGiB: 5.7, quantization: 'int4-awq' },
      runtime: { engine: 'vllm', engineVersion: '0.29.0', maxConcurrentSequences: 8, maxQueueDelayMs: 2000, args: ['--quantization', 'awq'] },
      envelope: { tokensPerSecondPerReplica: 400, safeConcurrency: 8, ttftP95Ms: 1200, itlP95Ms: 45, ...measured },
      maxReplicas: 24,
    },
    {
      name: 'inf2',
      instanceType: 'ml.inf2.xlarge',
      artifact: {
        image: `${ecr}/inference/djl-lmi-neuronx@sha256:${'4'.repeat(64)}`,
        modelData: { uri: `${models}neuron-tp2-seq8192-${'5'.repeat(64)}.tar.gz`, sha256: '5'.repeat(64), versionId: 'example-version-id' },
      },
      footprint: { ...LLAMA_3_8B_BF16, workspaceGiB: 3, tensorParallelDegree: 2, acceleratorTarget: 'neuron' },
      runtime: { engine: 'djl-lmi', engineVersion: '0.30.0', maxConcurrentSequences: 4, maxQueueDelayMs: 2000 },
      envelope: { tokensPerSecondPerReplica: 300, safeConcurrency: 4, ttftP95Ms: 1100, itlP95Ms: 25, ...measured },
      maxReplicas: 24,
    },
  ];
}

/** The example's signed-artifact trust: the repositories (signed on push), the signing profile, the keys and the verifier. */
export class SageMakerLlmTrustStack extends Stack {
  public readonly trust: ArtifactTrust;

  constructor(scope: Construct, id: string, props: StackProps = {}) {
    super(scope, id, { description: 'Signed-artifact trust (ECR repositories, signing profile, keys) of the llama3-chat example (cdk-capacity-aware-inference)', ...props });
    this.trust = new ArtifactTrust(this, 'Trust', {
      repositoryNames: LLAMA_CHAT_REPOSITORIES,
      modelDataLocations: [llamaModelDataLocation(this.account, this.region)],
    });
    // What the publishing step needs: pushers sign with the profile (signer:SignPayload), sign-model with the key.
    new CfnOutput(this, 'SigningProfileArn', { value: this.trust.signingProfile.signingProfileArn });
    new CfnOutput(this, 'ModelSigningKeyArn', { value: this.trust.modelSigningKey.keyArn, description: 'The --key of cdk-capacity-sign-model sign' });
  }
}

export interface SageMakerLlmStackProps extends StackProps {
  /**
   * The trust the classes are gated on, from another stack of the same app (deployed, with the images pushed and
   * signed, before this one).
   * @default - a SageMakerLlmTrustStack `<id>Trust` in the same scope and environment
   */
  readonly trust?: ArtifactTrust;
}

export class SageMakerLlmStack extends Stack {
  public readonly endpoint: SageMakerCapacityEndpoint;
  public readonly trust: ArtifactTrust;
  public readonly observability: InferenceObservability;
  public readonly reconciler: Reconciler;

  constructor(scope: Construct, id: string, props: SageMakerLlmStackProps = {}) {
    const { trust, ...stackProps } = props;
    super(scope, id, { description: 'Capacity-aware SageMaker endpoint for a Llama-3-8B-class chat service (cdk-capacity-aware-inference example)', ...stackProps });

    const key = new kms.Key(this, 'Key', { enableKeyRotation: true, description: 'Data capture of the llama3-chat endpoint' });
    const accessLogs = new s3.Bucket(this, 'AccessLogs', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      lifecycleRules: [{ expiration: Duration.days(365) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const capture = new s3.Bucket(this, 'DataCapture', {
      encryption: s3.BucketEncryption.KMS,
      encryptionKey: key,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      versioned: true,
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: 'data-capture/',
      lifecycleRules: [{ expiration: Duration.days(90), noncurrentVersionExpiration: Duration.days(7) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // Signed artifacts: images in repositories that sign on push, model digests signed with a KMS key; each class's
    // Model waits for the verifier to approve exactly its image digest and model data version. The checks are created
    // in this stack, which imports the trust's verifier, key and profile and so deploys after the trust's stack.
    this.trust = trust ?? new SageMakerLlmTrustStack(scope, `${id}Trust`, { env: props.env }).trust;
    this.endpoint = new SageMakerCapacityEndpoint(this, 'LlamaChat', {
      artifactGate: this.trust,
      contract: LLAMA_CHAT_CONTRACT,
      classes: llamaChatClasses(this.account, this.region),
      variants: [
        { name: 'preferred', classes: ['l40s', 'a10g'] },
        { name: 'fallback', classes: ['inf2'] },
      ],
      encryptionKey: key,
      dataCapture: { bucket: capture, samplingPercentage: 5 },
    });

    // Whoever calls the model: here a role that the account's own principals may assume.
    const invoker = new iam.Role(this, 'Invoker', { assumedBy: new iam.AccountRootPrincipal(), description: 'Calls the llama3-chat endpoint' });
    this.endpoint.grantInvoke(invoker);

    // cdk-nag NIST 800-53 rev 5: what this example's own resources leave to you, each with why (the library's
    // constructs acknowledge their own findings).
    Validations.of(invoker).acknowledge({ id: 'NIST.800.53.R5-IAMNoInlinePolicy', reason: 'One role, one purpose: InvokeEndpoint on this endpoint only.' });
    Validations.of(accessLogs).acknowledge(
      { id: 'NIST.800.53.R5-S3DefaultEncryptionKMS', reason: 'S3 server access logs are delivered only to buckets encrypted with SSE-S3, not SSE-KMS.' },
      { id: 'NIST.800.53.R5-S3BucketVersioningEnabled', reason: 'Access logs are written once and expire after a year; nothing overwrites them.' },
      { id: 'NIST.800.53.R5-S3BucketReplicationEnabled', reason: 'A single-region example: add replication if your recovery plan keeps logs in a second region.' },
    );
    Validations.of(capture).acknowledge({
      id: 'NIST.800.53.R5-S3BucketReplicationEnabled', reason: 'A single-region example: add replication if your recovery plan keeps data capture in a second region.',
    });

    // The control loop: one dashboard and the alarms for the service, and the reconciler that moves the variant
    // weights every minute and at once when a capacity alarm changes state.
    this.observability = new InferenceObservability(this, 'Observability', { serving: this.endpoint });
    this.reconciler = new Reconciler(this, 'Reconciler', {
      serving: this.endpoint,
      capacityAlarms: this.observability.capacityAlarms,
      // Every alarm of the service pages through one encrypted topic: subscribe your on-call to it.
      alarmTopic: this.observability.alarms.topic,
    });

    new CfnOutput(this, 'EndpointName', { value: this.endpoint.endpointName });
    new CfnOutput(this, 'PlannedUsdPerHour', {
      value: String(this.endpoint.plannedCost.steadyUsdPerHour),
      description: 'Hourly cost of the planned fleet: the preferred variant at planned peak plus the fallback standby',
    });
  }
}
