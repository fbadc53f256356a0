/**
 * Every class NodePool carries the library's SERVING_TAINT beside its accelerator taint (review R230), so that another
 * team's GPU pod, which EKS's ExtendedResourceToleration lets past the accelerator taint, never lands on a class's
 * nodes. Whatever must run on those nodes has to tolerate both, or the node offers no accelerator (device plugin) or
 * goes unseen (the add-on's agents) without any error: this file holds every such DaemonSet to it.
 */
import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
import { Template } from 'aws-cdk-lib/assertions';
import { EksInferenceCluster } from '../../lib/eks/cluster';
import { EksInferenceService } from '../../lib/eks/inference-service';
import { ACCELERATOR_TAINTS, classTaints, SERVING_TAINT, type Taint } from '../../lib/eks/manifests';
import { NEURON_DEVICE_PLUGIN_TOLERATIONS } from '../../lib/eks/neuron-device-plugin';
import { NEURON_DEVICE_PLUGIN_CHART } from '../../lib/eks/versions';
import { type AnyToleration, expectValidManifests, FETCHER_IMAGE, type KubernetesObject, LLAMA_CONTRACT, llamaClasses, testStack, tolerates } from '../util';

const OBSERVABILITY_CHART = 'aws-observability/helm-charts amazon-cloudwatch-observability-6.4.0 charts/amazon-cloudwatch-observability';

/**
 * The chart's root toleration, which each of the add-on's DaemonSets takes unless its own `tolerations` is set:
 * values.yaml:27-28 (`tolerations: - operator: Exists`; each component's own is commented out: containerLogs.fluentBit
 * :50-51, agent :763-764, dcgmExporter :821-822, neuronMonitor :993-994), templates/_helpers.tpl:8-20 (a component's
 * list when not nil, else the root one), included by templates/linux/fluent-bit-daemonset.yaml:154,
 * dcgm-exporter-daemonset.yaml:73, neuron-monitor-daemonset.yaml:98 and cloudwatch-agent-custom-resource.yaml:313 (each
 * `agents[]` entry merged over `agent`); the operator copies the custom resource's tolerations into the agent's
 * DaemonSet (aws/amazon-cloudwatch-agent-operator internal/manifests/collector/daemonset.go `Tolerations:
 * params.OtelCol.Spec.Tolerations`, read at 11236a16).
 */
const CHART_ROOT_TOLERATIONS: AnyToleration[] = [{ operator: 'Exists' }];

/** The Neuron chart's own device plugin tolerations (neuron-helm-chart 1.9.0 values.yaml:125-134), without the library's. */
const NEURON_CHART_TOLERATIONS: AnyToleration[] = [
  { key: 'CriticalAddonsOnly', operator: 'Exists' },
  { key: 'aws.amazon.com/neuron', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'sagemaker.amazonaws.com/node-health-status', operator: 'Equal', value: 'Unschedulable', effect: 'NoSchedule' },
];

