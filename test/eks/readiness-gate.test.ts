/**
 * Issue 21 item 8: the AWS Load Balancer Controller injects the ALB readiness gate only when a pod is created, and
 * only if a Service selecting the pod and a TargetGroupBinding referring to that Service already exist, in a
 * namespace labelled `elbv2.k8s.aws/pod-readiness-gate-inject: enabled` ("create ingress or service before pod":
 * kubernetes-sigs/aws-load-balancer-controller docs/deploy/pod_readiness_gate.md, /work/notes/C-facts.md). A pod
 * created earlier never gets the gate, so a rollout could take ready pods away before the ALB sees the new ones healthy.
 * `readinessGateProblems` reads that ordering from the synthesized template (CloudFormation DependsOn, transitively).
 */
import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { EKS_RULES } from '../../lib/core/validation/rules';
import { EksInferenceCluster } from '../../lib/eks/cluster';
import { EksInferenceService } from '../../lib/eks/inference-service';
import { LOAD_BALANCER_CONTROLLER_CHART } from '../../lib/eks/versions';
import { FETCHER_IMAGE, LLAMA_CONTRACT, llamaClasses, renderWithPlaceholders, testStack } from '../util';

type Obj = { kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; spec?: Record<string, unknown> };
type Resource = { Type: string; Properties: { Manifest?: unknown }; DependsOn?: string[] };
type TemplateJson = { Resources: Record<string, Resource> };

function dependsOnTransitively(resources: Record<string, Resource>, from: string): Set<string> {
  const seen = new Set<string>();
  const stack = [...(resources[from].DependsOn ?? [])];
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    stack.push(...(resources[id]?.DependsOn ?? []));
  }
  return seen;
}

/** Every Deployment whose pods would be created without the readiness gate, with the reason. */
function readinessGateProblems(template: TemplateJson): string[] {
  const objects = Object.entries(template.Resources)
    .filter(([, r]) => r.Type === 'Custom::AWSCDK-EKS-KubernetesResource')
    .flatMap(([id, r]) => (JSON.parse(renderWithPlaceholders(r.Properties.Manifest)) as Obj[]).map((o) => ({ id, o })));
  const problems: string[] = [];
  for (const { id, o: deployment } of objects.filter((x) => x.o.kind === 'Deployment')) {
    const ns = deployment.metadata.namespace;
    const where = `Deployment ${ns}/${deployment.metadata.name} (${id})`;
    const before = dependsOnTransitively(template.Resources, id);
    const podLabels = ((deployment.spec!.template as { metadata: { labels: Record<string, string> } }).metadata.labels);
    const namespace = objects.find((x) => x.o.kind === 'Namespace' && x.o.metadata.name === ns);
    if (namespace?.o.metadata.labels?.['elbv2.k8s.aws/pod-readiness-gate-inject'] !== 'enabled') {
      problems.push(`${where}: its namespace is not labelled elbv2.k8s.aws/pod-readiness-gate-inject=enabled`);
    } else if (!before.has(namespace.id)) {
      problems.push(`${where}: is not applied after its namespace`);
    }
    const services = objects.filter((x) => x.o.kind === 'Service' && x.o.metadata.namespace === ns
      && Object.entries((x.o.spec!.selector ?? {}) as Record<string, string>).every(([k, v]) => podLabels[k] === v));
    const bindings = objects.filter((x) => x.o.kind === 'TargetGroupBinding' && x.o.metadata.namespace === ns
      && services.some((s) => s.o.metadata.name === (x.o.spec!.serviceRef as { name: string }).name));
    if (bindings.length === 0) problems.push(`${where}: no TargetGroupBinding refers to a Service selecting its pods`);
    for (const x of [...services, ...bindings]) {
      if (!before.has(x.id)) problems.push(`${where}: is not applied after ${x.o.kind} ${x.o.metadata.name} (${x.id})`);
    }
  }
  return problems;
}

function ownCluster(): TemplateJson {
  const { stack } = testStack();
  new EksInferenceService(stack, 'Llama', {
    contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'),
  });
  return Template.fromStack(stack).toJSON() as TemplateJson;
}

