/**
 * The EKS injection that takes existing capacity away, like a spot reclaim (the simulator's spot-like reclaim
 * scenario): the NodePool cap alone only stops new nodes, so a class already at its most replicas loses nothing.
 * Here the class's NodePool limits go to zero and some or all of its NodeClaims are deleted; Karpenter drains them and
 * cannot replace them. The restore lifts the cap: the deleted nodes do not come back, Karpenter launches replacements
 * for the Pending pods, as after a real reclaim. Pure before/after computations and refusals; bin/game-day.ts applies
 * them through the user's kubectl.
 *
 * What it relies on, at the pinned Karpenter (chart 1.14.1, lib/eks/versions.ts):
 * - Deleting a NodeClaim deletes its node; Karpenter's finalizer blocks the deletion while its termination
 *   controller taints the node `karpenter.sh/disrupted:NoSchedule`, evicts its pods with the Eviction API (so
 *   PodDisruptionBudgets are respected) and waits for the drain, then terminates the instance
 *   (aws/karpenter-provider-aws@v1.14.1 website/content/en/v1.14/concepts/disruption.md, "Termination Controller" and
 *   "Manual Methods": `kubectl delete nodeclaims -l karpenter.sh/nodepool=$NODEPOOL_NAME`).
 * - PDBs and `karpenter.sh/do-not-disrupt` pods are respected during the drain until the NodeClaim's
 *   `terminationGracePeriod` elapses, when the remaining pods are deleted (same page, "TerminationGracePeriod";
 *   concepts/nodepools.md `spec.template.spec.terminationGracePeriod`). Without one, a blocking PDB or a do-not-disrupt
 *   pod holds the drain indefinitely: such a NodeClaim is refused.
 * - `spec.limits`: "If a limit has been exceeded, nodes provisioning is prevented until some nodes have been
 *   terminated" (concepts/nodepools.md `spec.limits`); existing nodes are not removed for it (limits are a behavioural
 *   field, not drift: disruption.md "Behavioral Fields"). An instance type is launched only when its capacity fits in
 *   limits - usage (kubernetes-sigs/karpenter@6e7eab7a0f48, the commit aws/karpenter-provider-aws v1.14.1's go.mod
 *   pins: pkg/controllers/provisioning/scheduling/scheduler.go `filterByRemainingResources` :1069-1085). A limit of
 *   zero therefore stops every launch, whatever remains.
 *   Limit checking is eventually consistent (nodepools.md): the cap is applied before any NodeClaim is deleted.
 */
import { limitsPatches, type LimitsPatch, type NodePoolState, type ResourceList } from './injection';

/** The Karpenter label that names a NodeClaim's NodePool (disruption.md, "Manual Methods"). */
export const NODEPOOL_LABEL = 'karpenter.sh/nodepool';
/**
 * The pod annotation ("true" or a duration) that keeps the termination controller from evicting the pod until
 * terminationGracePeriod (disruption.md, "Pod-Level Controls").
 */
export const DO_NOT_DISRUPT = 'karpenter.sh/do-not-disrupt';

/** The parts of a NodeClaim the reclaim reads. */
export interface NodeClaimState {
  readonly metadata: { readonly name: string; readonly deletionTimestamp?: string };
  readonly spec?: { readonly terminationGracePeriod?: string };
  readonly status?: {
    readonly nodeName?: string;
    /** `Ready` is the NodeClaim's own readiness (the CRD's printer column, karpenter.sh_nodeclaims.yaml:32 at v1.14.1). */
    readonly conditions?: ReadonlyArray<{ readonly type: string; readonly status: string }>;
  };
}

/** The parts of a PodDisruptionBudget the reclaim reads. */
export interface PdbState {
  readonly metadata: { readonly name: string };
  readonly spec?: { readonly selector?: { readonly matchLabels?: Readonly<Record<string, string>>; readonly matchExpressions?: readonly unknown[] } };
  readonly status?: { readonly disruptionsAllowed?: number };
}

/** The parts of a pod the reclaim reads. */
export interface PodState {
  readonly metadata: { readonly name: string; readonly annotations?: Readonly<Record<string, string>> };
  /**
   * terminationGracePeriodSeconds: how long before the node's grace ends Karpenter deletes the pod when the budget still
   * holds it; a pod without one is not deleted before (kubernetes-sigs/karpenter@v1.14.1
   * pkg/controllers/node/termination/terminator/terminator.go:169-178).
   */
  readonly spec?: { readonly nodeName?: string; readonly terminationGracePeriodSeconds?: number };
}

