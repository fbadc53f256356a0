// The ReplicaShortage alarm's default duration follows the replica-ready time each routed class declares
// (envelope.replicaReadyTimeP95Seconds, carried in the routing facts; a SageMaker variant its slowest pool), as the
// Reconciler's provisioning grace does (test/control/reconciler-grace.test.ts), by its own formula:
// defaultReplicaShortageSeconds (lib/core/metrics/alarm-window.ts), no metric delay, two periods of margin.
import { Annotations as CoreAnnotations, Duration, type Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as sns from 'aws-cdk-lib/aws-sns';
import { ALARM_DEFAULTS, InferenceAlarms, InferenceObservability } from '../../lib/control/observability';
import { defaultReplicaShortageSeconds } from '../../lib/core/metrics/alarm-window';
import { defaultProvisioningGraceSeconds, shortestSafeGraceSeconds } from '../../lib/core/policy/defaults';
import { maxAlarmEvaluationSeconds } from '../../lib/core/platform/limits';
import { type AlbRoutingFacts, type RoutedClassFacts, type SageMakerRoutingFacts } from '../../lib/core/reconciler/routing-facts';
import { type CapacityClassSpec } from '../../lib/core/service/capacity-class';
import { OBSERVABILITY_RULES } from '../../lib/core/validation/rules';
import { REPLICA_READY_TIME_RULE } from '../../lib/core/validation/service-rules';
import { SageMakerCapacityEndpoint } from '../../lib/sagemaker/endpoint';
import { smClasses, TWO_VARIANTS } from '../sagemaker/fixtures';
import { LLAMA_CONTRACT, testStack } from '../util';
import { albFactsOf, servingOf } from './serving-fixture';

const WARNING = 'cdk-capacity-aware-inference:replica-shortage-below-ready-time';
const LEAST = ALARM_DEFAULTS.replicaShortage.duration.toSeconds();

/** A routed class's facts as the serving constructs hand them over, with the ready time it declares, if any. */
function cls(name: string, preferenceRank: number, instanceType: string, replicaReadyTimeP95Seconds?: number): RoutedClassFacts {
  return {
    name, preferenceRank, instanceType, tokensPerSecondPerReplica: 1000, safeConcurrency: 16, usdPerReplicaHour: 2, maxReplicas: 4,
    allowSensitive: true,
    ...(replicaReadyTimeP95Seconds !== undefined ? { replicaReadyTimeP95Seconds } : {}),
  };
}

/** One target group per class: l40s declares 420 s, a10g nothing, inf2 1200 s. */
function alb(ready: { l40s?: number; a10g?: number; inf2?: number } = { l40s: 420, inf2: 1200 }): AlbRoutingFacts {
  const classes = [cls('l40s', 0, 'g6e.xlarge', ready.l40s), cls('a10g', 1, 'g5.xlarge', ready.a10g), cls('inf2', 2, 'inf2.xlarge', ready.inf2)];
  return albFactsOf(classes);
}

/** preferred = one pool declaring 420 s; fallback = two pools, 360 s and 540 s; spare = a pool declaring none. */
const SAGEMAKER: SageMakerRoutingFacts = {
  kind: 'sagemaker',
  endpointName: 'llama3-chat',
  endpointArn: 'arn:aws:sagemaker:us-east-1:123456789012:endpoint/llama3-chat',
  variants: [
    { variantName: 'preferred', classes: [cls('l40s', 0, 'ml.g6e.xlarge', 420)] },
    { variantName: 'fallback', classes: [cls('a10g', 1, 'ml.g5.xlarge', 360), cls('a10g-large', 1, 'ml.g5.2xlarge', 540)] },
    { variantName: 'spare', classes: [cls('inf2', 2, 'ml.inf2.xlarge')] },
  ],
};

interface AlarmProps {
  readonly DatapointsToAlarm: number;
  readonly EvaluationPeriods: number;
  readonly AlarmDescription: string;
  readonly Metrics: Array<{ MetricStat?: { Period: number } }>;
}

/** Each ReplicaShortage alarm's [M, N], in routed order. */
function shortageWindows(stack: Stack): Array<[number, number]> {
  return shortageAlarms(stack).map((a) => [a.DatapointsToAlarm, a.EvaluationPeriods]);
}

function shortageAlarms(stack: Stack): AlarmProps[] {
  const alarms = Template.fromStack(stack).findResources('AWS::CloudWatch::Alarm');
  return Object.entries(alarms)
    .filter(([id]) => /ReplicaShortage\d/.test(id))
    .sort(([a], [b]) => Number(/ReplicaShortage(\d)/.exec(a)![1]) - Number(/ReplicaShortage(\d)/.exec(b)![1]))
    .map(([, r]) => r.Properties as AlarmProps);
}

const warnings = (stack: Stack) => Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('replica-shortage-below-ready-time'));

