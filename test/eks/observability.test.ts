/* eslint-disable max-len -- expected messages are asserted whole */
import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
import { Duration, type Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Reconciler } from '../../lib/control/reconciler';
import { matchesFilterPattern } from '../../lib/core/metrics/filter-pattern';
import { karpenterCapacityErrorPattern } from '../../lib/core/metrics/karpenter-capacity';
import { signalContractProblems } from '../../lib/core/metrics/template-check';
import { EksInferenceService, type EksInferenceServiceProps } from '../../lib/eks/inference-service';
import { OBSERVABILITY_ADDON_VERSION } from '../../lib/eks/observability-addon';
import { KARPENTER_PODS } from '../../lib/eks/observability-addon';
import { ACCELERATOR_TAINTS, SERVING_TAINT } from '../../lib/eks/manifests/karpenter';
import { SCRAPER_RESOURCES } from '../../lib/core/platform/system-nodes';
import { Metrics } from '../../lib/core/metrics/contract';
import { ACCOUNT, allows, grantedActions, REGION, roleStatements } from '../permissions/iam-policy';
import { InferenceObservability } from '../../lib/control/observability';
import { signalPlan } from '../../lib/core/reconciler/signal-sources';
import { FETCHER_IMAGE, LLAMA_CONTRACT, llamaClasses, nagFindings, testStack, tolerates } from '../util';

