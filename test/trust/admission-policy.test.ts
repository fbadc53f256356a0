import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
import { type CelInput, run } from '@bufbuild/cel';
import { Template } from 'aws-cdk-lib/assertions';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import {
  APPROVAL_ANNOTATION_PREFIX,
  ApprovedImagesAdmission,
  approvedImagesPolicy,
  approvedImagesPolicyBinding,
  approvedImagesPolicyProblems,
  imageApproval,
} from '../../lib/trust/admission-policy';
import { expectValidManifests, imageRef, testStack } from '../util';

const IMAGES = [imageRef('vllm', 'a'), imageRef('vllm', 'b'), imageRef('neuron', 'c')];
const OPTIONS = { name: 'approved-images-serving', namespace: 'serving', images: IMAGES };

describe('approved-images admission policy', () => {
  const policy = approvedImagesPolicy(OPTIONS);
  const binding = approvedImagesPolicyBinding(OPTIONS);

  test('the policy and its binding validate against the Kubernetes 1.33 schemas', () => {
    expectValidManifests([{ ...policy }, { ...binding }]);
  });

  test('the schema check catches a misspelt field (the validator is strict)', () => {
    expect(() => expectValidManifests([{ ...binding, spec: { ...binding.spec, validationAction: ['Deny'] } }])).toThrow();
  });

  test('matches pods, the ephemeral-containers subresource and every pod-template owner on create and update, failing closed', () => {
    expect(policy.spec.failurePolicy).toBe('Fail');
    expect(policy.spec.matchConstraints.resourceRules).toEqual([
      { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['pods', 'pods/ephemeralcontainers'] },
      { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments', 'replicasets', 'statefulsets', 'daemonsets'] },
      { apiGroups: ['batch'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['jobs', 'cronjobs'] },
    ]);
  });

  /**
   * Evaluates the policy as the API server does (variables in order, then the validation) with a real CEL engine.
   * An expression that fails to evaluate counts as a denial (failurePolicy: Fail), never as admitted.
   */
  function admits(object: Record<string, unknown>, oldObject: Record<string, unknown> | null = null, approved = IMAGES): boolean {
    const variables: Record<string, unknown> = {};
    const bindings = () => ({ object, oldObject, variables, params: paramsApproving(approved) }) as unknown as Record<string, CelInput>;
    for (const v of policy.spec.variables) variables[v.name] = run(v.expression, bindings());
    return policy.spec.validations.every((validation) => run(validation.expression, bindings()) === true);
  }
  /**
   * The policy's parameter as the API server hands it over: the policy object, with kubectl's last-applied annotation
   * (which holds the policy's text) and one annotation per approved image.
   */
  function paramsApproving(images: readonly string[]): Record<string, unknown> {
    const annotations: Record<string, string> = { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify(policy) };
    for (const i of images) annotations[imageApproval(i).key] = i;
    return { ...policy, metadata: { ...policy.metadata, annotations } };
  }
  const podSpec = (image: string, extra: Record<string, unknown> = {}) => ({ containers: [{ name: 'server', image }], ...extra });
  const template = (image: string, extra?: Record<string, unknown>) => ({ template: { spec: podSpec(image, extra) } });
  const kinds: Array<[string, (image: string, extra?: Record<string, unknown>) => Record<string, unknown>]> = [
    ['Pod', (image, extra) => podSpec(image, extra)],
    ['Deployment', template],
    ['ReplicaSet', template],
    ['StatefulSet', template],
    ['DaemonSet', template],
    ['Job', template],
    ['CronJob', (image, extra) => ({ schedule: '* * * * *', jobTemplate: { spec: template(image, extra) } })],
  ];

  test.each(kinds)('admits a %s whose every image is approved, and rejects one with an unapproved image', (kind, spec) => {
    const object = (s: Record<string, unknown>) => ({ apiVersion: 'v1', kind, metadata: { name: 'x', namespace: 'serving' }, spec: s });
    expect(admits(object(spec(IMAGES[0])))).toBe(true);
    expect(admits(object(spec(IMAGES[0], { initContainers: [{ name: 'init', image: IMAGES[2] }] })))).toBe(true);
    expect(admits(object(spec('public.ecr.aws/unapproved/vllm:latest')))).toBe(false);
    expect(admits(object(spec(IMAGES[0], { initContainers: [{ name: 'init', image: 'busybox' }] })))).toBe(false);
    expect(admits(object(spec(IMAGES[0], { ephemeralContainers: [{ name: 'debug', image: 'busybox' }] })))).toBe(false);
  });

  describe('image volumes (spec.volumes[].image.reference: the kubelet pulls the reference and mounts it)', () => {
    const imageVolume = (name: string, reference?: string) => ({ name, image: reference === undefined ? { pullPolicy: 'IfNotPresent' } : { reference } });
    const volumes = (...v: unknown[]) => ({ volumes: [{ name: 'cache', emptyDir: {} }, ...v] });

    test.each(kinds)('a %s may mount an approved image volume and no other', (kind, spec) => {
      const object = (s: Record<string, unknown>) => ({ apiVersion: 'v1', kind, metadata: { name: 'x', namespace: 'serving' }, spec: s });
      expect(admits(object(spec(IMAGES[0], volumes(imageVolume('weights', IMAGES[2])))))).toBe(true);
      expect(admits(object(spec(IMAGES[0], volumes())))).toBe(true);
      expect(admits(object(spec(IMAGES[0], volumes(imageVolume('weights', 'public.ecr.aws/unapproved/weights:latest')))))).toBe(false);
      expect(admits(object(spec(IMAGES[0], volumes(imageVolume('weights', IMAGES[2]), imageVolume('more', 'busybox')))))).toBe(false);
      // Without a reference the volume names nothing to approve: refused (a pod-template owner's controller would fill it in unchecked).
      expect(admits(object(spec(IMAGES[0], volumes(imageVolume('weights')))))).toBe(false);
    });

    test('the schema of the pinned Kubernetes version has the field the policy reads', () => {
      const pod = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x', namespace: 'serving' },
        spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: podSpec(IMAGES[0], volumes(imageVolume('weights', IMAGES[2]))) } } };
      expectValidManifests([pod]);
    });

    test('an update keeps the reference a volume of that name already mounted, and adds none', () => {
      const retired = imageRef('vllm', 'd');
      const rs = (extra: Record<string, unknown>, replicas = 2) =>
        ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'old', namespace: 'serving' }, spec: { replicas, ...template(IMAGES[0], extra) } });
      expect(admits(rs(volumes(imageVolume('weights', retired)), 1), rs(volumes(imageVolume('weights', retired))))).toBe(true);
      expect(admits(rs(volumes(imageVolume('weights', retired))))).toBe(false);
      expect(admits(rs(volumes(imageVolume('other', retired))), rs(volumes(imageVolume('weights', retired))))).toBe(false);
      expect(admits(rs(volumes(imageVolume('weights', retired))), rs(volumes(imageVolume('weights', IMAGES[2]))))).toBe(false);
    });

    test('the denial names the volumes and references it refuses', () => {
      const validation = policy.spec.validations[1];
      const object = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'serving' },
        spec: podSpec(IMAGES[0], volumes(imageVolume('ok', IMAGES[2]), imageVolume('bad', 'busybox'), imageVolume('bare'))) };
      const variables: Record<string, unknown> = {};
      const bindings = () => ({ object, oldObject: null, variables, params: paramsApproving(IMAGES) }) as unknown as Record<string, CelInput>;
      for (const v of policy.spec.variables) variables[v.name] = run(v.expression, bindings());
      expect(run(validation.expression, bindings())).toBe(false);
      // The engine here has no Kubernetes string library (join): evaluate the list the message joins.
      const listed = /(variables\.imageVolumes\.filter\(.*\)\.map\(.*\))\.join\(/.exec(validation.messageExpression!)![1];
      expect([...(run(listed, bindings()) as unknown as Iterable<unknown>)]).toEqual(['bad=busybox', 'bare=(no reference)']);
    });
  });

  describe('sidecars a mutating webhook injects (review R255): judged on the pod as created, after injection', () => {
    const PROXY = imageRef('istio/proxyv2', 'e');
    /**
     * A pod as Istio's injector leaves it (istio/istio@1.30.3 injection-template.yaml): an istio-init (istio-validation with
     * the CNI) init container and an istio-proxy container, or with native sidecars istio-proxy among the init containers
     * (restartPolicy: Always), both at one image reference.
     */
    const injected = (proxy: string, native = false) => ({
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'llama-l40s-x', namespace: 'serving' },
      spec: native
        ? { initContainers: [{ name: 'istio-init', image: proxy }, { name: 'istio-proxy', image: proxy, restartPolicy: 'Always' }],
          containers: [{ name: 'server', image: IMAGES[0] }] }
        : { initContainers: [{ name: 'istio-init', image: proxy }], containers: [{ name: 'server', image: IMAGES[0] }, { name: 'istio-proxy', image: proxy }] },
    });

    test.each([false, true])('a pod whose sidecar runs an approved digest is admitted, one injected by tag is refused (native sidecars: %s)', (native) => {
      const approved = [...IMAGES, PROXY];
      expect(admits(injected(PROXY, native), null, approved)).toBe(true);
      // Istio's default: <hub>/<image>:<tag> (pkg/kube/inject/inject.go imageURL), which no digest approval matches.
      expect(admits(injected('docker.io/istio/proxyv2:1.30.3', native), null, approved)).toBe(false);
      // Approving the class images alone refuses the injected pod, as a cluster without additionalApprovedImages did.
      expect(admits(injected(PROXY, native))).toBe(false);
      // Another digest of the same repository is another image.
      expect(admits(injected(imageRef('istio/proxyv2', 'd'), native), null, approved)).toBe(false);
    });

    test('the Deployment whose pods get the sidecar is admitted without it: its template has none', () => {
      const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'llama-l40s', namespace: 'serving' }, spec: template(IMAGES[0]) };
      expect(admits(deployment)).toBe(true);
    });
  });

  test('approves what the annotations on the policy approve, and nothing its expression or other annotations name', () => {
    expect(JSON.stringify(policy.spec)).not.toContain('@sha256:');
    const pod = (image: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'serving' }, spec: podSpec(image) });
    expect(admits(pod(IMAGES[0]), null, [IMAGES[0]])).toBe(true);
    expect(admits(pod(IMAGES[0]), null, [IMAGES[1]])).toBe(false);
    // The last-applied annotation names every field of the policy, and a stray annotation is no approval.
    expect(admits(pod(JSON.stringify(policy)), null, [])).toBe(false);
    const stray = { ...paramsApproving([]), metadata: { name: 'x', annotations: { 'example.com/image': IMAGES[0] } } };
    const variables: Record<string, unknown> = {};
    const bindings = { object: pod(IMAGES[0]), oldObject: null, variables, params: stray } as unknown as Record<string, CelInput>;
    for (const v of policy.spec.variables) variables[v.name] = run(v.expression, bindings);
    expect(run(policy.spec.validations[0].expression, bindings)).toBe(false);
    // A policy without annotations approves nothing (and does not fail to evaluate).
    const bare = { object: pod(IMAGES[0]), oldObject: null, variables: {}, params: policy } as unknown as Record<string, CelInput>;
    expect([...(run(policy.spec.variables[0].expression, bare) as unknown as Iterable<unknown>)]).toEqual([]);
  });

  test('an approval is an annotation of at most 63 characters after its prefix, one key per image', () => {
    const keys = IMAGES.map((i) => imageApproval(i).key);
    expect(new Set(keys).size).toBe(IMAGES.length);
    for (const key of keys) expect(key).toMatch(new RegExp(`^${APPROVAL_ANNOTATION_PREFIX.replace(/\./g, '\\.')}[0-9a-f]{40}$`));
    expect(imageApproval(IMAGES[0])).toEqual(imageApproval(IMAGES[0]));
    expect(policy.spec.validations[0].expression).toBe(
      'variables.containers.all(c, c.image in variables.allowed || variables.oldContainers.exists(o, o.name == c.name && o.image == c.image))');
  });

  test('while a deployment replaces an image, both are approved: a rollback to the old one is admitted', () => {
    const [old, next] = [imageRef('vllm', 'd'), IMAGES[0]];
    const deployment = (image: string) =>
      ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'server', namespace: 'serving' }, spec: template(image) });
    // The new approval exists before the Deployment is updated; the old one is deleted only in cleanup.
    expect(admits(deployment(next), deployment(old), [old, next])).toBe(true);
    expect(admits(deployment(old), deployment(next), [old, next])).toBe(true);
    // After the update's cleanup, only the new image: returning to the old one is refused.
    expect(admits(deployment(old), deployment(next), [next])).toBe(false);
  });

  describe('an update may keep the images the object had, and add none', () => {
    const retired = imageRef('vllm', 'd');
    const rs = (image: string, replicas: number, extra?: Record<string, unknown>) =>
      ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'old', namespace: 'serving' }, spec: { replicas, ...template(image, extra) } });

    test('the Deployment controller scales down a ReplicaSet whose image the new list no longer approves', () => {
      // A rollout replaced the approved digests; the old ReplicaSet is scaled with an update of the whole object.
      expect(admits(rs(retired, 1), rs(retired, 2))).toBe(true);
    });

    test('a retired image is not admitted anew: not on create, not swapped in by an update, not as a debug container', () => {
      expect(admits(rs(retired, 2))).toBe(false);
      expect(admits(rs(retired, 2), rs(IMAGES[0], 2))).toBe(false);
      const pod = (extra?: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'serving' }, spec: podSpec(retired, extra) });
      expect(admits(pod({ ephemeralContainers: [{ name: 'debug', image: 'busybox' }] }), pod())).toBe(false);
      expect(admits(pod({ ephemeralContainers: [{ name: 'debug', image: IMAGES[1] }] }), pod())).toBe(true);
      // Kept per container: a debug container cannot borrow the retired image the pod's server runs, nor a sidecar.
      expect(admits(pod({ ephemeralContainers: [{ name: 'debug', image: retired }] }), pod())).toBe(false);
      const sidecar = { initContainers: [{ name: 'init', image: IMAGES[0] }] };
      expect(admits(rs(IMAGES[0], 2, { initContainers: [{ name: 'init', image: retired }] }), rs(retired, 2, sidecar))).toBe(false);
      // An added debug container stays with the pod: later updates keep it.
      const debugged = pod({ ephemeralContainers: [{ name: 'debug', image: IMAGES[1] }] });
      expect(admits(debugged, debugged)).toBe(true);
    });

    test('the denial names only the images the update adds', () => {
      const message = policy.spec.validations[0].messageExpression!;
      const object = rs(retired, 2, { initContainers: [{ name: 'init', image: 'busybox' }] });
      const variables: Record<string, unknown> = {};
      const params = paramsApproving(IMAGES);
      const bindings = () => ({ object, oldObject: rs(retired, 2), variables, params }) as unknown as Record<string, CelInput>;
      for (const v of policy.spec.variables) variables[v.name] = run(v.expression, bindings());
      // The engine here has no Kubernetes string library (join): evaluate the list the message joins.
      const listed = /(variables\.containers\.filter\(.*\)\.map\(c, c\.image\))\.join\(/.exec(message)![1];
      expect([...(run(listed, bindings()) as unknown as Iterable<unknown>)]).toEqual(['busybox']);
    });
  });

  test('the binding denies in the serving namespace only, with the policy as its parameter', () => {
    expect(policy.spec.paramKind).toEqual({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy' });
    expect(binding.spec).toEqual({
      policyName: 'approved-images-serving',
      paramRef: { name: 'approved-images-serving', parameterNotFoundAction: 'Deny' },
      validationActions: ['Deny'],
      matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'serving' } } },
    });
  });

  test('fails when images are tagged, duplicated or missing, and names are invalid, listing every problem', () => {
    expect(
      approvedImagesPolicyProblems({ name: 'Bad_Name', namespace: 'Serving', images: ['123456789012.dkr.ecr.us-east-1.amazonaws.com/vllm:latest', IMAGES[0], IMAGES[0]] }),
    ).toEqual([
      { field: 'name', message: "is 'Bad_Name'; allowed: a DNS-1123 subdomain of at most 245 characters (the binding adds \"-binding\")" },
      { field: 'namespace', message: "is 'Serving'; allowed: a DNS-1123 label: 1 to 63 lower-case letters, digits and \"-\", starting and ending with a letter or digit" },
      {
        field: 'images',
        message: "'123456789012.dkr.ecr.us-east-1.amazonaws.com/vllm:latest' is not pinned by digest (a tag is mutable); "
          + `'${IMAGES[0]}' is listed twice; allowed: a non-empty list of distinct images pinned by digest (<registry>/<repository>@sha256:<64 hex>)`,
      },
    ]);
    expect(() => approvedImagesPolicy({ ...OPTIONS, images: [] })).toThrow(/images: is empty/);
  });
});

