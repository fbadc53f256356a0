import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
import { App, Annotations as CoreAnnotations, type CfnElement, Fn, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { enginePrometheusMetrics } from '../../lib/core/runtime/engine-metrics';
import { type CapacityClassSpec } from '../../lib/core/service/capacity-class';
import { type ServiceContract } from '../../lib/core/service/contract';
import { EksInferenceCluster, type EksInferenceClusterProps } from '../../lib/eks/cluster';
import { ACCELERATOR_TAINTS } from '../../lib/eks/manifests/karpenter';
import { NEURON_DEVICE_PLUGIN_TOLERATIONS, neuronDevicePluginImageValues } from '../../lib/eks/neuron-device-plugin';
import { NEURON_DEVICE_PLUGIN_CHART, NEURON_DEVICE_PLUGIN_INSTANCE_TYPES } from '../../lib/eks/versions';
import { HardwareCatalog } from '../../lib/core/hardware/catalog';
import { EksInferenceService } from '../../lib/eks/inference-service';
import { imageApproval } from '../../lib/trust/admission-policy';
import { controllerInlinePolicyChars } from '../../lib/eks/controller-policy-size';
import { InferenceObservability } from '../../lib/control/observability';
import { Reconciler } from '../../lib/control/reconciler';
import { signalContractProblems } from '../../lib/core/metrics/template-check';
import { ISOLATED_NODE_SUBNET_ENDPOINTS } from '../../lib/core/platform/isolated-node-endpoints';
import { KARPENTER_CONTROLLER, SCRAPER_RESOURCES } from '../../lib/core/platform/system-nodes';
import { expectValidManifests, FETCHER_IMAGE, type KubernetesObject, LLAMA_CONTRACT, llamaClasses, nagFindings, renderWithPlaceholders, testStack } from '../util';

/** The Neuron device plugin's image mirrored into a private ECR repository (a pull through cache of ECR Public), by digest. */
const NEURON_MIRROR = `123456789012.dkr.ecr.us-east-1.amazonaws.com/ecr-public/neuron/neuron-device-plugin@sha256:${'c'.repeat(64)}`;

/** A second model with other engines: TGI on L40S, vLLM on A10G. */
const MISTRAL_CONTRACT: ServiceContract = { ...LLAMA_CONTRACT, name: 'mistral-chat', peakRequestsPerSecond: 8 };
function mistralClasses(): CapacityClassSpec[] {
  const [l40s, a10g] = llamaClasses();
  return [
    { ...l40s, runtime: { engine: 'tgi', engineVersion: '3.3.6', maxConcurrentSequences: 16, maxQueueDelayMs: 2000 }, artifact: { ...l40s.artifact, image: l40s.artifact.image.replace('/vllm@', '/tgi@') } },
    a10g,
  ];
}

function appliedObjects(template: Template): KubernetesObject[] {
  return Object.values(template.findResources('Custom::AWSCDK-EKS-KubernetesResource')).flatMap((r) =>
    JSON.parse(renderWithPlaceholders(r.Properties.Manifest)) as KubernetesObject[],
  );
}

function objectKey(o: KubernetesObject): string {
  const meta = o.metadata as { name: string; namespace?: string };
  return `${String(o.kind)} ${meta.namespace ?? '(cluster)'}/${meta.name}`;
}

function twoServices(): { stack: Stack; cluster: EksInferenceCluster; llama: EksInferenceService; mistral: EksInferenceService } {
  const { stack } = testStack();
  const cluster = new EksInferenceCluster(stack, 'Cluster', { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'), approvedImagesAdmission: true });
  const llama = new EksInferenceService(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: llamaClasses(), cluster, modelDataFetcherImage: FETCHER_IMAGE });
  const mistral = new EksInferenceService(stack, 'Mistral', { contract: MISTRAL_CONTRACT, classes: mistralClasses(), cluster, modelDataFetcherImage: FETCHER_IMAGE });
  llama.enableReplicaFloors();
  mistral.enableReplicaFloors();
  return { stack, cluster, llama, mistral };
}

/**
 * The characters IAM counts for the inline policies attached to a role (whitespace excluded), read off the synthesized
 * templates with each token at its longest: the region as us-isof-south-1, each target group ARN in the aws-us-gov
 * partition with a 32-character name.
 */
function renderedInlinePolicyChars(templates: Template[], roleLogicalId: string): number {
  let n = 0;
  const longest = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(longest);
    if (v && typeof v === 'object') {
      const ref = (v as { Ref?: string }).Ref;
      if (ref === 'AWS::Region') return 'us-isof-south-1';
      if (ref !== undefined) return `arn:aws-us-gov:elasticloadbalancing:us-isof-south-1:123456789012:targetgroup/${'n'.repeat(32)}/${(n++).toString(16).padStart(16, '0')}`;
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, longest(x)]));
    }
    return v;
  };
  return templates.flatMap((t) => Object.values(t.findResources('AWS::IAM::Policy')))
    .filter((p) => JSON.stringify(p.Properties.Roles).includes(roleLogicalId))
    .reduce((sum, p) => sum + JSON.stringify(longest(p.Properties.PolicyDocument)).length, 0);
}

/** `n` target group ARNs of a service, keyed by class name. */
function targetGroupArns(service: number, n: number): Record<string, string> {
  return Object.fromEntries(Array.from({ length: n }, (_, k) => [`c${k}`, `arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/s${service}-c${k}/0123456789abcdef`]));
}

/** The controller's target-registration statements of a template, with the roles of the policy holding each. */
function registrations(t: Template): { id: string; roles: unknown; statement: { Action: unknown; Resource: unknown } }[] {
  return Object.entries(t.findResources('AWS::IAM::Policy')).flatMap(([id, p]) =>
    (p.Properties.PolicyDocument.Statement as { Sid?: string; Action: unknown; Resource: unknown }[])
      .filter((st) => st.Sid === 'RegisterPodsInOwnedTargetGroups').map((statement) => ({ id, roles: p.Properties.Roles, statement })));
}

/** Each unit's target group has one policy of its own, naming it alone, and its TargetGroupBinding waits for it. */
function expectOnePolicyPerTargetGroup(t: Template, stack: Stack, units: readonly EksInferenceService['units'][number][], roles: unknown): void {
  const all = registrations(t);
  expect(all).toHaveLength(units.length);
  const resources = t.toJSON().Resources as Record<string, { DependsOn?: string[] }>;
  for (const u of units) {
    const own = all.filter((r) => JSON.stringify(r.statement.Resource) === JSON.stringify(stack.resolve(u.targetGroup.targetGroupArn)));
    expect(own).toHaveLength(1);
    expect(own[0].statement.Action).toEqual(['elasticloadbalancing:RegisterTargets', 'elasticloadbalancing:DeregisterTargets']);
    expect(own[0].roles).toEqual(roles);
    const binding = stack.resolve((u.manifests.binding.node.defaultChild as unknown as { logicalId: string }).logicalId) as string;
    expect(resources[binding].DependsOn).toContain(own[0].id);
  }
}

