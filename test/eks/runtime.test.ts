/**
 * The model server of each class in its pod: the engine's own flags in the Deployment (so the memory check binds
 * what runs), and verified model data fetched by an init container that fails closed.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
import { type CfnElement, CfnParameter, Duration, Lazy, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as ecr from 'aws-cdk-lib/aws-ecr';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { type EksClassOptions } from '../../lib/eks/class-options';
import { type CapacityClassSpec } from '../../lib/core/service/capacity-class';
import { EksInferenceService, type EksInferenceServiceProps } from '../../lib/eks/inference-service';
import { SERVER_USER_NAME } from '../../lib/core/runtime/binding';
import { VLLM_EXIT_MARGIN_SECONDS } from '../../lib/core/runtime/shutdown';
import { modelFetchContainer, SERVER_UID, unpackOf } from '../../lib/eks/manifests/workload';
import { modelCacheGiB, modelCacheProblems } from '../../lib/eks/model-data-fetch';
import { type CapacityClass } from '../../lib/core/service/capacity-class';
import { expectValidManifests, FETCHER_IMAGE, type KubernetesObject, LLAMA_CONTRACT, llamaClasses, testStack } from '../util';

function build(overrides: Partial<EksInferenceServiceProps> = {}): EksInferenceService {
  const { stack } = testStack();
  return new EksInferenceService(stack, 'Llama', {
    contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'), ...overrides,
  });
}

function pod(service: EksInferenceService, className: string) {
  return service.units.find((u) => u.cls.name === className)!.objects.deployment.spec.template.spec;
}

function flags(args: readonly string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  const a = args ?? [];
  for (let i = 0; i < a.length; i++) if (a[i].startsWith('--')) out[a[i].slice(2)] = a[i + 1]?.startsWith('--') === false ? a[++i] : '';
  return out;
}

describe('the vLLM server in the Deployment', () => {
  test('its args carry the class batch, batch tokens, tensor parallelism, max length, memory cap and queue limit', () => {
    const classes = llamaClasses().map((c) => (c.name === 'l40s' ? { ...c, runtime: { ...c.runtime, maxBatchTokens: 4096 } } : c));
    const server = pod(build({ classes }), 'l40s').containers[0];
    // The model where the init container wrote the weights, first and positional: the image's ENTRYPOINT is `vllm serve`,
    // which deprecates --model (fact vllm.argument.model_tag).
    expect(server.args?.slice(0, 2)).toEqual(['/models/model', '--port']);
    expect(flags(server.args)).toEqual({
      port: '8080',
      'max-num-seqs': '16',
      'max-num-batched-tokens': '4096',
      'tensor-parallel-size': '1',
      'max-model-len': '8192',
      'gpu-memory-utilization': '0.9',
      'max-num-queued-reqs': '25',
      'max-num-queued-tokens': '51555',
      'shutdown-timeout': '25',
    });
    // Caches on the model volume: the root filesystem is read-only and uid 1000 has no home.
    expect(server.env).toEqual(expect.arrayContaining([
      { name: 'HOME', value: '/models/cache' },
      { name: 'XDG_CACHE_HOME', value: '/models/cache/.cache' },
      { name: 'VLLM_CACHE_ROOT', value: '/models/cache/.cache/vllm' },
    ]));
    // The A10G class runs its own, smaller batch and queue.
    expect(flags(pod(build({ classes }), 'a10g').containers[0].args)).toMatchObject({ 'max-num-seqs': '8', 'max-num-queued-reqs': '11' });
  });

  test('changing the class changes the args', () => {
    const changed = llamaClasses().map((c): CapacityClassSpec =>
      c.name === 'l40s'
        ? {
            ...c,
            memory: { utilizationCap: 0.8 },
            footprint: { ...c.footprint, maxSequenceTokens: 4096 },
            runtime: { ...c.runtime, maxConcurrentSequences: 24, maxQueueDelayMs: 1000 },
            envelope: { ...c.envelope, safeConcurrency: 20 },
          }
        : c,
    );
    const args = pod(build({ classes: changed }), 'l40s').containers[0].args;
    expect(args?.[0]).toBe('/models/model');
    expect(flags(args)).toEqual({
      port: '8080',
      'max-num-seqs': '24',
      'tensor-parallel-size': '1',
      'max-model-len': '4096',
      'gpu-memory-utilization': '0.8',
      'max-num-queued-reqs': '24', // 20 serving + 4.8 req/s x 1 s = 4 queued
      'max-num-queued-tokens': '42222', // 20 x 1000-token prompts in 0.9 s, over 1 s + 0.9 s
      'shutdown-timeout': '25',
    });
  });

  test('vLLM finishes what it holds at SIGTERM within the grace the pod has left after its preStop sleep, less its exit margin', () => {
    // vLLM's --shutdown-timeout defaults to 0: SIGTERM aborts every request in flight (vllm-project/vllm#36666). The
    // kubelet sends SIGTERM after the preStop sleep (the deregistration delay) and SIGKILL at the end of the grace;
    // vLLM allows its engine max(timeout, 5) s to stop (vllm-project/vllm#34730), so the timeout ends 5 s before the
    // SIGKILL (R217). The grace stays the deregistration delay plus the deadline.
    for (const [deadlineMs, timeout] of [[30000, 25], [95500, 91], [13000, 8]]) {
      const spec = pod(build({ contract: { ...LLAMA_CONTRACT, slo: { ...LLAMA_CONTRACT.slo, deadlineMs } } }), 'l40s');
      const server = spec.containers[0];
      const preStop = server.lifecycle?.preStop.sleep.seconds ?? 0;
      expect(spec.terminationGracePeriodSeconds).toBe(preStop + Math.ceil(deadlineMs / 1000));
      expect(Number(flags(server.args)['shutdown-timeout'])).toBe(timeout);
      expect(spec.terminationGracePeriodSeconds - preStop - timeout).toBe(VLLM_EXIT_MARGIN_SECONDS);
    }
  });

  test('the probes and the target group health check use the engine readiness path, on the class port', () => {
    const service = build({ classOptions: { l40s: { port: 9000 } } });
    const server = pod(service, 'l40s').containers[0];
    expect(server.readinessProbe.httpGet.path).toBe('/health');
    expect(server.ports[0].containerPort).toBe(9000);
    expect(flags(server.args).port).toBe('9000');
    expect(pod(service, 'inf2').containers[0].readinessProbe.httpGet.path).toBe('/ping'); // DJL LMI
    expect(pod(service, 'inf2').containers[0].env).toContainEqual({ name: 'SERVING_INFERENCE_ADDRESS', value: 'http://0.0.0.0:8080' });
  });

  test("warns at synth with the consequence when a class accepts an unbounded queue ('best-effort')", () => {
    const { stack } = testStack();
    const classes = llamaClasses().map((c) => (c.name === 'l40s' ? { ...c, runtime: { ...c.runtime, engine: 'triton', engineVersion: undefined, queueBound: 'best-effort' as const } } : c));
    new EksInferenceService(stack, 'Llama', { contract: LLAMA_CONTRACT, classes, modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl') });
    Annotations.fromStack(stack).hasWarning(
      '/Test/Llama',
      Match.stringLikeRegexp("class 'l40s': Triton's bounded queue is max_queue_size in each model's config.pbtxt.*requests past the admission limit of 25"),
    );
  });
});

describe('probe paths of a known engine (review R222: the example asked Triton for /readiness)', () => {
  const warningsFor = (engine: 'triton' | 'custom', options: EksClassOptions) => {
    const { stack } = testStack();
    const classes = llamaClasses().map((c) => (c.name === 'a10g' ? { ...c, runtime: { ...c.runtime, engine, engineVersion: undefined, queueBound: 'best-effort' as const } } : c));
    new EksInferenceService(stack, 'Llama', {
      contract: LLAMA_CONTRACT, classes, modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'), classOptions: { a10g: options },
    });
    return Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('eks-probe-paths-a10g')).map((w) => String(w.entry.data));
  };

  test("warns per class when probe paths differ from the engine's own, naming each path and the engine's", () => {
    const probes = { healthPath: '/health', readyPath: '/readiness', warmup: { path: '/warmup', maxLatency: Duration.seconds(2) } };
    const [warning, ...more] = warningsFor('triton', probes);
    expect(more).toEqual([]);
    expect(warning).toContain("Class 'a10g' runs triton, whose server answers liveness at '/v2/health/live' and readiness at '/v2/health/ready'");
    expect(warning).toContain("classOptions sets healthPath '/health', readyPath '/readiness', warmup.path '/warmup'");
  });

  test("no warning for the engine's own paths, for no paths, or for a custom server's", () => {
    expect(warningsFor('triton', { healthPath: '/v2/health/live', readyPath: '/v2/health/ready' })).toEqual([]);
    expect(warningsFor('triton', {})).toEqual([]);
    expect(warningsFor('custom', { healthPath: '/health', readyPath: '/readiness', warmup: { path: '/warmup', maxLatency: Duration.seconds(2) } })).toEqual([]);
  });
});

describe('the account of the uid the server runs as', () => {
  test('every engine runs as SERVER_UID with USER and LOGNAME set, since that uid has no passwd entry in the images', () => {
    // torch (and anything else) asking getpass.getuser() for a uid without a passwd entry raises KeyError on import
    // unless LOGNAME or USER is set (vllm-project/vllm#44548, ai-dynamo/dynamo#12457).
    const base = llamaClasses();
    const [l40s, a10g, inf2] = base;
    const classes: CapacityClassSpec[] = [
      l40s, // vllm
      { ...a10g, runtime: { ...a10g.runtime, engine: 'tgi', engineVersion: '3.3.7' } },
      inf2, // djl-lmi on NeuronX
      { ...a10g, name: 'triton', runtime: { ...a10g.runtime, engine: 'triton', engineVersion: undefined, queueBound: 'best-effort' } },
      { ...a10g, name: 'custom', runtime: { ...a10g.runtime, engine: 'custom', engineVersion: undefined, queueBound: 'best-effort' } },
    ];
    const service = build({ classes });
    expect(service.units.map((u) => u.cls.runtime.engine).sort()).toEqual(['custom', 'djl-lmi', 'tgi', 'triton', 'vllm']);
    for (const unit of service.units) {
      const server = unit.objects.deployment.spec.template.spec.containers[0];
      const env = Object.fromEntries((server.env ?? []).map((e) => [e.name, e.value]));
      const engine = unit.cls.runtime.engine;
      expect({ engine, runAsUser: server.securityContext?.runAsUser }).toEqual({ engine, runAsUser: SERVER_UID });
      expect({ engine, USER: env.USER, LOGNAME: env.LOGNAME }).toEqual({ engine, USER: SERVER_USER_NAME, LOGNAME: SERVER_USER_NAME });
    }
  });

  test("a class's own USER or LOGNAME wins (it was the workaround before the library set them); the other is still set", () => {
    const classes = llamaClasses().map((c) => (c.name === 'l40s' ? { ...c, runtime: { ...c.runtime, env: { USER: 'app' } } } : c));
    const env = Object.fromEntries((pod(build({ classes }), 'l40s').containers[0].env ?? []).map((e: { name: string; value?: string }) => [e.name, e.value]));
    expect({ USER: env.USER, LOGNAME: env.LOGNAME }).toEqual({ USER: 'app', LOGNAME: SERVER_USER_NAME });
  });
});

describe('model data in the pod', () => {
  test('an init container fetches exactly the pinned object version, verifies its SHA-256 and unpacks it for the server', () => {
    const spec = pod(build(), 'l40s');
    const [init] = spec.initContainers ?? [];
    expect(init.image).toBe(FETCHER_IMAGE);
    expect(init.command.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    expect(Object.fromEntries(init.env.map((e) => [e.name, e.value]))).toEqual({
      CAI_FETCH_BUCKET: 'models-bucket',
      CAI_FETCH_KEY: 'llama3-8b/bf16.tar',
      CAI_FETCH_VERSION_ID: 'v1',
      CAI_FETCH_SHA256: 'a'.repeat(64),
      CAI_FETCH_UNPACK: 'tar',
      CAI_MODEL_VOLUME: '/models',
      CAI_MODEL_DIR: '/models/model',
      HOME: '/tmp',
    });
    expect(init.volumeMounts).toContainEqual({ name: 'model-cache', mountPath: '/models' });
    expect(spec.containers[0].volumeMounts).toContainEqual({ name: 'model-cache', mountPath: '/models' });
    expect(spec.containers[0].env).toContainEqual({ name: 'CAI_MODEL_PATH', value: '/models/model' });
  });

  test('the init container meets the restricted Pod Security profile', () => {
    const [init] = pod(build(), 'inf2').initContainers ?? [];
    expect(init.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
  });

  test('the Deployment with its init container validates against the real schemas', () => {
    const service = build();
    expectValidManifests(JSON.parse(JSON.stringify(service.units.map((u) => u.objects.deployment))) as KubernetesObject[]);
  });

  test('fails when a class has modelData and the service has no fetcher image', () => {
    const { stack } = testStack();
    expect(() => new EksInferenceService(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: llamaClasses() })).toThrow(
      "class 'l40s' artifact.modelData: is set but the service has no modelDataFetcherImage; on EKS an init container fetches and verifies the model data, " +
        'so give an image with sh, the AWS CLI v2 (2.15.0 or later: EKS Pod Identity), sha256sum and tar by digest (e.g. public.ecr.aws/aws-cli/aws-cli@sha256:<digest>)',
    );
  });

  test('without a pinned version the init container fetches the current object, and the digest still has to match', () => {
    const [init] = pod(build(), 'inf2').initContainers ?? [];
    expect(init.env.map((e) => e.name)).not.toContain('CAI_FETCH_VERSION_ID');
    expect(init.env).toContainEqual({ name: 'CAI_FETCH_SHA256', value: 'c'.repeat(64) });
  });

  test('a SHA-256 given as a token reaches the init container, which verifies the fetched object against the deployed value', () => {
    const { stack } = testStack();
    const digest = new CfnParameter(stack, 'Digest', { type: 'String' });
    const classes = llamaClasses();
    const [l40s] = classes;
    classes[0] = { ...l40s, artifact: { ...l40s.artifact, modelData: { ...l40s.artifact.modelData!, sha256: digest.valueAsString } } };
    const service = new EksInferenceService(stack, 'Llama', {
      contract: LLAMA_CONTRACT, classes, modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'),
    });
    const [init] = pod(service, 'l40s').initContainers ?? [];
    expect(stack.resolve(init.env.find((e) => e.name === 'CAI_FETCH_SHA256')?.value)).toEqual({ Ref: 'Digest' });
    // The script compares with it and fails closed: a mismatch (or an empty value) never starts the server.
    expect(runFetch(Buffer.from('weights'), '', 'llama/model.safetensors').status).not.toBe(0);
  });

  test('images holding a CDK token must end in a literal digest: the class image and the fetcher image', () => {
    const { stack } = testStack();
    const repo = new ecr.Repository(stack, 'Repo');
    const at = (image: string, fetcher = FETCHER_IMAGE) => () => {
      const classes = llamaClasses();
      classes[0] = { ...classes[0], artifact: { ...classes[0].artifact, image } };
      return new EksInferenceService(stack, `Llama${stack.node.children.length}`, {
        contract: LLAMA_CONTRACT, classes, modelDataFetcherImage: fetcher, kubectlLayer: new KubectlV34Layer(stack, `Kubectl${stack.node.children.length}`),
      });
    };
    expect(at(repo.repositoryUriForTag('latest'))).toThrow(/class 'l40s' artifact\.image: '.*' holds a CDK token and does not end in a literal @sha256/);
    expect(at(llamaClasses()[0].artifact.image, repo.repositoryUri)).toThrow(
      /modelDataFetcherImage: '.*\$\{Token\[.*' is not pinned by digest; allowed: a literal <registry>\/<repository>@sha256:<64 lower-case hex>, or/,
    );
  });

  test('a key whose archive suffix is in upper or mixed case is unpacked like its lower-case form (review R251)', () => {
    const unpack = (uri: string) => {
      const classes = llamaClasses().map((c) => (c.name === 'l40s' ? { ...c, artifact: { ...c.artifact, modelData: { ...c.artifact.modelData!, uri } } } : c));
      const [init] = pod(build({ classes }), 'l40s').initContainers ?? [];
      return init.env.find((e) => e.name === 'CAI_FETCH_UNPACK')?.value;
    };
    expect(unpack('s3://models-bucket/llama3-8b/bf16.TAR.GZ')).toBe('tar.gz');
    expect(unpack('s3://models-bucket/llama3-8b/bf16.Tgz')).toBe('tar.gz');
    expect(unpack('s3://models-bucket/llama3-8b/bf16.TAR')).toBe('tar');
    expect(unpack('s3://models-bucket/llama3-8b/bf16.safetensors')).toBe('none');
  });

  test('fails when the model data is an archive the init container would place as one file (review R251)', () => {
    const at = (uri: string) => () => {
      const classes = llamaClasses().map((c) => (c.name === 'l40s' ? { ...c, artifact: { ...c.artifact, modelData: { ...c.artifact.modelData!, uri } } } : c));
      return build({ classes });
    };
    expect(at('s3://models-bucket/llama3-8b/bf16.Zip')).toThrow(
      "class 'l40s' artifact.modelData.uri: 's3://models-bucket/llama3-8b/bf16.Zip' is an archive or compressed file (.zip), which EKS would not unpack " +
        "(its init container extracts .tar with 'tar -xf' and .tar.gz or .tgz with 'tar -xzf'; anything else it places as the one file /models/model/bf16.Zip), " +
        'so the engine would find no model and its pods would never turn Ready; allowed (suffixes in any case): one object: a tar archive ending in .tar, ' +
        "a gzip-compressed one ending in .tar.gz or .tgz, or one non-archive file (placed as /models/model/<its name>); or engine 'custom', whose " +
        'image may unpack it itself',
    );
    expect(at('s3://models-bucket/llama3-8b/bf16.tar.zst')).toThrow('is an archive or compressed file (.zst), which EKS would not unpack');
  });

  test('an archive the init container does not unpack passes for a custom image, placed as one file, with a warning per class (review R252)', () => {
    const custom = (uri: string) => {
      const { stack } = testStack();
      const classes = llamaClasses().map((c) => (c.name === 'l40s' ? {
        ...c, artifact: { ...c.artifact, modelData: { ...c.artifact.modelData!, uri } },
        runtime: { ...c.runtime, engine: 'custom', engineVersion: undefined, queueBound: 'best-effort' as const },
      } : c));
      const service = new EksInferenceService(stack, 'Llama', {
        contract: LLAMA_CONTRACT, classes, modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'),
      });
      const [init] = pod(service, 'l40s').initContainers ?? [];
      return {
        unpack: init.env.find((e) => e.name === 'CAI_FETCH_UNPACK')?.value,
        warnings: Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('eks-model-data-archive')).map((w) => String(w.entry.data)),
      };
    };
    expect(custom('s3://models-bucket/llama3-8b/model.zip')).toEqual({
      unpack: 'none',
      warnings: [
        "Class 'l40s': 's3://models-bucket/llama3-8b/model.zip' is an archive or compressed file (.zip), which EKS does not unpack (its init container " +
          "extracts .tar with 'tar -xf' and .tar.gz or .tgz with 'tar -xzf'): it lands as-is, as the one file /models/model/model.zip, and the custom " +
          'image must unpack it itself (into a writable directory such as CAI_CACHE_DIR) before it serves, or its pods would never turn Ready. ' +
          'Acknowledge this warning once the image does, or use an archive EKS unpacks: one object: a tar archive ending in .tar, a gzip-compressed ' +
          'one ending in .tar.gz or .tgz, or one non-archive file (placed as /models/model/<its name>) [ack: cdk-capacity-aware-inference:eks-model-data-archive-l40s]',
      ],
    });
    expect(custom('s3://models-bucket/llama3-8b/model.onnx.gz').warnings).toEqual([expect.stringContaining('(.gz), which EKS does not unpack')]);
    expect(custom('s3://models-bucket/llama3-8b/model.TAR.GZ')).toEqual({ unpack: 'tar.gz', warnings: [] });
    expect(custom('s3://models-bucket/llama3-8b/model.onnx')).toEqual({ unpack: 'none', warnings: [] });
  });

  test('a custom image\'s archive is sized with the tree it unpacks beside it on the model volume (review R254)', () => {
    // The archive lands as one file and the image unpacks it into CAI_CACHE_DIR, on the same emptyDir: both copies at
    // once, as for a tar the init container extracts; sized for one, the kubelet evicts the pod past its sizeLimit.
    const cls = { name: 'l40s', footprint: { weightsGiB: 100 } } as unknown as CapacityClass;
    const fetch = (key: string, unpack: 'tar' | 'tar.gz' | 'none') => ({ image: FETCHER_IMAGE, bucket: 'b', key, sha256: 'a'.repeat(64), unpack });
    expect(modelCacheGiB(cls, fetch('m/model.zip', 'none'), undefined)).toBe(modelCacheGiB(cls, fetch('m/model.tar', 'tar'), undefined));
    expect(modelCacheGiB(cls, fetch('m/model.zip', 'none'), undefined)).toBeGreaterThanOrEqual(220);
    expect(modelCacheGiB(cls, fetch('m/model.onnx', 'none'), undefined)).toBe(200);
    expect(modelCacheProblems(cls, fetch('m/model.zip', 'none'), 120)).toEqual([expect.objectContaining({
      field: 'classOptions.modelCacheSize', message: expect.stringContaining('the archive and the tree unpacked from it, which coexist'),
    })]);
    expect(modelCacheProblems(cls, fetch('m/model.onnx', 'none'), 120)).toEqual([]);
  });

  test('fails when the fetcher image is a tag or the model data a prefix', () => {
    const classes = llamaClasses();
    classes[0] = { ...classes[0], artifact: { ...classes[0].artifact, modelData: { uri: 's3://models-bucket/llama3-8b/bf16/', sha256: 'a'.repeat(64), versionId: 'v1' } } };
    const make = () => new EksInferenceService(testStack().stack, 'Llama', { contract: LLAMA_CONTRACT, classes, modelDataFetcherImage: 'public.ecr.aws/aws-cli/aws-cli:latest' });
    expect(make).toThrow("modelDataFetcherImage: 'public.ecr.aws/aws-cli/aws-cli:latest' is not pinned by digest; allowed: a literal <registry>/<repository>@sha256:<64 lower-case hex>");
    expect(make).toThrow("class 'l40s' artifact.modelData.uri: 's3://models-bucket/llama3-8b/bf16/' is a prefix; on EKS the model data must be one object");
  });

  test('fails when an engine is unknown or the engine version has no bounded queue, naming the construct', () => {
    const classes = llamaClasses();
    classes[0] = { ...classes[0], runtime: { ...classes[0].runtime, engine: 'vllm-neuron' } };
    classes[1] = { ...classes[1], runtime: { ...classes[1].runtime, engineVersion: '0.28.0' } };
    const make = () => new EksInferenceService(testStack().stack, 'Llama', { contract: LLAMA_CONTRACT, classes, modelDataFetcherImage: FETCHER_IMAGE });
    expect(make).toThrow("EksInferenceService 'Test/Llama' is invalid");
    expect(make).toThrow("class 'l40s' runtime.engine: 'vllm-neuron' is not an engine the library can bind; allowed: vllm, tgi, djl-lmi, triton, custom");
    expect(make).toThrow("class 'a10g' runtime.queueBound: is 'required' but vllm 0.28.0 has no bounded queue (it exists from 0.29.0)");
  });
});

/** The l40s class with its model data at `uri` (the other classes as in test/util). */
function l40sAt(uri: string): CapacityClassSpec[] {
  const classes = llamaClasses();
  classes[0] = { ...classes[0], artifact: { ...classes[0].artifact, modelData: { ...classes[0].artifact.modelData!, uri } } };
  return classes;
}

