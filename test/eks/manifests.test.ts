import * as m from '../../lib/eks/manifests';
import { nodeSubnetSelectorTerms } from '../../lib/eks/subnet-discovery';
import { expectValidManifests, type KubernetesObject, manifestErrors } from '../util';

/** What kubectl receives: the objects as JSON. */
const asJson = (objects: readonly object[]): KubernetesObject[] => JSON.parse(JSON.stringify(objects));

const labels = { 'app.kubernetes.io/part-of': 'svc' };
const selector = { 'app.kubernetes.io/name': 'model-server', 'app.kubernetes.io/instance': 'svc-l40s' };

function deploymentInput(overrides: Partial<m.DeploymentInput> = {}): m.DeploymentInput {
  return {
    name: 'svc-l40s',
    namespace: 'svc',
    labels: { ...labels, ...selector },
    selector,
    image: `123456789012.dkr.ecr.us-east-1.amazonaws.com/vllm@sha256:${'a'.repeat(64)}`,
    args: ['--max-num-seqs', '16'],
    env: { B: '2', A: '1' },
    port: 8080,
    acceleratorKind: 'gpu',
    acceleratorResource: 'nvidia.com/gpu',
    acceleratorCount: 1,
    cpu: '3',
    memory: '24Gi',
    modelCacheSize: '40Gi',
    nodePoolName: 'svc-l40s',
    priorityClassName: 'svc-l40s',
    serviceAccountName: 'model-server',
    readiness: { healthPath: '/health', readyPath: '/ready', startupTimeoutSeconds: 1800 },
    drainSeconds: 30,
    inFlightSeconds: 60,
    ...overrides,
  };
}

const nodePoolInput: m.NodePoolInput = {
  name: 'svc-inf2',
  nodeClassName: 'svc-inf2',
  instanceTypes: ['inf2.xlarge', 'inf2.8xlarge'],
  capacityTypes: ['on-demand'],
  acceleratorKind: 'neuron',
  acceleratorResource: 'aws.amazon.com/neuroncore',
  acceleratorLimit: 48,
  cpuLimit: 96,
  weight: 80,
  labels,
  zones: ['us-east-1a'],
  consolidateAfter: '10m',
  expireAfter: '720h',
  terminationGracePeriod: '150s',
};

