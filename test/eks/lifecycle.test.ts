/**
 * What CloudFormation does with the service's resources across deployments (review R100): which resources an update
 * modifies and which it removes in the cleanup phase, in what order, and whether each custom-resource request fits the
 * kubectl handler's 15 minutes.
 */
import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
import { Duration, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { Construct } from 'constructs';
import { defaultDeregistrationDelaySeconds, EKS_TARGET_GROUP_DEFAULTS } from '../../lib/core/platform/control-loop';
import { HELM_REQUEST_OVERHEAD_SECONDS, KUBECTL_HANDLER_TIMEOUT_SECONDS, MAX_ATOMIC_CHART_TIMEOUT_SECONDS } from '../../lib/core/platform/kubectl-handler';
import { ConstructValidationError } from '../../lib/core/validation/error';
import { EksInferenceCluster } from '../../lib/eks/cluster';
import { EksInferenceService, type EksInferenceServiceProps } from '../../lib/eks/inference-service';
import { controllerChart } from '../../lib/eks/pod-identity';
import { KEDA_CHART } from '../../lib/eks/versions';
import { FETCHER_IMAGE, LLAMA_CONTRACT, llamaClasses, testStack } from '../util';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- template properties of several resource types
type Resources = Record<string, { Type: string; Properties: Record<string, any>; DependsOn?: string[] }>;

function build(classes: number, overrides: Partial<EksInferenceServiceProps> = {}): { stack: Stack; resources: Resources } {
  const { stack } = testStack();
  new EksInferenceService(stack, 'Llama', {
    contract: LLAMA_CONTRACT, classes: llamaClasses().slice(0, classes), modelDataFetcherImage: FETCHER_IMAGE,
    kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'), ...overrides,
  });
  return { stack, resources: Template.fromStack(stack).toJSON().Resources as Resources };
}

function logicalId(resources: Resources, pattern: RegExp): string {
  const ids = Object.keys(resources).filter((k) => pattern.test(k));
  expect(ids).toHaveLength(1);
  return ids[0];
}

/** Policies that name `targetGroup` (a logical id) in their document. */
function grantsOn(resources: Resources, targetGroup: string): string[] {
  return Object.keys(resources).filter((k) => resources[k].Type === 'AWS::IAM::Policy'
    && JSON.stringify(resources[k].Properties.PolicyDocument).includes(`{"Ref":"${targetGroup}"}`));
}

describe('removing a class from a deployed service', () => {
  const three = build(3).resources;
  const two = build(2).resources;
  const removedTargetGroup = logicalId(three, /^LlamaTargetGroupinf2/);
  const removedBinding = logicalId(three, /^LlamaBindinginf2/);

  test("removes every policy granting on the removed target group, after that class's TargetGroupBinding", () => {
    // A policy kept and modified would lose the grant in the update phase, before the binding is deleted in the cleanup
    // phase: the controller could not deregister its targets and would keep the binding's finalizer.
    const grants = grantsOn(three, removedTargetGroup);
    expect(grants).toHaveLength(1);
    for (const g of grants) {
      expect(two[g]).toBeUndefined();
      expect(three[removedBinding].DependsOn).toContain(g);
    }
  });

  test("each class's TargetGroupBinding depends on its own class's policy, and no policy of the remaining classes changes", () => {
    for (const c of ['l40s', 'a10g']) {
      const [grant] = grantsOn(two, logicalId(two, new RegExp(`^LlamaTargetGroup${c}`)));
      expect(two[logicalId(two, new RegExp(`^LlamaBinding${c}`))].DependsOn).toContain(grant);
      expect(two[grant]).toEqual(three[grant]);
    }
    // The controller's own policy names no target group.
    const controller = logicalId(two, /LoadBalancerControllerPolicy/);
    expect(JSON.stringify(two[controller].Properties.PolicyDocument)).not.toMatch(/RegisterTargets|"Ref"/);
  });

  test('keeps the logical ids of the remaining classes\' manifests (a changed id deletes live objects)', () => {
    const manifests = (r: Resources) => Object.keys(r).filter((k) => r[k].Type === 'Custom::AWSCDK-EKS-KubernetesResource');
    expect(manifests(two)).toEqual(manifests(three).filter((k) => !/inf2/.test(k)));
    expect(manifests(two).filter((k) => /^Llama(Capacity|Binding|Workload|Scaler)l40s/.test(k))).toHaveLength(4);
  });

  test("the class policies are created after the controller's own policy is updated (the role never holds both forms)", () => {
    const controller = logicalId(two, /LoadBalancerControllerPolicy/);
    for (const g of grantsOn(two, logicalId(two, /^LlamaTargetGroupl40s/))) expect(two[g].DependsOn).toContain(controller);
  });
});

describe('removing a service from a shared cluster in the same stack', () => {
  test("removes the service's policies and modifies none of the cluster's", () => {
    const synth = (services: string[]) => {
      const { stack } = testStack();
      const cluster = new EksInferenceCluster(stack, 'Cluster', { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
      for (const name of services) {
        new EksInferenceService(stack, name, {
          contract: { ...LLAMA_CONTRACT, name: name.toLowerCase() }, classes: llamaClasses().slice(0, 2), cluster,
          modelDataFetcherImage: FETCHER_IMAGE,
        });
      }
      return Template.fromStack(stack).toJSON().Resources as Resources;
    };
    const both = synth(['Chat', 'Code']);
    const one = synth(['Chat']);
    const policies = (r: Resources) => Object.keys(r).filter((k) => r[k].Type === 'AWS::IAM::Policy');
    for (const id of policies(both)) {
      if (id.startsWith('Code')) expect(one[id]).toBeUndefined();
      else expect(one[id]).toEqual(both[id]);
    }
    expect(policies(both).filter((id) => id.startsWith('CodeLoadBalancerControllerTargets'))).toHaveLength(2);
  });
});

describe('two service stacks with the same construct paths on one cluster', () => {
  test("fails when their target-group policies take one name on the controller's role (each would replace the other's grant)", () => {
    const { app, stack } = testStack('Platform');
    const cluster = new EksInferenceCluster(stack, 'Cluster', { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
    const stacks = ['ChatSvc', 'CodeSvc'].map((id) => {
      const svc = new Stack(app, id, { env: { account: stack.account, region: stack.region } });
      new EksInferenceService(svc, 'Service', {
        contract: { ...LLAMA_CONTRACT, name: id.toLowerCase() }, classes: llamaClasses().slice(0, 2), cluster, modelDataFetcherImage: FETCHER_IMAGE,
      });
      return svc;
    });
    // The policies on the controller's role (each service's own roles hold the others).
    const names = stacks.flatMap((svc) => Object.entries(Template.fromStack(svc).toJSON().Resources as Resources)
      .filter(([id, r]) => r.Type === 'AWS::IAM::Policy' && id.includes('LoadBalancerControllerTargets')).map(([, r]) => r.Properties.PolicyName as string));
    expect(names).toHaveLength(4);
    expect(new Set(names).size).toBe(4);
    for (const name of names) expect(name.length).toBeLessThanOrEqual(128);
  });
});

describe('Helm charts fit the kubectl handler', () => {
  test('every controller chart can fail, roll back and be answered within the handler timeout', () => {
    const { stack } = testStack();
    new EksInferenceService(stack, 'Llama', {
      contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'),
    });
    const resources = Template.fromStack(stack).toJSON().Resources as Resources;
    const handler = Object.values(resources).find((r) => r.Type === 'AWS::Lambda::Function'
      && r.Properties.Description === 'onEvent handler for EKS kubectl resource provider')!;
    expect(handler.Properties.Timeout).toBe(KUBECTL_HANDLER_TIMEOUT_SECONDS);
    const charts = Object.values(resources).filter((r) => r.Type === 'Custom::AWSCDK-EKS-HelmChart');
    // Karpenter, KEDA, the Load Balancer Controller and (a Neuron class) the Neuron device plugin.
    expect(charts.map((c) => c.Properties.Chart).sort()).toEqual(['aws-load-balancer-controller', 'karpenter', 'keda', 'neuron-helm-chart']);
    for (const chart of charts) {
      expect(chart.Properties).toMatchObject({ Wait: true, Atomic: true });
      const seconds = Number(/^(\d+)s$/.exec(chart.Properties.Timeout)![1]);
      expect(2 * seconds + HELM_REQUEST_OVERHEAD_SECONDS).toBeLessThanOrEqual(handler.Properties.Timeout);
    }
  });

  test('a chart timeout that a failed upgrade could not wait twice fails at synth, naming the chart and the bound', () => {
    const { stack } = testStack();
    const cluster = new EksInferenceCluster(stack, 'Cluster', { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
    let n = 0;
    const chart = (seconds: number) => () => controllerChart(new Construct(stack, `Scope${n++}`), 'Chart', {
      cluster: cluster.cluster, chart: KEDA_CHART, release: 'r', namespace: 'n', createNamespace: false, values: {}, dependsOn: [],
      timeout: Duration.seconds(seconds),
    });
    expect(MAX_ATOMIC_CHART_TIMEOUT_SECONDS).toBe(390);
    expect(chart(391)).toThrow(ConstructValidationError);
    expect(chart(391)).toThrow("Construct 'Test/Scope1' is invalid (1 problem):\n  - timeout: is 391 s for chart 'keda'; allowed: at most 390 s");
    expect(chart(390)).not.toThrow();
  });
});

describe('drains a delete cannot wait for', () => {
  const warnings = (stack: Stack) => Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('eks-drain-exceeds-delete'));

  test('warns, naming the service, the values and the bound, when the deregistration delay and the deadline pass 600 s', () => {
    const { stack } = build(2, { loadBalancer: { deregistrationDelay: Duration.seconds(3600) } });
    const found = warnings(stack);
    expect(found).toHaveLength(1);
    expect(found[0].id).toBe('/Test/Llama');
    expect(found[0].entry.data).toContain(`The model servers' termination grace is ${3600 + Math.ceil(LLAMA_CONTRACT.slo.deadlineMs / 1000)} s `
      + '(loadBalancer.deregistrationDelay 3600 s, then contract.slo.deadlineMs');
    expect(found[0].entry.data).toContain('above the 600 s a delete can wait');
  });

  test('does not warn for the defaults, nor at the bound', () => {
    expect(warnings(build(2).stack)).toEqual([]);
    const atBound = 600 - Math.ceil(LLAMA_CONTRACT.slo.deadlineMs / 1000);
    expect(warnings(build(2, { loadBalancer: { deregistrationDelay: Duration.seconds(atBound) } }).stack)).toEqual([]);
    expect(warnings(build(2, { loadBalancer: { deregistrationDelay: Duration.seconds(atBound + 1) } }).stack)).toHaveLength(1);
  });
});

/**
 * Review R240: what an ALB does with a request still in flight when the deregistration delay ends is not documented,
 * so the delay covers the request deadline by default (lib/core/platform/control-loop.ts defaultDeregistrationDelaySeconds).
 */
describe('the deregistration delay covers the request deadline (R240)', () => {
  const withDeadline = (seconds: number, overrides: Partial<EksInferenceServiceProps> = {}) =>
    build(2, { contract: { ...LLAMA_CONTRACT, slo: { ...LLAMA_CONTRACT.slo, deadlineMs: seconds * 1000 } }, ...overrides });
  const belowDeadline = (stack: Stack) => Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('eks-deregistration-below-deadline'));
  const drainWarnings = (stack: Stack) => Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('eks-drain-exceeds-delete'));
  const delays = (resources: Resources) => Object.values(resources).filter((r) => r.Type === 'AWS::ElasticLoadBalancingV2::TargetGroup')
    .map((r) => (r.Properties.TargetGroupAttributes as Array<{ Key: string; Value: string }>)
      .find((a) => a.Key === 'deregistration_delay.timeout_seconds')!.Value);

  test('the default: the deadline in whole seconds, at least the 30 s floor, at most the ALB\'s 3600 s', () => {
    expect(EKS_TARGET_GROUP_DEFAULTS.deregistrationDelaySeconds).toBe(30);
    expect(defaultDeregistrationDelaySeconds(30)).toBe(30);
    expect(defaultDeregistrationDelaySeconds(0.5)).toBe(30);
    expect(defaultDeregistrationDelaySeconds(45.2)).toBe(46);
    expect(defaultDeregistrationDelaySeconds(3600)).toBe(3600);
    expect(defaultDeregistrationDelaySeconds(5000)).toBe(3600);
  });

  test('a 120 s deadline: target groups wait 120 s, the preStop sleeps 120 s and the grace adds the deadline; no warning', () => {
    const { stack, resources } = withDeadline(120);
    expect(delays(resources)).toEqual(['120', '120']);
    const deployments = Object.values(resources).filter((r) => r.Type === 'Custom::AWSCDK-EKS-KubernetesResource')
      .flatMap((r) => JSON.stringify(r.Properties.Manifest).match(/terminationGracePeriodSeconds\\+":\d+|"seconds\\+":\d+/g) ?? []);
    expect(deployments).toEqual(expect.arrayContaining([
      expect.stringMatching(/terminationGracePeriodSeconds\\+":240$/), expect.stringMatching(/seconds\\+":120$/),
    ]));
    expect(belowDeadline(stack)).toEqual([]);
    expect(drainWarnings(stack)).toEqual([]);
  });

  test('a deadline above the ALB\'s 3600 s maximum: the default delay is 3600 s, and the warning says so (review R243)', () => {
    const { stack, resources } = withDeadline(3700);
    expect(delays(resources)).toEqual(['3600', '3600']);
    const found = belowDeadline(stack);
    expect(found).toHaveLength(1);
    expect(found[0].entry.data).toContain('loadBalancer.deregistrationDelay is 3600 s (the default, at most the ALB\'s 3600 s), shorter than');
    expect(found[0].entry.data).toContain('Lower the deadline to at most 3600 s');
  });

  test('the library\'s test contract (a 30 s deadline) keeps 30 s', () => {
    expect(delays(build(2).resources)).toEqual(['30', '30']);
    expect(belowDeadline(build(2).stack)).toEqual([]);
  });

  test('warns, naming the value and the deadline, when a delay is set below the deadline; not at it', () => {
    const { stack } = build(2, { loadBalancer: { deregistrationDelay: Duration.seconds(10) } });
    const found = belowDeadline(stack);
    expect(found).toHaveLength(1);
    expect(found[0].id).toBe('/Test/Llama');
    expect(found[0].entry.data)
      .toContain(`loadBalancer.deregistrationDelay is 10 s, shorter than contract.slo.deadlineMs ${LLAMA_CONTRACT.slo.deadlineMs} ms`);
    const atDeadline = Duration.seconds(LLAMA_CONTRACT.slo.deadlineMs / 1000);
    expect(belowDeadline(build(2, { loadBalancer: { deregistrationDelay: atDeadline } }).stack)).toEqual([]);
  });

  test('with the default delay the delete warning starts at a deadline above 300 s (grace = twice the deadline)', () => {
    expect(drainWarnings(withDeadline(300).stack)).toEqual([]);
    expect(drainWarnings(withDeadline(301).stack)).toHaveLength(1);
  });
});