/** The NVIDIA device plugin chart's default (NVIDIA/k8s-device-plugin deployments/helm/nvidia-device-plugin/values.yaml, read at 00f2a02c). */
const NVIDIA_CHART_TOLERATIONS: AnyToleration[] = [
  { key: 'CriticalAddonsOnly', operator: 'Exists' },
  { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' },
];

interface NodeDaemonSet {
  readonly name: string;
  /** Which class nodes it runs on. */
  readonly on: ReadonlyArray<'gpu' | 'neuron'>;
  readonly tolerations: readonly AnyToleration[];
  readonly source: string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a parsed add-on configuration, read by path
type Values = Record<string, any>;

/** A component's tolerations as the chart's `common.tolerations` helper resolves them. */
function chartTolerations(config: Values, component: Values | undefined): AnyToleration[] {
  return component?.tolerations ?? config.tolerations ?? CHART_ROOT_TOLERATIONS;
}

/** Every DaemonSet that must run on a class node, with the tolerations it gets on a cluster the library creates. */
function classNodeDaemonSets(template: Template): NodeDaemonSet[] {
  const addon = Object.values(template.findResources('AWS::EKS::Addon', { Properties: { AddonName: 'amazon-cloudwatch-observability' } }))[0];
  const config: Values = JSON.parse(addon.Properties.ConfigurationValues);
  const agentEntry = (config.agents as Values[]).find((a) => a.name === 'cloudwatch-agent');
  const neuronChart = Object.values(template.findResources('Custom::AWSCDK-EKS-HelmChart'))
    .find((c) => c.Properties.Chart === NEURON_DEVICE_PLUGIN_CHART.chart)!;
  const neuronValues: Values = JSON.parse(neuronChart.Properties.Values);
  return [
    {
      name: 'cloudwatch-agent', on: ['gpu', 'neuron'], tolerations: chartTolerations(config, { ...config.agent, ...agentEntry }),
      source: `${OBSERVABILITY_CHART}: Container Insights, replicas_desired`,
    },
    {
      name: 'fluent-bit', on: ['gpu', 'neuron'], tolerations: chartTolerations(config, config.containerLogs?.fluentBit),
      source: `${OBSERVABILITY_CHART}: the application log group the capacity-error filters read`,
    },
    { name: 'dcgm-exporter', on: ['gpu'], tolerations: chartTolerations(config, config.dcgmExporter), source: OBSERVABILITY_CHART },
    { name: 'neuron-monitor', on: ['neuron'], tolerations: chartTolerations(config, config.neuronMonitor), source: OBSERVABILITY_CHART },
    {
      name: 'neuron-device-plugin', on: ['neuron'], tolerations: neuronValues.devicePlugin.tolerations ?? NEURON_CHART_TOLERATIONS,
      source: 'lib/eks/neuron-device-plugin.ts values over neuron-helm-chart 1.9.0',
    },
    // EKS installs these; the library does not configure them. The charts they are built from tolerate every taint.
    {
      name: 'aws-node', on: ['gpu', 'neuron'], tolerations: [{ operator: 'Exists' }],
      source: 'aws/eks-charts@5239609 stable/aws-vpc-cni values.yaml:201-202 (chart 1.22.4), templates/daemonset.yaml:63-66',
    },
    {
      name: 'eks-pod-identity-agent', on: ['gpu', 'neuron'], tolerations: [{ operator: 'Exists' }],
      source: 'aws/eks-pod-identity-agent@d4dc0f3 charts/eks-pod-identity-agent/values.yaml:177-178, templates/daemonset.yaml:37-40',
    },
    // kube-proxy: not read at a pinned source (no manifest of the EKS add-on was found). It must already tolerate the
    // accelerator taints, which have SERVING_TAINT's effect; only a toleration naming those keys would keep it off.
  ];
}

describe('the taint of the classes\' nodes', () => {
  let template: Template;
  let service: EksInferenceService;
  beforeAll(() => {
    const { stack } = testStack();
    const cluster = new EksInferenceCluster(stack, 'Cluster', { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
    service = new EksInferenceService(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: llamaClasses(), cluster, modelDataFetcherImage: FETCHER_IMAGE });
    template = Template.fromStack(stack);
  });

  test('every class NodePool carries it beside its accelerator taint, and its Deployment tolerates both', () => {
    expect(SERVING_TAINT).toEqual({ key: 'capacity-aware-inference/serving', value: 'true', effect: 'NoSchedule' });
    expect(service.units.map((u) => u.cls.hardware.acceleratorKind)).toEqual(expect.arrayContaining(['gpu', 'neuron']));
    for (const u of service.units) {
      const taints = u.objects.nodePool.spec.template.spec.taints;
      expect(taints).toEqual([SERVING_TAINT, ACCELERATOR_TAINTS[u.cls.hardware.acceleratorKind]]);
      const tolerations = u.objects.deployment.spec.template.spec.tolerations;
      for (const taint of taints) expect(tolerates(tolerations, taint)).toBe(true);
      expectValidManifests(JSON.parse(JSON.stringify([u.objects.nodePool, u.objects.deployment])) as KubernetesObject[]);
    }
  });

  test('a pod that requests the accelerator without the library\'s toleration does not tolerate a class pool (Karpenter skips the pool)', () => {
    // What ExtendedResourceToleration adds to a pod requesting nvidia.com/gpu or aws.amazon.com/neuron (kubernetes/kubernetes#55839).
    for (const kind of ['gpu', 'neuron'] as const) {
      const admitted = [{ key: ACCELERATOR_TAINTS[kind].key, operator: 'Exists', effect: 'NoSchedule' }];
      expect(tolerates(admitted, ACCELERATOR_TAINTS[kind])).toBe(true);
      expect(classTaints(kind).every((t: Taint) => tolerates(admitted, t))).toBe(false);
    }
  });

  test('every DaemonSet a class node needs tolerates every taint of the node', () => {
    const daemonSets = classNodeDaemonSets(template);
    expect(daemonSets.map((d) => d.name)).toEqual([
      'cloudwatch-agent', 'fluent-bit', 'dcgm-exporter', 'neuron-monitor', 'neuron-device-plugin', 'aws-node', 'eks-pod-identity-agent',
    ]);
    const missing = daemonSets.flatMap((d) => d.on.flatMap((kind) => classTaints(kind)
      .filter((t) => !tolerates(d.tolerations, t))
      .map((t) => `${d.name} on ${kind} nodes does not tolerate ${t.key} (${d.source})`)));
    expect(missing).toEqual([]);
  });

  test('the Neuron device plugin gets the chart\'s own tolerations and the library\'s: without it the plugin would not run there', () => {
    const plugin = classNodeDaemonSets(template).find((d) => d.name === 'neuron-device-plugin')!;
    expect(plugin.tolerations).toEqual(NEURON_DEVICE_PLUGIN_TOLERATIONS);
    expect(plugin.tolerations).toEqual(expect.arrayContaining(NEURON_CHART_TOLERATIONS));
    expect(tolerates(NEURON_CHART_TOLERATIONS, SERVING_TAINT)).toBe(false);
  });

  test('an NVIDIA device plugin installed with its chart\'s defaults (AL2023 nodes) would not run there: the warning says to add it', () => {
    expect(tolerates(NVIDIA_CHART_TOLERATIONS, ACCELERATOR_TAINTS.gpu)).toBe(true);
    expect(tolerates(NVIDIA_CHART_TOLERATIONS, SERVING_TAINT)).toBe(false);
  });
});
