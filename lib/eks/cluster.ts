import { Annotations, Names, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import type * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct, type IDependable } from 'constructs';
import { type KarpenterPods } from '../core/metrics/karpenter-capacity';
import { OBSERVABILITY_ADDON_NAME } from '../core/metrics/template-check';
import { type ClassProblem } from '../core/service/checks';
import { DEFAULT_SYSTEM_NODE_COUNT, M7I_LARGE, type NodeShape, systemNodeProblems } from '../core/platform/system-nodes';
import { Checker } from '../core/validation/checker';
import { ConstructValidationError, throwIfInvalid } from '../core/validation/error';
import { EKS_RULES } from '../core/validation/rules';
import { ApprovedImagesAdmission } from '../trust/admission-policy';
import { EnvironmentClaims } from '../util/environment-key';
import { newLogGroupKey } from '../util/log-encryption';
import { acknowledgeManagedPolicies, acknowledgeNistRules, acknowledgeRule, acknowledgeWildcardResources } from '../util/nag';
import { clusterProblems } from './checks';
import { newClusterVpc } from './cluster-vpc';
import { Karpenter } from './karpenter';
import { Keda } from './keda';
import { controllerInlinePolicyChars, ROLE_INLINE_POLICY_CHARS } from './controller-policy-size';
import { LoadBalancerController } from './load-balancer-controller';
import { NeuronDevicePlugin, neuronDevicePluginImage } from './neuron-device-plugin';
import { EksObservability, type ObservabilityOptions } from './observability-addon';
import {
  endpointAccessProblems, isolatedNodeSubnets, isolatedSubnetEndpointProblems, type IsolatedSubnetEndpoints, warnNeuronDevicePluginImage,
  warnPublicEndpoint,
} from './isolated-subnets';
import { describeClassTaints } from './manifests/karpenter';
import { nodeSubnets, tagNodeSubnets } from './subnet-discovery';
import { type ChartSpec, KARPENTER_CHART, KEDA_CHART, LOAD_BALANCER_CONTROLLER_CHART, NEURON_DEVICE_PLUGIN_CHART } from './versions';

export { DISCOVERY_TAG } from './subnet-discovery';

/** Chart versions to use instead of the pinned ones (exact semantic versions). */
export interface ChartVersions {
  /** @default KARPENTER_CHART.version */
  readonly karpenter?: string;
  /** @default KEDA_CHART.version */
  readonly keda?: string;
  /** @default LOAD_BALANCER_CONTROLLER_CHART.version */
  readonly loadBalancerController?: string;
  /** @default NEURON_DEVICE_PLUGIN_CHART.version */
  readonly neuronDevicePlugin?: string;
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
  /**
   * Nodes for the controllers, the add-on's operator and agents and the model-server scraper (Karpenter cannot run on
   * nodes it manages, and the scraper is kept off them). Their requests, per pinned chart: SYSTEM_NODE_PODS.
   * @default m7i.large
   */
  readonly systemNodeInstanceType?: ec2.InstanceType;
  /**
   * How many system nodes. With m7i.large, fewer than 3 cannot be sure to hold every system pod and a rolling update
   * (a warning says so at synth): a pod that finds no node stays Pending, and a Pending scraper drops the token counters.
   * @default 3
   */
  readonly systemNodeCount?: number;
  /** Key that encrypts Kubernetes secrets. @default - a new key with rotation */
  readonly secretsEncryptionKey?: kms.IKey;
}

/** Karpenter runs on the cluster already (v1, with its CRDs). */
export interface ExistingKarpenter {
  /**
   * Name of the IAM role of the nodes it launches (each EC2NodeClass's `spec.role`); it needs an EC2_LINUX access
   * entry on the cluster, as the one this construct creates.
   */
  readonly nodeRoleName: string;
  /**
   * Where its controller runs: the capacity-error filters count only its pods' log lines.
   * @default - KARPENTER_PODS: namespace kube-system, pods `karpenter-*`, container `controller` (the chart's defaults as this library installs it)
   */
  readonly pods?: KarpenterPods;
}

/** The AWS Load Balancer Controller runs on the cluster already (with the TargetGroupBinding CRD and its pod webhook). */
export interface ExistingLoadBalancerController {
  /**
   * The controller's role: this construct then lets it register pods in exactly the services' target groups (one
   * inline policy per target group).
   * @default - no grant: the controller's own policy must allow elasticloadbalancing:RegisterTargets on them
   */
  readonly role?: iam.IRole;
  /**
   * Characters the role's own inline policies take already (JSON without whitespace, as IAM counts them). IAM caps a
   * role's inline policies at 10,240 characters in all, and this construct adds one per target group of every service
   * (`LoadBalancerController.targetGroupPolicy`): a service that would pass the cap fails at synth. A role with managed
   * policies only (the upstream install) takes 0; a role made by aws-eks's `AlbController` holds the whole upstream
   * policy inline, about 5,200.
   * @default 0
   */
  readonly roleInlinePolicyChars?: number;
}

