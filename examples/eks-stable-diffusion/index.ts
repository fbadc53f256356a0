import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
/**
 * Two inference services on one EKS cluster (an EksInferenceCluster installs Karpenter, KEDA, the Load Balancer
 * Controller, the observability add-on and the approved-images admission once; each service attaches to it).
 *
 * The first is the reference experiment (Biran & Kissos, arXiv 2503.20074; aws-samples/scalable-hw-agnostic-inference) as capacity
 * classes: Stable Diffusion 2.1 on five deployment units (g5 CUDA, g5 Triton, g6 Triton, inf2, trn1) on EKS.
 *
 * Stable Diffusion generates images, not tokens. Each image counts as one "token" (requestShape.meanOutputTokens = 1),
 * so tokens/s per replica = images/s per replica. The paper measured each unit's breaking point as requests per
 * 60 s CloudWatch period at 900 ms latency; the envelope is that figure / 60 s, and its safe concurrency follows from
 * Little's law at 900 ms (rate x 0.9 s, rounded up).
 *
 * Two stacks: `EksStableDiffusionTrust` (the ECR repositories, the signing profile, the keys and the verifier) and
 * `EksStableDiffusion` (the VPC, the cluster and both services, gated on that trust). Deploy the trust stack, push the
 * images (signed on push), then deploy the serving stack: its checks would find the repositories empty before, and
 * its failure would come only after the VPC and the cluster had started creating (docs/artifact-trust.md, "First
 * deployment"). In the example app (examples/app.ts), `SageMakerLlmTrust` holds the registry's one signing
 * configuration and signs this trust's repositories with this trust's profile: deploy it too before pushing (README,
 * "Deploy an example"). `-c adminPrincipalArn=<IAM role or user ARN>` gives that principal kubectl access to the cluster
 * (docs/eks-inference-cluster.md, "kubectl access").
 */
import { CfnOutput, Duration, Stack, type StackProps, Token } from 'aws-cdk-lib';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import { type Construct } from 'constructs';
import { type CapacityClassSpec, type ModelFootprint, type ServiceContract } from '../../lib/core';
import { InferenceObservability, Reconciler } from '../../lib/control';
import { EksInferenceCluster, EksInferenceService } from '../../lib/eks';
import { type ApprovedImagesAdmission, ArtifactTrust } from '../../lib/trust';
import { CHAT_CONTRACT, CHAT_REPOSITORIES, chatClasses } from './chat';
import { exampleVpc } from './network';

/**
 * Breaking points (requests per 60 s period at 900 ms) and on-demand prices (USD/hour) from the paper. The paper's
 * Neuron and CUDA units are its own diffusers servers (`custom` engines: they read the CAI_* variables); the Triton
 * units run NVIDIA Triton with the model repository baked into the image.
 */
export const SD21_UNITS = [
  { name: 'inf2', instanceType: 'inf2.xlarge', target: 'neuron', engine: 'custom', server: 'neuronx', breakingPoint: 105, usdPerHour: 0.7582, maxReplicas: 8 },
  { name: 'trn1', instanceType: 'trn1.2xlarge', target: 'neuron', engine: 'custom', server: 'neuronx', breakingPoint: 130, usdPerHour: 1.3438, maxReplicas: 4 },
  { name: 'a10g-triton', instanceType: 'g5.xlarge', target: 'cuda', engine: 'triton', server: 'triton', breakingPoint: 90, usdPerHour: 1.006, maxReplicas: 8 },
  { name: 'l4-triton', instanceType: 'g6.xlarge', target: 'cuda', engine: 'triton', server: 'triton', breakingPoint: 61, usdPerHour: 0.8048, maxReplicas: 8 },
  { name: 'a10g-cuda', instanceType: 'g5.xlarge', target: 'cuda', engine: 'custom', server: 'diffusers-cuda', breakingPoint: 60, usdPerHour: 1.006, maxReplicas: 8 },
] as const;

/** The ECR repositories of the example's images (created by ArtifactTrust: immutable, scanned, signed on push). */
export const SD21_REPOSITORIES = [...new Set(SD21_UNITS.map((u) => `sd21/${u.server}`))];

const PERIOD_SECONDS = 60;
const LATENCY_MS = 900;

export const SD21_CONTRACT: ServiceContract = {
  name: 'sd21',
  // For an image model, time to first "token" is the whole generation: the paper's 900 ms latency bound.
  slo: { ttftP95Ms: LATENCY_MS, deadlineMs: 10_000 },
  requestShape: { meanPromptTokens: 77, meanOutputTokens: 1 },
  peakRequestsPerSecond: 6,
  headroom: 0.2,
};

