import { type ClassDatapoint, type DemandDatapoint, type ScenarioInstance, type SimClass } from './model';
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
  readonly live?: ReadonlyArray<{ readonly ready: number; readonly desired: number }>;
  /** Whether the platform reports capacity errors (EKS: Karpenter's log metric filter; SageMaker: none by default). */
  readonly capacityErrorSignal?: boolean;
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
}

/** A routing policy: called every control period with what the reconciler would see. Stateful per run. */
export interface RoutingPolicy {
  readonly name: string;
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
