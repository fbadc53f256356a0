/**
 * Integration test (the CDK convention: @aws-cdk/integ-tests-alpha assertions, run by @aws-cdk/integ-runner in an
 * account) of the SageMaker example's serving stack with its reconciler, gated on the example's trust stack.
 *
 * Before it runs (README "Integration tests"): the example's trust stack `SageMakerLlmTrust` is deployed from the example
 * app, the example's images are pushed to its repositories (signed on push) and the model data signed, and the example
 * names those digests and versions. This app declares the same trust stack (same name, same constructs, so the exports
 * the test stack imports are that stack's) but never deploys or destroys it: deploy and destroy run `exclusively`, on
 * the test stack and the assertion stack only (integ-runner's default selection expands to the stacks a test stack
 * depends on, for both: aws/aws-cdk-cli@integ-runner@v2.204.5 packages/@aws-cdk/integ-runner/lib/engines/toolkit-lib.ts:312-318).
 * A gate over repositories created in the same deployment would find them empty and fail (docs/artifact-trust.md,
 * "First deployment"). Without the trust stack the deployment fails at once, on the imports.
 *
 * What a deployed stack must show:
 * - the endpoint InService with each variant the construct declared (by name; not its weight: the reconciler runs on a
 *   one-minute schedule from stack creation on and may have rewritten `CurrentWeight` before the assertion reads it);
 * - after one reconciler run: an audit line (`"audit":"routing-decision"`) in its log group, and its decision metrics
 *   (`PolicyMode` per service) listed by CloudWatch.
 * Offline, `npm test` synthesizes this app and compares it with the committed snapshot (integ-snapshot.test.ts).
 */
import { type App, Duration, Stack } from 'aws-cdk-lib';
import { ExpectedResult, IntegTest, Match } from '@aws-cdk/integ-tests-alpha';
import { SageMakerLlmStack, SageMakerLlmTrustStack } from '../../examples/sagemaker-llm/stack';
import { Dim, METRIC_NAMESPACE, Metrics } from '../../lib/core/metrics/contract';
import { integApp, type IntegAppOptions, integEnv } from './integ-app';

/** The integration app; options for the offline snapshot check. */
export function sageMakerReconcilerApp(options?: IntegAppOptions): App {
  const app = integApp(options);
  const env = integEnv();
  // The example app's trust stack, by its name there (examples/app.ts), so that the imports resolve to its exports.
  const trust = new SageMakerLlmTrustStack(app, 'SageMakerLlmTrust', { env });
  const stack = new SageMakerLlmStack(app, 'IntegSageMakerReconciler', { env, trust: trust.trust });
  // The assertions run in the same account and region as the stack they read.
  const integ = new IntegTest(app, 'SageMakerReconciler', {
    testCases: [stack], diffAssets: true, assertionStack: new Stack(app, 'IntegSageMakerReconcilerAssertions', { env }),
    // The committed snapshot holds templates for the offline check, not a deployable assembly (no assets): integ-runner
    // must not deploy it first (its update workflow).
    stackUpdateWorkflow: false,
    // The trust stack is the user's, deployed beforehand: neither deployed nor destroyed here.
    cdkCommandOptions: { deploy: { args: { exclusively: true } }, destroy: { args: { exclusively: true } } },
  });

  // One call per variant: Match.arrayWith keeps the order of its elements, and DescribeEndpoint does not promise the
  // config's order. Nested matchers must be `Match.*` (encoded objects the handler decodes), never
  // `ExpectedResult.*(...).result`, which is a JSON string and would be compared as a literal string
  // (@aws-cdk/integ-tests-alpha 2.245.0-alpha.0 lib/assertions/common.js:95-101 vs lib/assertions/match.js:15-25).
  for (const name of variantNames(stack)) {
    integ.assertions.awsApiCall('SageMaker', 'describeEndpoint', { EndpointName: stack.endpoint.endpointName })
      .expect(ExpectedResult.objectLike({
        EndpointStatus: 'InService',
        ProductionVariants: Match.arrayWith([Match.objectLike({ VariantName: name })]),
      }))
      .waitForAssertions({ totalTimeout: Duration.minutes(40), interval: Duration.minutes(1) });
  }

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

/**
 * The variant names the stack's endpoint config declares. `stack.resolve` of the L1's `productionVariants` gives its
 * camelCase props (`variantName`), not the template's PascalCase keys; a name that is not a plain string fails here
 * instead of producing a matcher that checks nothing.
 */
export function variantNames(stack: SageMakerLlmStack): string[] {
  const rendered = stack.resolve(stack.endpoint.endpointConfig.productionVariants) as unknown;
  if (!Array.isArray(rendered) || rendered.length === 0) throw new Error('the endpoint config declares no production variants');
  return rendered.map((v: { variantName?: unknown }) => {
    if (typeof v.variantName !== 'string' || v.variantName === '') throw new Error(`a production variant without a literal name: ${JSON.stringify(v)}`);
    return v.variantName;
  });
}

if (require.main === module) sageMakerReconcilerApp().synth();
