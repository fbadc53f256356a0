import { App, CfnResource, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { type Construct } from 'constructs';
import { EksStableDiffusionStack, SD21_CONTRACT, SD21_UNITS } from '../../examples/eks-stable-diffusion';
import { admissionLimits } from '../../lib/core/runtime/admission';
import { EXAMPLE_ENV } from '../../examples/env';
import { builtinValidationOn, cdkJsonContext, nagFindings, nistFindings, UNIT_TEST_APP_PROPS } from '../util';

/** The one CloudFormation resource under a construct (a KubernetesManifest's or a KubernetesPatch's custom resource). */
const cfnOf = (c: Construct) => c.node.findAll().find((r): r is CfnResource => r instanceof CfnResource)!;

describe('examples/eks-stable-diffusion', () => {
  let app: App;
  let stack: EksStableDiffusionStack;

  beforeAll(() => {
    // The one synth of this example with the built-in CloudFormation validation on, as `cdk synth` runs it.
    app = new App({ context: cdkJsonContext() });
    stack = new EksStableDiffusionStack(app, 'EksStableDiffusion', { env: EXAMPLE_ENV });
    const validationOff = builtinValidationOn();
    try {
      app.synth();
    } finally {
      validationOff();
    }
  });

  test('synthesizes offline with validation on and no unacknowledged cdk-nag AwsSolutions or NIST 800-53 rev 5 finding', () => {
    expect(nagFindings(stack)).toEqual([]);
    // Two services on one cluster: every NIST finding fixed or acknowledged with its reason where the resource is made.
    expect(nistFindings(stack)).toEqual([]);
    // Karpenter, KEDA, the Load Balancer Controller and, for the inf2 and trn1 classes, the Neuron device plugin.
    Template.fromStack(stack).resourceCountIs('Custom::AWSCDK-EKS-HelmChart', 4);
  });

  test('takes its zones from the availabilityZones context where the region names them otherwise, and refuses zones of another region', () => {
    const zonesOf = (context: Record<string, unknown>) => {
      const other = new App({ context: { ...cdkJsonContext(), ...context } });
      const s = new EksStableDiffusionStack(other, 'EksStableDiffusion', { env: { account: '111111111111', region: 'ap-northeast-1' } });
      return s.service.vpc.privateSubnets.map((n) => n.availabilityZone);
    };
    expect(zonesOf({ availabilityZones: 'ap-northeast-1a,ap-northeast-1c,ap-northeast-1d' })).toEqual(['ap-northeast-1a', 'ap-northeast-1c', 'ap-northeast-1d']);
    for (const bad of ['ap-northeast-1a,ap-northeast-1a', 'ap-northeast-1,ap-northeast-1a']) {
      expect(() => zonesOf({ availabilityZones: bad })).toThrow(`context availabilityZones is '${bad}'; allowed: two or more zones of ap-northeast-1`);
    }
    expect(() => zonesOf({ availabilityZones: 'us-east-1a,us-east-1b' })).toThrow(
      "EksStableDiffusion: context availabilityZones is 'us-east-1a,us-east-1b'; allowed: two or more zones of ap-northeast-1, comma-separated");
  });

  test('gives the adminPrincipalArn context cluster-admin kubectl access (an access entry), and nobody without it', () => {
    const entriesOf = (context: Record<string, unknown>) => {
      const other = new App({ ...UNIT_TEST_APP_PROPS, context: { ...cdkJsonContext(), ...context } });
      const s = new EksStableDiffusionStack(other, 'EksStableDiffusion', { env: EXAMPLE_ENV });
      return Object.values(Template.fromStack(s).findResources('AWS::EKS::AccessEntry')).map((e) => e.Properties);
    };
    const role = 'arn:aws:iam::111111111111:role/platform/Admin';
    const admin = entriesOf({ adminPrincipalArn: role }).filter((e) => e.PrincipalArn === role);
    // No Type: a STANDARD entry, which takes access policies (aws-cdk-lib 2.269.0 aws-eks-v2 GrantAccessOptions.accessEntryType @default).
    expect(admin).toEqual([expect.objectContaining({
      AccessPolicies: [{
        PolicyArn: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy']] },
        AccessScope: { Type: 'cluster' },
      }],
    })]);
    // Without the context only the library's own entries (the kubectl handler, the Karpenter nodes) exist.
    const without = entriesOf({});
    expect(without.some((e) => e.PrincipalArn === role)).toBe(false);
    expect(entriesOf({ adminPrincipalArn: role })).toHaveLength(without.length + 1);
    expect(() => entriesOf({ adminPrincipalArn: 'arn:aws:sts::111111111111:assumed-role/Admin/alice' })).toThrow(
      "EksStableDiffusion: context adminPrincipalArn is 'arn:aws:sts::111111111111:assumed-role/Admin/alice'; allowed: the ARN of an IAM role or user, " +
      'arn:<partition>:iam::<account>:role/<name> or arn:<partition>:iam::<account>:user/<name>, not an assumed-role session ' +
      '(the role of this session is arn:aws:iam::111111111111:role/Admin, plus its path if it has one)');
    expect(() => entriesOf({ adminPrincipalArn: 'Admin' })).toThrow("context adminPrincipalArn is 'Admin'; allowed: the ARN of an IAM role or user");
  });

  test('attaches to the add-on\'s existing log groups with the existingLogGroups context (an upgrade or a redeploy), and refuses other values', () => {
    const logGroupsOf = (context: Record<string, unknown>) => {
      const other = new App({ ...UNIT_TEST_APP_PROPS, context: { ...cdkJsonContext(), ...context } });
      const s = new EksStableDiffusionStack(other, 'EksStableDiffusion', { env: EXAMPLE_ENV });
      return Object.values(Template.fromStack(s).findResources('AWS::Logs::LogGroup')).map((g) => JSON.stringify(g.Properties.LogGroupName ?? null));
    };
    const containerInsights = (names: string[]) => names.filter((n) => n.includes('/aws/containerinsights/'));
    // Five groups of the add-on created by default; none with the flag (attached by name); 'false' as without it.
    expect(containerInsights(logGroupsOf({}))).toHaveLength(5);
    expect(containerInsights(logGroupsOf({ existingLogGroups: 'true' }))).toEqual([]);
    expect(containerInsights(logGroupsOf({ existingLogGroups: 'false' }))).toHaveLength(5);
    expect(() => logGroupsOf({ existingLogGroups: 'yes' })).toThrow("EksStableDiffusion: context existingLogGroups is 'yes'; allowed: true or false");
  });

  test('deploys the loop\'s signal producers: the add-on with pod identity, the log group, a filter per class, the Triton scrape', () => {
    const t = Template.fromStack(stack);
    const addon = Object.values(t.findResources('AWS::EKS::Addon', { Properties: { AddonName: 'amazon-cloudwatch-observability' } }));
    expect(addon).toHaveLength(1);
    expect(addon[0].Properties.PodIdentityAssociations).toEqual([expect.objectContaining({ ServiceAccount: 'cloudwatch-agent' })]);
    t.hasResourceProperties('AWS::Logs::LogGroup', { LogGroupName: `/aws/containerinsights/${stack.service.clusterName}/application` });
    t.resourceCountIs('AWS::Logs::MetricFilter', SD21_UNITS.length + stack.chat.units.length);
    const scraper = JSON.parse(addon[0].Properties.ConfigurationValues).agents.find((a: { name: string }) => a.name === 'cai-model-server-scraper');
    // One add-on scrapes the engines of both services.
    expect(scraper.prometheus.config.scrape_configs.map((j: { job_name: string }) => j.job_name)).toEqual([
      'cai-sd21-a10g-triton', 'cai-sd21-l4-triton', 'cai-chat-l40s-vllm', 'cai-chat-a10g-tgi',
    ]);
  });

  test('every class gets the admission limits of admissionLimits() (the function the simulator admits with)', () => {
    for (const unit of stack.service.units) {
      const limits = admissionLimits(unit.cls, SD21_CONTRACT);
      const env = Object.fromEntries(unit.objects.deployment.spec.template.spec.containers[0].env.map((e) => [e.name, e.value]));
      expect([unit.cls.name, env.CAI_MAX_CONCURRENT_REQUESTS, env.CAI_QUEUE_SLOTS, env.CAI_CONCURRENCY_LIMIT]).toEqual([
        unit.cls.name,
        String(limits.maxConcurrentRequests),
        String(limits.queueSlots),
        String(limits.concurrencyLimit),
      ]);
    }
  });

  test('trust is wired: every class gated, only the approved digests admitted, the policy before the workloads', () => {
    const template = Template.fromStack(stack);
    template.resourceCountIs('Custom::ClassArtifactVerification', SD21_UNITS.length + stack.chat.units.length);
    // The repositories are the trust stack's (test/trust/example-stacks.test.ts).
    template.resourceCountIs('AWS::ECR::Repository', 0);
    Template.fromStack(Stack.of(stack.trust)).resourceCountIs('AWS::ECR::Repository', 5);
    const approved = (admission: typeof stack.admission) =>
      admission!.approvals.map((a) => JSON.parse(template.toJSON().Resources[stack.resolve(cfnOf(a).logicalId)].Properties.ApplyPatchJson));
    expect(approved(stack.admission).flatMap((p) => Object.values(p.metadata.annotations))).toEqual(
      expect.arrayContaining(stack.service.units.map((u) => u.cls.artifact.image)),
    );
    for (const unit of stack.service.units) {
      expect(unit.manifests.workload.node.dependencies).toContain(stack.admission);
    }
    for (const unit of stack.chat.units) {
      expect(unit.manifests.workload.node.dependencies).toContain(stack.chat.admission);
    }
    // The approved images change only once the artifacts they name are verified: a check that fails leaves the policy
    // that admits what runs now.
    const resources = template.toJSON().Resources as Record<string, { Type: string; DependsOn?: string[] }>;
    const checks = new Set(Object.keys(resources).filter((id) => resources[id].Type === 'Custom::ClassArtifactVerification'));
    const checksBefore = (c: Construct) =>
      (resources[stack.resolve(cfnOf(c).logicalId) as string].DependsOn ?? []).filter((id) => checks.has(id)).length;
    for (const [admission, classes] of [[stack.admission!, SD21_UNITS.length], [stack.chat.admission!, stack.chat.units.length]] as const) {
      expect(checksBefore(admission.manifest)).toBe(classes);
      for (const approval of admission.approvals) expect(checksBefore(approval)).toBe(classes);
    }
  });

  test('two services share one cluster and one ALB: one set of controllers, each service its own namespace, forward action and reconciler', () => {
    const t = Template.fromStack(stack);
    t.resourceCountIs('AWS::EKS::Cluster', 1);
    t.resourceCountIs('Custom::AWSCDK-EKS-HelmChart', 4);
    // One Neuron device plugin chart for both services, on the example's Neuron instance types.
    const neuron = Object.values(t.findResources('Custom::AWSCDK-EKS-HelmChart', { Properties: { Chart: 'neuron-helm-chart' } }));
    expect(neuron).toHaveLength(1);
    expect(JSON.parse(neuron[0].Properties.Values).neuronInstances).toEqual(expect.arrayContaining(['inf2.xlarge', 'trn1.2xlarge']));
    t.resourcePropertiesCountIs('AWS::EKS::Addon', { AddonName: 'amazon-cloudwatch-observability' }, 1);
    // The chat service is a rule on the image service's listener (the OpenAI-compatible paths).
    t.resourceCountIs('AWS::ElasticLoadBalancingV2::LoadBalancer', 1);
    t.resourceCountIs('AWS::ElasticLoadBalancingV2::Listener', 1);
    t.hasResourceProperties('AWS::ElasticLoadBalancingV2::ListenerRule', {
      Priority: 10, Conditions: [{ Field: 'path-pattern', PathPatternConfig: { Values: ['/v1/*'] } }],
    });
    expect(stack.chat.listener).toBe(stack.service.listener);
    expect([stack.service.namespace, stack.chat.namespace]).toEqual(['sd21', 'chat']);
    expect(stack.service.cluster).toBe(stack.chat.cluster);
    const envs = Object.values(t.findResources('AWS::Lambda::Function')).filter((f) => JSON.stringify(f.Properties.Environment ?? {}).includes('RECONCILER_CONFIG'));
    expect(envs).toHaveLength(2);
  });

  test('the five deployment units of the paper, envelopes from their breaking points (1 token = 1 image)', () => {
    const units = stack.service.units;
    expect(units.map((u) => [u.cls.name, u.cls.instanceType])).toEqual(SD21_UNITS.map((u) => [u.name, u.instanceType]));
    // inf2: 105 requests per 60 s period at 900 ms -> 1.75 images/s, 1.575 in flight -> safe concurrency 2.
    expect(units[0].cls.envelope).toMatchObject({ tokensPerSecondPerReplica: 1.75, safeConcurrency: 2, ttftP95Ms: 900 });
    expect(units.map((u) => u.objects.deployment.spec.template.spec.containers[0].resources.limits)).toEqual([
      expect.objectContaining({ 'aws.amazon.com/neuroncore': '2' }),
      expect.objectContaining({ 'aws.amazon.com/neuroncore': '2' }),
      expect.objectContaining({ 'nvidia.com/gpu': '1' }),
      expect.objectContaining({ 'nvidia.com/gpu': '1' }),
      expect.objectContaining({ 'nvidia.com/gpu': '1' }),
    ]);
  });

  test('each server is probed where it answers: Triton at its own /v2/health paths, the custom servers at theirs (review R222)', () => {
    const probes = Object.fromEntries(stack.service.units.map((u) => {
      const server = u.objects.deployment.spec.template.spec.containers[0];
      return [u.cls.name, [server.startupProbe.httpGet.path, server.readinessProbe.httpGet.path, server.livenessProbe.httpGet.path]];
    }));
    expect(probes).toEqual({
      'inf2': ['/warmup', '/readiness', '/health'],
      'trn1': ['/warmup', '/readiness', '/health'],
      'a10g-triton': ['/v2/health/live', '/v2/health/ready', '/v2/health/live'],
      'l4-triton': ['/v2/health/live', '/v2/health/ready', '/v2/health/live'],
      'a10g-cuda': ['/warmup', '/readiness', '/health'],
    });
    expect(Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('eks-probe-paths'))).toEqual([]);
  });

  test('the chat service\'s TGI class, whose weights are in its image, is warned: TGI would convert .bin/.pt on the read-only root', () => {
    // The example's values stay: an image with safetensors weights starts; the warning is the user's to acknowledge.
    expect(Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('weights-conversion')).map((w) => w.id)).toEqual(['/EksStableDiffusion/Chat']);
    expect(Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('eks-weights-conversion-a10g-tgi'))).toHaveLength(1);
  });

  test('KEDA targets are the breaking points less the 20 % headroom, in requests per 60 s', () => {
    const targets = stack.service.units.map((u) => Number(u.objects.scaledObject.spec.triggers[0].metadata.targetMetricValue));
    SD21_UNITS.forEach((u, i) => expect(targets[i]).toBeCloseTo(u.breakingPoint / 1.2, 1));
  });

  test('the cheapest class per image (inf2) is preferred and carries the peak; fallbacks keep one warm replica', () => {
    const plan = stack.service.plan;
    expect(plan.classes.map((c) => [c.name, c.role, c.minReplicas])).toEqual([
      ['inf2', 'preferred', 5],
      ['trn1', 'fallback', 1],
      ['a10g-triton', 'fallback', 1],
      ['l4-triton', 'fallback', 1],
      ['a10g-cuda', 'fallback', 1],
    ]);
    const usdPerMillion = plan.classes.map((c) => c.usdPerMillionTokens);
    expect([...usdPerMillion].sort((a, b) => a - b)).toEqual(usdPerMillion);
    expect(stack.service.initialWeights.inf2).toBeGreaterThan(50);
  });
});
