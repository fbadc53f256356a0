import { Annotations, Duration, Names, RemovalPolicy, Stack, Tags, Token } from 'aws-cdk-lib';
import type * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import {
  type AlbRoutingFacts,
  AwsMetrics,
  type CapacityClass,
  classDimensions,
  type CapacityClassSpec,
  type CapacityPlan,
  type ClassPlan,
  checkCapacityClasses,
  type ClassProblem,
  HardwareCatalog,
  Metrics,
  planCapacity,
  type RuntimeBinding,
  routedClassFacts,
  type ServiceContract,
  rejectionStatusClass,
} from '../core';
import { type IInferenceServing, type ServingDescription } from '../core/reconciler/serving';
import { capacityPlanProblems } from '../core/service/checks';
import { initialWeights } from '../core/service/initial-weights';
import { throwIfInvalid } from '../core/validation/error';
import { type IClassArtifactGate } from '../trust/gate';
import { classObjectName, eksProblems } from './checks';
import { type EksClassOptions } from './class-options';
import { type ScalingOptions } from './scaling-options';
import { Karpenter } from './karpenter';
import { Keda } from './keda';
import { LoadBalancerController } from './load-balancer-controller';
import { EksObservability, type ObservabilityOptions, observabilityProblems } from './observability-addon';
import * as m from './manifests';
import { acknowledgeManagedPolicies, acknowledgeRule, acknowledgeWildcardResources } from '../util/nag';
import { PodIdentityRole } from './pod-identity';
import { eksRuntime, fetcherImageProblems, modelDataProblems, modelFetchOf } from './runtime';
import { type ChartSpec, KARPENTER_CHART, KEDA_CHART, LOAD_BALANCER_CONTROLLER_CHART } from './versions';

/** Chart versions to use instead of the pinned ones (exact semantic versions). */
export interface ChartVersions {
  /** @default KARPENTER_CHART.version */
  readonly karpenter?: string;
  /** @default KEDA_CHART.version */
  readonly keda?: string;
  /** @default LOAD_BALANCER_CONTROLLER_CHART.version */
  readonly loadBalancerController?: string;
}

/** The cluster this construct creates when none is given. */
export interface NewClusterOptions {
  /** @default eks.KubernetesVersion.V1_33 */
  readonly version?: eks.KubernetesVersion;
  /**
   * API server endpoint. Private by default: the kubectl handler runs in the VPC's private subnets.
   * @default eks.EndpointAccess.PRIVATE
   */
  readonly endpointAccess?: eks.EndpointAccess;
  /** Nodes for the controllers (Karpenter cannot run on nodes it manages). @default m7i.large */
  readonly systemNodeInstanceType?: ec2.InstanceType;
  /** @default 2 */
  readonly systemNodeCount?: number;
  /** Key that encrypts Kubernetes secrets. @default - a new key with rotation */
  readonly secretsEncryptionKey?: kms.IKey;
}

/** The ALB in front of the classes. */
export interface LoadBalancerOptions {
  /** @default false (internal) */
  readonly internetFacing?: boolean;
  /** Serve HTTPS on 443 with this certificate. @default - HTTP on port 80 */
  readonly certificate?: acm.ICertificate;
  /** Client CIDRs the ALB accepts. @default - the VPC CIDR when internal, anywhere when internet-facing */
  readonly allowedCidrs?: readonly string[];
  /**
   * How long a deregistering pod keeps receiving in-flight traffic. Also each pod's preStop drain.
   * @default Duration.seconds(30)
   */
  readonly deregistrationDelay?: Duration;
  /** Bucket for ALB access logs. @default - a new encrypted bucket that enforces TLS */
  readonly accessLogBucket?: s3.IBucket;
}