function build(overrides: Partial<EksInferenceServiceProps> = {}): { stack: Stack; service: EksInferenceService; template: Template } {
  const { stack } = testStack();
  const service = new EksInferenceService(stack, 'Llama', {
    contract: LLAMA_CONTRACT, classes: llamaClasses(), clusterName: 'prod', modelDataFetcherImage: FETCHER_IMAGE,
    kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'), ...overrides,
  });
  const obs = new InferenceObservability(stack, 'Observability', { serving: service });
  new Reconciler(stack, 'Reconciler', { serving: service, capacityAlarms: obs.capacityAlarms });
  return { stack, service, template: Template.fromStack(stack) };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a parsed add-on configuration, asserted field by field
function addonConfig(template: Template): Record<string, any> {
  const addon = Object.values(template.findResources('AWS::EKS::Addon', { Properties: { AddonName: 'amazon-cloudwatch-observability' } }))[0];
  return JSON.parse(addon.Properties.ConfigurationValues);
}

interface NodeSelectorTerm { matchExpressions: Array<{ key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }> }

/** Whether a node with `labels` satisfies required node affinity terms (any term; every expression of it). */
function admits(terms: NodeSelectorTerm[], labels: Record<string, string>): boolean {
  return terms.some((t) => t.matchExpressions.every((e) => {
    const v = labels[e.key];
    switch (e.operator) {
      case 'In': return v !== undefined && e.values!.includes(v);
      case 'NotIn': return v === undefined || !e.values!.includes(v);
      case 'Exists': return v !== undefined;
      case 'DoesNotExist': return v === undefined;
    }
  }));
}


describe('EKS signal producers', () => {
  let stack: Stack;
  let service: EksInferenceService;
  let template: Template;
  beforeAll(() => ({ stack, service, template } = build()));

  test('installs the pinned amazon-cloudwatch-observability add-on with a pod identity for its agent', () => {
    template.hasResourceProperties('AWS::EKS::Addon', {
      AddonName: 'amazon-cloudwatch-observability',
      AddonVersion: OBSERVABILITY_ADDON_VERSION,
      PodIdentityAssociations: [{ ServiceAccount: 'cloudwatch-agent', RoleArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('AgentRole'), 'Arn'] } }],
    });
    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: { Statement: [Match.objectLike({ Action: ['sts:AssumeRole', 'sts:TagSession'], Principal: { Service: 'pods.eks.amazonaws.com' } })] },
      ManagedPolicyArns: Match.absent(),
    });
  });

  test("the agent's pod identity writes only this cluster's Container Insights log groups and no metric of the library's namespace", () => {
    const role = Object.keys(template.findResources('AWS::IAM::Role')).find((id) => id.includes('ObservabilityAgentRole'))!;
    const statements = roleStatements(template.toJSON(), role);
    const group = (name: string) => `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:/aws/containerinsights/prod/${name}`;
    const put = (resource: string) => ({ action: 'logs:PutLogEvents', resource, context: {} });
    for (const name of ['application', 'dataplane', 'host', 'performance', 'prometheus']) {
      expect(allows(statements, put(`${group(name)}:log-stream:ip-10-0-1-23.ec2.internal-application.var.log.containers.x`))).toBe(true);
      expect(allows(statements, { action: 'logs:CreateLogGroup', resource: group(name), context: {} })).toBe(true);
    }
    // Not the reconciler's audit trail, not another cluster's groups, not retention.
    expect(allows(statements, put(`arn:aws:logs:${REGION}:${ACCOUNT}:log-group:/aws/lambda/reconciler:log-stream:x`))).toBe(false);
    expect(allows(statements, put(`arn:aws:logs:${REGION}:${ACCOUNT}:log-group:/aws/containerinsights/other/application:log-stream:x`))).toBe(false);
    expect(allows(statements, { action: 'logs:PutRetentionPolicy', resource: group('application'), context: {} })).toBe(false);
    // PutMetricData only in the ContainerInsights namespace: never the contract's ReplicaFloor or PolicyMode.
    const putMetric = (namespace: string) => ({ action: 'cloudwatch:PutMetricData', resource: '*', context: { 'cloudwatch:namespace': namespace } });
    expect(allows(statements, putMetric('ContainerInsights'))).toBe(true);
    expect(allows(statements, putMetric(Metrics.replicaFloor.namespace))).toBe(false);
    expect(grantedActions(statements)).toEqual(['cloudwatch:PutMetricData', 'ec2:DescribeTags', 'ec2:DescribeVolumes', 'logs:CreateLogGroup',
      'logs:CreateLogStream', 'logs:DescribeLogStreams', 'logs:PutLogEvents']);
  });

  test('the capacity-error filters name the pods Karpenter really runs in: release karpenter of chart karpenter in its namespace', () => {
    const chart = Object.values(template.findResources('Custom::AWSCDK-EKS-HelmChart', { Properties: { Chart: 'karpenter' } }))[0];
    // The chart's fullname is the release name when that contains the chart name: the Deployment and its pods are karpenter-*.
    expect(`${chart.Properties.Release}-`).toBe(KARPENTER_PODS.podNamePrefix);
    expect(chart.Properties.Namespace).toBe(KARPENTER_PODS.namespace);
  });

  test('creates every log group the add-on writes, encrypted, retained and with retention, before the add-on (review R225)', () => {
    const groups = template.findResources('AWS::Logs::LogGroup', { Properties: { LogGroupName: Match.stringLikeRegexp('^/aws/containerinsights/prod/') } });
    // Fluent Bit's application, dataplane and host, the agent's performance and prometheus: none left for the add-on to
    // create at run time without retention or key, outside the stack.
    expect(Object.values(groups).map((g) => g.Properties.LogGroupName).sort()).toEqual(['application', 'dataplane', 'host', 'performance', 'prometheus']
      .map((g) => `/aws/containerinsights/prod/${g}`));
    for (const g of Object.values(groups)) {
      expect(g.Properties).toEqual(expect.objectContaining({ RetentionInDays: 30, KmsKeyId: { 'Fn::GetAtt': [expect.stringMatching(/LogKey/), 'Arn'] } }));
      expect(g.DeletionPolicy).toBe('Retain');
    }
    const addon = Object.values(template.findResources('AWS::EKS::Addon', { Properties: { AddonName: 'amazon-cloudwatch-observability' } }))[0];
    expect(addon.DependsOn).toEqual(expect.arrayContaining(Object.keys(groups)));
  });

  test('one capacity-error metric filter per class NodePool on the application log group, matching Karpenter 1.14 lines', () => {
    const filters = Object.values(template.findResources('AWS::Logs::MetricFilter'));
    expect(filters).toHaveLength(3);
    const pools = service.units.map((u) => u.nodePoolName);
    for (const u of service.units) {
      const f = filters.find((x) => x.Properties.MetricTransformations[0].MetricName === `InsufficientCapacity/prod/${u.nodePoolName}`)!;
      expect(f.Properties.FilterPattern).toBe(karpenterCapacityErrorPattern(u.nodePoolName, KARPENTER_PODS, pools));
      expect(f.Properties.MetricTransformations[0]).toEqual({ MetricName: `InsufficientCapacity/prod/${u.nodePoolName}`, MetricNamespace: 'CapacityAwareInference/Karpenter', MetricValue: '1' });
      const line = (kubernetes: Record<string, string>) => JSON.stringify({ kubernetes, log_processed: { message: 'failed launching nodeclaim',
        NodeClaim: { name: `${u.nodePoolName}-a1b2c` }, error: 'creating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: ...' } });
      expect(matchesFilterPattern(f.Properties.FilterPattern, line({ namespace_name: 'kube-system', pod_name: 'karpenter-5f7b9c-x2k4p', container_name: 'controller' }))).toBe(true);
      expect(matchesFilterPattern(f.Properties.FilterPattern, line({ namespace_name: 'llama3-chat', pod_name: 'karpenter-5f7b9c-x2k4p', container_name: 'controller' }))).toBe(false);
    }
  });

  test('a dedicated deployment-mode agent scrapes the vLLM classes by their pod labels and publishes contract names with Service and CapacityClass', () => {
    const config = addonConfig(template);
    expect(config.containerLogs).toEqual({ enabled: true });
    expect(config.containerInsights).toEqual({ enabled: true });
    expect(config.applicationSignals).toEqual({ enabled: false });
    expect(config.agents[0]).toEqual({ name: 'cloudwatch-agent' });
    const scraper = config.agents[1];
    expect(scraper).toEqual(expect.objectContaining({ name: 'cai-model-server-scraper', mode: 'deployment', replicas: 1 }));
    const jobs = scraper.prometheus.config.scrape_configs;
    // l40s and a10g run vLLM; inf2 runs an engine whose metrics the library does not know.
    expect(jobs.map((j: { job_name: string }) => j.job_name)).toEqual(['cai-llama3-chat-l40s', 'cai-llama3-chat-a10g']);
    expect(jobs[0].relabel_configs[0]).toEqual({ source_labels: ['__meta_kubernetes_pod_label_capacity_aware_inference_class'], regex: 'l40s', action: 'keep' });
    expect(jobs[0].metric_relabel_configs).toEqual(expect.arrayContaining([
      { source_labels: ['__name__'], regex: 'vllm:generation_tokens_total', target_label: '__name__', replacement: 'GeneratedTokens', action: 'replace' },
    ]));
    const emf = scraper.config.logs.metrics_collected.prometheus.emf_processor;
    expect(emf.metric_namespace).toBe('CapacityAwareInference');
    expect(emf.metric_declaration).toEqual(expect.arrayContaining([
      expect.objectContaining({ source_labels: ['Service'], label_matcher: '^llama3-chat$', dimensions: [['Service', 'CapacityClass'], ['Service']],
        metric_selectors: expect.arrayContaining(['^GeneratedTokens$', '^PromptTokens$']) }),
    ]));
  });

  test('the scraper runs on the system nodes only: never on a Karpenter node, whose emptiness it would block (the GPU or Neuron node would run for good)', () => {
    const scraper = addonConfig(template).agents.find((a: { name: string }) => a.name === 'cai-model-server-scraper');
    const terms: NodeSelectorTerm[] = scraper.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms;
    // Helm's merge of the entry over `agent` replaces lists: the entry carries the chart's Fargate exclusion itself.
    expect(terms).toEqual([{ matchExpressions: [
      { key: 'eks.amazonaws.com/compute-type', operator: 'NotIn', values: ['fargate'] },
      { key: 'karpenter.sh/nodepool', operator: 'DoesNotExist' },
    ] }]);
    const system = { 'kubernetes.io/os': 'linux', 'eks.amazonaws.com/nodegroup': 'DefaultCapacity', 'node.kubernetes.io/instance-type': 'm7i.large' };
    expect(admits(terms, system)).toBe(true);
    for (const u of service.units) {
      // Every node Karpenter launches for a class carries its NodePool's name.
      expect(admits(terms, { ...system, 'karpenter.sh/nodepool': u.objects.nodePool.metadata.name, 'node.kubernetes.io/instance-type': 'g6e.xlarge' })).toBe(false);
    }
    expect(admits(terms, { ...system, 'eks.amazonaws.com/compute-type': 'fargate' })).toBe(false);
    // Its own tolerations replace the chart's root `- operator: Exists`: no accelerator taint, no cordon.
    expect(scraper.tolerations).toEqual([{ key: 'CriticalAddonsOnly', operator: 'Exists' }]);
    expect(tolerates([{ operator: 'Exists' }], ACCELERATOR_TAINTS.gpu)).toBe(true); // what the root toleration would do
    for (const taint of [SERVING_TAINT, ...Object.values(ACCELERATOR_TAINTS), { key: 'node.kubernetes.io/unschedulable', value: '', effect: 'NoSchedule' }]) {
      expect(tolerates(scraper.tolerations, taint)).toBe(false);
    }
    // The requests the system node group is sized for.
    expect(scraper.resources).toEqual(SCRAPER_RESOURCES);
    // The per-node agent keeps the chart's tolerations: a DaemonSet pod never keeps a node from being empty.
    expect(addonConfig(template).agents[0]).toEqual({ name: 'cloudwatch-agent' });
  });

  test("each running serving pod is scraped once: of the targets pod discovery makes (a container's ports, a portless init container), one survives", () => {
    const jobs: Array<{ job_name: string; relabel_configs: Array<{ source_labels?: string[]; regex?: string; action?: string }> }> =
      addonConfig(template).agents[1].prometheus.config.scrape_configs;
    const scraped = service.units.filter((u) => jobs.some((j) => j.job_name === `cai-llama3-chat-${u.cls.name}`));
    expect(scraped.map((u) => u.cls.name)).toEqual(['l40s', 'a10g']);
    for (const unit of scraped) {
      const job = jobs.find((j) => j.job_name === `cai-llama3-chat-${unit.cls.name}`)!;
      const pod = unit.objects.deployment.spec.template;
      expect(pod.spec.initContainers?.length).toBeGreaterThan(0); // the model-data fetcher
      // Prometheus pod discovery (prometheus@v3.0.1 discovery/kubernetes/pod.go): a target per container port, one per
      // container (init containers included) that has none.
      const podLabels = Object.fromEntries(Object.entries(pod.metadata!.labels!).map(([k, v]) => [`__meta_kubernetes_pod_label_${k.replace(/[^a-zA-Z0-9_]/g, '_')}`, v]));
      const targets = [...pod.spec.initContainers ?? [], ...pod.spec.containers].flatMap((c) => {
        const ports: Array<{ name?: string }> = (c as { ports?: Array<{ name?: string }> }).ports ?? [];
        return (ports.length > 0 ? ports : [{}]).map((port) => ({
          ...podLabels, __meta_kubernetes_pod_phase: 'Running', __meta_kubernetes_pod_container_name: c.name, __meta_kubernetes_pod_container_port_name: port.name ?? '',
        } as Record<string, string>));
      });
      expect(targets.length).toBeGreaterThan(1);
      const kept = targets.filter((t) => job.relabel_configs.filter((r) => r.action === 'keep')
        .every((r) => new RegExp(`^(?:${r.regex})$`).test(r.source_labels!.map((l) => t[l] ?? '').join(';'))));
      expect(kept.map((t) => t.__meta_kubernetes_pod_container_name)).toEqual(['model-server']);
    }
  });

  test('the reconciler reads served tokens from the scrape where vLLM counts them, requests x mean tokens elsewhere', () => {
    const fn = Object.values(template.findResources('AWS::Lambda::Function', { Properties: { Environment: { Variables: { RECONCILER_CONFIG: Match.anyValue() } } } }))[0];
    const raw = fn.Properties.Environment.Variables.RECONCILER_CONFIG;
    const text = typeof raw === 'string' ? raw : raw['Fn::Join'][1].map((p: unknown) => (typeof p === 'string' ? p : 'TOKEN')).join('');
    const config = JSON.parse(text);
    expect(config.karpenterCapacityErrors).toBe(true);
    // The scrape publishes the contract's GeneratedTokens: named per route, derived in the reconciler (4 KB environment).
    expect(config.contractTokenCounters).toEqual(['l40s', 'a10g']);
    const plan = signalPlan(config, 60).classes;
    expect(plan.l40s.servedTokensPerSecond).toEqual({ metric: {
      namespace: 'CapacityAwareInference', metricName: 'GeneratedTokens', dimensions: { Service: 'llama3-chat', CapacityClass: 'l40s' }, stat: 'Sum',
    }, scale: 1 / 60 });
    // Requests x mean tokens elsewhere: ALB RequestCount.
    const others = Object.keys(plan).filter((n) => !['l40s', 'a10g'].includes(n));
    expect(others.length).toBeGreaterThan(0);
    for (const n of others) expect(plan[n].servedTokensPerSecond).toMatchObject({ metric: { metricName: 'RequestCount' } });
  });

  test('closes the loop: every metric read has a producer, and no cdk-nag finding is left', () => {
    expect(signalContractProblems(template.toJSON())).toEqual([]);
    expect(nagFindings(stack)).toEqual([]);
  });
});

