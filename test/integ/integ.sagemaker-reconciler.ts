/**
 * Integration test (the CDK convention: @aws-cdk/integ-tests-alpha assertions, run by @aws-cdk/integ-runner in an
 * account) of the SageMaker example with its reconciler. What a deployed stack must show:
 * - the endpoint InService with each variant at the initial weight the construct set;
 * - after one reconciler run: an audit line (`"audit":"routing-decision"`) in its log group, and its decision metrics
 *   (`PolicyMode` per service) listed by CloudWatch.
 * Offline, `npm test` synthesizes this app and compares it with the committed snapshot (integ-snapshot.test.ts).
 */
import { type App, Duration, Stack } from 'aws-cdk-lib';
import { ExpectedResult, IntegTest } from '@aws-cdk/integ-tests-alpha';
import { SageMakerLlmStack } from '../../examples/sagemaker-llm/stack';
import { Dim, METRIC_NAMESPACE, Metrics } from '../../lib/core/metrics/contract';
import { integApp, type IntegAppOptions, integEnv } from './integ-app';

/** The integration app; options for the offline snapshot check. */
export function sageMakerReconcilerApp(options?: IntegAppOptions): App {
  const app = integApp(options);
  const env = integEnv();
  const stack = new SageMakerLlmStack(app, 'IntegSageMakerReconciler', { env });
  // The assertions run in the same account and region as the stack they read.
  const integ = new IntegTest(app, 'SageMakerReconciler', {
    testCases: [stack], diffAssets: true, assertionStack: new Stack(app, 'IntegSageMakerReconcilerAssertions', { env }),
    // The committed snapshot holds templates for the offline check, not a deployable assembly (no assets): integ-runner
    // must not deploy it first (its update workflow).
    stackUpdateWorkflow: false,
  });

  // The initial weights as the template sets them (the construct renders the variants lazily).
  const rendered = stack.resolve(stack.endpoint.endpointConfig.productionVariants) as Array<{ VariantName: string; InitialVariantWeight: number }>;
  const variants = rendered.map((v) => ExpectedResult.objectLike({ VariantName: v.VariantName, CurrentWeight: v.InitialVariantWeight }).result);
  integ.assertions.awsApiCall('SageMaker', 'describeEndpoint', { EndpointName: stack.endpoint.endpointName })
    .expect(ExpectedResult.objectLike({ EndpointStatus: 'InService', ProductionVariants: variants }))
    .waitForAssertions({ totalTimeout: Duration.minutes(40), interval: Duration.minutes(1) });

  const run = integ.assertions.invokeFunction({ functionName: stack.reconciler.function.functionName });
  run.next(integ.assertions.awsApiCall('CloudWatchLogs', 'filterLogEvents', {
    logGroupName: stack.reconciler.logGroup.logGroupName,
    filterPattern: '{ $.audit = "routing-decision" }',
  }).assertAtPath('events.0.eventId', ExpectedResult.stringLikeRegexp('.+')).waitForAssertions({ totalTimeout: Duration.minutes(5) }));
  run.next(integ.assertions.awsApiCall('CloudWatch', 'listMetrics', {
    Namespace: METRIC_NAMESPACE,
    MetricName: Metrics.policyMode.name,
    Dimensions: [{ Name: Dim.SERVICE, Value: stack.endpoint.contract.name }],
  }).assertAtPath('Metrics.0.MetricName', ExpectedResult.exact(Metrics.policyMode.name))
    // New metrics take up to 15 minutes to appear in ListMetrics.
    .waitForAssertions({ totalTimeout: Duration.minutes(20), interval: Duration.minutes(1) }));
  return app;
}

if (require.main === module) sageMakerReconcilerApp().synth();
