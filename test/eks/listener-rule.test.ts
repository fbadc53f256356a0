import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
import { Duration, SecretValue, type Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { type ServiceContract } from '../../lib/core/service/contract';
import { ConstructValidationError } from '../../lib/core/validation/error';
import { EksInferenceCluster } from '../../lib/eks/cluster';
import { EksInferenceService, type EksInferenceServiceProps } from '../../lib/eks/inference-service';
import { loadBalancerFullNameOf } from '../../lib/eks/routing';
import { FETCHER_IMAGE, LLAMA_CONTRACT, llamaClasses, nagFindings, testStack } from '../util';

const MISTRAL: ServiceContract = { ...LLAMA_CONTRACT, name: 'mistral-chat', peakRequestsPerSecond: 8 };

/** A cluster, one service with its own ALB, and a second whose rule sits on the first one's listener. */
function shared(rule: Partial<NonNullable<EksInferenceServiceProps['listenerRule']>> = {}, extra: Partial<EksInferenceServiceProps> = {}) {
  const { stack } = testStack();
  const cluster = new EksInferenceCluster(stack, 'Cluster', { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
  const llama = new EksInferenceService(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: llamaClasses(), cluster, modelDataFetcherImage: FETCHER_IMAGE });
  const make = () => new EksInferenceService(stack, 'Mistral', {
    contract: MISTRAL,
    classes: llamaClasses().slice(0, 2),
    cluster,
    modelDataFetcherImage: FETCHER_IMAGE,
    listenerRule: { listener: llama.listener, priority: 10, pathPatterns: ['/mistral/*'], ...rule },
    ...extra,
  });
  return { stack, cluster, llama, make };
}

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConstructValidationError) return e.problems.map((p) => `${p.field}: ${p.message}`);
    throw e;
  }
  throw new Error('no ConstructValidationError');
}

