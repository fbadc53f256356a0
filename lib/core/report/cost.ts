/**
 * What capacity costs: replica-seconds at a class's price per replica-hour (the capacity class's `usdPerReplicaHour`,
 * the price the constructs planned with and record in the serving record). One formula for the simulator's cost
 * (lib/sim/metrics.ts) and the game day's observed cost (lib/core/game-day/observed.ts), so prediction and reality are
 * priced the same way.
 */

/** USD of `replicaSeconds` at `usdPerReplicaHour`. */
export function replicaCostUsd(replicaSeconds: number, usdPerReplicaHour: number): number {
  return (replicaSeconds * usdPerReplicaHour) / 3600;
}
