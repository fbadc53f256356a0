// The reclaim injection's pure half: a zero cap and the NodeClaims to delete, and every refusal that keeps it from
// starting (a drain that could hang, a budget that allows nothing, a count the pool does not have).
import { goDurationSeconds, reclaimPlan, type ReclaimInput } from '../../lib/core/game-day/reclaim';

const LABELS = { 'app.kubernetes.io/name': 'sd21', 'capacity-aware-inference/class': 'inf2' };
const claim = (name: string, node: string | undefined, extra: { grace?: string | null; deleting?: boolean; ready?: 'True' | 'False' | 'Unknown' } = {}) => ({
  metadata: { name, ...(extra.deleting ? { deletionTimestamp: '2026-12-01T13:59:00Z' } : {}) },
  spec: extra.grace === null ? {} : { terminationGracePeriod: extra.grace ?? '2580s' },
  status: { ...(node ? { nodeName: node } : {}), conditions: [{ type: 'Launched', status: 'True' }, { type: 'Ready', status: extra.ready ?? 'True' }] },
});
const pod = (name: string, node: string, annotations?: Record<string, string>) => ({
  metadata: { name, ...(annotations ? { annotations } : {}) }, spec: { nodeName: node },
});
const pdb = (allowed: number | undefined, selector: object = { matchLabels: LABELS }) => ({
  metadata: { name: 'sd21-inf2' }, spec: { selector }, status: allowed === undefined ? {} : { disruptionsAllowed: allowed },
});

function input(over: Partial<ReclaimInput> = {}): ReclaimInput {
  return {
    pool: { metadata: { name: 'sd21-inf2' }, spec: { limits: { cpu: '1000', 'aws.amazon.com/neuron': '16' } }, status: { resources: { cpu: '64', memory: '256Gi' }, nodes: 2 } },
    nodeClaims: [claim('sd21-inf2-b', 'ip-2'), claim('sd21-inf2-a', 'ip-1')],
    count: 1,
    pods: [pod('p1', 'ip-1'), pod('p2', 'ip-2')],
    podLabels: LABELS,
    pdbs: [pdb(1)],
    ...over,
  };
}

test('limits go to zero for every resource limited or used; the restore puts back the old ones and removes the added', () => {
  const p = reclaimPlan(input());
  expect(p.cap).toEqual({ spec: { limits: { cpu: '0', 'aws.amazon.com/neuron': '0', memory: '0' } } });
  expect(p.restore).toEqual({ spec: { limits: { cpu: '1000', 'aws.amazon.com/neuron': '16', memory: null } } });
  expect(p.refusals).toEqual([]);
  // Without limits before, the restore removes them.
  expect(reclaimPlan(input({ pool: { metadata: { name: 'x' }, spec: {}, status: { resources: { cpu: '8' } } } })).restore).toEqual({ spec: { limits: null } });
});

test('n NodeClaims (ties by name), the rest kept; one already deleting is neither counted nor deleted again', () => {
  const p = reclaimPlan(input());
  expect([p.reclaimed, p.kept, p.evictedPods, p.keptPods]).toEqual([['sd21-inf2-a'], ['sd21-inf2-b'], 1, 1]);
  const all = reclaimPlan(input({ count: 'all', nodeClaims: [claim('a', 'ip-1'), claim('b', 'ip-2'), claim('c', 'ip-3', { deleting: true })] }));
  expect([all.reclaimed, all.kept, all.evictedPods]).toEqual([['a', 'b'], [], 2]);
});

test('refused: a count the pool does not have, or no NodeClaim at all', () => {
  expect(reclaimPlan(input({ count: 3 })).refusals).toEqual(['--reclaim 3: NodePool sd21-inf2 has 2 Ready NodeClaim(s); reclaim 1 to 2, or all']);
  expect(reclaimPlan(input({ nodeClaims: [] })).refusals).toEqual(['NodePool sd21-inf2 has no Ready NodeClaim (label karpenter.sh/nodepool=sd21-inf2) to reclaim']);
});

test('refused: a NodeClaim without terminationGracePeriod (its drain could hang forever)', () => {
  const r = reclaimPlan(input({ nodeClaims: [claim('sd21-inf2-a', 'ip-1', { grace: null })] })).refusals;
  expect(r).toHaveLength(1);
  expect(r[0]).toMatch(/^NodeClaim sd21-inf2-a has no spec.terminationGracePeriod/);
});

test('refused: a pod on a reclaimed node with karpenter.sh/do-not-disrupt, "true" or a duration', () => {
  for (const value of ['true', '30m']) {
    expect(reclaimPlan(input({ pods: [pod('p1', 'ip-1', { 'karpenter.sh/do-not-disrupt': value })] })).refusals)
      .toEqual(['pod(s) p1 carry karpenter.sh/do-not-disrupt: Karpenter does not evict them before terminationGracePeriod']);
  }
  // On a node that stays it does not matter.
  expect(reclaimPlan(input({ pods: [pod('p1', 'ip-1'), pod('p3', 'ip-1'), pod('p2', 'ip-2', { 'karpenter.sh/do-not-disrupt': 'true' })] })).refusals).toEqual([]);
});