export interface EksInferenceServiceProps {
  /** The service's SLO, request shape and peak demand. */
  readonly contract: ServiceContract;
  /** Capacity classes in preference order (EC2 instance types). */
  readonly classes: readonly CapacityClassSpec[];
  /** @default HardwareCatalog.builtIn() */
  readonly catalog?: HardwareCatalog;
  /** Per-class EKS settings, by class name. @default - derived from each class and the plan */
  readonly classOptions?: Readonly<Record<string, EksClassOptions>>;
  /**
   * An existing cluster (`eks.Cluster.fromClusterAttributes` with vpc, clusterSecurityGroupId and a kubectl provider).
   * It must run the EKS Pod Identity agent.
   * @default - a new cluster
   */
  readonly cluster?: eks.ICluster;
  /**
   * Literal cluster name (IAM conditions and Karpenter discovery tags need it at synth).
   * @default - the imported cluster's name, or a name generated from the construct path
   */
  readonly clusterName?: string;
  /** Settings of the new cluster (ignored with `cluster`). @default - see NewClusterOptions */
  readonly clusterOptions?: NewClusterOptions;
  /** VPC of a new cluster. @default - a new VPC with 3 AZs, NAT and flow logs */
  readonly vpc?: ec2.IVpc;
  /**
   * The kubectl/helm Lambda layer of a new cluster, matching its Kubernetes version, e.g.
   * `new KubectlV34Layer(this, 'Kubectl')` from `@aws-cdk/lambda-layer-kubectl-v34` (as aws-eks-v2's own
   * `kubectlProviderOptions.kubectlLayer`). Required without `cluster`; ignored with it. Not bundled, so that a
   * SageMaker-only user does not install the 36 MB layer.
   */
  readonly kubectlLayer?: lambda.ILayerVersion;
  /** Namespace of the serving objects. @default - contract.name */
  readonly namespace?: string;
  /** @default - internal ALB, HTTP, 30 s deregistration delay */
  readonly loadBalancer?: LoadBalancerOptions;
  /** @default - see ScalingOptions */
  readonly scaling?: ScalingOptions;
  /**
   * Karpenter AMI alias of the GPU and Neuron nodes. Pin a version in production (`bottlerocket@v1.x.y`).
   * Bottlerocket's NVIDIA variants ship the NVIDIA device plugin.
   * @default 'bottlerocket@latest'
   */
  readonly amiAlias?: string;
  /** @default - the pinned versions in versions.ts */
  readonly chartVersions?: ChartVersions;
  /** Verifies each class's artifacts before its Deployment is applied. @default - no gate */
  readonly artifactGate?: IClassArtifactGate;
  /**
   * The producers of the control loop's signals: the amazon-cloudwatch-observability add-on (or one you already run),
   * its log groups, a Karpenter capacity-error metric filter per NodePool and the model-server scrape.
   * @default - install the add-on with the defaults of ObservabilityOptions
   */
  readonly observability?: ObservabilityOptions;
  /**
   * Image of the init container that fetches a class's model data (one S3 object version) into the pod and checks
   * its SHA-256 before the server starts. Needs `/bin/sh`, the AWS CLI v2, `sha256sum` and `tar`; give it by digest.
   * The AWS CLI image `public.ecr.aws/aws-cli/aws-cli@sha256:<digest>` (Amazon Linux 2 based) fits; mirror it into
   * your own ECR repository (e.g. with an ECR pull-through cache rule for `public.ecr.aws`) and pin the digest.
   * @default - none: a synth error when a class has `artifact.modelData`
   */
  readonly modelDataFetcherImage?: string;
}

/** Everything synthesized for one class. */
export interface EksClassUnit {
  readonly cls: CapacityClass;
  readonly plan: ClassPlan;
  readonly nodePoolName: string;
  readonly deploymentName: string;
  readonly targetGroup: elbv2.ApplicationTargetGroup;
  /** The typed Kubernetes objects of the class, as applied. */
  readonly objects: {
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
  };
  readonly manifests: {
    readonly capacity: eks.KubernetesManifest;
    readonly workload: eks.KubernetesManifest;
    readonly scaler: eks.KubernetesManifest;
    readonly binding: eks.KubernetesManifest;
  };
}

const DEFAULT_PORT = 8080;
const SERVICE_PORT = 80;
const MANAGED_BY = 'cdk-capacity-aware-inference';
export const CLASS_LABEL = 'capacity-aware-inference/class';
const SERVING_SERVICE_ACCOUNT = 'model-server';

/**
 * A heterogeneous inference service on EKS: one serving unit per capacity class (Karpenter NodePool + EC2NodeClass,
 * Deployment, Service, PDB, priority class, KEDA ScaledObject and TargetGroupBinding), behind one ALB listener whose
 * weighted target groups (one per class) a reconciler re-weights. Invalid input fails at synth with every problem.
 */
export class EksInferenceService extends Construct implements IInferenceServing {
  public readonly cluster: eks.ICluster;
  public readonly clusterName: string;
  public readonly vpc: ec2.IVpc;
  public readonly plan: CapacityPlan;
  public readonly classes: readonly CapacityClass[];
  public readonly namespace: string;
  public readonly karpenter: Karpenter;
  public readonly keda: Keda;
  public readonly loadBalancerController: LoadBalancerController;
  public readonly loadBalancer: elbv2.ApplicationLoadBalancer;
  public readonly listener: elbv2.ApplicationListener;
  /** Namespace, service account and TriggerAuthentication. */
  public readonly namespaceManifest: eks.KubernetesManifest;
  public readonly triggerAuthenticationManifest: eks.KubernetesManifest;
  /** The typed objects shared by the classes (namespace, service account, TriggerAuthentication), as applied. */
  public readonly sharedObjects: readonly m.KubernetesObject[];
  /** Per class with model data: the role its pods assume (pod identity) to read exactly that model data version. */
  public readonly servingRoles: Readonly<Record<string, iam.Role>>;
  public readonly units: readonly EksClassUnit[];
  private floorPatches?: readonly eks.KubernetesPatch[];
  /** Initial listener weights by class name, summing to 100: the policy's cost plan at planned demand (lib/core/service/initial-weights.ts). */
  public readonly initialWeights: Readonly<Record<string, number>>;
  /** The producers of the control loop's EKS signals (add-on, log groups, metric filters, scrape). */
  public readonly observability: EksObservability;
  private readonly contract: ServiceContract;
  private readonly catalog: HardwareCatalog;
  /** Seconds an admitted request may still need: the service deadline. */
  private readonly deadlineSeconds: number;

