import { environmentBytes } from '../../lib/core/reconciler/config';
import { type AlbRoutingFacts } from '../../lib/core/reconciler/routing-facts';
import { routingTarget } from '../../lib/core/reconciler/targets';
import { albWeightsLocation } from '../../lib/core/reconciler/targets/alb';
import { routingFactsProblems } from '../../lib/core/validation/serving';
import { reconcilerProbes } from '../../lib/core/verify/permissions';

const LISTENER = 'arn:aws:elasticloadbalancing:us-west-2:123456789012:listener/app/my-load-balancer/50dc6c495c0c9188/f2f7dc8efc522ab2';
// The ELBv2 API reference's example rule ARN (ModifyRule, DescribeRules).
const RULE = 'arn:aws:elasticloadbalancing:us-west-2:123456789012:listener-rule/app/my-load-balancer/50dc6c495c0c9188/f2f7dc8efc522ab2/9683b2d02a6cabee';
const facts = (ruleArn?: string): AlbRoutingFacts => ({
  kind: 'alb',
  listenerArn: LISTENER,
  ...(ruleArn ? { ruleArn } : {}),
  loadBalancerFullName: 'app/my-load-balancer/50dc6c495c0c9188',
  targets: [{
    class: { name: 'a', preferenceRank: 0, tokensPerSecondPerReplica: 1, safeConcurrency: 1, usdPerReplicaHour: 1, allowSensitive: true, maxReplicas: 1, instanceType: 'g5.xlarge' },
    targetGroupArn: 'arn:aws:elasticloadbalancing:us-west-2:123456789012:targetgroup/a/0123456789abcdef',
    targetGroupFullName: 'targetgroup/a/0123456789abcdef',
    namespace: 'ns', deploymentName: 'a', nodePoolName: 'a',
  }],
});

describe('where an ALB target\'s weights live', () => {
  test('the listener\'s default action without a rule; the rule\'s actions with one', () => {
    expect(albWeightsLocation(facts())).toEqual({ arn: LISTENER, read: 'DescribeListeners', write: 'ModifyListener', description: `listener ${LISTENER}` });
    expect(albWeightsLocation(facts(RULE))).toEqual({ arn: RULE, read: 'DescribeRules', write: 'ModifyRule', description: `listener rule ${RULE}` });
    expect(routingTarget(facts(RULE)).describeRoutes(facts(RULE))).toBe(`target group(s) of listener rule ${RULE}`);
  });

  test('verify probes the calls the writer makes: ModifyRule on the rule allowed, on another rule and on the listener denied', () => {
    const probes = reconcilerProbes(facts(RULE)).map((p) => `${p.expect} ${p.action} ${p.resource}`);
    expect(probes).toEqual(expect.arrayContaining([
      'allowed elasticloadbalancing:DescribeRules *',
      `allowed elasticloadbalancing:ModifyRule ${RULE}`,
      `denied elasticloadbalancing:ModifyRule ${RULE}-not-granted`,
      `denied elasticloadbalancing:ModifyListener ${LISTENER}`,
    ]));
    expect(probes.some((p) => p.includes('DescribeListeners'))).toBe(false);
  });

  test('a rule or listener ARN token is counted at the longest ARN it can resolve to (not one byte less)', () => {
    const config = { facts: facts('${Token[TOKEN.1]}'), placement: {}, policy: {}, service: 's', tokensPerRequest: 1 };
    const withRule = environmentBytes(config as never, 'C', 'S');
    const without = environmentBytes({ ...config, facts: facts() } as never, 'C', 'S');
    // The longest rule ARN: partition aws-iso-b, a 16-character region, 32-character load balancer name, 16-hex ids.
    const longest = `arn:aws-iso-b:elasticloadbalancing:${'r'.repeat(16)}:${'1'.repeat(12)}:listener-rule/app/${'n'.repeat(32)}/${'0'.repeat(16)}/${'0'.repeat(16)}/${'0'.repeat(16)}`;
    expect(withRule - without).toBe(longest.length + ',"ruleArn":""'.length);
    const listenerToken = environmentBytes({ ...config, facts: { ...facts(), listenerArn: '${Token[TOKEN.2]}' } } as never, 'C', 'S');
    const longestListener = `arn:aws-iso-b:elasticloadbalancing:${'r'.repeat(16)}:${'1'.repeat(12)}:listener/app/${'n'.repeat(32)}/${'0'.repeat(16)}/${'0'.repeat(16)}`;
    expect(listenerToken - without).toBe(longestListener.length - LISTENER.length);
    expect(RULE.length).toBeLessThan(withRule - without);
  });

  test('fails when a hand-edited configuration has an empty or non-string ruleArn', () => {
    expect(routingFactsProblems(facts(RULE), 'facts')).toEqual([]);
    for (const bad of ['', 42]) {
      expect(routingFactsProblems({ ...facts(), ruleArn: bad } as unknown as AlbRoutingFacts, 'facts')).toEqual([{
        field: 'facts.ruleArn', message: `is ${JSON.stringify(bad)}; allowed: a listener rule ARN, or absent (the listener's default action)`,
      }]);
    }
  });
});

test('fails when a hand-edited target list holds null or a target without its class: each entry named by its index as given', () => {
  const good = facts().targets[0];
  const edited = { ...facts(), targets: [null, { ...good, class: null }, good] } as unknown as AlbRoutingFacts;
  expect(routingFactsProblems(edited, 'facts').map((p) => `${p.field}: ${p.message}`)).toEqual([
    'facts.targets[0]: is null; allowed: a target group with its capacity class',
    'facts.targets[1].class: is null; allowed: the capacity class of the target group',
  ]);
});
