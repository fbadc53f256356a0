/**
 * A listener with an `authenticate-cognito` action in front of the forward action: the reconciler's ALB writer (the
 * real one, lambda/reconciler/targets/alb.ts) writes both back with the real SDK against the recording endpoint on
 * 127.0.0.1. ModifyListener with that action also needs cognito-idp:DescribeUserPoolClient on the action's user pool
 * (Elastic Load Balancing checks it with the caller's permissions; lib/eks/listener-authentication.ts): the role the
 * Reconciler synthesizes must allow it when the service names the pool in `loadBalancer.cognitoUserPools`, and only there.
 */
import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
import { Template } from 'aws-cdk-lib/assertions';
import * as cognito from 'aws-cdk-lib/aws-cognito';
import { type Action } from '@aws-sdk/client-elastic-load-balancing-v2';
import { type Clients } from '../../lambda/reconciler/targets/io';
import { client, write } from '../../lambda/reconciler/targets/alb';
import { RECONCILER_CONFIG_ENV, type ReconcilerConfig } from '../../lib/core/reconciler/config';
import { Reconciler } from '../../lib/control/reconciler';
import { EksInferenceService } from '../../lib/eks/inference-service';
import { FETCHER_IMAGE, LLAMA_CONTRACT, llamaClasses, testStack } from '../util';
import { RecordingEndpoint } from './aws-endpoint';
import { LAMBDA_LOG_DELIVERY, permissionReport, withEnvironment } from './harness';
import { ACCOUNT, REGION, resolver, roleStatements } from './iam-policy';

const POOL = `arn:aws:cognito-idp:${REGION}:${ACCOUNT}:userpool/${REGION}_AbCdEf123`;

/**
 * The reconciler of a service whose listener (or, with `onRule`, whose rule on another service's listener)
 * authenticates with POOL (named to the service or not).
 */
function reconcilerRole(named: boolean, onRule = false) {
  const { stack } = testStack();
  const pools = () => (named ? { cognitoUserPools: [cognito.UserPool.fromUserPoolArn(stack, 'Pool', POOL)] } : {});
  const own = new EksInferenceService(stack, 'Llama', {
    contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'),
    loadBalancer: onRule ? {} : pools(),
  });
  const service = onRule
    ? new EksInferenceService(stack, 'Mistral', {
      contract: { ...LLAMA_CONTRACT, name: 'mistral-chat' }, classes: llamaClasses().slice(0, 2), modelDataFetcherImage: FETCHER_IMAGE,
      cluster: own.inferenceCluster, namespace: 'mistral-chat',
      listenerRule: { listener: own.listener, priority: 10, pathPatterns: ['/mistral/*'], ...pools() },
    })
    : own;
  const reconciler = new Reconciler(stack, 'Reconciler', { serving: service });
  const template = Template.fromStack(stack).toJSON();
  const roleId = stack.getLogicalId(reconciler.role.node.defaultChild as never);
  // The configuration as deployed: the function's environment with every token resolved as the template does.
  const fn = template.Resources[stack.getLogicalId(reconciler.function.node.defaultChild as never)];
  const config = JSON.parse(String(resolver(template)(fn.Properties.Environment.Variables[RECONCILER_CONFIG_ENV]))) as ReconcilerConfig;
  return { config, statements: roleStatements(template, roleId) };
}

