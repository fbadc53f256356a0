import { Annotations, Duration, Lazy, Reference, Stack, Token, Tokenization } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct, type IConstruct } from 'constructs';
import { lateTolerantWindow } from '../core/metrics/alarm-window';
import { Dim, Metrics } from '../core/metrics/contract';
import { RECONCILER_TIMING_DEFAULTS } from '../core/platform/control-loop';
import { RECONCILER_SERVICE_ENV } from '../core/reconciler/faults';
import { Checker, isFiniteLiteral, numberProblem } from '../core/validation/checker';
import { ConstructValidationError, type Problem, throwIfInvalid } from '../core/validation/error';
import { policyProblems } from '../core/validation/policy-config';
import { RECONCILER_RULES } from '../core/validation/rules';
import { servingDescriptionProblems, servingPropProblem } from '../core/validation/serving';
import { durationMillis, durationSeconds } from '../util/duration';
import { DEFAULT_POLICY_CONFIG, resolvePolicyConfig } from '../core/policy/defaults';
import { type PolicyConfig, type ReasonCode } from '../core/policy/types';
import {
  ENVIRONMENT_LIMIT_BYTES, environmentBytes, RECONCILER_CONFIG_ENV, type ReconcilerConfig, windowDefaultsForPeriod,
} from '../core/reconciler/config';
import { policyClassesFromFacts, provisioningGraceFromFacts } from '../core/reconciler/from-facts';
import { signalPlan } from '../core/reconciler/signal-sources';
import { findPublishedMetric } from '../core/metrics/aws-published';
import { type RoutedClassFacts, type RoutingFacts } from '../core/reconciler/routing-facts';
import { type ServingDescription } from '../core/reconciler/serving';
import { isKnownTargetKind, routingTarget } from '../core/reconciler/targets';
import { type IInferenceServing } from './serving';
import { type AlarmsOfServing, defaultHeartbeatPeriods, inferenceAlarmsOf, inferenceAlarmsOfAlarm } from './alarms';
import { lambdaCode, latestNodeRuntime } from '../util/lambda-code';
import { newLogGroupKey } from '../util/log-encryption';
import { nameWithin } from '../util/name-within';
import { logGroupArns } from '../util/log-arns';
import { acknowledgeNistRules, acknowledgeRule, nagRendering, NIST_ONE_ROLE_POLICY } from '../util/nag';
import { EnvironmentClaims } from '../util/environment-key';
import { encryptedAlarmTopic, notifyOnAlarmAndOk } from './alarm-topic';
import { metricId, ServiceMetrics } from './service-metrics';
import { recordReconcilerAlarms } from './dashboard';
import { RECONCILER_FUNCTION_TIMEOUT_SECONDS } from '../core/reconciler/retry';

/** Tunables of the routing policy. Every default is explained in lib/core/policy/defaults.ts. */
export interface RoutingPolicyOptions {
  /** Length of one CloudWatch period and of one reconciler tick. @default Duration.minutes(1) */
  readonly period?: Duration;
  /**
   * Cost mode plans for demand x (1 + headroom); replica floors and capacity writes are sized at envelope / (1 +
   * headroom) per replica, the target the serving's autoscalers keep. It is the serving's: a value other than the
   * serving's headroom (its contract's) fails at synth (`policy.headroom@serving`), so leave it unset.
   * @default - the serving's headroom (the contract's `headroom`); 0.2 when the serving gives none
   * @deprecated Set the contract's `headroom` instead (`ServiceContract.headroom`, which the serving constructs hand
   * to the Reconciler; a hand-written serving returns it as `ServingDescription.headroom`). A value equal to the
   * serving's, or set for a serving that gives none, still works; another value fails at synth.
   */
  readonly headroom?: number;
  /** Share of traffic every compatible ready class keeps in cost mode. @default 0.02 */
  readonly warmFloorShare?: number;
  /** Integer weights sum to this total (ALB accepts at most 999 per target group). @default 100 */
  readonly weightTotal?: number;
  /** A capacity error of the preferred class this recent triggers capacity mode. @default Duration.minutes(3) */
  readonly capacityErrorLookback?: Duration;
  /**
   * Desired above ready on the preferred class for this long triggers capacity mode. The preferred class's alone: each
   * other class that declares `envelope.replicaReadyTimeP95Seconds` (on SageMaker, a variant at the slowest of its pools
   * that declare one) is judged, when the policy asks whether it can grow, on the grace its own time gives (computed as
   * the default below, shorter or longer than this one, at synth: `fallbackGraceSeconds` in the function's configuration).
   * @default - the preferred class's declared `envelope.replicaReadyTimeP95Seconds` plus `metricDelay`, in whole
   * periods, at least Duration.minutes(5) and at least the shortest grace a routine scale-out cannot fill
   * (`shortestSafeGraceSeconds`); Duration.minutes(5) when it declares none (`defaultProvisioningGraceSeconds`)
   */
  readonly provisioningGrace?: Duration;
  /** p95 latency SLO of the preferred class. @default - the latency trigger is off */
  readonly latencySloP95?: Duration;
  /** Consecutive periods above the latency SLO that trigger capacity mode. @default 3 */
  readonly latencyBreachPeriods?: number;
  /** How long the preferred class must be healthy before traffic returns to cost mode. @default Duration.minutes(10) */
  readonly stabilizationWindow?: Duration;
  /** Largest weight move per tick while returning to cost mode, as a share of the total. @default 0.1 */
  readonly rampStepShare?: number;
  /** Dead band of steady cost mode, as a share of the total. @default 0.03 */
  readonly minWeightChangeShare?: number;
  /** Demand is planned on a high quantile of this many trailing periods, not on one minute. @default 5 */
  readonly demandWindowPeriods?: number;
  /** The quantile (0..1) of those periods' demand the plan is made for. @default 0.9 */
  readonly demandQuantile?: number;
  /**
   * A capacity event ends when cost mode has lasted this long since the last return and the preferred class has shown
   * no capacity loss for as long; until then each re-entry into capacity mode doubles the return hold, and the hold is
   * back to the stabilization window after it. Also how long a class's capacity losses are remembered (its flapping, its
   * recovery, its growth backoff).
   * @default Duration.hours(2)
   */
  readonly reentryMemory?: Duration;
  /** Upper bound of the growing return hold (at least `stabilizationWindow`). @default Duration.minutes(40) */
  readonly maxReturnHold?: Duration;
}