/** Controllers an imported cluster runs already: each one given is not installed. */
export interface ExistingControllers {
  readonly karpenter?: ExistingKarpenter;
  /**
   * KEDA runs already, and its operator's identity may call cloudwatch:GetMetricData (the services' TriggerAuthentications
   * use `podIdentity: { provider: aws, identityOwner: keda }`).
   * @default false
   */
  readonly keda?: boolean;
  /**
   * The version of the KEDA that runs already (with `keda: true`), e.g. `2.20.2`: checked to support what the
   * library's ScaledObjects use, `fallback.behavior` (added in KEDA 2.17.0; an older CRD prunes the field, and the
   * fallback then drops to the static replica count instead of holding the current one).
   * @default - not checked (make sure it is 2.17.0 or later)
   */
  readonly kedaVersion?: string;
  readonly loadBalancerController?: ExistingLoadBalancerController;
  /**
   * A Neuron device plugin runs already on the cluster's Inferentia and Trainium nodes (it advertises
   * `aws.amazon.com/neuroncore`): the chart is not installed. It must tolerate the class nodes' taints,
   * `capacity-aware-inference/serving` and `aws.amazon.com/neuron` (a synth warning says so).
   * @default false
   */
  readonly neuronDevicePlugin?: boolean;
}

/**
 * The settings of a cluster the library builds or imports itself: an EksInferenceCluster's, and an
 * EksInferenceService's when it has a cluster of its own (with an EksInferenceCluster they belong to it, and the
 * service refuses them).
 */
export interface ClusterSettings {
  /**
   * Literal cluster name (IAM conditions and Karpenter discovery tags need it at synth).
   * @default - the imported cluster's name, or a name generated from the construct path
   */
  readonly clusterName?: string;
  /** Settings of a new cluster (not with an imported one). @default - see NewClusterOptions */
  readonly clusterOptions?: NewClusterOptions;
  /**
   * VPC of a new cluster.
   * @default - a new VPC with 3 AZs, one NAT gateway, flow logs to a KMS-encrypted log group, the default security group closed
   */
  readonly vpc?: ec2.IVpc;
  /**
   * The subnets of the cluster's VPC its Karpenter nodes go to: the construct tags these (and only these) for the
   * EC2NodeClasses' subnet selection. In a VPC with several private tiers, name the tier (e.g.
   * `{ subnetGroupName: 'app' }`): Karpenter takes, of the selected subnets of a zone, the one with the most free
   * addresses, so by default nodes may land in a data tier. Subnets tagged `karpenter.sh/discovery=<cluster name>` by
   * hand stay selected. Narrowing it on a deployed cluster replaces the nodes in the subnets left out (Karpenter's
   * subnet drift).
   * @default - the VPC's private subnets with egress
   */
  readonly nodeSubnets?: ec2.SubnetSelection;
  /**
   * How isolated node subnets (`ec2.SubnetType.PRIVATE_ISOLATED`, no NAT) reach the AWS services their nodes call.
   * `'in-vpc'`: through the VPC's own endpoints, checked at synth when the VPC is an `ec2.Vpc` of this app: one the nodes
   * need to join (ec2, ecr.api, ecr.dkr, s3) missing fails synth, one a feature needs (eks-auth, logs) warns
   * (docs/eks-inference-cluster.md, "Isolated node subnets"). `'elsewhere'`: through endpoints outside the VPC (a shared
   * endpoint VPC reached over Transit Gateway, say), not checked. Subnets of an imported VPC are never checked.
   * @default 'in-vpc'
   */
  readonly isolatedSubnetEndpoints?: IsolatedSubnetEndpoints;
  /**
   * The kubectl/helm Lambda layer of a new cluster, matching its Kubernetes version, e.g.
   * `new KubectlV34Layer(this, 'Kubectl')` from `@aws-cdk/lambda-layer-kubectl-v34`. Required for a new cluster. Not
   * bundled, so that a SageMaker-only user does not install the 36 MB layer.
   */
  readonly kubectlLayer?: lambda.ILayerVersion;
  /** Chart versions. @default - the pinned versions in versions.ts */
  readonly chartVersions?: ChartVersions;
  /**
   * The producers of the control loop's cluster signals: the amazon-cloudwatch-observability add-on (or one you run
   * already: `existingAddon`) and its log groups. Each service adds its classes' filters and scrape.
   * @default - install the add-on with the defaults of ObservabilityOptions
   */
  readonly observability?: ObservabilityOptions;
  /**
   * Install the Neuron device plugin (the pinned `neuron-helm-chart`, device plugin only, NEURON_DEVICE_PLUGIN_CHART)
   * when the first service with a Neuron class attaches: the EKS-optimized Bottlerocket and AL2023 AMIs do not run
   * it, and without it a Neuron node never advertises `aws.amazon.com/neuroncore`. A cluster with no Neuron class
   * gets no chart. `false` installs nothing: a service with a Neuron class then fails at synth, unless an imported
   * cluster marks its own plugin in `existingControllers.neuronDevicePlugin`.
   * @default true
   */
  readonly neuronDevicePlugin?: boolean;
  /**
   * The Neuron device plugin's image, mirrored into a private ECR repository and pinned by digest:
   * `<account>.dkr.ecr.<region>.amazonaws.com/<repository>@sha256:<64 hex>` (e.g. an ECR Public pull through cache
   * repository of the cluster's region, `.../ecr-public/neuron/neuron-device-plugin@sha256:...`). The chart's own image
   * is on ECR Public, which no VPC endpoint serves: on isolated node subnets this is how the plugin starts. The image
   * must be the device plugin release the pinned chart runs (2.31.0.0 for chart 1.9.0). The Karpenter node role this
   * construct creates is granted pulls from exactly that repository; another account's repository must also allow
   * the role in its repository policy, and with `existingControllers.karpenter` the nodes' own role must be able to pull.
   * Only with the pinned chart version, on a cluster that installs the plugin.
   * @default - the image the chart pins, `public.ecr.aws/neuron/neuron-device-plugin:2.31.0.0`
   */
  readonly neuronDevicePluginImage?: string;
}

