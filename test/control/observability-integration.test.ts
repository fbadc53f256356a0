import { type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { InferenceObservability, Reconciler } from '../../lib/control';
import { emfRecord, Metrics, serviceDimensions } from '../../lib/core';
import { endpointStack } from '../sagemaker/fixtures';
import { nagFindings } from '../util';

/**
 * The observability constructs on the real SageMaker endpoint's routing facts, wired to the real reconciler: the
 * capacity alarms trigger it at once.
 */
describe('InferenceObservability with SageMakerCapacityEndpoint and Reconciler', () => {
  let stack: Stack;
  let template: Template;
  let obs: InferenceObservability;
  let reconciler: Reconciler;

  beforeAll(() => {
    const built = endpointStack();
    stack = built.stack;
    const facts = built.endpoint.routingFacts();
    obs = new InferenceObservability(stack, 'Observability', { service: 'llama3-chat', facts });
    reconciler = new Reconciler(stack, 'Reconciler', {
      service: 'llama3-chat',
      facts,
      tokensPerRequest: 250,
      capacityAlarms: obs.capacityAlarms,
    });
    template = Template.fromStack(stack);
  });

  test('one replica shortage alarm per variant, and the preferred class is the rank-0 pool', () => {
    const facts = obs.alarms.metrics.facts;
    expect(facts.kind).toBe('sagemaker');
    expect(obs.alarms.metrics.routes.map((r) => r.name)).toEqual(['preferred', 'fallback']);
    expect(obs.alarms.replicaShortageAlarms).toHaveLength(2);
    expect(obs.alarms.metrics.preferred.map((c) => c.facts.name)).toEqual(['l40s']);
  });

  test('the reconciler runs when a capacity alarm changes state', () => {
    expect(reconciler.alarmRule).toBeDefined();
    const rules = Object.values(template.findResources('AWS::Events::Rule'))
      .filter((r) => r.Properties.EventPattern?.['detail-type']?.includes('CloudWatch Alarm State Change'));
    expect(rules).toHaveLength(1);
    const resources = stack.resolve(rules[0].Properties.EventPattern.resources) as unknown[];
    const arns = obs.capacityAlarms.map((a) => stack.resolve(a.alarmArn));
    expect(resources).toEqual(expect.arrayContaining(arns));
  });

  test('the heartbeat reads the Service rollup of Decisions, which an emfRecord of a decision publishes', () => {
    const rec = emfRecord(0, { ...serviceDimensions('llama3-chat'), Reason: 'cost-plan' }, [{ spec: Metrics.decisions, value: 1 }]);
    const sets = (rec._aws as { CloudWatchMetrics: Array<{ Dimensions: string[][] }> }).CloudWatchMetrics[0].Dimensions;
    expect(sets).toContainEqual(['Service']);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'Decisions',
      Dimensions: [{ Name: 'Service', Value: 'llama3-chat' }],
      TreatMissingData: 'breaching',
    });
  });

  test('the whole stack is cdk-nag clean', () => {
    expect(nagFindings(stack)).toEqual([]);
  });
});
