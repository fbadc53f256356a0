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

function quoted(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * The filter pattern of one NodePool: Karpenter's insufficient-capacity launch failures of NodeClaims named after it.
 * A NodeClaim of another pool whose name extends this pool's name and a '-' (e.g. `svc-a10g-triton-x7k2p` against
 * pool `svc-a10g`) is excluded by name: `otherNodePools` lists the pools of the same cluster the construct knows.
 */
export function karpenterCapacityErrorPattern(nodePoolName: string, otherNodePools: readonly string[] = []): string {
  const f = '$.log_processed';
  const longer = otherNodePools.filter((p) => p !== nodePoolName && p.startsWith(`${nodePoolName}-`));
  return [
    `{ (${f}.message = "failed launching nodeclaim")`,
    `((${f}.error = "insufficient capacity*") || (${f}.error = "creating instance, insufficient capacity*"))`,
    `(${f}.NodeClaim.name = ${quoted(`${nodePoolName}-*`)})`,
    ...longer.map((p) => `(${f}.NodeClaim.name != ${quoted(`${p}-*`)})`),
  ].join(' && ') + ' }';
}