export interface ReconcilerProps {
  /**
   * The serving construct (SageMakerCapacityEndpoint, EksInferenceService, or anything implementing
   * IInferenceServing): where the weights live, which class sits behind each, the service name and request shape, and
   * the signals its platform produces. Each capacity-error producer (EKS: the Karpenter log metric filter of a
   * NodePool) is read by the reconciler and gets an alarm whose state changes run it at once; a run triggered by that
   * alarm going to ALARM counts one capacity error of the class (its datapoint is newer than the run's windows).
   */
  readonly serving: IInferenceServing;
  /** The service's requests are sensitive: classes with `allowSensitive: false` never get weight. @default false */
  readonly sensitive?: boolean;
  readonly policy?: RoutingPolicyOptions;
  /** More alarms whose state changes trigger a run at once. @default - only the capacity-error alarms */
  readonly capacityAlarms?: readonly cloudwatch.IAlarm[];
  /**
   * CloudWatch publishes a period late: the newest period read ends at least this long ago (capacity errors, which only
   * ever count against a class, are read up to the current period). An `InferenceObservability` (`InferenceAlarms`) on
   * the same serving, or whose run-fed alarms are in `capacityAlarms`, must declare at least this `metricDelay` (its
   * M of N alarms leave that much room for a late datapoint): synth fails otherwise. @default Duration.minutes(2)
   */
  readonly metricDelay?: Duration;
  /** Retention of the reconciler's log group (EMF metrics and one audit line per decision). @default RetentionDays.THREE_MONTHS */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Key that encrypts the reconciler's log group: the audit trail of every routing decision.
   * @default - a new key with rotation, usable by CloudWatch Logs for this account's log groups
   */
  readonly logEncryptionKey?: kms.IKey;
  /**
   * Where the reconciler's alarms (failed runs, Lambda errors, capacity errors) notify on ALARM and OK. Pass
   * `InferenceObservability`'s `alarms.topic` to page through one topic. A topic of your own must let
   * `cloudwatch.amazonaws.com` publish (a topic policy replaces SNS's default one) and, if encrypted, let CloudWatch use
   * its key; this construct changes neither.
   * @default - a new SNS topic encrypted with a new customer managed key (rotation on; CloudWatch may use it) that
   * accepts only TLS publishers and lets the alarms of this account and region publish
   */
  readonly alarmTopic?: sns.ITopic;
}

/** Template metadata key of the reconciler function: one line per signal it reads, with its producer. */
export const SIGNAL_SOURCES_METADATA = 'cdk-capacity-aware-inference:signal-sources';

function signalSourceLines(config: ReconcilerConfig): string[] {
  const period = resolvePolicyConfig(config.policy).periodSeconds;
  const plan = signalPlan(config, period);
  const lines: string[] = [];
  for (const [route, { servedIncludesRejected: _, ...sources }] of Object.entries(plan.classes)) {
    for (const [signal, entry] of Object.entries(sources)) for (const source of [entry ?? []].flat()) {
      if ('expression' in source) {
        lines.push(`${route} ${signal}: ${source.expression} (AWS-published, lib/core/metrics/aws-published.ts)`);
        continue;
      }
      const m = source.metric;
      const published = findPublishedMetric(m.namespace, m.metricName, Object.keys(m.dimensions));
      lines.push(`${route} ${signal}: ${m.namespace} ${m.metricName} [${Object.keys(m.dimensions).join(', ')}] `
        + `(${published ? `AWS, ${published.source}` : 'produced in this app: docs/signals.md'})`);
    }
  }
  return lines;
}

/** The Reconcilers of each serving (by construct tree root): one serving has one reconciler. */
const RECONCILERS_OF = new WeakMap<object, Reconciler[]>();

/** The Reconciler of each service name in each known account and Region, by construct tree root (`service@environment`). */
const SERVICES_IN = new EnvironmentClaims();

/** Lambda's limit on a function's `Description` (CreateFunction; aws-cdk-lib 2.269.0 aws-lambda throws DescriptionTooLong above it). */
const FUNCTION_DESCRIPTION_MAX = 256;
const FUNCTION_DESCRIPTION = 'Capacity-aware routing reconciler';

/**
 * How long every run must go on without a read it uses before `degradedReadsAlarm` fires: longer than a throttling
 * episode (each such read gets one retry within 6 s, and the next run reads again), short enough that a missing grant
 * is seen within a quarter hour of the denial. At least `DEGRADED_READS_MIN_PERIODS` periods, so that with a long
 * period one run alone never alarms.
 */
const DEGRADED_READS_ALARM_SECONDS = 15 * 60;
const DEGRADED_READS_MIN_PERIODS = 3;

/**
 * How long every run must hold the weights on missing data while requests arrive before `missingDataAlarm` fires: as
 * long as the heartbeat waits for runs that stopped (InferenceAlarms' default, 10 minutes), longer than a scraper or
 * a CloudWatch agent restarting or a class's pods being replaced (a few minutes of silence), and short enough that a
 * shortage the runs cannot see is paged before the ReplicaShortage alarms alone would have to carry it. At least
 * `MISSING_DATA_MIN_PERIODS` periods, so that with a long period one run alone never alarms.
 */
const MISSING_DATA_ALARM_SECONDS = 10 * 60;
const MISSING_DATA_MIN_PERIODS = 3;
/** The decision reason of a run that held the weights because a signal it needs had no datapoint (`decide`). */
const MISSING_DATA: ReasonCode = 'missing-data';
/**
 * PutMetricAlarm takes at most 10 metrics (OBSERVABILITY_RULES 'alarm.metrics'): the two `Decisions` series, and the
 * requests of at most 8 routed classes in preference order.
 */
const MISSING_DATA_TRAFFIC_ROUTES = 8;

/**
 * The reconciler: a Lambda function, run every period, at once on capacity alarm state changes and (SageMaker) when the
 * endpoint takes writes again (`writableRule`), that reads the
 * routing target and one GetMetricData batch, calls the core policy `decide()`, writes weights only when they change
 * (SageMaker UpdateEndpointWeightsAndCapacities, ELBv2 ModifyListener or ModifyRule), and logs EMF decision metrics and an audit
 * line. Reserved concurrency 1: two runs never race on the same weights.
 */