export interface ReclaimPlan {
  readonly nodePool: string;
  /** The NodeClaims to delete (the Ready ones running most class pods first), and the Ready ones left. */
  readonly reclaimed: readonly string[];
  readonly kept: readonly string[];
  /** The class's pods on the reclaimed nodes (evicted), and on the others. */
  readonly evictedPods: number;
  readonly keptPods: number;
  /** Evictions the class's PodDisruptionBudgets allow now (Infinity: none selects the class). */
  readonly disruptionsAllowed: number;
  /** The reclaimed NodeClaims' terminationGracePeriod, seconds (undefined: absent or not a plain Go duration). */
  readonly terminationGracePeriodSeconds?: number;
  /**
   * The longest terminationGracePeriodSeconds of the class's pods on them (undefined: none says): Karpenter deletes a
   * pod the budget holds that long before the node's grace ends (`interruptionHoldSeconds`).
   */
  readonly podTerminationGracePeriodSeconds?: number;
  readonly before: ResourceList | undefined;
  readonly after: ResourceList;
  readonly cap: LimitsPatch;
  readonly restore: LimitsPatch;
  /** Why it must not start (empty: it may). */
  readonly refusals: readonly string[];
  /** What the run will look like, said before anything changes. */
  readonly notes: readonly string[];
}

export interface ReclaimInput {
  readonly pool: NodePoolState;
  readonly nodeClaims: readonly NodeClaimState[];
  /** How many NodeClaims to delete. */
  readonly count: number | 'all';
  /** The class's pods (by its Deployment's selector) and their pod-template labels. */
  readonly pods: readonly PodState[];
  readonly podLabels: Readonly<Record<string, string>>;
  /** The PodDisruptionBudgets of the class's namespace. */
  readonly pdbs: readonly PdbState[];
}

/** Whether a PDB selects pods with `labels`; a selector with expressions is taken to select them (fail safe). */
function selects(pdb: PdbState, labels: Readonly<Record<string, string>>): boolean {
  const selector = pdb.spec?.selector;
  if (!selector) return false;
  if ((selector.matchExpressions?.length ?? 0) > 0) return true;
  return Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
}

/** The limits that stop every launch of the pool: zero for each resource it limits or uses. */
function zeroLimits(pool: NodePoolState): { after: ResourceList; cap: LimitsPatch; restore: LimitsPatch } {
  const before = pool.spec.limits;
  const keys = [...new Set([...Object.keys(before ?? {}), ...Object.keys(pool.status?.resources ?? {})])];
  const after = Object.fromEntries(keys.map((k) => [k, '0']));
  return { after, ...limitsPatches(before, after) };
}

/** A Go duration of hours, minutes and seconds (`2580s`, `1h0m0s`, as Kubernetes prints one) in seconds; else undefined. */
export function goDurationSeconds(value: string | undefined): number | undefined {
  const m = value === undefined ? null : /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s)?$/.exec(value);
  if (!m || value === '') return undefined;
  return Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
}