/** The names of ClusterSettings, for the service that must refuse them next to an EksInferenceCluster. */
export const CLUSTER_SETTINGS = [
  'clusterName', 'clusterOptions', 'vpc', 'nodeSubnets', 'isolatedSubnetEndpoints', 'kubectlLayer', 'chartVersions', 'observability',
  'neuronDevicePlugin', 'neuronDevicePluginImage',
] as const satisfies
  ReadonlyArray<keyof ClusterSettings>;

export interface EksInferenceClusterProps extends ClusterSettings {
  /**
   * An existing cluster: `eks.Cluster.fromClusterAttributes` (aws-cdk-lib/aws-eks-v2) with `vpc`,
   * `clusterSecurityGroupId` and `kubectlProvider: eks.KubectlProvider.fromKubectlProviderAttributes(...)`
   * (`kubectlProviderOptions` is ignored for an imported cluster). It must run the EKS Pod Identity agent.
   * @default - a new cluster
   */
  readonly cluster?: eks.ICluster;
  /**
   * Controllers an imported cluster runs already (not installed again).
   * @default - install all three, and the Neuron device plugin once a Neuron class attaches
   */
  readonly existingControllers?: ExistingControllers;
  /**
   * Admit only the approved image digests in each service namespace: a ValidatingAdmissionPolicy per namespace
   * (`approved-images-<namespace>`) allowing the service's class images, its model-data fetcher and its
   * `additionalApprovedImages` (sidecars a mutating webhook injects, each by digest), in force before the service's
   * pods are created.
   * @default false
   */
  readonly approvedImagesAdmission?: boolean;
}

/** What a service tells the cluster when it attaches. */
export interface ClusterTenant {
  /** Construct path of the service (for messages). */
  readonly path: string;
  /** The contract name: the `Service` metric dimension, unique on the cluster. */
  readonly service: string;
  readonly namespace: string;
  /** Cluster-scoped names the service creates (NodePools, EC2NodeClasses and PriorityClasses share them). */
  readonly clusterScopedNames: readonly string[];
  /** Every image the service's pods run (for the admission policy). */
  readonly images: readonly string[];
  /**
   * The service's `additionalApprovedImages`: images its pods run besides its own (injected sidecars), approved like
   * `images`. @default - none
   */
  readonly additionalImages?: readonly string[];
  /** The service's Neuron classes and their instance types (they need the Neuron device plugin). @default - none */
  readonly neuronClasses?: ReadonlyArray<{ readonly name: string; readonly instanceTypes: readonly string[] }>;
  /** The service's classes whose NodePools may launch spot instances. @default - none */
  readonly spotClasses?: readonly string[];
}

/** What the cluster gives an attached service. */
export interface ClusterAttachment {
  /** The namespace's admission policy, when the cluster has one: the service's pods wait for it. */
  readonly admission?: ApprovedImagesAdmission;
}

/**
 * One EKS cluster for many inference services: a new cluster (VPC, private endpoint, encrypted secrets, control-plane
 * logs) or an imported one, with what every service needs installed once: Karpenter, KEDA, the AWS Load Balancer
 * Controller, the Neuron device plugin (once a service with a Neuron class attaches), the
 * amazon-cloudwatch-observability add-on with its log groups, and (optionally) an approved-images
 * admission policy per service namespace. Controllers an imported cluster already runs are marked in
 * `existingControllers` and not installed. `EksInferenceService`s attach to it with their `cluster` prop; names they
 * create cluster-wide (NodePools, PriorityClasses, namespaces) are checked not to collide.
 */
export class EksInferenceCluster extends Construct {
  public readonly cluster: eks.ICluster;
  public readonly clusterName: string;
  public readonly vpc: ec2.IVpc;
  /** The subnets tagged for the cluster's Karpenter nodes (`nodeSubnets`): the zones a class may be held to. */
  public readonly nodeSubnets: readonly ec2.ISubnet[];
  /** Undefined when the cluster runs Karpenter already. */
  public readonly karpenter?: Karpenter;
  /** Undefined when the cluster runs KEDA already. */
  public readonly keda?: Keda;
  /** Undefined when the cluster runs the controller already. */
  public readonly loadBalancerController?: LoadBalancerController;
  /**
   * The Neuron device plugin chart: created when the first service with a Neuron class attaches, undefined until
   * then, and always with `neuronDevicePlugin: false` or `existingControllers.neuronDevicePlugin`.
   */
  public get neuronDevicePlugin(): NeuronDevicePlugin | undefined {
    return this.neuronPlugin;
  }
  /** The add-on, its log groups and (added by the services) the per-NodePool filters and the scrape. */
  public readonly observability: EksObservability;
  /** Role of the nodes Karpenter launches (each EC2NodeClass's `spec.role`). */
  public readonly nodeRoleName: string;
  private readonly existingLbcRole?: iam.IRole;
  private readonly existingLbcPolicyChars: number = 0;
  private readonly tenants: ClusterTenant[] = [];
  /** Target groups the controller's role has a policy for, over every attached service. */
  private targetGroups = 0;
  private readonly admissionEnabled: boolean;
  private neuronPlugin?: NeuronDevicePlugin;
  /** The Neuron classes the installed plugin is for, as `'<class>' of <service path>`. */
  private readonly neuronPluginClasses: string[] = [];
  /** How Neuron nodes get their device plugin: this construct installs it, the cluster runs one, or neither. */
  private readonly neuronPluginSource: 'install' | 'existing' | 'none';
  private readonly neuronPluginChart: ChartSpec;
  /** `neuronDevicePluginImage`: a private ECR mirror of the plugin's image, or the chart's own. */
  private readonly neuronPluginImage?: string;
  private readonly systemNodes?: IDependable;