/** A `{ Ref }` as `<Ref:id>`, any other intrinsic as a placeholder: the text kubectl gets once CloudFormation resolves it. */
function renderRefs(value: unknown): string {
  if (typeof value === 'string') return value;
  const v = value as { Ref?: string; 'Fn::Join'?: [string, unknown[]] };
  if (v.Ref !== undefined) return `<Ref:${v.Ref}>`;
  return v['Fn::Join'] ? v['Fn::Join'][1].map(renderRefs).join(v['Fn::Join'][0]) : 'resolved-at-deploy';
}

/** The class's pod spec in the workload manifest as the stack renders it for the kubectl handler. */
function renderedPod(service: EksInferenceService, className: string) {
  const stack = Stack.of(service);
  const manifest = service.units.find((u) => u.cls.name === className)!.manifests.workload;
  const resource = Template.fromStack(stack).toJSON().Resources[stack.getLogicalId(manifest.node.defaultChild as CfnElement)];
  const objects = JSON.parse(renderRefs(resource.Properties.Manifest)) as KubernetesObject[];
  return (objects.find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { spec: ReturnType<typeof pod> } } }).spec.template.spec;
}

describe('model data in a bucket given as a token (s3://${bucket.bucketName}/key)', () => {
  function service(uriOf: (bucketName: string) => string) {
    const { stack } = testStack();
    const bucket = new s3.Bucket(stack, 'Models');
    const built = new EksInferenceService(stack, 'Llama', {
      contract: LLAMA_CONTRACT, classes: l40sAt(uriOf(bucket.bucketName)), modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'),
    });
    return { stack, built, bucketId: stack.getLogicalId(bucket.node.defaultChild as CfnElement) };
  }

  test('gets the init container and the pod identity grant of a literal bucket, the bucket a CloudFormation reference', () => {
    const literal = build();
    const literalPod = renderedPod(literal, 'l40s');
    const { stack, built, bucketId } = service((b) => `s3://${b}/llama3-8b/bf16.tar`);
    const tokenPod = renderedPod(built, 'l40s');
    const tokenValues: Record<string, string> = { CAI_FETCH_BUCKET: `<Ref:${bucketId}>`, CAI_MODEL_DATA_URI: `s3://<Ref:${bucketId}>/llama3-8b/bf16.tar` };
    const bucketed = (env: readonly { name: string; value: string }[]) => env.map((e) => ({ ...e, value: tokenValues[e.name] ?? e.value }));
    const [literalInit] = literalPod.initContainers!;
    expect(literalInit.env).toContainEqual({ name: 'CAI_FETCH_BUCKET', value: 'models-bucket' });
    expect(tokenPod.initContainers).toEqual([{ ...literalInit, env: bucketed(literalInit.env) }]);
    expect(tokenPod.containers[0].env).toEqual(bucketed(literalPod.containers[0].env));
    expect(tokenPod.serviceAccountName).toBe(literalPod.serviceAccountName);
    Template.fromStack(stack).hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: [{
          Sid: 'ReadPinnedModelDataVersion',
          Effect: 'Allow',
          Action: 's3:GetObjectVersion',
          Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::', { Ref: bucketId }, '/llama3-8b/bf16.tar']] },
          Condition: { StringEquals: { 's3:VersionId': 'v1' } },
        }],
      },
    });
    Template.fromStack(stack).hasResourceProperties('AWS::EKS::PodIdentityAssociation', { Namespace: 'llama3-chat', ServiceAccount: 'llama3-chat-l40s' });
  });

  test('fails when it is a prefix, like a literal one', () => {
    expect(() => service((b) => `s3://${b}/llama3-8b/bf16/`)).toThrow(
      /class 'l40s' artifact\.modelData\.uri: 's3:\/\/\$\{Token\[[^\]]+\]\}\/llama3-8b\/bf16\/' is a prefix; on EKS the model data must be one/,
    );
  });

  test('fails, naming what is allowed, when the key holds a token or the whole URI is one', () => {
    const make = (uri: string) => () =>
      new EksInferenceService(testStack().stack, 'Llama', { contract: LLAMA_CONTRACT, classes: l40sAt(uri), modelDataFetcherImage: FETCHER_IMAGE });
    expect(make(`s3://models-bucket/${Lazy.string({ produce: () => 'llama3-8b/bf16.tar' })}`)).toThrow(new RegExp(
      "class 'l40s' artifact\\.modelData\\.uri: 's3://models-bucket/\\$\\{Token\\[[^\\]]+\\]\\}' has a CDK token in its key; " +
        "on EKS the init container unpacks the object by its key's suffix",
    ));
    expect(make(`s3://models-bucket/${Lazy.string({ produce: () => 'x' })}`)).toThrow('allowed: a literal key (only the bucket may be a token, e.g. s3://${bucket.bucketName}/model.tar)');
    expect(make(Lazy.string({ produce: () => 's3://models-bucket/llama3-8b/bf16.tar' }))).toThrow(
      /class 'l40s' artifact\.modelData\.uri: '\$\{Token\[[^\]]+\]\}' holds a CDK token but is not s3:\/\/<bucket>\/<key> around it/,
    );
  });

  test('an archive in it needs tar in the fetcher image, as in a literal bucket', () => {
    const { stack } = testStack();
    const bucket = new s3.Bucket(stack, 'Models');
    expect(() => new EksInferenceService(stack, 'Llama', {
      contract: LLAMA_CONTRACT, classes: l40sAt(`s3://${bucket.bucketName}/llama3-8b/bf16.tar`), modelDataFetcherImage: `public.ecr.aws/aws-cli/aws-cli@sha256:${'d'.repeat(64)}`,
    })).toThrow("class 'l40s' modelDataFetcherImage: 'public.ecr.aws/aws-cli/aws-cli@sha256:" + 'd'.repeat(64) + "' is the AWS CLI image, which has no tar");
  });
});

