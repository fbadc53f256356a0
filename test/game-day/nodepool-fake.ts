/**
 * A NodePool as the API server keeps it for the fake kubectls: `kubectl patch --type merge` (RFC 7386) changes its
 * spec.limits, so what the game day's cap set reads back while it holds (its `inForce` reads the pool at every poll).
 */
export type Limits = Record<string, string | number>;

/** Applies the merge patch kubectl was given (its last argument) to `pool.spec.limits`. */
export function applyLimitsPatch(pool: { spec: { limits?: Limits } }, args: readonly string[]): void {
  const { limits } = (JSON.parse(args.at(-1)!) as { spec: { limits: Record<string, string | number | null> | null } }).spec;
  if (limits === null) {
    delete pool.spec.limits;
    return;
  }
  const merged: Limits = { ...pool.spec.limits };
  for (const [key, value] of Object.entries(limits)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  pool.spec.limits = merged;
}
