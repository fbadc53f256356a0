import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import { alarmOptionProblems, type InferenceAlarmOptions, InferenceAlarms } from './alarms';
import { dashboardProblems, type InferenceDashboardOptions, InferenceDashboard } from './dashboard';
import { throwIfInvalid } from '../core/validation/error';
import { serviceObservabilityProblems, type ServiceObservabilityProps } from './service-metrics';

export {
  ALARM_DEFAULTS,
  type AlarmToggle,
  type CapacityErrorAlarmOptions,
  type DeadlineExhaustionAlarmOptions,
  type FallbackShareAlarmOptions,
  type InferenceAlarmOptions,
  InferenceAlarms,
  type InferenceAlarmsProps,
  type LoadBalancerErrorsAlarmOptions,
  type ReconcilerHeartbeatAlarmOptions,
  type ReplicaShortageAlarmOptions,
} from './alarms';
export { InferenceDashboard, type InferenceDashboardOptions, type InferenceDashboardProps } from './dashboard';
export { type ObservedClass, type ObservedRoute, ServiceMetrics, type ServiceObservabilityProps } from './service-metrics';

export interface InferenceObservabilityProps extends ServiceObservabilityProps, InferenceAlarmOptions, Omit<InferenceDashboardOptions, 'alarms'> {}

/**
 * The dashboard and the alarms of one inference service, wired together: alarm thresholds drawn on the graphs, an
 * alarm status row, and `capacityAlarms` ready for the reconciler (`new Reconciler(..., { capacityAlarms: obs.capacityAlarms })`).
 */
export class InferenceObservability extends Construct {
  readonly alarms: InferenceAlarms;
  readonly dashboard: InferenceDashboard;

  constructor(scope: Construct, id: string, props: InferenceObservabilityProps) {
    super(scope, id);
    // Check everything up front so one error lists every problem, whichever child would have found it.
    throwIfInvalid('InferenceObservability', this.node.path, [...serviceObservabilityProblems(props), ...alarmOptionProblems(props), ...dashboardProblems(props)]);
    this.alarms = new InferenceAlarms(this, 'Alarms', props);
    this.dashboard = new InferenceDashboard(this, 'Dashboard', { ...props, alarms: this.alarms });
  }

  /** The alarms that should trigger the reconciler at once (capacity errors on the preferred class, replica shortages). */
  get capacityAlarms(): cloudwatch.IAlarm[] {
    return this.alarms.capacityAlarms;
  }
}