describe('ALB readiness gate for the first pods (issue 21 item 8)', () => {
  let template: TemplateJson;
  beforeAll(() => {
    template = ownCluster();
  });

  test('every Deployment is applied after its namespace (labelled for injection), its Service and its TargetGroupBinding', () => {
    expect(Object.values(template.Resources).some((r) => renderWithPlaceholders(r.Properties.Manifest ?? '').includes('"Deployment"'))).toBe(true);
    expect(readinessGateProblems(template)).toEqual([]);
  });

  test('also on a shared cluster with a rule-routed service', () => {
    const { stack } = testStack();
    const cluster = new EksInferenceCluster(stack, 'Cluster', { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
    const llama = new EksInferenceService(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: llamaClasses(), cluster, modelDataFetcherImage: FETCHER_IMAGE });
    new EksInferenceService(stack, 'Mistral', {
      contract: { ...LLAMA_CONTRACT, name: 'mistral-chat' }, classes: llamaClasses().slice(0, 2), cluster, modelDataFetcherImage: FETCHER_IMAGE,
      listenerRule: { listener: llama.listener, priority: 10, pathPatterns: ['/mistral/*'] },
    });
    expect(readinessGateProblems(Template.fromStack(stack).toJSON() as TemplateJson)).toEqual([]);
  });

  test('fails when a workload is no longer ordered after its binding (the first pods would get no gate)', () => {
    const broken = structuredClone(template);
    const [workloadId, workload] = Object.entries(broken.Resources).find(([id]) => id.startsWith('LlamaWorkloada10g'))!;
    const bindingId = workload.DependsOn!.find((d) => d.startsWith('LlamaBindinga10g'))!;
    workload.DependsOn = workload.DependsOn!.filter((d) => d !== bindingId);
    expect(readinessGateProblems(broken)).toEqual([
      `Deployment llama3-chat/llama3-chat-a10g (${workloadId}): is not applied after Service llama3-chat-a10g (${bindingId})`,
      `Deployment llama3-chat/llama3-chat-a10g (${workloadId}): is not applied after TargetGroupBinding llama3-chat-a10g (${bindingId})`,
    ]);
  });

  test('fails when the namespace is not labelled for injection', () => {
    const broken = structuredClone(template);
    for (const r of Object.values(broken.Resources)) {
      if (typeof r.Properties.Manifest === 'string') r.Properties.Manifest = r.Properties.Manifest.replace('"elbv2.k8s.aws/pod-readiness-gate-inject":"enabled"', '"x":"y"');
    }
    expect(readinessGateProblems(broken)).toHaveLength(3);
    expect(readinessGateProblems(broken)[0]).toMatch(/its namespace is not labelled elbv2.k8s.aws\/pod-readiness-gate-inject=enabled/);
  });
});

/**
 * Review R240: the pod webhook's failurePolicy is the chart's Ignore by default, so a pod created while the webhook
 * does not answer gets no gate and counts as ready at once (lib/eks/load-balancer-controller.ts READINESS_GATE_WEBHOOK_VALUES).
 * The chart renders `podMutatorWebhookConfig.failurePolicy` and `objectSelector` on `mpod.elbv2.k8s.aws`
 * (aws/eks-charts@5239609 stable/aws-load-balancer-controller/templates/webhook.yaml:22-48).
 */
describe('the readiness-gate webhook refuses a library pod rather than create it without the gate (R240)', () => {
  let template: TemplateJson;
  beforeAll(() => {
    template = ownCluster();
  });
  const controllerValues = (t: TemplateJson) => {
    const charts = Object.values(t.Resources).filter((r) => r.Type === 'Custom::AWSCDK-EKS-HelmChart'
      && (r.Properties as { Chart?: string }).Chart === 'aws-load-balancer-controller');
    expect(charts).toHaveLength(1);
    return JSON.parse(renderWithPlaceholders((charts[0].Properties as { Values: unknown }).Values)) as Record<string, unknown>;
  };

  test('failurePolicy Fail, and an objectSelector on the label every library object carries', () => {
    const values = controllerValues(template);
    expect(values.podMutatorWebhookConfig).toEqual({ failurePolicy: 'Fail' });
    expect(values.objectSelector).toEqual({ matchLabels: { 'app.kubernetes.io/managed-by': 'cdk-capacity-aware-inference' } });
    expect(values.enableServiceMutatorWebhook).toBe(false);
  });

  test("every model server's pods match the selector (they still get the gate) and are not the controller's own (which the chart excludes)", () => {
    const { matchLabels } = controllerValues(template).objectSelector as { matchLabels: Record<string, string> };
    const deployments = Object.values(template.Resources)
      .filter((r) => r.Type === 'Custom::AWSCDK-EKS-KubernetesResource')
      .flatMap((r) => JSON.parse(renderWithPlaceholders(r.Properties.Manifest)) as Obj[])
      .filter((o) => o.kind === 'Deployment');
    expect(deployments.length).toBeGreaterThan(0);
    for (const d of deployments) {
      const podLabels = (d.spec!.template as { metadata: { labels: Record<string, string> } }).metadata.labels;
      expect(podLabels).toEqual(expect.objectContaining(matchLabels));
      expect(podLabels['app.kubernetes.io/name']).not.toBe('aws-load-balancer-controller');
    }
  });

  test('an imported cluster with its own controller installs no chart (its settings are documented instead)', () => {
    const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'eks-inference-cluster.md'), 'utf8');
    expect(doc).toContain('podMutatorWebhookConfig.failurePolicy: Fail');
    expect(doc).toContain('app.kubernetes.io/managed-by: cdk-capacity-aware-inference');
  });
});

/**
 * What the library relies on of the controller is cited at the tag it installs: chart 3.5.0 ships appVersion v3.5.0
 * (kubernetes-sigs/aws-load-balancer-controller@v3.5.0 helm/aws-load-balancer-controller/Chart.yaml:4-5). A chart bump
 * fails here until every cited fact is read again at the new tag.
 */
describe('aws-load-balancer-controller facts are cited at the installed version', () => {
  const tag = `v${LOAD_BALANCER_CONTROLLER_CHART.version}`;

  test('the readiness gate is True only for a healthy target (resource_manager.go calculateReadinessGateTransition)', () => {
    expect(EKS_RULES['placement.zones@loadBalancer'].why).toContain(
      `aws-load-balancer-controller@${tag} pkg/targetgroupbinding/resource_manager.go:515-528, calculateReadinessGateTransition`);
  });

  test('every aws-load-balancer-controller@<tag> citation in lib/ names that tag', () => {
    const lib = join(__dirname, '..', '..', 'lib');
    const files = (readdirSync(lib, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'));
    const tags = files.flatMap((f) => [...readFileSync(join(lib, f), 'utf8').matchAll(/aws-load-balancer-controller@(v[\w.-]+)/g)].map((m) => `${f}: ${m[1]}`));
    expect(tags.length).toBeGreaterThanOrEqual(3);
    expect(tags.filter((t) => !t.endsWith(`: ${tag}`))).toEqual([]);
  });
});
