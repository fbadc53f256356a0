/**
 * Capacity errors on EKS, from Karpenter's own log line, as a CloudWatch Logs metric filter per NodePool on the
 * Container Insights application log group. Pure (no aws-cdk-lib).
 *
 * The line (kubernetes-sigs/karpenter v1.14.1 pkg/controllers/nodeclaim/lifecycle/launch.go, launchNodeClaim): on
 * `cloudprovider.IsInsufficientCapacityError(err)` Karpenter calls `log.FromContext(ctx).Error(err, "failed launching
 * nodeclaim")`, deletes the NodeClaim and counts karpenter_nodeclaims_disrupted_total{reason="insufficient_capacity"}.
 * Its zap JSON encoder (pkg/operator/logging/logging.go DefaultZapConfig: keys level, time, logger, message; zapr
 * writes the error under "error") and controller-runtime's reconciler logger add `"NodeClaim":{"name":...}`. The
 * NodeClaim is named `<nodepool>-<random suffix>`; the line has no NodePool field. The same message is logged for a
 * NodeClass that is not ready, whose error starts "NodeClassRef not ready, " (pkg/cloudprovider/types.go).
 *
 * The error text: `InsufficientCapacityError.Error()` is "insufficient capacity, <cause>" (pkg/cloudprovider/types.go),
 * but karpenter-provider-aws v1.14.1 wraps the EC2 fleet error as "creating instance, insufficient capacity, ..."
 * (pkg/cloudprovider/cloudprovider.go Create), so the filter accepts both prefixes.
 *
 * Fluent Bit of the amazon-cloudwatch-observability add-on ships container logs to
 * /aws/containerinsights/<cluster>/application and parses JSON lines under `log_processed` (Merge_Log On,
 * Merge_Log_Key log_processed: aws-observability/helm-charts charts/amazon-cloudwatch-observability values.yaml).
 *
 * Karpenter does not retry an offering that failed for a while (an unavailable-offerings cache), so log lines
 * undercount a sustained shortage; the reconciler pairs them with desired > ready replicas.
 */
import { METRIC_NAMESPACE } from './contract';
import { type MetricStatSource } from './aws-published';

/** Namespace of the per-NodePool capacity-error metrics of the metric filters. */
export const KARPENTER_CAPACITY_NAMESPACE = `${METRIC_NAMESPACE}/Karpenter`;

/** Where Fluent Bit of the add-on writes container logs (and where the filters attach). */
export function applicationLogGroupName(clusterName: string): string {
  return `/aws/containerinsights/${clusterName}/application`;
}

/** Where the CloudWatch agent writes the EMF of Prometheus scrapes. */
export function prometheusLogGroupName(clusterName: string): string {
  return `/aws/containerinsights/${clusterName}/prometheus`;
}

/**
 * The capacity-error metric of one NodePool. A metric filter's dimensions can only take values from the log event
 * and the line names no class, so the NodePool (unique in its cluster) is in the metric name, with no dimensions.
 */
export function karpenterCapacityErrorMetric(clusterName: string, nodePoolName: string): MetricStatSource {
  return { namespace: KARPENTER_CAPACITY_NAMESPACE, metricName: `InsufficientCapacity/${clusterName}/${nodePoolName}`, dimensions: {}, stat: 'Sum' };
}

/** The NodePool a capacity-error metric counts, from the name `karpenterCapacityErrorMetric` gives it. */
export function nodePoolOfCapacityMetric(metricName: string): string | undefined {
  const parts = metricName.split('/');
  return parts.length >= 3 && parts[parts.length - 1] ? parts[parts.length - 1] : undefined;
}

/**
 * The capacity-error filters set no `defaultValue`, and a metric filter without one publishes nothing while no log
 * event matches (PutMetricFilter `defaultValue`: https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_MetricTransformation.html;
 * aws-cdk-lib MetricFilterProps.defaultValue "Default: No metric emitted."): the metric exists only after the first
 * capacity error of its NodePool. Completes "not yet published (expected until the first ...)".
 */
export const KARPENTER_CAPACITY_ERROR_PUBLISHED_ON = 'insufficient-capacity launch failure of the NodePool';

