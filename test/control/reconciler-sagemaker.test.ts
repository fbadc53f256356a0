import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { LLAMA_CHAT_CONTRACT, SageMakerLlmStack } from '../../examples/sagemaker-llm/stack';
import { type Reconciler } from '../../lib/control/reconciler';
import { nagFindings, UNIT_TEST_APP_PROPS } from '../util';

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

  test('may call only this endpoint', () => {
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: Match.stringLikeRegexp('^ReconcilerRole') }],
      PolicyDocument: {
        Statement: Match.arrayWith([{
          Action: ['sagemaker:DescribeEndpoint', 'sagemaker:UpdateEndpointWeightsAndCapacities'],
          Effect: 'Allow',
          Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, Match.stringLikeRegexp('^:sagemaker:us-east-1:123456789012:endpoint/llm-llamachat-')]] },
        }]),
      },
    });
  });

  test('adds no unacknowledged cdk-nag findings to the example stack', () => {
    expect(nagFindings(reconciler)).toEqual([]);
  });
});
