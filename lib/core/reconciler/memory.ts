/**
 * What a reconciler run hands the next run in the same execution environment. The policy's memory lives in the
 * reconciler's own CloudWatch metrics, which GetMetricData shows only after ingestion (seconds to minutes); a second
 * run soon after (an alarm run beside the scheduled one) reads this instead, so it neither takes a second ramp step
 * nor makes a second write of the same kind in the same period. Plain JSON data; the Lambda keeps it in module scope (reserved
 * concurrency 1 runs one environment at a time), a simulator between ticks.
 */
import { type PolicyState } from '../policy/types';
import { type RoutingWrite, type ScalingBounds } from './targets/kind';

export interface RunMemory {
  /** Start (epoch seconds) of the period the run decided in. */
  readonly period: number;
  /** The policy state it recorded (the weights it left in force). */
  readonly state: PolicyState;
  /** The kinds of write made in that period, by this run or an earlier one in the same period; absent: none. */
  readonly wrote?: ReadonlyArray<RoutingWrite['kind']>;
  /** The replica floors it published (null: none known). */
  readonly floors: Readonly<Record<string, number>> | null;
  /**
   * SageMaker: the scaling bounds of the newest successful read by a run in this environment that reached a decision
   * (`TargetState.scalingBounds`), and the start of that run's period (epoch seconds), carried over runs whose read
   * failed, so such a run plans within them (`TargetState.rememberedBounds`). Absent before the first good read and
   * after a cold start.
   */
  readonly boundsRead?: { readonly at: number; readonly bounds: Readonly<Record<string, ScalingBounds>> };
}
