/**
 * Integration test (@aws-cdk/integ-tests-alpha, run by @aws-cdk/integ-runner in an account) of the trust gate: a
 * class whose image carries no signature by the approved profile must not deploy. The test stack gates such a class
 * (an ArtifactTrust repository, the image a digest nothing was pushed or signed under) and the test case expects its
 * deployment to fail with the verifier's refusal (`cdkCommandOptions.deploy.expectError` and `expectedMessage`, a
 * regular expression integ-runner matches against the deploy error: aws/aws-cdk-cli@integ-runner@v2.204.5
 * packages/@aws-cdk/integ-runner/lib/runner/integ-test-runner.ts:657-661, 706-717).
 * Not covered here: a signed image passing the gate (README "Integration tests" says why and how to check it by hand).
 * Offline, `npm test` synthesizes this app and compares it with the committed snapshot (integ-snapshot.test.ts).
 */
import { type App, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { IntegTest } from '@aws-cdk/integ-tests-alpha';
import { CHAT_CONTRACT, chatClasses } from '../../examples/eks-stable-diffusion/chat';
import { defineCapacityClasses } from '../../lib/core/service/checks';
import { ArtifactTrust } from '../../lib/trust/artifact-trust';
import { integApp, type IntegAppOptions, integEnv } from './integ-app';

const REPOSITORY = 'cai-integ/trust-gate';
/** The verifier's FAILED reason starts with this (lambda/artifact-verifier/index.ts). */
export const REFUSAL = "class 'unsigned' artifacts rejected";

export function trustGateApp(options?: IntegAppOptions): App {
  const app = integApp(options);
  const env = integEnv();
  const stack = new Stack(app, 'IntegTrustGateUnsigned', { env });
  const trust = new ArtifactTrust(stack, 'Trust', {
    repositoryNames: [REPOSITORY],
    // Registry-wide: a test must not replace the account's signing configuration (refusing needs none).
    manageRegistrySigningConfiguration: false,
    // The repository stays empty and the failed create rolls back: nothing may be retained for the next run.
    removalPolicy: RemovalPolicy.DESTROY,
  });
  const [spec] = chatClasses(stack.account, stack.region);
  const [unsigned] = defineCapacityClasses([{
    ...spec,
    name: 'unsigned',
    artifact: { image: `${stack.account}.dkr.ecr.${stack.region}.amazonaws.com/${REPOSITORY}@sha256:${'0'.repeat(64)}` },
  }], { contract: CHAT_CONTRACT });
  trust.gateFor(stack, unsigned);

  // The deployment under test must fail, so no assertion can run after it: the assertion stack integ-tests-alpha
  // requires stays empty, which the toolkit skips ("stack has no resources, skipping deployment.":
  // aws/aws-cdk-cli@integ-runner@v2.204.5 packages/@aws-cdk/toolkit-lib/lib/toolkit/toolkit.ts:852-858).
  const assertionStack = new Stack(app, 'IntegTrustGateUnsignedAssertions', { env });
  Validations.of(assertionStack).acknowledge({
    id: 'CloudFormation-Validate::F0001',
    reason: 'Empty on purpose: the deployment under test is expected to fail, so there is nothing to assert after it.',
  });
  new IntegTest(app, 'TrustGate', {
    testCases: [stack],
    assertionStack,
    stackUpdateWorkflow: false,
    cdkCommandOptions: { deploy: { expectError: true, expectedMessage: REFUSAL } },
  });
  return app;
}

if (require.main === module) trustGateApp().synth();