  constructor(scope: Construct, id: string, props: EksInferenceServiceProps) {
    super(scope, id);
    const catalog = props.catalog ?? HardwareCatalog.builtIn();
    this.catalog = catalog;
    this.contract = props.contract;
    this.deadlineSeconds = Math.ceil(props.contract.slo.deadlineMs / 1000);
    const service = props.contract.name;
    this.namespace = props.namespace ?? service;
    const classOptions = props.classOptions ?? {};
    this.clusterName =
      props.clusterName ?? props.cluster?.clusterName ?? Names.uniqueResourceName(this, { maxLength: 100, separator: '-', allowedSpecialCharacters: '-' });

    // ---- Validation: every problem, once ------------------------------------------------------------------------
    const region = Stack.of(this).region;
    const checked = checkCapacityClasses(props.classes, { catalog, contract: props.contract, platform: 'ec2', ...(Token.isUnresolved(region) ? {} : { region }) });
    const problems: ClassProblem[] = [
      ...checked.problems,
      ...eksProblems({
        service,
        namespace: this.namespace,
        specs: props.classes,
        classes: checked.classes,
        catalog,
        classOptions,
        clusterName: this.clusterName,
        newCluster: props.cluster === undefined,
        chartVersions: { ...props.chartVersions },
        scaling: props.scaling,
        loadBalancer: props.loadBalancer,
        systemNodeCount: props.clusterOptions?.systemNodeCount,
        amiAlias: props.amiAlias,
      }),
      ...fetcherImageProblems(props.modelDataFetcherImage),
      ...checked.classes.flatMap((cls) => [
        ...eksRuntime(cls, props.contract, classOptions[cls.name]?.port ?? DEFAULT_PORT).problems,
        ...modelDataProblems(cls, props.modelDataFetcherImage),
      ]),
      ...observabilityProblems(props.observability ?? {}),
      ...(props.cluster || props.kubectlLayer ? [] : [{
        field: 'kubectlLayer',
        message: "is required for a new cluster (no 'cluster' given): pass new KubectlV34Layer(this, 'Kubectl') from @aws-cdk/lambda-layer-kubectl-v34, matching clusterOptions.version",
      }]),
    ];
    throwIfInvalid('EksInferenceService', this.node.path, problems);
    this.classes = checked.classes;
    this.plan = planCapacity(props.contract, this.classes);
    throwIfInvalid('EksInferenceService', this.node.path, capacityPlanProblems(props.contract, this.classes, this.plan));
    const runtimes = new Map(this.classes.map((cls) => [cls.name, eksRuntime(cls, props.contract, classOptions[cls.name]?.port ?? DEFAULT_PORT)]));
    for (const [name, runtime] of runtimes) {
      // One id per class, so that acknowledging one class's accepted risk does not hide another's.
      for (const warning of runtime.warnings) Annotations.of(this).addWarningV2(`cdk-capacity-aware-inference:unbounded-queue-${name}`, warning);
    }
    const charts = {
      karpenter: withVersion(KARPENTER_CHART, props.chartVersions?.karpenter),
      keda: withVersion(KEDA_CHART, props.chartVersions?.keda),
      loadBalancerController: withVersion(LOAD_BALANCER_CONTROLLER_CHART, props.chartVersions?.loadBalancerController),
    };

    // ---- Cluster ----------------------------------------------------------------------------------------------
    if (props.cluster) {
      this.cluster = props.cluster;
      this.vpc = props.cluster.vpc;
    } else {
      this.vpc = props.vpc ?? newVpc(this);
      this.cluster = newCluster(this, this.clusterName, this.vpc, props.clusterOptions ?? {}, props.kubectlLayer!);
    }
    tagNodeSubnets(this, this.vpc, this.clusterName);

    // ---- Routing: ALB, one target group per class -------------------------------------------------------------
    const lbOpts = props.loadBalancer ?? {};
    const deregistrationDelay = lbOpts.deregistrationDelay ?? Duration.seconds(30);
    this.loadBalancer = new elbv2.ApplicationLoadBalancer(this, 'LoadBalancer', {
      vpc: this.vpc,
      internetFacing: lbOpts.internetFacing ?? false,
      vpcSubnets: { subnetType: lbOpts.internetFacing ? ec2.SubnetType.PUBLIC : ec2.SubnetType.PRIVATE_WITH_EGRESS },
      dropInvalidHeaderFields: true,
    });
    this.loadBalancer.logAccessLogs(lbOpts.accessLogBucket ?? newAccessLogBucket(this));
    acknowledgeRule(
      this.loadBalancer,
      'AwsSolutions-EC23',
      lbOpts.internetFacing
        ? 'An internet-facing inference endpoint is the user\'s explicit choice (loadBalancer.internetFacing); loadBalancer.allowedCidrs narrows it.'
        : 'Internal ALB: ingress is limited to the VPC CIDR (a token at synth, which cdk-nag cannot verify) or to loadBalancer.allowedCidrs.',
    );
    const routes = this.classes.map((cls, i) => ({ name: cls.name, classes: [cls], readyReplicas: this.plan.classes[i].steadyReplicas }));
    const weights = initialWeights(routes, this.plan.plannedTokensPerSecond);
    this.initialWeights = weights;
    const targetGroups = this.classes.map((cls) => {
      const o = classOptions[cls.name] ?? {};
      return new elbv2.ApplicationTargetGroup(this, `TargetGroup-${cls.name}`, {
        vpc: this.vpc,
        targetType: elbv2.TargetType.IP,
        protocol: elbv2.ApplicationProtocol.HTTP,
        port: o.port ?? DEFAULT_PORT,
        deregistrationDelay,
        loadBalancingAlgorithmType: elbv2.TargetGroupLoadBalancingAlgorithmType.LEAST_OUTSTANDING_REQUESTS,
        healthCheck: {
          path: o.readyPath ?? runtimes.get(cls.name)!.readyPath,
          healthyHttpCodes: '200',
          interval: Duration.seconds(10),
          timeout: Duration.seconds(5),
          healthyThresholdCount: 2,
          unhealthyThresholdCount: 2,
        },
      });
    });
    this.listener = this.loadBalancer.addListener('Listener', {
      ...(lbOpts.certificate
        ? { protocol: elbv2.ApplicationProtocol.HTTPS, port: 443, certificates: [lbOpts.certificate], sslPolicy: elbv2.SslPolicy.RECOMMENDED_TLS }
        : { protocol: elbv2.ApplicationProtocol.HTTP, port: 80 }),
      open: false,
      defaultAction: elbv2.ListenerAction.weightedForward(
        this.classes.map((cls, i) => ({ targetGroup: targetGroups[i], weight: weights[cls.name] })),
      ),
    });
    const clientCidrs = lbOpts.allowedCidrs ?? (lbOpts.internetFacing ? ['0.0.0.0/0'] : [this.vpc.vpcCidrBlock]);
    for (const cidr of clientCidrs) {
      this.loadBalancer.connections.allowFrom(ec2.Peer.ipv4(cidr), ec2.Port.tcp(lbOpts.certificate ? 443 : 80), 'Clients of the inference service');
    }
    if (lbOpts.internetFacing && !lbOpts.certificate) {
      Annotations.of(this).addWarningV2(
        'cdk-capacity-aware-inference:eks-plain-http',
        'The internet-facing ALB serves plain HTTP; set loadBalancer.certificate to serve HTTPS.',
      );
    }
    // The app opens ALB -> pod ports itself, so the load balancer controller needs no security-group permissions.
    for (const port of new Set(this.classes.map((cls) => classOptions[cls.name]?.port ?? DEFAULT_PORT))) {
      this.loadBalancer.connections.allowTo(this.cluster.clusterSecurityGroup, ec2.Port.tcp(port), 'ALB to model servers');
    }

    // ---- Controllers ------------------------------------------------------------------------------------------
    this.karpenter = new Karpenter(this, 'Karpenter', { cluster: this.cluster, clusterName: this.clusterName, chart: charts.karpenter });
    this.keda = new Keda(this, 'Keda', { cluster: this.cluster, chart: charts.keda });
    this.loadBalancerController = new LoadBalancerController(this, 'LoadBalancerController', {
      cluster: this.cluster,
      clusterName: this.clusterName,
      vpcId: this.vpc.vpcId,
      targetGroupArns: targetGroups.map((tg) => tg.targetGroupArn),
      chart: charts.loadBalancerController,
    });

    // ---- Namespace, identity, KEDA authentication -----------------------------------------------------------
    const commonLabels = { 'app.kubernetes.io/part-of': service, 'app.kubernetes.io/managed-by': MANAGED_BY };
    const ns = m.namespace(this.namespace, { ...commonLabels, 'elbv2.k8s.aws/pod-readiness-gate-inject': 'enabled' });
    const sa = m.serviceAccount(SERVING_SERVICE_ACCOUNT, this.namespace, commonLabels);
    this.namespaceManifest = this.apply('Namespace', [ns, sa]);
    this.servingRoles = Object.fromEntries(
      this.classes.flatMap((cls) => {
        const role = modelDataRole(this, this.cluster, this.namespace, cls);
        return role ? [[cls.name, role]] : [];
      }),
    );
    const triggerAuth = m.triggerAuthentication(`${service}-cloudwatch`, this.namespace, commonLabels);
    this.triggerAuthenticationManifest = this.apply('TriggerAuthentication', [triggerAuth], this.namespaceManifest, this.keda.chart);
    this.sharedObjects = [ns, sa, triggerAuth];

    // ---- One serving unit per class ---------------------------------------------------------------------------
    const scaling = props.scaling ?? {};
    const period = scaling.metricPeriod ?? Duration.minutes(1);
    this.units = this.classes.map((cls, rank) =>
      this.addClassUnit({
        cls,
        rank,
        plan: this.plan.classes[rank],
        opts: classOptions[cls.name] ?? {},
        targetGroup: targetGroups[rank],
        labels: commonLabels,
        triggerAuthName: triggerAuth.metadata.name,
        amiAlias: props.amiAlias ?? 'bottlerocket@latest',
        deregistrationDelay,
        period,
        scaling,
        gate: props.artifactGate,
        runtime: runtimes.get(cls.name)!,
        fetcherImage: props.modelDataFetcherImage,
      }),
    );

    // ---- Signal producers of the control loop ---------------------------------------------------------------
    this.observability = new EksObservability(this, 'Observability', {
      ...props.observability,
      cluster: this.cluster,
      clusterName: this.clusterName,
      classes: this.units.map((u) => ({
        service,
        className: u.cls.name,
        namespace: this.namespace,
        engine: u.cls.runtime.engine,
        port: classOptions[u.cls.name]?.port ?? DEFAULT_PORT,
        classLabel: CLASS_LABEL,
        nodePoolName: u.nodePoolName,
      })),
    });
  }