export class Reconciler extends Construct {
  public readonly function: lambda.Function;
  public readonly role: iam.Role;
  public readonly logGroup: logs.LogGroup;
  public readonly scheduleRule: events.Rule;
  /**
   * The rules that run the reconciler on capacity alarm state changes, at most `ALARMS_PER_RULE` alarms each (empty
   * until there is an alarm).
   */
  public readonly alarmRules: events.Rule[] = [];
  /**
   * The rule that runs the reconciler when its routing target takes writes again (SageMaker: the endpoint back
   * InService after an update, whose runs in the meantime could write nothing); absent where writes are never refused (ALB).
   */
  public readonly writableRule?: events.Rule;
  /** One alarm per capacity-error metric. */
  public readonly capacityErrorAlarms: readonly cloudwatch.Alarm[];
  /**
   * Failed runs (`ReconcilerFailures`) in 2 of 3 periods: the weights are frozen while runs fail (invalid configuration,
   * facts that no longer match the endpoint or listener, AWS errors). One failed run alone (a throttled call) is retried
   * by the next tick and does not alarm. It notifies `alarmTopic`.
   */
  public readonly failureAlarm: cloudwatch.Alarm;
  /**
   * Lambda `Errors` of the function in 2 of 3 periods: runs that crashed, timed out or were killed before they could
   * record a failure (the failure alarm sees only failures a run lived to record).
   */
  public readonly errorsAlarm: cloudwatch.Alarm;
  /**
   * Every run that decided went on without a read it uses (`DegradedReads`, Minimum) in every period of 15 minutes (at
   * least 3 periods). Such a run succeeds, so the failure alarms never see it. On SageMaker (DescribeScalableTargets)
   * it writes its weights but no replica floor, so a shortage would get weights and no fallback capacity; on EKS
   * (DescribeTargetHealth) a class whose target group lost every pod stays unknown and the run holds the weights. A
   * throttled read that its one retry does not absorb passes within minutes; a missing grant or a denying service
   * control policy does not. It notifies `alarmTopic`.
   */
  public readonly degradedReadsAlarm: cloudwatch.Alarm;
  /**
   * Every run that decided held the weights on missing data (`Decisions` with `Reason` `missing-data`: no demand
   * datapoint, or no ready count of an allowed class, in the newest period) while requests reached the classes, for 10
   * minutes (at least 3 periods). Such a run succeeds and counts as a heartbeat, so no other alarm sees it: when a
   * class's scraper or metric source stops, every run holds the weights, in a shortage too. It notifies `alarmTopic`.
   */
  public readonly missingDataAlarm: cloudwatch.Alarm;
  /** The topic every alarm of the reconciler notifies. */
  public readonly alarmTopic: sns.ITopic;
  /** The key of the log group (the audit trail). */
  public readonly logEncryptionKey: kms.IKey;
  /** The configuration the function receives. */
  public readonly config: ReconcilerConfig;
  private readonly service: string;
  private readonly trigger: targets.LambdaFunction;
  /** The alarm ARNs of each rule of `alarmRules`, rendered at synth. */
  private readonly alarmArns: string[][] = [];

