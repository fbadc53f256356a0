/**
 * The two ways the game day takes the preferred class's capacity away, as pure before/after computations; the CLI
 * applies them (bin/game-day.ts) and applies the restore on every exit.
 *
 * EKS, the reference experiment's method: cap the preferred NodePool's `spec.limits` at what it has provisioned
 * (`status.resources`). Karpenter refuses a launch when usage would exceed a limit (kubernetes-sigs/karpenter
 * pkg/apis/v1/nodepool.go `Limits.ExceededBy`: usage.Cmp(limit) > 0), so the pool keeps its nodes and gets no more:
 * new pods stay Pending and the reconciler sees desired > ready. This is not an insufficient-capacity error: the
 * Karpenter capacity-error metric filter does not fire (that path needs AWS FIS
 * `aws:ec2:api-insufficient-instance-capacity-error` against the Karpenter controller role, a zonal shortage of the
 * classes held to those zones: a different scenario, fis-zones.ts).
 *
 * SageMaker: pin the preferred variant's scalable target at its current instance count (MinCapacity = MaxCapacity =
 * current; Application Auto Scaling RegisterScalableTarget updates only the fields given,
 * https://docs.aws.amazon.com/autoscaling/application/APIReference/API_RegisterScalableTarget.html). Its target
 * tracking can then not add instances: the variant's latency and rejections rise under load while desired = ready.
 */

/** A Kubernetes quantity map (`cpu: "64"`, `memory: 256Gi`, `nvidia.com/gpu: 8`). */
export type ResourceList = Readonly<Record<string, string | number>>;

/** The parts of a NodePool the cap reads. */
export interface NodePoolState {
  readonly metadata: { readonly name: string; readonly resourceVersion?: string };
  /** `replicas`: a static NodePool (Karpenter keeps that many nodes, whatever the pods ask). */
  readonly spec: { readonly limits?: ResourceList; readonly replicas?: number };
  readonly status?: { readonly resources?: ResourceList; readonly nodes?: number };
}

/** A JSON merge patch (RFC 7386) of a NodePool's `spec.limits`; `null` removes a key. */
export interface LimitsPatch {
  readonly spec: { readonly limits: Record<string, string | number | null> | null };
}

export interface NodePoolCap {
  readonly nodePool: string;
  readonly before: ResourceList | undefined;
  readonly after: ResourceList;
  readonly cap: LimitsPatch;
  readonly restore: LimitsPatch;
}

/**
 * Limits equal to what the pool has provisioned, keeping any existing limit that is already lower. Fails when the
 * pool reports nothing provisioned (a cap of nothing is a different experiment: no preferred capacity at all).
 */
export function nodePoolCap(pool: NodePoolState): NodePoolCap {
  const used = pool.status?.resources ?? {};
  if (Object.keys(used).length === 0) {
    throw new Error(`NodePool ${pool.metadata.name} reports no status.resources: nothing provisioned to cap at (is it the serving pool, and has it launched nodes?)`);
  }
  const before = pool.spec.limits;
  const after: Record<string, string | number> = { ...(before ?? {}) };
  for (const [resource, quantity] of Object.entries(used)) {
    const existing = before?.[resource];
    // Keep a lower existing limit; quantities are compared only when both are plain numbers, otherwise the usage wins.
    after[resource] = existing !== undefined && Number(existing) < Number(quantity) ? existing : quantity;
  }
  return { nodePool: pool.metadata.name, before, after, ...limitsPatches(before, after) };
}

/**
 * The merge patches that set a NodePool's limits to `after` and put `before` back: a key the cap added is removed
 * (`null`), and a pool that had no limits gets `limits: null`.
 */
export function limitsPatches(before: ResourceList | undefined, after: ResourceList): { cap: LimitsPatch; restore: LimitsPatch } {
  const restore = before === undefined ? null : { ...Object.fromEntries(Object.keys(after).map((k) => [k, null])), ...before };
  return { cap: { spec: { limits: after } }, restore: { spec: { limits: restore } } };
}

/** A scalable target's bounds (Application Auto Scaling DescribeScalableTargets). */
export interface ScalableBounds {
  readonly minCapacity: number;
  readonly maxCapacity: number;
}

export interface ScalableTargetPin {
  readonly resourceId: string;
  readonly before: ScalableBounds;
  readonly after: ScalableBounds;
}

/**
 * Why pinning would take nothing away, or undefined: a variant already at (or above) its MaxCapacity never grows anyway
 * ("Application Auto Scaling scaling policies will not scale capacity to values that are outside of the minimum and
 * maximum range", API_RegisterScalableTarget.html above), so a pin there changes nothing the hold could exercise, and
 * one above it would raise MaxCapacity to the current count. Refused before anything changes, like the EKS cap of a
 * class at its most replicas.
 */
export function pinRefusal(resourceId: string, before: ScalableBounds, currentInstanceCount: number): string | undefined {
  if (currentInstanceCount < before.maxCapacity) return undefined;
  const where = currentInstanceCount === before.maxCapacity ? 'its scalable target\'s MaxCapacity' : 'above its scalable target\'s MaxCapacity';
  return `${resourceId} already runs ${currentInstanceCount} instance(s), ${where} (${before.maxCapacity}): pinning it takes nothing away, `
    + 'since its scaling policies never take it past its MaxCapacity';
}

/**
 * Pin at the current count (at least 1: RegisterScalableTarget rejects a MinCapacity below 1 for variants). Throws what
 * `pinRefusal` says too: the count read at the injection may differ from the one the preflight refused on.
 */
