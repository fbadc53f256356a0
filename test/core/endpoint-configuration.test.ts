/**
 * The endpoint configuration the SageMaker routing facts describe (review R108): checked like every hand-editable field
 * of the facts, and counted at its longest resolved name in the Lambda environment while it is a token.
 */
import { environmentBytes } from '../../lib/core/reconciler/config';
import { type SageMakerRoutingFacts } from '../../lib/core/reconciler/routing-facts';
import { routingFactsProblems } from '../../lib/core/validation/serving';

const facts = (endpointConfigName?: unknown): SageMakerRoutingFacts => ({
  kind: 'sagemaker',
  endpointName: 'llm',
  endpointArn: 'arn:aws:sagemaker:us-east-1:123456789012:endpoint/llm',
  ...(endpointConfigName === undefined ? {} : { endpointConfigName: endpointConfigName as string }),
  variants: [{
    variantName: 'preferred',
    classes: [{
      name: 'inf2', preferenceRank: 0, tokensPerSecondPerReplica: 300, safeConcurrency: 8, usdPerReplicaHour: 0.76, allowSensitive: true,
      maxReplicas: 10, instanceType: 'ml.inf2.xlarge',
    }],
  }],
});

describe('SageMakerRoutingFacts.endpointConfigName', () => {
  test('fails when a hand-edited configuration names no SageMaker endpoint configuration name', () => {
    const allowed = "allowed: a SageMaker name: 1 to 63 letters, digits and '-', starting and ending with a letter or digit "
      + "(the SageMaker endpoint configuration the facts describe, compared with DescribeEndpoint's EndpointConfigName)";
    // Absent, a CloudFormation-generated name (63 characters at most), or a token carried to deploy time.
    for (const ok of [undefined, 'ConfigB1A2C3D4-AbCdEfGhIjKl', 'c'.repeat(63), '${Token[TOKEN.7]}']) {
      expect(routingFactsProblems(facts(ok), 'facts')).toEqual([]);
    }
    expect(routingFactsProblems(facts('c'.repeat(64)), 'facts')).toEqual([
      { field: 'facts.endpointConfigName', message: `is '${'c'.repeat(64)}' (64 characters); ${allowed}` },
    ]);
    for (const [bad, shown] of [['', "'' (empty)"], ['config_2', "'config_2'"], ['-config', "'-config'"], [42, '42']] as const) {
      expect(routingFactsProblems(facts(bad), 'facts')).toEqual([{ field: 'facts.endpointConfigName', message: `is ${shown}; ${allowed}` }]);
    }
  });

  test('fails when its token is counted as an unknown field (256 bytes) instead of the longest name it resolves to (63)', () => {
    const config = { facts: facts(), placement: {}, policy: {}, service: 's', tokensPerRequest: 1 };
    const without = environmentBytes(config as never, 'C', 'S');
    const token = environmentBytes({ ...config, facts: facts('${Token[TOKEN.7]}') } as never, 'C', 'S');
    expect(token - without).toBe(',"endpointConfigName":""'.length + 63);
  });
});
