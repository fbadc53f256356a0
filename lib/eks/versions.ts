/**
 * The Helm charts the EKS path installs, one pinned version each. Charts are pulled by the kubectl handler at deploy
 * time (never at synth). Override a version with `EksInferenceServiceProps.chartVersions`; overrides are checked to be
 * semantic versions.
 */
export interface ChartSpec {
  /** Chart name (for OCI repositories, the repository URL already names the chart). */
  readonly chart: string;
  /** `https://...` Helm repository or `oci://...` registry. */
  readonly repository: string;
  /** Pinned chart version. */
  readonly version: string;
}

export const KARPENTER_CHART: ChartSpec = { chart: 'karpenter', repository: 'oci://public.ecr.aws/karpenter/karpenter', version: '1.14.1' };
/**
 * KEDA 2.20 is tested on Kubernetes v1.33 to v1.35 ("compatibility matrix", https://keda.sh/docs/2.20/operate/cluster/):
 * the default cluster version (1.33, lib/eks/cluster.ts) is the lowest of them, so a cluster older than 1.33 needs an
 * older chart through `chartVersions`.
 */
export const KEDA_CHART: ChartSpec = { chart: 'keda', repository: 'https://kedacore.github.io/charts', version: '2.20.2' };
export const LOAD_BALANCER_CONTROLLER_CHART: ChartSpec = {
  chart: 'aws-load-balancer-controller',
  repository: 'https://aws.github.io/eks-charts',
  version: '3.5.0',
};

/**
 * The AWS Neuron device plugin, which advertises `aws.amazon.com/neuroncore` on Inferentia and Trainium nodes: the
 * EKS-optimized AL2023 and Bottlerocket AMIs do not run it ("When using the EKS-optimized AL2023 or Bottlerocket AMIs
 * with AWS Inferentia or Trainium GPUs, you must install the Neuron Kubernetes device plugin",
 * https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-k8s-device-plugin.html; awsdocs/amazon-eks-user-guide
 * latest/ug/ml/ml-eks-k8s-device-plugin.adoc). Chart 1.9.0 is release https://github.com/aws-neuron/neuron-helm-charts/releases/tag/1.9.0
 * (commit b77a6f90, Neuron SDK 2.31.0): charts/neuron-helm-chart/Chart.yaml `version: 1.9.0`, no `kubeVersion`
 * constraint; its values.yaml pins the device plugin image (NEURON_DEVICE_PLUGIN_IMAGE).
 */
export const NEURON_DEVICE_PLUGIN_CHART: ChartSpec = {
  chart: 'neuron-helm-chart',
  repository: 'oci://public.ecr.aws/neuron/neuron-helm-chart',
  version: '1.9.0',
};

/**
 * The device plugin image NEURON_DEVICE_PLUGIN_CHART's values.yaml pins (`devicePlugin.image.repository` and `.tag`,
 * rendered as `<repository>:<tag>` by the chart's `neuron-device-plugin.fullimage`); the library sets neither, so
 * another chart version runs its own tag.
 */
export const NEURON_DEVICE_PLUGIN_IMAGE = { repository: 'public.ecr.aws/neuron/neuron-device-plugin', tag: '2.31.0.0' } as const;

/**
 * The instance types the device plugin DaemonSet of NEURON_DEVICE_PLUGIN_CHART runs on: `neuronInstances` in
 * aws-neuron/neuron-helm-charts@b77a6f90 (1.9.0) charts/neuron-helm-chart/values.yaml:1, which
 * templates/_helpers.tpl (`neuron-device-plugin.affinity`) puts in a required node affinity on
 * `node.kubernetes.io/instance-type`. The library passes this list plus every Neuron type its services' classes use.
 */
export const NEURON_DEVICE_PLUGIN_INSTANCE_TYPES: readonly string[] = [
  'trn1.2xlarge', 'trn1.32xlarge', 'trn1n.32xlarge', 'trn2.3xlarge', 'trn2.48xlarge', 'trn2u.48xlarge', 'trn3.48xlarge', 'trn3e.24xlarge',
  'inf1.xlarge', 'inf1.2xlarge', 'inf1.6xlarge', 'inf1.24xlarge', 'inf2.xlarge', 'inf2.8xlarge', 'inf2.24xlarge', 'inf2.48xlarge',
  'ml.inf2.xlarge', 'ml.inf2.8xlarge', 'ml.inf2.24xlarge', 'ml.inf2.48xlarge', 'ml.trn1.2xlarge', 'ml.trn1.32xlarge', 'ml.trn1n.32xlarge',
];

/** Semantic version without a `v` prefix, as Helm chart versions are written (`1.14.1`, `2.0.0-rc.1`). */
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

/** Why `version` is not a valid chart version, or undefined. */
export function chartVersionProblem(version: string): string | undefined {
  return SEMVER.test(version) ? undefined : `'${version}' is not a chart version; use an exact semantic version such as 1.14.1 (no ranges, no 'v' prefix, no 'latest')`;
}
