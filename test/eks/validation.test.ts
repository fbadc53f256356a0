import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
import { App, Fn, Size, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as kms from 'aws-cdk-lib/aws-kms';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { EksInferenceService, type EksInferenceServiceProps } from '../../lib/eks/inference-service';
import { LLAMA_CONTRACT, llamaClasses, testStack, FETCHER_IMAGE, UNIT_TEST_APP_PROPS } from '../util';

/** Constructing the service validates its input; nothing is synthesized when it throws. */
function construct(overrides: Partial<EksInferenceServiceProps> = {}): () => EksInferenceService {
  return () => {
    const { stack } = testStack();
    return new EksInferenceService(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'), ...overrides });
  };
}

describe('EksInferenceService input checks', () => {
  test('fails when modelDataEncryptionKey is an alias (a grant on the alias ARN is no grant on its key)', () => {
    const { stack } = testStack();
    const props = { contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') };
    const key = new kms.Key(stack, 'Key', { enableKeyRotation: true });
    const alias = new kms.Alias(stack, 'Alias', { aliasName: 'alias/models', targetKey: key });
    expect(() => new EksInferenceService(stack, 'Llama', { ...props, modelDataEncryptionKey: alias }))
      .toThrow(/EksInferenceService 'Test\/Llama' is invalid[^]*modelDataEncryptionKey: is the alias 'Test\/Alias'; allowed: a KMS key/);
    expect(() => new EksInferenceService(stack, 'Keyed', { ...props, modelDataEncryptionKey: key })).not.toThrow();
  });

  test('fails when a class artifact targets Neuron but its instance type carries a GPU', () => {
    const classes = llamaClasses();
    classes[2] = { ...classes[2], instanceType: 'g5.xlarge' };
    expect(construct({ classes })).toThrow(
      /class 'inf2' footprint.acceleratorTarget: the artifact targets 'neuron' but g5.xlarge carries NVIDIA A10G/,
    );
  });

  test('fails when a class lists additional instance types without an accelerator of the artifact kind', () => {
    const build = construct({ classOptions: { inf2: { additionalInstanceTypes: ['g6.xlarge', 'm5.large'] } } });
    expect(build).toThrow(
      /classOptions.additionalInstanceTypes: 'g6.xlarge' carries NVIDIA L4 \(cuda\) but the artifact targets 'neuron'; it has no accelerator/,
    );
    expect(build).toThrow(/class 'inf2' classOptions.additionalInstanceTypes: 'm5.large' is not in the hardware catalog, so it has no known/);
  });

  test('warns per class whose weights exceed the model server\'s memory limit: an eager load would be OOM-killed (R229)', () => {
    const { stack } = testStack();
    new EksInferenceService(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
    const memory = Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('left by the model server')).map((w) => String(w.entry.data));
    // inf2.xlarge: 16 GiB, a server's limit 12 GiB, 10 beside /dev/shm, below the 15 GiB model; g6e.xlarge's 22 GiB and
    // g5.xlarge's 10 GiB hold theirs (15 and 5.7 GiB).
    expect(memory).toEqual([expect.stringContaining("Class 'inf2': its weights (15 GiB) exceed the 10 GiB left by the model server's memory limit "
      + "(12 GiB: three quarters of inf2.xlarge's memory per replica) beside its 2 GiB /dev/shm. DJL LMI streams")]);
  });

  test('warns per TGI class whose weights are in the image: TGI converts .bin/.pt beside them on the read-only root (TGI v3.3.7 cli.py:309-312)', () => {
    const warnings = (patch: (c: ReturnType<typeof llamaClasses>[number]) => ReturnType<typeof llamaClasses>[number]) => {
      const { stack } = testStack();
      const classes = llamaClasses().map((c) => (c.name === 'a10g' ? patch(c) : c));
      new EksInferenceService(stack, 'Llama', { contract: LLAMA_CONTRACT, classes, modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
      return Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('eks-weights-conversion')).map((w) => String(w.entry.data));
    };
    const tgi = (c: ReturnType<typeof llamaClasses>[number]) => ({ ...c, runtime: { ...c.runtime, engine: 'tgi', engineVersion: '3.3.7' } });
    // Model data is unpacked into the writable model volume (an emptyDir, the server's own uid): nothing.
    expect(warnings(tgi)).toEqual([]);
    expect(warnings((c) => ({ ...tgi(c), artifact: { image: c.artifact.image }, runtime: { ...tgi(c).runtime, modelPath: '/opt/model' } }))).toEqual([
      "Class 'a10g': TGI loads safetensors only: at start it converts .bin or .pt weights into .safetensors files it writes beside them, "
      + 'and no setting moves that write. Its weights are in /opt/model, inside the image, whose root filesystem the pod mounts read-only: '
      + 'without .safetensors files there the write fails ("Read-only file system") and the server exits before it answers a health check, '
      + 'so the server container restarts without end and no pod of the class turns Ready. Ship the weights as safetensors (convert .bin '
      + 'or .pt beforehand, e.g. `text-generation-server download-weights <directory>` on a writable copy) and acknowledge this warning '
      + '[ack: cdk-capacity-aware-inference:eks-weights-conversion-a10g]',
    ]);
    // vLLM converts nothing.
    expect(warnings((c) => ({ ...c, artifact: { image: c.artifact.image }, runtime: { ...c.runtime, modelPath: '/opt/model' } }))).toEqual([]);
  });

  test('warns per class whose signing profile nothing reads without artifactGate; the version id is the init container\'s (R231)', () => {
    const { stack } = testStack();
    const classes = llamaClasses().map((c) => (c.name === 'a10g' ? { ...c, artifact: { ...c.artifact, signingProfileName: 'ModelSigner' } } : c));
    new EksInferenceService(stack, 'Llama', { contract: LLAMA_CONTRACT, classes, modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
    const ungated = Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('without artifactGate')).map((w) => String(w.entry.data));
    expect(ungated).toEqual([expect.stringContaining(
      "class 'a10g': artifact.signingProfileName 'ModelSigner' (nothing checks the image's signature) does nothing without artifactGate")]);
  });

  test('fails with one problem, not a TypeError, when classes is missing (a JavaScript caller or a configuration file)', () => {
    expect(construct({ classes: undefined as never })).toThrow('classes: no capacity classes were declared; at least one is required');
  });

  test('fails when an additional instance type cannot run one model server at the requests sized on the class\'s own type', () => {
    // g6e.2xlarge: 8 vCPU and 64 GiB, so each server requests 6 vCPU and 48 GiB; a g6e.xlarge gives its servers 3 vCPU
    // and 24 GiB, so Karpenter would never launch it for the class (review R229).
    const classes = llamaClasses().map((c) => (c.name === 'l40s' ? { ...c, instanceType: 'g6e.2xlarge' } : c));
    expect(construct({ classes, classOptions: { l40s: { additionalInstanceTypes: ['g6e.xlarge'] } } })).toThrow(
      "class 'l40s' classOptions.additionalInstanceTypes: 'g6e.xlarge' (4 vCPU, 32 GiB) cannot run one model server: each requests " +
        "6 vCPU and 48 GiB (three quarters of g6e.2xlarge's, per replica), and a node gives its servers three quarters of its own " +
        "(3 vCPU, 24 GiB; the rest is the kubelet's and the DaemonSets'); allowed: a type with at least 8 vCPU and 64 GiB",
    );
    // The larger type the other way round holds it.
    expect(construct({ classOptions: { l40s: { additionalInstanceTypes: ['g6e.2xlarge'] } } })).not.toThrow();
  });

  test('accepts additional instance types that carry the right accelerator and hold the model', () => {
    const { stack } = testStack();
    const svc = new EksInferenceService(stack, 'Llama', {
      contract: LLAMA_CONTRACT,
      modelDataFetcherImage: FETCHER_IMAGE,
      kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'),
      classes: llamaClasses(),
      classOptions: { inf2: { additionalInstanceTypes: ['inf2.8xlarge'] } },
    });
    expect(svc.units[2].objects.nodePool.spec.template.spec.requirements[0].values).toEqual(['inf2.xlarge', 'inf2.8xlarge']);
  });

  test('fails when a Neuron replica would request more than one but not all of its node\'s NeuronCores', () => {
    // Only the Neuron scheduler extension places such a pod on connected cores (deploy/infrastructure/scheduler.rst).
    const classes = llamaClasses();
    classes[2] = { ...classes[2], instanceType: 'inf2.24xlarge' }; // 12 NeuronCores, tensorParallelDegree 2
    expect(construct({ classes })).toThrow(
      "class 'inf2' footprint.tensorParallelDegree: 'inf2.24xlarge' has 12 NeuronCores and footprint.tensorParallelDegree is 2, so each " +
        "replica's pod would request 2 of a node's NeuronCores",
    );
    expect(construct({ classes })).toThrow(
      "Allowed: tensorParallelDegree 1 or 12 (all of inf2.24xlarge's NeuronCores: one replica per node), or an instance type with 2 NeuronCores " +
        '(inf2.8xlarge, inf2.xlarge, trn1.2xlarge)',
    );
    // An additional type with more cores than the degree puts several replicas on its nodes too.
    expect(construct({ classOptions: { inf2: { additionalInstanceTypes: ['inf2.48xlarge'] } } })).toThrow(
      "class 'inf2' classOptions.additionalInstanceTypes: 'inf2.48xlarge' has 24 NeuronCores and footprint.tensorParallelDegree is 2",
    );
  });

  test('accepts a Neuron replica that requests one NeuronCore or all of its node\'s', () => {
    const classes = llamaClasses();
    const inf2 = classes[2];
    // All 12 cores of inf2.24xlarge: one replica per node.
    classes[2] = { ...inf2, instanceType: 'inf2.24xlarge', footprint: { ...inf2.footprint, tensorParallelDegree: 12 } };
    expect(construct({ classes })).not.toThrow();
    // One core of inf2.24xlarge (a model that fits one core's 16 GiB): twelve replicas per node.
    classes[2] = { ...inf2, instanceType: 'inf2.24xlarge', footprint: { ...inf2.footprint, weightsGiB: 4, workspaceGiB: 1, maxSequenceTokens: 2048, tensorParallelDegree: 1 } };
    expect(construct({ classes })).not.toThrow();
    // All 2 cores of inf2.xlarge, and of inf2.8xlarge beside it.
    expect(construct({ classOptions: { inf2: { additionalInstanceTypes: ['inf2.8xlarge'] } } })).not.toThrow();
  });

  test('a new cluster needs the kubectl layer the user installs (the library does not bundle it)', () => {
    const build = construct({ kubectlLayer: undefined });
    expect(build).toThrow(/EksInferenceService 'Test\/Llama' is invalid \(1 problem\):\n/);
    expect(build).toThrow(/kubectlLayer: is required for a new cluster \(no 'cluster' given\): pass new KubectlV34Layer/);
  });

  test('fails when two classes share a NodePool name', () => {
    expect(construct({ classOptions: { l40s: { nodePoolName: 'gpu' }, a10g: { nodePoolName: 'gpu' } } })).toThrow(
      /nodePoolName: 'gpu' is the NodePool of more than one class \(l40s, a10g\); NodePool names must be unique in the cluster/,
    );
  });

  test('fails when a Kubernetes name is invalid', () => {
    expect(construct({ namespace: 'Serving_NS', classOptions: { l40s: { nodePoolName: 'Pool.1' } } })).toThrow(
      /namespace: is 'Serving_NS'; allowed: a DNS-1123 label[\s\S]*class 'l40s' classOptions.nodePoolName: is 'Pool.1'; allowed: a DNS-1123 label/,
    );
  });

  test.each([0, -5, Number.NaN])('fails when the KEDA target is %p (not positive)', (target) => {
    expect(construct({ classOptions: { a10g: { targetRequestsPerReplicaPerPeriod: target } } })).toThrow(
      new RegExp(`class 'a10g' classOptions.targetRequestsPerReplicaPerPeriod: is ${target}( requests per period)?; allowed: a finite number above 0 requests per period`),
    );
  });

  test("fails when the model volume cannot hold the weights and the engine's caches, and accepts weights + 10 GiB", () => {
    // a10g: 5.7 GiB of weights in a .tar (fetch: 2 x 5.7 x 1.1 = 13 GiB); serving: weights + 10 GiB reserved for HOME,
    // XDG_CACHE_HOME and compile caches (fact any.behaviour.cache-size) = 16 GiB, the larger need.
    expect(construct({ classOptions: { a10g: { modelCacheSize: Size.gibibytes(15) } } })).toThrow(
      "class 'a10g' classOptions.modelCacheSize: is 15 GiB but the model volume needs 16 GiB: during the fetch the archive and the tree unpacked from it, which coexist, need 13 GiB (2 x 5.7 GiB + 10 %); while serving it holds the weights (5.7 GiB) and the engine's caches (10 GiB); allowed: at least 16 GiB",
    );
    expect(construct({ classOptions: { a10g: { modelCacheSize: Size.gibibytes(16) } } })).not.toThrow();
    // A size that is no whole GiB is reported by the rule, with the construct's path, not thrown by aws-cdk-lib.
    expect(construct({ classOptions: { a10g: { modelCacheSize: Size.mebibytes(1500) } } })).toThrow(/classOptions.modelCacheSize: is 1\.46\d* GiB/);
  });

  test('fails when nodeVolumeSize is below the 12 GiB a gp3 volume at 6000 IOPS needs (500 IOPS per GiB)', () => {
    expect(construct({ classOptions: { a10g: { nodeVolumeSize: Size.gibibytes(11) } } })).toThrow(
      "  - class 'a10g' classOptions.nodeVolumeSize: is 11 GiB; allowed: a whole number from 12 to 16_384 GiB (the node data volume is gp3 at 6000 IOPS "
      + 'and gp3 provisions at most 500 IOPS per GiB, so a smaller volume fails the instance launch',
    );
  });

  test('fails when nodeVolumeSize cannot hold the model volumes of the replicas a node holds (their emptyDirs are on it)', () => {
    // a10g: a 20 GiB model volume per replica (the default: at least 20 GiB); g5.xlarge holds 1 replica, g5.12xlarge 4.
    expect(construct({ classOptions: { a10g: { nodeVolumeSize: Size.gibibytes(19) } } })).toThrow(
      "  - class 'a10g' classOptions.nodeVolumeSize: is 19 GiB, below the model volumes of the 1 replica a g5.xlarge node holds (1 x 20 GiB = 20 GiB); "
      + "allowed: at least the model volume of a replica (modelCacheSize) times the replicas the class's fullest node holds, "
      + 'plus 20 GiB for the AL2023 root snapshot on an al2023 alias',
    );
    expect(construct({ classOptions: { a10g: { nodeVolumeSize: Size.gibibytes(20) } } })).not.toThrow();
    const fourPerNode = { additionalInstanceTypes: ['g5.12xlarge'], modelCacheSize: Size.gibibytes(30) };
    expect(construct({ classOptions: { a10g: { ...fourPerNode, nodeVolumeSize: Size.gibibytes(100) } } })).toThrow(
      "  - class 'a10g' classOptions.nodeVolumeSize: is 100 GiB, below the model volumes of the 4 replicas a g5.12xlarge node holds (4 x 30 GiB = 120 GiB)",
    );
    expect(construct({ classOptions: { a10g: { ...fourPerNode, nodeVolumeSize: Size.gibibytes(120) } } })).not.toThrow();
  });

  test("fails on AL2023 when nodeVolumeSize cannot hold the AMI's 20 GiB root snapshot beside the model volumes (EC2 refuses the launch)", () => {
    const al2023 = { amiAlias: 'al2023@latest' };
    expect(construct({ ...al2023, classOptions: { a10g: { nodeVolumeSize: Size.gibibytes(39) } } })).toThrow(
      "  - class 'a10g' classOptions.nodeVolumeSize: is 39 GiB, below the AL2023 root snapshot (20 GiB) and the model volumes of the 1 replica "
      + 'a g5.xlarge node holds (20 + 1 x 20 GiB = 40 GiB)',
    );
    expect(construct({ ...al2023, classOptions: { a10g: { nodeVolumeSize: Size.gibibytes(40) } } })).not.toThrow();
    // Bottlerocket keeps its OS on a volume of its own.
    expect(construct({ classOptions: { a10g: { nodeVolumeSize: Size.gibibytes(20) } } })).not.toThrow();
  });

  test("fails when a class asks for Karpenter's 'reserved' capacity, which needs reservation selector terms the NodeClass does not have", () => {
    const reserved = ['reserved', 'on-demand'] as unknown as ReadonlyArray<'on-demand'>;
    expect(construct({ classOptions: { a10g: { capacityTypes: reserved } } })).toThrow(
      "class 'a10g' classOptions.capacityTypes: is [reserved, on-demand]; allowed: a non-empty list of 'on-demand' and 'spot' ('reserved' needs capacity reservation selector terms",
    );
    expect(construct({ classOptions: { a10g: { capacityTypes: ['spot', 'on-demand'] } } })).not.toThrow();
  });

  test.each(['windows2022@latest', 'al2@latest'])('fails when amiAlias is %p (Windows nodes no NodePool takes; AL2 has no AMIs for 1.33+)', (alias) => {
    expect(construct({ amiAlias: alias })).toThrow(
      `  - amiAlias: is '${alias}'; allowed: a Karpenter AMI alias 'family@version' of at most 30 characters, family bottlerocket or al2023 (`,
    );
  });

  test.each(['bottlerocket@v1.47.0', 'al2023@latest'])('accepts amiAlias %p', (alias) => {
    expect(construct({ amiAlias: alias })).not.toThrow();
  });

  test('fails when max replicas are above the class quota, and accepts the quota itself', () => {
    expect(construct({ classOptions: { l40s: { maxReplicas: 9 } } })).toThrow(
      /class 'l40s' classOptions.maxReplicas: 9 is above the class quota of 8 replicas/,
    );
    expect(construct({ classOptions: { l40s: { maxReplicas: 8 } } })).not.toThrow();
  });

  test.each(['latest', '^1.14.1', 'v1.14.1', '1.14'])('fails when a chart version override is %p', (version) => {
    expect(construct({ chartVersions: { karpenter: version } })).toThrow(
      new RegExp(`chartVersions.karpenter: '${version.replace(/[.^]/g, '\\$&')}' is not a chart version; use an exact semantic version`),
    );
  });

  test('accepts an exact chart version override and installs it', () => {
    const svc = construct({ chartVersions: { keda: '2.20.3' } })();
    expect(svc.keda!.chart.version).toBe('2.20.3');
  });

  test('fails when an image uses a mutable tag', () => {
    const classes = llamaClasses();
    classes[0] = { ...classes[0], artifact: { ...classes[0].artifact, image: '123456789012.dkr.ecr.us-east-1.amazonaws.com/vllm:latest' } };
    expect(construct({ classes })).toThrow(/class 'l40s' artifact.image: '.*vllm:latest' is not pinned by digest/);
  });

  test('input from a configuration file without a class part or the contract\'s slo or request shape: one problem per missing field, no TypeError', () => {
    for (const part of ['artifact', 'footprint', 'runtime'] as const) {
      const classes = llamaClasses();
      classes[1] = { ...classes[1], [part]: undefined as never };
      expect(construct({ classes })).toThrow(`EksInferenceService 'Test/Llama' is invalid (1 problem):\n  - class 'a10g' ${part}: is missing; allowed: an object with `);
    }
    expect(construct({ contract: { ...LLAMA_CONTRACT, slo: undefined as never } })).toThrow('contract.slo.ttftP95Ms: is undefined; allowed: a finite number above 0 ms');
    expect(construct({ contract: { ...LLAMA_CONTRACT, requestShape: undefined as never } })).toThrow('contract.requestShape.meanPromptTokens: is undefined');
  });

  test('fails when a setting would be silently lost: DJL arguments, a DJL batch token budget its rolling batch may not read, Triton batch tokens', () => {
    const [l40s] = llamaClasses();
    const djl = { ...l40s, runtime: { ...l40s.runtime, engine: 'djl-lmi', engineVersion: '0.30.0', maxBatchTokens: 4096, args: ['--enforce-eager'] } };
    const [, a10g] = llamaClasses();
    const triton = { ...a10g, artifact: { image: a10g.artifact.image },
      runtime: { ...a10g.runtime, engine: 'triton', modelPath: '/opt/models', queueBound: 'best-effort' as const, maxBatchTokens: 4096 } };
    let message = '';
    try {
      construct({ classes: [djl, triton] })();
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/^EksInferenceService 'Test\/Llama' is invalid \(3 problems\):/);
    expect(message).toContain("class 'l40s' runtime.maxBatchTokens: is 4096, but before 0.35.0 the rolling batch of djl-lmi 0.30.0 is the image's default");
    expect(message).toContain("class 'l40s' runtime.args: are [\"--enforce-eager\"], but the DJL LMI image starts its server only on the argument 'serve'");
    expect(message).toContain("class 'a10g' runtime.maxBatchTokens: is 4096, but Triton has no server flag or variable for a batch token budget");
  });

  test('fails once, naming the construct path and every problem', () => {
    const classes = llamaClasses();
    classes[0] = { ...classes[0], artifact: { ...classes[0].artifact, image: 'vllm:0.6' } };
    let message = '';
    try {
      construct({ classes, chartVersions: { loadBalancerController: 'latest' }, classOptions: { a10g: { maxReplicas: 100 }, h100: {} } })();
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/^EksInferenceService 'Test\/Llama' is invalid \(4 problems\):/);
    expect(message).toContain("class 'l40s' artifact.image");
    expect(message).toContain('chartVersions.loadBalancerController');
    expect(message).toContain("class 'a10g' classOptions.maxReplicas: 100 is above the class quota of 24 replicas");
    expect(message).toContain('classOptions.h100: names no declared class; known classes: l40s, a10g, inf2');
  });

  test('fails when a ScaledObject name exceeds 54 characters (KEDA webhook: keda-hpa-<name> at most 63)', () => {
    // 'c'.repeat(45) + '-l40s' = 50 fits; + '-inf2' too; a 50-character contract name gives 55.
    const contract = { ...LLAMA_CONTRACT, name: 'c'.repeat(50) };
    expect(construct({ contract, namespace: 'llama' })).toThrow(
      new RegExp(`class 'l40s' class.objectName: ScaledObject '${'c'.repeat(50)}-l40s' is 55 characters; KEDA's webhook rejects`),
    );
    expect(construct({ contract: { ...LLAMA_CONTRACT, name: 'c'.repeat(49) }, namespace: 'llama' })).not.toThrow(/ScaledObject/);
  });

  test('fails when a class\'s object name is the namespace\'s shared ServiceAccount name (R230)', () => {
    // A class that reads model data gets a ServiceAccount named <service>-<class>; 'model' + 'server' would create the
    // shared 'model-server' a second time, and the Workload's create would fail with AlreadyExists.
    const classes = llamaClasses().map((c) => (c.name === 'l40s' ? { ...c, name: 'server' } : c));
    expect(construct({ contract: { ...LLAMA_CONTRACT, name: 'model' }, classes, namespace: 'llama' })).toThrow(
      "class 'server' class.objectName: 'model-server' is the name of the namespace's shared ServiceAccount; allowed: any other service and class names",
    );
  });

  test('fails when a NodePool name has 58 or more characters (NodeClaim generateName is cut to 58)', () => {
    const pool = 'p'.repeat(58);
    expect(construct({ classOptions: { l40s: { nodePoolName: pool } } })).toThrow(
      new RegExp(`class 'l40s' classOptions.nodePoolName: '${pool}' is 58 characters; Karpenter's NodeClaim generateName`),
    );
    expect(construct({ classOptions: { l40s: { nodePoolName: 'p'.repeat(57) } } })).not.toThrow();
  });

  test('fails when the Service name <service>-<class> is not an RFC 1035 label (starts with a digit)', () => {
    expect(construct({ contract: { ...LLAMA_CONTRACT, name: '3chat' }, namespace: 'llama' })).toThrow(/contract.name: .*'3chat'/);
  });

  test('fails when the AWS CLI image fetches archive model data (it has no tar)', () => {
    const cli = `public.ecr.aws/aws-cli/aws-cli@sha256:${'f'.repeat(64)}`;
    expect(construct({ modelDataFetcherImage: cli })).toThrow(
      /class 'l40s' modelDataFetcherImage: 'public.ecr.aws\/aws-cli\/aws-cli@sha256:f{64}' is the AWS CLI image, which has no tar/,
    );
    // A single-file object needs no tar: the CLI image is fine for it.
    const single = (uri: string) => uri.replace(/\.tar$/, '.safetensors');
    const classes = llamaClasses().map((c) => {
      const modelData = { ...c.artifact.modelData!, uri: single(c.artifact.modelData!.uri) };
      return { ...c, artifact: { ...c.artifact, modelData } };
    });
    expect(construct({ classes, modelDataFetcherImage: cli })).not.toThrow();
  });

  test('fails when modelCacheSize cannot hold the archive and the unpacked tree', () => {
    // l40s: 15 GiB of weights in a .tar -> 2 x 15 x 1.1 = 33 GiB during the fetch.
    expect(construct({ classOptions: { l40s: { modelCacheSize: Size.gibibytes(30) } } })).toThrow(
      "class 'l40s' classOptions.modelCacheSize: is 30 GiB but the model volume needs 33 GiB: during the fetch the archive and the "
        + 'tree unpacked from it, which coexist, need 33 GiB (2 x 15 GiB + 10 %)',
    );
    expect(construct({ classOptions: { l40s: { modelCacheSize: Size.gibibytes(33) } } })).not.toThrow();
  });

  test('the default model cache holds archive and tree (2 x weights + 10 %)', () => {
    const svc = construct()();
    expect(svc.units[0].objects.deployment.spec.template.spec.volumes[0]).toEqual({ name: 'model-cache', emptyDir: { sizeLimit: '33Gi' } });
  });

  test('fails when existing log groups are combined with a retention or a key (they keep their own)', () => {
    expect(construct({ observability: { existingLogGroups: true, logRetention: RetentionDays.ONE_WEEK } })).toThrow(
      '  - observability.existingLogGroups: is true together with observability.logRetention; allowed: no logRetention, logEncryptionKey or existingAddon',
    );
  });

  test('existing log groups are attached by name, not created (a redeploy after a delete that kept them)', () => {
    const svc = construct({ observability: { existingLogGroups: true } })();
    const groups = Template.fromStack(Stack.of(svc)).findResources('AWS::Logs::LogGroup');
    expect(Object.values(groups).map((g) => g.Properties.LogGroupName).filter((n) => String(n).startsWith('/aws/containerinsights'))).toEqual([]);
    expect(svc.observability.applicationLogGroup.logGroupName).toBe(`/aws/containerinsights/${svc.clusterName}/application`);
  });
});

describe('EksInferenceService: input the construct used to accept silently (issue 20 item 12)', () => {
  test("fails when a class's zone is in another region than the stack's, and when its zone list is empty", () => {
    const classes = llamaClasses();
    classes[0] = { ...classes[0], placement: { zones: ['eu-west-1a'] } };
    expect(construct({ classes })).toThrow(
      "  - class 'l40s' placement.zones[0]: is 'eu-west-1a', not a zone of the stack's region us-east-1; allowed: zones of the stack's region",
    );
    classes[0] = { ...classes[0], placement: { zones: [] } };
    expect(construct({ classes })).toThrow("  - class 'l40s' placement.zones: is []; allowed: a non-empty list of distinct zones");
  });

  test("fails when a class's zone has no subnet of the cluster's VPC; skips the check while the VPC's zones are not known", () => {
    const inZones = (zones: string[], context: Record<string, unknown>) => () => {
      const app = new App({ ...UNIT_TEST_APP_PROPS, context });
      const stack = new Stack(app, 'Test', { env: { account: '123456789012', region: 'us-east-1' } });
      const classes = llamaClasses();
      classes[1] = { ...classes[1], placement: { zones } };
      return new EksInferenceService(stack, 'Llama', { contract: LLAMA_CONTRACT, classes, modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
    };
    // The new VPC takes the first three zones the account's lookup returned (the CLI's context entry).
    const looked = { 'availability-zones:account=123456789012:region=us-east-1': ['us-east-1a', 'us-east-1b', 'us-east-1c', 'us-east-1d'] };
    expect(inZones(['us-east-1b', 'us-east-1d'], looked)).toThrow(
      "EksInferenceService 'Test/Llama' is invalid (1 problem):\n  - class 'a10g' placement.zones[1]: is 'us-east-1d', where the cluster has no node subnet "
      + "(the zones of its node subnets: 'us-east-1a', 'us-east-1b', 'us-east-1c'); subnets of that zone tagged for Karpenter by hand are not seen at synth: select them with the cluster's nodeSubnets (e.g. { subnetType: PRIVATE_ISOLATED }); allowed: zones of the cluster's node subnets: nodeSubnets, by default "
      + "the VPC's private subnets with egress",
    );
    expect(inZones(['us-east-1b', 'us-east-1c'], looked)).not.toThrow();
    // Before the lookup aws-cdk-lib gives the VPC placeholder zones: nothing to judge against, and the CLI looks them up.
    expect(inZones(['us-east-1d'], {})).not.toThrow();
  });

  /**
   * A service on a VPC as the CLI's lookup returns it (asymmetric subnets, `groups`: subnet group type -> zone letters of
   * us-east-1), its class a10g held to `zones` when given.
   */
  const onLookedUpVpc = (groups: Record<'Private' | 'Isolated', string>, props: Partial<EksInferenceServiceProps> & { zones?: string[] }) => () => {
    const subnetGroups = Object.entries(groups).map(([type, letters]) => ({
      name: type, type, subnets: [...letters].map((z) => ({ subnetId: `${type}-${z}`, cidr: '10.0.0.0/24', availabilityZone: `us-east-1${z}`, routeTableId: `rtb-${type}-${z}` })),
    }));
    const lookup = {
      'vpc-provider:account=123456789012:filter.vpc-id=vpc-1:region=us-east-1:returnAsymmetricSubnets=true': {
        vpcId: 'vpc-1', vpcCidrBlock: '10.0.0.0/16', availabilityZones: [], subnetGroups,
      },
    };
    const app = new App({ ...UNIT_TEST_APP_PROPS, context: lookup });
    const stack = new Stack(app, 'Test', { env: { account: '123456789012', region: 'us-east-1' } });
    const { zones, ...rest } = props;
    const classes = llamaClasses();
    if (zones) classes[1] = { ...classes[1], placement: { zones } };
    return new EksInferenceService(stack, 'Llama', {
      contract: LLAMA_CONTRACT, classes, modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'),
      vpc: ec2.Vpc.fromLookup(stack, 'Vpc', { vpcId: 'vpc-1' }), ...rest,
    });
  };

  test("fails when a class's zone has only isolated subnets (not tagged for nodes, and not the ALB's), unless nodeSubnets selects them", () => {
    // Private subnets in two zones, isolated ones in three.
    const pinned = (zones: string[], nodeSubnets?: ec2.SubnetSelection, albSubnets?: ec2.SubnetSelection) =>
      onLookedUpVpc({ Private: 'ab', Isolated: 'abc' }, { zones, nodeSubnets, ...(albSubnets ? { loadBalancer: { vpcSubnets: albSubnets } } : {}) });
    expect(pinned(['us-east-1b', 'us-east-1c'])).toThrow(
      "EksInferenceService 'Test/Llama' is invalid (1 problem):\n  - class 'a10g' placement.zones[1]: is 'us-east-1c', where the cluster has no node subnet "
      + "(the zones of its node subnets: 'us-east-1a', 'us-east-1b'); subnets of that zone tagged for Karpenter by hand are not seen at synth: "
      + "select them with the cluster's nodeSubnets (e.g. { subnetType: PRIVATE_ISOLATED }); allowed: zones of the cluster's node subnets",
    );
    expect(pinned(['us-east-1b'])).not.toThrow();
    // Nodes in us-east-1c, but the ALB (private subnets by default) is not enabled there: its pods would get no traffic.
    const isolated = { subnetType: ec2.SubnetType.PRIVATE_ISOLATED };
    expect(pinned(['us-east-1c'], isolated)).toThrow(
      "class 'a10g' placement.zones: holds the class to 'us-east-1c', where the load balancer is "
      + "not enabled (its zones: 'us-east-1a', 'us-east-1b'); allowed: zones the service's load balancer is enabled in",
    );
    expect(pinned(['us-east-1c'], isolated, isolated)).not.toThrow();
  });

  test('fails when a class may run in a zone the service\'s load balancer is not enabled in (its targets there get no traffic)', () => {
    const service = (zones?: string[]) =>
      onLookedUpVpc({ Private: 'abc', Isolated: '' }, { zones, loadBalancer: { vpcSubnets: { availabilityZones: ['us-east-1a', 'us-east-1b'] } } });
    // No placement.zones: every class's pods may go to every node zone, us-east-1c among them.
    expect(service()).toThrow("class 'l40s' placement.zones: is unset, so the class's pods may run in every zone of the cluster's node subnets, "
      + "'us-east-1c' among them, where the load balancer is not enabled (its zones: 'us-east-1a', 'us-east-1b')");
    expect(service(['us-east-1c'])).toThrow("class 'a10g' placement.zones: holds the class to 'us-east-1c', where the load balancer is not enabled");
  });

  test("does not refuse a class's zone while the node subnets' zones are tokens (an imported VPC's list token, a subnet's string token)", () => {
    const pinned = (nodeSubnets?: (stack: Stack) => ec2.SubnetSelection) => () => {
      const { stack } = testStack();
      const vpc = ec2.Vpc.fromVpcAttributes(stack, 'Vpc', {
        vpcId: 'vpc-1', vpcCidrBlock: '10.0.0.0/16', availabilityZones: Fn.getAzs(), privateSubnetIds: ['subnet-a', 'subnet-b', 'subnet-c'],
      });
      const classes = llamaClasses();
      classes[1] = { ...classes[1], placement: { zones: ['us-east-1c', 'us-east-1d'] } };
      return new EksInferenceService(stack, 'Llama', {
        contract: LLAMA_CONTRACT, classes, modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'), vpc,
        nodeSubnets: nodeSubnets?.(stack),
      });
    };
    expect(pinned()).not.toThrow();
    expect(pinned((stack) => ({
      subnets: [ec2.Subnet.fromSubnetAttributes(stack, 'Node', { subnetId: 'subnet-n', availabilityZone: Fn.select(0, Fn.getAzs()) })],
    }))).not.toThrow();
  });

  test('fails when every class at its quota cannot carry the planned peak, with both numbers', () => {
    expect(construct({ contract: { ...LLAMA_CONTRACT, peakRequestsPerSecond: 200 } })).toThrow(
      "EksInferenceService 'Test/Llama' is invalid (1 problem):\n  - contract.peakRequestsPerSecond: is 200 requests/s: 200 x 250 tokens x (1 + 0.2) = "
      + '60000 tokens/s planned, but every class at its quota carries l40s 8 x 1200 + a10g 24 x 400 + inf2 24 x 300 = 26400 tokens/s (44 % of it)',
    );
  });
});