/** Replace with the digests of your own images (these are well-formed placeholders). */
function image(account: string, region: string, server: string, seed: string): string {
  return `${account}.dkr.ecr.${region}.amazonaws.com/sd21/${server}@sha256:${seed.repeat(64).slice(0, 64)}`;
}

function footprint(target: 'cuda' | 'neuron'): ModelFootprint {
  return {
    weightsGiB: 2.6, // fp16 UNet + VAE + text encoder
    workspaceGiB: 5,
    kvCacheBytesPerToken: 0, // no KV cache: one denoising batch per request
    maxSequenceTokens: 77,
    // Neuron units span both NeuronCores of the chip; a GPU unit is one GPU.
    tensorParallelDegree: target === 'neuron' ? 2 : 1,
    quantization: 'fp16',
    revision: 'stabilityai/stable-diffusion-2-1@5cae40e',
    acceleratorTarget: target,
  };
}

/** The classes in preference order, for an account and region (images live in that account's ECR). */
export function sd21Classes(account: string, region: string): CapacityClassSpec[] {
  return SD21_UNITS.map((u, i) => {
    const imagesPerSecond = u.breakingPoint / PERIOD_SECONDS;
    return {
      name: u.name,
      instanceType: u.instanceType,
      artifact: { image: image(account, region, u.server, 'abcdef'[i]) },
      footprint: footprint(u.target),
      runtime: {
        engine: u.engine,
        maxConcurrentSequences: 2,
        maxQueueDelayMs: 2000,
        // Neither a custom server nor Triton (max_queue_size lives in config.pbtxt) takes a queue bound from the
        // library: the servers must enforce CAI_MAX_CONCURRENT_REQUESTS themselves. Accepted here; a synth warning says so.
        queueBound: 'best-effort',
        ...(u.engine === 'triton' ? { modelPath: '/opt/tritonserver/model_repository' } : {}),
      },
      envelope: {
        tokensPerSecondPerReplica: Number(imagesPerSecond.toFixed(4)),
        safeConcurrency: Math.ceil(imagesPerSecond * (LATENCY_MS / 1000)),
        ttftP95Ms: LATENCY_MS,
        measuredOn: '2025-03-26',
        workload: `arXiv 2503.20074 breaking point: ${u.breakingPoint} requests per ${PERIOD_SECONDS} s period at ${LATENCY_MS} ms`,
      },
      maxReplicas: u.maxReplicas,
      usdPerHour: u.usdPerHour,
    };
  });
}

/** Every repository of the example's images: the Stable Diffusion servers' and the chat engines'. */
export const EXAMPLE_REPOSITORIES = [...SD21_REPOSITORIES, ...CHAT_REPOSITORIES];

export interface EksStableDiffusionTrustStackProps extends StackProps {
  /**
   * Whether the trust creates the registry's ECR signing configuration (`ArtifactTrustProps.manageRegistrySigningConfiguration`):
   * false where another ArtifactTrust of the app manages it in the same account and Region and signs this one's
   * repositories (`signRepositoriesOf()`), as in the example app (examples/app.ts).
   * @default true
   */
  readonly manageRegistrySigningConfiguration?: boolean;
}

/** The example's signed-artifact trust: the repositories (signed on push), the signing profile, the keys and the verifier. */
export class EksStableDiffusionTrustStack extends Stack {
  public readonly trust: ArtifactTrust;

  constructor(scope: Construct, id: string, props: EksStableDiffusionTrustStackProps = {}) {
    const { manageRegistrySigningConfiguration, ...stackProps } = props;
    super(scope, id, stackProps);
    this.trust = new ArtifactTrust(this, 'Trust', { repositoryNames: EXAMPLE_REPOSITORIES, manageRegistrySigningConfiguration });
    // Pushers sign with the profile (ECR managed signing calls signer:SignPayload with the pusher's identity).
    new CfnOutput(this, 'SigningProfileArn', { value: this.trust.signingProfile.signingProfileArn });
  }
}

export interface EksStableDiffusionStackProps extends StackProps {
  /**
   * The trust the classes are gated on, from another stack of the same app (deployed, with the images pushed, before
   * this one).
   * @default - an EksStableDiffusionTrustStack `<id>Trust` in the same scope and environment
   */
  readonly trust?: ArtifactTrust;
}

