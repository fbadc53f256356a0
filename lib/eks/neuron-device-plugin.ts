import { Lazy } from 'aws-cdk-lib';
import type * as eks from 'aws-cdk-lib/aws-eks-v2';
import { Construct } from 'constructs';
import { controllerChart } from './pod-identity';
import { type ChartSpec, NEURON_DEVICE_PLUGIN_CHART, NEURON_DEVICE_PLUGIN_IMAGE, NEURON_DEVICE_PLUGIN_INSTANCE_TYPES } from './versions';

/** Where the chart puts the device plugin DaemonSet (`devicePlugin.namespaceOverride` in its values.yaml). */
export const NEURON_DEVICE_PLUGIN_NAMESPACE = 'kube-system';

/** The device plugin's image under `chart` (NEURON_DEVICE_PLUGIN_IMAGE); another chart version's tag is not known here. */
export function neuronDevicePluginImage(chart: ChartSpec): string {
  const { repository, tag } = NEURON_DEVICE_PLUGIN_IMAGE;
  return chart.version === NEURON_DEVICE_PLUGIN_CHART.version ? `${repository}:${tag}` : `${repository} (the tag chart ${chart.version} pins)`;
}

export interface NeuronDevicePluginProps {
  readonly cluster: eks.ICluster;
  /** @default NEURON_DEVICE_PLUGIN_CHART */
  readonly chart?: ChartSpec;
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
 * - values.yaml `devicePlugin.tolerations`: `aws.amazon.com/neuron` Exists NoSchedule, which tolerates the taint the
 *   library puts on Neuron nodes (ACCELERATOR_TAINTS.neuron, lib/eks/manifests/karpenter.ts).
 * - values.yaml `devicePlugin.affinity` with templates/_helpers.tpl `neuron-device-plugin.affinity`: a required node
 *   affinity `node.kubernetes.io/instance-type In <neuronInstances>` and `eks.amazonaws.com/compute-type NotIn
 *   [fargate, hybrid, auto]`, so it runs on Neuron instance types only. `neuronInstances` is set to the chart's list
 *   plus every Neuron type a service's class uses (a catalog may add types the chart does not know).
 * - the image: `public.ecr.aws/neuron/neuron-device-plugin:2.31.0.0` (`devicePlugin.image.tag`, rendered as
 *   `<repository>:<tag>` by `neuron-device-plugin.fullimage`; NEURON_DEVICE_PLUGIN_IMAGE in lib/eks/versions.ts), an
 *   exact release tag like the other charts' images; no digest is set, as none could be read from an upstream source.
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
        devicePlugin: { enabled: true },
        npd: { enabled: false },
        scheduler: { enabled: false },
        draDriver: { enabled: false },
        ultraserverOperator: { enabled: false },
      },
      // A DaemonSet with no identity of its own: it needs nothing before it starts.
      dependsOn: [],
    });
  }

  /** Lets the DaemonSet run on these instance types too (a service's Neuron classes). */
  public addInstanceTypes(types: readonly string[]): void {
    for (const type of types) this.instanceTypes.add(type);
  }
}