describe('EKS signal producers on a cluster that already runs the add-on', () => {
  test('does not install it, attaches the filters to the existing log group and records the external producer', () => {
    const { template } = build({ observability: { existingAddon: { configurationValues: { containerLogs: { enabled: true } } } } });
    template.resourcePropertiesCountIs('AWS::EKS::Addon', { AddonName: 'amazon-cloudwatch-observability' }, 0);
    template.resourcePropertiesCountIs('AWS::Logs::LogGroup', { LogGroupName: '/aws/containerinsights/prod/application' }, 0);
    template.resourcePropertiesCountIs('AWS::Logs::MetricFilter', { LogGroupName: '/aws/containerinsights/prod/application' }, 3);
    expect(template.toJSON().Metadata['cdk-capacity-aware-inference:external-producers']).toEqual(['amazon-cloudwatch-observability']);
    // Without the scraper merged into that add-on, tokens are requests x mean tokens: nothing reads a scraped metric.
    expect(signalContractProblems(template.toJSON())).toEqual([]);
    expect(JSON.stringify(template.toJSON())).not.toContain('GeneratedTokens');
  });

  test('with the scraper merged into that add-on (modelServerScrape), the scraped metrics are read and accounted for', () => {
    const { template } = build({ observability: { existingAddon: { modelServerScrape: true } } });
    const [external] = template.toJSON().Metadata['cdk-capacity-aware-inference:external-agents'];
    expect(external.name).toBe('cai-model-server-scraper');
    // The entry to merge keeps the scraper off Karpenter's nodes there too.
    expect(JSON.stringify(external.affinity)).toContain('"key":"karpenter.sh/nodepool","operator":"DoesNotExist"');
    expect(external.tolerations).toEqual([{ key: 'CriticalAddonsOnly', operator: 'Exists' }]);
    expect(JSON.stringify(template.toJSON())).toContain('GeneratedTokens');
    expect(signalContractProblems(template.toJSON())).toEqual([]);
  });

  test('fails at synth on told settings the loop cannot work with, and on invalid options', () => {
    expect(() => build({
      observability: {
        addonVersion: 'latest',
        existingAddon: { configurationValues: { containerLogs: { enabled: false }, containerInsights: { enabled: false }, agent: { config: { logs: {} } } } },
      },
    })).toThrow(new RegExp([
      "EksInferenceService 'Test/Llama' is invalid \\(5 problems\\):",
      "  - observability.addonVersion: is 'latest'; allowed: an exact add-on version",
      '  - observability.existingAddon: is set together with observability.addonVersion, which has no effect',
      '  - observability.existingAddon.configurationValues.containerLogs.enabled: is false; allowed: true or unset',
      '  - observability.existingAddon.configurationValues.containerInsights.enabled: is false; allowed: true or unset',
      '  - observability.existingAddon.configurationValues.agent.config: has no logs.metrics_collected.kubernetes.enhanced_container_insights: true',
    ].map((line) => `${line}.*`).join('\\n')));
  });

  test('fails when the default agents entry runs its own config without enhanced Container Insights; other agents may run any config', () => {
    const plain = { logs: { metrics_collected: { kubernetes: {} } } };
    const enhanced = { logs: { metrics_collected: { kubernetes: { enhanced_container_insights: true } } } };
    const problem = 'has no logs.metrics_collected.kubernetes.enhanced_container_insights: true';
    // An entry without a name is the chart's cloudwatch-agent, and its own config replaces agent.config.
    expect(() => build({ observability: { existingAddon: { configurationValues: { agent: { config: enhanced }, agents: [{ config: plain }] } } } }))
      .toThrow(`  - observability.existingAddon.configurationValues.agents[0].config: ${problem}`);
    expect(() => build({ observability: { existingAddon: { configurationValues: { agents: [{ name: 'scraper', config: plain }, { name: 'cloudwatch-agent', config: plain }] } } } }))
      .toThrow(`  - observability.existingAddon.configurationValues.agents[1].config: ${problem}`);
    expect(() => build({ observability: { existingAddon: { configurationValues: { agents: [{ name: 'cloudwatch-agent' }, { name: 'scraper', config: plain }] } } } }))
      .not.toThrow();
    // Null or empty: the chart's `if $agent.config` is false, and the agent runs the add-on's default config (R204).
    expect(() => build({ observability: { existingAddon: { configurationValues: { agent: { config: null }, agents: [{ config: {} }] } } } })).not.toThrow();
  });

  test('fails on a scrape interval the agent would drop token deltas at (over 240 s) or that splits unevenly over minutes', () => {
    expect(() => build({ observability: { scrapeInterval: Duration.minutes(5) } }))
      .toThrow('  - observability.scrapeInterval: is 300 s; allowed: a whole number from 10 to 240 s');
    expect(() => build({ observability: { scrapeInterval: Duration.seconds(45) } }))
      .toThrow('  - observability.scrapeInterval: is 45 s; allowed: a divisor of 60 s (10, 12, 15, 20, 30 or 60 s) or whole minutes (120, 180 or 240 s)');
    expect(() => build({ observability: { scrapeInterval: Duration.seconds(90) } })).toThrow('observability.scrapeInterval: is 90 s');
    for (const seconds of [15, 30, 180, 240]) expect(() => build({ observability: { scrapeInterval: Duration.seconds(seconds) } })).not.toThrow();
  });

  test('fails when the configuration values are the JSON string CloudFormation takes and say container logs are off (the string is checked too)', () => {
    expect(() => build({ observability: { existingAddon: { configurationValues: JSON.stringify({ containerLogs: { enabled: false } }) } } }))
      .toThrow('  - observability.existingAddon.configurationValues.containerLogs.enabled: is false; allowed: true or unset');
    expect(() => build({ observability: { existingAddon: { configurationValues: '{ not json' } } }))
      .toThrow('  - observability.existingAddon.configurationValues: is a string that is not a JSON object; allowed: the configuration values as an object');
  });

  test('fails when retention or key settings would be dropped with an existing add-on, and accepts them when the construct creates the log group', () => {
    expect(() => build({ observability: { logRetention: 7, existingAddon: {} } })).toThrow(
      '  - observability.existingAddon: is set together with observability.logRetention, which has no effect; allowed: no addonVersion, '
      + 'and no logRetention or logEncryptionKey unless existingAddon.applicationLogGroupExists is false',
    );
    expect(() => build({ observability: { logRetention: 7, existingAddon: { applicationLogGroupExists: false } } })).not.toThrow();
  });
});

test('the synthesized template tells the operator where each reconciler signal comes from', () => {
  const { template } = build();
  const fn = Object.values(template.findResources('AWS::Lambda::Function', { Metadata: { 'cdk-capacity-aware-inference:signal-sources': Match.anyValue() } }))[0];
  const lines: string[] = fn.Metadata['cdk-capacity-aware-inference:signal-sources'];
  expect(lines).toEqual(expect.arrayContaining([
    expect.stringMatching(/^l40s desiredReplicas: ContainerInsights replicas_desired \[ClusterName, Namespace, PodName\] \(AWS, https:\/\/docs\.aws\.amazon\.com\/AmazonCloudWatch/),
    'l40s capacityErrors: CapacityAwareInference/Karpenter InsufficientCapacity/prod/llama3-chat-l40s [] (produced in this app: docs/signals.md)',
    'l40s servedTokensPerSecond: CapacityAwareInference GeneratedTokens [Service, CapacityClass] (produced in this app: docs/signals.md)',
  ]));
  template.hasResource('AWS::Logs::MetricFilter', { Metadata: { 'cdk-capacity-aware-inference:produces': Match.stringLikeRegexp('^CapacityErrors of class l40s') } });
});