  constructor(scope: Construct, id: string, props: EksInferenceClusterProps = {}) {
    super(scope, id);
    this.clusterName = props.clusterName ?? props.cluster?.clusterName ?? Names.uniqueResourceName(this, { maxLength: 100, separator: '-', allowedSpecialCharacters: '-' });
    const problems = clusterProblems({ ...props, clusterName: this.clusterName, stack: Stack.of(this) });
    if (problems.length > 0) throw invalid(this, problems);
    this.admissionEnabled = props.approvedImagesAdmission ?? false;

    if (props.cluster) {
      this.cluster = props.cluster;
      this.vpc = props.cluster.vpc;
    } else {
      this.vpc = props.vpc ?? newClusterVpc(this);
      this.cluster = newCluster(this, this.clusterName, this.vpc, props.clusterOptions ?? {}, props.kubectlLayer!);
    }
    this.nodeSubnets = selectedNodeSubnets(this, this.vpc, props.nodeSubnets);
    tagNodeSubnets(this, this.nodeSubnets, this.clusterName);
    // Fixed once the subnets are selected: an in-app VPC's isolated subnets are known at its construction.
    const isolated = isolatedNodeSubnets(this.vpc, this.nodeSubnets);
    if (!props.cluster) {
      // EndpointAccess.PUBLIC is the only value without private access: the constructor is private and PUBLIC.onlyFrom()
      // throws ("Cannot restric public access to endpoint when private access is disabled"), aws-cdk-lib 2.269.0
      // aws-eks-v2/lib/cluster.d.ts:490,508 and cluster.js EndpointAccess.onlyFrom. Its settings are @internal (`_config`).
      const publicOnly = props.clusterOptions?.endpointAccess === eks.EndpointAccess.PUBLIC;
      if (props.isolatedSubnetEndpoints === 'elsewhere') {
        if (publicOnly) warnPublicEndpoint(this, isolated);
      } else {
        const problems = endpointAccessProblems(isolated, !publicOnly);
        if (problems.length > 0) throw invalid(this, problems);
      }
    }
    if (props.isolatedSubnetEndpoints !== 'elsewhere') {
      // At synth: the VPC's endpoints may be added after the cluster.
      this.node.addValidation({
        validate: () => {
          // Under 'elsewhere' not warned: the subnets may reach the internet outside the VPC (warnNeuronDevicePluginImage).
          if (this.neuronPlugin) {
            const image = neuronDevicePluginImage(this.neuronPluginChart, this.neuronPluginImage);
            warnNeuronDevicePluginImage(this, isolated, this.neuronPluginClasses, image, this.neuronPluginImage !== undefined);
          }
          const problems = isolatedSubnetEndpointProblems(this, this.vpc, isolated);
          return problems.length === 0 ? [] : [invalid(this, problems).message];
        },
      });
    }

    const existing = props.existingControllers ?? {};
    const versions = props.chartVersions ?? {};
    if (existing.karpenter) {
      this.nodeRoleName = existing.karpenter.nodeRoleName;
    } else {
      this.karpenter = new Karpenter(this, 'Karpenter', { cluster: this.cluster, clusterName: this.clusterName, chart: withVersion(KARPENTER_CHART, versions.karpenter) });
      this.nodeRoleName = this.karpenter.nodeRole.roleName;
    }
    if (!existing.keda) this.keda = new Keda(this, 'Keda', { cluster: this.cluster, chart: withVersion(KEDA_CHART, versions.keda) });
    if (existing.loadBalancerController) {
      this.existingLbcRole = existing.loadBalancerController.role;
      this.existingLbcPolicyChars = existing.loadBalancerController.roleInlinePolicyChars ?? 0;
    } else {
      this.loadBalancerController = new LoadBalancerController(this, 'LoadBalancerController', {
        cluster: this.cluster,
        clusterName: this.clusterName,
        vpcId: this.vpc.vpcId,
        chart: withVersion(LOAD_BALANCER_CONTROLLER_CHART, versions.loadBalancerController),
      });
    }
    // The controllers run on the system nodes: their charts wait for ready pods when installed, and must be removed
    // before the nodes on destroy, while Karpenter and the Load Balancer Controller can still clear the finalizers of
    // NodeClaims, EC2NodeClasses and TargetGroupBindings (aws-eks-v2 orders its own ALB controller after a node group
    // the same way: managed-nodegroup.js, `Node.of(this.cluster.albController).addDependency(this)`).
    this.systemNodes = props.cluster ? undefined : this.cluster.node.tryFindChild(`Nodegroup${SYSTEM_NODES}`);
    if (this.systemNodes) {
      for (const chart of [this.karpenter?.chart, this.keda?.chart, this.loadBalancerController?.chart]) chart?.node.addDependency(this.systemNodes);
    }
    this.neuronPluginSource = existing.neuronDevicePlugin ? 'existing' : props.neuronDevicePlugin === false ? 'none' : 'install';
    this.neuronPluginChart = withVersion(NEURON_DEVICE_PLUGIN_CHART, versions.neuronDevicePlugin);
    this.neuronPluginImage = props.neuronDevicePluginImage;
    this.observability = new EksObservability(this, 'Observability', {
      ...props.observability,
      cluster: this.cluster,
      clusterName: this.clusterName,
      karpenterPods: existing.karpenter?.pods,
    });
    // Read from what was built: the add-on's log groups are created unless they or the add-on exist (EksObservability).
    const creates = this.observability.node.findAll().some((c) => c instanceof logs.CfnLogGroup);
    const installs = [
      ...(this.karpenter ? [INSTALLS.karpenter] : []),
      ...(this.keda ? [INSTALLS.keda] : []),
      ...(this.loadBalancerController ? [INSTALLS.loadBalancerController] : []),
      ...(this.observability.addon ? [INSTALLS.addon] : []),
      ...(creates ? [props.observability?.existingAddon ? INSTALLS.applicationLogGroup : INSTALLS.logGroups] : []),
    ];
    const held = this.heldInstalls(installs, props.cluster ? 'cluster' : 'clusterName');
    if (held.length > 0) throw invalid(this, held);
    for (const install of installs) INSTALLED_ON.claim(this, this.installKey(install));
  }

