import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
import { App, NestedStack, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { LLAMA_CHAT_CONTRACT, SageMakerLlmStack } from '../../examples/sagemaker-llm/stack';
import { InferenceObservability } from '../../lib/control/observability';
import { Reconciler } from '../../lib/control/reconciler';
import { LLAMA_CONTRACT, nagFindings, UNIT_TEST_APP_PROPS } from '../util';
import { a10gOn, endpointStack, smClasses } from '../sagemaker/fixtures';

// GIVEN the SageMaker example, whose reconciler is fed by its endpoint's routing facts, THEN the reconciler routes its
// variants, with the endpoint's deploy-time name and ARN resolved by CloudFormation.
describe('Reconciler fed by SageMakerCapacityEndpoint.routingFacts()', () => {
  let stack: SageMakerLlmStack;
  let template: Template;
  let reconciler: Reconciler;
  beforeAll(() => {
    const app = new App(UNIT_TEST_APP_PROPS);
    stack = new SageMakerLlmStack(app, 'Llm', { env: { account: '123456789012', region: 'us-east-1' } });
    reconciler = stack.reconciler;
    expect(reconciler.config.service).toBe(LLAMA_CHAT_CONTRACT.name);
    template = Template.fromStack(stack);
  });

  test('routes the endpoint\'s variants, with its name and ARN resolved at deploy time', () => {
    const fn = template.findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.handler', ReservedConcurrentExecutions: 1 } });
    const env = Object.values(fn)[0].Properties.Environment.Variables.RECONCILER_CONFIG;
    // Tokens become an Fn::Join; the literal parts carry the variants and their pools in priority order.
    expect(env['Fn::Join']).toBeDefined();
    const literal = JSON.stringify(env);
    expect(literal).toContain('\\"variantName\\":\\"preferred\\"');
    expect(literal).toMatch(/l40s.*a10g.*inf2/);
    expect(reconciler.config.facts.kind).toBe('sagemaker');
  });

  test('fails when the function does not depend on the endpoint configuration its facts describe (R108)', () => {
    // Fn::GetAtt of the configuration: CloudFormation updates the function only once a replacing configuration exists,
    // and the run compares the name with the one the endpoint runs.
    const configId = stack.getLogicalId(stack.endpoint.endpointConfig);
    const fn = template.findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.handler', ReservedConcurrentExecutions: 1 } });
    const env = Object.values(fn)[0].Properties.Environment.Variables.RECONCILER_CONFIG as { 'Fn::Join': [string, unknown[]] };
    const parts = env['Fn::Join'][1];
    const at = parts.findIndex((p) => JSON.stringify(p) === JSON.stringify({ 'Fn::GetAtt': [configId, 'EndpointConfigName'] }));
    expect(at).toBeGreaterThan(0);
    expect(String(parts[at - 1])).toMatch(/"endpointConfigName":"$/);
    expect(Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('reconciler-cross-stack-config'))).toEqual([]);
  });

  test('may call only this endpoint', () => {
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: Match.stringLikeRegexp('^ReconcilerRole') }],
      PolicyDocument: {
        Statement: Match.arrayWith([{
          Action: ['sagemaker:DescribeEndpoint', 'sagemaker:UpdateEndpointWeightsAndCapacities'],
          Effect: 'Allow',
          // The ARN SageMaker writes (the name lower-cased) and the name as written (SageMakerCapacityEndpoint.endpointArns).
          Resource: [
            { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, Match.stringLikeRegexp('^:sagemaker:us-east-1:123456789012:endpoint/llm-llamachat-[a-z0-9-]+$')]] },
            { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, Match.stringLikeRegexp('^:sagemaker:us-east-1:123456789012:endpoint/Llm-LlamaChat-')]] },
          ],
        }]),
      },
    });
  });

  test('adds no unacknowledged cdk-nag findings to the example stack', () => {
    expect(nagFindings(reconciler)).toEqual([]);
  });
});