/** Runs the init container's script with a stand-in `aws` that serves `object` (or fails), as the pod would. */
function runFetch(object: Buffer | undefined, sha256: string, key: string, pinned = true, credentials = true) {
  const versionId = pinned ? 'v9' : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'cai-fetch-'));
  const bin = join(dir, 'bin');
  const volume = join(dir, 'models');
  mkdirSync(bin);
  mkdirSync(volume);
  if (object) writeFileSync(join(dir, 'served'), object);
  // The real CLI writes the object to its last argument; the stand-in copies the fixture there, or fails like S3 would.
  writeFileSync(
    join(bin, 'aws'),
    object ? `#!/bin/sh\nfor last; do :; done\ncp "${join(dir, 'served')}" "$last"\necho "$*" > "${join(dir, 'call')}"\n` : '#!/bin/sh\necho "An error occurred (AccessDenied)" >&2\nexit 254\n',
    { mode: 0o755 },
  );
  const script = modelFetchContainer({ image: FETCHER_IMAGE, bucket: 'b', key, versionId, sha256, unpack: unpackOf(key) }).command[2];
  const result = spawnSync('/bin/sh', ['-c', script], {
    env: {
      PATH: `${bin}:${process.env.PATH}`,
      CAI_FETCH_BUCKET: 'b',
      CAI_FETCH_KEY: key,
      ...(versionId ? { CAI_FETCH_VERSION_ID: versionId } : {}),
      CAI_FETCH_SHA256: sha256,
      CAI_FETCH_UNPACK: unpackOf(key),
      CAI_MODEL_VOLUME: volume,
      CAI_MODEL_DIR: join(volume, 'model'),
      ...(credentials ? { AWS_CONTAINER_CREDENTIALS_FULL_URI: 'http://169.254.170.23/v1/credentials' } : {}),
    },
    encoding: 'utf8',
  });
  const model = join(volume, 'model');
  let files: string[];
  try {
    files = readdirSync(model);
  } catch {
    files = [];
  }
  return { status: result.status, stderr: result.stderr, files, model, dir };
}