  /** What NodePools and EC2NodeClasses wait for: Karpenter's chart (its CRDs), when this construct installs it. */
  public get karpenterReady(): readonly IDependable[] {
    return this.karpenter ? [this.karpenter.chart] : [];
  }

  /** What ScaledObjects and TriggerAuthentications wait for. */
  public get kedaReady(): readonly IDependable[] {
    return this.keda ? [this.keda.chart] : [];
  }

  /** What TargetGroupBindings (and pods, for the readiness-gate webhook) wait for. */
  public get loadBalancerControllerReady(): readonly IDependable[] {
    return this.loadBalancerController ? [this.loadBalancerController.chart] : [];
  }

  /**
   * What the NodePools of Neuron classes wait for: the Neuron device plugin's chart, when this construct installs it
   * (and a service with a Neuron class has attached).
   */
  public get neuronDevicePluginReady(): readonly IDependable[] {
    return this.neuronPlugin ? [this.neuronPlugin.chart] : [];
  }

  /** Services attached so far. */
  public get services(): readonly ClusterTenant[] {
    return this.tenants;
  }

  /**
   * Registers a service: its contract name, namespace and cluster-scoped names must be unique on the cluster (two
   * services would otherwise overwrite each other's objects, or share a metric `Service` dimension).
   */
  public attach(scope: Construct, tenant: ClusterTenant): ClusterAttachment {
    const problems: ClassProblem[] = [];
    for (const other of this.tenants) {
      if (other.service === tenant.service) {
        problems.push({ field: 'contract.name', message: `'${tenant.service}' is also the service of ${other.path} on this cluster; allowed: a name unique on the cluster` });
      }
      if (other.namespace === tenant.namespace) {
        problems.push({ field: 'namespace', message: `'${tenant.namespace}' is also the namespace of ${other.path}; allowed: one namespace per service` });
      }
      const shared = tenant.clusterScopedNames.filter((n) => other.clusterScopedNames.includes(n));
      if (shared.length > 0) {
        problems.push({
          field: 'classOptions.nodePoolName',
          message: `${shared.map((n) => `'${n}'`).join(', ')} also named by ${other.path}; allowed: names unique on the cluster (NodePools and PriorityClasses are cluster-wide)`,
        });
      }
    }
    const neuron = tenant.neuronClasses ?? [];
    // Claimed with the chart, which the first Neuron class of any service on this construct creates.
    if (neuron.length > 0 && this.neuronPluginSource === 'install' && !this.neuronPlugin) {
      problems.push(...this.heldInstalls([INSTALLS.neuronDevicePlugin], 'classes'));
    }
    if (neuron.length > 0 && this.neuronPluginSource === 'none') {
      problems.push({
        field: 'classes',
        message: `${neuron.map((c) => `'${c.name}'`).join(', ')} request aws.amazon.com/neuroncore, but the cluster ${this.node.path} has `
          + 'neuronDevicePlugin: false and no existingControllers.neuronDevicePlugin: nothing would advertise the resource, and the pods would stay '
          + 'Pending on Neuron nodes that run; allowed: neuronDevicePlugin unset or true (the pinned Neuron device plugin chart is installed), '
          + 'or, on an imported cluster that runs a Neuron device plugin, existingControllers.neuronDevicePlugin: true',
      });
    }
    if (tenant.additionalImages !== undefined) {
      const c = new Checker(EKS_RULES);
      c.cross('additionalApprovedImages', { images: tenant.additionalImages, cluster: this.node.path, admission: this.admissionEnabled });
      problems.push(...c.problems);
    }
    // The service's own error: it cannot attach to EksInferenceCluster this.node.path.
    throwIfInvalid('EksInferenceService', tenant.path, problems);
    if (neuron.length > 0 && this.neuronPluginSource === 'existing') {
      // The plugin is the user's, so the library cannot give it the serving taint's toleration; the Neuron chart's default
      // tolerations leave it out (aws-neuron/neuron-helm-charts@b77a6f90 values.yaml devicePlugin.tolerations, review
      // R234), and then a class node never advertises aws.amazon.com/neuroncore: its pods stay Pending, silently.
      const taints = describeClassTaints('neuron');
      Annotations.of(this).addWarningV2('cdk-capacity-aware-inference:eks-existing-neuron-device-plugin',
        `${neuron.map((c) => `'${c.name}'`).join(', ')} of ${tenant.path} run on nodes tainted ${taints}, and existingControllers.neuronDevicePlugin marks `
        + 'a Neuron device plugin of your own as running: it must tolerate both taints (the Neuron chart\'s default tolerations leave out the '
        + 'first), or those nodes never advertise aws.amazon.com/neuroncore and the pods stay Pending. Add the tolerations to its DaemonSet '
        + '(docs/eks-inference-cluster.md, "Device plugins") and acknowledge this warning.');
    }
    this.tenants.push(tenant);
    // An existing Karpenter's role is the user's: docs/eks-inference-cluster.md says what it needs for spot.
    if ((tenant.spotClasses ?? []).length > 0) this.karpenter?.allowSpotCapacity();
    if (neuron.length > 0 && this.neuronPluginSource === 'install') {
      this.installNeuronDevicePlugin(neuron.flatMap((c) => c.instanceTypes));
      this.neuronPluginClasses.push(...neuron.map((c) => `'${c.name}' of ${tenant.path}`));
    }
    if (!this.admissionEnabled) return {};
    const admission = new ApprovedImagesAdmission(scope, 'Admission', {
      cluster: this.cluster,
      namespace: tenant.namespace,
      // A sidecar image may also be a class's: approved once.
      images: [...new Set([...tenant.images, ...tenant.additionalImages ?? []])],
    });
    return { admission };
  }

