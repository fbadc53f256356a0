/**
 * Where each policy signal comes from on each path: the executable form of the table "Where each signal comes from"
 * in docs/reconciler.md. Each routing-target kind names its own sources (targets/); this module adds the
 * reconciler's own history. Pure: the construct uses it to validate and document, the Lambda to build its one
 * GetMetricData batch.
 */
import { Dim, type MetricSpec, Metrics } from '../metrics/contract';
import { type ReconcilerConfig, type SignalSource } from './config';
import { type ClassSignalSources, routingTarget } from './targets';

export { type ClassSignalSources } from './targets';

/** Every CloudWatch source the reconciler reads, by routed class name, plus its own state metrics. */
export interface SignalPlan {
  readonly classes: Readonly<Record<string, ClassSignalSources>>;
  /**
   * The reconciler's own mode, ramp and capacity-event history, read back to rebuild the policy state, and the replica
   * floors it last published per route (read back to publish them again on a tick that holds everything).
   */
  readonly own: {
    readonly mode: SignalSource;
    readonly ramping: SignalSource;
    readonly eventEntries: SignalSource;
    readonly floors: Readonly<Record<string, SignalSource>>;
  };
}

export function signalPlan(config: ReconcilerConfig, periodSeconds: number): SignalPlan {
  const own = (spec: MetricSpec, dimensions: Record<string, string>): SignalSource => ({
    metric: { namespace: spec.namespace, metricName: spec.name, dimensions: { [Dim.SERVICE]: config.service, ...dimensions }, stat: spec.statistic },
  });
  const kind = routingTarget(config.facts);
  const classes = kind.signalSources(config, periodSeconds);
  // Floors matter between runs only where an autoscaler reads the published metric (EKS).
  const floors = kind.floors === 'published'
    ? Object.fromEntries(Object.keys(classes).map((name) => [name, own(Metrics.replicaFloor, { [Dim.CLASS]: name })]))
    : {};
  return {
    classes,
    own: { mode: own(Metrics.policyMode, {}), ramping: own(Metrics.policyRamping, {}), eventEntries: own(Metrics.capacityEventEntries, {}), floors },
  };
}