export class EksStableDiffusionStack extends Stack {
  public readonly cluster: EksInferenceCluster;
  /** Stable Diffusion 2.1 on five deployment units. */
  public readonly service: EksInferenceService;
  /** A chat model on two GPU types and two engines, on the same cluster. */
  public readonly chat: EksInferenceService;
  public readonly trust: ArtifactTrust;
  /** The approved-images policy of the Stable Diffusion namespace (the cluster creates one per service namespace). */
  public readonly admission: ApprovedImagesAdmission;
  public readonly observability: InferenceObservability;
  public readonly reconciler: Reconciler;
  public readonly chatObservability: InferenceObservability;
  public readonly chatReconciler: Reconciler;

  constructor(scope: Construct, id: string, props: EksStableDiffusionStackProps = {}) {
    const { trust, ...stackProps } = props;
    super(scope, id, stackProps);
    // Explicit zones keep the synth offline: seeding the context the availability-zone lookup would fill means no AWS
    // call at synth. Zones a, b and c by default; pass `-c availabilityZones=<zone>,<zone>,<zone>` where the region
    // names them otherwise (ap-northeast-1 has a, c and d; ca-central-1 a, b and d; us-west-1 two), and choose zones
    // that offer the accelerator types and that EKS accepts (docs/eks-inference-cluster.md, "Zones and egress").
    const zones = exampleZones(this.region, this.node.tryGetContext('availabilityZones'));
    if (!Token.isUnresolved(this.account) && !Token.isUnresolved(this.region)) {
      this.node.setContext(`availability-zones:account=${this.account}:region=${this.region}`, zones);
    }
    const vpc = exampleVpc(this, zones);
    const probes = { healthPath: '/health', readyPath: '/readiness', warmup: { path: '/warmup', maxLatency: Duration.seconds(2) } };
    // Signed artifacts: the images live in repositories that sign on push; every class's Deployment waits for the
    // verifier to approve exactly its image digest. The checks are created in this stack, which imports the trust's
    // verifier, key and profile and so deploys after the trust's stack.
    this.trust = trust ?? new EksStableDiffusionTrustStack(scope, `${id}Trust`, { env: props.env }).trust;
    // The cluster and what every service on it needs, once. Only the approved digests run in each service namespace
    // (a ValidatingAdmissionPolicy per namespace, Deny), in force before any serving pod is created.
    // `-c existingLogGroups=true`: a redeploy after a delete, or an upgrade from a build that let the add-on create three
    // of its five log groups itself, attaches to them by name (docs/eks-inference-cluster.md, "Log groups and redeploys").
    const existingLogGroups = contextFlag('existingLogGroups', this.node.tryGetContext('existingLogGroups'));
    this.cluster = new EksInferenceCluster(this, 'Cluster', {
      vpc,
      kubectlLayer: new KubectlV34Layer(this, 'KubectlLayer'),
      approvedImagesAdmission: true,
      ...(existingLogGroups ? { observability: { existingLogGroups: true } } : {}),
    });
    const admin = adminPrincipalArn(this.node.tryGetContext('adminPrincipalArn'));
    if (admin !== undefined) {
      // kubectl access for a human (`verify`'s pods check, `game-day`): the endpoint is private, so kubectl must also
      // reach it from the VPC or a connected network (docs/eks-inference-cluster.md, "kubectl access"). Cluster admin
      // because `game-day` patches NodePools and deletes NodeClaims, which are cluster-scoped: a namespace-scoped policy
      // (AmazonEKSAdminPolicy, like Kubernetes' `admin` role) cannot reach them
      // (https://docs.aws.amazon.com/eks/latest/userguide/access-policy-permissions.html).
      // The example's cluster is always a new eks.Cluster (EksInferenceCluster creates it: no `cluster` prop above).
      (this.cluster.cluster as eks.Cluster).grantAccess('AdminAccess', admin, [
        eks.AccessPolicy.fromAccessPolicyName('AmazonEKSClusterAdminPolicy', { accessScopeType: eks.AccessScopeType.CLUSTER }),
      ]);
    }
    this.service = new EksInferenceService(this, 'Sd21', {
      contract: SD21_CONTRACT,
      classes: sd21Classes(this.account, this.region),
      cluster: this.cluster,
      artifactGate: this.trust,
      // The probes of the custom servers; the Triton classes keep Triton's own (/v2/health/live, /v2/health/ready).
      classOptions: Object.fromEntries(SD21_UNITS.filter((u) => u.engine === 'custom').map((u) => [u.name, probes])),
      loadBalancer: { internetFacing: false },
    });
    // The chat model shares the image service's ALB: a rule on its listener sends the OpenAI-compatible API paths
    // (/v1/..., which vLLM and TGI serve) to the chat classes, and everything else keeps going to the image classes.
    // Each reconciler re-weights only its own forward action (the listener's default action; the chat rule).
    this.chat = new EksInferenceService(this, 'Chat', {
      contract: CHAT_CONTRACT,
      classes: chatClasses(this.account, this.region),
      cluster: this.cluster,
      artifactGate: this.trust,
      listenerRule: { listener: this.service.listener, priority: 10, pathPatterns: ['/v1/*'] },
    });
    this.admission = this.service.admission!;

    // The control loop of each service: one dashboard and the alarms, and the reconciler that moves the listener's
    // target-group weights every minute and at once when a capacity alarm changes state. Its signals come from the
    // producers: ALB metrics, Container Insights replicas_desired (the amazon-cloudwatch-observability add-on the
    // cluster installs), a Karpenter capacity-error metric filter per NodePool and the engines' scrape.
    this.observability = new InferenceObservability(this, 'Observability', { serving: this.service });
    this.reconciler = new Reconciler(this, 'Reconciler', {
      serving: this.service,
      capacityAlarms: this.observability.capacityAlarms,
      // Every alarm of the service pages through one encrypted topic: subscribe your on-call to it.
      alarmTopic: this.observability.alarms.topic,
    });
    // `aws eks update-kubeconfig --name <ClusterName>` (docs/eks-inference-cluster.md, "kubectl access").
    new CfnOutput(this, 'ClusterName', { value: this.cluster.clusterName });
    this.chatObservability = new InferenceObservability(this, 'ChatObservability', { serving: this.chat });
    this.chatReconciler = new Reconciler(this, 'ChatReconciler', {
      serving: this.chat,
      capacityAlarms: this.chatObservability.capacityAlarms,
    });
  }
}