  /**
   * Lets the Load Balancer Controller register pods in a service's target groups (and no others): one `iam.Policy`
   * per target group (`<scope>/LoadBalancerControllerTargets-<name>`, `LoadBalancerController.targetGroupPolicy`)
   * attached to the controller's role, keyed by the names given (the service's class names). The policies are in the
   * service's scope, so a service in another stack refers to the cluster's stack only (the cluster's stack referring to
   * the service's target groups, while the service's manifests refer to the cluster, is a cycle CDK refuses), and a
   * removed class or service removes its own policies, after the TargetGroupBindings that depend on them. Returns
   * them by name (each class's TargetGroupBinding waits for its own), none when nothing runs the controller.
   */
  public allowTargetGroups(scope: Construct, targetGroupArns: Readonly<Record<string, string>>): Readonly<Record<string, iam.Policy>> {
    const role = this.loadBalancerController?.role ?? this.existingLbcRole;
    if (!role) return {};
    const names = Object.keys(targetGroupArns);
    this.checkRegistrations(scope, names.length);
    return Object.fromEntries(names.map((name) => {
      const policy = LoadBalancerController.targetGroupPolicy(scope, name, role, targetGroupArns[name]);
      // Created after the controller's own policy is updated: a stack deployed when that policy named every target
      // group drops them there first, so the role never holds both (IAM refuses a role's inline policies past
      // ROLE_INLINE_POLICY_CHARS in all), at the cost of a minute or so in which the controller cannot register pods
      // (it retries). Across stacks this is the stack dependency the service has anyway. An existing controller role's
      // old shared policy goes only in cleanup (CHANGELOG, upgrade note).
      if (this.loadBalancerController) policy.node.addDependency(this.loadBalancerController.policy);
      return [name, policy];
    }));
  }

  /**
   * Creates the Neuron device plugin chart on the first Neuron class, like the other controller charts (after the
   * system node group, removed before it), and lets its DaemonSet run on the classes' instance types.
   */
  private installNeuronDevicePlugin(instanceTypes: readonly string[]): void {
    if (!this.neuronPlugin) {
      INSTALLED_ON.claim(this, this.installKey(INSTALLS.neuronDevicePlugin));
      this.neuronPlugin = new NeuronDevicePlugin(this, 'NeuronDevicePlugin', {
        cluster: this.cluster,
        chart: this.neuronPluginChart,
        image: this.neuronPluginImage,
        // The DaemonSet runs on Neuron nodes only, which Karpenter launches with this role (an existing Karpenter's role is not the library's).
        pullRole: this.karpenter?.nodeRole,
      });
      if (this.systemNodes) this.neuronPlugin.chart.node.addDependency(this.systemNodes);
    }
    this.neuronPlugin.addInstanceTypes(instanceTypes);
  }

  /** The name under which `install` is claimed on this cluster in its account and Region (`INSTALLED_ON`). */
  private installKey(install: ClusterInstall): string {
    return `${this.clusterName}/${install.name}`;
  }

  /**
   * `cluster@environment`: of `installs`, those another EksInferenceCluster of this app installs on the same cluster
   * name in the same account and Region, one problem per holder under `field`.
   */
  private heldInstalls(installs: readonly ClusterInstall[], field: string): ClassProblem[] {
    const held = new Map<string, { where: string; installs: ClusterInstall[] }>();
    for (const install of installs) {
      const at = INSTALLED_ON.find(this, this.installKey(install));
      if (at?.claimedBy === undefined || at.claimedBy === this.node.path) continue;
      const entry = held.get(at.claimedBy) ?? { where: at.where, installs: [] };
      held.set(at.claimedBy, { ...entry, installs: [...entry.installs, install] });
    }
    const c = new Checker(EKS_RULES);
    for (const [installedBy, { where, installs: both }] of held) {
      c.cross('cluster@environment', { clusterName: this.clusterName, where, installs: both, installedBy }, field);
    }
    return c.problems;
  }

