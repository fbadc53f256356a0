import { ConstructValidationError } from '../../lib/core/validation/error';
import { queuedRequestDroppedAfterSeconds } from '../../lib/core/runtime/abandonment';
import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
import { type App, CfnResource, Duration, Fn, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { type IConstruct, type IDependable, Construct } from 'constructs';
import { Metrics } from '../../lib/core/metrics/contract';
import { rejectionStatusClass } from '../../lib/core/runtime/engines';
import { type CapacityClass } from '../../lib/core/service/capacity-class';
import { EksInferenceCluster } from '../../lib/eks/cluster';
import { EksInferenceService, type EksInferenceServiceProps } from '../../lib/eks/inference-service';
import { KARPENTER_INTERRUPTION_EVENTS } from '../../lib/eks/karpenter';
import { MODEL_SERVER_PRIORITY } from '../../lib/eks/manifests/workload';
import { KARPENTER_CHART, KEDA_CHART, LOAD_BALANCER_CONTROLLER_CHART } from '../../lib/eks/versions';
import { type IClassArtifactGate } from '../../lib/trust/gate';
import { expectValidManifests, FETCHER_IMAGE, type KubernetesObject, LLAMA_CONTRACT, llamaClasses, nagFindings, renderWithPlaceholders, testStack } from '../util';

/** A gate that records the classes it was asked about and hands out one marker construct per class. */
class RecordingGate implements IClassArtifactGate {
  public readonly gated: string[] = [];
  public readonly markers = new Map<string, Construct>();
  public readonly options: unknown[] = [];
  gateFor(scope: Construct, cls: CapacityClass, options?: unknown): IDependable {
    this.gated.push(cls.name);
    this.options.push(options);
    const marker = new Construct(scope, `Gate-${cls.name}`);
    new CfnResource(marker, 'Resource', { type: 'AWS::CloudFormation::WaitConditionHandle' });
    this.markers.set(cls.name, marker);
    return marker;
  }
}

function build(overrides: Partial<EksInferenceServiceProps> = {}): { stack: Stack; service: EksInferenceService } {
  const { stack } = testStack();
  const service = new EksInferenceService(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'), ...overrides });
  return { stack, service };
}

function logicalIdOf(scope: IConstruct): string {
  const cfn = scope.node.findAll().find((c): c is CfnResource => c instanceof CfnResource);
  if (!cfn) throw new Error(`no CfnResource under ${scope.node.path}`);
  return cfn.stack.resolve(cfn.logicalId) as string;
}

describe('EksInferenceService names the API server or the cluster\'s controllers keep for themselves (R203)', () => {
  test('fails when the namespace is Kubernetes\' own or a controller\'s', () => {
    for (const namespace of ['kube-system', 'default', 'keda', 'amazon-cloudwatch', 'karpenter']) {
      expect(() => build({ namespace })).toThrow(new RegExp(`namespace: is '${namespace}', which is reserved \\(kube-system, kube-public`));
    }
    expect(() => build({ namespace: 'llm-serving' })).not.toThrow();
  });

  test('fails when a second serving construct in the stack serves the same service name, on another cluster too', () => {
    const { stack } = build();
    expect(() => new EksInferenceService(stack, 'Again', {
      contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl2'),
    })).toThrow("contract.name: is 'llama3-chat', which the serving construct at 'Test/Llama' in this stack also serves");
  });

  test('fails when an EKS service in another stack of the app serves the same name in the same account and Region, not elsewhere', () => {
    const { stack } = build();
    const app = stack.node.scope as App;
    const service = (scope: Stack) => () => new EksInferenceService(scope, 'Llama', {
      contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(scope, 'Kubectl'),
    });
    // One's KEDA ScaledObject would read the other's ReplicaFloor: both are [Service, CapacityClass] in that account and Region.
    expect(service(new Stack(app, 'Staging', { env: { account: '123456789012', region: 'us-east-1' } }))).toThrow(
      "EksInferenceService 'Staging/Llama' is invalid (1 problem):\n  - contract.name: is 'llama3-chat', which the serving construct at 'Test/Llama' "
      + 'also serves in 123456789012/us-east-1; allowed: a service name no other serving construct of this app uses in the same account and Region',
    );
    expect(service(new Stack(app, 'West', { env: { account: '123456789012', region: 'us-west-2' } }))).not.toThrow();
    expect(service(testStack('Prod').stack)).not.toThrow();
    // An environment-agnostic stack is refused on its own (env): the name check never has to pass one by.
    expect(service(new Stack(app, 'Anywhere'))).toThrow("EksInferenceService 'Anywhere/Llama' is invalid (1 problem):\n  - env: stack 'Anywhere' is environment-agnostic");
  });

  test("fails when '<service>-<class>' would name a PriorityClass with the reserved 'system-' prefix", () => {
    expect(() => build({ contract: { ...LLAMA_CONTRACT, name: 'system' }, namespace: 'llm' }))
      .toThrow("name: is 'system-l40s'; allowed: a name that does not start with 'system-'");
  });
});

describe('EksInferenceService', () => {
  let stack: Stack;
  let service: EksInferenceService;
  let template: Template;
  let gate: RecordingGate;

  beforeAll(() => {
    gate = new RecordingGate();
    ({ stack, service } = build({ artifactGate: gate, classOptions: { a10g: { capacityTypes: ['on-demand', 'spot'] } } }));
    template = Template.fromStack(stack);
  });

  describe('cluster', () => {
    test('a new cluster has private endpoint access, every control-plane log type and envelope-encrypted secrets', () => {
      template.hasResourceProperties('AWS::EKS::Cluster', {
        ResourcesVpcConfig: Match.objectLike({ EndpointPrivateAccess: true, EndpointPublicAccess: false }),
        Logging: { ClusterLogging: { EnabledTypes: ['api', 'audit', 'authenticator', 'controllerManager', 'scheduler'].map((type) => ({ Type: type })) } },
        EncryptionConfig: [Match.objectLike({ Resources: ['secrets'] })],
      });
      template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    });

    test('the cluster name is literal so that IAM conditions and discovery tags can name it', () => {
      expect(service.clusterName).toMatch(/^[A-Za-z0-9][A-Za-z0-9-]*$/);
      template.hasResourceProperties('AWS::EKS::Cluster', { Name: service.clusterName });
      template.hasResourceProperties('AWS::EC2::Subnet', { Tags: Match.arrayWith([{ Key: 'karpenter.sh/discovery', Value: service.clusterName }]) });
    });
  });

  describe('charts', () => {
    test.each([
      ['karpenter', KARPENTER_CHART, 'kube-system'],
      ['keda', KEDA_CHART, 'keda'],
      ['aws-load-balancer-controller', LOAD_BALANCER_CONTROLLER_CHART, 'kube-system'],
    ])('%s is installed from its pinned chart with wait and atomic', (release, chart, namespace) => {
      template.hasResourceProperties('Custom::AWSCDK-EKS-HelmChart', {
        Release: release,
        Chart: chart.chart,
        Repository: chart.repository,
        Version: chart.version,
        Namespace: namespace,
        Wait: true,
        Atomic: true,
      });
    });

    test('the pins are the reviewed versions', () => {
      expect([KARPENTER_CHART.version, KEDA_CHART.version, LOAD_BALANCER_CONTROLLER_CHART.version]).toEqual(['1.14.1', '2.20.2', '3.5.0']);
      expect(KARPENTER_CHART.repository).toBe('oci://public.ecr.aws/karpenter/karpenter');
    });
  });

  describe('Karpenter', () => {
    test('interruption queue: SQS-managed SSE, 5-minute retention and a TLS-only policy', () => {
      template.hasResourceProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true, MessageRetentionPeriod: 300 });
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Action: 'sqs:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
            // Tighter than the upstream reference: each rule may send, by its own ARN.
            Match.objectLike({
              Effect: 'Allow',
              Action: Match.arrayWith(['sqs:SendMessage']),
              Principal: { Service: 'events.amazonaws.com' },
              Condition: { ArnEquals: { 'aws:SourceArn': { 'Fn::GetAtt': [Match.stringLikeRegexp('SpotInterruptionRule'), 'Arn'] } } },
            }),
          ]),
        },
      });
    });

    test.each([
      ['aws.health', 'AWS Health Event'],
      ['aws.ec2', 'EC2 Spot Instance Interruption Warning'],
      ['aws.ec2', 'EC2 Instance Rebalance Recommendation'],
      ['aws.ec2', 'EC2 Instance State-change Notification'],
      ['aws.ec2', 'EC2 Capacity Reservation Instance Interruption Warning'],
    ])('a rule sends %s "%s" to the interruption queue', (source, detailType) => {
      template.hasResourceProperties('AWS::Events::Rule', {
        EventPattern: { source: [source], 'detail-type': [detailType] },
        Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('InterruptionQueue'), 'Arn'] } })],
      });
    });

    test('exactly the five upstream rules exist', () => {
      template.resourceCountIs('AWS::Events::Rule', 5);
      expect(KARPENTER_INTERRUPTION_EVENTS).toHaveLength(5);
    });

    test('the controller may launch only cluster-owned, nodepool-tagged resources and pass only the node role', () => {
      const owned = { [`aws:ResourceTag/kubernetes.io/cluster/${service.clusterName}`]: 'owned' };
      template.hasResourceProperties('AWS::IAM::Policy', {
        Roles: [{ Ref: Match.stringLikeRegexp('KarpenterControllerRole') }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Sid: 'AllowScopedDeletion',
              Action: ['ec2:TerminateInstances', 'ec2:DeleteLaunchTemplate'],
              Condition: { StringEquals: owned, StringLike: { 'aws:ResourceTag/karpenter.sh/nodepool': '*' } },
            }),
            Match.objectLike({
              Sid: 'AllowPassingInstanceRole',
              Action: 'iam:PassRole',
              Resource: { 'Fn::GetAtt': [Match.stringLikeRegexp('KarpenterNodeRole'), 'Arn'] },
              Condition: { StringEquals: { 'iam:PassedToService': ['ec2.amazonaws.com', 'ec2.amazonaws.com.cn'] } },
            }),
            Match.objectLike({
              Sid: 'AllowInterruptionQueueActions',
              Action: ['sqs:DeleteMessage', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'],
              Resource: { 'Fn::GetAtt': [Match.stringLikeRegexp('InterruptionQueue'), 'Arn'] },
            }),
            Match.objectLike({ Sid: 'AllowRegionalReadActions', Condition: { StringEquals: { 'aws:RequestedRegion': 'us-east-1' } } }),
          ]),
        },
      });
    });

    test('the controller and node roles are wired: pod identity for the controller, an EC2_LINUX access entry for nodes', () => {
      template.hasResourceProperties('AWS::EKS::PodIdentityAssociation', { Namespace: 'kube-system', ServiceAccount: 'karpenter' });
      template.hasResourceProperties('AWS::EKS::AccessEntry', { Type: 'EC2_LINUX', PrincipalArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('KarpenterNodeRole'), 'Arn'] } });
      template.hasResourceProperties('AWS::IAM::Role', {
        AssumeRolePolicyDocument: { Statement: [Match.objectLike({ Action: ['sts:AssumeRole', 'sts:TagSession'], Principal: { Service: 'pods.eks.amazonaws.com' } })] },
      });
    });
  });

  describe('KEDA and the load balancer controller', () => {
    test('the KEDA operator can call cloudwatch:GetMetricData and nothing else', () => {
      template.hasResourceProperties('AWS::IAM::Policy', {
        Roles: [{ Ref: Match.stringLikeRegexp('KedaOperatorRole') }],
        PolicyDocument: { Statement: [{ Sid: 'ReadScalingMetrics', Effect: 'Allow', Action: 'cloudwatch:GetMetricData', Resource: '*' }] },
      });
      template.hasResourceProperties('AWS::EKS::PodIdentityAssociation', { Namespace: 'keda', ServiceAccount: 'keda-operator' });
    });

    test('the load balancer controller registers targets only in the service target groups, one policy per class', () => {
      type Policy = { Roles: unknown; PolicyDocument: { Statement: unknown[] } };
      const resources = template.toJSON().Resources as Record<string, { Type: string; Properties: Policy; DependsOn?: string[] }>;
      for (const c of ['l40s', 'a10g', 'inf2']) {
        const grants = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::IAM::Policy'
          && JSON.stringify(r.Properties.PolicyDocument).includes('RegisterPodsInOwnedTargetGroups')
          && JSON.stringify(r.Properties.PolicyDocument).includes(`TargetGroup${c}`));
        expect(grants).toHaveLength(1);
        const [id, policy] = grants[0];
        expect(id).toMatch(new RegExp(`^LlamaLoadBalancerControllerTargets${c}`));
        expect(policy.Properties.Roles).toEqual([{ Ref: expect.stringMatching(/LoadBalancerControllerRole/) }]);
        expect(policy.Properties.PolicyDocument.Statement).toEqual([{
          Sid: 'RegisterPodsInOwnedTargetGroups',
          Effect: 'Allow',
          Action: ['elasticloadbalancing:RegisterTargets', 'elasticloadbalancing:DeregisterTargets'],
          Resource: { Ref: expect.stringMatching(new RegExp(`^LlamaTargetGroup${c}`)) },
        }]);
        // The class's binding waits for it, so that it is removed after the binding (the controller deregisters first).
        expect(resources[logicalIdOf(service.units.find((u) => u.cls.name === c)!.manifests.binding)].DependsOn).toContain(id);
      }
    });
  });

  describe('routing', () => {
    test('an internal ALB whose listener forwards to one weighted target group per class, weights from the plan', () => {
      template.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', { Scheme: 'internal' });
      const weights = Object.values(service.initialWeights);
      expect(weights.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(99);
      expect(service.initialWeights.l40s).toBeGreaterThan(service.initialWeights.a10g);
      template.hasResourceProperties('AWS::ElasticLoadBalancingV2::Listener', {
        Protocol: 'HTTP',
        DefaultActions: [
          {
            Type: 'forward',
            ForwardConfig: {
              TargetGroups: ['l40s', 'a10g', 'inf2'].map((c) => ({
                TargetGroupArn: { Ref: Match.stringLikeRegexp(`TargetGroup${c}`) },
                Weight: service.initialWeights[c],
              })),
            },
          },
        ],
      });
    });

    test('target groups health-check the model-ready path and deregister within the pod drain time', () => {
      template.resourceCountIs('AWS::ElasticLoadBalancingV2::TargetGroup', 3);
      template.hasResourceProperties('AWS::ElasticLoadBalancingV2::TargetGroup', {
        TargetType: 'ip',
        // The engine's own readiness path: vLLM answers /health once the model is loaded.
        HealthCheckPath: '/health',
        TargetGroupAttributes: Match.arrayWith([{ Key: 'deregistration_delay.timeout_seconds', Value: '30' }]),
      });
      for (const u of service.units) {
        expect(u.objects.deployment.spec.template.spec.containers[0].lifecycle?.preStop.sleep.seconds).toBe(30);
      }
    });

    test('routingFacts() names the listener, each class target group and its envelope', () => {
      const facts = service.routingFacts();
      expect(facts.kind).toBe('alb');
      expect(stack.resolve(facts.listenerArn)).toEqual({ Ref: expect.stringMatching(/Listener/) });
      expect(facts.targets.map((t) => [t.class.name, t.class.preferenceRank, t.nodePoolName, t.deploymentName])).toEqual([
        ['l40s', 0, 'llama3-chat-l40s', 'llama3-chat-l40s'],
        ['a10g', 1, 'llama3-chat-a10g', 'llama3-chat-a10g'],
        ['inf2', 2, 'llama3-chat-inf2', 'llama3-chat-inf2'],
      ]);
      expect(facts.targets[0].class.tokensPerSecondPerReplica).toBe(1200);
      expect(stack.resolve(facts.targets[1].targetGroupFullName)).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/TargetGroupa10g/), 'TargetGroupFullName'] });
    });

    test('metric helpers use the ALB per-target-group dimensions', () => {
      const m = service.metricRequestCountPerTarget('inf2');
      expect(m.namespace).toBe('AWS/ApplicationELB');
      expect(m.metricName).toBe('RequestCountPerTarget');
      expect(Object.keys(m.dimensions ?? {})).toEqual(['LoadBalancer', 'TargetGroup']);
      expect(service.metricHealthyHosts('inf2').metricName).toBe('HealthyHostCount');
      expect(service.metricTargetResponseTime('inf2').metricName).toBe('TargetResponseTime');
      expect(service.metricTarget5xx('inf2').metricName).toBe('HTTPCode_Target_5XX_Count');
      // The one construct error, like the SageMaker endpoint's metric methods.
      expect(() => service.metricHealthyHosts('h100')).toThrow(ConstructValidationError);
      expect(() => service.metricHealthyHosts('h100')).toThrow(/className: is 'h100', no class of this service \(classes: 'l40s', 'a10g', 'inf2'\)/);
    });
  });

  describe('serving units', () => {
    test('fails when a drain can take the next pod before its replacement started, or a spot pod outlives its instance', () => {
      const [l40s, a10g] = service.units;
      const spec = (u: typeof l40s) => u.objects.nodePool.spec.template.spec;
      // On-demand: the budget holds for the grace less the pod's own (30 s deregistration + 30 s deadline): the 30-minute
      // startup timeout + 60 s. Nodes never expire (expiration is forceful and unbudgeted); drift rotates them.
      expect([spec(l40s).terminationGracePeriod, spec(l40s).expireAfter]).toEqual(['1920s', 'Never']);
      expect(l40s.objects.deployment.spec.template.spec.terminationGracePeriodSeconds).toBe(60);
      // A pool that may run spot: an interrupted instance is gone 2 minutes after its notice, and pods terminate until the
      // grace expires, so it ends inside the notice (105 s; the pods are deleted at 45 s and drained by then).
      expect(spec(a10g).terminationGracePeriod).toBe('105s');
    });

    test('fails when a node holding several replicas lets its drain delete the last ones together (R215)', () => {
      // g5.12xlarge: 4 A10G, TP 1 -> 4 replicas a node. The budget evicts them one at a time, each once the previous
      // one's replacement is Ready; Karpenter deletes what is left, bypassing the budget, at the grace less the pod's
      // own. So the grace holds 4 starts (30 min each by default), not one: 60 s pod grace + 60 s + 4 x 1800 s.
      const classes = llamaClasses().map((c) => (c.name === 'a10g' ? { ...c, instanceType: 'g5.12xlarge', maxReplicas: 10 } : c));
      const fourPerNode = build({ classes, classOptions: { a10g: { capacityTypes: ['on-demand'] } } }).service.units.find((u) => u.cls.name === 'a10g')!;
      expect(fourPerNode.objects.nodePool.spec.template.spec.terminationGracePeriod).toBe(`${60 + 60 + 4 * 1800}s`);
      // An additional type holding more replicas than the class's own: the fullest node counts (g6e.12xlarge: 4 L40S).
      const mixed = build({ classOptions: { l40s: { additionalInstanceTypes: ['g6e.12xlarge'], startupTimeout: Duration.minutes(10) } } })
        .service.units.find((u) => u.cls.name === 'l40s')!;
      expect(mixed.objects.nodePool.spec.template.spec.terminationGracePeriod).toBe(`${60 + 60 + 4 * 600}s`);
    });

    test('each class runs on its own NodePool with its instance type, capacity types and quota limits', () => {
      const [l40s, a10g, inf2] = service.units;
      // 8 replicas on 1-GPU nodes, and one node more for a rollout's surge pod or a drift's replacement.
      expect(l40s.objects.nodePool.spec.limits).toEqual({ cpu: '36', 'nvidia.com/gpu': '9' });
      expect(a10g.objects.nodePool.spec.template.spec.requirements).toContainEqual({ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand', 'spot'] });
      // inf2.xlarge: 2 NeuronCores, TP 2 -> one replica per node; 24 replicas (+ 1 transient node) -> 50 NeuronCores.
      expect(inf2.objects.nodePool.spec.limits['aws.amazon.com/neuroncore']).toBe('50');
      expect(inf2.objects.deployment.spec.template.spec.containers[0].resources.limits['aws.amazon.com/neuroncore']).toBe('2');
      expect(inf2.objects.deployment.spec.template.spec.nodeSelector).toEqual({ 'karpenter.sh/nodepool': 'llama3-chat-inf2' });
    });

    test('NodePool limits are whole nodes: Karpenter launches no node whose capacity would exceed what is left', () => {
      // g5.12xlarge: 4 A10G, TP 1 -> 4 replicas a node; 10 replicas take 3 nodes, so 12 GPUs (10 would stop at 2 nodes),
      // and a fourth for drift's replacement, which Karpenter launches before it takes a node away.
      const classes = llamaClasses().map((c) => (c.name === 'a10g' ? { ...c, instanceType: 'g5.12xlarge', maxReplicas: 10 } : c));
      const a10g = build({ classes }).service.units.find((u) => u.cls.name === 'a10g')!;
      expect(a10g.objects.nodePool.spec.limits).toEqual({ cpu: String(4 * 48), 'nvidia.com/gpu': '16' });
      // An additional type with more GPUs than a replica needs: each of the 8 + 1 nodes may be a 4-GPU g6e.12xlarge.
      const mixed = build({ classOptions: { l40s: { additionalInstanceTypes: ['g6e.12xlarge'] } } }).service.units.find((u) => u.cls.name === 'l40s')!;
      expect(mixed.objects.nodePool.spec.limits).toEqual({ cpu: String(9 * 48), 'nvidia.com/gpu': String(9 * 4) });
      // Its nodes' volume holds the model cache of the replicas the larger type takes: 4, where g6e.xlarge takes 1.
      // The data volume (Bottlerocket's /dev/xvdb; its OS volume /dev/xvda is a fixed 4Gi).
      const gib = (u: typeof mixed) => parseInt(String(u.objects.nodeClass.spec.blockDeviceMappings!.at(-1)!.ebs.volumeSize), 10);
      const single = build().service.units.find((u) => u.cls.name === 'l40s')!;
      expect(gib(mixed) - 100).toBe(4 * (gib(single) - 100));
      // A type with less CPU per accelerator than the pods request holds fewer of them: a replica of a class with 4 GPUs
      // a replica on g6e.48xlarge requests 72 vCPU (3/4 of 192, 2 replicas a node), so a p4d.24xlarge (96 vCPU, 8 GPUs)
      // holds one by CPU, not two by GPU: 8 replicas may take 8 nodes (+ 1), not 4.
      const big = llamaClasses().map((c) => (c.name === 'l40s'
        ? { ...c, instanceType: 'g6e.48xlarge', footprint: { ...c.footprint, tensorParallelDegree: 4 }, maxReplicas: 8 } : c));
      const cpuBound = build({ classes: big, classOptions: { l40s: { additionalInstanceTypes: ['p4d.24xlarge'] } } }).service.units.find((u) => u.cls.name === 'l40s')!;
      expect(cpuBound.objects.nodePool.spec.limits['nvidia.com/gpu']).toBe(String(9 * 8));
    });

    test('KEDA targets come from the envelope via the plan; min/max from the plan and quota', () => {
      for (const u of service.units) {
        const spec = u.objects.scaledObject.spec;
        expect(Number(spec.triggers[0].metadata.targetMetricValue)).toBeCloseTo(u.plan.targetRequestsPerSecondPerReplica * 60, 3);
        expect(spec.minReplicaCount).toBe(u.plan.minReplicas);
        expect(spec.maxReplicaCount).toBe(u.plan.maxReplicas);
        expect(spec.maxReplicaCount).toBeLessThanOrEqual(u.cls.maxReplicas);
      }
      // l40s: 1200 tokens/s / 1.2 headroom / 250 tokens per request = 4 req/s = 240 per 60 s period.
      expect(service.units[0].objects.scaledObject.spec.triggers[0].metadata.targetMetricValue).toBe('240');
    });

    test('the serving description names the status class each engine sheds overload with (the reconciler reads it)', () => {
      const classes = service.servingDescription().signals.classes;
      for (const u of service.units) expect(classes[u.cls.name].rejectionStatus).toBe(rejectionStatusClass(u.cls.runtime.engine));
      expect(service.units.map((u) => classes[u.cls.name].rejectionStatus)).toContain('5xx');
    });

    test('the engine queue is handed over as the Average of the one series every pod of a class publishes into (a replica\'s queue)', () => {
      const classes = service.servingDescription().signals.classes;
      const waiting = service.units.flatMap((u) => classes[u.cls.name].requestsWaiting ?? []);
      expect(waiting.length).toBeGreaterThan(0);
      for (const w of waiting) {
        expect(w.stat).toBe('Average');
        // No pod dimension: the scrape job publishes [Service, CapacityClass] only (emfMetricDeclarations).
        expect(Object.keys(w.dimensions).sort()).toEqual(['CapacityClass', 'Service']);
      }
    });

    test('enableReplicaFloors (a Reconciler calls it) renders a second trigger on the published replica floor into each ScaledObject', () => {
      // No Reconciler, no floor trigger: nothing reads a metric nothing publishes.
      for (const u of service.units) expect(u.objects.scaledObject.spec.triggers.map((t) => t.name)).toEqual(['per-replica-load']);
      const { stack: s2, service: floored } = build({ retainFloorPatches: false });
      const scaled = floored.enableReplicaFloors();
      expect(floored.enableReplicaFloors()).toEqual(scaled);
      expect(scaled).toHaveLength(floored.units.length);
      const t2 = Template.fromStack(s2);
      // The floor is part of the ScaledObject itself: no patch that a later apply could drop.
      expect(t2.findResources('Custom::AWSCDK-EKS-KubernetesPatch')).toEqual({});
      const applied = (name: string) => Object.values(t2.findResources('Custom::AWSCDK-EKS-KubernetesResource'))
        .flatMap((r) => JSON.parse(renderWithPlaceholders(r.Properties.Manifest)) as KubernetesObject[])
        .find((o) => o.kind === 'ScaledObject' && (o.metadata as { name: string }).name === name) as unknown as { spec: { triggers: Array<Record<string, unknown>> } };
      for (const u of floored.units) {
        const so = u.objects.scaledObject;
        const deployed = applied(so.metadata.name).spec.triggers;
        expect(deployed.map((t) => t.name)).toEqual(['per-replica-load', 'replica-floor']);
        expect(deployed[1]).toMatchObject({ metricType: 'AverageValue', authenticationRef: so.spec.triggers[0].authenticationRef });
        // The exact series decisionEmf() writes: namespace, name and the [Service, CapacityClass] dimension set.
        expect(deployed[1].metadata).toMatchObject({
          namespace: Metrics.replicaFloor.namespace, metricName: 'ReplicaFloor', dimensionName: 'Service;CapacityClass',
          dimensionValue: `llama3-chat;${u.cls.name}`, metricStat: 'Maximum', targetMetricValue: '1', minMetricValue: '0',
        });
        // The floored ScaledObject is still valid against KEDA's CRD schema.
        expectValidManifests([JSON.parse(JSON.stringify(so)) as KubernetesObject]);
      }
    });

    test('every custom resource depends on the chart that installs its CRD, and namespaced objects on the namespace', () => {
      const resources = template.toJSON().Resources as Record<string, { DependsOn?: string[] }>;
      const dependsOn = (scope: IConstruct) => resources[logicalIdOf(scope)].DependsOn ?? [];
      const karpenter = logicalIdOf(service.karpenter!.chart);
      const keda = logicalIdOf(service.keda!.chart);
      const lbc = logicalIdOf(service.loadBalancerController!.chart);
      const ns = logicalIdOf(service.namespaceManifest);
      expect(dependsOn(service.triggerAuthenticationManifest)).toEqual(expect.arrayContaining([keda, ns]));
      for (const u of service.units) {
        expect(dependsOn(u.manifests.capacity)).toContain(karpenter);
        expect(dependsOn(u.manifests.workload)).toEqual(expect.arrayContaining([ns, logicalIdOf(u.manifests.capacity)]));
        expect(dependsOn(u.manifests.scaler)).toEqual(expect.arrayContaining([keda, logicalIdOf(service.triggerAuthenticationManifest)]));
        // Service and TargetGroupBinding before the pods: the ALB readiness gate is injected only at pod creation.
        expect(dependsOn(u.manifests.binding)).toEqual(expect.arrayContaining([lbc, ns]));
        expect(dependsOn(u.manifests.workload)).toContain(logicalIdOf(u.manifests.binding));
        expect(dependsOn(u.manifests.binding)).not.toContain(logicalIdOf(u.manifests.workload));
      }
    });

    test("a class's pods wait for their pod identity's association and policy, not only its role (EKS gives credentials at admission)", () => {
      const resources = template.toJSON().Resources as Record<string, { DependsOn?: string[] }>;
      const withModelData = service.units.filter((u) => service.servingRoles[u.cls.name]);
      expect(withModelData.length).toBeGreaterThan(0);
      for (const u of withModelData) {
        const identity = service.servingRoles[u.cls.name].node.scope!;
        const association = identity.node.findChild('Association');
        const policy = identity.node.findChild('Policy').node.defaultChild!;
        const waitsFor = resources[logicalIdOf(u.manifests.workload)].DependsOn;
        expect(waitsFor).toEqual(expect.arrayContaining([logicalIdOf(association), logicalIdOf(policy)]));
      }
    });

    test('each Deployment depends on its class artifact gate', () => {
      expect(gate.gated).toEqual(['l40s', 'a10g', 'inf2']);
      // EKS fetches the approved version itself (--version-id): no current-version check (nor its s3:GetObject grant).
      expect(gate.options).toEqual([undefined, undefined, undefined]);
      const resources = template.toJSON().Resources as Record<string, { DependsOn?: string[] }>;
      for (const u of service.units) {
        expect(resources[logicalIdOf(u.manifests.workload)].DependsOn).toContain(logicalIdOf(gate.markers.get(u.cls.name)!));
      }
    });

    test('with modelDataEncryptionKey each model-data pod identity may decrypt through S3 only (the one model-data key concept)', () => {
      const { stack: keyed } = testStack('Keyed');
      const key = new kms.Key(keyed, 'ModelKey', { enableKeyRotation: true });
      new EksInferenceService(keyed, 'Llama', {
        contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(keyed, 'Kubectl'), modelDataEncryptionKey: key,
      });
      const t = Template.fromStack(keyed);
      const keyId = Object.keys(t.findResources('AWS::KMS::Key')).find((id) => id.startsWith('ModelKey'))!;
      const decrypting = Object.values(t.findResources('AWS::IAM::Policy')).filter((p) => JSON.stringify(p).includes('kms:ViaService'));
      // One per class with model data (all three fixture classes), each beside its own read statement.
      expect(decrypting).toHaveLength(3);
      for (const p of decrypting) {
        expect(p.Properties.PolicyDocument.Statement).toEqual(expect.arrayContaining([
          expect.objectContaining({ Action: 'kms:Decrypt', Resource: { 'Fn::GetAtt': [keyId, 'Arn'] }, Condition: { StringEquals: { 'kms:ViaService': expect.anything() } } }),
        ]));
      }
    });

    test('the pods of each class may read only their own model data object, and only its pinned version', () => {
      const object = (key: string) => ({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:s3:::models-bucket/${key}`]] });
      for (const [cls, key] of [['l40s', 'llama3-8b/bf16.tar'], ['a10g', 'llama3-8b/awq.tar']]) {
        template.hasResourceProperties('AWS::IAM::Policy', {
          PolicyDocument: {
            Statement: [
              {
                Sid: 'ReadPinnedModelDataVersion',
                Effect: 'Allow',
                Action: 's3:GetObjectVersion',
                Resource: object(key),
                Condition: { StringEquals: { 's3:VersionId': 'v1' } },
              },
            ],
          },
        });
        template.hasResourceProperties('AWS::EKS::PodIdentityAssociation', { Namespace: 'llama3-chat', ServiceAccount: `llama3-chat-${cls}` });
      }
      // inf2 pins no version: its own object only (the init container still checks the digest).
      template.hasResourceProperties('AWS::IAM::Policy', {
        PolicyDocument: { Statement: [{ Sid: 'ReadPinnedModelData', Effect: 'Allow', Action: 's3:GetObject', Resource: object('llama3-8b/neuron-tp2.tar') }] },
      });
      for (const cls of ['l40s', 'a10g', 'inf2']) {
        const unit = service.units.find((u) => u.cls.name === cls)!;
        expect(unit.objects.deployment.spec.template.spec.serviceAccountName).toBe(`llama3-chat-${cls}`);
        expect(unit.objects.serviceAccount?.metadata.name).toBe(`llama3-chat-${cls}`);
      }
      // No statement anywhere grants another S3 read.
      const reads = Object.values(template.findResources('AWS::IAM::Policy')).flatMap((p) =>
        (p.Properties.PolicyDocument.Statement as { Action: string | string[] }[]).filter((st) => [st.Action].flat().some((a) => a.startsWith('s3:Get'))),
      );
      expect(reads).toHaveLength(3);
    });

    test('every synthesized Kubernetes object validates against the real schemas', () => {
      const objects = [...service.sharedObjects, ...service.units.flatMap((u) => Object.values(u.objects))];
      expect(objects.map((o) => o.kind).sort()).toEqual(
        [
          'Namespace',
          'ServiceAccount',
          'TriggerAuthentication',
          // One per class: each class reads its own model data.
          ...['ServiceAccount', 'ServiceAccount', 'ServiceAccount'],
          ...['EC2NodeClass', 'NodePool', 'PriorityClass', 'Deployment', 'Service', 'PodDisruptionBudget', 'ScaledObject', 'TargetGroupBinding'].flatMap(
            (k) => [k, k, k],
          ),
        ].sort(),
      );
      expectValidManifests(JSON.parse(JSON.stringify(objects)) as KubernetesObject[]);
    });

    test('every class\'s PriorityClass has one value, above 0 and never preempting: a class inserted or removed changes no other class\'s (review R227)', () => {
      const classes = service.units.map((u) => u.objects.priorityClass);
      expect(classes.map((p) => [p.metadata.name, p.value, p.preemptionPolicy])).toEqual(
        service.units.map((u) => [u.objects.priorityClass.metadata.name, MODEL_SERVER_PRIORITY, 'Never']),
      );
      expect(MODEL_SERVER_PRIORITY).toBeGreaterThan(0);
      // Below the built-in system classes (system-cluster-critical is 2000000000), which user classes may not reach.
      expect(MODEL_SERVER_PRIORITY).toBeLessThanOrEqual(1_000_000_000);
    });
  });

  test('the manifests in the template (what kubectl applies, with prune labels) validate too', () => {
    const applied = Object.values(template.findResources('Custom::AWSCDK-EKS-KubernetesResource')).flatMap((r) =>
      JSON.parse(renderWithPlaceholders(r.Properties.Manifest)) as KubernetesObject[],
    );
    // Namespace + ServiceAccount, TriggerAuthentication, and 9 objects per class (its own ServiceAccount included).
    expect(applied).toHaveLength(3 + 9 * 3);
    expectValidManifests(applied);
  });

  test('cdk-nag finds nothing unacknowledged', () => {
    expect(nagFindings(stack)).toEqual([]);
  });
});

describe('EksInferenceService options', () => {
  test("the ALB waits for an answer as long as the contract's deadline allows (its 60 s idle timeout at least, 4000 s at most)", () => {
    const idle = (deadlineMs: number) => {
      const { stack } = build({ contract: { ...LLAMA_CONTRACT, slo: { ...LLAMA_CONTRACT.slo, deadlineMs } } });
      const lb = Object.values(Template.fromStack(stack).findResources('AWS::ElasticLoadBalancingV2::LoadBalancer'))[0];
      const warned = Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('longer than an ALB waits for a byte')).length > 0;
      return [(lb.Properties.LoadBalancerAttributes as Array<{ Key: string; Value: string }>).find((a) => a.Key === 'idle_timeout.timeout_seconds')?.Value, warned];
    };
    expect(idle(30_000)).toEqual(['60', false]);
    expect(idle(180_000)).toEqual(['185', false]);
    // The simulator drops a queued vLLM request at the timeout the service renders (lib/core/runtime/abandonment.ts).
    for (const ms of [30_000, 180_000]) expect(idle(ms)[0]).toBe(String(queuedRequestDroppedAfterSeconds('vllm', ms, 'eks')));
    // An ALB waits 4000 s at most: a longer deadline is a warning, not a silent cut-off.
    expect(idle(5_000_000)).toEqual(['4000', true]);
  });

  test('grantRouting: DescribeListeners and DescribeTargetHealth (no resource type) and ModifyListener on its listener; floors capped at each ScaledObject\'s maximum; the SLO is the deadline', () => {
    const { stack, service } = build({ classOptions: { a10g: { maxReplicas: 3 } } });
    const role = new iam.Role(stack, 'Reconciler', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    service.grantRouting(role);
    const statements = Object.values(Template.fromStack(stack).findResources('AWS::IAM::Policy'))
      .filter((p) => JSON.stringify(p.Properties.Roles).includes('Reconciler'))
      .flatMap((p) => p.Properties.PolicyDocument.Statement);
    expect(statements).toEqual([
      { Action: ['elasticloadbalancing:DescribeListeners', 'elasticloadbalancing:DescribeTargetHealth'], Effect: 'Allow', Resource: '*' },
      { Action: 'elasticloadbalancing:ModifyListener', Effect: 'Allow', Resource: { Ref: expect.stringMatching(/Listener/) } },
    ]);
    const d = service.servingDescription();
    expect(d.latencySloP95Ms).toBe(LLAMA_CONTRACT.slo.deadlineMs);
    if (d.routing.kind !== 'alb') throw new Error('an ALB target');
    for (const t of d.routing.targets) {
      const unit = service.units.find((u) => u.cls.name === t.class.name)!;
      expect(t.class.maxReplicas).toBe(unit.objects.scaledObject.spec.maxReplicaCount);
    }
    expect(d.routing.targets.find((t) => t.class.name === 'a10g')?.class.maxReplicas).toBe(3);
  });

  test('a token counter scraped every 2 minutes is handed over with its interval (the reconciler reads it over whole periods)', () => {
    const { service } = build({ observability: { scrapeInterval: Duration.minutes(2) } });
    const classes = Object.values(service.servingDescription().signals.classes).filter((c) => c.generatedTokens);
    expect(classes.length).toBeGreaterThan(0);
    for (const c of classes) expect(c.generatedTokensIntervalSeconds).toBe(120);
  });

  test('a deregistration delay of 0 deploys model servers with no preStop hook (a 0 s sleep needs Kubernetes 1.33)', () => {
    const { stack, service } = build({ loadBalancer: { deregistrationDelay: Duration.seconds(0) } });
    Template.fromStack(stack).hasResourceProperties('AWS::ElasticLoadBalancingV2::TargetGroup', {
      TargetGroupAttributes: Match.arrayWith([{ Key: 'deregistration_delay.timeout_seconds', Value: '0' }]),
    });
    for (const u of service.units) {
      const pod = u.objects.deployment.spec.template.spec;
      expect(pod.containers[0]).not.toHaveProperty('lifecycle');
      expect(pod.terminationGracePeriodSeconds).toBe(Math.ceil(LLAMA_CONTRACT.slo.deadlineMs / 1000));
    }
  });

  test('an internet-facing ALB with a certificate serves HTTPS on 443', () => {
    const { stack } = testStack();
    const certificate = { certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/abc' } as never;
    new EksInferenceService(stack, 'Llama', {
      contract: LLAMA_CONTRACT,
      modelDataFetcherImage: FETCHER_IMAGE,
      kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'),
      classes: llamaClasses().slice(0, 1),
      loadBalancer: { internetFacing: true, certificate, deregistrationDelay: Duration.seconds(45) },
    });
    const t = Template.fromStack(stack);
    t.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', { Scheme: 'internet-facing' });
    t.hasResourceProperties('AWS::ElasticLoadBalancingV2::Listener', { Protocol: 'HTTPS', Port: 443 });
    t.hasResourceProperties('AWS::ElasticLoadBalancingV2::TargetGroup', {
      TargetGroupAttributes: Match.arrayWith([{ Key: 'deregistration_delay.timeout_seconds', Value: '45' }]),
    });
  });
});

describe('the ALB in a VPC with two private subnet groups', () => {
  test('takes one subnet per zone (CreateLoadBalancer refuses two in one zone), from the tier it is given', () => {
    const build2 = (select?: (vpc: ec2.Vpc) => ec2.SubnetSelection) => {
      const { stack } = testStack();
      const vpc = new ec2.Vpc(stack, 'Vpc', {
        maxAzs: 3, natGateways: 1,
        subnetConfiguration: [
          { name: 'public', subnetType: ec2.SubnetType.PUBLIC },
          { name: 'app', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
          { name: 'data', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 24 },
        ],
      });
      const cluster = new EksInferenceCluster(stack, 'Cluster', { vpc, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
      new EksInferenceService(stack, 'Llama', {
        contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, cluster, loadBalancer: { vpcSubnets: select?.(vpc) },
      });
      const [lb] = Object.values(Template.fromStack(stack).findResources('AWS::ElasticLoadBalancingV2::LoadBalancer'));
      const ids = (group: string) => vpc.selectSubnets({ subnetGroupName: group }).subnets
        .map((n) => ({ Ref: stack.getLogicalId(n.node.defaultChild as ec2.CfnSubnet) }));
      return { subnets: lb.Properties.Subnets as unknown[], app: ids('app'), data: ids('data') };
    };
    const byDefault = build2();
    expect(byDefault.subnets).toHaveLength(3);
    expect(byDefault.subnets).toEqual(byDefault.app);
    const data = build2(() => ({ subnetGroupName: 'data' }));
    expect(data.subnets).toEqual(data.data);
    // Given as subnets of both tiers, data first (aws-cdk-lib's onePerAz skips a subnets selection): the first of each zone.
    const given = build2((vpc) => ({ subnets: [...vpc.selectSubnets({ subnetGroupName: 'data' }).subnets, ...vpc.privateSubnets] }));
    expect(given.subnets).toEqual(given.data);
    // The caller's own filters are not changed.
    const filters: ec2.SubnetFilter[] = [ec2.SubnetFilter.byCidrMask(24)];
    expect(build2(() => ({ subnetFilters: filters, subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS })).subnets).toHaveLength(3);
    expect(filters).toHaveLength(1);
  });

  test('takes every given subnet when their zones are not known at synth (an imported VPC whose zones are a list token)', () => {
    const { stack } = testStack();
    const vpc = ec2.Vpc.fromVpcAttributes(stack, 'Vpc', {
      vpcId: 'vpc-1', vpcCidrBlock: '10.0.0.0/16', availabilityZones: Fn.getAzs(), privateSubnetIds: ['subnet-a', 'subnet-b', 'subnet-c'],
    });
    const cluster = new EksInferenceCluster(stack, 'Cluster', { vpc, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
    new EksInferenceService(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, cluster });
    const [lb] = Object.values(Template.fromStack(stack).findResources('AWS::ElasticLoadBalancingV2::LoadBalancer'));
    expect(lb.Properties.Subnets).toEqual(['subnet-a', 'subnet-b', 'subnet-c']);
  });
});