describe('two services on one EksInferenceCluster', () => {
  let stack: Stack;
  let template: Template;
  let cluster: EksInferenceCluster;
  let llama: EksInferenceService;
  let mistral: EksInferenceService;

  beforeAll(() => {
    ({ stack, cluster, llama, mistral } = twoServices());
    template = Template.fromStack(stack);
  });

  test('the cluster-level resources exist once: one cluster, four charts (the Neuron device plugin for the inf2 class), one add-on, two log groups', () => {
    template.resourceCountIs('AWS::EKS::Cluster', 1);
    template.resourceCountIs('Custom::AWSCDK-EKS-HelmChart', 4);
    template.resourcePropertiesCountIs('Custom::AWSCDK-EKS-HelmChart', { Chart: 'neuron-helm-chart' }, 1);
    template.resourceCountIs('AWS::EKS::Addon', 2); // the observability add-on and the Pod Identity agent of the new cluster
    template.resourcePropertiesCountIs('AWS::EKS::Addon', { AddonName: 'amazon-cloudwatch-observability' }, 1);
    for (const kind of ['application', 'prometheus']) {
      template.resourcePropertiesCountIs('AWS::Logs::LogGroup', { LogGroupName: `/aws/containerinsights/${cluster.clusterName}/${kind}` }, 1);
    }
    template.resourceCountIs('AWS::SQS::Queue', 1);
    template.resourceCountIs('AWS::Events::Rule', 5);
  });

  test('the four controller charts wait for the system node group: installed once it is up, removed before it on destroy', () => {
    const nodegroups = Object.keys(template.findResources('AWS::EKS::Nodegroup'));
    expect(nodegroups).toHaveLength(1);
    const charts = Object.values(template.findResources('Custom::AWSCDK-EKS-HelmChart'));
    expect(charts.map((c) => c.Properties.Chart).sort()).toEqual(['aws-load-balancer-controller', 'karpenter', 'keda', 'neuron-helm-chart']);
    for (const chart of charts) expect(chart.DependsOn).toContain(nodegroups[0]);
  });

  test('each service owns its routing, and no CloudFormation resource is defined twice', () => {
    template.resourceCountIs('AWS::ElasticLoadBalancingV2::LoadBalancer', 2);
    template.resourceCountIs('AWS::ElasticLoadBalancingV2::TargetGroup', llama.units.length + mistral.units.length);
    template.resourceCountIs('AWS::Logs::MetricFilter', llama.units.length + mistral.units.length);
    // What must be unique in an account or cluster, by the properties that name it.
    const identity: Record<string, (p: Record<string, unknown>) => unknown> = {
      'AWS::EKS::Cluster': (p) => p.Name,
      'Custom::AWSCDK-EKS-HelmChart': (p) => [p.Release, p.Namespace],
      'AWS::EKS::Addon': (p) => p.AddonName,
      'AWS::Logs::LogGroup': (p) => p.LogGroupName,
      'AWS::Logs::MetricFilter': (p) => [p.LogGroupName, p.MetricTransformations],
      'AWS::EKS::PodIdentityAssociation': (p) => [p.Namespace, p.ServiceAccount],
      'AWS::EKS::AccessEntry': (p) => p.PrincipalArn,
    };
    const keys = Object.values(template.toJSON().Resources as Record<string, { Type: string; Properties: Record<string, unknown> }>)
      .filter((r) => identity[r.Type])
      .map((r) => `${r.Type} ${JSON.stringify(stack.resolve(identity[r.Type](r.Properties)))}`);
    expect(keys.length).toBeGreaterThan(20);
    expect(keys.filter((k, i) => keys.indexOf(k) !== i)).toEqual([]);
  });

  test('no Kubernetes object is applied twice, and every one validates against the real schemas (CRDs, CEL rules)', () => {
    const applied = appliedObjects(template);
    const keys = applied.map(objectKey);
    expect(keys.filter((k, i) => keys.indexOf(k) !== i)).toEqual([]);
    expect(applied.filter((o) => o.kind === 'NodePool')).toHaveLength(5);
    expect(applied.filter((o) => o.kind === 'Namespace').map((o) => (o.metadata as { name: string }).name).sort()).toEqual(['llama3-chat', 'mistral-chat']);
    expectValidManifests(applied);
  });

  test('the Load Balancer Controller registers pods in the target groups of both services and no others, one policy each', () => {
    const role = [{ Ref: expect.stringMatching(/LoadBalancerControllerRole/) }];
    expectOnePolicyPerTargetGroup(template, stack, [...llama.units, ...mistral.units], role);
  });

  test('the add-on scrapes the classes of both services, and each class has its own capacity-error metric', () => {
    const addon = Object.values(template.findResources('AWS::EKS::Addon', { Properties: { AddonName: 'amazon-cloudwatch-observability' } }))[0];
    const scraper = JSON.parse(addon.Properties.ConfigurationValues).agents.find((a: { name: string }) => a.name === 'cai-model-server-scraper');
    const scraped = [llama, mistral].flatMap((svc) => svc.units.filter((u) => enginePrometheusMetrics(u.cls.runtime.engine)).map((u) => `cai-${svc.plan.service}-${u.cls.name}`));
    expect(scraped).toEqual(expect.arrayContaining(['cai-llama3-chat-l40s', 'cai-mistral-chat-l40s', 'cai-mistral-chat-a10g']));
    expect(scraper.prometheus.config.scrape_configs.map((j: { job_name: string }) => j.job_name)).toEqual(scraped);
    const declarations = scraper.config.logs.metrics_collected.prometheus.emf_processor.metric_declaration as { label_matcher: string }[];
    const matchers = declarations.map((d) => d.label_matcher);
    expect(new Set(matchers)).toEqual(new Set(['^llama3-chat$', '^mistral-chat$']));
    const capacity = llama.servingDescription().signals.classes.l40s.capacityErrors!;
    expect(capacity.metricName).toBe(`InsufficientCapacity/${cluster.clusterName}/llama3-chat-l40s`);
    expect(mistral.servingDescription().signals.classes.l40s.capacityErrors!.metricName).toBe(`InsufficientCapacity/${cluster.clusterName}/mistral-chat-l40s`);
  });

  test('each namespace gets its own approved-images policy, in force before its pods, with the fetcher image and no duplicates', () => {
    const applied = appliedObjects(template).filter((o) => o.kind === 'ValidatingAdmissionPolicy');
    expect(applied.map((o) => (o.metadata as { name: string }).name).sort()).toEqual(['approved-images-llama3-chat', 'approved-images-mistral-chat']);
    // Each image is approved by an annotation a patch of its own adds to the policy.
    const patches = Object.values(template.findResources('Custom::AWSCDK-EKS-KubernetesPatch'));
    const approved = (policy: string) => patches
      .filter((p) => p.Properties.ResourceName === `validatingadmissionpolicies.admissionregistration.k8s.io/${policy}`)
      .flatMap((p) => Object.values(JSON.parse(p.Properties.ApplyPatchJson).metadata.annotations) as string[]);
    for (const o of applied) {
      const images = approved((o.metadata as { name: string }).name);
      expect(images).toContain(FETCHER_IMAGE);
      expect(new Set(images).size).toBe(images.length);
    }
    for (const svc of [llama, mistral]) {
      for (const u of svc.units) expect(u.manifests.workload.node.dependencies).toContain(svc.node.findChild('Admission'));
    }
  });

  test('both services bind replica floors in their own ScaledObjects (no KubernetesPatch but the image approvals)', () => {
    const patched = Object.values(template.findResources('Custom::AWSCDK-EKS-KubernetesPatch')).map((p) => p.Properties.ResourceName as string);
    for (const name of patched) expect(name).toMatch(/^validatingadmissionpolicies\.admissionregistration\.k8s\.io\//);
    const scaled = appliedObjects(template).filter((o) => o.kind === 'ScaledObject') as unknown as { spec: { triggers: { name: string; metadata: { dimensionValue: string } }[] } }[];
    expect(scaled).toHaveLength(5);
    for (const so of scaled) expect(so.spec.triggers.map((t) => t.name)).toEqual(['per-replica-load', 'replica-floor']);
  });

  test('cdk-nag finds nothing unacknowledged', () => {
    expect(nagFindings(stack)).toEqual([]);
  });

  test('fails when a second service reuses a contract name or a namespace on the cluster', () => {
    const { stack: s } = testStack();
    const c = new EksInferenceCluster(s, 'Cluster', { kubectlLayer: new KubectlV34Layer(s, 'Kubectl') });
    new EksInferenceService(s, 'A', { contract: LLAMA_CONTRACT, classes: llamaClasses(), cluster: c, modelDataFetcherImage: FETCHER_IMAGE });
    expect(() => new EksInferenceService(s, 'B', { contract: LLAMA_CONTRACT, classes: llamaClasses(), cluster: c, namespace: 'other', modelDataFetcherImage: FETCHER_IMAGE }))
      .toThrow("EksInferenceService 'Test/B' is invalid (2 problems):\n  - contract.name: 'llama3-chat' is also the service of Test/A on this cluster; "
        + 'allowed: a name unique');
    const reused = { contract: MISTRAL_CONTRACT, classes: mistralClasses(), cluster: c, namespace: 'llama3-chat', modelDataFetcherImage: FETCHER_IMAGE };
    expect(() => new EksInferenceService(s, 'C', reused))
      .toThrow(/namespace: 'llama3-chat' is also the namespace of Test\/A/);
  });

  test('fails when a service attached to a cluster also gives cluster settings', () => {
    const { stack: s } = testStack();
    const c = new EksInferenceCluster(s, 'Cluster', { kubectlLayer: new KubectlV34Layer(s, 'Kubectl') });
    expect(() => new EksInferenceService(s, 'A', {
      contract: LLAMA_CONTRACT, classes: llamaClasses(), cluster: c, modelDataFetcherImage: FETCHER_IMAGE, chartVersions: { keda: '2.20.1' },
    })).toThrow(/chartVersions: is a setting of the cluster, but the service attaches to EksInferenceCluster 'Test\/Cluster'/);
  });
});

describe('additionalApprovedImages: injected sidecars approved in the namespace (review R255)', () => {
  /** The Istio proxy as the injector writes it once global.proxy.image is a full digest reference. */
  const PROXY = `123456789012.dkr.ecr.us-east-1.amazonaws.com/istio/proxyv2@sha256:${'e'.repeat(64)}`;
  const build = (id: string, props: { admission?: boolean; own?: boolean; images?: readonly string[] }) => {
    const { stack: s } = testStack(id);
    const cluster = props.own ? undefined
      : new EksInferenceCluster(s, 'Cluster', { kubectlLayer: new KubectlV34Layer(s, 'Kubectl'), approvedImagesAdmission: props.admission ?? true });
    const service = new EksInferenceService(s, 'Llama', {
      contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, additionalApprovedImages: props.images,
      ...(cluster ? { cluster } : { kubectlLayer: new KubectlV34Layer(s, 'Kubectl') }),
    });
    return { stack: s, service };
  };
  /** Each approval patch of the namespace's policy, by the image it approves. */
  const approvals = (s: Stack) => new Map(Object.values(Template.fromStack(s).findResources('Custom::AWSCDK-EKS-KubernetesPatch'))
    .filter((p) => p.Properties.ResourceName === 'validatingadmissionpolicies.admissionregistration.k8s.io/approved-images-llama3-chat')
    .map((p) => [Object.values(JSON.parse(p.Properties.ApplyPatchJson).metadata.annotations)[0] as string, p]));

  test('each extra image gets an approval patch of its own, like the class images, and the workloads wait for it', () => {
    const { stack: s, service } = build('Extra', { images: [PROXY] });
    const approved = approvals(s);
    const { key } = imageApproval(PROXY);
    expect(approved.get(PROXY)!.Properties).toMatchObject({
      PatchType: 'merge',
      ApplyPatchJson: JSON.stringify({ metadata: { annotations: { [key]: PROXY } } }),
      RestorePatchJson: JSON.stringify({ metadata: { annotations: { [key]: null } } }),
    });
    // Beside every class image and the fetcher, each approved once.
    for (const u of service.units) expect(approved.has(u.cls.artifact.image)).toBe(true);
    expect(approved.has(FETCHER_IMAGE)).toBe(true);
    expect(service.admission!.approvals).toHaveLength(approved.size);
    for (const u of service.units) expect(u.manifests.workload.node.dependencies).toContain(service.admission);
  });

  test('an extra image that is also a class image is approved once', () => {
    const classImage = llamaClasses()[0].artifact.image;
    const { stack: s } = build('Shared', { images: [classImage, PROXY] });
    const approved = approvals(s);
    expect(approved.has(classImage) && approved.has(PROXY)).toBe(true);
    expect(build('Without', {}).service.admission!.approvals.length + 1).toBe(approved.size);
  });

  test('fails at synth on a tag, a token or a duplicate, naming the service, the value and what is allowed', () => {
    const tagged = 'docker.io/istio/proxyv2:1.30.3';
    const token = Fn.join('', ['123456789012.dkr.ecr.us-east-1.amazonaws.com/istio/proxyv2@sha256:', 'e'.repeat(64)]);
    expect(() => build('Bad', { images: [tagged, PROXY, PROXY, token] })).toThrow([
      "EksInferenceService 'Bad/Llama' is invalid (1 problem):",
      '  - additionalApprovedImages: holds a CDK token (each approval is named, at synth, by a hash of its image reference); '
        + `'${tagged}' is not pinned by digest (a tag is mutable); '${PROXY}' is listed twice; allowed: unset, or distinct images pinned by `
        + 'digest (<registry>/<repository>@sha256:<64 hex>), on an EksInferenceCluster with approvedImagesAdmission: true',
    ].join('\n'));
  });

  test('fails at synth on a cluster that admits every image, where nothing would approve them', () => {
    expect(() => build('Off', { admission: false, images: [PROXY] })).toThrow(
      "additionalApprovedImages: is set, but the cluster 'Off/Cluster' has no approvedImagesAdmission (a prop of EksInferenceCluster)");
    expect(() => build('Own', { own: true, images: [PROXY] })).toThrow(
      "additionalApprovedImages: is set, but the cluster 'Own/Llama/Default' has no approvedImagesAdmission");
    // An empty list asks for nothing.
    expect(() => build('Empty', { admission: false, images: [] })).not.toThrow();
  });
});

function importedCluster(stack: Stack, withProvider = true): eks.ICluster {
  const vpc = new ec2.Vpc(stack, 'Vpc', { availabilityZones: ['us-east-1a', 'us-east-1b'], natGateways: 1, restrictDefaultSecurityGroup: false, flowLogs: { all: {} } });
  return eks.Cluster.fromClusterAttributes(stack, 'Imported', {
    clusterName: 'prod-inference',
    vpc,
    clusterSecurityGroupId: 'sg-0123456789abcdef0',
    ...(withProvider
      ? { kubectlProvider: eks.KubectlProvider.fromKubectlProviderAttributes(stack, 'KubectlProvider', { serviceToken: 'arn:aws:lambda:us-east-1:123456789012:function:kubectl-provider' }) }
      : {}),
  });
}

describe('a service on an imported cluster whose controllers exist', () => {
  let stack: Stack;
  let template: Template;
  let service: EksInferenceService;

  beforeAll(() => {
    ({ stack } = testStack());
    const lbcRole = iam.Role.fromRoleName(stack, 'LbcRole', 'aws-load-balancer-controller');
    const cluster = new EksInferenceCluster(stack, 'Cluster', {
      cluster: importedCluster(stack),
      existingControllers: {
        karpenter: { nodeRoleName: 'KarpenterNodeRole-prod', pods: { namespace: 'karpenter', podNamePrefix: 'karpenter-' } },
        keda: true,
        loadBalancerController: { role: lbcRole },
        neuronDevicePlugin: true,
      },
      observability: { existingAddon: { modelServerScrape: true } },
    });
    service = new EksInferenceService(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: llamaClasses(), cluster, modelDataFetcherImage: FETCHER_IMAGE });
    // The control loop on top (it enables the replica floors): the signal contract is checked on the whole shape.
    const obs = new InferenceObservability(stack, 'Observability', { serving: service });
    new Reconciler(stack, 'Reconciler', { serving: service, capacityAlarms: obs.capacityAlarms });
    template = Template.fromStack(stack);
  });

  test('closes the signal loop: every metric the reconciler, alarms and dashboard read has a producer (existing add-on, scrape merged)', () => {
    expect(service.units.every((u) => u.objects.scaledObject.spec.triggers.length === 2)).toBe(true);
    expect(signalContractProblems(template.toJSON())).toEqual([]);
  });

  test('installs no controller, no add-on and no log group, and creates no cluster', () => {
    template.resourceCountIs('AWS::EKS::Cluster', 0);
    template.resourceCountIs('Custom::AWSCDK-EKS-HelmChart', 0);
    template.resourceCountIs('AWS::EKS::Addon', 0);
    expect(Object.values(template.findResources('AWS::Logs::LogGroup')).filter((g) => String(g.Properties.LogGroupName ?? '').startsWith('/aws/containerinsights'))).toEqual([]);
    template.resourceCountIs('AWS::SQS::Queue', 0);
  });

  test("the EC2NodeClasses use the existing Karpenter's node role; the existing controller may register in the service's target groups", () => {
    for (const u of service.units) expect(u.objects.nodeClass.spec.role).toBe('KarpenterNodeRole-prod');
    expectOnePolicyPerTargetGroup(template, Stack.of(service), service.units, ['aws-load-balancer-controller']);
  });

  test('the manifests still apply through the imported kubectl provider and validate', () => {
    template.allResourcesProperties('Custom::AWSCDK-EKS-KubernetesResource', { ServiceToken: 'arn:aws:lambda:us-east-1:123456789012:function:kubectl-provider' });
    expectValidManifests(appliedObjects(template));
    template.resourceCountIs('AWS::Logs::MetricFilter', service.units.length);
    // The existing Karpenter runs in its own namespace: the filters count its pods' lines, not kube-system's.
    for (const f of Object.values(template.findResources('AWS::Logs::MetricFilter'))) {
      expect(f.Properties.FilterPattern).toContain('$.kubernetes.namespace_name = "karpenter"');
    }
  });

  test('cdk-nag finds nothing unacknowledged', () => {
    expect(nagFindings(stack)).toEqual([]);
  });
});