test('refused: a PodDisruptionBudget of the class that allows no disruption now; a selector with expressions counts as the class\'s', () => {
  expect(reclaimPlan(input({ pdbs: [pdb(0)] })).refusals[0])
    .toMatch(/^PodDisruptionBudget sd21-inf2 allows no disruption now \(status.disruptionsAllowed 0\)/);
  expect(reclaimPlan(input({ pdbs: [pdb(undefined)] })).refusals[0]).toMatch(/disruptionsAllowed absent/);
  expect(reclaimPlan(input({ pdbs: [pdb(0, { matchExpressions: [{ key: 'x', operator: 'Exists' }] })] })).refusals).toHaveLength(1);
  // Another workload's budget is not the class's.
  expect(reclaimPlan(input({ pdbs: [pdb(0, { matchLabels: { 'app.kubernetes.io/name': 'other' } })] })).refusals).toEqual([]);
});

test('more class pods on the reclaimed nodes than the budget allows: said before the run (the rest wait for terminationGracePeriod)', () => {
  const p = reclaimPlan(input({ count: 'all' }));
  expect(p.refusals).toEqual([]);
  expect(p.notes[0]).toBe('2 pod(s) of the class are on the reclaimed nodes and its PodDisruptionBudget allows 1 eviction(s) at a time: '
    + 'replacements cannot become Ready under the cap, so the rest are deleted at the NodeClaim\'s terminationGracePeriod (2580s) '
      + 'less their own grace period, and gone when it elapses');
  expect(p.notes.at(-1)).toMatch(/^every pod on the reclaimed nodes is evicted, not only the class's/);
});

test('refused: a static NodePool (spec.replicas) replaces what is deleted and takes no resource limits', () => {
  const pool = { metadata: { name: 'sd21-inf2' }, spec: { replicas: 2, limits: { nodes: '4' } }, status: { resources: { cpu: '64' } } };
  expect(reclaimPlan(input({ pool })).refusals).toEqual([
    'NodePool sd21-inf2 is static (spec.replicas 2): Karpenter replaces deleted NodeClaims to keep its count, and its limits take only nodes; a reclaim cannot be held there',
  ]);
});

test('the NodeClaims running most class pods go first, whatever their names', () => {
  const p = reclaimPlan(input({
    nodeClaims: [claim('a', 'ip-1'), claim('b', 'ip-2'), claim('c', 'ip-3')],
    pods: [pod('p1', 'ip-3'), pod('p2', 'ip-3'), pod('p3', 'ip-2')],
  }));
  expect([p.reclaimed, p.kept, p.evictedPods, p.keptPods]).toEqual([['c'], ['b', 'a'], 2, 1]);
  expect(reclaimPlan(input({ count: 2, nodeClaims: [claim('a', 'ip-1'), claim('b', 'ip-2'), claim('c', 'ip-3')], pods: [pod('p1', 'ip-3'), pod('p3', 'ip-2')] })).reclaimed)
    .toEqual(['b', 'c']);
});

test('a NodeClaim still launching (no node) or not Ready is never chosen, and is said', () => {
  const p = reclaimPlan(input({
    count: 'all',
    nodeClaims: [claim('a', undefined, { ready: 'Unknown' }), claim('b', 'ip-2', { ready: 'False' }), claim('c', 'ip-3')],
    pods: [pod('p1', 'ip-2'), pod('p2', 'ip-3')],
  }));
  expect([p.reclaimed, p.kept, p.evictedPods]).toEqual([['c'], [], 1]);
  expect(p.notes).toContain('NodeClaim(s) a, b not Ready (still launching, or unhealthy): not reclaimed; one that becomes Ready joins the pool '
    + 'despite the cap, since the cap stops only new launches');
  // A NodeClaim without any Ready condition is not Ready either.
  expect(reclaimPlan(input({ nodeClaims: [{ metadata: { name: 'x' }, spec: { terminationGracePeriod: '60s' }, status: { nodeName: 'ip-1' } }] })).refusals)
    .toEqual(['NodePool sd21-inf2 has no Ready NodeClaim (label karpenter.sh/nodepool=sd21-inf2) to reclaim']);
});

test('refused: the chosen NodeClaims run no pod of the class (the game day would take nothing away)', () => {
  expect(reclaimPlan(input({ pods: [] })).refusals)
    .toEqual(['the 1 NodeClaim(s) to reclaim (sd21-inf2-a) run no pod of the class: deleting them takes nothing away from it']);
  // With the class on one node only, --reclaim 1 picks that node.
  expect(reclaimPlan(input({ pods: [pod('p2', 'ip-2')] })).reclaimed).toEqual(['sd21-inf2-b']);
});

test('the plan carries the budget\'s allowance and the grace period the prediction drains by', () => {
  expect([reclaimPlan(input()).disruptionsAllowed, reclaimPlan(input()).terminationGracePeriodSeconds]).toEqual([1, 2580]);
  expect(reclaimPlan(input({ pdbs: [] })).disruptionsAllowed).toBe(Infinity);
  // The evicted class pods' own grace (the longest), which Karpenter subtracts from the NodeClaim's; the kept pods' is not read.
  const graced = (name: string, node: string, grace: number) => ({
    metadata: { name }, spec: { nodeName: node, terminationGracePeriodSeconds: grace },
  });
  expect(reclaimPlan(input({ pods: [graced('p1', 'ip-1', 33), graced('p3', 'ip-1', 40), graced('p2', 'ip-2', 900)] })).podTerminationGracePeriodSeconds).toBe(40);
  expect(reclaimPlan(input()).podTerminationGracePeriodSeconds).toBeUndefined();
  expect([goDurationSeconds('2580s'), goDurationSeconds('1h0m30s'), goDurationSeconds('5m'), goDurationSeconds('10ms'), goDurationSeconds('')])
    .toEqual([2580, 3630, 300, undefined, undefined]);
});