  constructor(scope: Construct, id: string, props: ReconcilerProps) {
    super(scope, id);
    throwIfInvalid('Reconciler', this.node.path, [servingPropProblem(props)].filter((p) => p !== undefined));
    // A serving construct with invalid or incomplete input throws its own problems here.
    const serving = props.serving.servingDescription();
    const graces = this.gracesForReadyTimes(props, serving);
    const policy = {
      ...windowDefaultsForPeriod(durationSeconds(props.policy?.period)),
      ...graces.policy,
      // The latency trigger watches the contract's SLO unless the policy names its own.
      ...(serving.latencySloP95Ms !== undefined ? { latencySloP95Ms: serving.latencySloP95Ms } : {}),
      // Floors and capacity writes are sized at the target the serving's autoscalers keep (`policy.headroom@serving`).
      ...(serving.headroom !== undefined ? { headroom: serving.headroom } : {}),
      ...policyConfigFromOptions(props.policy ?? {}),
      // Replica floors reach the autoscaler only where the serving construct binds them (EKS: a ScaledObject trigger on
      // the floor this reconciler publishes; SageMaker: desired instance counts it writes itself).
      ...(typeof props.serving.enableReplicaFloors === 'function' ? {} : { replicaFloorsApplied: false }),
    };
    throwIfInvalid('Reconciler', this.node.path, this.validate(props, serving, policy));
    // The platform's signal producers per routed name (an ALB target's class, a SageMaker variant's only class).
    const { signals: compact, karpenterCapacityErrors: karpenter, contractTokenCounters } = routingTarget(serving.routing).routedProducers(serving);
    this.config = {
      facts: withoutReadyTimes(this.factsForThisStack(props.serving, serving.routing)),
      placement: { sensitive: props.sensitive ?? false },
      policy,
      service: serving.service,
      tokensPerRequest: serving.tokensPerRequest,
      metricDelaySeconds: durationSeconds(props.metricDelay) ?? RECONCILER_TIMING_DEFAULTS.metricDelaySeconds,
      ...(serving.signals.containerInsightsClusterName ? { clusterName: serving.signals.containerInsightsClusterName } : {}),
      ...(Object.keys(compact).length > 0 ? { signals: compact } : {}),
      ...(karpenter ? { karpenterCapacityErrors: true } : {}),
      ...(contractTokenCounters ? { contractTokenCounters } : {}),
      ...(Object.keys(graces.fallbacks).length > 0 ? { fallbackGraceSeconds: graces.fallbacks } : {}),
    };
    const environment = Stack.of(this).toJsonString(this.config);
    const bytes = environmentBytes(this.config, RECONCILER_CONFIG_ENV, RECONCILER_SERVICE_ENV);
    if (bytes > ENVIRONMENT_LIMIT_BYTES) {
      throwIfInvalid('Reconciler', this.node.path, [{
        field: 'facts',
        message: `the configuration needs up to ${bytes} bytes of environment once resolved (Lambda allows ${ENVIRONMENT_LIMIT_BYTES}): ` +
          'route fewer classes per reconciler (e.g. one reconciler per endpoint or listener)',
      }]);
    }
    RECONCILERS_OF.set(props.serving, [...(RECONCILERS_OF.get(props.serving) ?? []), this]);
    SERVICES_IN.claim(this, serving.service);
    props.serving.enableReplicaFloors?.({ periodSeconds: policy.periodSeconds ?? DEFAULT_POLICY_CONFIG.periodSeconds });
    // The serving's deployed weights route until the first run: they honour the placement the runs enforce.
    props.serving.applyPlacement?.(this.config.placement);
    this.service = serving.service;

    this.logEncryptionKey = props.logEncryptionKey ?? newLogGroupKey(this, 'LogKey', `Audit trail (log group) of the routing reconciler of ${serving.service}`);
    this.logGroup = new logs.LogGroup(this, 'Logs', { retention: props.logRetention ?? logs.RetentionDays.THREE_MONTHS, encryptionKey: this.logEncryptionKey });
    const period = Duration.seconds(policy.periodSeconds ?? DEFAULT_POLICY_CONFIG.periodSeconds);
    const eventAge = staleEventAge(period);
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Routing reconciler of ${serving.service}: reads signals, writes routing weights`,
    });
    this.grantTargetAccess(props.serving);

    this.function = new lambda.Function(this, 'Function', {
      runtime: latestNodeRuntime(),
      architecture: lambda.Architecture.ARM_64,
      handler: 'index.handler',
      code: lambdaCode('reconciler'),
      role: this.role,
      logGroup: this.logGroup,
      memorySize: 256,
      timeout: Duration.seconds(RECONCILER_FUNCTION_TIMEOUT_SECONDS),
      reservedConcurrentExecutions: 1,
      // The next tick is the retry: a stale run must not write weights after a newer one.
      retryAttempts: 0,
      // Lambda keeps a throttled async event (reserved concurrency 1 while a run is in progress, or a backlog) and
      // retries it "for up to 6 hours by default" (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html);
      // an event older than one period has been superseded by the next tick, so it is dropped instead of run late.
      maxEventAge: eventAge,
      environment: { [RECONCILER_CONFIG_ENV]: environment, [RECONCILER_SERVICE_ENV]: serving.service },
      description: nameWithin(FUNCTION_DESCRIPTION_MAX, serving.service, `${FUNCTION_DESCRIPTION} for ${serving.service}`, FUNCTION_DESCRIPTION),
    });
    // For the operator reading the synthesized template: what each signal is read from, and who publishes it.
    (this.function.node.defaultChild as lambda.CfnFunction).addMetadata(SIGNAL_SOURCES_METADATA, signalSourceLines(this.config));
    // Lambda writes the function's streams into this group with the execution role; the group exists, so no CreateLogGroup.
    const logStreams = logGroupArns(this, this.logGroup.logGroupName).streams;
    this.role.addToPolicy(new iam.PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logStreams] }));
    acknowledgeRule(this.role, `AwsSolutions-IAM5[Resource::${nagRendering(Stack.of(this).resolve(logStreams))}]`,
      "Log streams of the reconciler's own log group: stream names are generated by Lambda per execution environment.");

    // A stale event is worthless (each run reads the present), and a failed run is retried by the next tick. The same
    // age bounds EventBridge's delivery (its own retry policy) and Lambda's async queue (maxEventAge above).
    this.trigger = new targets.LambdaFunction(this.function, { retryAttempts: 0, maxEventAge: eventAge });
    this.scheduleRule = new events.Rule(this, 'Schedule', {
      schedule: events.Schedule.rate(period),
      description: `Runs the routing reconciler of ${serving.service} every period`,
      targets: [this.trigger],
    });
    const writable = routingTarget(serving.routing).writableAgain(serving.routing);
    if (writable) {
      // A run right after an update ends finds the endpoint writable unless Application Auto Scaling repeats a refused
      // scaling first (its alarm repeats Auto Scaling actions once per minute, at no known phase); at its tick it may
      // find it Updating again. The event is best effort, so the schedule stays.
      this.writableRule = new events.Rule(this, 'WritableAgain', {
        description: `Runs the routing reconciler of ${serving.service} when its routing target takes writes again`,
        eventPattern: { source: [...writable.source], detailType: [...writable.detailType], detail: writable.detail },
        targets: [this.trigger],
      });
    }

    ({
      capacityErrors: this.capacityErrorAlarms, failures: this.failureAlarm, functionErrors: this.errorsAlarm, degradedReads: this.degradedReadsAlarm,
      missingData: this.missingDataAlarm, topic: this.alarmTopic,
    } = this.addAlarms(props, serving.service, period));
    acknowledgeNistRules(this, {
      IAMNoInlinePolicy: NIST_ONE_ROLE_POLICY,
      LambdaDLQ: 'Scheduled and alarm events are not retried (retryAttempts 0: the next tick is the retry, a stale event is worthless) and every ' +
        `failed run is recorded (${Metrics.reconcilerFailures.name} and the function's error count, both alarmed); a dead-letter queue would ` +
        'hold stale events nobody replays.',
      LambdaInsideVPC: 'The function calls AWS APIs only (CloudWatch, SageMaker or Elastic Load Balancing) and reaches no resource in a VPC; ' +
        'in a VPC it would need NAT or interface endpoints for each of them.',
    });
  }

  /** Runs that went on without a read they use (Sum). The `degradedReadsAlarm` watches its Minimum (every run in a period). */
  public metricDegradedReads(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.contractMetric(Metrics.degradedReads, {}, props);
  }

  /** Failed runs (all reasons, Sum). The `failureAlarm` watches it. */
  public metricFailures(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.contractMetric(Metrics.reconcilerFailures, {}, props);
  }

  /** The first rule of `alarmRules`: it matches every alarm unless there are more than `ALARMS_PER_RULE`. */
  public get alarmRule(): events.Rule | undefined {
    return this.alarmRules[0];
  }

  /**
   * Runs the reconciler at once whenever one of these alarms changes state (e.g. `InferenceObservability`'s
   * `capacityAlarms`), on top of the schedule. Can be called more than once; an alarm given twice is matched once.
   */
  public triggerOnAlarms(alarms: readonly cloudwatch.IAlarm[]): void {
    for (const arn of alarms.map((a) => a.alarmArn)) {
      if (this.alarmArns.some((arns) => arns.includes(arn))) continue;
      if (this.alarmArns.length === 0 || this.alarmArns[this.alarmArns.length - 1].length >= ALARMS_PER_RULE) this.addAlarmRule();
      this.alarmArns[this.alarmArns.length - 1].push(arn);
    }
  }

  private addAlarmRule(): void {
    const arns: string[] = [];
    const n = this.alarmArns.push(arns);
    this.alarmRules.push(new events.Rule(this, n === 1 ? 'AlarmStateChange' : `AlarmStateChange${n}`, {
      description: `Runs the routing reconciler of ${this.service} when a capacity alarm changes state`,
      eventPattern: {
        source: ['aws.cloudwatch'],
        detailType: ['CloudWatch Alarm State Change'],
        // Rendered at synth, so alarms added after construction are matched too.
        resources: Lazy.list({ produce: () => [...arns] }),
      },
      targets: [this.trigger],
    }));
  }

  /** The routing mode: 0 = cost, 1 = capacity. */
  public metricPolicyMode(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.contractMetric(Metrics.policyMode, {}, props);
  }

  /** Percentage of requests routed away from the preferred class. */
  public metricFallbackShare(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.contractMetric(Metrics.fallbackShareRequests, {}, props);
  }

  /** Percentage of requests routed to one class (ALB: class name; SageMaker: variant name). */
  public metricRouteWeight(className: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.contractMetric(Metrics.routeWeight, { [Dim.CLASS]: className }, props);
  }

  /** Reconciler decisions with one reason code (e.g. `enter-capacity`, `missing-data`). */
  public metricDecisions(reason: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.contractMetric(Metrics.decisions, { [Dim.REASON]: reason }, props);
  }

  private contractMetric(
    spec: { namespace: string; name: string; statistic: string },
    dimensions: Record<string, string>,
    props?: cloudwatch.MetricOptions,
  ): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: spec.namespace,
      metricName: spec.name,
      dimensionsMap: { [Dim.SERVICE]: this.service, ...dimensions },
      statistic: spec.statistic,
      period: Duration.minutes(1),
      ...props,
    });
  }

  /**
   * Only the calls the reconciler makes: GetMetricData, and what the serving construct grants for its own routing target
   * (`grantRouting`: the one endpoint or listener it routes). No routing-target statement is written here.
   */
  private grantTargetAccess(serving: IInferenceServing): void {
    this.role.addToPolicy(new iam.PolicyStatement({ actions: ['cloudwatch:GetMetricData'], resources: ['*'] }));
    const grant = serving.grantRouting(this.role);
    // Whatever the serving construct had to grant on "*" (a describe call without a resource type) is named here.
    const unscoped = grant.principalStatements.filter((s) => s.resources.includes('*')).flatMap((s) => s.actions);
    acknowledgeRule(this.role, 'AwsSolutions-IAM5[Resource::*]',
      'cloudwatch:GetMetricData has no resource type for metrics (the Service Authorization Reference lists only the ' +
        'optional dataset type, CloudWatch datasets, which names no metric), so it needs "*"; it only reads metrics.' +
        (unscoped.length > 0 ? ` ${unscoped.join(' and ')} likewise ${unscoped.length > 1 ? 'have' : 'has'} no resource type and only ${unscoped.length > 1 ? 'read' : 'reads'}.` : ''));
  }

  /**
   * The reconciler's own alarms: one per capacity-error metric it reads (state changes run it at once), failed runs
   * and function errors, each notifying the alarm topic on ALARM and OK.
   */
  private addAlarms(props: ReconcilerProps, service: string, period: Duration) {
    // InferenceAlarms on the same serving may be created before or after this construct: both are known at synth.
    this.node.addValidation({ validate: () => this.alarmsOfServingProblems(props.serving, period, this.config.metricDelaySeconds) });
    // One alarm per capacity-error metric the reconciler reads (the plan expands the Karpenter filter metric per NodePool).
    const plan = signalPlan(this.config, this.config.policy?.periodSeconds ?? DEFAULT_POLICY_CONFIG.periodSeconds).classes;
    const errorSources = Object.entries(plan).flatMap(([className, s]) => (s.capacityErrors && 'metric' in s.capacityErrors ? [[className, s.capacityErrors.metric] as const] : []));
    const capacityErrors = errorSources.map(
      ([className, source]) =>
        new cloudwatch.Alarm(this, `CapacityErrors-${className}`, {
          metric: new cloudwatch.Metric({
            namespace: source.namespace, metricName: source.metricName, dimensionsMap: { ...source.dimensions }, statistic: source.stat, period,
          }),
          threshold: 1,
          evaluationPeriods: 1,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
          alarmDescription: `Capacity errors on class ${className} of ${service}; state changes run the reconciler at once`,
        }),
    );
    this.triggerOnAlarms([...capacityErrors, ...(props.capacityAlarms ?? [])]);

    const failures = new cloudwatch.Alarm(this, 'Failures', {
      metric: this.metricFailures({ period }),
      threshold: 1,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      // No datapoint: no failed run. A reconciler that does not run at all is the job of InferenceAlarms' heartbeat, which
      // only exists where an InferenceObservability watches this serving: synth warns otherwise (alarmsOfServingProblems).
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `${service}: reconciler runs are failing (see the Reason dimension of ${Metrics.reconcilerFailures.name} and the audit lines ` +
        'in the reconciler log group); routing weights are frozen until they succeed.',
    });
    const functionErrors = new cloudwatch.Alarm(this, 'FunctionErrors', {
      metric: this.function.metricErrors({ period, statistic: 'Sum' }),
      threshold: 1,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `${service}: reconciler invocations are failing (the function's error count: a crash, a timeout or a denied write); ` +
        'routing weights are frozen until runs succeed. See the reconciler log group.',
    });
    const degradedPeriods = Math.max(DEGRADED_READS_MIN_PERIODS, Math.ceil(DEGRADED_READS_ALARM_SECONDS / period.toSeconds()));
    const degradedReads = new cloudwatch.Alarm(this, 'DegradedRuns', {
      // Minimum: a period counts only when every run in it (the scheduled one and any an alarm or event triggered) went
      // without the read.
      metric: this.metricDegradedReads({ period, statistic: 'Minimum' }),
      threshold: 1,
      evaluationPeriods: degradedPeriods,
      datapointsToAlarm: degradedPeriods,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      // No datapoint: no run decided in that period (runs that fail publish ReconcilerFailures instead, which the failure
      // alarms watch), which says nothing about the reads: the state stays as it is, so a stretch of failed runs does not
      // notify OK while the denial lasts.
      treatMissingData: cloudwatch.TreatMissingData.IGNORE,
      alarmDescription: `${service}: for ${(degradedPeriods * period.toSeconds()) / 60} minutes every reconciler run went on without a read it uses ` +
        `(${Metrics.degradedReads.name}; the audit lines say which and why: DescribeScalableTargets on SageMaker, so no replica floor is ` +
        'written, or DescribeTargetHealth on EKS, so a class whose target group lost every pod holds the weights). Check the reconciler role\'s ' +
        'grants and any service control policy; `verify` probes them.',
    });
    const missingData = this.missingDataRuns(props.serving, service, period);
    const topic = props.alarmTopic ?? encryptedAlarmTopic(this, 'AlarmTopic', service).topic;
    notifyOnAlarmAndOk(topic, [failures, functionErrors, degradedReads, missingData, ...capacityErrors]);
    // The status row of the serving's dashboard shows them beside InferenceAlarms' (docs/observability.md, "every alarm of the service").
    recordReconcilerAlarms(props.serving, this, [failures, functionErrors, degradedReads, missingData, ...capacityErrors]);
    return { capacityErrors, failures, functionErrors, degradedReads, missingData, topic };
  }

  /**
   * Every run of a period held the weights on missing data while requests arrived, in M of N periods. Each run that
   * decides publishes one `Decisions` datapoint (value 1) under [Service, Reason] and the [Service] rollup
   * (`decisionsRecord`, lib/core/reconciler/io.ts), so the SampleCount of the `missing-data` reason equals that of the
   * rollup exactly when every run of the period held. An idle service holds too (no class reports demand: ALB publishes
   * RequestCount "only when requests are flowing through the load balancer",
   * https://docs.aws.amazon.com/elasticloadbalancing/latest/application/load-balancer-cloudwatch-metrics.html), so a
   * period counts only when the platform counted requests to the routed classes (`ServiceMetrics.routeRequests`: a
   * SageMaker variant's variant-level series whatever its pools, which the other alarms read too; a pool's
   * per-InstanceType series may be missing on a deployment, and its absence would read as no traffic).
   */
  private missingDataRuns(serving: IInferenceServing, service: string, period: Duration): cloudwatch.Alarm {
    const periods = Math.max(MISSING_DATA_MIN_PERIODS, Math.ceil(MISSING_DATA_ALARM_SECONDS / period.toSeconds()));
    // The platform's request counts arrive later than the reconciler's EMF: a newest period whose requests are not yet
    // published reads 0 (see the expression), so N exceeds M by the periods of this Reconciler's metric delay. At every
    // policy.period and metricDelay its rules allow N fits CloudWatch's bound (at 6 hours, 3 + 1 periods: one day of 7),
    // test/core/alarm-window.test.ts.
    const { evaluationPeriods } = lateTolerantWindow(periods, period.toSeconds(), this.config.metricDelaySeconds);
    const m = new ServiceMetrics(serving.servingDescription(), period);
    const traffic = m.routes.slice(0, MISSING_DATA_TRAFFIC_ROUTES);
    const requests = Object.fromEntries(traffic.map((r) => [metricId('rq', r.index), m.routeRequests(r)]));
    return new cloudwatch.Alarm(this, 'MissingDataRuns', {
      metric: new cloudwatch.MathExpression({
        // Comparisons and arithmetic read a series' missing datapoint as 0 where another series has one, and IF(TS, TS, S)
        // gives 0 where the condition holds and the second series has no datapoint, and nothing where the condition has
        // none (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/using-metric-math.html, "Comparison and
        // logical operators", "Basic arithmetic functions", "Using IF expressions"): 1 where every run held and requests
        // arrived, 0 where a run decided otherwise or none arrived, no datapoint where no run decided.
        expression: `IF(held >= runs, (${Object.keys(requests).join(' + ')}) > 0, 0)`,
        usingMetrics: {
          held: this.metricDecisions(MISSING_DATA, { period, statistic: 'SampleCount' }),
          runs: this.contractMetric(Metrics.decisions, {}, { period, statistic: 'SampleCount' }),
          ...requests,
        },
        label: 'every run held the weights on missing data while requests arrived',
        period,
      }),
      threshold: 1,
      evaluationPeriods,
      datapointsToAlarm: periods,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      // No datapoint: no run decided in that period (the heartbeat and the failure alarms' business), which says nothing
      // about the data: the state stays as it is, so a stretch of failed runs does not notify OK while the data is missing.
      treatMissingData: cloudwatch.TreatMissingData.IGNORE,
      alarmDescription: `${service}: in ${periods} of ${evaluationPeriods} periods every reconciler run held the weights on missing data ` +
        `(${Metrics.decisions.name} with ${Dim.REASON} ${MISSING_DATA}) while requests reached the classes: a signal the policy needs has no ` +
        'datapoint (the audit line says which: demand of a class holding weight, or ready replicas of an allowed class), so the weights ' +
        'stay where they are, in a shortage too. Check that class\'s metric producer (its CloudWatch agent or scraper, Container Insights, ' +
        'the load balancer\'s or endpoint\'s metrics).' + (m.routes.length > traffic.length
        ? ` Requests are read for the ${traffic.length} most preferred of ${m.routes.length} routed classes only (an alarm reads at most 10 metrics).` : ''),
    });
  }

  /**
   * This reconciler against the `InferenceAlarms` of its serving. Their run-fed alarms read one datapoint per run at
   * their `reconcilerPeriod`: at another period than this one the heartbeat (missing data breaching) would flip between
   * runs, or the replica shortage pair two runs' counts, so synth fails; so it does when their M of N alarms leave less
   * room for a late datapoint than this reconciler's `metricDelay` says the metrics need. Without a heartbeat, nothing
   * pages when runs stop: this construct's own alarms see only runs that happened and failed (missing data is not breaching), so a
   * disabled schedule, reserved concurrency set to 0 (throttled async events are dropped after `maxEventAge`), invocations
   * EventBridge fails to deliver, or a log group key that no longer lets Lambda write (no EMF) leave them all OK.
   */
  private alarmsOfServingProblems(servingConstruct: IInferenceServing, period: Duration, metricDelaySeconds: number): string[] {
    const all = inferenceAlarmsOf(servingConstruct, this.node.root);
    const c = new Checker(RECONCILER_RULES);
    for (const a of all) checkInferenceAlarms(c, a, period.toSeconds(), metricDelaySeconds);
    const problems = c.problems;
    if (!all.some((a) => a.heartbeat)) {
      const m = Metrics.decisions;
      const n = defaultHeartbeatPeriods(period);
      Annotations.of(this).addWarningV2('cdk-capacity-aware-inference:reconciler-no-heartbeat',
        `No InferenceObservability (InferenceAlarms) with its reconciler heartbeat is on this Reconciler's serving (${this.service}), so nothing ` +
        'pages when runs stop: this Reconciler\'s own alarms see only runs that fail, not a disabled schedule, reserved concurrency 0, ' +
        'invocations EventBridge fails to deliver or metrics that stop, and the routing weights stay frozen. Add new InferenceObservability(scope, id, ' +
        `{ serving, reconcilerPeriod: Duration.seconds(${period.toSeconds()})${metricDelaySeconds === RECONCILER_TIMING_DEFAULTS.metricDelaySeconds
          ? '' : `, metricDelay: Duration.seconds(${metricDelaySeconds})`} }) on the same serving, or an alarm of your own: ${m.namespace} ` +
        `${m.name} with dimension ${Dim.SERVICE}=${this.service} only, statistic SampleCount, period ${period.toSeconds()} s, less than 1 in ` +
        `${n} of ${n} periods, missing data breaching (then acknowledge this warning on the Reconciler's stack).`);
    }
    return problems.length > 0 ? [new ConstructValidationError('Reconciler', this.node.path, problems).message] : [];
  }

  /**
   * The facts as this function gets them. A SageMaker endpoint configuration name that is a reference into another
   * deployed stack would be passed as that stack's export, and the name changes with every configuration replacement
   * (CloudFormation generates it): "After another stack imports an output value, you can't ... modify the exported
   * output value" (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/intrinsic-function-reference-importvalue.html),
   * so every model change would fail to deploy. It is left out there, with a warning; a nested stack's references are
   * parameters and outputs, not exports, and keep it.
   */
  private factsForThisStack(serving: IInferenceServing, facts: RoutingFacts): RoutingFacts {
    const configuration = routingTarget(facts).configurationOf(facts);
    if (!configuration || !Token.isUnresolved(configuration.name)) return facts;
    const references = Tokenization.reverseString(configuration.name).tokens.filter((t) => Reference.isReference(t));
    // A token without a reference in it (a Lazy) is taken to come from the serving construct, when it is one.
    const producers = references.length > 0 ? references.map((r) => r.target) : Construct.isConstruct(serving) ? [serving] : [];
    const here = deployedStack(this);
    const elsewhere = producers.map(deployedStack).find((stack) => stack !== here);
    if (!elsewhere) return facts;
    Annotations.of(this).addWarningV2('cdk-capacity-aware-inference:reconciler-cross-stack-config',
      `The endpoint configuration is in stack ${elsewhere.stackName} and this Reconciler in ${here.stackName}: its name is left out of the ` +
      'routing facts (as an export it would block every deploy that replaces the configuration). So the reconciler cannot tell facts of a new ' +
      'configuration from the endpoint still on the old one, or the other way round, during a deploy: it may write weights from the wrong ' +
      'facts, or set the endpoint Updating just as CloudFormation updates it, which fails the stack update. Define the Reconciler in the ' +
      'endpoint\'s stack to keep the check.');
    return configuration.without;
  }

  /**
   * The provisioning graces the classes' declared replica-ready times call for, the simulator's too
   * (`provisioningGraceFromFacts`): the preferred route's (`defaultProvisioningGraceSeconds`) as the policy's, where it
   * differs from the period's default, and each fallback route's own (`ReconcilerConfig.fallbackGraceSeconds`); nothing
   * while the description, the period or the metric delay breaks a rule (`validate` reports it). A `provisioningGrace`
   * set below the shortest safe one (`shortestSafeGraceSeconds`) warns: every routine scale-out of the watched class
   * would then read as replicas not ready for the whole window.
   */
  private gracesForReadyTimes(props: ReconcilerProps, serving: ServingDescription):
    { readonly policy: Partial<PolicyConfig>; readonly fallbacks: Readonly<Record<string, number>> } {
    const period = durationSeconds(props.policy?.period) ?? DEFAULT_POLICY_CONFIG.periodSeconds;
    const delay = durationSeconds(props.metricDelay) ?? RECONCILER_TIMING_DEFAULTS.metricDelaySeconds;
    if (numberProblem(RECONCILER_RULES['policy.period'], period) !== undefined || numberProblem(RECONCILER_RULES.metricDelay, delay) !== undefined
      || servingDescriptionProblems(serving).length > 0) return { policy: {}, fallbacks: {} };
    const placement = { sensitive: props.sensitive };
    const { defaultSeconds: grace, safeSeconds: safe, watched, fallbacks } = provisioningGraceFromFacts(serving.routing, placement, delay, period);
    const explicit = durationSeconds(props.policy?.provisioningGrace);
    if (isFiniteLiteral(explicit) && safe !== undefined && explicit < safe && watched?.replicaReadyTimeP95Seconds !== undefined) {
      Annotations.of(this).addWarningV2('cdk-capacity-aware-inference:reconciler-grace-below-ready-time',
        `policy.provisioningGrace is ${explicit} s, below the ${safe} s that the replica-ready time declared for '${watched.name}' (p95 ` +
        `${watched.replicaReadyTimeP95Seconds} s, envelope.replicaReadyTimeP95Seconds; the preferred route, which the grace rule watches) ` +
        `needs with metricDelay ${delay} s and a ${period} s period: a routine scale-out of it shows desired above ready for the whole grace ` +
        'window, which reads as a shortage (replicas-not-ready) and can enter capacity mode while the replicas are still starting. Leave ' +
        `provisioningGrace unset (its default, ${grace} s, follows the declared time), set at least Duration.seconds(${safe}), or acknowledge ` +
        'this warning on the Reconciler\'s stack.');
    }
    const periodDefault = windowDefaultsForPeriod(period).provisioningGraceSeconds ?? DEFAULT_POLICY_CONFIG.provisioningGraceSeconds;
    return { policy: grace === periodDefault ? {} : { provisioningGraceSeconds: grace }, fallbacks };
  }

  private validate(props: ReconcilerProps, serving: ServingDescription, policy: Partial<PolicyConfig>): Problem[] {
    const c = new Checker(RECONCILER_RULES);
    const other = (RECONCILERS_OF.get(props.serving) ?? []).find((r) => r.node.root === this.node.root);
    c.cross('serving@once', { routedBy: other?.node.path }, 'serving');
    const at = SERVICES_IN.find(this, serving.service);
    // One serving routed twice is the problem above; the name is then shared as a matter of course.
    const sharedWith = other ? undefined : at?.claimedBy;
    c.cross('service@environment', { sharedWith, service: serving.service, where: at?.where }, 'serving.service');
    const periodSeconds = policy.periodSeconds ?? DEFAULT_POLICY_CONFIG.periodSeconds;
    // Each InferenceAlarms once, named by the first of its run-fed alarms given.
    const given = new Map<AlarmsOfServing, cloudwatch.IAlarm>();
    for (const alarm of props.capacityAlarms ?? []) {
      const record = inferenceAlarmsOfAlarm(alarm);
      if (record && !given.has(record)) given.set(record, alarm);
    }
    // Its own rule reports a metricDelay that is no whole number of seconds from 0 to 900; the alarms are then not judged against it.
    const delay = durationSeconds(props.metricDelay) ?? RECONCILER_TIMING_DEFAULTS.metricDelaySeconds;
    const metricDelaySeconds = numberProblem(RECONCILER_RULES.metricDelay, delay) === undefined ? delay : undefined;
    for (const [record, alarm] of given) checkInferenceAlarms(c, record, periodSeconds, metricDelaySeconds, alarm.node.path);
    // Its own rule reports a headroom out of range; only a valid one is compared with the serving's.
    const headroom = props.policy?.headroom;
    if (headroom !== undefined && serving.headroom !== undefined && numberProblem(RECONCILER_RULES['policy.headroom'], headroom) === undefined) {
      const servingPath = Construct.isConstruct(props.serving) ? `'${props.serving.node.path}'` : 'the serving';
      c.cross('policy.headroom@serving', { headroom, servingHeadroom: serving.headroom, serving: servingPath }, 'policy.headroom');
    }
    const description = servingDescriptionProblems(serving);
    const fromContainerInsights = isKnownTargetKind(serving.routing) && routingTarget(serving.routing).desiredReplicasFrom === 'container-insights';
    c.cross('serving.signals.containerInsightsClusterName', { required: fromContainerInsights, clusterName: serving.signals?.containerInsightsClusterName });
    if (description.length === 0) {
      const facts = serving.routing;
      const classes = policyClassesFromFacts(facts, { sensitive: props.sensitive });
      const allowed = classes.filter((cls) => cls.placementAllowed).map((cls) => cls.name);
      c.cross('sensitive', { sensitive: props.sensitive ?? false, allowed });
      const forbidden = classes.filter((cls) => !cls.placementAllowed).map((cls) => `'${cls.name}'`);
      if (allowed.length > 0 && forbidden.length > 0 && typeof props.serving.applyPlacement !== 'function') {
        c.add('serving.applyPlacement', `is undefined while sensitive is true and the placement forbids ${forbidden.join(', ')} (allowSensitive: false): ` +
          'nothing says the weights the serving deploys, which route until the first run, leave them out; allowed: a serving that implements ' +
          'applyPlacement (SageMakerCapacityEndpoint and EksInferenceService do), or sensitive: false');
      }
    }
    if (typeof props.serving.grantRouting !== 'function') {
      c.add('serving.grantRouting', 'is undefined; allowed: a function (the construct that owns the routing target grants the routing writes on it)');
    }
    c.optional('metricDelay', durationSeconds(props.metricDelay));
    // Each policy option against its one rule (the same the Lambda checks its configuration with), then between fields.
    return [...c.problems, ...description, ...policyProblems(policy, 'option')];
  }
}