export function scalableTargetPin(resourceId: string, before: ScalableBounds, currentInstanceCount: number): ScalableTargetPin {
  if (!Number.isInteger(currentInstanceCount) || currentInstanceCount < 1) {
    throw new Error(`${resourceId} has ${currentInstanceCount} instances: a variant's scalable target cannot be pinned below 1`);
  }
  const refused = pinRefusal(resourceId, before, currentInstanceCount);
  if (refused) throw new Error(`not injected: ${refused}`);
  return { resourceId, before, after: { minCapacity: currentInstanceCount, maxCapacity: currentInstanceCount } };
}

/**
 * An AWS error that says the request was refused, so it changed nothing: an HTTP 4xx answer other than a throttle (429)
 * or a request timeout (408), on the first and only attempt. No answer, a 5xx or a network error leaves the outcome
 * unknown, and so does a 4xx after the SDK retried (`$metadata.attempts` > 1): an earlier attempt may have started an
 * experiment whose answer was lost, and what StartExperiment answers a replayed clientToken is not documented (R247).
 * verify's weight write, sent once, tells a refusal from a lost answer with it too (R250).
 */
export function refusedOutright(e: unknown): boolean {
  const meta = (e as { $metadata?: { httpStatusCode?: number; attempts?: number } } | undefined)?.$metadata;
  const status = meta?.httpStatusCode;
  return status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429 && (meta?.attempts ?? 1) === 1;
}

/**
 * Makes one write whose failure may or may not have changed anything: `mayHaveApplied` is called before a failure is
 * rethrown unless `refused` says the write was refused (nothing changed, so nothing to restore and no "NOT RESTORED" to
 * print); a failure whose outcome is unknown (a timeout, a lost answer) may have applied it, so the restore runs as usual.
 * The caller records the write as applied after it returns.
 */
export async function guardedWrite(apply: () => Promise<unknown>, refused: (e: unknown) => boolean, mayHaveApplied: () => void): Promise<void> {
  try {
    await apply();
  } catch (e) {
    if (!refused(e)) mayHaveApplied();
    throw e;
  }
}

/**
 * Whether a failed `kubectl patch` was refused by the API server, so nothing changed: kubectl prints an API error as
 * "Error from server (<StatusReason>): ..." (an Unauthorized one as "error: You must be logged in to the server (...)",
 * an Invalid one as "The <kind> \"<name>\" is invalid...": kubernetes/kubernetes staging/src/k8s.io/kubectl/pkg/cmd/util/
 * helpers.go `checkErr` and `StandardErrorMessage`). Only reasons that say the request was not carried out count
 * (Forbidden, Unauthorized, NotFound, BadRequest, Invalid, MethodNotAllowed, UnsupportedMediaType: k8s.io/apimachinery
 * pkg/apis/meta/v1/types.go StatusReason). Anything else (a timeout on either side, a Timeout or InternalError answer,
 * a connection lost after the request was sent) leaves the outcome unknown: false, and the caller restores as if the
 * patch had been applied, the safe side.
 */
export function patchRefused(stderr: string): boolean {
  return /^Error from server \((Forbidden|NotFound|BadRequest|Invalid|MethodNotAllowed|UnsupportedMediaType)\): /m.test(stderr)
    || /^error: You must be logged in to the server\b/m.test(stderr)
    || /^The .* is invalid/m.test(stderr);
}

/**
 * Why a NodePool's limits read back are no longer the cap (a GitOps controller, a redeploy or an operator put others
 * back), or undefined while they are. Every key of either side is compared, so a limit added or removed counts as well
 * as one changed. Quantities are compared as written: the cap copies `status.resources`, which Karpenter writes as
 * serialized resource.Quantity strings, and a custom resource is stored as sent. Whether the API server could ever
 * rewrite one into another spelling of the same quantity ("1000m" for "1") was not confirmed upstream; if it did, this
 * says "not in force" and the game day ends as an error: the safe side, never a hold reported that was not held.
 */
export function limitsNotInForce(nodePool: string, found: ResourceList | undefined, set: ResourceList): string | undefined {
  const shown = (v: string | number | undefined) => (v === undefined ? 'none' : String(v));
  const changed = [...new Set([...Object.keys(set), ...Object.keys(found ?? {})])]
    .filter((k) => shown(found?.[k]) !== shown(set[k]))
    .map((k) => `${k} is ${shown(found?.[k])}, the cap set ${shown(set[k])}`);
  return changed.length === 0 ? undefined : `NodePool ${nodePool} spec.limits changed since the cap: ${changed.join('; ')}`;
}

/** Why a scalable target read back is no longer the pin (its bounds changed, or it is gone), or undefined while it is. */
export function pinNotInForce(resourceId: string, found: Partial<ScalableBounds> | undefined, pin: ScalableBounds): string | undefined {
  if (found?.minCapacity === undefined || found.maxCapacity === undefined) {
    return `${resourceId} has no scalable target any more (deregistered since the pin at ${pin.minCapacity}..${pin.maxCapacity})`;
  }
  if (found.minCapacity === pin.minCapacity && found.maxCapacity === pin.maxCapacity) return undefined;
  return `${resourceId}'s scalable target is MinCapacity ${found.minCapacity}, MaxCapacity ${found.maxCapacity}; `
    + `the pin set ${pin.minCapacity}, ${pin.maxCapacity}`;
}
