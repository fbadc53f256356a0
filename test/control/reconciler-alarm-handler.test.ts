/**
 * The Lambda handler hands the event that triggered it to the run: a capacity alarm's state change reaches
 * `alarmedClasses` (its own file: the handler keeps its configuration for the life of the module, and this one is an
 * EKS listener whose classes have capacity-error metrics).
 */
import { DescribeListenersCommand } from '@aws-sdk/client-elastic-load-balancing-v2';
import { alarmedClasses } from '../../lib/core/reconciler/alarm-trigger';
import { type ReconcilerConfig } from '../../lib/core/reconciler/config';
import { SAGEMAKER_ENDPOINT_STATE_CHANGE } from '../../lib/core/reconciler/targets/sagemaker';
import { handler } from '../../lambda/reconciler';
import { ALB, elb, fill, listener, NOW_MS, perMinute, resetWorld, serveMetrics } from './reconciler-world';

// The listener of the handler suites, with Karpenter's capacity-error metric per NodePool (and its alarms).
const EKS: ReconcilerConfig = { ...ALB, karpenterCapacityErrors: true };
/** The EventBridge event of the Reconciler's alarm on inf2's Karpenter capacity errors (cloudwatch-and-eventbridge.html). */
const alarmEvent = {
  'detail-type': 'CloudWatch Alarm State Change',
  source: 'aws.cloudwatch',
  detail: {
    alarmName: 'Routing-ReconcilerCapacityErrorsinf2-ABC',
    state: { value: 'ALARM', reasonData: '{"version":"1.0","statistic":"Sum","period":60,"recentDatapoints":[1.0],"threshold":1.0}' },
    configuration: {
      metrics: [{
        id: 'm1',
        metricStat: { metric: { namespace: 'CapacityAwareInference/Karpenter', name: 'InsufficientCapacity/prod/inf2', dimensions: {} }, period: 60, stat: 'Sum' },
        returnData: true,
      }],
    },
  },
};

test('fails when the handler drops its trigger: the alarm that woke it is a capacity error of inf2 in that run', async () => {
  resetWorld();
  process.env.RECONCILER_CONFIG = JSON.stringify(EKS);
  const now = jest.spyOn(Date, 'now').mockReturnValue(NOW_MS);
  const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    elb.on(DescribeListenersCommand).resolves(listener({ inf2: 98, g6: 2 }));
    // 800 tokens/s on inf2's 900: the cost plan holds, and with the headroom inf2 alone is short.
    serveMetrics(EKS, {
      mode: fill(0),
      classes: {
        inf2: { readyReplicas: fill(3), desiredReplicas: fill(3), servedTokensPerSecond: fill(perMinute(800)) },
        g6: { readyReplicas: fill(2), desiredReplicas: fill(2) },
      },
    });
    await handler(alarmEvent);
    const audit = log.mock.calls.map((c) => JSON.parse(c[0] as string)).find((l) => l.audit === 'routing-decision');
    expect(audit).toMatchObject({
      trigger: 'CloudWatch Alarm State Change', mode: 'capacity', reason: { code: 'enter-capacity' }, alarmEvidence: ['inf2'],
    });
  } finally {
    now.mockRestore();
    log.mockRestore();
    delete process.env.RECONCILER_CONFIG;
  }
});

test('an endpoint\'s state change event (the WritableAgain rule) runs the reconciler without alarm evidence', () => {
  // SageMaker's event as its developer guide shows it (automating-sagemaker-with-eventbridge, "SageMaker endpoint state change").
  const inService = {
    'detail-type': SAGEMAKER_ENDPOINT_STATE_CHANGE,
    source: 'aws.sagemaker',
    detail: { EndpointName: 'llm', EndpointStatus: 'IN_SERVICE' },
  };
  expect(alarmedClasses(EKS, inService as never)).toEqual([]);
  expect(alarmedClasses(EKS, alarmEvent)).toEqual(['inf2']);
});
