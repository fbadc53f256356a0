import { Aws, Lazy } from 'aws-cdk-lib';
import type * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { ecrRepositoryArn, parseEcrImage } from '../core/trust/image-reference';
import { SERVING_TAINT, tolerationOf } from './manifests/karpenter';
import { type Toleration } from './manifests/types';
import { controllerChart } from './pod-identity';
import { type ChartSpec, NEURON_DEVICE_PLUGIN_CHART, NEURON_DEVICE_PLUGIN_IMAGE, NEURON_DEVICE_PLUGIN_INSTANCE_TYPES } from './versions';

/** Where the chart puts the device plugin DaemonSet (`devicePlugin.namespaceOverride` in its values.yaml). */
export const NEURON_DEVICE_PLUGIN_NAMESPACE = 'kube-system';

/**
 * The device plugin's image: `mirror` when given, otherwise the one `chart` pins (NEURON_DEVICE_PLUGIN_IMAGE); another
 * chart version's tag is not known here.
 */
export function neuronDevicePluginImage(chart: ChartSpec, mirror?: string): string {
  if (mirror !== undefined) return mirror;
  const { repository, tag } = NEURON_DEVICE_PLUGIN_IMAGE;
  return chart.version === NEURON_DEVICE_PLUGIN_CHART.version ? `${repository}:${tag}` : `${repository} (the tag chart ${chart.version} pins)`;
}

/**
 * The chart values (`devicePlugin.image.repository` and `.tag`) under which the pinned chart runs `image`, a private ECR
 * image pinned by digest (`parseEcrImage`), by exactly that reference. The chart has no digest value: its values.yaml
 * gives `devicePlugin.image` only `repository`, `pullPolicy` and `tag` (aws-neuron/neuron-helm-charts@b77a6f90 (1.9.0)
 * charts/neuron-helm-chart/values.yaml:110-113), and the DaemonSet's container is `image: {{ include
 * "neuron-device-plugin.fullimage" . }}` (templates/device-plugin/device-plugin-daemonset.yaml, read at 7324cd0e), which
 * templates/_helpers.tpl defines as `printf "%s:%s" .Values.devicePlugin.image.repository .Values.devicePlugin.image.tag`.
 * That helper is the same in every stored version of _helpers.tpl, from 8172e5e:65-67 (chart 1.0.0) to the DRA-driver
 * one that defines the `neuron-helm-chart.validateConfig` that DaemonSet template includes; the file at the 1.9.0
 * commit itself could not be read (and the chart archive not pulled), which is why a mirror is refused with another
 * chart version (EKS_RULES neuronDevicePluginImage) and the rendering is pinned by a test. Split at the last ':' (the
 * one of `@sha256:`), the reference renders back whole: `<registry>/<repository>@sha256` + ':' + `<64 hex>`, a digest
 * reference with no tag, which Kubernetes pulls as such ("After the image name part you can add a tag or digest", https://kubernetes.io/docs/concepts/containers/images/).
 * `pullPolicy` keeps the chart's IfNotPresent (Helm merges these values over the chart's).
 */
export function neuronDevicePluginImageValues(image: string): { readonly repository: string; readonly tag: string } {
  if (!parseEcrImage(image)) throw new Error(`internal: '${image}' is not a private ECR image pinned by digest (checked in clusterProblems)`);
  const cut = image.lastIndexOf(':');
  return { repository: image.slice(0, cut), tag: image.slice(cut + 1) };
}

/**
 * The device plugin's tolerations: the chart's own (aws-neuron/neuron-helm-charts@b77a6f90 (1.9.0)
 * charts/neuron-helm-chart/values.yaml:125-134 `devicePlugin.tolerations`: `CriticalAddonsOnly` Exists,
 * `aws.amazon.com/neuron` Exists NoSchedule, `sagemaker.amazonaws.com/node-health-status` Equal `Unschedulable`
 * NoSchedule; templates/device-plugin/device-plugin-daemonset.yaml puts them in the pod as given, read at 7324cd0e) and
 * the library's SERVING_TAINT, which every class node carries: without it the plugin never runs on a Neuron node
 * Karpenter launched, nothing advertises its NeuronCores and the class's pods stay Pending on it. All of them, because
 * Helm replaces a list the user gives instead of merging it (helm/helm pkg/chartutil/coalesce.go `coalesceTablesFullKey`
 * merges tables only).
 */
export const NEURON_DEVICE_PLUGIN_TOLERATIONS: readonly Toleration[] = [
  { key: 'CriticalAddonsOnly', operator: 'Exists' },
  { key: 'aws.amazon.com/neuron', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'sagemaker.amazonaws.com/node-health-status', operator: 'Equal', value: 'Unschedulable', effect: 'NoSchedule' },
  tolerationOf(SERVING_TAINT),
];

export interface NeuronDevicePluginProps {
  readonly cluster: eks.ICluster;
  /** @default NEURON_DEVICE_PLUGIN_CHART */
  readonly chart?: ChartSpec;
  /**
   * The device plugin's image instead of the chart's (ECR Public): a private ECR image pinned by digest,
   * `<account>.dkr.ecr.<region>.amazonaws.com/<repository>@sha256:<64 hex>` (`neuronDevicePluginImageValues`).
   * @default - the image the chart pins (NEURON_DEVICE_PLUGIN_IMAGE)
   */
  readonly image?: string;
  /**
   * The role of the nodes the DaemonSet runs on (with `image`): allowed to pull from exactly the image's repository.
   * @default - no grant
   */
  readonly pullRole?: iam.IRole;
}

