import { Annotations, Duration, Lazy, Names, Stack, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as cognito from 'aws-cdk-lib/aws-cognito';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import type * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import { Construct, type IDependable } from 'constructs';
import { HardwareCatalog } from '../core/hardware/catalog';
import { AwsMetrics, classDimensions, Metrics } from '../core/metrics/contract';
import { type PlacementOptions } from '../core/reconciler/config';
import { type AlbRoutingFacts, routedClassFacts } from '../core/reconciler/routing-facts';
import { ALB_TARGET_HEALTH_READ, albWeightsLocation } from '../core/reconciler/targets/alb';
import { type RuntimeBinding } from '../core/runtime/binding';
import { rejectionStatusClass } from '../core/runtime/engines';
import { requestDeadlineSeconds } from '../core/runtime/shutdown';
import { type CapacityClass, type CapacityClassSpec } from '../core/service/capacity-class';
import { hostMemoryNote } from '../core/service/host-memory';
import { readOnlyWeightsNote } from '../core/service/weights-conversion';
import { ungatedArtifactNote } from '../core/trust/ungated';
import { capacityPlanProblems, checkCapacityClasses, type ClassProblem } from '../core/service/checks';
import { forbiddenRoutes, initialWeights } from '../core/service/initial-weights';
import { amiFamily, Checker } from '../core/validation/checker';
import { throwIfInvalid } from '../core/validation/error';
import { EKS_RULES } from '../core/validation/rules';
import { parseS3Object } from '../core/trust/s3-uri';
import { sizeGibibytes } from '../util/duration';
import { type ServiceContract } from '../core/service/contract';
import { type CapacityPlan, planCapacity } from '../core/service/sizing';
import { type ServingDescription } from '../core/reconciler/serving';
import { servingRecord } from '../core/service/serving-record';
import { recordServing } from '../control/serving-record';
import { type IInferenceServing, type ReplicaFloorOptions } from '../control/serving';
import { type ApprovedImagesAdmission } from '../trust/admission-policy';
import { type IClassArtifactGate } from '../trust/gate';
import { modelDataDecryptStatement, modelDataKeyFacts } from '../trust/model-data-key';
import { classObjectName, clusterProblems, eksProblems, loadBalancerZoneProblems, placementVpcProblems } from './checks';
import { type EksClassOptions } from './class-options';
import { CLASS_LABEL, type ClassObjects, classUnitObjects, DEFAULT_PORT } from './class-unit';
import { SERVING_SERVICE_ACCOUNT } from './name-limits';
import { podRequests } from './node-sizing';
import { CLUSTER_SETTINGS, type ClusterSettings, EksInferenceCluster } from './cluster';
import { type Karpenter } from './karpenter';
import { type Keda } from './keda';
import { type LoadBalancerController } from './load-balancer-controller';
import * as m from './manifests';
import { fetcherToolProblems, modelCacheGiB, modelCacheProblems } from './model-data-fetch';
import { classInstanceTypes, nodeVolumeProblems } from './node-sizing';
import { type EksObservability, type ServiceSignalProducers } from './observability-addon';
import { PodIdentityRole } from './pod-identity';
import { grantListenerAuthentication } from './listener-authentication';
import {
  albRouting, type ListenerRuleOptions, listenerRuleProblems, listenerVpcProblems, type LoadBalancerOptions, ruleRouting, takeListenerPriority,
} from './routing';
import { eksRuntime, fetcherImageProblems, modelDataNote, modelDataProblems, modelFetchOf } from './runtime';
import { overriddenTargetNote } from '../core/service/target-override';
import { type ScalingOptions } from './scaling-options';
import { nodeSubnetSelectorTerms } from './subnet-discovery';
import { EKS_SCALING_DEFAULTS } from '../core/platform/control-loop';
import { KUBECTL_HANDLER_TIMEOUT_SECONDS, MAX_DRAIN_ON_DELETE_SECONDS } from '../core/platform/kubectl-handler';
import { DEFAULT_POLICY_CONFIG } from '../core/policy/defaults';

export { CLASS_LABEL } from './class-unit';
export { DISCOVERY_TAG, type ChartVersions, type ClusterSettings, type NewClusterOptions } from './cluster';
export { type ListenerRuleOptions, type LoadBalancerOptions } from './routing';

/** Nodes run Bottlerocket unless `amiAlias` says otherwise. */
const DEFAULT_AMI_ALIAS = 'bottlerocket@latest';

/**
 * The ClusterSettings (clusterName, clusterOptions, vpc, kubectlLayer, chartVersions, observability) apply when the
 * service has a cluster of its own (no `cluster`, or an imported `eks.ICluster`); with an EksInferenceCluster they are
 * its settings and the service refuses them.
 */
export interface EksInferenceServiceProps extends ClusterSettings {
  /** The service's SLO, request shape and peak demand. */
  readonly contract: ServiceContract;
  /** Capacity classes in preference order (EC2 instance types). */
  readonly classes: readonly CapacityClassSpec[];
  /** @default HardwareCatalog.builtIn() */
  readonly catalog?: HardwareCatalog;
  /** Per-class EKS settings, by class name. @default - derived from each class and the plan */
  readonly classOptions?: Readonly<Record<string, EksClassOptions>>;
  /**
   * The cluster the service runs on. An `EksInferenceCluster` is shared by many services and installs the controllers
   * once (the ClusterSettings then belong to it). An `eks.ICluster` (imported with
   * `eks.Cluster.fromClusterAttributes` from aws-cdk-lib/aws-eks-v2 with `vpc`, `clusterSecurityGroupId` and
   * `kubectlProvider: eks.KubectlProvider.fromKubectlProviderAttributes(...)`) gets the controllers from this service,
   * as a cluster of its own would.
   * @default - a new cluster of its own (with the ClusterSettings)
   */
  readonly cluster?: EksInferenceCluster | eks.ICluster;
  /** Namespace of the serving objects (one per service on a cluster). @default - contract.name */
  readonly namespace?: string;
  /** The service's own ALB. Not with `listenerRule`. @default - internal ALB, HTTP, 30 s deregistration delay */
  readonly loadBalancer?: LoadBalancerOptions;
  /**
   * Route by a rule (host and/or path) on a listener shared with other services instead of an ALB of the service's
   * own. Not with `loadBalancer`.
   * @default - an ALB of the service's own (`loadBalancer`)
   */
  readonly listenerRule?: ListenerRuleOptions;
  /** @default - see ScalingOptions */
  readonly scaling?: ScalingOptions;
  /**
   * Karpenter AMI alias of the GPU and Neuron nodes: `bottlerocket@...` or `al2023@...` (Windows nodes would not
   * match the NodePools, which require linux; EKS publishes no AL2 AMIs for Kubernetes 1.33 and later). Pin a version
   * in production (`bottlerocket@v1.x.y`). Bottlerocket's NVIDIA variants ship the NVIDIA device plugin; the AL2023
   * NVIDIA AMIs (`al2023@...`) do not, and the library does not install it: GPU classes on them need the NVIDIA device
   * plugin installed on the cluster (https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-k8s-device-plugin.html),
   * and synth warns for each (`cdk-capacity-aware-inference:eks-nvidia-device-plugin-<class>`; acknowledge it once the
   * plugin runs). Neuron nodes get the Neuron device plugin from the cluster (`neuronDevicePlugin`) with either family.
   * @default 'bottlerocket@latest'
   */
  readonly amiAlias?: string;
  /** Verifies each class's artifacts before its Deployment is applied. @default - no gate */
  readonly artifactGate?: IClassArtifactGate;
  /**
   * Images the namespace's pods run besides the classes' and the model-data fetcher's, for the approved-images policy
   * of an `EksInferenceCluster` with `approvedImagesAdmission: true`: the sidecars a mutating webhook injects into
   * every pod (Istio, Linkerd, App Mesh, an APM agent), each pinned by digest
   * (`<registry>/<repository>@sha256:<64 hex>`), exactly as the injector writes it. Each is approved like a class
   * image (an annotation of its own on the policy). The injector must inject by digest: Istio builds
   * `<hub>/<image>:<tag>` unless `global.proxy.image` and `global.proxy_init.image` are full references
   * (istio/istio@1.30.3 manifests/charts/istio-control/istio-discovery/files/injection-template.yaml:87-91,188-192).
   * A pod with an injected image not listed here is refused on creation, and the deploy still completes: the
   * Deployment has no sidecar in its template (docs/artifact-trust.md, "Injected sidecars").
   * @default - none
   */
  readonly additionalApprovedImages?: readonly string[];
  /**
   * Image of the init container that fetches a class's model data (one S3 object version) into the pod and checks
   * its SHA-256 before the server starts. Needs `/bin/sh`, the AWS CLI v2 (2.15.0 or later), `sha256sum` and, for `.tar` / `.tar.gz`
   * model data, `tar` and `gzip`; give it by digest. The AWS CLI image has no tar: for archives build one
   * `FROM public.ecr.aws/aws-cli/aws-cli@sha256:<digest>` with `RUN dnf install -y tar gzip` (docs/eks-inference-service.md).
   * @default - none: a synth error when a class has `artifact.modelData`
   */
  readonly modelDataFetcherImage?: string;
  /**
   * Key of the model-data bucket when it uses SSE-KMS (the same `modelDataEncryptionKey` as the other constructs take,
   * see lib/trust/model-data-key.ts): each class's model-data pod identity may decrypt with it through S3 only, which
   * the init container's GetObject of an SSE-KMS object needs.
   * @default - model data is not KMS-encrypted with a customer key
   */
  readonly modelDataEncryptionKey?: kms.IKey;
  /**
   * Upgrading a stack deployed with a version that added the replica floor as a `KubernetesPatch` per class
   * (`FloorTrigger-<class>`): keep those resources, updated in place to an apply patch equal to the floored triggers
   * and an empty restore patch (`{}`), so that CloudFormation's removal of them cannot strip the floor from the live
   * ScaledObjects (a deleted patch applies its restore patch; the previous release's restored the load trigger alone).
   * Once deployed with it, set `false` to remove them: the removal restores nothing, in any later deploy.
   * @default - true for a service with a cluster of its own (the only shape those versions had), for this release;
   * false on an EksInferenceCluster (new in this release: no such patches exist)
   */
  readonly retainFloorPatches?: boolean;
}

/** Everything synthesized for one class. */
export interface EksClassUnit {
  readonly cls: CapacityClass;
  readonly plan: CapacityPlan['classes'][number];
  readonly nodePoolName: string;
  readonly deploymentName: string;
  readonly targetGroup: elbv2.ApplicationTargetGroup;
  /** The typed Kubernetes objects of the class, as applied. */
  readonly objects: ClassObjects;
  readonly manifests: {
    /** EC2NodeClass and NodePool. */
    readonly capacity: eks.KubernetesManifest;
    /** Service account, PriorityClass, Deployment and PDB: after the binding, so that every pod gets the ALB readiness gate. */
    readonly workload: eks.KubernetesManifest;
    /** The ScaledObject (with the replica-floor trigger once a Reconciler is attached). */
    readonly scaler: eks.KubernetesManifest;
    /** Service and TargetGroupBinding. */
    readonly binding: eks.KubernetesManifest;
  };
}

/**
 * A heterogeneous inference service on EKS: one serving unit per capacity class (Karpenter NodePool + EC2NodeClass,
 * Deployment, Service, PDB, priority class, KEDA ScaledObject and TargetGroupBinding) in its own namespace, behind its
 * own ALB listener whose weighted target groups (one per class) a reconciler re-weights. It runs on an
 * `EksInferenceCluster` shared with other services, or on a cluster of its own. Invalid input fails at synth with every
 * problem.
 */
export class EksInferenceService extends Construct implements IInferenceServing {
  /** The cluster construct: shared, or the service's own (its child `Default`, which keeps the logical ids of earlier versions). */
  public readonly inferenceCluster: EksInferenceCluster;
  public readonly cluster: eks.ICluster;
  public readonly clusterName: string;
  public readonly vpc: ec2.IVpc;
  public readonly plan: CapacityPlan;
  public readonly classes: readonly CapacityClass[];
  public readonly namespace: string;
  /** The service's own ALB; undefined when it routes by `listenerRule` on a shared listener. */
  public readonly loadBalancer?: elbv2.ApplicationLoadBalancer;
  /** The listener the service is reached on: its own ALB's, or the shared one of `listenerRule`. */
  public readonly listener: elbv2.IApplicationListener;
  /** The service's rule on the shared listener (with `listenerRule`), whose forward action the reconciler re-weights. */
  public readonly listenerRule?: elbv2.ApplicationListenerRule;
  /** `app/<name>/<id>` of the load balancer serving the service: the `LoadBalancer` dimension of its ALB metrics. */
  public readonly loadBalancerFullName: string;
  /** Namespace, service account and TriggerAuthentication. */
  public readonly namespaceManifest: eks.KubernetesManifest;
  public readonly triggerAuthenticationManifest: eks.KubernetesManifest;
  /** The typed objects shared by the classes (namespace, service account, TriggerAuthentication), as applied. */
  public readonly sharedObjects: readonly m.KubernetesObject[];
  /** Per class with model data: the role its pods assume (pod identity) to read exactly that model data version. */
  public readonly servingRoles: Readonly<Record<string, iam.Role>>;
  private readonly servingIdentities: Readonly<Record<string, PodIdentityRole>>;
  public readonly units: readonly EksClassUnit[];
  /** This service's signal producers: a capacity-error filter per NodePool and the scraped metrics. */
  public readonly signalProducers: ServiceSignalProducers;
  /** The namespace's approved-images policy, when the cluster admits only approved images (its workloads wait for it). */
  public readonly admission?: ApprovedImagesAdmission;
  private readonly contract: ServiceContract;
  private readonly scaledObjectInputs = new Map<string, m.ScaledObjectInput>();
  private floorsEnabled = false;
  /** The placement of the Reconciler on this service (`applyPlacement`): the initial weights honour it. */
  private placement: PlacementOptions = {};
  private readonly retainFloorPatches: boolean;
  /** User pools of authenticate-cognito actions on the listener or the rule (the routing writer needs to describe their clients). */
  private readonly cognitoUserPools: readonly cognito.IUserPool[];

  constructor(scope: Construct, id: string, props: EksInferenceServiceProps) {
    super(scope, id);
    this.contract = props.contract;
    this.cognitoUserPools = props.loadBalancer?.cognitoUserPools ?? props.listenerRule?.cognitoUserPools ?? [];
    this.namespace = props.namespace ?? props.contract.name;
    const shared = props.cluster instanceof EksInferenceCluster ? props.cluster : undefined;
    // A stack upgraded without reading the CHANGELOG must not lose its floors: keeping the old patches is harmless
    // (they apply the floored triggers, and their restore patch is `{}`, which changes nothing), losing them is silent.
    this.retainFloorPatches = props.retainFloorPatches ?? shared === undefined;
    const imported = shared ? undefined : (props.cluster as eks.ICluster | undefined);
    this.clusterName = shared?.clusterName ?? props.clusterName ?? imported?.clusterName
      ?? Names.uniqueResourceName(this, { maxLength: 100, separator: '-', allowedSpecialCharacters: '-' });
    const catalog = props.catalog ?? HardwareCatalog.builtIn();
    const { classes, runtimes } = this.checked(props, catalog, shared);
    this.classes = classes;
    this.plan = planCapacity(props.contract, classes);
    throwIfInvalid('EksInferenceService', this.node.path, capacityPlanProblems(props.contract, classes, this.plan));
    this.warnIfTargetOverridden(props);

    // The id 'Default' is left out of logical ids: a service that builds its own cluster keeps the ids it had when
    // it installed the controllers itself (aws-cdk-lib core/lib/private/uniqueid.js makeUniqueId, HIDDEN_ID).
    this.inferenceCluster = shared ?? new EksInferenceCluster(this, 'Default', {
      ...Object.fromEntries(CLUSTER_SETTINGS.map((k) => [k, props[k]])) as ClusterSettings,
      cluster: imported,
      clusterName: this.clusterName,
    });
    this.cluster = this.inferenceCluster.cluster;
    this.vpc = this.inferenceCluster.vpc;
    throwIfInvalid('EksInferenceService', this.node.path, placementVpcProblems(classes, this.inferenceCluster.nodeSubnets));
    const classOptions = props.classOptions ?? {};
    const attachment = this.inferenceCluster.attach(this, {
      path: this.node.path,
      service: props.contract.name,
      namespace: this.namespace,
      clusterScopedNames: [...new Set(classes.flatMap((c) => [`${props.contract.name}-${c.name}`, classOptions[c.name]?.nodePoolName ?? `${props.contract.name}-${c.name}`]))],
      images: [
        ...classes.map((c) => c.artifact.image),
        ...(props.modelDataFetcherImage && classes.some((c) => c.artifact.modelData) ? [props.modelDataFetcherImage] : []),
      ],
      additionalImages: props.additionalApprovedImages,
      neuronClasses: classes.filter((c) => c.hardware.acceleratorKind === 'neuron').map((c) => ({
        name: c.name,
        instanceTypes: classInstanceTypes(c, classOptions[c.name] ?? {}),
      })),
      spotClasses: classes.filter((c) => (classOptions[c.name]?.capacityTypes ?? []).includes('spot')).map((c) => c.name),
    });
    // After the cluster's own checks, which say more about two services of one name on one cluster.
    recordServing(this, 'EksInferenceService', props.contract.name, () => servingRecord('eks', this.contract, this.classes, this.plan));

    this.admission = attachment.admission;
    const routed = classes.map((cls) => ({
      cls,
      port: classOptions[cls.name]?.port ?? DEFAULT_PORT,
      readyPath: classOptions[cls.name]?.readyPath ?? runtimes.get(cls.name)!.readyPath,
      // At synth: a Reconciler made after the service gives its placement first (`applyPlacement`).
      weight: Lazy.number({ produce: () => this.initialWeights[cls.name] }),
    }));
    throwIfInvalid('EksInferenceService', this.node.path, listenerVpcProblems(props.listenerRule, this.vpc));
    const routing = props.listenerRule
      ? ruleRouting(this, {
        vpc: this.vpc, cluster: this.cluster, options: props.listenerRule, classes: routed, requestDeadlineMs: props.contract.slo.deadlineMs,
      })
      : albRouting(this, {
        vpc: this.vpc, cluster: this.cluster, options: props.loadBalancer ?? {}, classes: routed, requestDeadlineMs: props.contract.slo.deadlineMs,
      });
    throwIfInvalid('EksInferenceService', this.node.path, loadBalancerZoneProblems(classes, this.inferenceCluster.nodeSubnets, routing.zones));
    this.loadBalancer = routing.loadBalancer;
    this.listener = routing.listener;
    this.listenerRule = routing.rule;
    this.loadBalancerFullName = routing.loadBalancerFullName;
    this.warnLongDrain(routing.deregistrationDelay.toSeconds(), props.listenerRule ? 'listenerRule' : 'loadBalancer');
    const registrations = this.inferenceCluster.allowTargetGroups(this,
      Object.fromEntries(classes.map((cls, i) => [cls.name, routing.targetGroups[i].targetGroupArn])));

    const namespaced = this.addNamespace();
    this.namespaceManifest = namespaced.namespaceManifest;
    this.triggerAuthenticationManifest = namespaced.triggerAuthenticationManifest;
    this.sharedObjects = namespaced.objects;
    this.servingIdentities = Object.fromEntries(classes.flatMap((cls) => {
      const identity = modelDataIdentity(this, this.cluster, this.namespace, cls, props.modelDataEncryptionKey);
      return identity ? [[cls.name, identity]] : [];
    }));
    this.servingRoles = Object.fromEntries(Object.entries(this.servingIdentities).map(([name, identity]) => [name, identity.role]));

    const scaling = props.scaling ?? {};
    this.units = classes.map((cls, rank) => this.addClassUnit({
      cls,
      rank,
      opts: classOptions[cls.name] ?? {},
      targetGroup: routing.targetGroups[rank],
      deregistrationDelay: routing.deregistrationDelay,
      scaling,
      amiAlias: props.amiAlias ?? DEFAULT_AMI_ALIAS,
      catalog,
      runtime: runtimes.get(cls.name)!,
      fetcherImage: props.modelDataFetcherImage,
      triggerAuthenticationName: namespaced.triggerAuthenticationName,
      gate: props.artifactGate,
      admission: attachment.admission,
      registration: registrations[cls.name],
    }));

    // Signal producers of the control loop: this service's filters (its child 'Observability') and scrape.
    this.signalProducers = this.inferenceCluster.observability.addClasses(new Construct(this, 'Observability'), this.units.map((u) => ({
      service: props.contract.name,
      className: u.cls.name,
      namespace: this.namespace,
      engine: u.cls.runtime.engine,
      port: classOptions[u.cls.name]?.port ?? DEFAULT_PORT,
      classLabel: CLASS_LABEL,
      nodePoolName: u.nodePoolName,
    })));
  }

  /**
   * Initial listener weights by class name, summing to 100: the policy's cost plan at planned demand
   * (lib/core/service/initial-weights.ts), with no weight on a class the placement of the Reconciler on this service
   * forbids (`applyPlacement`). The listener renders them at synth, when every Reconciler has given its placement.
   */
  public get initialWeights(): Readonly<Record<string, number>> {
    const ready = Object.fromEntries(this.classes.map((cls, i) => [cls.name, this.plan.classes[i].steadyReplicas]));
    return initialWeights(this.routingFacts(), ready, this.plan.plannedTokensPerSecond, { placement: this.placement });
  }

  /**
   * Called by a Reconciler on this service with the placement it enforces: the listener's initial weights then give a
   * class it forbids (`allowSensitive: false` when the service's requests are sensitive) no weight, as its runs never do.
   * Returns the initial weights.
   */
  public applyPlacement(placement: PlacementOptions): Readonly<Record<string, number>> {
    const forbidden = forbiddenRoutes(this.routingFacts(), placement);
    throwIfInvalid('EksInferenceService', this.node.path, forbidden.length < this.classes.length ? [] : [{
      field: 'classes[].placement.allowSensitive',
      message: `is false on every class (${forbidden.map((n) => `'${n}'`).join(', ')}) and the Reconciler routes sensitive requests ` +
        '(sensitive: true), so no class may take traffic; allowed: at least one class that allows sensitive requests',
    }]);
    this.placement = placement;
    return this.initialWeights;
  }

  /** The cluster's Karpenter (undefined where the cluster runs its own). */
  public get karpenter(): Karpenter | undefined {
    return this.inferenceCluster.karpenter;
  }

  /** The cluster's KEDA (undefined where the cluster runs its own). */
  public get keda(): Keda | undefined {
    return this.inferenceCluster.keda;
  }

  /** The cluster's Load Balancer Controller (undefined where the cluster runs its own). */
  public get loadBalancerController(): LoadBalancerController | undefined {
    return this.inferenceCluster.loadBalancerController;
  }

  /** The cluster's observability add-on and log groups (this service's producers: `signalProducers`). */
  public get observability(): EksObservability {
    return this.inferenceCluster.observability;
  }

  /**
   * Called by a Reconciler on this service: each class's ScaledObject gets a second trigger on the `ReplicaFloor` the
   * reconciler publishes, so the HPA runs at least the policy's floor (it takes the highest of its metrics). The
   * trigger is part of the ScaledObject the service renders (its manifest is serialized at synth), so every later
   * `kubectl apply` of the object carries it: a three-way JSON merge patch replaces `triggers` whole
   * (kubernetes/apimachinery v0.34.0 pkg/util/jsonmergepatch/patch.go:139-143). Without a Reconciler nothing reads a
   * metric nothing publishes. The trigger reads the floor over three of the reconciler's periods, so a floor published
   * once per period (and one missed run) never lapses to zero. Idempotent. Returns the ScaledObjects.
   */
  public enableReplicaFloors(options: ReplicaFloorOptions = { periodSeconds: DEFAULT_POLICY_CONFIG.periodSeconds }): readonly m.ScaledObject[] {
    if (!this.floorsEnabled) {
      this.floorsEnabled = true;
      for (const u of this.units) {
        const input = this.scaledObjectInputs.get(u.cls.name)!;
        const floored = m.scaledObject({
          ...input,
          replicaFloor: {
            namespace: Metrics.replicaFloor.namespace,
            metricName: Metrics.replicaFloor.name,
            dimensions: classDimensions(this.contract.name, u.cls.name),
            region: Stack.of(this).region,
            reconcilerPeriodSeconds: options.periodSeconds,
          },
        });
        // The same object is in the Scaler manifest, which CloudFormation receives as JSON rendered at synth.
        (u.objects.scaledObject.spec as { triggers: m.ScaledObject['spec']['triggers'] }).triggers = floored.spec.triggers;
        if (this.retainFloorPatches) this.retainFloorPatch(u, floored);
      }
    }
    return this.units.map((u) => u.objects.scaledObject);
  }

  /**
   * The migration resource of `retainFloorPatches`. Its apply patch carries the floored triggers (the same as the
   * ScaledObject's, so applying it changes nothing). Its restore patch is the empty JSON merge patch `{}`, which leaves
   * the object as it is (RFC 7386: a patch object with no members changes no member; kubectl prints "patched (no
   * change)" and exits 0, kubernetes/kubectl pkg/cmd/patch/patch.go Validate/RunPatch). aws-eks-v2's patch handler
   * applies RestorePatchJson only on Delete and ApplyPatchJson on Create and Update (aws-cdk-lib 2.269.0
   * custom-resource-handlers/dist/aws-eks-v2/kubectl-handler/patch/__init__.py:40-48), so the first deploy of this
   * release updates a deployed patch in place (the previous release's restore, the load trigger alone, never runs)
   * and its later removal restores nothing. A restore of the triggers themselves would put back those of the
   * patch's last deploy after the deploy that removes it applied new ones, until the ScaledObject's manifest next
   * changes (test/eks/replica-floor-update.test.ts replays both).
   */
  private retainFloorPatch(u: EksClassUnit, floored: m.ScaledObject): void {
    const patch = new eks.KubernetesPatch(this, `FloorTrigger-${u.cls.name}`, {
      cluster: this.cluster,
      resourceName: `scaledobject.keda.sh/${floored.metadata.name}`,
      resourceNamespace: this.namespace,
      applyPatch: { spec: { triggers: floored.spec.triggers } },
      restorePatch: {},
      patchType: eks.PatchType.MERGE,
    });
    patch.node.addDependency(u.manifests.scaler);
  }

  /**
   * The reconciler's routing calls (lambda/reconciler/targets/alb.ts, where albWeightsLocation says): on the service's
   * own listener DescribeListeners and ModifyListener on the listener; on a shared listener DescribeRules and
   * ModifyRule on the service's rule only, so it can never touch the listener or another service's rule; and
   * DescribeTargetHealth, which tells an emptied target group from an unpublished metric. The Describe calls support no
   * resource-level permissions; ModifyListener takes `listener/app*`, ModifyRule `listener-rule/app*` (Service
   * Authorization Reference, list_elasticloadbalancingv2.html).
   */
  public grantRouting(grantee: iam.IGrantable): iam.Grant {
    const at = albWeightsLocation(this.routingFacts());
    const reads = [at.read, ALB_TARGET_HEALTH_READ].map((a) => `elasticloadbalancing:${a}`);
    const grant = iam.Grant.addToPrincipal({ grantee, actions: reads, resourceArns: ['*'] })
      .combine(iam.Grant.addToPrincipal({ grantee, actions: [`elasticloadbalancing:${at.write}`], resourceArns: [at.arn] }));
    const authentication = grantListenerAuthentication(grantee, this.cognitoUserPools);
    return authentication ? grant.combine(authentication) : grant;
  }

  /** A class whose ScaledObject target is set (`targetRequestsPerReplicaPerPeriod`) away from the plan's (`overriddenTargetNote`). */
  private warnIfTargetOverridden(props: EksInferenceServiceProps): void {
    const period = (props.scaling?.metricPeriod ?? Duration.seconds(EKS_SCALING_DEFAULTS.metricPeriodSeconds)).toSeconds();
    this.classes.forEach((cls, i) => {
      const set = props.classOptions?.[cls.name]?.targetRequestsPerReplicaPerPeriod;
      const note = set === undefined ? undefined : overriddenTargetNote({
        subject: `class '${cls.name}'`, field: 'classOptions.targetRequestsPerReplicaPerPeriod', target: set,
        planned: this.plan.classes[i].targetRequestsPerSecondPerReplica * period, headroom: this.plan.headroom,
      });
      if (note) Annotations.of(this).addWarningV2(`cdk-capacity-aware-inference:eks-target-overridden-${cls.name}`, note);
    });
  }

  /** Contract, routing facts and signal producers, for the Reconciler and InferenceObservability. */
  public servingDescription(): ServingDescription {
    const scraped = this.signalProducers.scrapedMetrics;
    return {
      service: this.contract.name,
      tokensPerRequest: this.contract.requestShape.meanOutputTokens,
      latencySloP95Ms: this.contract.slo.deadlineMs,
      headroom: this.plan.headroom,
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
            capacityErrors: this.signalProducers.capacityErrorMetrics[u.cls.name],
            ...(tokens ? { generatedTokens: own(tokens, 'Sum') } : {}),
            // Scraped less often than every minute: the reconciler reads the counter over whole periods spanning it.
            ...(tokens && this.observability.scrapeIntervalSeconds > 60
              ? { generatedTokensIntervalSeconds: this.observability.scrapeIntervalSeconds } : {}),
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
      ...(this.listenerRule ? { ruleArn: this.listenerRule.listenerRuleArn } : {}),
      loadBalancerFullName: this.loadBalancerFullName,
      targets: this.units.map((u) => ({
        // Floors never ask for more than the ScaledObject may run (its maxReplicaCount: classOptions.maxReplicas or the plan's).
        class: routedClassFacts(u.cls, u.objects.scaledObject.spec.maxReplicaCount),
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

  /**
   * 5XX responses returned by a class's model servers: the overload sheds of vLLM, DJL LMI and Triton (503), not TGI's
   * (429, in `HTTPCode_Target_4XX_Count`; `rejectionStatusClass`).
   */
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
        LoadBalancer: this.loadBalancerFullName,
        TargetGroup: unit.targetGroup.targetGroupFullName,
        ...props?.dimensionsMap,
      },
    });
  }

  private unit(className: string): EksClassUnit {
    const unit = this.units.find((u) => u.cls.name === className);
    if (!unit) {
      const c = new Checker(EKS_RULES);
      c.cross('metric(className)', { className, declared: this.units.map((u) => u.cls.name) }, 'className');
      throwIfInvalid('EksInferenceService', this.node.path, c.problems);
    }
    return unit!;
  }


  /** Every problem of the props, once, as one error; the checked classes and their runtimes otherwise. */
  private checked(props: EksInferenceServiceProps, catalog: HardwareCatalog, shared: EksInferenceCluster | undefined) {
    const classOptions = props.classOptions ?? {};
    const image = props.modelDataFetcherImage;
    const region = Stack.of(this).region;
    // Missing (a JavaScript caller or a configuration file) is no classes: one problem with the others, not a TypeError.
    const specs = props.classes ?? [];
    const checked = checkCapacityClasses(specs, { catalog, contract: props.contract, platform: 'ec2', ...(Token.isUnresolved(region) ? {} : { region }) });
    const runtimes = new Map(checked.classes.map((cls) => [cls.name, eksRuntime(cls, props.contract, classOptions[cls.name]?.port ?? DEFAULT_PORT)]));
    const problems: ClassProblem[] = [
      ...checked.problems,
      ...eksProblems({
        service: props.contract.name,
        namespace: this.namespace,
        specs,
        classes: checked.classes,
        catalog,
        classOptions,
        scaling: props.scaling,
        loadBalancer: props.loadBalancer,
        amiAlias: props.amiAlias,
        ...(props.modelDataEncryptionKey ? { modelDataKey: modelDataKeyFacts(props.modelDataEncryptionKey) } : {}),
      }),
      ...(shared
        ? CLUSTER_SETTINGS.filter((p) => props[p] !== undefined).map((p) => ({
          field: p,
          message: `is a setting of the cluster, but the service attaches to EksInferenceCluster '${shared.node.path}'; allowed: unset (set it on the EksInferenceCluster)`,
        }))
        : clusterProblems({ ...props, cluster: props.cluster as eks.ICluster | undefined, clusterName: this.clusterName, stack: Stack.of(this) })),
      ...(shared ? shared.observability.capacityFilterProblems(specs.length) : []),
      ...listenerRuleProblems(props.listenerRule, props.loadBalancer),
      ...this.priorityProblems(props.listenerRule),
      ...fetcherImageProblems(image),
      ...fetcherToolProblems(checked.classes, image),
      ...checked.classes.flatMap((cls) => {
        const opts = classOptions[cls.name] ?? {};
        const fetch = modelFetchOf(cls, image);
        const cacheSize = sizeGibibytes(opts.modelCacheSize);
        return [
          ...runtimes.get(cls.name)!.problems,
          ...modelDataProblems(cls, image),
          ...modelCacheProblems(cls, fetch, cacheSize),
          ...nodeVolumeProblems(cls, opts, modelCacheGiB(cls, fetch, cacheSize), catalog, props.amiAlias ?? DEFAULT_AMI_ALIAS),
        ];
      }),
    ];
    throwIfInvalid('EksInferenceService', this.node.path, problems);
    for (const [name, runtime] of runtimes) {
      // One id per topic and class, so that acknowledging one class's accepted risk does not hide another's.
      for (const w of runtime.warnings) Annotations.of(this).addWarningV2(`cdk-capacity-aware-inference:${w.topic}-${name}`, w.message);
    }
    this.warnNvidiaDevicePlugin(props.amiAlias, checked.classes);
    this.warnIfWeightsConverted(checked.classes);
    for (const cls of checked.classes) {
      const ungated = props.artifactGate ? undefined : ungatedArtifactNote(cls, 'eks');
      if (ungated) Annotations.of(this).addWarningV2(`cdk-capacity-aware-inference:eks-artifact-ungated-${cls.name}`, ungated);
      const archive = modelDataNote(cls);
      if (archive) Annotations.of(this).addWarningV2(`cdk-capacity-aware-inference:eks-model-data-archive-${cls.name}`, archive);
      // The container's memory limit is its request (lib/eks/manifests/workload.ts), and its /dev/shm counts against it.
      const limit = podRequests(cls).memoryGiB;
      const memory = hostMemoryNote(cls.runtime.engine, cls.footprint.weightsGiB, limit - m.SHARED_MEMORY_GIB,
        `left by the model server's memory limit (${limit} GiB: three quarters of ${cls.instanceType}'s memory per replica) beside its ` +
        `${m.SHARED_MEMORY_GIB} GiB /dev/shm`);
      if (memory) Annotations.of(this).addWarningV2(`cdk-capacity-aware-inference:eks-host-memory-${cls.name}`, `Class '${cls.name}': ${memory}`);
    }
    this.warnProbePaths(classOptions, runtimes);
    return { classes: checked.classes, runtimes };
  }

  /**
   * Probe paths set on a class whose engine the library knows: the probes and the target group's health check then
   * ask the server for paths other than the ones its engine facts name (lib/core/runtime/engines.ts, with their
   * sources). A path the server does not answer with 200 keeps every pod from turning Ready (the startup probe restarts
   * it after `startupTimeout`) and the target group unhealthy; one it does answer (Triton's per-model readiness, say)
   * is valid, and the library cannot tell which from here, so a warning per class, not an error.
   */
  private warnProbePaths(classOptions: Readonly<Record<string, EksClassOptions>>, runtimes: ReadonlyMap<string, RuntimeBinding>): void {
    for (const [name, runtime] of runtimes) {
      if (runtime.engine === 'custom') continue;
      const opts = classOptions[name] ?? {};
      const set = [
        opts.healthPath !== undefined && opts.healthPath !== runtime.healthPath ? `healthPath '${opts.healthPath}'` : undefined,
        opts.readyPath !== undefined && opts.readyPath !== runtime.readyPath ? `readyPath '${opts.readyPath}'` : undefined,
        opts.warmup ? `warmup.path '${opts.warmup.path}'` : undefined,
      ].filter((x): x is string => x !== undefined);
      if (set.length === 0) continue;
      Annotations.of(this).addWarningV2(`cdk-capacity-aware-inference:eks-probe-paths-${name}`,
        `Class '${name}' runs ${runtime.engine}, whose server answers liveness at '${runtime.healthPath}' and readiness at `
        + `'${runtime.readyPath}', but classOptions sets ${set.join(', ')}. The startup, readiness and liveness probes and the target `
        + 'group\'s health check ask for these paths: one the server does not answer with 200 keeps every pod from turning Ready and '
        + `the class out of the load balancer. Leave them unset to use ${runtime.engine}'s own (a warm-up request is for servers of your `
        + 'own, engine \'custom\'), or acknowledge this warning once you have checked that the server answers them.');
    }
  }

  /**
   * A model server's termination grace (the deregistration delay, then the request deadline: `deadlineSeconds`) that
   * a delete cannot wait for: removing a class, or the service, deletes its Deployment and then its NodePool and
   * EC2NodeClass (and on destroy its Namespace), whose `kubectl delete` waits for the pods and the nodes inside
   * aws-eks-v2's kubectl handler. Past MAX_DRAIN_ON_DELETE_SECONDS the handler dies, CloudFormation waits an hour and
   * fails the delete. Valid settings, so a warning (the delay is an ALB setting of up to 3600 s).
   */
  private warnLongDrain(deregistrationDelaySeconds: number, routingProp: 'loadBalancer' | 'listenerRule'): void {
    const deadlineSeconds = this.deadlineSeconds();
    const grace = m.podTerminationGraceSeconds(deregistrationDelaySeconds, deadlineSeconds);
    if (grace <= MAX_DRAIN_ON_DELETE_SECONDS) return;
    Annotations.of(this).addWarningV2('cdk-capacity-aware-inference:eks-drain-exceeds-delete',
      `The model servers' termination grace is ${grace} s (${routingProp}.deregistrationDelay ${deregistrationDelaySeconds} s, then `
      + `contract.slo.deadlineMs ${deadlineSeconds} s), above the ${MAX_DRAIN_ON_DELETE_SECONDS} s a delete can wait: removing a class or the `
      + 'service, or destroying the stack, waits for the pods and their nodes inside the kubectl handler, which stops at '
      + `${KUBECTL_HANDLER_TIMEOUT_SECONDS} s, and CloudFormation then waits an hour and fails the delete. Keep the two at most `
      + `${MAX_DRAIN_ON_DELETE_SECONDS} s together, or delete the class's Deployment by hand and wait for its pods to end before the deploy `
      + 'that removes it (docs/eks-inference-service.md, "Removing a class or a service").');
  }

  /**
   * GPU classes on AL2023 nodes: "When using the EKS-optimized AL2023 AMIs with NVIDIA GPUs, you must install the
   * NVIDIA Kubernetes device plugin", while the Bottlerocket NVIDIA AMIs include it
   * (https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-k8s-device-plugin.html). The library installs no NVIDIA
   * plugin and cannot see one the user runs, so a warning (not an error) per class: without a plugin nothing advertises
   * `nvidia.com/gpu` and the class's pods stay Pending on nodes that run. Acknowledged once the plugin is installed. The
   * plugin must tolerate the library's SERVING_TAINT too: its chart's default tolerations are `CriticalAddonsOnly` and
   * `nvidia.com/gpu` Exists NoSchedule only (NVIDIA/k8s-device-plugin deployments/helm/nvidia-device-plugin/values.yaml
   * `tolerations`, read at 00f2a02c).
   */
  private warnNvidiaDevicePlugin(amiAlias: string | undefined, classes: readonly CapacityClass[]): void {
    if (amiAlias === undefined || amiFamily(amiAlias) !== 'al2023') return;
    for (const cls of classes.filter((c) => c.hardware.acceleratorKind === 'gpu')) {
      Annotations.of(this).addWarningV2(`cdk-capacity-aware-inference:eks-nvidia-device-plugin-${cls.name}`,
        `Class '${cls.name}' requests ${cls.hardware.kubernetesResourceName} on '${amiAlias}' nodes: the EKS-optimized AL2023 NVIDIA AMIs do not `
        + 'run the NVIDIA device plugin and the library does not install it, so without one on the cluster the class\'s pods stay Pending on '
        + 'nodes that run. Install the NVIDIA device plugin (https://github.com/NVIDIA/k8s-device-plugin), tolerating the nodes\' taints '
        + `${m.describeClassTaints('gpu')} (its chart tolerates only the second by default), `
        + 'and acknowledge this warning; or use a bottlerocket@ alias, '
        + 'whose NVIDIA variants include the plugin (docs/eks-inference-cluster.md, "Device plugins").');
    }
  }

  /**
   * Weights baked into the image (`runtime.modelPath`, an absolute path: the class checks refuse a hub id) are on the
   * server container's root filesystem, which the pod mounts read-only (`readOnlyRootFilesystem: true`,
   * lib/eks/manifests/workload.ts RESTRICTED): an engine that converts weights beside them at start (weights-conversion.ts)
   * cannot. Model data is fine: the init container, running as the server's uid, unpacks it into the model volume, an
   * emptyDir the server mounts writable (workload.ts MODEL_DATA_DIR, modelFetchContainer, deployment's volumeMounts).
   */
  private warnIfWeightsConverted(classes: readonly CapacityClass[]): void {
    for (const cls of classes) {
      const path = cls.runtime.modelPath;
      if (cls.artifact.modelData || path === undefined) continue;
      const note = readOnlyWeightsNote(cls.runtime.engine, `${path}, inside the image, whose root filesystem the pod mounts read-only`,
        'the server container restarts without end and no pod of the class turns Ready');
      if (note) Annotations.of(this).addWarningV2(`cdk-capacity-aware-inference:eks-weights-conversion-${cls.name}`, `Class '${cls.name}': ${note}`);
    }
  }

  /** Seconds an admitted request may still need: the contract's deadline, whole seconds (vLLM's --shutdown-timeout is 5 s less). */
  private deadlineSeconds(): number {
    return requestDeadlineSeconds(this.contract);
  }

  /** Two services of this app with one priority on one listener: the second deploy would fail (PriorityInUse). */
  private priorityProblems(rule: ListenerRuleOptions | undefined): ClassProblem[] {
    const holder = rule && Number.isInteger(rule.priority) ? takeListenerPriority(this, rule, this.node.path) : undefined;
    return holder === undefined ? [] : [{
      field: 'listenerRule.priority',
      message: `is ${rule!.priority}, which EksInferenceService '${holder}' already has on the same listener; allowed: a priority no other rule of the listener has`,
    }];
  }

  /** The namespace (restricted pods, ALB readiness gates), the default service account and KEDA's authentication. */
  private addNamespace() {
    const service = this.contract.name;
    const commonLabels = this.commonLabels();
    const ns = m.namespace(this.namespace, { ...commonLabels, 'elbv2.k8s.aws/pod-readiness-gate-inject': 'enabled' });
    const sa = m.serviceAccount(SERVING_SERVICE_ACCOUNT, this.namespace, commonLabels);
    const namespaceManifest = this.apply('Namespace', [ns, sa]);
    const triggerAuth = m.triggerAuthentication(`${service}-cloudwatch`, this.namespace, commonLabels);
    const triggerAuthenticationManifest = this.apply('TriggerAuthentication', [triggerAuth], namespaceManifest, ...this.inferenceCluster.kedaReady);
    return { namespaceManifest, triggerAuthenticationManifest, triggerAuthenticationName: triggerAuth.metadata.name, objects: [ns, sa, triggerAuth] };
  }

  private commonLabels(): Record<string, string> {
    return { 'app.kubernetes.io/part-of': this.contract.name, ...m.MANAGED_BY_LABELS };
  }

  private apply(id: string, objects: readonly m.KubernetesObject[], ...dependencies: IDependable[]): eks.KubernetesManifest {
    const manifest = new eks.KubernetesManifest(this, id, {
      cluster: this.cluster,
      manifest: objects.map((o) => o as unknown as Record<string, unknown>),
    });
    if (dependencies.length > 0) manifest.node.addDependency(...dependencies);
    return manifest;
  }

  /**
   * One class's objects, applied as four manifests in the order the controllers need: capacity after Karpenter's
   * CRDs; the Service and TargetGroupBinding before the pods, because the Load Balancer Controller injects the ALB
   * readiness gate only into pods created once a binding selects them (aws-load-balancer-controller
   * docs/deploy/pod_readiness_gate.md); the workload after its capacity, identity, artifact gate and admission
   * policy; the ScaledObject after KEDA and the workload.
   */
  private addClassUnit(u: {
    cls: CapacityClass;
    rank: number;
    opts: EksClassOptions;
    targetGroup: elbv2.ApplicationTargetGroup;
    deregistrationDelay: Duration;
    scaling: ScalingOptions;
    amiAlias: string;
    catalog: HardwareCatalog;
    runtime: RuntimeBinding;
    fetcherImage?: string;
    triggerAuthenticationName: string;
    gate?: IClassArtifactGate;
    admission?: ApprovedImagesAdmission;
    /** The controller's permission on this class's target group (its own policy), when this library grants it. */
    registration?: IDependable;
  }): EksClassUnit {
    const plan = this.plan.classes[u.rank];
    const c = this.inferenceCluster;
    const built = classUnitObjects({
      ...u,
      plan,
      service: this.contract.name,
      namespace: this.namespace,
      labels: this.commonLabels(),
      clusterName: this.clusterName,
      nodeRoleName: c.nodeRoleName,
      subnetSelectorTerms: nodeSubnetSelectorTerms(this.clusterName),
      deregistrationDelaySeconds: u.deregistrationDelay.toSeconds(),
      deadlineSeconds: this.deadlineSeconds(),
      periodSeconds: (u.scaling.metricPeriod ?? Duration.seconds(EKS_SCALING_DEFAULTS.metricPeriodSeconds)).toSeconds(),
      load: {
        loadBalancerFullName: this.loadBalancerFullName,
        targetGroupFullName: u.targetGroup.targetGroupFullName,
        region: Stack.of(this).region,
      },
      targetGroupArn: u.targetGroup.targetGroupArn,
      vpcId: this.vpc.vpcId,
    });
    this.scaledObjectInputs.set(u.cls.name, built.scaledObjectInput);
    const o = built.objects;
    const name = u.cls.name;
    // A Neuron class's nodes are launched only once its device plugin is installed: a node without it never offers
    // aws.amazon.com/neuroncore, and a failing install then fails the deployment before any instance runs.
    const plugin = u.cls.hardware.acceleratorKind === 'neuron' ? c.neuronDevicePluginReady : [];
    const capacity = this.apply(`Capacity-${name}`, [o.nodeClass, o.nodePool], ...c.karpenterReady, ...plugin);
    // After its own target group's policy, which is then removed after it (LoadBalancerController.targetGroupPolicy).
    const binding = this.apply(`Binding-${name}`, [o.service, o.targetGroupBinding], this.namespaceManifest, ...c.loadBalancerControllerReady,
      ...(u.registration ? [u.registration] : []));
    const workloadDeps: IDependable[] = [this.namespaceManifest, capacity, binding, ...c.loadBalancerControllerReady];
    // The whole identity, not the role alone: EKS gives a pod its credentials when the pod is admitted, if the service
    // account's association exists by then (CreatePodIdentityAssociation: "Amazon EKS sets environment variables" in
    // pods that use it), and a pod's environment never changes: one admitted earlier fetches nothing, ever.
    const identity = this.servingIdentities[name];
    if (identity) workloadDeps.push(identity);
    const gate = u.gate?.gateFor(this, u.cls);
    if (gate) workloadDeps.push(gate);
    if (u.admission) {
      workloadDeps.push(u.admission);
      // The approved images change only once the artifacts they name are verified: a check that fails leaves the
      // policy that admits what runs now.
      if (gate) u.admission.node.addDependency(gate);
    }
    const workload = this.apply(
      `Workload-${name}`,
      [...(o.serviceAccount ? [o.serviceAccount] : []), o.priorityClass, o.deployment, o.podDisruptionBudget],
      ...workloadDeps,
    );
    const scaler = this.apply(`Scaler-${name}`, [o.scaledObject], ...c.kedaReady, this.triggerAuthenticationManifest, workload);
    return {
      cls: u.cls,
      plan,
      nodePoolName: built.nodePoolName,
      deploymentName: built.name,
      targetGroup: u.targetGroup,
      objects: o,
      manifests: { capacity, workload, scaler, binding },
    };
  }
}

/**
 * The pod identity of one class with model data: it may read its own object only, and with a pinned version only
 * that version (s3:GetObjectVersion bound by the s3:VersionId condition key).
 */
function modelDataIdentity(
  scope: EksInferenceService, cluster: eks.ICluster, ns: string, cls: CapacityClass, key: kms.IKey | undefined,
): PodIdentityRole | undefined {
  const data = cls.artifact.modelData;
  if (!data) return undefined;
  // Read as the init container reads it (modelFetchOf): a bucket given as a token stays one in the ARN, which CloudFormation resolves.
  const location = parseS3Object(data.uri);
  if (!location) throw new Error(`internal: class ${cls.name}'s model data '${data.uri}' passed the checks without being one S3 object`);
  const object = `arn:${Stack.of(scope).partition}:s3:::${location.bucket}/${location.key}`;
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
      ...(key ? [modelDataDecryptStatement(scope, key)] : []),
    ],
  });
  return identity;
}