describe('typed manifest builders', () => {
  test('GIVEN a GPU class WHEN building its Deployment THEN it is pinned, probed on model readiness, drained and locked down', () => {
    const d = m.deployment(deploymentInput());
    const pod = d.spec.template.spec;
    const c = pod.containers[0];
    expect(d.spec).not.toHaveProperty('replicas'); // KEDA owns the count
    expect(pod.nodeSelector).toEqual({ 'karpenter.sh/nodepool': 'svc-l40s' });
    expect(pod.tolerations).toEqual([
      { key: 'capacity-aware-inference/serving', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' },
    ]);
    expect(c.resources.limits['nvidia.com/gpu']).toBe('1');
    expect(c.readinessProbe.httpGet.path).toBe('/ready');
    // 1800 s of weight download at a 10 s period.
    expect(c.startupProbe).toMatchObject({ httpGet: { path: '/health' }, periodSeconds: 10, failureThreshold: 180 });
    expect(c.lifecycle?.preStop.sleep.seconds).toBe(30);
    expect(pod.terminationGracePeriodSeconds).toBe(90);
    expect(c.securityContext).toMatchObject({ runAsNonRoot: true, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
    expect(c.env.map((e) => e.name)).toEqual(['A', 'B']);
    expect(pod.automountServiceAccountToken).toBe(false);
  });

  test('GIVEN a deregistration delay of 0 WHEN building the Deployment THEN it has no preStop hook (a 0 s sleep is refused before Kubernetes 1.33)', () => {
    const d = m.deployment(deploymentInput({ drainSeconds: 0 }));
    const pod = d.spec.template.spec;
    expect(pod.containers[0]).not.toHaveProperty('lifecycle');
    // The grace is the service deadline alone.
    expect(pod.terminationGracePeriodSeconds).toBe(60);
    expectValidManifests(asJson([d]));
  });

  test('GIVEN a warm-up WHEN building the Deployment THEN the start ends with it, the latency floor as timeout, and readiness stays the model-ready check', () => {
    const d = m.deployment(deploymentInput({ readiness: { healthPath: '/h', readyPath: '/r', warmup: { path: '/warmup', maxLatencySeconds: 1.2 }, startupTimeoutSeconds: 600 } }));
    // The warm-up ends the start (asked until its first success); readiness stays the cheap model-ready check for life.
    const c = d.spec.template.spec.containers[0];
    expect(c.startupProbe).toMatchObject({ httpGet: { path: '/warmup' }, timeoutSeconds: 2, successThreshold: 1, failureThreshold: 60 });
    expect(c.readinessProbe).toMatchObject({ httpGet: { path: '/r' }, successThreshold: 1 });
    expect(c.livenessProbe).toMatchObject({ httpGet: { path: '/h' } });
    // A warm-up slower than the period is asked every 30 s: 20 attempts last the 600 s whether they time out or fail at
    // once while the server is still loading (at 10 s, 20 fast failures would restart it after 200 s).
    const slow = m.deployment(deploymentInput({ readiness: { healthPath: '/h', readyPath: '/r', warmup: { path: '/warmup', maxLatencySeconds: 30 }, startupTimeoutSeconds: 600 } }));
    const p = slow.spec.template.spec.containers[0].startupProbe!;
    expect(p).toMatchObject({ timeoutSeconds: 30, periodSeconds: 30, failureThreshold: 20 });
    expect(p.periodSeconds! * p.failureThreshold!).toBeGreaterThanOrEqual(600);
    expect(c.startupProbe!.periodSeconds! * c.startupProbe!.failureThreshold!).toBeGreaterThanOrEqual(600);
  });

  test('GIVEN a Neuron class WHEN building its NodePool THEN it carries the library and Neuron taints, its quota as limits and never consolidates warm servers', () => {
    const p = m.nodePool(nodePoolInput);
    expect(p.spec.template.spec.taints).toEqual([
      { key: 'capacity-aware-inference/serving', value: 'true', effect: 'NoSchedule' },
      { key: 'aws.amazon.com/neuron', value: 'true', effect: 'NoSchedule' },
    ]);
    expect(p.spec.limits).toEqual({ cpu: '96', 'aws.amazon.com/neuroncore': '48' });
    expect(p.spec.disruption.consolidationPolicy).toBe('WhenEmpty');
    expect(p.spec.disruption.budgets).toContainEqual({ nodes: '0', reasons: ['Underutilized'] });
    expect(p.spec.template.spec.requirements).toContainEqual({ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['inf2.xlarge', 'inf2.8xlarge'] });
    expect(p.spec.template.spec.requirements).toContainEqual({ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a'] });
  });

  test('GIVEN a ScaledObject input WHEN building it THEN the CloudWatch window, HPA behavior and fallback are explicit', () => {
    const so = scaledObject();
    const t = so.spec.triggers[0];
    expect(t).toMatchObject({ type: 'aws-cloudwatch', metricType: 'AverageValue', authenticationRef: { kind: 'TriggerAuthentication', name: 'svc-cloudwatch' } });
    expect(t.metadata).toMatchObject({ metricStatPeriod: '60', metricCollectionTime: '180', metricEndTimeOffset: '60', targetMetricValue: '87.5', minMetricValue: '0' });
    expect(so.spec.advanced.horizontalPodAutoscalerConfig.behavior.scaleUp.policies).toEqual([{ type: 'Pods', value: 2, periodSeconds: 120 }]);
    expect(so.spec.advanced.horizontalPodAutoscalerConfig.behavior.scaleDown.stabilizationWindowSeconds).toBe(600);
    expect(so.spec.fallback).toEqual({ failureThreshold: 3, replicas: 2, behavior: 'currentReplicasIfHigher' });
  });

  test('fails when the replica-floor window lapses between two runs of a slower reconciler: it spans three of its periods', () => {
    const floor = { namespace: 'CapacityAwareInference', metricName: 'ReplicaFloor', dimensions: { Service: 's', CapacityClass: 'c' }, region: 'us-east-1' };
    // KEDA reads the newest datapoint in [end - metricCollectionTime, end) (kedacore/keda@v2.20.2 aws_cloudwatch_scaler.go
    // computeQueryWindow, Values[0] of a descending scan): a floor published every P seconds is seen while the window >= P.
    for (const [period, window] of [[60, '180'], [120, '360'], [300, '900']] as const) {
      const t = m.replicaFloorTrigger(floor, 'auth', period);
      expect(t.metadata).toMatchObject({ metricStatPeriod: '60', metricCollectionTime: window, metricEndTimeOffset: '0' });
      // KEDA: metricCollectionTime is a multiple of metricStatPeriod (same file, :88).
      expect(Number(t.metadata.metricCollectionTime) % Number(t.metadata.metricStatPeriod)).toBe(0);
      expect(Number(t.metadata.metricCollectionTime)).toBeGreaterThanOrEqual(2 * period);
    }
  });

  test('every builder output validates against the real Kubernetes and CRD schemas', () => {
    expectValidManifests(asJson([
      m.namespace('svc', labels),
      m.serviceAccount('model-server', 'svc', labels),
      m.priorityClass('svc-l40s', 100000, 'preferred', labels),
      m.deployment(deploymentInput()),
      m.deployment(deploymentInput({ readiness: { healthPath: '/h', readyPath: '/r', warmup: { path: '/w', maxLatencySeconds: 2 }, startupTimeoutSeconds: 60 } })),
      m.service('svc-l40s', 'svc', labels, selector, 80),
      m.podDisruptionBudget('svc-l40s', 'svc', labels, selector),
      m.nodePool(nodePoolInput),
      m.ec2NodeClass({
        name: 'svc-inf2',
        roleName: 'node-role',
        amiAlias: 'bottlerocket@latest',
        subnetSelectorTerms: nodeSubnetSelectorTerms('c'),
        securityGroupTags: { 'aws:eks:cluster-name': 'c' },
        volumeSizeGiB: 200,
        labels,
        tags: { a: 'b' },
      }),
      scaledObject(),
      m.triggerAuthentication('svc-cloudwatch', 'svc', labels),
      m.targetGroupBinding('svc-l40s', 'svc', labels, {
        targetGroupArn: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/tg/0123456789abcdef',
        serviceName: 'svc-l40s',
        servicePort: 80,
        vpcId: 'vpc-0123',
      }),
    ]));
  });

  test('fails when a Bottlerocket node keeps the AMI\'s own OS volume mapping: our mappings replace Karpenter\'s defaults whole', () => {
    const nodeClass = (amiAlias: string) => m.ec2NodeClass({
      name: 'svc-inf2', roleName: 'node-role', amiAlias, subnetSelectorTerms: [{ tags: { k: 'c' } }], securityGroupTags: { k: 'c' }, volumeSizeGiB: 200, labels, tags: {},
    });
    const devices = (amiAlias: string) => nodeClass(amiAlias).spec.blockDeviceMappings!.map((b) => [b.deviceName, b.ebs.volumeSize, b.ebs.encrypted]);
    expect(devices('bottlerocket@latest')).toEqual([['/dev/xvda', '4Gi', true], ['/dev/xvdb', '200Gi', true]]);
    expect(devices('al2023@latest')).toEqual([['/dev/xvda', '200Gi', true]]);
  });

  test('the schema check catches a typo (the validator is strict)', () => {
    const bad = { ...m.podDisruptionBudget('x', 'svc', labels, selector), spec: { maxUnavailabe: 1 } };
    expect(manifestErrors(bad).join('\n')).toMatch(/additional/i);
  });
});

function scaledObject(): m.ScaledObject {
  return m.scaledObject({
    name: 'svc-inf2',
    namespace: 'svc',
    labels,
    deploymentName: 'svc-inf2',
    triggerAuthenticationName: 'svc-cloudwatch',
    metric: {
      namespace: 'AWS/ApplicationELB',
      metricName: 'RequestCount',
      dimensionName: 'LoadBalancer;TargetGroup',
      dimensionValue: 'app/lb/1;targetgroup/tg/2',
      statistic: 'Sum',
      region: 'us-east-1',
    },
    target: 87.5,
    minReplicas: 1,
    maxReplicas: 8,
    fallbackReplicas: 2,
    periodSeconds: 60,
    collectionSeconds: 180,
    endTimeOffsetSeconds: 60,
    scaleDownStabilizationSeconds: 600,
    scaleUpPods: 2,
    scaleUpPeriodSeconds: 120,
    pollingIntervalSeconds: 30,
  });
}