/**
 * The Neuron device plugin (pinned `neuron-helm-chart`, device plugin only): a DaemonSet on Inferentia and Trainium
 * nodes that advertises `aws.amazon.com/neuroncore` (and `aws.amazon.com/neuron`) to the kubelet. Without it a node
 * Karpenter launched for a Neuron class never offers the resource its pods request, and they stay Pending on it.
 *
 * What the values set, read in aws-neuron/neuron-helm-charts@b77a6f90 (release 1.9.0) charts/neuron-helm-chart:
 * - values.yaml: `devicePlugin.enabled: true`, `npd.enabled: true` (node problem detector, on by default: turned
 *   off here, it runs privileged in its own namespace and the library reads no node condition), `scheduler`,
 *   `draDriver` and `ultraserverOperator` off by default (set off again so that a newer chart's default cannot turn
 *   them on); the README's "Validation Rules" refuse `draDriver` beside the device plugin. Without the `scheduler`
 *   extension a pod may request one NeuronCore or all of its node's: checks.ts (checkNeuronCoreRequest) refuses other
 *   counts and says why the extension stays off.
 * - `devicePlugin.tolerations`: the chart's, which tolerate the Neuron taint (ACCELERATOR_TAINTS.neuron,
 *   lib/eks/manifests/karpenter.ts), and the library's SERVING_TAINT (NEURON_DEVICE_PLUGIN_TOLERATIONS).
 * - values.yaml `devicePlugin.affinity` with templates/_helpers.tpl `neuron-device-plugin.affinity`: a required node
 *   affinity `node.kubernetes.io/instance-type In <neuronInstances>` and `eks.amazonaws.com/compute-type NotIn
 *   [fargate, hybrid, auto]`, so it runs on Neuron instance types only. `neuronInstances` is set to the chart's list
 *   plus every Neuron type a service's class uses (a catalog may add types the chart does not know).
 * - the image: `public.ecr.aws/neuron/neuron-device-plugin:2.31.0.0` (`devicePlugin.image.tag`, rendered as
 *   `<repository>:<tag>` by `neuron-device-plugin.fullimage`; NEURON_DEVICE_PLUGIN_IMAGE in lib/eks/versions.ts), an
 *   exact release tag like the other charts' images; no digest is set, as none could be read from an upstream source.
 *   With `image` (a private ECR mirror pinned by digest) the values name that image instead (`neuronDevicePluginImageValues`).
 */
export class NeuronDevicePlugin extends Construct {
  public readonly chart: eks.HelmChart;
  private readonly instanceTypes = new Set<string>(NEURON_DEVICE_PLUGIN_INSTANCE_TYPES);

  constructor(scope: Construct, id: string, props: NeuronDevicePluginProps) {
    super(scope, id);
    this.chart = controllerChart(this, 'Chart', {
      cluster: props.cluster,
      chart: props.chart ?? NEURON_DEVICE_PLUGIN_CHART,
      release: 'neuron-device-plugin',
      namespace: NEURON_DEVICE_PLUGIN_NAMESPACE,
      createNamespace: false,
      values: {
        neuronInstances: Lazy.any({ produce: () => [...this.instanceTypes] }),
        devicePlugin: {
          enabled: true,
          tolerations: NEURON_DEVICE_PLUGIN_TOLERATIONS,
          ...(props.image !== undefined ? { image: neuronDevicePluginImageValues(props.image) } : {}),
        },
        npd: { enabled: false },
        scheduler: { enabled: false },
        draDriver: { enabled: false },
        ultraserverOperator: { enabled: false },
      },
      // A DaemonSet with no identity of its own: it needs nothing before it starts.
      dependsOn: [],
    });
    if (props.image !== undefined && props.pullRole) this.grantPull(props.image, props.pullRole);
  }

  /**
   * Lets `role` pull `image` from its repository, and nothing else: the actions an ECR pull makes besides
   * ecr:GetAuthorizationToken ("ecr:BatchGetImage, ecr:GetDownloadUrlForLayer, and ecr:GetAuthorizationToken",
   * https://docs.aws.amazon.com/AmazonECR/latest/userguide/ECR_on_ECS.html). The Karpenter node role has
   * AmazonEC2ContainerRegistryPullOnly already (lib/eks/karpenter.ts): GetAuthorizationToken, BatchGetImage,
   * GetDownloadUrlForLayer and BatchImportUpstreamImage on "*" (version 1 as mirrored by zoph-io/MAMIP
   * policies/AmazonEC2ContainerRegistryPullOnly; https://docs.aws.amazon.com/aws-managed-policy/latest/reference/AmazonEC2ContainerRegistryPullOnly.html),
   * so this grant is redundant there; it is kept so that the plugin's pull does not depend on that managed policy. A
   * repository of another account also needs its repository policy to allow the role (not granted here). The chart
   * waits for the grant: its pods pull on the first Neuron node.
   */
  private grantPull(image: string, role: iam.IRole): void {
    const grant = role.addToPrincipalPolicy(new iam.PolicyStatement({
      sid: 'PullNeuronDevicePluginImage',
      actions: ['ecr:BatchGetImage', 'ecr:GetDownloadUrlForLayer'],
      resources: [ecrRepositoryArn(parseEcrImage(image)!, Aws.PARTITION)],
    }));
    if (grant.policyDependable) this.chart.node.addDependency(grant.policyDependable);
  }

  /** Lets the DaemonSet run on these instance types too (a service's Neuron classes). */
  public addInstanceTypes(types: readonly string[]): void {
    for (const type of types) this.instanceTypes.add(type);
  }
}