  /**
   * Called by a Reconciler on this service: adds to each class's ScaledObject a second trigger on the `ReplicaFloor`
   * the reconciler publishes, so the HPA runs at least the policy's floor (it takes the highest of its metrics).
   * Applied as a merge patch after the ScaledObject (triggers are replaced as a whole: the load trigger and the floor);
   * the patch repeats the load trigger, so a change to it re-applies the patch. Without a Reconciler nothing reads a
   * metric nothing publishes. Idempotent. Returns the patches, one per class.
   */
  public enableReplicaFloors(): readonly eks.KubernetesPatch[] {
    if (this.floorPatches) return this.floorPatches;
    this.floorPatches = this.units.map((u) => {
      const so = u.objects.scaledObject;
      const floor = m.replicaFloorTrigger({
        namespace: Metrics.replicaFloor.namespace,
        metricName: Metrics.replicaFloor.name,
        dimensions: classDimensions(this.contract.name, u.cls.name),
        region: Stack.of(this).region,
      }, so.spec.triggers[0].authenticationRef.name);
      const patch = new eks.KubernetesPatch(this, `FloorTrigger-${u.cls.name}`, {
        cluster: this.cluster,
        resourceName: `scaledobject.keda.sh/${so.metadata.name}`,
        resourceNamespace: this.namespace,
        applyPatch: { spec: { triggers: [...so.spec.triggers, floor] } },
        restorePatch: { spec: { triggers: so.spec.triggers } },
        patchType: eks.PatchType.MERGE,
      });
      patch.node.addDependency(u.manifests.scaler);
      return patch;
    });
    return this.floorPatches;
  }

