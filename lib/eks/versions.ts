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
export const KEDA_CHART: ChartSpec = { chart: 'keda', repository: 'https://kedacore.github.io/charts', version: '2.20.2' };
export const LOAD_BALANCER_CONTROLLER_CHART: ChartSpec = {
  chart: 'aws-load-balancer-controller',
  repository: 'https://aws.github.io/eks-charts',
  version: '3.5.0',
};

/** Semantic version without a `v` prefix, as Helm chart versions are written (`1.14.1`, `2.0.0-rc.1`). */
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

/** Why `version` is not a valid chart version, or undefined. */
export function chartVersionProblem(version: string): string | undefined {
  return SEMVER.test(version) ? undefined : `'${version}' is not a chart version; use an exact semantic version such as 1.14.1 (no ranges, no 'v' prefix, no 'latest')`;
}