describe('defaultReplicaShortageSeconds', () => {
  test('nothing declared: the 5 minutes in whole periods, as before', () => {
    expect(defaultReplicaShortageSeconds(undefined, 60, LEAST)).toBe(300);
    expect(defaultReplicaShortageSeconds(undefined, 120, LEAST)).toBe(360);
    expect(defaultReplicaShortageSeconds(undefined, 600, LEAST)).toBe(600);
  });

  test('declared: the time in whole periods plus two, never below the 5 minutes', () => {
    expect(defaultReplicaShortageSeconds(420, 60, LEAST)).toBe(540);
    expect(defaultReplicaShortageSeconds(400, 60, LEAST)).toBe(540);
    expect(defaultReplicaShortageSeconds(300, 60, LEAST)).toBe(420);
    expect(defaultReplicaShortageSeconds(180, 60, LEAST)).toBe(300);
    expect(defaultReplicaShortageSeconds(420, 120, LEAST)).toBe(720);
    expect(defaultReplicaShortageSeconds(420, 600, LEAST)).toBe(1800);
  });

  test('no metric delay in it: it is the shortest safe grace on published windows (EKS), which the Reconciler\'s exceeds at longer delays', () => {
    const preferred = [{ name: 'l40s', preferenceRank: 0, placementAllowed: true, replicaReadyTimeP95Seconds: 420 }];
    for (const delay of [60, 120, 300]) expect(shortestSafeGraceSeconds(preferred, 'published', delay, 60)).toBe(540);
    expect(defaultProvisioningGraceSeconds(preferred, 'published', 120)).toBe(540);
    expect(defaultProvisioningGraceSeconds(preferred, 'published', 300)).toBe(720);
    expect(defaultReplicaShortageSeconds(420, 60, LEAST)).toBe(540);
  });

  test('a scale-out that ends within the declared time never breaches every period of the default; the time rounded up would', () => {
    // A shortage from s to s + R breaches every period it touches (a period's Maximum desired, Minimum ready, or any run
    // in it): swept over every start second within a period, for ready times around whole and half periods.
    const touched = (s: number, r: number, p: number) => Math.floor((s + r) / p) - Math.floor(s / p) + 1;
    for (const p of [60, 120, 600]) {
      for (const r of [60, 299, 300, 301, 390, 420, 421, 1200]) {
        const periods = defaultReplicaShortageSeconds(r, p, LEAST) / p;
        const worst = Math.max(...Array.from({ length: p }, (_, s) => touched(s + 0.5, r, p)));
        expect({ p, r, worst: worst < periods }).toEqual({ p, r, worst: true });
        expect({ p, r, roundedUpPages: worst >= Math.ceil(r / p) }).toEqual({ p, r, roundedUpPages: true });
      }
    }
  });
});