  /** Contract, routing facts and signal producers, for the Reconciler and InferenceObservability. */
  public servingDescription(): ServingDescription {
    const scraped = this.observability.scrapedMetrics;
    return {
      service: this.contract.name,
      tokensPerRequest: this.contract.requestShape.meanOutputTokens,
      routing: this.routingFacts(),
      signals: {
        containerInsightsClusterName: this.clusterName,
        classes: Object.fromEntries(this.units.map((u) => {
          const specs = scraped[u.cls.name] ?? [];
          const own = (spec: (typeof specs)[number], stat: string) => ({
            namespace: spec.namespace, metricName: spec.name, dimensions: classDimensions(this.contract.name, u.cls.name), stat,
          });
          const tokens = specs.find((s) => s === Metrics.generatedTokens);
          const waiting = specs.find((s) => s === Metrics.requestsWaiting);
          const rejectionStatus = rejectionStatusClass(u.cls.runtime.engine);
          return [u.cls.name, {
            capacityErrors: this.observability.capacityErrorMetrics[u.cls.name],
            ...(tokens ? { generatedTokens: own(tokens, 'Sum') } : {}),
            ...(waiting ? { requestsWaiting: own(waiting, 'Average') } : {}),
            ...(rejectionStatus ? { rejectionStatus } : {}),
          }];
        })),
      },
    };
  }

  /** The facts the reconciler needs to re-weight the listener, and the dashboards to find each class's metrics. */
  public routingFacts(): AlbRoutingFacts {
    return {
      kind: 'alb',
      listenerArn: this.listener.listenerArn,
      loadBalancerFullName: this.loadBalancer.loadBalancerFullName,
      targets: this.units.map((u) => ({
        class: routedClassFacts(u.cls, u.plan.maxReplicas),
        targetGroupArn: u.targetGroup.targetGroupArn,
        targetGroupFullName: u.targetGroup.targetGroupFullName,
        namespace: this.namespace,
        deploymentName: u.deploymentName,
        nodePoolName: u.nodePoolName,
      })),
    };
  }

  /** Healthy (model-ready) targets of a class. */
  public metricHealthyHosts(className: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.albMetric(className, AwsMetrics.alb.healthyHostCount, 'Minimum', props);
  }

  /** Requests per target (replica) of a class. */
  public metricRequestCountPerTarget(className: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.albMetric(className, AwsMetrics.alb.requestCountPerTarget, 'Sum', props);
  }

  /** Target response time of a class (p95 by default). */
  public metricTargetResponseTime(className: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.albMetric(className, AwsMetrics.alb.targetResponseTime, 'p95', props);
  }

  /** 5XX responses returned by a class's model servers. */
  public metricTarget5xx(className: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.albMetric(className, AwsMetrics.alb.target5xx, 'Sum', props);
  }

  private albMetric(className: string, metricName: string, statistic: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    const unit = this.unit(className);
    return new cloudwatch.Metric({
      namespace: AwsMetrics.alb.namespace,
      metricName,
      statistic,
      period: Duration.minutes(1),
      ...props,
      dimensionsMap: {
        LoadBalancer: this.loadBalancer.loadBalancerFullName,
        TargetGroup: unit.targetGroup.targetGroupFullName,
        ...props?.dimensionsMap,
      },
    });
  }