describe('a service routed by a rule on a shared listener', () => {
  let stack: Stack;
  let llama: EksInferenceService;
  let mistral: EksInferenceService;
  let template: Template;

  beforeAll(() => {
    const s = shared({ hostHeaders: ['chat.example.com'] }, { classOptions: { l40s: { port: 9000 } } });
    ({ stack, llama } = s);
    mistral = s.make();
    mistral.enableReplicaFloors();
    template = Template.fromStack(stack);
  });

  test('one ALB and one listener; the rule forwards to the service\'s target groups with the initial weights', () => {
    template.resourceCountIs('AWS::ElasticLoadBalancingV2::LoadBalancer', 1);
    template.resourceCountIs('AWS::ElasticLoadBalancingV2::Listener', 1);
    template.resourceCountIs('AWS::ElasticLoadBalancingV2::ListenerRule', 1);
    expect(mistral.loadBalancer).toBeUndefined();
    expect(mistral.listener).toBe(llama.listener);
    const rule = Object.values(template.findResources('AWS::ElasticLoadBalancingV2::ListenerRule'))[0].Properties;
    expect(rule.Priority).toBe(10);
    expect(stack.resolve(rule.ListenerArn)).toEqual(stack.resolve(llama.listener.listenerArn));
    expect(rule.Conditions).toEqual([
      { Field: 'host-header', HostHeaderConfig: { Values: ['chat.example.com'] } },
      { Field: 'path-pattern', PathPatternConfig: { Values: ['/mistral/*'] } },
    ]);
    const groups = rule.Actions[0].ForwardConfig.TargetGroups as Array<{ TargetGroupArn: unknown; Weight: number }>;
    expect(groups.map((g) => g.Weight)).toEqual(mistral.units.map((u) => mistral.initialWeights[u.cls.name]));
    expect(groups.map((g) => stack.resolve(g.TargetGroupArn))).toEqual(mistral.units.map((u) => stack.resolve(u.targetGroup.targetGroupArn)));
  });

  test('routing facts name the rule; the load balancer dimension is the shared ALB\'s (from the listener ARN)', () => {
    const facts = mistral.routingFacts();
    expect(stack.resolve(facts.ruleArn)).toEqual({ Ref: expect.stringMatching(/^MistralListenerRule/) });
    expect(stack.resolve(facts.listenerArn)).toEqual(stack.resolve(llama.listener.listenerArn));
    // KEDA's load trigger and the reconciler's ALB metrics read the shared ALB's LoadBalancer dimension.
    const trigger = mistral.units[0].objects.scaledObject.spec.triggers[0];
    expect(JSON.stringify(stack.resolve(trigger.metadata))).toContain('Fn::Split');
    expect(loadBalancerFullNameOf('arn:aws:elasticloadbalancing:us-west-2:123456789012:listener/app/my-lb/50dc6c495c0c9188/f2f7dc8efc522ab2'))
      .toBe('app/my-lb/50dc6c495c0c9188');
  });

  test('grantRouting: DescribeRules and DescribeTargetHealth (no resource type) and ModifyRule on its rule only, never ModifyListener', () => {
    const { stack, make } = shared();
    const mistral = make();
    const role = new iam.Role(stack, 'Grantee', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    mistral.grantRouting(role);
    const policy = stack.resolve((role.node.findChild('DefaultPolicy') as iam.Policy).document.toJSON()) as { Statement: Array<{ Action: string | string[]; Resource: unknown }> };
    expect(policy.Statement).toEqual([
      { Action: ['elasticloadbalancing:DescribeRules', 'elasticloadbalancing:DescribeTargetHealth'], Effect: 'Allow', Resource: '*' },
      { Action: 'elasticloadbalancing:ModifyRule', Effect: 'Allow', Resource: { Ref: expect.stringMatching(/^MistralListenerRule/) } },
    ]);
  });

  test('the shared ALB may reach the second service\'s pods on the cluster security group', () => {
    template.hasResourceProperties('AWS::EC2::SecurityGroupEgress', {
      Description: 'ALB to model servers',
      FromPort: 9000,
      GroupId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^LlamaLoadBalancerSecurityGroup'), 'GroupId'] },
    });
  });

  test('cdk-nag finds nothing unacknowledged', () => {
    expect(nagFindings(stack)).toEqual([]);
  });
});

describe('listenerRule validation', () => {
  test('fails when the priority is outside 1..50000 or not whole', () => {
    for (const priority of [0, 50_001, 1.5]) {
      expect(problemsOf(() => shared({ priority }).make())).toEqual([expect.stringMatching(/^listenerRule\.priority: is .*1.*50_000/)]);
    }
  });

  test('fails when the rule has no condition, too many values per condition or per rule, too many wildcards, or a bad value', () => {
    expect(problemsOf(() => shared({ pathPatterns: [] }).make()))
      .toEqual([expect.stringMatching(/^listenerRule: has no hostHeaders and no pathPatterns/)]);
    expect(problemsOf(() => shared({ pathPatterns: ['/a', '/b', '/c', '/d'] }).make())).toEqual([expect.stringMatching(/^listenerRule\.pathPatterns: has 4 values; allowed: at most 3/)]);
    expect(problemsOf(() => shared({ pathPatterns: ['/a', '/b', '/c'], hostHeaders: ['a.example.com', 'b.example.com', 'c.example.com'] }).make()))
      .toEqual([expect.stringMatching(/^listenerRule: has 6 condition values; allowed: at most 5 per rule/)]);
    expect(problemsOf(() => shared({ pathPatterns: ['/a/*/*', '/b/*/*'], hostHeaders: ['*.??.example.com'] }).make()))
      .toEqual([expect.stringMatching(/^listenerRule: has 7 wildcards .* at most 5 per rule/)]);
    expect(problemsOf(() => shared({ hostHeaders: ['localhost'], pathPatterns: [`/${'x'.repeat(128)}`] }).make())).toEqual([
      expect.stringMatching(/^listenerRule\.hostHeaders\[0\]: is "localhost"; allowed: a host name/),
      expect.stringMatching(/^listenerRule\.pathPatterns\[0\]: is "\/x+"; allowed: a path pattern .* of 1\.\.128 characters/),
    ]);
  });

  test('fails when a service sets both its own loadBalancer and a listenerRule', () => {
    expect(problemsOf(() => shared({}, { loadBalancer: { deregistrationDelay: Duration.seconds(10) } }).make()))
      .toEqual([expect.stringMatching(/^loadBalancer: is set together with listenerRule; allowed: one of them/)]);
  });

  test('fails when two services of the app take one priority on one listener', () => {
    const { stack, cluster, make } = shared();
    make();
    expect(problemsOf(() => new EksInferenceService(stack, 'Third', {
      contract: { ...LLAMA_CONTRACT, name: 'third' },
      classes: llamaClasses().slice(0, 1),
      cluster,
      modelDataFetcherImage: FETCHER_IMAGE,
      listenerRule: { listener: (stack.node.findChild('Llama') as EksInferenceService).listener, priority: 10, hostHeaders: ['third.example.com'] },
    }))).toEqual([expect.stringMatching(/^listenerRule\.priority: is 10, which EksInferenceService 'Test\/Mistral' already has on the same/)]);
  });

  test('fails when an imported listener has no security group (the pods\' ports could not be opened to it)', () => {
    const { stack } = shared();
    // The type requires it; JavaScript callers (and casts) can still leave it out.
    const imported = elbv2.ApplicationListener.fromApplicationListenerAttributes(stack, 'Imported', {
      listenerArn: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/shared/0123456789abcdef/0123456789abcdef',
    } as elbv2.ApplicationListenerAttributes);
    expect(problemsOf(() => shared({ listener: imported }).make()))
      .toEqual([expect.stringMatching(/^listenerRule\.listener: has no security group/)]);
    // With its security group it is accepted, and the load balancer name comes from the literal ARN.
    const { make: make2 } = shared({
      listener: elbv2.ApplicationListener.fromApplicationListenerAttributes(testStack('Other').stack, 'Imported', {
        listenerArn: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/shared/0123456789abcdef/0123456789abcdef',
        securityGroup: ec2.SecurityGroup.fromSecurityGroupId(testStack('Other2').stack, 'Sg', 'sg-0123456789abcdef0'),
      }),
    });
    expect(make2().loadBalancerFullName).toBe('app/shared/0123456789abcdef');
  });
});

describe('listenerRule.authenticate', () => {
  test("the rule's actions are the authentication, then the weighted forward; without it the rule forwards unauthenticated", () => {
    const oidc = (forward: elbv2.ListenerAction) => elbv2.ListenerAction.authenticateOidc({
      authorizationEndpoint: 'https://idp.example.com/authorize', tokenEndpoint: 'https://idp.example.com/token',
      userInfoEndpoint: 'https://idp.example.com/userinfo', issuer: 'https://idp.example.com', clientId: 'chat',
      clientSecret: SecretValue.unsafePlainText('test-only'), next: forward,
    });
    const { stack, make } = shared({ authenticate: oidc });
    const mistral = make();
    const rule = Template.fromStack(stack).findResources('AWS::ElasticLoadBalancingV2::ListenerRule');
    type Action = { Type: string; Order: number; ForwardConfig?: { TargetGroups: unknown[] } };
    const [actions] = Object.values(rule).map((r) => r.Properties.Actions as Action[]);
    expect(actions.map((a) => `${a.Order} ${a.Type}`)).toEqual(['1 authenticate-oidc', '2 forward']);
    expect(actions[1].ForwardConfig!.TargetGroups).toHaveLength(mistral.units.length);

    const plain = shared();
    plain.make();
    const [unauthenticated] = Object.values(Template.fromStack(plain.stack).findResources('AWS::ElasticLoadBalancingV2::ListenerRule'))
      .map((r) => (r.Properties.Actions as { Type: string }[]).map((a) => a.Type));
    expect(unauthenticated).toEqual(['forward']);
  });
});

describe('listenerRule: the shared load balancer and the cluster network', () => {
  const LISTENER_ARN = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/shared/0123456789abcdef/0123456789abcdef';
  const warnings = (stack: Stack) => Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('imported-listener-egress'));

  test('an imported listener whose security group allows all outbound gets no egress rule, and a warning says what the real group must allow', () => {
    const { stack, make } = shared({
      listener: elbv2.ApplicationListener.fromApplicationListenerAttributes(testStack('Other').stack, 'Imported', {
        listenerArn: LISTENER_ARN, securityGroup: ec2.SecurityGroup.fromSecurityGroupId(testStack('Other2').stack, 'Sg', 'sg-0123456789abcdef0'),
      }),
    });
    make();
    Template.fromStack(stack).resourcePropertiesCountIs('AWS::EC2::SecurityGroupEgress', { GroupId: 'sg-0123456789abcdef0' }, 0);
    expect(warnings(stack)).toHaveLength(1);
    expect(JSON.stringify(warnings(stack)[0].entry.data)).toContain("must allow egress to the cluster security group on the pods' ports");
  });

  test('imported with allowAllOutbound: false, the egress rule to the cluster security group is added and nothing is warned', () => {
    const { stack, cluster } = shared();
    new EksInferenceService(stack, 'Mistral', {
      contract: MISTRAL, classes: llamaClasses().slice(0, 2), cluster, modelDataFetcherImage: FETCHER_IMAGE,
      listenerRule: {
        listener: elbv2.ApplicationListener.fromApplicationListenerAttributes(stack, 'Imported', {
          listenerArn: LISTENER_ARN,
          securityGroup: ec2.SecurityGroup.fromSecurityGroupId(stack, 'Sg', 'sg-0123456789abcdef0', { allowAllOutbound: false }),
        }),
        priority: 10,
        pathPatterns: ['/mistral/*'],
      },
    });
    Template.fromStack(stack).hasResourceProperties('AWS::EC2::SecurityGroupEgress', { GroupId: 'sg-0123456789abcdef0', FromPort: 8080, ToPort: 8080 });
    expect(warnings(stack)).toEqual([]);
  });

  test("fails when the listener's load balancer is in another VPC than the cluster's", () => {
    const { stack, make } = shared();
    const vpc = new ec2.Vpc(stack, 'OtherVpc', { maxAzs: 2 });
    const alb = new elbv2.ApplicationLoadBalancer(stack, 'OtherAlb', { vpc });
    const listener = alb.addListener('Http', { port: 80, defaultAction: elbv2.ListenerAction.fixedResponse(404) });
    expect(problemsOf(() => shared({ listener }).make())).toEqual([
      expect.stringMatching(/^listenerRule\.listener: is on a load balancer in VPC Test\/OtherVpc, not the cluster's VPC Test\/Cluster\/Vpc; /),
    ]);
    // The same VPC is fine: the example's shape.
    expect(() => make()).not.toThrow();
  });
});

describe("listenerRule: the shared load balancer's idle timeout covers the rule's deadline (review R230)", () => {
  const withDeadline = (deadlineMs: number, name = MISTRAL.name) => ({ contract: { ...MISTRAL, name, slo: { ...MISTRAL.slo, deadlineMs } } });
  const idleOf = (stack: Stack) => {
    const lb = Object.values(Template.fromStack(stack).findResources('AWS::ElasticLoadBalancingV2::LoadBalancer'))[0];
    return (lb.Properties.LoadBalancerAttributes as Array<{ Key: string; Value: string }>).filter((a) => a.Key === 'idle_timeout.timeout_seconds');
  };
  const warnings = (stack: Stack, id: string) => Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp(id)).map((w) => w.entry.data as string);

  test("a rule service with a longer deadline raises the owner's ALB idle timeout to it (deadline + 5 s), once in the template", () => {
    expect(idleOf(shared().stack)).toEqual([{ Key: 'idle_timeout.timeout_seconds', Value: '60' }]);
    const { stack, make } = shared({}, withDeadline(300_000));
    make();
    expect(idleOf(stack)).toEqual([{ Key: 'idle_timeout.timeout_seconds', Value: '305' }]);
    expect(warnings(stack, 'listener-idle-timeout')).toEqual([]);
  });

  test("shorter deadlines keep the owner's", () => {
    const { stack, llama, cluster, make } = shared({}, withDeadline(20_000));
    make();
    new EksInferenceService(stack, 'Short', {
      ...withDeadline(20_000, 'short-chat'), classes: llamaClasses().slice(0, 2), cluster, modelDataFetcherImage: FETCHER_IMAGE,
      listenerRule: { listener: llama.listener, priority: 30, pathPatterns: ['/short/*'] },
    });
    expect(idleOf(stack)).toEqual([{ Key: 'idle_timeout.timeout_seconds', Value: '60' }]);
  });

  test('with several rule services the longest deadline sets it, whichever attaches last', () => {
    const { stack, llama, cluster, make } = shared({}, withDeadline(120_000));
    make();
    const rule = (id: string, deadlineMs: number, priority: number) => new EksInferenceService(stack, id, {
      ...withDeadline(deadlineMs, `${id.toLowerCase()}-chat`), classes: llamaClasses().slice(0, 2), cluster, modelDataFetcherImage: FETCHER_IMAGE,
      listenerRule: { listener: llama.listener, priority, pathPatterns: [`/${id.toLowerCase()}/*`] },
    });
    rule('Qwen', 600_000, 20);
    rule('Phi', 30_000, 30);
    expect(idleOf(stack)).toEqual([{ Key: 'idle_timeout.timeout_seconds', Value: '605' }]);
  });

  test("a deadline past the ALB's 4000 s cap sets 4000 s and warns on the rule service", () => {
    const { stack, make } = shared({}, withDeadline(5_000_000));
    make();
    expect(idleOf(stack)).toEqual([{ Key: 'idle_timeout.timeout_seconds', Value: '4000' }]);
    expect(Annotations.fromStack(stack).findWarning('/Test/Mistral', Match.stringLikeRegexp('alb-idle-timeout'))).toHaveLength(1);
  });

  test('an imported listener, or one of a load balancer no service created, is left as it is and a warning says what it needs', () => {
    const LISTENER_ARN = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/shared/0123456789abcdef/0123456789abcdef';
    const imported = shared({
      listener: elbv2.ApplicationListener.fromApplicationListenerAttributes(testStack('Other').stack, 'Imported', {
        listenerArn: LISTENER_ARN, securityGroup: ec2.SecurityGroup.fromSecurityGroupId(testStack('Other2').stack, 'Sg', 'sg-0123456789abcdef0'),
      }),
    }, withDeadline(120_000));
    imported.make();
    expect(warnings(imported.stack, 'listener-idle-timeout')).toEqual([expect.stringContaining(
      'listenerRule.listener is on a load balancer no EksInferenceService of this app created, whose idle timeout (idle_timeout.timeout_seconds, 60 s '
      + 'unless its owner set it) this construct can neither read nor set',
    )]);
    expect(warnings(imported.stack, 'listener-idle-timeout')[0]).toContain('Make it at least 125 s (slo.deadlineMs 120000 ms + 5 s, at least 60 s).');

    const own = shared();
    const alb = new elbv2.ApplicationLoadBalancer(own.stack, 'UsersAlb', { vpc: own.cluster.vpc });
    const listener = alb.addListener('Http', { port: 80, defaultAction: elbv2.ListenerAction.fixedResponse(404) });
    new EksInferenceService(own.stack, 'Mistral', {
      contract: MISTRAL, classes: llamaClasses().slice(0, 2), cluster: own.cluster, modelDataFetcherImage: FETCHER_IMAGE,
      listenerRule: { listener, priority: 10, pathPatterns: ['/mistral/*'] },
    });
    expect(warnings(own.stack, 'listener-idle-timeout')).toEqual([expect.stringContaining('Make it at least 60 s')]);
    const attributes = Template.fromStack(own.stack).findResources('AWS::ElasticLoadBalancingV2::LoadBalancer', {});
    const users = Object.entries(attributes).find(([id]) => id.startsWith('UsersAlb'))![1];
    expect(JSON.stringify(users.Properties.LoadBalancerAttributes ?? [])).not.toContain('idle_timeout');
  });
});

describe('listenerRule.deregistrationDelay below the deadline (review R240)', () => {
  const belowDeadline = (stack: Stack) => Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('eks-deregistration-below-deadline'));

  test('warns on the rule service, naming listenerRule.deregistrationDelay; the default (the deadline) does not', () => {
    const short = shared({ deregistrationDelay: Duration.seconds(5) });
    short.make();
    const found = belowDeadline(short.stack);
    expect(found).toHaveLength(1);
    expect(found[0].id).toBe('/Test/Mistral');
    expect(found[0].entry.data)
      .toContain(`listenerRule.deregistrationDelay is 5 s, shorter than contract.slo.deadlineMs ${MISTRAL.slo.deadlineMs} ms`);
    const byDefault = shared();
    byDefault.make();
    expect(belowDeadline(byDefault.stack)).toEqual([]);
  });
});