describe('InferenceAlarms on an ALB (every period of the duration, consecutive)', () => {
  test('l40s declares 420 s: 9 of 9 one-minute periods; a10g declares none: 5 of 5; inf2 1200 s: 22 of 22', () => {
    const { stack } = testStack();
    new InferenceAlarms(stack, 'Alarms', { serving: servingOf(alb(), 'llama-eks') });
    expect(shortageWindows(stack)).toEqual([[9, 9], [5, 5], [22, 22]]);
    expect(shortageAlarms(stack)[0].AlarmDescription).toContain('has wanted more replicas than are ready for 9 minutes');
    expect(shortageAlarms(stack)[1].AlarmDescription).toContain('for 5 minutes');
    expect(warnings(stack)).toEqual([]);
  });

  test('nothing declared: every class keeps 5 minutes, the configuration of before', () => {
    const { stack } = testStack();
    new InferenceAlarms(stack, 'Alarms', { serving: servingOf(alb({}), 'llama-eks') });
    expect(shortageWindows(stack)).toEqual([[5, 5], [5, 5], [5, 5]]);
  });

  test('at a 2-minute reconciler period: 420 s is 4 periods, plus two: 6 (12 minutes); none declared: 3', () => {
    const { stack } = testStack();
    new InferenceAlarms(stack, 'Alarms', { serving: servingOf(alb(), 'llama-eks'), reconcilerPeriod: Duration.minutes(2) });
    expect(shortageWindows(stack)).toEqual([[6, 6], [3, 3], [12, 12]]);
    const periods = shortageAlarms(stack)[0].Metrics.flatMap((q) => (q.MetricStat ? [q.MetricStat.Period] : []));
    expect(periods).toEqual([120, 120]);
  });

  test('a metricDelay does not lengthen it (the ALB alarm has no FILL: no late periods either)', () => {
    const { stack } = testStack();
    new InferenceAlarms(stack, 'Alarms', { serving: servingOf(alb(), 'llama-eks'), metricDelay: Duration.seconds(300) });
    expect(shortageWindows(stack)).toEqual([[9, 9], [5, 5], [22, 22]]);
  });
});

describe('InferenceAlarms on SageMaker (M of N: the duration\'s periods out of those of metricDelay more)', () => {
  test('preferred 420 s: 9 of 11; fallback, its slowest pool 540 s: 11 of 13; spare, none declared: 5 of 7', () => {
    const { stack } = testStack();
    new InferenceAlarms(stack, 'Alarms', { serving: servingOf(SAGEMAKER, 'llama') });
    expect(shortageWindows(stack)).toEqual([[9, 11], [11, 13], [5, 7]]);
    expect(shortageAlarms(stack)[0].AlarmDescription).toContain('in 9 of 11 periods of 1 minute');
  });

  test('a metricDelay widens N, never M: 300 s is 5 late periods', () => {
    const { stack } = testStack();
    new InferenceAlarms(stack, 'Alarms', { serving: servingOf(SAGEMAKER, 'llama'), metricDelay: Duration.seconds(300) });
    expect(shortageWindows(stack)).toEqual([[9, 14], [11, 16], [5, 10]]);
  });

  test('from the endpoint construct: the envelope\'s declared time reaches the alarm through the routing facts', () => {
    const { stack } = testStack();
    const ready: Readonly<Record<string, number>> = { l40s: 360, a10g: 540 };
    const classes: CapacityClassSpec[] = smClasses().map((c) => (ready[c.name] === undefined ? c
      : { ...c, envelope: { ...c.envelope, replicaReadyTimeP95Seconds: ready[c.name] } }));
    const endpoint = new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes, variants: TWO_VARIANTS });
    new InferenceObservability(stack, 'Observability', { serving: endpoint });
    // preferred = [l40s 360 s, a10g 540 s]: its slowest pool, 540 s, so 11 of 13; fallback = [inf2], none: 5 of 7.
    expect(shortageWindows(stack)).toEqual([[11, 13], [5, 7]]);
  });
});