/**
 * The `adminPrincipalArn` context: the ARN of an IAM role or user, which is what an EKS access entry takes
 * (CreateAccessEntry `principalArn`: "The ARN of the IAM principal for the AccessEntry",
 * https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateAccessEntry.html). `aws sts get-caller-identity` prints
 * an assumed-role session (`arn:aws:sts::...:assumed-role/<role>/<session>`), which is not one: the role's ARN is.
 */
function adminPrincipalArn(fromContext: unknown): string | undefined {
  if (fromContext === undefined) return undefined;
  const arn = String(fromContext).trim();
  if (!/^arn:aws[a-z-]*:iam::\d{12}:(role|user)\/[\w+=,.@/-]+$/.test(arn)) {
    const session = /^arn:(aws[a-z-]*):sts::(\d{12}):assumed-role\/([\w+=,.@-]+)\//.exec(arn);
    const hint = session ? ` (the role of this session is arn:${session[1]}:iam::${session[2]}:role/${session[3]}, plus its path if it has one)` : '';
    throw new Error(`EksStableDiffusion: context adminPrincipalArn is '${String(fromContext)}'; allowed: the ARN of an IAM role or user, ` +
      `arn:<partition>:iam::<account>:role/<name> or arn:<partition>:iam::<account>:user/<name>, not an assumed-role session${hint}`);
  }
  return arn;
}

/** A true/false context flag (`-c <name>=true`); absent: false. */
function contextFlag(name: string, fromContext: unknown): boolean {
  if (fromContext === undefined || fromContext === false || fromContext === 'false') return false;
  if (fromContext === true || fromContext === 'true') return true;
  throw new Error(`EksStableDiffusion: context ${name} is '${String(fromContext)}'; allowed: true or false`);
}

/** The example's zones: `availabilityZones` from the context (comma-separated), else a, b and c of the region. */
function exampleZones(region: string, fromContext: unknown): string[] {
  if (fromContext === undefined) return ['a', 'b', 'c'].map((z) => `${region}${z}`);
  const zones = [...new Set(String(fromContext).split(',').map((z) => z.trim()).filter((z) => z.length > 0))];
  const foreign = Token.isUnresolved(region) ? [] : zones.filter((z) => !new RegExp(`^${region}[a-z]$`).test(z));
  if (zones.length < 2 || foreign.length > 0) {
    throw new Error(`EksStableDiffusion: context availabilityZones is '${String(fromContext)}'; allowed: two or more zones of ${region}, comma-separated`);
  }
  return zones;
}
