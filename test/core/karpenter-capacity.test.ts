import { filterPatternProblems, matchesFilterPattern } from '../../lib/core/metrics/filter-pattern';
import { karpenterCapacityErrorMetric, karpenterCapacityErrorPattern, type KarpenterPods } from '../../lib/core/metrics/karpenter-capacity';

/**
 * The Karpenter capacity-error metric filter against log lines in Karpenter 1.14's real format, as Fluent Bit of the
 * amazon-cloudwatch-observability add-on ships them (the JSON line parsed under `log_processed`).
 *
 * The line: kubernetes-sigs/karpenter v1.14.1 pkg/controllers/nodeclaim/lifecycle/launch.go
 * (`log.FromContext(ctx).Error(err, "failed launching nodeclaim")`), zap JSON encoder keys from
 * pkg/operator/logging/logging.go (level, time, logger, message; CapitalLevelEncoder, ISO8601 time), the
 * controller-runtime reconciler context (controller, controllerGroup, controllerKind, NodeClaim, namespace, name,
 * reconcileID) and the error texts of pkg/cloudprovider/types.go and karpenter-provider-aws v1.14.1
 * pkg/cloudprovider/cloudprovider.go / pkg/providers/instance/instance.go.
 *
 * The matcher is this library's re-implementation of the subset of CloudWatch's filter-pattern syntax it writes,
 * not CloudWatch itself: it proves the pattern's logic, not CloudWatch's parser.
 */
/** The Kubernetes metadata Fluent Bit adds to a line of Karpenter's controller (installed as release `karpenter` in kube-system). */
const KARPENTER_POD = { pod_name: 'karpenter-7d9f8c5b6-abcde', namespace_name: 'kube-system', container_name: 'controller' };
const KARPENTER: KarpenterPods = { namespace: 'kube-system', podNamePrefix: 'karpenter-' };

function karpenterLine(nodeClaim: string, error: string, message = 'failed launching nodeclaim', level = 'ERROR', pod: Record<string, string> = KARPENTER_POD): string {
  const line = {
    level,
    time: '2026-11-30T14:03:12.512Z',
    logger: 'controller',
    message,
    commit: '1a2b3c4',
    controller: 'nodeclaim.lifecycle',
    controllerGroup: 'karpenter.sh',
    controllerKind: 'NodeClaim',
    NodeClaim: { name: nodeClaim },
    namespace: '',
    name: nodeClaim,
    reconcileID: '6f1c1c4e-2a0c-4d3e-9d55-0b9f0b7c2e11',
    error,
  };
  // What Fluent Bit writes to the application log group: the raw line under `log`, parsed under `log_processed`.
  return JSON.stringify({
    time: '2026-11-30T14:03:12.512901234Z',
    stream: 'stderr',
    _p: 'F',
    log: JSON.stringify(line),
    log_processed: line,
    // Fluent Bit's kubernetes filter (Labels Off, Annotations Off), values as the kubelet's log file name gives them.
    kubernetes: { ...pod, pod_id: '0b4f6a5e-2f1d-4c8b-9d3e-7a6b5c4d3e2f', host: 'ip-10-0-1-23.ec2.internal', container_image: 'public.ecr.aws/karpenter/controller:1.14.1' },
  });
}

const FLEET_ICE = 'creating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: We currently do not have '
  + 'sufficient g5.xlarge capacity in the Availability Zone you requested (us-east-1a).';
const ALL_UNAVAILABLE = 'creating instance, insufficient capacity, all requested instance types were unavailable during launch';
const NODECLASS_MISSING = 'insufficient capacity, resolving nodeclass, ec2nodeclasses.karpenter.k8s.aws "sd21-inf2" not found';