describe('a replicaShortage.duration the user sets wins', () => {
  test('on every routed class, declared or not', () => {
    const { stack } = testStack();
    new InferenceAlarms(stack, 'Alarms', { serving: servingOf(alb(), 'llama-eks'), replicaShortage: { duration: Duration.minutes(30) } });
    expect(shortageWindows(stack)).toEqual([[30, 30], [30, 30], [30, 30]]);
    expect(warnings(stack)).toEqual([]);
    const { stack: sagemaker } = testStack('SageMaker');
    new InferenceAlarms(sagemaker, 'Alarms', { serving: servingOf(SAGEMAKER, 'llama'), replicaShortage: { duration: Duration.minutes(3) } });
    expect(shortageWindows(sagemaker)).toEqual([[3, 5], [3, 5], [3, 5]]);
  });

  test('below what a declared time calls for, it is deployed and synth warns, naming each such class; acknowledged, it is gone', () => {
    const { stack } = testStack();
    new InferenceAlarms(stack, 'Alarms', { serving: servingOf(alb(), 'llama-eks'), replicaShortage: { duration: Duration.minutes(8) } });
    expect(shortageWindows(stack)).toEqual([[8, 8], [8, 8], [8, 8]]);
    const found = warnings(stack);
    expect(found).toHaveLength(1);
    expect(found[0].id).toBe('/Test/Alarms');
    expect(found[0].entry.data).toContain('replicaShortage.duration is 480 s, below what the replica-ready time declared '
      + "(envelope.replicaReadyTimeP95Seconds) calls for at a reconciler period of 60 s: 'l40s' (p95 420 s: 540 s), 'inf2' (p95 1200 s: 1320 s).");
    expect(found[0].entry.data).toContain('set at least Duration.seconds(1320)');
    expect(found[0].entry.data).toContain(`[ack: ${WARNING}]`);
    const { stack: acknowledged } = testStack('Acknowledged');
    new InferenceAlarms(acknowledged, 'Alarms', { serving: servingOf(alb(), 'llama-eks'), replicaShortage: { duration: Duration.minutes(8) } });
    CoreAnnotations.of(acknowledged).acknowledgeWarning(WARNING, 'paged early on purpose');
    expect(warnings(acknowledged)).toEqual([]);
  });

  test('no warning at or above it, where nothing is declared, or with the alarm off', () => {
    const built = (facts: AlbRoutingFacts, replicaShortage: { enabled?: boolean; duration?: Duration }) => {
      const { stack } = testStack();
      new InferenceAlarms(stack, 'Alarms', { serving: servingOf(facts, 'llama-eks'), replicaShortage });
      return warnings(stack);
    };
    expect(built(alb({ l40s: 420 }), { duration: Duration.minutes(9) })).toEqual([]);
    expect(built(alb({}), { duration: Duration.minutes(1) })).toEqual([]);
    // A short declared time is judged on its own need (ceil(60/60) + 2 = 3 periods), not the default's 5-minute floor:
    // 180 s warns no more than on a class that declares nothing (review R254); 120 s is below it.
    expect(built(alb({ l40s: 60 }), { duration: Duration.seconds(180) })).toEqual([]);
    expect(built(alb({ l40s: 60 }), { duration: Duration.seconds(120) })).toHaveLength(1);
    expect(built(alb(), { enabled: false, duration: Duration.minutes(1) })).toEqual([]);
  });
});

test('every default fits CloudWatch\'s bound: the longest declared time, at every reconciler period, with the longest metricDelay', () => {
  const longest = REPLICA_READY_TIME_RULE.max!;
  const facts: SageMakerRoutingFacts = {
    ...SAGEMAKER,
    variants: SAGEMAKER.variants.map((v) => ({ ...v, classes: v.classes.map((c) => ({ ...c, replicaReadyTimeP95Seconds: longest })) })),
  };
  const rule = OBSERVABILITY_RULES['alarm.reconcilerPeriod'];
  const { stack } = testStack();
  const alarmTopic = new sns.Topic(stack, 'Topic');
  const serving = servingOf(facts, 'llama');
  for (let period = rule.min!; period <= rule.max!; period += rule.multipleOf!) {
    const a = new InferenceAlarms(stack, `Alarms${period}`, { serving, alarmTopic, reconcilerPeriod: Duration.seconds(period), metricDelay: Duration.seconds(900) });
    for (const alarm of a.replicaShortageAlarms) {
      const cfn = alarm.node.defaultChild as cloudwatch.CfnAlarm;
      expect(cfn.datapointsToAlarm! * period).toBe(defaultReplicaShortageSeconds(longest, period, LEAST));
      expect(cfn.evaluationPeriods! * period).toBeLessThanOrEqual(maxAlarmEvaluationSeconds(period));
    }
  }
});
