/**
 * Log lines in the exact shape the capacity-error metric filters see, to test a deployed filter with CloudWatch's own
 * matcher (TestMetricFilter): Karpenter's launch failure of a NodeClaim, and lines the filter must not count.
 *
 * Karpenter's line (kubernetes-sigs/karpenter v1.14.1 pkg/controllers/nodeclaim/lifecycle/launch.go:
 * `log.FromContext(ctx).Error(err, "failed launching nodeclaim")`; zap JSON keys level, time, logger, message from
 * pkg/operator/logging/logging.go; controller-runtime's reconciler context: controller, controllerGroup,
 * controllerKind, NodeClaim, namespace, name, reconcileID; the error text of karpenter-provider-aws v1.14.1
 * pkg/cloudprovider/cloudprovider.go Create), wrapped the way Fluent Bit of the amazon-cloudwatch-observability
 * add-on writes a container's line to /aws/containerinsights/<cluster>/application: the raw line under `log`, parsed
 * JSON under `log_processed` (aws-observability/helm-charts charts/amazon-cloudwatch-observability values.yaml,
 * Merge_Log On, Merge_Log_Key log_processed). See lib/core/metrics/karpenter-capacity.ts.
 */

import { type KarpenterPods } from '../metrics/karpenter-capacity';

/** The EC2 fleet error Karpenter wraps when a launch finds no capacity (karpenter-provider-aws v1.14.1). */
export const FLEET_INSUFFICIENT_CAPACITY = 'creating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: '
  + 'We currently do not have sufficient capacity in the Availability Zone you requested.';

const FIXED_TIME = '2026-11-30T14:03:12.512Z';

function fluentBitRecord(podName: string, namespace: string, container: string, log: string, parsed?: Record<string, unknown>): string {
  return JSON.stringify({
    time: FIXED_TIME,
    stream: 'stderr',
    _p: 'F',
    log,
    ...(parsed ? { log_processed: parsed } : {}),
    kubernetes: { pod_name: podName, namespace_name: namespace, container_name: container },
  });
}

/**
 * Karpenter's "failed launching nodeclaim" line for a NodeClaim, as it lands in the application log group, written by
 * the pods the filter selects (the cluster's own Karpenter release, or `ExistingKarpenter.pods` of an imported one).
 */
export function karpenterLaunchFailureLine(nodeClaimName: string, pods: KarpenterPods, error: string = FLEET_INSUFFICIENT_CAPACITY): string {
  const line = {
    level: 'ERROR',
    time: FIXED_TIME,
    logger: 'controller',
    message: 'failed launching nodeclaim',
    commit: '1a2b3c4',
    controller: 'nodeclaim.lifecycle',
    controllerGroup: 'karpenter.sh',
    controllerKind: 'NodeClaim',
    NodeClaim: { name: nodeClaimName },
    namespace: '',
    name: nodeClaimName,
    reconcileID: '6f1c1c4e-2a0c-4d3e-9d55-0b9f0b7c2e11',
    error,
  };
  return fluentBitRecord(`${pods.podNamePrefix}7d9f8c5b6-abcde`, pods.namespace, pods.containerName ?? 'controller', JSON.stringify(line), line);
}

/**
 * A line of a foreign pod that a careless filter would count: a serving pod named like the NodePool, logging plain
 * text (no `log_processed`) about insufficient capacity.
 */
export function foreignPodLine(podName: string): string {
  return fluentBitRecord(podName, 'default', 'server', `ERROR failed launching nodeclaim ${podName}: insufficient capacity`);
}

export interface FilterSample {
  readonly line: string;
  readonly mustMatch: boolean;
  readonly what: string;
}

/** The lines one NodePool's filter is tested with, and whether each must match. */
export function capacityFilterSamples(nodePoolName: string, pods: KarpenterPods): FilterSample[] {
  return [
    { line: karpenterLaunchFailureLine(`${nodePoolName}-x7k2p`, pods), mustMatch: true, what: `Karpenter's insufficient-capacity launch failure of NodeClaim ${nodePoolName}-x7k2p` },
    { line: foreignPodLine(`${nodePoolName}-server-6c9d7-q2w3e`), mustMatch: false, what: `a plain-text line of a foreign pod ${nodePoolName}-server-6c9d7-q2w3e` },
    {
      line: karpenterLaunchFailureLine(`${nodePoolName}-x7k2p`, pods, 'NodeClassRef not ready, EC2NodeClass is not ready'),
      mustMatch: false,
      what: 'Karpenter\'s launch failure for a NodeClass that is not ready (not a capacity error)',
    },
  ];
}