async function writeBack(config: ReconcilerConfig, output: Record<string, unknown> = { Listeners: [{ ListenerArn: 'x' }] }) {
  if (config.facts.kind !== 'alb') throw new Error('an ALB target');
  const read: Action[] = [
    { Type: 'authenticate-cognito', Order: 1, AuthenticateCognitoConfig: { UserPoolArn: POOL, UserPoolClientId: 'client-1', UserPoolDomain: 'login' } },
    { Type: 'forward', Order: 2, ForwardConfig: { TargetGroups: config.facts.targets.map((t) => ({ TargetGroupArn: t.targetGroupArn, Weight: 1 })) } },
  ];
  const weights = Object.fromEntries(config.facts.targets.map((t, i) => [t.class.name, i === 0 ? 100 : 0]));
  // The write reads the actions again just before it (lambda/reconciler/targets/alb.ts unchangedActions): unchanged here.
  const endpoint = new RecordingEndpoint((call) => ({
    output: call.operation === 'DescribeListeners' ? { Listeners: [{ ListenerArn: 'x', DefaultActions: read }] }
      : call.operation === 'DescribeRules' ? { Rules: [{ RuleArn: 'x', Actions: read }] } : output,
  }));
  await endpoint.start();
  try {
    await withEnvironment(endpoint.sdkEnvironment(REGION), async () => {
      await write(config, (await client()) as Clients, { kind: 'weights', weights, zeroed: [] }, read);
    });
  } finally {
    await endpoint.stop();
  }
  return endpoint.exchanges;
}

describe('reconciler permissions on a listener with an authenticate-cognito action', () => {
  test('the pool named in loadBalancer.cognitoUserPools: the write is allowed, nothing else granted', async () => {
    const { config, statements } = reconcilerRole(true);
    const exchanges = await writeBack(config);
    // The write reads the actions again just before it, then writes them.
    expect(exchanges.map((e) => `${e.call.service}:${e.call.operation}`)).toEqual(['elasticloadbalancing:DescribeListeners', 'elasticloadbalancing:ModifyListener']);
    const report = permissionReport(exchanges, statements, {
      ...LAMBDA_LOG_DELIVERY,
      'cloudwatch:GetMetricData': 'read by the handler every tick (test/permissions/reconciler.permissions.test.ts); this test writes only',
      'elasticloadbalancing:DescribeTargetHealth': 'read by the handler every tick (test/permissions/reconciler.permissions.test.ts); this test writes only',
    });
    expect(report.denied).toEqual([]);
    expect(report.unused).toEqual([]);
    expect(report.used).toEqual(['cognito-idp:DescribeUserPoolClient', 'elasticloadbalancing:DescribeListeners', 'elasticloadbalancing:ModifyListener']);
  });

  test('a rule on a shared listener, the pool named in listenerRule.cognitoUserPools: ModifyRule is allowed, nothing else granted', async () => {
    const { config, statements } = reconcilerRole(true, true);
    const exchanges = await writeBack(config, { Rules: [{ RuleArn: 'x' }] });
    expect(exchanges.map((e) => `${e.call.service}:${e.call.operation}`)).toEqual(['elasticloadbalancing:DescribeRules', 'elasticloadbalancing:ModifyRule']);
    const report = permissionReport(exchanges, statements, {
      ...LAMBDA_LOG_DELIVERY,
      'cloudwatch:GetMetricData': 'read by the handler every tick (test/permissions/reconciler.permissions.test.ts); this test writes only',
      'elasticloadbalancing:DescribeTargetHealth': 'read by the handler every tick (test/permissions/reconciler.permissions.test.ts); this test writes only',
    });
    expect(report.denied).toEqual([]);
    expect(report.unused).toEqual([]);
    expect(report.used).toEqual(['cognito-idp:DescribeUserPoolClient', 'elasticloadbalancing:DescribeRules', 'elasticloadbalancing:ModifyRule']);
  });

  test('fails when a rule\'s pool is not named: its ModifyRule is denied, and no cognito grant exists', async () => {
    const { config, statements } = reconcilerRole(false, true);
    const report = permissionReport(await writeBack(config, { Rules: [{ RuleArn: 'x' }] }), statements);
    expect(report.denied).toEqual([`cognito-idp:DescribeUserPoolClient ${POOL}`]);
    expect(JSON.stringify(statements)).not.toContain('cognito-idp');
  });

  test('fails when the pool is not named: the write-back is denied (the weights would freeze), and no cognito grant exists', async () => {
    const { config, statements } = reconcilerRole(false);
    const report = permissionReport(await writeBack(config), statements);
    expect(report.denied).toEqual([`cognito-idp:DescribeUserPoolClient ${POOL}`]);
    expect(JSON.stringify(statements)).not.toContain('cognito-idp');
  });
});