describe('the fetch script fails closed', () => {
  const weights = Buffer.from('weights');
  const digest = (b: Buffer) => createHash('sha256').update(b).digest('hex');

  test('a matching object is placed where the server loads it, fetched by its version id', () => {
    const r = runFetch(weights, digest(weights), 'llama/model.safetensors');
    expect(r.status).toBe(0);
    expect(r.files).toEqual(['model.safetensors']);
    expect(readFileSync(join(r.model, 'model.safetensors'), 'utf8')).toBe('weights');
    expect(readFileSync(join(r.dir, 'call'), 'utf8')).toContain('s3api get-object --bucket b --key llama/model.safetensors --version-id v9');
  });

  test('without a version id it fetches the current object (and still checks the digest)', () => {
    const r = runFetch(weights, digest(weights), 'llama/model.safetensors', false);
    expect(r.status).toBe(0);
    expect(readFileSync(join(r.dir, 'call'), 'utf8').trim()).toMatch(/get-object --bucket b --key llama\/model\.safetensors \S+object$/);
  });

  test('a tar archive is unpacked after its digest matched', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cai-tar-'));
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src', 'config.json'), '{}');
    execFileSync('tar', ['-cf', join(dir, 'm.tar'), '-C', join(dir, 'src'), 'config.json']);
    const archive = readFileSync(join(dir, 'm.tar'));
    const r = runFetch(archive, digest(archive), 'llama/m.tar');
    expect(r.status).toBe(0);
    expect(r.files).toEqual(['config.json']);
  });

  test('a gzip tar archive whose suffix is in upper or mixed case is unpacked, not placed as one file (review R251)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cai-tgz-'));
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src', 'config.json'), '{}');
    execFileSync('tar', ['-czf', join(dir, 'm.tgz'), '-C', join(dir, 'src'), 'config.json']);
    const archive = readFileSync(join(dir, 'm.tgz'));
    for (const key of ['llama/m.TAR.GZ', 'llama/m.Tgz', 'llama/m.tar.gz']) {
      const r = runFetch(archive, digest(archive), key);
      expect(r.status).toBe(0);
      expect(r.files).toEqual(['config.json']);
    }
  });

  test('a digest mismatch exits non-zero, says why and leaves no model for the server', () => {
    const r = runFetch(weights, 'f'.repeat(64), 'llama/model.safetensors');
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(`model-data: SHA-256 mismatch: expected ${'f'.repeat(64)}, got ${digest(weights)}`);
    expect(r.files).toEqual([]);
  });

  test('a failed download exits non-zero and says which object version failed', () => {
    const r = runFetch(undefined, digest(weights), 'llama/model.safetensors');
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('model-data: download of s3://b/llama/model.safetensors version v9 failed\n');
    expect(r.files).toEqual([]);
  });

  test('a failed download in a pod without pod identity credentials says why it will never succeed', () => {
    const r = runFetch(undefined, digest(weights), 'llama/model.safetensors', true, false);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('model-data: download of s3://b/llama/model.safetensors version v9 failed (this pod has no pod identity credentials: '
      + 'a pod admitted before the pod identity association of its service account existed never gets them; delete the pod)');
  });
});