/**
 * The one check of an `InferenceAlarms` against this Reconciler's period and metric delay, whichever way it reached
 * the Reconciler: on the same serving (`alarm` undefined) or through `capacityAlarms` (`alarm`, the one given). Each
 * only where the alarms depend on it: run-fed alarms on the period, M of N alarms on the delay.
 */
function checkInferenceAlarms(
  c: Checker<typeof RECONCILER_RULES>, record: AlarmsOfServing, periodSeconds: number, metricDelaySeconds: number | undefined, alarm?: string,
): void {
  const inferenceAlarms = record.alarms.node.path;
  if (record.readsRuns) {
    c.cross('policy.period@alarms', { inferenceAlarms, alarm, alarmPeriodSeconds: record.reconcilerPeriod.toSeconds(), periodSeconds }, 'policy.period');
  }
  if (record.readsLate && metricDelaySeconds !== undefined) {
    c.cross('metricDelay@alarms', { inferenceAlarms, alarm, alarmsDelaySeconds: record.metricDelay.toSeconds(), metricDelaySeconds }, 'metricDelay');
  }
}

/** The top-level stack a construct is deployed with (a nested stack's parent's, up the chain). */
function deployedStack(scope: IConstruct): Stack {
  let stack = Stack.of(scope);
  while (stack.nestedStackParent) stack = stack.nestedStackParent;
  return stack;
}