  private unit(className: string): EksClassUnit {
    const unit = this.units.find((u) => u.cls.name === className);
    if (!unit) throw new Error(`EksInferenceService '${this.node.path}' has no class '${className}'; classes: ${this.units.map((u) => u.cls.name).join(', ')}`);
    return unit;
  }

  private apply(id: string, objects: readonly m.KubernetesObject[], ...dependencies: Construct[]): eks.KubernetesManifest {
    const manifest = new eks.KubernetesManifest(this, id, {
      cluster: this.cluster,
      manifest: objects.map((o) => o as unknown as Record<string, unknown>),
    });
    if (dependencies.length > 0) manifest.node.addDependency(...dependencies);
    return manifest;
  }

  private addClassUnit(u: {
    cls: CapacityClass;
    rank: number;
    plan: ClassPlan;
    opts: EksClassOptions;
    targetGroup: elbv2.ApplicationTargetGroup;
    labels: Record<string, string>;
    triggerAuthName: string;
    amiAlias: string;
    deregistrationDelay: Duration;
    period: Duration;
    scaling: ScalingOptions;
    gate?: IClassArtifactGate;
    runtime: RuntimeBinding;
    fetcherImage?: string;
  }): EksClassUnit {
    const { cls, opts, plan } = u;
    const hw = cls.hardware;
    const service = this.plan.service;
    const name = classObjectName(service, cls.name);
    const nodePoolName = opts.nodePoolName ?? name;
    const selector = { 'app.kubernetes.io/name': 'model-server', 'app.kubernetes.io/instance': name };
    const labels = { ...u.labels, ...selector, [CLASS_LABEL]: cls.name };
    const nodeLabels = { ...u.labels, [CLASS_LABEL]: cls.name };
    const port = opts.port ?? DEFAULT_PORT;
    const instanceTypes = [cls.instanceType, ...(opts.additionalInstanceTypes ?? [])];
    const tp = cls.footprint.tensorParallelDegree;
    const minReplicas = opts.minReplicas ?? plan.minReplicas;
    const maxReplicas = Math.max(minReplicas, opts.maxReplicas ?? plan.maxReplicas);
    const maxInstances = Math.ceil(cls.maxReplicas / cls.replicasPerInstance);
    const cacheGiB = opts.modelCacheSize?.toGibibytes() ?? Math.max(20, Math.ceil(2 * cls.footprint.weightsGiB));
    const volumeGiB = opts.nodeVolumeSize?.toGibibytes() ?? cacheGiB * cls.replicasPerInstance + 100;
    const deadlineSeconds = this.deadlineSeconds;

    const nodeClass = m.ec2NodeClass({
      name: nodePoolName,
      roleName: this.karpenter.nodeRole.roleName,
      amiAlias: u.amiAlias,
      subnetTags: { [DISCOVERY_TAG]: this.clusterName },
      securityGroupTags: { 'aws:eks:cluster-name': this.clusterName },
      volumeSizeGiB: volumeGiB,
      labels: nodeLabels,
      tags: { 'capacity-aware-inference:service': service, 'capacity-aware-inference:class': cls.name },
    });
    const nodePool = m.nodePool({
      name: nodePoolName,
      nodeClassName: nodePoolName,
      instanceTypes,
      capacityTypes: opts.capacityTypes ?? ['on-demand'],
      acceleratorKind: hw.acceleratorKind,
      acceleratorResource: hw.kubernetesResourceName,
      acceleratorLimit: cls.maxReplicas * tp,
      cpuLimit: maxInstances * Math.max(...instanceTypes.map((t) => this.vcpuOf(t, cls))),
      weight: Math.max(1, 100 - 10 * u.rank),
      labels: nodeLabels,
      zones: cls.placement.zones,
      consolidateAfter: '10m',
      expireAfter: '720h',
      terminationGracePeriod: `${u.deregistrationDelay.toSeconds() + deadlineSeconds + 60}s`,
    });
    const capacity = this.apply(`Capacity-${cls.name}`, [nodeClass, nodePool], this.karpenter.chart);

    const priorityClass = m.priorityClass(name, 100000 - 1000 * u.rank, `Model servers of capacity class ${cls.name} (preference rank ${u.rank})`, labels);
    const runtime = u.runtime;
    const modelFetch = modelFetchOf(cls, u.fetcherImage);
    // A class that reads model data gets its own service account, so that its pod identity reads only its own object.
    const serviceAccount = modelFetch ? m.serviceAccount(name, this.namespace, labels) : undefined;
    const perReplicaCpu = Math.max(1, Math.floor((hw.vcpu * 0.75) / cls.replicasPerInstance));
    const perReplicaMemGiB = Math.max(2, Math.floor((hw.memoryGiB * 0.75) / cls.replicasPerInstance));
    const deployment = m.deployment({
      name,
      namespace: this.namespace,
      labels,
      selector,
      image: cls.artifact.image,
      args: runtime.args,
      env: runtime.env,
      port,
      acceleratorKind: hw.acceleratorKind,
      acceleratorResource: hw.kubernetesResourceName,
      acceleratorCount: tp,
      cpu: String(perReplicaCpu),
      memory: `${perReplicaMemGiB}Gi`,
      modelCacheSize: `${cacheGiB}Gi`,
      modelFetch,
      nodePoolName,
      priorityClassName: name,
      serviceAccountName: serviceAccount?.metadata.name ?? SERVING_SERVICE_ACCOUNT,
      readiness: {
        healthPath: opts.healthPath ?? runtime.healthPath,
        readyPath: opts.readyPath ?? runtime.readyPath,
        warmup: opts.warmup ? { path: opts.warmup.path, maxLatencySeconds: opts.warmup.maxLatency.toSeconds({ integral: false }) } : undefined,
        startupTimeoutSeconds: (opts.startupTimeout ?? Duration.minutes(30)).toSeconds(),
      },
      drainSeconds: u.deregistrationDelay.toSeconds(),
      inFlightSeconds: deadlineSeconds,
    });
    const svc = m.service(name, this.namespace, labels, selector, SERVICE_PORT);
    const pdb = m.podDisruptionBudget(name, this.namespace, labels, selector);
    const workload = this.apply(
      `Workload-${cls.name}`,
      [...(serviceAccount ? [serviceAccount] : []), priorityClass, deployment, svc, pdb],
      this.namespaceManifest,
      capacity,
      // The readiness-gate webhook must exist before the pods, so they turn Ready only once healthy in the target group.
      this.loadBalancerController.chart,
    );
    const role = this.servingRoles[cls.name];
    if (role) workload.node.addDependency(role);
    if (u.gate) workload.node.addDependency(u.gate.gateFor(this, cls));

    const periodSeconds = u.period.toSeconds();
    const target = opts.targetRequestsPerReplicaPerPeriod ?? plan.targetRequestsPerSecondPerReplica * periodSeconds;
    const scaledObject = m.scaledObject({
      name,
      namespace: this.namespace,
      labels,
      deploymentName: name,
      triggerAuthenticationName: u.triggerAuthName,
      metric: {
        namespace: AwsMetrics.alb.namespace,
        metricName: AwsMetrics.alb.requestCount,
        dimensionName: 'LoadBalancer;TargetGroup',
        dimensionValue: `${this.loadBalancer.loadBalancerFullName};${u.targetGroup.targetGroupFullName}`,
        statistic: 'Sum',
        region: Stack.of(this).region,
      },
      target,
      minReplicas,
      maxReplicas,
      fallbackReplicas: Math.min(maxReplicas, Math.max(minReplicas, plan.steadyReplicas)),
      periodSeconds,
      collectionSeconds: (u.scaling.metricCollectionTime ?? Duration.seconds(3 * periodSeconds)).toSeconds(),
      endTimeOffsetSeconds: periodSeconds,
      scaleDownStabilizationSeconds: (u.scaling.scaleDownStabilization ?? Duration.minutes(10)).toSeconds(),
      scaleUpPods: u.scaling.maxScaleUpPods ?? 2,
      scaleUpPeriodSeconds: (u.scaling.scaleUpPeriod ?? Duration.minutes(2)).toSeconds(),
      pollingIntervalSeconds: (u.scaling.pollingInterval ?? Duration.seconds(30)).toSeconds(),
    });
    const scaler = this.apply(`Scaler-${cls.name}`, [scaledObject], this.keda.chart, this.triggerAuthenticationManifest, workload);
    const tgb = m.targetGroupBinding(name, this.namespace, labels, {
      targetGroupArn: u.targetGroup.targetGroupArn,
      serviceName: name,
      servicePort: SERVICE_PORT,
      vpcId: this.vpc.vpcId,
    });
    const binding = this.apply(`Binding-${cls.name}`, [tgb], this.loadBalancerController.chart, workload);
    return {
      cls,
      plan,
      nodePoolName,
      deploymentName: name,
      targetGroup: u.targetGroup,
      objects: {
        ...(serviceAccount ? { serviceAccount } : {}),
        nodeClass,
        nodePool,
        priorityClass,
        deployment,
        service: svc,
        podDisruptionBudget: pdb,
        scaledObject,
        targetGroupBinding: tgb,
      },
      manifests: { capacity, workload, scaler, binding },
    };
  }