// A Reconciler in another stack would import the configuration's name, which changes with every replacement, and
// CloudFormation refuses to modify an export another stack imports: the name is left out there, with a warning.
describe('Reconciler in another stack than its SageMakerCapacityEndpoint (R108)', () => {
  const warnings = (stack: Stack) => Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('reconciler-cross-stack-config'));

  test('fails when every configuration replacement would be refused: no export of the name, a warning naming both stacks', () => {
    const { app, stack, endpoint } = endpointStack();
    const control = new Stack(app, 'Control', { env: { account: '123456789012', region: 'us-east-1' } });
    const reconciler = new Reconciler(control, 'Reconciler', { serving: endpoint });
    if (reconciler.config.facts.kind !== 'sagemaker') throw new Error('not SageMaker');
    expect(reconciler.config.facts.endpointConfigName).toBeUndefined();
    expect(JSON.stringify(Template.fromStack(control).toJSON())).not.toContain('EndpointConfigName');
    expect(JSON.stringify(Template.fromStack(stack).toJSON().Outputs ?? {})).not.toContain('EndpointConfigName');
    const message = /endpoint configuration is in stack Test and this Reconciler in Control: .*Define the Reconciler in the endpoint's stack/;
    expect(warnings(control)).toEqual([expect.objectContaining({ id: '/Control/Reconciler', entry: expect.objectContaining({ data: expect.stringMatching(message) }) })]);
  });

  test('fails when a Reconciler in a nested stack of the endpoint\'s loses the check: a nested stack takes it as a parameter, no export', () => {
    const { stack, endpoint } = endpointStack();
    const reconciler = new Reconciler(new NestedStack(stack, 'Control'), 'Reconciler', { serving: endpoint });
    if (reconciler.config.facts.kind !== 'sagemaker') throw new Error('not SageMaker');
    expect(reconciler.config.facts.endpointConfigName).toBe(endpoint.endpointConfig.attrEndpointConfigName);
    expect(warnings(stack)).toEqual([]);
    // The parent passes the name to the nested stack as a parameter: updated with every replacement, nothing exported.
    const parent = Template.fromStack(stack);
    expect(parent.toJSON().Outputs ?? {}).toEqual({});
    const nested = Object.values(parent.findResources('AWS::CloudFormation::Stack'))[0].Properties.Parameters as Record<string, unknown>;
    expect(Object.values(nested)).toContainEqual({ 'Fn::GetAtt': [stack.getLogicalId(endpoint.endpointConfig), 'EndpointConfigName'] });
  });
});

// The Reconciler and the observability constructs read the endpoint's variants once, when they are created: a class or
// variant added later was deployed but never routed, charted or alarmed (review R231).
describe('SageMakerCapacityEndpoint read by a Reconciler and InferenceObservability', () => {
  test('fails at addClass() and addVariant() after they are created, naming the endpoint; the endpoint stays as they read it', () => {
    const { stack, endpoint } = endpointStack();
    const reconciler = new Reconciler(stack, 'Reconciler', { serving: endpoint });
    const obs = new InferenceObservability(stack, 'Obs', { serving: endpoint });
    expect(() => endpoint.addClass(a10gOn('l4', 'ml.g6.2xlarge'))).toThrow(
      "SageMakerCapacityEndpoint 'Test/Llama' is invalid (1 problem):\n  - addClass(): got class 'l4' after the endpoint was read; allowed: every class "
      + 'and variant added before the endpoint is first read (servingDescription(), routingFacts()): before the Reconciler, InferenceObservability, '
      + 'InferenceAlarms or InferenceDashboard on it is created',
    );
    expect(() => endpoint.addVariant({ name: 'third', classes: ['l4'] })).toThrow("addVariant(): got variant 'third' after the endpoint was read");
    // Nothing was added: what synthesizes is what the reconciler configuration and the alarms know.
    const template = Template.fromStack(stack);
    const config = Object.values(template.findResources('AWS::SageMaker::EndpointConfig'))[0];
    expect(config.Properties.ProductionVariants.map((v: { VariantName: string }) => v.VariantName)).toEqual(['preferred', 'fallback']);
    expect(reconciler.config.facts.kind === 'sagemaker' && reconciler.config.facts.variants.map((v) => v.variantName)).toEqual(['preferred', 'fallback']);
    expect(obs.alarms.replicaShortageAlarms).toHaveLength(2);
    expect(endpoint.modelFor('l4')).toBeUndefined();
  });

  test('fails at the endpoint, not the Reconciler, when a variant is named after another class (docs/validation.md, "When input is checked")', () => {
    const [l40s, a10g, inf2] = smClasses();
    const variants = [{ name: 'inf2', classes: ['l40s', 'a10g'] }, { name: 'fallback', classes: ['inf2'] }];
    expect(() => endpointStack({ classes: [l40s, a10g, inf2], variants })).toThrow(
      "SageMakerCapacityEndpoint 'Test/Llama' is invalid (1 problem):\n  - variants['inf2'].name: 'inf2' is the name of a capacity class it is not exactly",
    );
  });
});

