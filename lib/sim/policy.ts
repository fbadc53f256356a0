import { type ClassDatapoint, type DemandDatapoint, type ScenarioInstance, type SimClass } from './model';
import { type RunSeries } from './run-series';
import { type Trace } from './workload';

/** What a routing policy sees on each reconciler tick: only published metrics, like the reconciler Lambda. */
export interface Observation {
  /** Seconds since the start of the run. */
  readonly now: number;
  readonly classes: readonly SimClass[];
  /** Per class, the datapoints of the last minutes, oldest first; `undefined` where none was published (outage). */
  readonly windows: ReadonlyArray<ReadonlyArray<ClassDatapoint | undefined>>;
  readonly demand: ReadonlyArray<DemandDatapoint | undefined>;
  /** Weights currently applied, one per class. */
  readonly weights: readonly number[];
  /** Ready and desired replicas per class now, where the target reports them live (SageMaker DescribeEndpoint). */
  readonly live?: ReadonlyArray<{
    readonly ready: number;
    readonly desired: number;
    /** Ready instances of each of the class's instance pools, in priority order (DescribeEndpoint's InstancePools). */
    readonly pools: readonly number[];
    /** The variant's scalable target's MinCapacity and MaxCapacity now (DescribeScalableTargets; a pin included). */
    readonly bounds: { readonly min: number; readonly max: number };
  }>;
  /** EKS: healthy targets per class now (the Reconciler's DescribeTargetHealth; `PlatformModel.targetGroupHealth`). */
  readonly healthyTargets?: readonly number[];
  /** Whether the platform reports capacity errors (EKS: Karpenter's log metric filter; SageMaker: none by default). */
  readonly capacityErrorSignal?: boolean;
  /** SageMaker: the endpoint is Updating and accepts no write this run. */
  readonly updating?: boolean;
  /** The raw minutes behind the windows, for a policy that queries CloudWatch itself (the deployed reconciler step). */
  readonly metrics?: PublishedMetrics;
}

/** The simulated CloudWatch: every closed minute's series, which of them are published at a time, and the steady state before time 0. */
export interface PublishedMetrics {
  readonly series: RunSeries;
  /** Whether minute `m`'s datapoints can be read at `now` (published, not lost in an outage). */
  readable(m: number, now: number): boolean;
  /** Class `ci`'s datapoint of a steady-state minute before time 0. */
  steady(ci: number): ClassDatapoint;
}

export interface Decision {
  /** Non-negative weights, one per class (normalised by the router). */
  readonly weights: readonly number[];
  /** A short mode label; a change of label counts as a mode change. */
  readonly mode: string;
  readonly reason: string;
  /** Replica floors per class the policy asks the autoscalers for (optional). */
  readonly minReplicas?: readonly number[];
  /** Replicas per class set instantly, bypassing autoscalers and provisioning delay (the oracle only). */
  readonly replicas?: readonly number[];
  /**
   * The decision comes from the deployed reconciler step, which already sequenced its writes: `weights` are the weights
   * in force after the run, `capacityWrite` the one capacity write it made (SageMaker), `minReplicas` the floors it
   * published (EKS). Without it the simulator sequences the writes itself.
   */
  readonly deployedWrite?: boolean;
  readonly capacityWrite?: { readonly classIndex: number; readonly desired: number };
}

/** A routing policy: called every control period with what the reconciler would see. Stateful per run. */
export interface RoutingPolicy {
  readonly name: string;
  /**
   * The deployed Reconciler also runs as soon as the routing target takes writes again (its construct's `writableRule`,
   * SageMaker); the simulator then calls `decide` between its ticks (`PlatformModel.endpointUpdate.writableRunSeconds`).
   */
  readonly runsWhenWritable?: boolean;
  decide(observation: Observation): Decision;
}

/** What a policy may know up front. Only the oracle reads `trace` and the scenario's future availability. */
export interface PolicyContext {
  readonly scenario: ScenarioInstance;
  readonly trace: Trace;
}

export type PolicyFactory = (context: PolicyContext) => RoutingPolicy;

/** The latest published datapoint of a window, or undefined when none is. */
export function latest<T>(window: ReadonlyArray<T | undefined>): T | undefined {
  for (let i = window.length - 1; i >= 0; i--) if (window[i] !== undefined) return window[i];
  return undefined;
}

/** Normalises weights to sum to 1; all-zero stays all-zero. */
export function normalise(weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + Math.max(0, b), 0);
  return weights.map((w) => (sum > 0 ? Math.max(0, w) / sum : 0));
}