/**
 * Alarms one rule matches. An event pattern takes 2,048 characters by default ("Event pattern size", a quota an
 * account may have raised, but not one to count on: https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-quota.html),
 * and an alarm ARN resolves only at deploy: `arn:` + partition (up to 10: aws-us-gov) + `:cloudwatch:` + Region (up to
 * 14) + `:` + account (12) + `:alarm:` + name (up to 255, PutMetricAlarm AlarmName; CloudFormation's generated names
 * are cut to fit) is at most 315, quoted and separated 318. Six of them and the rest of the pattern (about 100) stay
 * under the limit, whatever the names.
 */
export const ALARMS_PER_RULE = 6;

/**
 * How old a trigger event may be before it is dropped: one period (a newer tick supersedes it), at least 60 s, the
 * smallest age both bounds take (Lambda MaximumEventAgeInSeconds 60..21600,
 * https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-configuring.html; EventBridge RetryPolicy
 * MaximumEventAgeInSeconds 60..86400, https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_RetryPolicy.html).
 */
function staleEventAge(period: Duration): Duration {
  return Duration.seconds(Math.max(60, period.toSeconds()));
}

/** Construct options (Durations) to the policy's plain configuration (seconds); unset fields keep the core defaults. */
function policyConfigFromOptions(o: RoutingPolicyOptions): Partial<PolicyConfig> {
  const seconds = durationSeconds;
  const entries: Partial<Record<keyof PolicyConfig, number | undefined>> = {
    periodSeconds: seconds(o.period),
    headroom: o.headroom,
    warmFloorShare: o.warmFloorShare,
    weightTotal: o.weightTotal,
    capacityErrorLookbackSeconds: seconds(o.capacityErrorLookback),
    provisioningGraceSeconds: seconds(o.provisioningGrace),
    latencySloP95Ms: durationMillis(o.latencySloP95),
    latencyBreachPeriods: o.latencyBreachPeriods,
    stabilizationWindowSeconds: seconds(o.stabilizationWindow),
    rampStepShare: o.rampStepShare,
    minWeightChangeShare: o.minWeightChangeShare,
    demandWindowPeriods: o.demandWindowPeriods,
    demandQuantile: o.demandQuantile,
    reentryMemorySeconds: seconds(o.reentryMemory),
    maxReturnHoldSeconds: seconds(o.maxReturnHold),
  };
  return Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined)) as Partial<PolicyConfig>;
}

/**
 * The facts without each class's declared replica-ready time. The graces it calls for are resolved at synth
 * (`gracesForReadyTimes`, into `policy.provisioningGraceSeconds` and `fallbackGraceSeconds`) and the function reads
 * nothing else of it, while Lambda's environment holds 4 KB in all: carried along, the times of five variants of three
 * pools take some 500 bytes, enough to fail a configuration that fits (the graces take some 20 bytes a fallback).
 */
function withoutReadyTimes(facts: RoutingFacts): RoutingFacts {
  const classes = new Set<object>(routingTarget(facts).classes(facts));
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (!value || typeof value !== 'object') return value;
    if (classes.has(value)) {
      const { replicaReadyTimeP95Seconds: _, ...rest } = value as RoutedClassFacts;
      return rest;
    }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, strip(v)]));
  };
  return strip(facts) as RoutingFacts;
}