// The contract's headroom sets every autoscaler's target (envelope / (1 + headroom)); the Reconciler sizes its replica
// floors and capacity writes at that target, so it takes the same headroom (review R251).
describe('Reconciler headroom: the serving contract\'s', () => {
  const contract = { ...LLAMA_CONTRACT, headroom: 0.5 };

  test('follows the contract\'s headroom when the policy sets none', () => {
    const { stack, endpoint } = endpointStack({ contract });
    const reconciler = new Reconciler(stack, 'Reconciler', { serving: endpoint });
    expect(endpoint.servingDescription().headroom).toBe(0.5);
    expect(reconciler.config.policy.headroom).toBe(0.5);
    const { stack: byDefault, endpoint: plain } = endpointStack();
    expect(new Reconciler(byDefault, 'Reconciler', { serving: plain }).config.policy.headroom).toBe(plain.capacityPlan.headroom);
  });

  test('fails at synth when the policy sets another headroom, naming both values and what is allowed', () => {
    const { stack, endpoint } = endpointStack({ contract });
    expect(() => new Reconciler(stack, 'Reconciler', { serving: endpoint, policy: { headroom: 0.2 } })).toThrow(
      "Reconciler 'Test/Reconciler' is invalid (1 problem):\n  - policy.headroom: is 0.2, and 'Test/Llama' plans with headroom 0.5: its "
      + 'autoscalers target envelope / 1.5 per replica, and replica floors and capacity writes would be sized at envelope / 1.2; allowed: '
      + "the serving's headroom (its contract's), or unset to follow it; to plan with another margin, set the contract's headroom",
    );
  });

  test('accepts the contract\'s own value set again', () => {
    const { stack, endpoint } = endpointStack({ contract });
    expect(new Reconciler(stack, 'Reconciler', { serving: endpoint, policy: { headroom: 0.5 } }).config.policy.headroom).toBe(0.5);
  });

  // It passed before R251 with any value: the option says what to set instead, and the CHANGELOG how to upgrade (review R252).
  test('policy.headroom is deprecated in favour of the contract\'s, with an upgrade note', () => {
    const file = join(__dirname, '../../lib/control/reconciler.ts');
    const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
    const options = sf.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'RoutingPolicyOptions')!;
    const member = options.members.find((m) => m.name !== undefined && ts.isIdentifier(m.name) && m.name.text === 'headroom')!;
    expect(ts.getTextOfJSDocComment(ts.getJSDocDeprecatedTag(member)?.comment)).toMatch(/^Set the contract's `headroom` instead/);
    const changelog = readFileSync(join(__dirname, '../../CHANGELOG.md'), 'utf8');
    expect(changelog).toMatch(/\*\*Upgrade note:\*\* a Reconciler whose `policy\.headroom` differs from its serving's headroom/);
  });
});