describe('ApprovedImagesAdmission', () => {
  const { stack } = testStack();
  const cluster = new eks.Cluster(stack, 'Cluster', {
    version: eks.KubernetesVersion.V1_33,
    kubectlProviderOptions: { kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') },
  });
  const admission = new ApprovedImagesAdmission(stack, 'Admission', { cluster, namespace: 'serving', images: IMAGES });
  const template = Template.fromStack(stack);

  test('applies the policy and then the binding through one KubernetesManifest', () => {
    const resources = template.findResources('Custom::AWSCDK-EKS-KubernetesResource');
    const manifests = Object.values(resources).map((r) => JSON.stringify(r.Properties.Manifest));
    expect(manifests).toHaveLength(1);
    const applied = JSON.parse(JSON.parse(manifests[0]));
    expect(applied.map((m: { kind: string }) => m.kind)).toEqual(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
    expect(applied[0].metadata.name).toBe('approved-images-serving');
    expect(admission.binding.spec.policyName).toBe(admission.policy.metadata.name);
  });

  test('approves each image with a merge patch of its own, after the policy, whose deletion removes only its annotation', () => {
    const patches = template.findResources('Custom::AWSCDK-EKS-KubernetesPatch');
    const manifestId = Object.keys(template.findResources('Custom::AWSCDK-EKS-KubernetesResource'))[0];
    expect(Object.keys(patches)).toHaveLength(IMAGES.length);
    const byImage = new Map(Object.values(patches).map((p) => [JSON.parse(p.Properties.ApplyPatchJson), p]));
    IMAGES.forEach((image) => {
      const { key } = imageApproval(image);
      const patch = [...byImage].find(([apply]) => apply.metadata.annotations[key] === image)![1];
      expect(patch.Properties).toMatchObject({
        ResourceName: 'validatingadmissionpolicies.admissionregistration.k8s.io/approved-images-serving',
        PatchType: 'merge',
        RestorePatchJson: JSON.stringify({ metadata: { annotations: { [key]: null } } }),
      });
      expect(Object.keys(JSON.parse(patch.Properties.ApplyPatchJson).metadata.annotations)).toEqual([key]);
      expect(patch.DependsOn).toContain(manifestId);
    });
  });

  test("an approval's logical id follows its image alone: changing one image replaces one approval and keeps the others", () => {
    const ids = (images: string[]) => {
      const { stack: s } = testStack('Ids');
      const c = new eks.Cluster(s, 'Cluster', { version: eks.KubernetesVersion.V1_33, kubectlProviderOptions: { kubectlLayer: new KubectlV34Layer(s, 'K') } });
      new ApprovedImagesAdmission(s, 'Admission', { cluster: c, namespace: 'serving', images });
      return Object.keys(Template.fromStack(s).findResources('Custom::AWSCDK-EKS-KubernetesPatch'));
    };
    const before = ids(IMAGES);
    const after = ids([IMAGES[0], imageRef('vllm', 'e'), IMAGES[2]]);
    expect(after.filter((id) => before.includes(id))).toHaveLength(2);
    expect(ids([...IMAGES].reverse()).sort()).toEqual([...before].sort());
  });

  test('fails when an image is not pinned by digest', () => {
    const { stack: s } = testStack('Bad');
    const imported = eks.Cluster.fromClusterAttributes(s, 'Imported', { clusterName: 'c' });
    expect(() => new ApprovedImagesAdmission(s, 'Admission', { cluster: imported, namespace: 'serving', images: ['public.ecr.aws/x/y:1'] })).toThrow(
      "ApprovedImagesAdmission 'Bad/Admission' is invalid (1 problem):\n  - images: 'public.ecr.aws/x/y:1' is not pinned by digest (a tag is mutable)",
    );
  });
});
