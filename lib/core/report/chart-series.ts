/**
 * What a report charts for one run, per minute: the simulator's runs (lib/sim/report.ts) and a game day's observed
 * window (lib/core/game-day/observed.ts) fill the same series, so predicted and observed render with one code path.
 * Small enough to pass between threads and draw.
 */
export interface ChartSeries {
  readonly classNames: readonly string[];
  /** Share of routed output tokens per class, per minute ([minute][class]). */
  readonly share: number[][];
  readonly readyReplicas: number[][];
  /** Latency p50, p95, p99 of completions per minute, seconds (NaN without completions). */
  readonly latency: Array<[number, number, number]>;
  readonly modes: string[];
  readonly demandTokensPerSecond: number[];
  readonly rejectedShare: number[];
  /**
   * An observed window's only: the reconciler's `CapacityEventEntries` per period (NaN: none published), the capacity
   * event it remembers (lib/core/policy/decide.ts `eventEntries`).
   */
  readonly eventEntries?: number[];
}
