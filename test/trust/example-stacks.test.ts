import { App } from 'aws-cdk-lib';
import { exampleStacks } from '../../examples/app';
import { parseEcrImage } from '../../lib/core/trust/image-reference';
import { cdkJsonContext, nagFindings, nistFindings, UNIT_TEST_APP_PROPS } from '../util';

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown> }>;

// GIVEN the example app (bin/app.ts), THEN no stack both creates an ECR repository and checks an image in it: the
// repositories are empty until the stack that creates them has deployed and the images are pushed, so such a check
// fails that stack's first deployment, and its rollback deletes the repositories (docs/artifact-trust.md, "First
// deployment").
describe('the example app: each example deploys its trust before its serving', () => {
  const app = new App({ ...UNIT_TEST_APP_PROPS, context: cdkJsonContext() });
  const stacks = exampleStacks(app);
  const assembly = app.synth();
  const templates = assembly.stacks.map((s) => ({
    name: s.stackName,
    dependencies: s.dependencies.map((d) => d.id),
    resources: (s.template as { Resources: Resources }).Resources,
  }));
  const ofType = (resources: Resources, type: string) => Object.values(resources).filter((r) => r.Type === type);
  const repositoriesOf = (resources: Resources) => ofType(resources, 'AWS::ECR::Repository').map((r) => r.Properties!.RepositoryName as string);

  test('no Custom::ClassArtifactVerification sits in the stack of a repository it checks; that stack deploys first', () => {
    const checks = templates.flatMap((t) => ofType(t.resources, 'Custom::ClassArtifactVerification').map((c) => {
      const image = (c.Properties!.Record as { image: string }).image;
      return { stack: t.name, image, repository: parseEcrImage(image)!.repositoryName };
    }));
    // Both examples gate every class (SageMaker 3, EKS 5 + 2).
    expect(checks).toHaveLength(10);
    for (const check of checks) {
      const owners = templates.filter((t) => repositoriesOf(t.resources).includes(check.repository));
      expect({ ...check, owners: owners.map((o) => o.name) }).toEqual({ ...check, owners: [expect.not.stringMatching(`^${check.stack}$`)] });
      const consumer = templates.find((t) => t.name === check.stack)!;
      expect({ ...check, dependsOn: consumer.dependencies }).toEqual({ ...check, dependsOn: expect.arrayContaining([owners[0].name]) });
    }
    expect(Object.fromEntries(templates.map((t) => [t.name, repositoriesOf(t.resources).length]))).toEqual({
      SageMakerLlmTrust: 2, SageMakerLlm: 0, EksStableDiffusionTrust: 5, EksStableDiffusion: 0,
    });
  });

  test('the trust stacks are cdk-nag AwsSolutions and NIST 800-53 rev 5 clean (the serving stacks: their example tests)', () => {
    for (const stack of [stacks[0], stacks[2]]) {
      expect([stack.stackName, nagFindings(stack)]).toEqual([stack.stackName, []]);
      expect([stack.stackName, nistFindings(stack)]).toEqual([stack.stackName, []]);
    }
  });
});