export function reclaimPlan(input: ReclaimInput): ReclaimPlan {
  const name = input.pool.metadata.name;
  const refusals: string[] = [];
  const notes: string[] = [];
  // Only a NodeClaim whose node is up and Ready can take class pods away: one being deleted is going anyway, one still
  // launching (no node yet) or not Ready runs no serving pod. The ones running most class pods go first.
  const classPods = (c: NodeClaimState) => input.pods.filter((p) => p.spec?.nodeName !== undefined && p.spec.nodeName === c.status?.nodeName).length;
  const isReady = (c: NodeClaimState) => !!c.status?.nodeName && (c.status.conditions ?? []).some((x) => x.type === 'Ready' && x.status === 'True');
  const live = input.nodeClaims.filter((c) => !c.metadata.deletionTimestamp && isReady(c))
    .map((c) => ({ c, pods: classPods(c) }))
    .sort((a, b) => b.pods - a.pods || a.c.metadata.name.localeCompare(b.c.metadata.name))
    .map(({ c }) => c);
  const skipped = input.nodeClaims.filter((c) => !c.metadata.deletionTimestamp && !isReady(c)).map((c) => c.metadata.name).sort();
  const count = input.count === 'all' ? live.length : input.count;
  if (input.pool.spec.replicas !== undefined) {
    // A static pool "maintains a fixed number of nodes regardless of pod demand" (concepts/nodepools.md spec.replicas) and
    // accepts only limits.nodes (the NodePool CRD's CEL rule, karpenter.sh_nodepools.yaml at v1.14.1).
    refusals.push(`NodePool ${name} is static (spec.replicas ${input.pool.spec.replicas}): Karpenter replaces deleted NodeClaims to keep its count, `
      + 'and its limits take only nodes; a reclaim cannot be held there');
  }
  if (live.length === 0) refusals.push(`NodePool ${name} has no Ready NodeClaim (label ${NODEPOOL_LABEL}=${name}) to reclaim`);
  else if (!(Number.isInteger(count) && count >= 1 && count <= live.length)) {
    refusals.push(`--reclaim ${input.count}: NodePool ${name} has ${live.length} Ready NodeClaim(s); reclaim 1 to ${live.length}, or all`);
  }
  const chosen = live.slice(0, Math.max(0, Math.min(count, live.length)));
  const chosenNodes = new Set(chosen.flatMap((c) => (c.status?.nodeName ? [c.status.nodeName] : [])));
  const evicted = input.pods.filter((p) => p.spec?.nodeName !== undefined && chosenNodes.has(p.spec.nodeName));
  if (chosen.length > 0 && evicted.length === 0) {
    refusals.push(`the ${chosen.length} NodeClaim(s) to reclaim (${chosen.map((c) => c.metadata.name).join(', ')}) run no pod of the class: `
      + 'deleting them takes nothing away from it');
  }
  if (skipped.length > 0) {
    notes.push(`NodeClaim(s) ${skipped.join(', ')} not Ready (still launching, or unhealthy): not reclaimed; one that becomes Ready joins the pool `
      + 'despite the cap, since the cap stops only new launches');
  }
  for (const c of chosen.filter((x) => !x.spec?.terminationGracePeriod)) {
    refusals.push(`NodeClaim ${c.metadata.name} has no spec.terminationGracePeriod: a PodDisruptionBudget or a ${DO_NOT_DISRUPT} pod could hold its drain `
      + 'indefinitely, and the game day could not give it back. Set terminationGracePeriod on the NodePool (the library\'s NodePools do), or use the cap without --reclaim');
  }
  // "true" or a duration still running: either way not evicted before terminationGracePeriod; any value is refused (fail safe).
  const pinned = evicted.filter((p) => p.metadata.annotations?.[DO_NOT_DISRUPT] !== undefined);
  if (pinned.length > 0) {
    refusals.push(`pod(s) ${pinned.map((p) => p.metadata.name).join(', ')} carry ${DO_NOT_DISRUPT}: Karpenter does not evict them before terminationGracePeriod`);
  }
  const budgets = input.pdbs.filter((b) => selects(b, input.podLabels));
  for (const b of budgets.filter((x) => !((x.status?.disruptionsAllowed ?? 0) >= 1) && evicted.length > 0)) {
    refusals.push(`PodDisruptionBudget ${b.metadata.name} allows no disruption now (status.disruptionsAllowed ${b.status?.disruptionsAllowed ?? 'absent'}): `
      + 'the class is already short of ready pods, and the drain would wait for terminationGracePeriod');
  }
  const allowed = Math.min(...budgets.map((b) => b.status?.disruptionsAllowed ?? 0));
  if (budgets.length > 0 && evicted.length > allowed) {
    const grace = chosen.map((c) => c.spec?.terminationGracePeriod).find((g) => g !== undefined);
    notes.push(`${evicted.length} pod(s) of the class are on the reclaimed nodes and its PodDisruptionBudget allows ${allowed} eviction(s) at a time: `
      + `replacements cannot become Ready under the cap, so the rest are deleted at the NodeClaim's terminationGracePeriod (${grace ?? '?'}) `
      + 'less their own grace period, and gone when it elapses');
  }
  notes.push('every pod on the reclaimed nodes is evicted, not only the class\'s (static pods, finished pods and pods tolerating '
    + 'karpenter.sh/disrupted:NoSchedule excepted); the deleted nodes do not come back: '
    + 'the restore lifts the cap and Karpenter launches replacements for the Pending pods, as after a real reclaim');
  const graces = chosen.map((c) => goDurationSeconds(c.spec?.terminationGracePeriod));
  const podGraces = evicted.flatMap((p) => (typeof p.spec?.terminationGracePeriodSeconds === 'number' ? [p.spec.terminationGracePeriodSeconds] : []));
  return {
    nodePool: name,
    reclaimed: chosen.map((c) => c.metadata.name),
    kept: live.slice(chosen.length).map((c) => c.metadata.name),
    evictedPods: evicted.length,
    keptPods: input.pods.length - evicted.length,
    disruptionsAllowed: budgets.length > 0 ? allowed : Infinity,
    // The longest of the chosen NodeClaims': the last class pod leaves by then.
    terminationGracePeriodSeconds: graces.length > 0 && graces.every((g): g is number => g !== undefined) ? Math.max(...graces) : undefined,
    podTerminationGracePeriodSeconds: podGraces.length > 0 ? Math.max(...podGraces) : undefined,
    before: input.pool.spec.limits,
    ...zeroLimits(input.pool),
    refusals,
    notes,
  };
}