describe('an EksInferenceCluster in one stack, a service in another', () => {
  let platform: Template;
  let chat: Template;
  let chatStack: Stack;
  let service: EksInferenceService;
  let cluster: EksInferenceCluster;

  beforeAll(() => {
    const { app, stack } = testStack('Platform');
    cluster = new EksInferenceCluster(stack, 'Cluster', { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
    chatStack = new Stack(app, 'ChatSvc', { env: stack.environment === undefined ? undefined : { account: stack.account, region: stack.region } });
    service = new EksInferenceService(chatStack, 'Chat', { contract: LLAMA_CONTRACT, classes: llamaClasses(), cluster, modelDataFetcherImage: FETCHER_IMAGE });
    service.enableReplicaFloors();
    // Fails when a reference points back from the cluster's stack to the service's ("would create a cyclic reference").
    app.synth();
    platform = Template.fromStack(stack);
    chat = Template.fromStack(chatStack);
  });

  test("synthesizes both stacks; only the service's stack depends on the cluster's", () => {
    expect(chatStack.dependencies.map((d) => d.stackName)).toEqual(['Platform']);
    expect(Stack.of(cluster).dependencies).toEqual([]);
  });

  test("the controller's role may register pods in the service's target groups, in policies of the service's stack, and nothing wider", () => {
    expect(registrations(platform)).toEqual([]);
    // Attached to the controller's role, imported from the cluster's stack; each binding waits for its own.
    const roleId = Stack.of(cluster).getLogicalId(cluster.loadBalancerController!.role.node.defaultChild as CfnElement);
    expectOnePolicyPerTargetGroup(chat, chatStack, service.units,
      [{ 'Fn::ImportValue': expect.stringMatching(new RegExp(`^Platform:ExportsOutputRef${roleId}[0-9A-F]{8}$`)) }]);
  });

  test("the synth check sizes the controller role's inline policies as IAM counts them, each token at its longest", () => {
    const roleId = Stack.of(cluster).getLogicalId(cluster.loadBalancerController!.role.node.defaultChild as CfnElement);
    const rendered = renderedInlinePolicyChars([platform, chat], roleId);
    expect(rendered).toBeGreaterThan(1000);
    // The test stack's region is a literal, shorter than the longest the estimate assumes.
    const region = Stack.of(cluster).region;
    expect(controllerInlinePolicyChars(service.units.length, true)).toBe(rendered + 'us-isof-south-1'.length - region.length);
  });

  test('cdk-nag finds nothing unacknowledged in either stack', () => {
    expect(nagFindings(chatStack)).toEqual([]);
    expect(nagFindings(Stack.of(cluster))).toEqual([]);
  });
});

describe('EksInferenceCluster validation', () => {
  test('fails when a service would take the cluster past 100 metric filters on its application log group (one per NodePool)', () => {
    const { stack } = testStack();
    const cluster = new EksInferenceCluster(stack, 'Cluster', { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
    // 98 NodePools of other services (ALB forward actions take 5 target groups, so about 20 services of 5 classes).
    cluster.observability.addClasses(new Construct(stack, 'Others'), Array.from({ length: 98 }, (_, i) => ({
      service: 'others', className: `c${i}`, namespace: 'others', engine: 'vllm', port: 8000, classLabel: 'cls', nodePoolName: `others-c${i}`,
    })));
    expect(() => new EksInferenceService(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: llamaClasses(), cluster, modelDataFetcherImage: FETCHER_IMAGE }))
      .toThrow(new RegExp("EksInferenceService 'Test/Llama'[\\s\\S]*classes: adds 3 NodePool capacity-error filter\\(s\\) to the cluster's application log group, "
        + 'which has 98 from this library already \\(101\\); allowed: at most 100 metric filters per log group'));
    // Two more fit exactly.
    expect(cluster.observability.capacityFilterProblems(2)).toEqual([]);
  });

  test("fails at synth when a NodePool's capacity-error pattern passes CloudWatch Logs' 1024 characters", () => {
    const pool = (name: string) => ({ service: 'others', className: name, namespace: 'others', engine: 'vllm' as const, port: 8000, classLabel: 'cls', nodePoolName: name });
    // Each name (57 characters, the longest allowed) extends 'gpu-' and none another: 'gpu' excludes each (101 characters).
    const extending = (n: number) => Array.from({ length: n }, (_, i) => `gpu-${'x'.repeat(52)}${i}`);
    const synth = (n: number) => () => {
      const { stack } = testStack();
      const cluster = new EksInferenceCluster(stack, 'Cluster', { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
      cluster.observability.addClasses(new Construct(stack, 'Others'), [pool('gpu'), ...extending(n).map(pool)]);
      Template.fromStack(stack);
    };
    expect(synth(6)).not.toThrow();
    expect(synth(7)).toThrow(new RegExp("EksObservability 'Test/Cluster/Observability' is invalid \\(1 problem\\):\\n"
      + "  - nodePoolName 'gpu': has a capacity-error filter pattern of 10[0-9]{2} characters, as it excludes the NodePools whose names extend "
      + "'gpu-' \\(gpu-x+0, .*gpu-x+6\\); allowed: at most 1024 \\(CloudWatch Logs filterPattern\\)"));
  });

  test("sizes the controller role's inline policies in the cluster's stack as IAM counts them, each token at its longest", () => {
    const { stack, cluster, llama, mistral } = twoServices();
    const roleId = stack.getLogicalId(cluster.loadBalancerController!.role.node.defaultChild as CfnElement);
    const targetGroups = llama.units.length + mistral.units.length;
    const rendered = renderedInlinePolicyChars([Template.fromStack(stack)], roleId);
    expect(controllerInlinePolicyChars(targetGroups, true)).toBe(rendered + 'us-isof-south-1'.length - stack.region.length);
  });

  test("fails when a service would take the controller role's inline policies past IAM's 10,240 characters, naming the size and the count", () => {
    const { stack } = testStack();
    const cluster = new EksInferenceCluster(stack, 'Cluster', { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
    // A policy per target group (about 330 characters each beside the controller's read statement): 29 fit.
    for (let i = 0; i < 9; i++) cluster.allowTargetGroups(new Construct(stack, `S${i}`), targetGroupArns(i, 3));
    expect(() => cluster.allowTargetGroups(new Construct(stack, 'S9'), targetGroupArns(9, 3))).toThrow(new RegExp(
      "EksInferenceService 'Test/S9' is invalid \\(1 problem\\):\n  - classes: take the Load Balancer Controller's inline policies on the cluster Test/Cluster "
      + 'to 10\\d{3} characters \\(30 target groups, one policy each, each ARN counted at its longest\\); allowed: at most 10240'));
    // Two classes still fit.
    expect(() => cluster.allowTargetGroups(new Construct(stack, 'S10'), targetGroupArns(10, 2))).not.toThrow();
    expect(controllerInlinePolicyChars(29, true)).toBeLessThanOrEqual(10_240);
    expect(controllerInlinePolicyChars(30, true)).toBeGreaterThan(10_240);
  });

  test("counts what an existing controller role's own inline policies take (an aws-eks AlbController role holds about 5,200)", () => {
    const { stack } = testStack();
    const cluster = new EksInferenceCluster(stack, 'Cluster', {
      cluster: importedCluster(stack),
      existingControllers: { loadBalancerController: { role: iam.Role.fromRoleName(stack, 'Lbc', 'lbc'), roleInlinePolicyChars: 5200 } },
    });
    for (let i = 0; i < 5; i++) cluster.allowTargetGroups(new Construct(stack, `S${i}`), targetGroupArns(i, 3));
    expect(() => cluster.allowTargetGroups(new Construct(stack, 'S5'), targetGroupArns(5, 1))).toThrow(
      new RegExp('inline policies on the cluster Test/Cluster to 10\\d{3} characters '
        + "\\(16 target groups, one policy each, each ARN counted at its longest, and the role's own 5200\\)"));
  });

  test('fails when roleInlinePolicyChars is not a size below the cap, or is given without a role', () => {
    const existing = (lbc: { role?: boolean; roleInlinePolicyChars: number }) => () => {
      const { stack } = testStack();
      const role = lbc.role ? iam.Role.fromRoleName(stack, 'Lbc', 'lbc') : undefined;
      return new EksInferenceCluster(stack, 'Cluster', {
        cluster: importedCluster(stack), existingControllers: { loadBalancerController: { role, roleInlinePolicyChars: lbc.roleInlinePolicyChars } },
      });
    };
    const role = true;
    for (const bad of [-1, 1.5, 10_240]) {
      expect(existing({ role, roleInlinePolicyChars: bad })).toThrow(
        `existingControllers.loadBalancerController.roleInlinePolicyChars: is ${bad}; allowed: a whole number of characters from 0 to 10239`);
    }
    expect(existing({ roleInlinePolicyChars: 100 })).toThrow(
      'existingControllers.loadBalancerController.roleInlinePolicyChars: is 100 but no role is given, so nothing is added to a role; allowed: unset, or a role');
    expect(existing({ role, roleInlinePolicyChars: 0 })).not.toThrow();
  });

  test('counts a service in another stack as one in the cluster\'s stack: a policy per target group', () => {
    const { app, stack } = testStack('Platform');
    const cluster = new EksInferenceCluster(stack, 'Cluster', { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
    let fitted = 0;
    const attach = () => {
      cluster.allowTargetGroups(new Construct(new Stack(app, `Svc${fitted}`), 'S'), targetGroupArns(fitted, 1));
      fitted++;
    };
    // Bounded: a regressed check fails the test instead of hanging it.
    expect(() => {
      for (let i = 0; i < 200; i++) attach();
    }).toThrow(/policies on the cluster Platform\/Cluster to \d+ characters \(30 target groups, one policy each/);
    expect(fitted).toBe(29);
  });

  test('fails when the imported cluster has no kubectl provider (kubectlProviderOptions is ignored on import)', () => {
    const { stack } = testStack();
    expect(() => new EksInferenceCluster(stack, 'Cluster', { cluster: importedCluster(stack, false) })).toThrow(
      /cluster: has no kubectl provider.*KubectlProvider.fromKubectlProviderAttributes.*kubectlProviderOptions is ignored for an imported cluster/,
    );
  });

  test('fails when the stack is environment-agnostic', () => {
    const stack = new Stack(new App(), 'Agnostic');
    expect(() => new EksInferenceCluster(stack, 'Cluster', { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') })).toThrow(
      /env: stack 'Agnostic' is environment-agnostic; allowed: a stack with env.account and env.region/,
    );
  });

  test('fails when existing controllers are marked on a new cluster, or the node role is not a role name', () => {
    const { stack } = testStack();
    expect(() => new EksInferenceCluster(stack, 'Cluster', {
      kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'),
      existingControllers: { karpenter: { nodeRoleName: 'arn:aws:iam::123456789012:role/x' } },
    })).toThrow(new RegExp('existingControllers: marks controllers of an imported cluster[\\s\\S]*'
      + 'existingControllers.karpenter.nodeRoleName: \'arn:aws:iam::123456789012:role/x\' is not an IAM role name'));
  });

  test('fails when the existing KEDA is older than 2.17.0 (no fallback.behavior), or a version comes without keda: true', () => {
    const withKeda = (kedaVersion: string, keda = true) => () => {
      const { stack } = testStack();
      return new EksInferenceCluster(stack, 'Cluster', { cluster: importedCluster(stack), existingControllers: { keda, kedaVersion } });
    };
    expect(withKeda('2.16.1')).toThrow(/existingControllers.kedaVersion: is '2.16.1', which has no ScaledObject fallback.behavior .*; allowed: 2.17.0 or later/);
    expect(withKeda('v1.5.0')).toThrow(/allowed: 2.17.0 or later/);
    expect(withKeda('latest')).toThrow(/existingControllers.kedaVersion: 'latest' is not a KEDA version/);
    expect(withKeda('2.20.2', false)).toThrow(/existingControllers.kedaVersion: is '2.20.2' but existingControllers.keda is not true/);
    expect(withKeda('2.17.0')).not.toThrow();
    expect(withKeda('v3.0.1')).not.toThrow();
  });

  test('fails when new-cluster settings come with an imported cluster (they would be ignored)', () => {
    const { stack } = testStack();
    expect(() => new EksInferenceCluster(stack, 'Cluster', { cluster: importedCluster(stack), clusterOptions: { systemNodeCount: 3 } })).toThrow(
      /clusterOptions: is a setting of a new cluster, but 'cluster' is given/,
    );
  });
});

/** Whether a Karpenter subnet selector term selects a subnet of these tags: every tag of the term, '*' for any value. */
function selects(term: { tags?: Record<string, string> }, tags: ReadonlyArray<{ Key: string; Value: string }>): boolean {
  return Object.entries(term.tags ?? {}).every(([k, v]) => tags.some((t) => t.Key === k && (v === '*' || t.Value === v)));
}

describe('two EksInferenceClusters on one VPC', () => {
  test("each cluster's EC2NodeClasses select the VPC's private subnets, though a subnet holds one karpenter.sh/discovery value", () => {
    const { stack } = testStack();
    const vpc = new ec2.Vpc(stack, 'SharedVpc', { maxAzs: 2, natGateways: 1 });
    const services = ['a', 'b'].map((n) => new EksInferenceService(stack, `Chat-${n}`, {
      contract: { ...LLAMA_CONTRACT, name: `chat-${n}` },
      classes: [llamaClasses()[1]],
      modelDataFetcherImage: FETCHER_IMAGE,
      cluster: new EksInferenceCluster(stack, `Cluster-${n}`, { clusterName: `cluster-${n}`, vpc, kubectlLayer: new KubectlV34Layer(stack, `Kubectl-${n}`) }),
    }));
    const subnets = Template.fromStack(stack).findResources('AWS::EC2::Subnet');
    const privateSubnets = vpc.privateSubnets.map((s) => stack.getLogicalId(s.node.defaultChild as CfnElement)).sort();
    for (const service of services) {
      const terms = service.units[0].objects.nodeClass.spec.subnetSelectorTerms;
      const selected = Object.entries(subnets).filter(([, r]) => terms.some((t) => selects(t, r.Properties.Tags))).map(([id]) => id).sort();
      expect([service.clusterName, selected]).toEqual([service.clusterName, privateSubnets]);
    }
  });
});

describe('nodeSubnets: the tier of a multi-tier VPC the nodes go to', () => {
  /** A VPC with an app and a data tier of private subnets, and an isolated one; the subnets the EC2NodeClass selects. */
  const build = (nodeSubnets?: (vpc: ec2.Vpc) => ec2.SubnetSelection) => {
    const { stack } = testStack();
    const vpc = new ec2.Vpc(stack, 'Vpc', {
      maxAzs: 2, natGateways: 1,
      subnetConfiguration: [
        { name: 'public', subnetType: ec2.SubnetType.PUBLIC },
        { name: 'app', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
        { name: 'data', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 24 },
        { name: 'db', subnetType: ec2.SubnetType.PRIVATE_ISOLATED, cidrMask: 24 },
      ],
    });
    const cluster = new EksInferenceCluster(stack, 'Cluster', { vpc, nodeSubnets: nodeSubnets?.(vpc), kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
    const service = new EksInferenceService(stack, 'Llama', {
      contract: LLAMA_CONTRACT, classes: [llamaClasses()[1]], modelDataFetcherImage: FETCHER_IMAGE, cluster,
    });
    const terms = service.units[0].objects.nodeClass.spec.subnetSelectorTerms;
    const subnets = Template.fromStack(stack).findResources('AWS::EC2::Subnet');
    const selected = Object.entries(subnets).filter(([, r]) => terms.some((t) => selects(t, r.Properties.Tags))).map(([id]) => id).sort();
    const group = (name: string) => vpc.selectSubnets({ subnetGroupName: name }).subnets
      .map((n) => stack.getLogicalId(n.node.defaultChild as CfnElement));
    return { selected, cluster, group };
  };

  test("by default every private subnet (both tiers; Karpenter takes a zone's emptiest), with nodeSubnets only the ones it names", () => {
    const byDefault = build();
    expect(byDefault.selected).toEqual([...byDefault.group('app'), ...byDefault.group('data')].sort());
    const app = build(() => ({ subnetGroupName: 'app' }));
    expect(app.selected).toEqual(app.group('app').sort());
    expect(app.cluster.nodeSubnets).toHaveLength(2);
    const isolated = build((vpc) => {
      addNodeEndpoints(vpc);
      return { subnetType: ec2.SubnetType.PRIVATE_ISOLATED };
    });
    expect(isolated.selected).toEqual(isolated.group('db').sort());
    // The caller's own filters are not changed (aws-cdk-lib pushes onePerAz's filter into the array it is given).
    const filters: ec2.SubnetFilter[] = [];
    const onePerZone = build(() => ({ subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, subnetFilters: filters, onePerAz: true }));
    expect(onePerZone.selected).toHaveLength(2);
    expect(filters).toEqual([]);
  });

  test('fails when nodeSubnets selects no subnet of the VPC, naming the selection', () => {
    expect(() => build(() => ({ subnetGroupName: 'web' }))).toThrow(
      "EksInferenceCluster 'Test/Cluster' is invalid (1 problem):\n  - nodeSubnets: selects no subnet of the cluster's VPC (There are no subnet groups "
      + "with name 'web' in this VPC. Available names: public,app,data,db); allowed: a selection of its subnets",
    );
    expect(() => build(() => ({ subnetGroupName: 'app', subnetFilters: [ec2.SubnetFilter.availabilityZones(['us-east-1f'])] }))).toThrow(
      "  - nodeSubnets: selects no subnet of the cluster's VPC; allowed: a selection of at least one of its subnets",
    );
  });

  test('is a setting of the cluster: a service attached to an EksInferenceCluster refuses it', () => {
    const { stack } = testStack();
    const cluster = new EksInferenceCluster(stack, 'Cluster', { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
    expect(() => new EksInferenceService(stack, 'A', {
      contract: LLAMA_CONTRACT, classes: llamaClasses(), cluster, modelDataFetcherImage: FETCHER_IMAGE, nodeSubnets: { subnetGroupName: 'Private' },
    })).toThrow(/nodeSubnets: is a setting of the cluster, but the service attaches to EksInferenceCluster 'Test\/Cluster'/);
  });
});

/** Every endpoint of ISOLATED_NODE_SUBNET_ENDPOINTS (or those of `services`) on `vpc`: S3 as a gateway endpoint on every subnet. */
function addNodeEndpoints(vpc: ec2.Vpc, services: readonly string[] = ISOLATED_NODE_SUBNET_ENDPOINTS.map((e) => e.service)): void {
  for (const service of services) {
    if (service === 's3') vpc.addGatewayEndpoint('S3', { service: ec2.GatewayVpcEndpointAwsService.S3 });
    else vpc.addInterfaceEndpoint(service, { service: new ec2.InterfaceVpcEndpointAwsService(service) });
  }
}

describe('nodeSubnets: isolated subnets and the VPC endpoints their nodes need', () => {
  const ISOLATED = { subnetType: ec2.SubnetType.PRIVATE_ISOLATED };
  /** A VPC with public, private (egress) and isolated subnets. */
  const threeTierVpc = (stack: Stack) => new ec2.Vpc(stack, 'Vpc', {
    maxAzs: 2, natGateways: 1,
    subnetConfiguration: [
      { name: 'public', subnetType: ec2.SubnetType.PUBLIC },
      { name: 'app', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
      { name: 'nodes', subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
    ],
  });
  /** threeTierVpc and a cluster whose nodes go to `nodeSubnets`. */
  const build = (props: Partial<EksInferenceClusterProps> = {}, endpoints?: (vpc: ec2.Vpc) => void) => {
    const { app, stack } = testStack();
    const vpc = threeTierVpc(stack);
    const cluster = new EksInferenceCluster(stack, 'Cluster', {
      vpc, nodeSubnets: ISOLATED, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'), ...props,
    });
    // After the cluster: the check runs at synth.
    endpoints?.(vpc);
    return { app, stack, vpc, cluster };
  };
  const synthError = (app: App) => {
    try {
      app.synth();
    } catch (e) {
      return (e as Error).message;
    }
    return undefined;
  };
  const endpointWarnings = (stack: Stack) => Annotations.fromStack(stack)
    .findWarning('*', Match.stringLikeRegexp('eks-isolated-subnet-endpoints')).map((w) => String(w.entry.data));
  const NODES = "'Test/Vpc/nodesSubnet1', 'Test/Vpc/nodesSubnet2'";

  test('fails synth without the endpoints the nodes need to join, naming the construct, the subnets and every missing endpoint', () => {
    const { app } = build();
    expect(synthError(app)).toContain(
      "[Test/Cluster] EksInferenceCluster 'Test/Cluster' is invalid (1 problem):\n  - nodeSubnets: selects isolated subnets "
      + `(${NODES}) of the VPC Test/Vpc, which has no endpoint for 'com.amazonaws.us-east-1.ec2', 'com.amazonaws.us-east-1.ecr.api', `
      + "'com.amazonaws.us-east-1.ecr.dkr', 'com.amazonaws.us-east-1.s3' they can reach; allowed: isolated node subnets (PRIVATE_ISOLATED) in a VPC "
      + 'with endpoints they reach for com.amazonaws.<region>.ec2, com.amazonaws.<region>.ecr.api, com.amazonaws.<region>.ecr.dkr and '
      + "com.amazonaws.<region>.s3 (cn.com.amazonaws.<region>.{ec2,ecr.api,ecr.dkr} in China): interface endpoints with private DNS, or for s3 a gateway endpoint on the subnets' route tables (or an "
      + 'interface endpoint whose private DNS is for all resolvers, privateDnsOnlyForInboundResolverEndpoint ALL_RESOLVERS); or '
      + "isolatedSubnetEndpoints: 'elsewhere' when they reach these services through endpoints outside the VPC (nodes there reach AWS only",
    );
  });

  test('synthesizes with every endpoint, added after the cluster; without eks-auth and logs it warns, naming what fails', () => {
    const all = build({}, (vpc) => addNodeEndpoints(vpc));
    expect(() => Template.fromStack(all.stack)).not.toThrow();
    expect(endpointWarnings(all.stack)).toEqual([]);

    const joinOnly = build({}, (vpc) => addNodeEndpoints(vpc, ['ec2', 'ecr.api', 'ecr.dkr', 's3']));
    expect(() => Template.fromStack(joinOnly.stack)).not.toThrow();
    const warnings = endpointWarnings(joinOnly.stack);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`The isolated node subnets ${NODES} of the VPC Test/Vpc reach AWS only through VPC endpoints, and synth `
      + "finds none in the VPC they can reach for 'com.amazonaws.us-east-1.eks-auth', 'com.amazonaws.us-east-1.logs'. eks-auth: the EKS Pod "
      + 'Identity agent gets every pod identity credential from it: without it the model-data init container has no credentials');
    expect(warnings[0]).toContain('Add them (ec2.InterfaceVpcEndpointAwsService.EKS_AUTH, ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_LOGS)');
  });

  test("an S3 gateway endpoint counts only on its route tables, an interface endpoint only with private DNS (S3's for all resolvers)", () => {
    const { app } = build({}, (vpc) => {
      addNodeEndpoints(vpc, ['ecr.api', 'ecr.dkr', 'eks-auth', 'logs']);
      vpc.addGatewayEndpoint('S3', { service: ec2.GatewayVpcEndpointAwsService.S3, subnets: [{ subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS }] });
      vpc.addInterfaceEndpoint('Ec2', { service: ec2.InterfaceVpcEndpointAwsService.EC2, privateDnsEnabled: false });
    });
    expect(synthError(app)).toContain("which has no endpoint for 'com.amazonaws.us-east-1.ec2', 'com.amazonaws.us-east-1.s3' they can reach");
    // An S3 interface endpoint serves them only with private DNS for all resolvers: inbound-only DNS (or none stated)
    // leaves the VPC's own traffic to the gateway endpoint.
    const s3Interface = (dns?: ec2.VpcEndpointPrivateDnsOnlyForInboundResolverEndpoint) => build({}, (vpc) => {
      addNodeEndpoints(vpc, ['ec2', 'ecr.api', 'ecr.dkr', 'eks-auth', 'logs']);
      vpc.addInterfaceEndpoint('S3', { service: ec2.InterfaceVpcEndpointAwsService.S3, privateDnsOnlyForInboundResolverEndpoint: dns });
    }).app;
    const noS3 = "which has no endpoint for 'com.amazonaws.us-east-1.s3' they can reach";
    expect(synthError(s3Interface())).toContain(noS3);
    expect(synthError(s3Interface(ec2.VpcEndpointPrivateDnsOnlyForInboundResolverEndpoint.ONLY_INBOUND_RESOLVER))).toContain(noS3);
    expect(synthError(s3Interface(ec2.VpcEndpointPrivateDnsOnlyForInboundResolverEndpoint.ALL_RESOLVERS))).toBeUndefined();
  });

  test('an endpoint whose service is not known at synth turns the error into a warning: it may be one of them', () => {
    const { app, stack } = build({}, (vpc) => {
      new ec2.CfnVPCEndpoint(vpc, 'Opaque', { vpcId: vpc.vpcId, serviceName: Fn.importValue('endpoint-service'), vpcEndpointType: 'Interface' });
    });
    expect(synthError(app)).toBeUndefined();
    const warnings = endpointWarnings(stack);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("finds none in the VPC they can reach for 'com.amazonaws.us-east-1.ec2', 'com.amazonaws.us-east-1.ecr.api', ");
    expect(warnings[0]).toContain(
      "(The VPC has an endpoint whose service is not known at synth, so the nodes' own needs, com.amazonaws.us-east-1.ec2,",
    );
  });

  test("private subnets with egress are not checked, nor with isolatedSubnetEndpoints: 'elsewhere'", () => {
    const egress = build({ nodeSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS } });
    expect(synthError(egress.app)).toBeUndefined();
    expect(endpointWarnings(egress.stack)).toEqual([]);
    const elsewhere = build({ isolatedSubnetEndpoints: 'elsewhere' });
    expect(synthError(elsewhere.app)).toBeUndefined();
    expect(endpointWarnings(elsewhere.stack)).toEqual([]);
    // The EKS_RULES entry (docs/validation.md): what was found, what is allowed and why.
    const why = "(the VPC endpoint checks run for any value but 'elsewhere': a misspelt 'elsewhere' would check endpoints the subnets do not use)";
    expect(() => build({ isolatedSubnetEndpoints: 'nat' as 'elsewhere' })).toThrow(
      `EksInferenceCluster 'Test/Cluster' is invalid (1 problem):\n  - isolatedSubnetEndpoints: is "nat"; allowed: 'in-vpc' or 'elsewhere' ${why}`,
    );
    expect(() => build({ isolatedSubnetEndpoints: null as unknown as 'elsewhere' })).toThrow(
      `isolatedSubnetEndpoints: is null; allowed: 'in-vpc' or 'elsewhere' ${why}`,
    );
  });

  test('the isolated subnets of an imported VPC are not checked (its endpoints are outside the app)', () => {
    const { app, stack } = testStack();
    const vpc = ec2.Vpc.fromVpcAttributes(stack, 'Vpc', {
      vpcId: 'vpc-1', vpcCidrBlock: '10.0.0.0/16', availabilityZones: ['us-east-1a', 'us-east-1b'],
      privateSubnetIds: ['subnet-p1', 'subnet-p2'], isolatedSubnetIds: ['subnet-i1', 'subnet-i2'],
    });
    const cluster = new EksInferenceCluster(stack, 'Cluster', { vpc, nodeSubnets: ISOLATED, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
    expect(cluster.nodeSubnets.map((s) => s.subnetId)).toEqual(['subnet-i1', 'subnet-i2']);
    expect(synthError(app)).toBeUndefined();
    expect(endpointWarnings(stack)).toEqual([]);
  });

  test('a service with a cluster of its own fails the same way, and a public-only API endpoint fails at construction', () => {
    const { app, stack } = testStack();
    const vpc = threeTierVpc(stack);
    new EksInferenceService(stack, 'Llama', {
      contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'),
      vpc, nodeSubnets: ISOLATED,
    });
    expect(synthError(app)).toContain(
      "[Test/Llama/Default] EksInferenceCluster 'Test/Llama/Default' is invalid (1 problem):\n  - nodeSubnets: selects isolated subnets",
    );

    expect(() => build({ clusterOptions: { endpointAccess: eks.EndpointAccess.PUBLIC } }, (v) => addNodeEndpoints(v))).toThrow(
      "EksInferenceCluster 'Test/Cluster' is invalid (1 problem):\n  - clusterOptions.endpointAccess: is eks.EndpointAccess.PUBLIC, but nodeSubnets "
      + `selects isolated subnets (${NODES}), from which the public endpoint cannot be reached; allowed: eks.EndpointAccess.PRIVATE or `
      + 'PUBLIC_AND_PRIVATE when nodeSubnets selects isolated subnets',
    );
    expect(() => build({ clusterOptions: { endpointAccess: eks.EndpointAccess.PUBLIC_AND_PRIVATE.onlyFrom('10.0.0.0/8') } })).not.toThrow();
    // The only other way to a public-only endpoint throws in aws-cdk-lib itself.
    expect(() => eks.EndpointAccess.PUBLIC.onlyFrom('10.0.0.0/8')).toThrow(/private access is disabled/);
    // Under 'elsewhere' the subnets may reach the internet outside the VPC (a Transit Gateway): a warning, not a refusal.
    const elsewhere = build({ isolatedSubnetEndpoints: 'elsewhere', clusterOptions: { endpointAccess: eks.EndpointAccess.PUBLIC } });
    expect(synthError(elsewhere.app)).toBeUndefined();
    const warnings = Annotations.fromStack(elsewhere.stack)
      .findWarning('*', Match.stringLikeRegexp('eks-isolated-subnet-public-endpoint')).map((w) => String(w.entry.data));
    expect(warnings).toEqual([expect.stringContaining(
      `clusterOptions.endpointAccess is eks.EndpointAccess.PUBLIC and nodeSubnets selects isolated subnets (${NODES}): their nodes register `,
    )]);
    const quiet = build({ isolatedSubnetEndpoints: 'elsewhere' });
    expect(Annotations.fromStack(quiet.stack).findWarning('*', Match.stringLikeRegexp('eks-isolated-subnet-public-endpoint'))).toEqual([]);
  });

  test('a Neuron class warns that its device plugin image (ECR Public) cannot be pulled there; not with egress, no Neuron class, or elsewhere', () => {
    const withService = (props: Partial<EksInferenceClusterProps>, neuron = true) => {
      const built = build(props, (vpc) => addNodeEndpoints(vpc));
      new EksInferenceService(built.stack, 'Llama', {
        contract: neuron ? LLAMA_CONTRACT : MISTRAL_CONTRACT, classes: neuron ? llamaClasses() : mistralClasses(), cluster: built.cluster,
        modelDataFetcherImage: FETCHER_IMAGE,
      });
      expect(synthError(built.app)).toBeUndefined();
      return Annotations.fromStack(built.stack)
        .findWarning('*', Match.stringLikeRegexp('eks-isolated-subnet-neuron-device-plugin')).map((w) => String(w.entry.data));
    };
    const warnings = withService({});
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("The cluster Test/Cluster installs the Neuron device plugin for the Neuron classes 'inf2' of Test/Llama with the "
      + `image public.ecr.aws/neuron/neuron-device-plugin:2.31.0.0, but nodeSubnets selects isolated subnets (${NODES}) and no VPC endpoint `
      + 'serves ECR Public (public.ecr.aws)');
    expect(warnings[0]).toContain('Mirror the image into a private ECR repository of the region (an ECR Public pull through cache rule) and set '
      + 'neuronDevicePluginImage to it, pinned by digest (<account>.dkr.ecr.<region>.amazonaws.com/<repository>@sha256:<64 hex>)');
    expect(warnings[0]).toContain('or give the node subnets egress');
    // The fix the message names: a private mirror, pulled through the ECR endpoints the subnets have.
    expect(withService({ neuronDevicePluginImage: NEURON_MIRROR })).toEqual([]);
    expect(withService({ nodeSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS } })).toEqual([]);
    expect(withService({}, false)).toEqual([]);
    // 'elsewhere': no endpoint serves ECR Public there either, but the subnets may reach the internet through a Transit Gateway.
    expect(withService({ isolatedSubnetEndpoints: 'elsewhere' })).toEqual([]);
  });

  test('docs/eks-inference-cluster.md lists every endpoint of the list, and what a missing one breaks', () => {
    const doc = readFileSync(resolve(__dirname, '..', '..', 'docs', 'eks-inference-cluster.md'), 'utf8');
    const section = doc.slice(doc.indexOf('### Isolated node subnets'), doc.indexOf('\n## ', doc.indexOf('### Isolated node subnets')));
    for (const e of ISOLATED_NODE_SUBNET_ENDPOINTS) {
      expect(section).toContain(`| \`com.amazonaws.<region>.${e.service}\` | ${e.need === 'join' ? 'error' : 'warning'} |`);
    }
  });
});

describe('the EC2 Spot service-linked role', () => {
  /** Every iam:CreateServiceLinkedRole statement of the template, with the roles of the policy holding it. */
  const slrStatements = (stack: Stack) => Object.values(Template.fromStack(stack).findResources('AWS::IAM::Policy')).flatMap((p) =>
    (p.Properties.PolicyDocument.Statement as { Action: unknown }[])
      .filter((st) => JSON.stringify(st.Action).includes('iam:CreateServiceLinkedRole')).map((statement) => ({ statement, roles: p.Properties.Roles })));
  const clusterWith = (capacityTypes: ReadonlyArray<ReadonlyArray<'on-demand' | 'spot'>>) => {
    const { stack } = testStack();
    const cluster = new EksInferenceCluster(stack, 'Cluster', { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
    capacityTypes.forEach((types, i) => new EksInferenceService(stack, `Chat-${i}`, {
      contract: { ...LLAMA_CONTRACT, name: `chat-${i}` }, classes: [llamaClasses()[1]], cluster, modelDataFetcherImage: FETCHER_IMAGE,
      classOptions: { a10g: { capacityTypes: types } },
    }));
    return { stack, cluster };
  };

  test('the Karpenter controller may create it, and nothing else, once a class may run spot (once, for any number of them)', () => {
    const { stack, cluster } = clusterWith([['on-demand'], ['on-demand', 'spot'], ['spot']]);
    const found = slrStatements(stack);
    expect(found).toHaveLength(1);
    expect(found[0].statement).toEqual({
      Sid: 'AllowSpotServiceLinkedRoleCreation',
      Effect: 'Allow',
      Action: 'iam:CreateServiceLinkedRole',
      Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::123456789012:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot']] },
      Condition: { StringEquals: { 'iam:AWSServiceName': 'spot.amazonaws.com' } },
    });
    expect(found[0].roles).toEqual([{ Ref: stack.getLogicalId(cluster.karpenter!.controllerRole.node.defaultChild as CfnElement) }]);
  });

  test('a cluster with no spot class grants none', () => {
    expect(slrStatements(clusterWith([['on-demand'], ['on-demand']]).stack)).toEqual([]);
  });
});

describe('the system node group', () => {
  const newCluster = (clusterOptions: EksInferenceClusterProps['clusterOptions'] = {}) => {
    const { stack } = testStack();
    const cluster = new EksInferenceCluster(stack, 'Cluster', { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'), clusterOptions });
    new EksInferenceService(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: llamaClasses(), cluster, modelDataFetcherImage: FETCHER_IMAGE });
    return stack;
  };
  const tooFew = (stack: Stack) => Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('eks-system-nodes-too-few'));
  const chartValues = (template: Template, chart: string) => {
    const found = Object.values(template.findResources('Custom::AWSCDK-EKS-HelmChart', { Properties: { Chart: chart } }));
    return JSON.parse(renderWithPlaceholders(found[0].Properties.Values)) as Record<string, unknown>;
  };

  test('is 3 x m7i.large by default: room for every controller, agent and the model-server scraper, and a rolling update', () => {
    const stack = newCluster();
    Template.fromStack(stack).hasResourceProperties('AWS::EKS::Nodegroup', {
      InstanceTypes: ['m7i.large'],
      ScalingConfig: { MinSize: 3, DesiredSize: 3, MaxSize: 3 },
    });
    expect(tooFew(stack)).toEqual([]);
  });

  test("fails when systemNodeCount is 1: Karpenter's second controller replica could never schedule, and its chart waits for it", () => {
    expect(() => newCluster({ systemNodeCount: 1 }))
      .toThrow(/clusterOptions\.systemNodeCount.*1.*Karpenter's 2 controller replicas run one per system node/s);
  });

  test('warns at synth when fewer m7i.large nodes cannot be sure to place the scraper (it would drop the token counters)', () => {
    const warnings = tooFew(newCluster({ systemNodeCount: 2 }));
    expect(warnings).toHaveLength(1);
    expect(JSON.stringify(warnings[0].entry.data)).toContain('clusterOptions.systemNodeCount is 2 x m7i.large');
    expect(JSON.stringify(warnings[0].entry.data)).toContain('Use at least 3 nodes or a larger systemNodeInstanceType.');
    // A type the library has no figures for is not judged.
    expect(tooFew(newCluster({ systemNodeCount: 2, systemNodeInstanceType: new ec2.InstanceType('t3.medium') }))).toEqual([]);
  });

  test("what runs there requests what the budget counts: Karpenter's and the scraper's own values, the other charts' defaults", () => {
    const template = Template.fromStack(newCluster());
    const karpenter = chartValues(template, 'karpenter');
    expect(karpenter.replicas).toBe(KARPENTER_CONTROLLER.replicas);
    expect((karpenter.controller as { resources: unknown }).resources).toEqual(KARPENTER_CONTROLLER.resources);
    // The budget counts these charts' own defaults: nothing here overrides them.
    for (const chart of ['keda', 'aws-load-balancer-controller']) {
      expect(JSON.stringify(chartValues(template, chart))).not.toMatch(/"resources"|"replicaCount"/);
    }
    const addon = Object.values(template.findResources('AWS::EKS::Addon', { Properties: { AddonName: 'amazon-cloudwatch-observability' } }))[0];
    const agents = JSON.parse(addon.Properties.ConfigurationValues).agents as Array<{ name: string; resources?: unknown }>;
    expect(agents.find((a) => a.name === 'cai-model-server-scraper')!.resources).toEqual(SCRAPER_RESOURCES);
    expect(agents.find((a) => a.name === 'cloudwatch-agent')!.resources).toBeUndefined(); // the chart's 250m, counted per node
  });
});

describe('the NVIDIA device plugin on AL2023 nodes', () => {
  const service = (amiAlias: string | undefined, acknowledge: string[] = []) => {
    const { stack } = testStack();
    const svc = new EksInferenceService(stack, 'Llama', {
      contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'), amiAlias,
    });
    for (const id of acknowledge) CoreAnnotations.of(svc).acknowledgeWarning(id);
    return Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('eks-nvidia-device-plugin'))
      .map((w) => JSON.stringify(w.entry.data));
  };

  test('warns for each GPU class on an al2023 alias (the AMIs do not run it and the library installs none), not for the Neuron class', () => {
    const warnings = service('al2023@latest');
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain("Class 'l40s' requests nvidia.com/gpu on 'al2023@latest' nodes: the EKS-optimized AL2023 NVIDIA AMIs do not run the NVIDIA device plugin");
    expect(warnings[0]).toContain('[ack: cdk-capacity-aware-inference:eks-nvidia-device-plugin-l40s]');
    expect(warnings[1]).toContain("Class 'a10g' requests nvidia.com/gpu");
  });

  test('does not warn on a Bottlerocket alias (its NVIDIA variants ship the plugin), nor for a class whose warning is acknowledged', () => {
    expect(service(undefined)).toEqual([]);
    expect(service('bottlerocket@v1.47.0')).toEqual([]);
    expect(service('al2023@latest', ['cdk-capacity-aware-inference:eks-nvidia-device-plugin-l40s'])).toHaveLength(1);
  });
});

describe('the Neuron device plugin', () => {
  const charts = (template: Template) => Object.entries(template.findResources('Custom::AWSCDK-EKS-HelmChart'));
  const neuronCharts = (template: Template) => charts(template).filter(([, c]) => c.Properties.Chart === NEURON_DEVICE_PLUGIN_CHART.chart);
  const valuesOf = (chart: Record<string, unknown>) => JSON.parse((chart.Properties as { Values: string }).Values) as {
    neuronInstances: string[];
    devicePlugin: { enabled: boolean; tolerations?: unknown[]; image?: { repository: string; tag: string } };
    npd: { enabled: boolean };
    scheduler: { enabled: boolean };
    draDriver: { enabled: boolean };
    ultraserverOperator: { enabled: boolean };
  };
  const capacityOf = (template: Template, service: EksInferenceService, className: string) => {
    const unit = service.units.find((u) => u.cls.name === className)!;
    const id = Stack.of(service).resolve((unit.manifests.capacity.node.defaultChild as CfnElement).logicalId) as string;
    return template.toJSON().Resources[id] as { DependsOn?: string[] };
  };

  describe('a service with a Neuron class on a new cluster', () => {
    let template: Template;
    let service: EksInferenceService;

    beforeAll(() => {
      const { stack } = testStack();
      const cluster = new EksInferenceCluster(stack, 'Cluster', { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
      service = new EksInferenceService(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: llamaClasses(), cluster, modelDataFetcherImage: FETCHER_IMAGE });
      template = Template.fromStack(stack);
    });

    test('installs the pinned neuron-helm-chart once, in kube-system, with wait and atomic, after the system node group', () => {
      expect(NEURON_DEVICE_PLUGIN_CHART).toEqual({ chart: 'neuron-helm-chart', repository: 'oci://public.ecr.aws/neuron/neuron-helm-chart', version: '1.9.0' });
      template.hasResourceProperties('Custom::AWSCDK-EKS-HelmChart', {
        Release: 'neuron-device-plugin',
        Chart: 'neuron-helm-chart',
        Repository: 'oci://public.ecr.aws/neuron/neuron-helm-chart',
        Version: '1.9.0',
        Namespace: 'kube-system',
        Wait: true,
        Atomic: true,
      });
      const neuron = neuronCharts(template);
      expect(neuron).toHaveLength(1);
      const nodegroups = Object.keys(template.findResources('AWS::EKS::Nodegroup'));
      expect(neuron[0][1].DependsOn).toContain(nodegroups[0]);
    });

    test('enables the device plugin only (no node problem detector, scheduler extension, DRA driver or UltraServer operator)', () => {
      const values = valuesOf(neuronCharts(template)[0][1]);
      expect([values.devicePlugin, values.npd, values.scheduler, values.draDriver, values.ultraserverOperator].map((v) => v.enabled))
        .toEqual([true, false, false, false, false]);
    });

    test("runs on the chart's Neuron instance types and the class's (its required node affinity), which carry the taint the chart tolerates", () => {
      const values = valuesOf(neuronCharts(template)[0][1]);
      expect(values.neuronInstances).toEqual(expect.arrayContaining([...NEURON_DEVICE_PLUGIN_INSTANCE_TYPES, 'inf2.xlarge']));
      expect(values.neuronInstances).not.toContain('g6e.xlarge');
      // neuron-helm-chart 1.9.0 values.yaml devicePlugin.tolerations: { key: aws.amazon.com/neuron, operator: Exists, effect: NoSchedule }
      expect(ACCELERATOR_TAINTS.neuron).toMatchObject({ key: 'aws.amazon.com/neuron', effect: 'NoSchedule' });
    });

    test("the Neuron class's NodePool waits for the plugin (no Neuron node is launched before it), the GPU classes' do not", () => {
      const [chartId] = neuronCharts(template)[0];
      expect(capacityOf(template, service, 'inf2').DependsOn).toContain(chartId);
      expect(capacityOf(template, service, 'l40s').DependsOn).not.toContain(chartId);
      expect(service.inferenceCluster.neuronDevicePluginReady).toEqual([service.inferenceCluster.neuronDevicePlugin!.chart]);
    });
  });

  test('the default image is the chart\'s own: the values set none', () => {
    const { stack } = testStack();
    const cluster = new EksInferenceCluster(stack, 'Cluster', { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
    new EksInferenceService(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: llamaClasses(), cluster, modelDataFetcherImage: FETCHER_IMAGE });
    const { devicePlugin } = valuesOf(neuronCharts(Template.fromStack(stack))[0][1]);
    expect(devicePlugin).toEqual({ enabled: true, tolerations: NEURON_DEVICE_PLUGIN_TOLERATIONS });
  });

  describe('neuronDevicePluginImage: a private ECR mirror pinned by digest', () => {
    let template: Template;
    let cluster: EksInferenceCluster;
    let stack: Stack;

    beforeAll(() => {
      stack = testStack().stack;
      cluster = new EksInferenceCluster(stack, 'Cluster', { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'), neuronDevicePluginImage: NEURON_MIRROR });
      new EksInferenceService(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: llamaClasses(), cluster, modelDataFetcherImage: FETCHER_IMAGE });
      template = Template.fromStack(stack);
    });

    test('the chart values name it so that the chart\'s `printf "%s:%s" repository tag` renders the digest reference whole', () => {
      const image = valuesOf(neuronCharts(template)[0][1]).devicePlugin.image!;
      // neuron-helm-chart templates/_helpers.tpl neuron-device-plugin.fullimage (lib/eks/neuron-device-plugin.ts cites it).
      expect(`${image.repository}:${image.tag}`).toBe(NEURON_MIRROR);
      expect(image).toEqual({
        repository: '123456789012.dkr.ecr.us-east-1.amazonaws.com/ecr-public/neuron/neuron-device-plugin@sha256',
        tag: 'c'.repeat(64),
      });
      expect(neuronDevicePluginImageValues(NEURON_MIRROR)).toEqual(image);
      expect(() => neuronDevicePluginImageValues('public.ecr.aws/neuron/neuron-device-plugin:2.31.0.0')).toThrow(/internal/);
    });

    test('the Karpenter node role may pull from exactly that repository, and the chart waits for the grant', () => {
      const policies = Object.entries(template.findResources('AWS::IAM::Policy')).filter(([, p]) =>
        JSON.stringify(p.Properties.PolicyDocument).includes('PullNeuronDevicePluginImage'));
      expect(policies).toHaveLength(1);
      const [policyId, policy] = policies[0];
      const nodeRole = stack.resolve((cluster.karpenter!.nodeRole.node.defaultChild as CfnElement).logicalId) as string;
      expect(policy.Properties.Roles).toEqual([{ Ref: nodeRole }]);
      expect(policy.Properties.PolicyDocument.Statement).toEqual([{
        Sid: 'PullNeuronDevicePluginImage',
        Effect: 'Allow',
        Action: ['ecr:BatchGetImage', 'ecr:GetDownloadUrlForLayer'],
        Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':ecr:us-east-1:123456789012:repository/ecr-public/neuron/neuron-device-plugin']] },
      }]);
      expect(neuronCharts(template)[0][1].DependsOn).toContain(policyId);
      // One repository, no wildcard: nothing for cdk-nag to acknowledge.
      expect(nagFindings(stack)).toEqual([]);
    });

    test('nothing is granted or set before a Neuron class attaches', () => {
      const other = testStack().stack;
      const quiet = new EksInferenceCluster(other, 'Cluster', { kubectlLayer: new KubectlV34Layer(other, 'Kubectl'), neuronDevicePluginImage: NEURON_MIRROR });
      new EksInferenceService(other, 'Mistral', { contract: MISTRAL_CONTRACT, classes: mistralClasses(), cluster: quiet, modelDataFetcherImage: FETCHER_IMAGE });
      expect(JSON.stringify(Template.fromStack(other).toJSON())).not.toContain('PullNeuronDevicePluginImage');
    });

    test('a service with a cluster of its own passes it on; one on an EksInferenceCluster refuses it', () => {
      const own = testStack().stack;
      const service = new EksInferenceService(own, 'Llama', {
        contract: LLAMA_CONTRACT, classes: llamaClasses(), kubectlLayer: new KubectlV34Layer(own, 'Kubectl'), modelDataFetcherImage: FETCHER_IMAGE,
        neuronDevicePluginImage: NEURON_MIRROR,
      });
      expect(valuesOf(neuronCharts(Template.fromStack(own))[0][1]).devicePlugin.image).toEqual(neuronDevicePluginImageValues(NEURON_MIRROR));
      expect(service.inferenceCluster.neuronDevicePlugin).toBeDefined();
      const other = testStack().stack;
      const shared = new EksInferenceCluster(other, 'Cluster', { kubectlLayer: new KubectlV34Layer(other, 'Kubectl') });
      expect(() => new EksInferenceService(other, 'Llama', {
        contract: LLAMA_CONTRACT, classes: llamaClasses(), cluster: shared, modelDataFetcherImage: FETCHER_IMAGE,
        neuronDevicePluginImage: NEURON_MIRROR,
      })).toThrow(/neuronDevicePluginImage: is a setting of the cluster, but the service attaches to EksInferenceCluster 'Test\/Cluster'/);
    });
  });

  test('a cluster whose services have no Neuron class gets no Neuron chart', () => {
    const { stack } = testStack();
    const cluster = new EksInferenceCluster(stack, 'Cluster', { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
    new EksInferenceService(stack, 'Mistral', { contract: MISTRAL_CONTRACT, classes: mistralClasses(), cluster, modelDataFetcherImage: FETCHER_IMAGE });
    const template = Template.fromStack(stack);
    expect(charts(template).map(([, c]) => c.Properties.Chart).sort()).toEqual(['aws-load-balancer-controller', 'karpenter', 'keda']);
    expect(cluster.neuronDevicePlugin).toBeUndefined();
  });

  test("two services share one chart, whose node affinity names every Neuron type they use, including one the chart's list lacks", () => {
    const { stack } = testStack();
    const builtIn = HardwareCatalog.builtIn();
    const catalog = builtIn.with({ ...builtIn.get('inf2.xlarge'), instanceType: 'inf2.4xlarge' });
    const cluster = new EksInferenceCluster(stack, 'Cluster', { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
    new EksInferenceService(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: llamaClasses(), cluster, modelDataFetcherImage: FETCHER_IMAGE });
    const [, , inf2] = llamaClasses();
    new EksInferenceService(stack, 'Mistral', {
      contract: MISTRAL_CONTRACT, classes: [{ ...inf2, instanceType: 'inf2.4xlarge' }], cluster, catalog, modelDataFetcherImage: FETCHER_IMAGE,
    });
    const neuron = neuronCharts(Template.fromStack(stack));
    expect(neuron).toHaveLength(1);
    expect(NEURON_DEVICE_PLUGIN_INSTANCE_TYPES).not.toContain('inf2.4xlarge');
    expect(valuesOf(neuron[0][1]).neuronInstances).toEqual(expect.arrayContaining(['inf2.xlarge', 'inf2.4xlarge']));
  });

  test('an imported cluster gets the chart through its kubectl provider unless it marks its own plugin', () => {
    const install = testStack().stack;
    const imported = new EksInferenceCluster(install, 'Cluster', { cluster: importedCluster(install) });
    new EksInferenceService(install, 'Llama', { contract: LLAMA_CONTRACT, classes: llamaClasses(), cluster: imported, modelDataFetcherImage: FETCHER_IMAGE });
    expect(neuronCharts(Template.fromStack(install))).toHaveLength(1);

    const own = testStack().stack;
    const marked = new EksInferenceCluster(own, 'Cluster', { cluster: importedCluster(own), existingControllers: { neuronDevicePlugin: true } });
    new EksInferenceService(own, 'Llama', { contract: LLAMA_CONTRACT, classes: llamaClasses(), cluster: marked, modelDataFetcherImage: FETCHER_IMAGE });
    expect(neuronCharts(Template.fromStack(own))).toHaveLength(0);
    // The user's plugin must tolerate the serving taint, which the Neuron chart's defaults leave out (review R234).
    Annotations.fromStack(own).hasWarning('*', Match.stringLikeRegexp(
      "'inf2' of Test/Llama run on nodes tainted capacity-aware-inference/serving \\(NoSchedule\\) and aws.amazon.com/neuron \\(NoSchedule\\)"));
  });

  test('neuronDevicePlugin: false installs nothing, and a Neuron class then fails at synth naming the class, the setting and what is allowed', () => {
    const { stack } = testStack();
    const cluster = new EksInferenceCluster(stack, 'Cluster', { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'), neuronDevicePlugin: false });
    new EksInferenceService(stack, 'Mistral', { contract: MISTRAL_CONTRACT, classes: mistralClasses(), cluster, modelDataFetcherImage: FETCHER_IMAGE });
    expect(() => new EksInferenceService(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: llamaClasses(), cluster, modelDataFetcherImage: FETCHER_IMAGE })).toThrow(
      new RegExp("Test/Llama[\\s\\S]*classes: 'inf2' request aws.amazon.com/neuroncore, but the cluster Test/Cluster has neuronDevicePlugin: false "
        + '[\\s\\S]*allowed: neuronDevicePlugin unset or true[\\s\\S]*existingControllers.neuronDevicePlugin: true'),
    );
    expect(neuronCharts(Template.fromStack(stack))).toHaveLength(0);
    // A service with a cluster of its own passes the setting to it.
    const other = testStack().stack;
    expect(() => new EksInferenceService(other, 'Llama', {
      contract: LLAMA_CONTRACT, classes: llamaClasses(), kubectlLayer: new KubectlV34Layer(other, 'Kubectl'), neuronDevicePlugin: false,
      modelDataFetcherImage: FETCHER_IMAGE,
    })).toThrow(/classes: 'inf2' request aws.amazon.com\/neuroncore, but the cluster Test\/Llama\/Default has neuronDevicePlugin: false/);
  });

  test('fails on a value that is not a boolean, on both installing and marking an existing plugin, and on a chart version that is not exact', () => {
    const build = (props: Partial<EksInferenceClusterProps>, imported = false) => () => {
      const { stack } = testStack();
      const base = imported ? { cluster: importedCluster(stack) } : { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') };
      return new EksInferenceCluster(stack, 'Cluster', { ...base, ...props });
    };
    expect(build({ neuronDevicePlugin: 'yes' as unknown as boolean })).toThrow(/Test\/Cluster[\s\S]*neuronDevicePlugin: is "yes"; allowed: true or false/);
    expect(build({ existingControllers: { neuronDevicePlugin: 1 as unknown as boolean } }, true)).toThrow(
      /existingControllers.neuronDevicePlugin: is 1; allowed: true or false/);
    expect(build({ neuronDevicePlugin: true, existingControllers: { neuronDevicePlugin: true } }, true)).toThrow(
      /neuronDevicePlugin: is true, but existingControllers.neuronDevicePlugin marks a Neuron device plugin the cluster runs already.*allowed: unset/,
    );
    expect(build({ chartVersions: { neuronDevicePlugin: 'latest' } })).toThrow(/chartVersions.neuronDevicePlugin: 'latest' is not a chart version/);
    expect(build({ neuronDevicePlugin: false })).not.toThrow();
    expect(build({ existingControllers: { neuronDevicePlugin: true } }, true)).not.toThrow();
  });

  test('neuronDevicePluginImage fails at construction unless a literal private ECR image by digest, for the pinned chart the cluster installs', () => {
    const build = (props: Partial<EksInferenceClusterProps>, imported = false) => () => {
      const { stack } = testStack();
      const base = imported ? { cluster: importedCluster(stack) } : { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') };
      return new EksInferenceCluster(stack, 'Cluster', { ...base, ...props });
    };
    const allowed = 'allowed: a literal private ECR image pinned by digest (<account>.dkr.ecr.<region>.amazonaws.com/<repository>@sha256:<64 hex>), '
      + 'on a cluster that installs the plugin (neuronDevicePlugin not false, no existingControllers.neuronDevicePlugin) from the pinned chart '
      + '(chartVersions.neuronDevicePlugin unset)';
    const tagged = '123456789012.dkr.ecr.us-east-1.amazonaws.com/neuron-device-plugin:2.31.0.0';
    expect(build({ neuronDevicePluginImage: tagged })).toThrow(
      `EksInferenceCluster 'Test/Cluster' is invalid (1 problem):\n  - neuronDevicePluginImage: is '${tagged}', not a private ECR image pinned by `
      + `digest (a tag can move under a running fleet); ${allowed}`,
    );
    const chartsOwn = `public.ecr.aws/neuron/neuron-device-plugin@sha256:${'c'.repeat(64)}`;
    expect(build({ neuronDevicePluginImage: chartsOwn })).toThrow(`neuronDevicePluginImage: is '${chartsOwn}', not a private ECR image pinned by digest; ${allowed}`);
    expect(build({ neuronDevicePluginImage: NEURON_MIRROR.replace('sha256:', 'sha512:') })).toThrow(/neuronDevicePluginImage: is '.*sha512:c+', not a private ECR/);
    expect(build({ neuronDevicePluginImage: Fn.importValue('Mirror') })).toThrow(
      /neuronDevicePluginImage: is a CDK token \(the chart's values and the nodes' pull grant need the literal reference\)/);
    expect(build({ neuronDevicePluginImage: NEURON_MIRROR, neuronDevicePlugin: false })).toThrow(
      `neuronDevicePluginImage: is '${NEURON_MIRROR}', but neuronDevicePlugin is false: no plugin is installed to run it; ${allowed}`);
    expect(build({ neuronDevicePluginImage: NEURON_MIRROR, existingControllers: { neuronDevicePlugin: true } }, true)).toThrow(
      `neuronDevicePluginImage: is '${NEURON_MIRROR}', but existingControllers.neuronDevicePlugin marks a plugin the cluster runs already: none is installed`);
    expect(build({ neuronDevicePluginImage: NEURON_MIRROR, chartVersions: { neuronDevicePlugin: '1.10.0' } })).toThrow(
      `neuronDevicePluginImage: is '${NEURON_MIRROR}' with chartVersions.neuronDevicePlugin '1.10.0', whose image template is read here for 1.9.0 only`);
    const pinned = { neuronDevicePlugin: NEURON_DEVICE_PLUGIN_CHART.version };
    expect(build({ neuronDevicePluginImage: NEURON_MIRROR, chartVersions: pinned })).not.toThrow();
    expect(build({ neuronDevicePluginImage: NEURON_MIRROR }, true)).not.toThrow();
  });
});