  private vcpuOf(instanceType: string, cls: CapacityClass): number {
    return this.catalog.find(instanceType)?.vcpu ?? cls.hardware.vcpu;
  }
}

/** Subnet tag Karpenter's EC2NodeClasses select node subnets by. */
export const DISCOVERY_TAG = 'karpenter.sh/discovery';

function withVersion(chart: ChartSpec, version: string | undefined): ChartSpec {
  return version === undefined ? chart : { ...chart, version };
}

function newVpc(scope: Construct): ec2.Vpc {
  const vpc = new ec2.Vpc(scope, 'Vpc', {
    maxAzs: 3,
    natGateways: 1,
    subnetConfiguration: [
      { name: 'public', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24 },
      { name: 'nodes', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 18 },
    ],
  });
  const logGroup = new logs.LogGroup(scope, 'VpcFlowLogs', { retention: logs.RetentionDays.THREE_MONTHS, removalPolicy: RemovalPolicy.DESTROY });
  vpc.addFlowLog('FlowLog', { destination: ec2.FlowLogDestination.toCloudWatchLogs(logGroup) });
  return vpc;
}

function newCluster(scope: Construct, clusterName: string, vpc: ec2.IVpc, o: NewClusterOptions, kubectlLayer: lambda.ILayerVersion): eks.Cluster {
  const key = o.secretsEncryptionKey ?? new kms.Key(scope, 'SecretsKey', { enableKeyRotation: true, description: `Secrets of EKS cluster ${clusterName}` });
  const cluster = new eks.Cluster(scope, 'Cluster', {
    clusterName,
    vpc,
    vpcSubnets: [{ subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS }],
    version: o.version ?? eks.KubernetesVersion.V1_33,
    endpointAccess: o.endpointAccess ?? eks.EndpointAccess.PRIVATE,
    secretsEncryptionKey: key,
    clusterLogging: [
      eks.ClusterLoggingTypes.API,
      eks.ClusterLoggingTypes.AUDIT,
      eks.ClusterLoggingTypes.AUTHENTICATOR,
      eks.ClusterLoggingTypes.CONTROLLER_MANAGER,
      eks.ClusterLoggingTypes.SCHEDULER,
    ],
    defaultCapacityType: eks.DefaultCapacityType.NODEGROUP,
    defaultCapacity: o.systemNodeCount ?? 2,
    defaultCapacityInstance: o.systemNodeInstanceType ?? ec2.InstanceType.of(ec2.InstanceClass.M7I, ec2.InstanceSize.LARGE),
    kubectlProviderOptions: { kubectlLayer },
  });
  acknowledgeManagedPolicies(
    cluster,
    'Roles aws-eks-v2 creates for the cluster: AmazonEKSClusterPolicy (control plane), the worker-node policies of the system node group ' +
      'and the Lambda basic/VPC execution policies (plus public ECR read) of the kubectl handler. AWS maintains them for exactly these roles.',
  );
  // aws-eks-v2 writes EncryptionConfig.Resources, which the CloudFormation schema marks deprecated but still requires.
  acknowledgeRule(cluster, 'CloudFormation-Validate::W9009', 'EncryptionConfig.Resources is how aws-eks-v2 enables envelope encryption of secrets.');
  const kubectl = cluster.node.tryFindChild('KubectlProvider');
  if (kubectl) {
    acknowledgeWildcardResources(
      kubectl,
      "The kubectl provider framework invokes its handler function's versions (<handler ARN>:*), as aws-eks-v2 generates it.",
      (r) => r.endsWith('.Arn>:*'),
    );
    acknowledgeRule(kubectl, 'AwsSolutions-L1', 'The kubectl handler runtime is fixed by aws-eks-v2 to match its kubectl/helm layer; it is not configurable.');
  }
  return cluster;
}

