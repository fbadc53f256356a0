import { matchesFilterPattern } from '../../lib/core/metrics/filter-pattern';
import { karpenterCapacityErrorPattern, karpenterPodsOfPattern, type KarpenterPods } from '../../lib/core/metrics/karpenter-capacity';
import { capacityFilterSamples } from '../../lib/core/verify/log-lines';

/**
 * verify tests a deployed capacity-error filter with lines written by the pods the filter selects: a cluster's own
 * Karpenter in kube-system, or an imported cluster's release elsewhere (`ExistingKarpenter.pods`).
 */
describe('capacity filter samples follow the Karpenter pods of the pattern', () => {
  const releases: Array<[string, KarpenterPods]> = [
    ['the library\'s own release', { namespace: 'kube-system', podNamePrefix: 'karpenter-' }],
    ['an existing release in its own namespace', { namespace: 'karpenter', podNamePrefix: 'karpenter-', containerName: 'controller' }],
    ['a renamed release with a quoted character', { namespace: 'platform', podNamePrefix: 'kc-"x"-', containerName: 'manager' }],
  ];

  test.each(releases)('%s: the pods read back from the pattern, and only the Karpenter line matches', (_, pods) => {
    const pattern = karpenterCapacityErrorPattern('sd21-inf2', pods, ['sd21-inf2-large']);
    expect(karpenterPodsOfPattern(pattern)).toEqual({ containerName: 'controller', ...pods });
    const samples = capacityFilterSamples('sd21-inf2', karpenterPodsOfPattern(pattern)!);
    expect(samples.map((s) => matchesFilterPattern(pattern, s.line))).toEqual(samples.map((s) => s.mustMatch));
  });

  test("lines of the default pods would miss an existing release's filter (what verify reported as a FAIL before)", () => {
    const pattern = karpenterCapacityErrorPattern('sd21-inf2', releases[1][1]);
    const [karpenterLine] = capacityFilterSamples('sd21-inf2', releases[0][1]);
    expect(matchesFilterPattern(pattern, karpenterLine.line)).toBe(false);
  });

  test('a pattern without the pod terms yields no pods (verify skips the filter)', () => {
    expect(karpenterPodsOfPattern('{ $.log_processed.message = "failed launching nodeclaim" }')).toBeUndefined();
  });
});