  /**
   * Every service's target groups are named in inline policies of the controller's role, which IAM caps at 10,240
   * characters in all: a service that would pass it fails at synth, not at deployment ("Maximum policy size exceeded").
   */
  private checkRegistrations(scope: Construct, targetGroups: number): void {
    const total = this.targetGroups + targetGroups;
    const chars = this.existingLbcPolicyChars + controllerInlinePolicyChars(total, this.loadBalancerController !== undefined);
    if (chars > ROLE_INLINE_POLICY_CHARS) {
      throwIfInvalid('EksInferenceService', scope.node.path, [{
        field: 'classes',
        message: `take the Load Balancer Controller's inline policies on the cluster ${this.node.path} to ${chars} characters `
          + `(${total} target groups, one policy each, each ARN counted at its longest`
          + `${this.existingLbcPolicyChars > 0 ? `, and the role's own ${this.existingLbcPolicyChars}` : ''}); `
          + `allowed: at most ${ROLE_INLINE_POLICY_CHARS} (IAM's cap on a role's inline policies): put further services on another cluster`,
      }]);
    }
    this.targetGroups = total;
  }
}

/** Something an EksInferenceCluster installs once per cluster, and the prop that marks it as running already. */
interface ClusterInstall {
  readonly name: string;
  readonly instead: string;
}

const INSTALLS = {
  karpenter: { name: 'Karpenter', instead: 'existingControllers.karpenter' },
  keda: { name: 'KEDA', instead: 'existingControllers.keda' },
  loadBalancerController: { name: 'the AWS Load Balancer Controller', instead: 'existingControllers.loadBalancerController' },
  addon: { name: `the ${OBSERVABILITY_ADDON_NAME} add-on`, instead: 'observability.existingAddon' },
  logGroups: { name: "the add-on's log groups", instead: 'observability.existingLogGroups' },
  // The same claim: with an existing add-on only its application log group is created, unless that is marked as existing.
  applicationLogGroup: { name: "the add-on's log groups", instead: 'observability.existingAddon.applicationLogGroupExists unset' },
  neuronDevicePlugin: { name: 'the Neuron device plugin', instead: 'existingControllers.neuronDevicePlugin' },
} as const satisfies Record<string, ClusterInstall>;

/**
 * Which EksInferenceCluster installs each of INSTALLS on each cluster name in each known account and Region, by
 * construct tree root (`cluster@environment`). Two services given one imported `eks.ICluster` each build a cluster
 * construct of their own, and would otherwise each install everything (review R230).
 */
const INSTALLED_ON = new EnvironmentClaims();

function invalid(scope: Construct, problems: readonly ClassProblem[]): Error {
  return new ConstructValidationError('EksInferenceCluster', scope.node.path, problems);
}

/**
 * `nodeSubnets` as subnets of the VPC, or a synth error naming the selection: one that selects nothing would leave
 * every EC2NodeClass without a subnet to launch in ("no subnets matched selector",
 * aws/karpenter-provider-aws@v1.14.1 pkg/providers/subnet/subnet.go:131-133). A VPC still being looked up
 * (`Vpc.fromLookup` before the CLI's context entry) selects nothing yet: not refused.
 */
function selectedNodeSubnets(scope: Construct, vpc: ec2.IVpc, selection: ec2.SubnetSelection | undefined): readonly ec2.ISubnet[] {
  let selected: { readonly subnets: readonly ec2.ISubnet[]; readonly isPendingLookup: boolean };
  try {
    selected = nodeSubnets(vpc, selection);
  } catch (e) {
    throw invalid(scope, [{ field: 'nodeSubnets', message: `selects no subnet of the cluster's VPC (${(e as Error).message}); allowed: a selection of its subnets` }]);
  }
  if (selected.subnets.length === 0 && selection !== undefined && !selected.isPendingLookup) {
    throw invalid(scope, [{ field: 'nodeSubnets', message: "selects no subnet of the cluster's VPC; allowed: a selection of at least one of its subnets" }]);
  }
  return selected.subnets;
}

function withVersion(chart: ChartSpec, version: string | undefined): ChartSpec {
  return version === undefined ? chart : { ...chart, version };
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
    // Node groups, not EKS Auto Mode (aws-eks-v2's default when no capacity type is given). The system node group is
    // added below with its AMI type, not as aws-eks-v2's default capacity.
    defaultCapacityType: eks.DefaultCapacityType.NODEGROUP,
    defaultCapacity: 0,
    kubectlProviderOptions: { kubectlLayer },
  });
  addSystemNodes(cluster, o);
  acknowledgeManagedPolicies(
    cluster,
    'Roles aws-eks-v2 creates for the cluster: AmazonEKSClusterPolicy (control plane), the worker-node policies of the system node group ' +
      'and the Lambda basic/VPC execution policies plus AmazonEC2ContainerRegistryReadOnly of the kubectl handler. AWS maintains them for exactly these roles.',
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
    // The two functions of aws-eks-v2's kubectl provider (its handler and the provider framework's onEvent) run only
    // for CloudFormation custom resources of this cluster (manifests, Helm charts), during deployments.
    acknowledgeNistRules(kubectl, {
      IAMNoInlinePolicy: 'Roles aws-eks-v2 generates for the kubectl provider\'s two functions, each policy attached to its one role: ' +
        'eks:DescribeCluster on this cluster (the handler), lambda:InvokeFunction and GetFunction on the handler (the framework); not configurable.',
      LambdaDLQ: 'Invoked only for this stack\'s custom resources during deployments: a failed request is answered FAILED to CloudFormation, ' +
        'which fails and rolls back the deployment; a dead-letter copy of a CloudFormation request could not be answered later.',
      LambdaConcurrency: 'Runs only during deployments of this stack, one request per custom resource change; reserved concurrency would ' +
        'withhold account concurrency from other functions between deployments, and aws-eks-v2 does not expose the setting.',
    });
  }
  encryptKubectlProviderLogs(cluster, clusterName);
  return cluster;
}