function quoted(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * Which pods write Karpenter's lines: the Kubernetes metadata Fluent Bit of the amazon-cloudwatch-observability add-on
 * adds to every application log line under `kubernetes` (its kubernetes filter, chart 6.4.0 values.yaml
 * application-log.conf: Labels Off, Annotations Off; the map holds pod_name, namespace_name, pod_id, host, pod_ip,
 * container_name, docker_id, container_hash, container_image: fluent/fluent-bit plugins/filter_kubernetes/kube_meta.c
 * merge_pod_meta). pod_name, namespace_name and container_name come from the log file name the kubelet writes
 * (`<pod>_<namespace>_<container>-<id>.log`), so a workload cannot choose them, and the application's own JSON is
 * merged under `log_processed` (Merge_Log_Key), so it cannot write a top-level `kubernetes` key.
 */
export interface KarpenterPods {
  /** Namespace of the Karpenter release. */
  readonly namespace: string;
  /** Prefix of its pod names: the Deployment's name (the chart's fullname) and '-'. */
  readonly podNamePrefix: string;
  /**
   * Container of the controller: `controller` in the Karpenter chart (aws/karpenter-provider-aws
   * charts/karpenter/templates/deployment.yaml).
   * @default 'controller'
   */
  readonly containerName?: string;
}

/**
 * The Karpenter pods a pattern of `karpenterCapacityErrorPattern` selects (its literal namespace, container and pod
 * prefix terms), to build log lines it must match; undefined for a pattern without them.
 */
export function karpenterPodsOfPattern(pattern: string): KarpenterPods | undefined {
  const term = (field: string) => {
    const m = new RegExp(`\\$\\.kubernetes\\.${field} = "((?:[^"\\\\]|\\\\.)*)"`).exec(pattern);
    return m ? m[1].replace(/\\(.)/g, '$1') : undefined;
  };
  const [namespace, containerName, pod] = [term('namespace_name'), term('container_name'), term('pod_name')];
  return namespace !== undefined && containerName !== undefined && pod?.endsWith('*')
    ? { namespace, containerName, podNamePrefix: pod.slice(0, -1) } : undefined;
}

/**
 * Longest filter pattern CloudWatch Logs accepts: `filterPattern` "Maximum length of 1024"
 * (https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_MetricFilter.html). A longer one fails the
 * deploy (PutMetricFilter), so the patterns are measured at synth.
 */
export const FILTER_PATTERN_MAX_LENGTH = 1024;

/**
 * The filter pattern of one NodePool: Karpenter's insufficient-capacity launch failures of NodeClaims named after it,
 * written by Karpenter's own pods only (any other pod's JSON line with the same fields is ignored: otherwise a
 * workload could force capacity mode by printing one). A NodeClaim of another pool whose name extends this pool's
 * name and a '-' (e.g. `svc-a10g-triton-x7k2p` against pool `svc-a10g`) is excluded by name: `otherNodePools` lists
 * the pools of the same cluster the construct knows.
 */
export function karpenterCapacityErrorPattern(nodePoolName: string, karpenter: KarpenterPods, otherNodePools: readonly string[] = []): string {
  const f = '$.log_processed';
  const k = '$.kubernetes';
  const extending = otherNodePools.filter((p) => p !== nodePoolName && p.startsWith(`${nodePoolName}-`));
  // Excluding `a-b-*` already excludes `a-b-c-*`: only the shortest names are written, to stay within the limit.
  const longer = [...new Set(extending)].filter((p) => !extending.some((q) => q !== p && p.startsWith(`${q}-`)));
  return [
    `{ (${k}.namespace_name = ${quoted(karpenter.namespace)})`,
    `(${k}.container_name = ${quoted(karpenter.containerName ?? 'controller')})`,
    `(${k}.pod_name = ${quoted(`${karpenter.podNamePrefix}*`)})`,
    `(${f}.message = "failed launching nodeclaim")`,
    `((${f}.error = "insufficient capacity*") || (${f}.error = "creating instance, insufficient capacity*"))`,
    `(${f}.NodeClaim.name = ${quoted(`${nodePoolName}-*`)})`,
    ...longer.map((p) => `(${f}.NodeClaim.name != ${quoted(`${p}-*`)})`),
  ].join(' && ') + ' }';
}
