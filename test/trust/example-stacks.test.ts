import { App } from 'aws-cdk-lib';
import { exampleStacks } from '../../examples/app';
import { parseEcrImage } from '../../lib/core/trust/image-reference';
import { cdkJsonContext, nagFindings, nistFindings, UNIT_TEST_APP_PROPS } from '../util';

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown> }>;
type Outputs = Record<string, { Value: unknown }>;

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
    where: `${s.environment.account}/${s.environment.region}`,
    dependencies: s.dependencies.map((d) => d.id),
    resources: (s.template as { Resources: Resources }).Resources,
    outputs: (s.template as { Outputs?: Outputs }).Outputs ?? {},
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

  // GIVEN both examples in one account and Region, THEN the registry has one signing configuration, and it signs every
  // repository of each example with that example's own profile, the one its checks require (a second configuration
  // would replace the first's rules, and deleting either stack would delete it for both).
  test('exactly one AWS::ECR::SigningConfiguration per account and Region, signing each repository with its trust\'s profile', () => {
    const configurations = templates.flatMap((t) => ofType(t.resources, 'AWS::ECR::SigningConfiguration').map((c) => ({ stack: t.name, where: t.where, c })));
    expect(configurations.map(({ stack, where }) => [stack, where])).toEqual([['SageMakerLlmTrust', '111111111111/us-east-1']]);
    expect(new Set(templates.map((t) => t.where))).toEqual(new Set(['111111111111/us-east-1']));
    // A rule's profile, as `<stack>/<logical id>`: this stack's attribute or another stack's output of one.
    const profileOf = (stack: string, arn: Record<string, unknown>): string => {
      if ('Fn::GetAtt' in arn) return `${stack}/${(arn['Fn::GetAtt'] as string[])[0]}`;
      const { StackName, OutputName } = arn['Fn::GetStackOutput'] as { StackName: string; OutputName: string };
      const source = templates.find((t) => t.name === StackName)!;
      return profileOf(StackName, source.outputs[OutputName].Value as Record<string, unknown>);
    };
    const signedBy = new Map<string, string>();
    for (const { stack, c } of configurations) {
      for (const rule of c.Properties!.Rules as Array<{ SigningProfileArn: Record<string, unknown>; RepositoryFilters: Array<{ Filter: string }> }>) {
        for (const f of rule.RepositoryFilters) signedBy.set(f.Filter, profileOf(stack, rule.SigningProfileArn));
      }
    }
    const owned = templates.flatMap((t) => repositoriesOf(t.resources).map((repository) => {
      const [profile] = Object.entries(t.resources).filter(([, r]) => r.Type === 'AWS::Signer::SigningProfile').map(([id]) => `${t.name}/${id}`);
      return { repository, profile };
    }));
    expect(owned).toHaveLength(7);
    for (const { repository, profile } of owned) {
      expect({ repository, signedBy: signedBy.get(repository) }).toEqual({ repository, signedBy: profile });
    }
    // The managing trust reads the other's profile, so it deploys after it.
    expect(templates.find((t) => t.name === 'SageMakerLlmTrust')!.dependencies).toContain('EksStableDiffusionTrust');
    expect(stacks.map((s) => s.stackName)).toEqual(['EksStableDiffusionTrust', 'SageMakerLlmTrust', 'SageMakerLlm', 'EksStableDiffusion']);
  });

  test('the trust stacks are cdk-nag AwsSolutions and NIST 800-53 rev 5 clean (the serving stacks: their example tests)', () => {
    for (const stack of stacks.filter((s) => s.stackName.endsWith('Trust'))) {
      expect([stack.stackName, nagFindings(stack)]).toEqual([stack.stackName, []]);
      expect([stack.stackName, nistFindings(stack)]).toEqual([stack.stackName, []]);
    }
  });
});
