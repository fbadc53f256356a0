/**
 * What a reconciler run hands the next run in the same execution environment. The policy's memory lives in the
 * reconciler's own CloudWatch metrics, which GetMetricData shows only after ingestion (seconds to minutes); a second
 * run soon after (an alarm run beside the scheduled one) reads this instead, so it neither takes a second ramp step
 * nor makes a second write of the same kind in the same period. Plain JSON data; the Lambda keeps it in module scope,
 * a simulator between ticks. Best effort: Lambda may run any invocation in a new environment, which starts without it
 * (https://docs.aws.amazon.com/lambda/latest/operatorguide/statelessness-functions.html). Such a run rebuilds its state
 * from the metrics and counts this period's ramp step as taken (`stepAssumed`, observe.ts), so a step another
 * environment took unseen is not repeated. The hold of one write of each kind per period (`heldThisPeriod`, step.ts)
 * has no such fallback: there, such a run can make a second capacity write once the endpoint is InService again.
 */
import { type PolicyState } from '../policy/types';
import { type RoutingWrite, type ScalingBounds } from './targets/kind';

export interface RunMemory {
  /**
   * Start (epoch seconds) of the period the run decided in. Absent (with `state` and `floors`) when no run in this
   * environment has decided yet and the memory holds only `configurationMismatch`.
   */
  readonly period?: number;
  /** The policy state it recorded (the weights it left in force). */
  readonly state?: PolicyState;
  /** The kinds of write made in that period, by this run or an earlier one in the same period; absent: none. */
  readonly wrote?: ReadonlyArray<RoutingWrite['kind']>;
  /** The replica floors it published (null: none known). */
  readonly floors?: Readonly<Record<string, number>> | null;
  /**
   * SageMaker: the scaling bounds of the newest successful read by a run in this environment that reached a decision
   * (`TargetState.scalingBounds`), and the start of that run's period (epoch seconds), carried over runs whose read
   * failed, so such a run plans within them (`TargetState.rememberedBounds`). Absent before the first good read and
   * after a cold start.
   */
  readonly boundsRead?: { readonly at: number; readonly bounds: Readonly<Record<string, ScalingBounds>> };
  /**
   * SageMaker: how long runs in this environment have found the endpoint writable on another configuration than the
   * facts describe (`RoutingTarget.otherConfiguration`), carried over deferred runs so that a deferral that never ends
   * fails (`configurationMismatchClock`). Absent since the newest run that found them matching, and after a cold start.
   */
  readonly configurationMismatch?: ConfigurationMismatch;
}

/** Time counted towards `RECONCILER_TIMING_DEFAULTS.configurationMismatchSeconds`. */
export interface ConfigurationMismatch {
  /** Seconds between runs that both found the endpoint writable (InService) on another configuration. */
  readonly seconds: number;
  /**
   * Epoch seconds of the newest such run; absent when the newest run on another configuration found the endpoint not
   * writable (an update under way): the time until the next writable one is not counted.
   */
  readonly writableAt?: number;
}