function tagNodeSubnets(scope: Construct, vpc: ec2.IVpc, clusterName: string): void {
  for (const subnet of vpc.privateSubnets) {
    if (subnet instanceof ec2.Subnet) {
      Tags.of(subnet).add(DISCOVERY_TAG, clusterName);
    } else {
      Annotations.of(scope).addWarningV2(
        'cdk-capacity-aware-inference:eks-untagged-subnet',
        `Tag the node subnet ${Token.isUnresolved(subnet.subnetId) ? '' : subnet.subnetId} with ${DISCOVERY_TAG}=${clusterName}: Karpenter selects node subnets by that tag.`,
      );
    }
  }
}

function newAccessLogBucket(scope: Construct): s3.Bucket {
  const bucket = new s3.Bucket(scope, 'AccessLogs', {
    encryption: s3.BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    lifecycleRules: [{ expiration: Duration.days(90) }],
  });
  acknowledgeRule(bucket, 'AwsSolutions-S1', 'This bucket receives ALB access logs; logging access to the log bucket itself would need another bucket without end.');
  return bucket;
}

/** Read access to exactly the model data objects of the classes, for the model servers' service account. */
/**
 * The pod identity of one class with model data: it may read its own object only, and with a pinned version only
 * that version (s3:GetObjectVersion bound by the s3:VersionId condition key).
 */
function modelDataRole(scope: EksInferenceService, cluster: eks.ICluster, ns: string, cls: CapacityClass): iam.Role | undefined {
  const data = cls.artifact.modelData;
  if (!data) return undefined;
  const object = `arn:${Stack.of(scope).partition}:s3:::${data.uri.replace(/^s3:\/\//, '')}`;
  const identity = new PodIdentityRole(scope, `ModelData-${cls.name}`, {
    cluster,
    namespace: ns,
    serviceAccountName: classObjectName(scope.plan.service, cls.name),
    description: `Model server of class ${cls.name}: reads its pinned model data only`,
    statements: [
      data.versionId === undefined
        ? new iam.PolicyStatement({ sid: 'ReadPinnedModelData', actions: ['s3:GetObject'], resources: [object] })
        : new iam.PolicyStatement({
            sid: 'ReadPinnedModelDataVersion',
            actions: ['s3:GetObjectVersion'],
            resources: [object],
            conditions: { StringEquals: { 's3:VersionId': data.versionId } },
          }),
    ],
  });
  return identity.role;
}