/** The system node group's construct id under the cluster (aws-eks-v2 `addNodegroupCapacity` names it `Nodegroup<id>`). */
const SYSTEM_NODES = 'DefaultCapacity';

/** System node types whose vCPUs, memory and max pods the library knows, to check a node count against. */
const KNOWN_SYSTEM_NODES: readonly NodeShape[] = [M7I_LARGE];

/**
 * The system node group (Karpenter, KEDA, the load balancer controller, CoreDNS, the add-on's operator and the
 * model-server scraper, besides the DaemonSets), under the id aws-eks-v2 gives its default capacity
 * (`DefaultCapacity`), with an Amazon Linux 2023 AMI. Left to aws-eks-v2, the AMI type follows the app's
 * `@aws-cdk/aws-eks:defaultToAL2023` flag and is AL2 without it (aws-cdk-lib 2.269.0 aws-eks-v2 managed-nodegroup.js),
 * while EKS publishes no AL2 AMIs for Kubernetes 1.33 and later
 * (https://docs.aws.amazon.com/eks/latest/userguide/eks-ami-deprecation-faqs.html): the node group would not create.
 *
 * 3 x m7i.large by default (lib/core/platform/system-nodes.ts has every figure and its source): a node offers 1930m
 * CPU (nodeadm's kube-reserved 70m), the DaemonSets take 425m of each (CloudWatch agent 250m, Fluent Bit 50m,
 * kube-proxy 100m, aws-node 25m) and Karpenter's two replicas 1000m of two nodes, one each. That leaves 505m + 505m
 * on two nodes for 850m of Deployments (CoreDNS 2 x 100m, KEDA 3 x 100m, the add-on's operator 100m, the scraper
 * 250m) plus the 250m a rolling update of the scraper surges: two nodes cannot hold it, a third (1505m free) can, in
 * any order.
 */
function addSystemNodes(cluster: eks.Cluster, o: NewClusterOptions): void {
  const count = o.systemNodeCount ?? DEFAULT_SYSTEM_NODE_COUNT;
  if (count <= 0) return;
  const instanceType = o.systemNodeInstanceType ?? ec2.InstanceType.of(ec2.InstanceClass.M7I, ec2.InstanceSize.LARGE);
  const shape = KNOWN_SYSTEM_NODES.find((n) => n.instanceType === instanceType.toString());
  const problems = shape ? systemNodeProblems(shape, count) : [];
  if (shape && problems.length > 0) {
    const enough = Array.from({ length: 20 }, (_, i) => count + i + 1).find((n) => systemNodeProblems(shape, n).length === 0);
    Annotations.of(cluster).addWarningV2('cdk-capacity-aware-inference:eks-system-nodes-too-few',
      `clusterOptions.systemNodeCount is ${count} x ${shape.instanceType}, which cannot be sure to hold the controllers, the `
      + `add-on's agents and the model-server scraper with room for a rolling update (${problems[0]}): a pod that finds no `
      + 'node stays Pending, and a Pending scraper drops the token counters the control loop reads. '
      + `Use ${enough !== undefined ? `at least ${enough} nodes` : 'more nodes'} or a larger systemNodeInstanceType.`);
  }
  cluster.addNodegroupCapacity(SYSTEM_NODES, {
    instanceTypes: [instanceType],
    minSize: count,
    amiType: instanceType.architecture === ec2.InstanceArchitecture.ARM_64
      ? eks.NodegroupAmiType.AL2023_ARM_64_STANDARD : eks.NodegroupAmiType.AL2023_X86_64_STANDARD,
  });
}

/**
 * An app with the flags of `cdk init` (`@aws-cdk/aws-lambda:useCdkManagedLogGroup`) gives the kubectl provider's two
 * functions log groups in the template (aws-cdk-lib 2.269.0 aws-lambda function.js). They hold the kubectl and Helm
 * output of every deployment, so they get a customer managed key like the library's own log groups (NIST 800-53
 * CloudWatchLogGroupEncrypted). Without the flag Lambda creates them itself and there is nothing to encrypt here.
 */
function encryptKubectlProviderLogs(cluster: eks.Cluster, clusterName: string): void {
  const kubectl = cluster.node.tryFindChild('KubectlProvider');
  const logGroups = kubectl ? kubectl.node.findAll().filter((c): c is logs.CfnLogGroup => c instanceof logs.CfnLogGroup) : [];
  if (logGroups.length === 0) return;
  const key = newLogGroupKey(kubectl!, 'LogKey', `Logs of the kubectl provider of EKS cluster ${clusterName}`);
  for (const group of logGroups) group.kmsKeyId = key.keyArn;
}