describe('Karpenter capacity-error filter', () => {
  const pools = ['sd21-a10g', 'sd21-a10g-triton', 'sd21-inf2'];
  const a10g = karpenterCapacityErrorPattern('sd21-a10g', KARPENTER, pools);
  const triton = karpenterCapacityErrorPattern('sd21-a10g-triton', KARPENTER, pools);

  test('the pattern is within the subset the matcher (and the library) uses', () => {
    expect(filterPatternProblems(a10g)).toEqual([]);
    expect(a10g).toBe('{ ($.kubernetes.namespace_name = "kube-system") && ($.kubernetes.container_name = "controller") && '
      + '($.kubernetes.pod_name = "karpenter-*") && ($.log_processed.message = "failed launching nodeclaim") && (($.log_processed.error = "insufficient capacity*") || '
      + '($.log_processed.error = "creating instance, insufficient capacity*")) && ($.log_processed.NodeClaim.name = "sd21-a10g-*") && '
      + '($.log_processed.NodeClaim.name != "sd21-a10g-triton-*") }');
  });

  test.each([
    ['an EC2 fleet insufficient-capacity error', FLEET_ICE],
    ['every offering unavailable', ALL_UNAVAILABLE],
    ['a missing NodeClass (Karpenter treats it as insufficient capacity)', NODECLASS_MISSING],
  ])('matches %s of its own NodeClaim', (_, error) => {
    expect(matchesFilterPattern(a10g, karpenterLine('sd21-a10g-x7k2p', error))).toBe(true);
  });

  test('does not match another NodePool, even one whose name extends its own', () => {
    expect(matchesFilterPattern(a10g, karpenterLine('sd21-inf2-q8w4z', FLEET_ICE))).toBe(false);
    expect(matchesFilterPattern(a10g, karpenterLine('sd21-a10g-triton-m2n6b', FLEET_ICE))).toBe(false);
    expect(matchesFilterPattern(triton, karpenterLine('sd21-a10g-triton-m2n6b', FLEET_ICE))).toBe(true);
    expect(matchesFilterPattern(triton, karpenterLine('sd21-a10g-x7k2p', FLEET_ICE))).toBe(false);
  });

  test.each([
    ['a workload in another namespace', { pod_name: 'karpenter-7d9f8c5b6-abcde', namespace_name: 'default', container_name: 'controller' }],
    ['another pod in kube-system', { pod_name: 'forger-5c6d7e8f9-xyz12', namespace_name: 'kube-system', container_name: 'controller' }],
    ['another container of a karpenter-named pod', { pod_name: 'karpenter-7d9f8c5b6-abcde', namespace_name: 'kube-system', container_name: 'sidecar' }],
    ['no Kubernetes metadata at all', {}],
  ])('fails when the same line comes from %s (it cannot force capacity mode)', (_, pod) => {
    expect(matchesFilterPattern(a10g, karpenterLine('sd21-a10g-x7k2p', FLEET_ICE, undefined, undefined, pod))).toBe(false);
  });

  test('writes only the shortest extending names: excluding "a-b-*" already excludes "a-b-c-*"', () => {
    const nested = ['sd21-a10g', 'sd21-a10g-triton', 'sd21-a10g-triton-fp8', 'sd21-a10g-triton'];
    const pattern = karpenterCapacityErrorPattern('sd21-a10g', KARPENTER, nested);
    expect(pattern).toBe(a10g);
    expect(matchesFilterPattern(pattern, karpenterLine('sd21-a10g-triton-fp8-m2n6b', FLEET_ICE))).toBe(false);
    expect(karpenterCapacityErrorPattern('sd21-a10g-triton', KARPENTER, nested)).toContain('!= "sd21-a10g-triton-fp8-*"');
  });

  test('a workload cannot forge the metadata from inside its line: its JSON is merged under log_processed', () => {
    const forged = JSON.parse(karpenterLine('sd21-a10g-x7k2p', FLEET_ICE, undefined, undefined, { pod_name: 'app-1', namespace_name: 'default', container_name: 'app' }));
    forged.log_processed.kubernetes = KARPENTER_POD;
    expect(matchesFilterPattern(a10g, JSON.stringify(forged))).toBe(false);
  });

  test('does not match other launch failures or other lines of its own NodeClaims', () => {
    expect(matchesFilterPattern(a10g, karpenterLine('sd21-a10g-x7k2p', 'NodeClassRef not ready, EC2NodeClass is not ready'))).toBe(false);
    expect(matchesFilterPattern(a10g, karpenterLine('sd21-a10g-x7k2p', 'launching nodeclaim, creating instance, UnauthorizedOperation',
      'Reconciler error'))).toBe(false);
    expect(matchesFilterPattern(a10g, karpenterLine('sd21-a10g-x7k2p', '', 'launched nodeclaim', 'INFO'))).toBe(false);
    expect(matchesFilterPattern(a10g, 'failed launching nodeclaim insufficient capacity sd21-a10g-x7k2p')).toBe(false);
  });

  test('does not match a NodePool over its limits (the game day\'s cap): no insufficient-capacity error, so the simulator\'s limit reports none', () => {
    // kubernetes-sigs/karpenter@6e7eab7a0f48 (v1.14.1): the scheduler drops a NodePool's instance types whose launch would
    // exceed its limits before any launch (pkg/controllers/provisioning/scheduling/scheduler.go:708-719, 1068-1085, "all
    // available instance types exceed limits for nodepool") and logs "could not schedule pod" (:302-303); "failed
    // launching nodeclaim" comes only from a cloud provider's Create error (pkg/controllers/nodeclaim/lifecycle/launch.go:81-99).
    // Even carrying the NodePool's own name where a NodeClaim's goes, the line is not a capacity error.
    expect(matchesFilterPattern(a10g, karpenterLine('sd21-a10g-x7k2p', 'all available instance types exceed limits for nodepool: "sd21-a10g"',
      'could not schedule pod'))).toBe(false);
  });

  test('names one metric per NodePool, without dimensions (a filter dimension can only take a log field)', () => {
    expect(karpenterCapacityErrorMetric('prod', 'sd21-a10g')).toEqual({
      namespace: 'CapacityAwareInference/Karpenter', metricName: 'InsufficientCapacity/prod/sd21-a10g', dimensions: {}, stat: 'Sum',
    });
  });

  test('the matcher rejects syntax outside its subset instead of guessing', () => {
    expect(filterPatternProblems('{ $.latency > 100 }')).toEqual(["unsupported syntax at '> 100 }'"]);
    expect(filterPatternProblems('ERROR')).not.toEqual([]);
  });
});
