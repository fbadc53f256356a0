import { HardwareCatalog } from '../../lib/core/hardware/catalog';
import { type CapacityClassSpec } from '../../lib/core/service/capacity-class';
import { checkCapacityClasses, defineCapacityClasses } from '../../lib/core/service/checks';
import { isDigestPinnedImage } from '../../lib/core/trust/image-reference';
import { ConstructValidationError } from '../../lib/core/validation/error';
import { imageRef, LLAMA_CONTRACT, llamaClasses } from '../util';

function problemsOf(specs: CapacityClassSpec[], options: Parameters<typeof checkCapacityClasses>[1] = {}): string[] {
  return checkCapacityClasses(specs, { contract: LLAMA_CONTRACT, ...options }).problems.map((p) => `${p.className ?? ''} ${p.field}: ${p.message}`);
}

function withClass(patch: (c: CapacityClassSpec) => CapacityClassSpec, index = 0): CapacityClassSpec[] {
  return llamaClasses().map((c, i) => (i === index ? patch(c) : c));
}

describe('capacity class checks', () => {
  test('accepts the reference classes and resolves their hardware, price and replicas per instance', () => {
    const classes = defineCapacityClasses(llamaClasses(), { contract: LLAMA_CONTRACT, platform: 'ec2' });
    expect(classes.map((c) => [c.name, c.preferenceRank, c.hardware.acceleratorName, c.usdPerHour, c.replicasPerInstance])).toEqual([
      ['l40s', 0, 'NVIDIA L40S', 1.861, 1],
      ['a10g', 1, 'NVIDIA A10G', 1.006, 1],
      ['inf2', 2, 'AWS Inferentia2', 0.7582, 1],
    ]);
    expect(classes[0].placement.allowSensitive).toBe(true);
    expect(classes[0].memory).toEqual({ utilizationCap: 0.9, marginGiB: 1 });
  });

  test('fails when the model does not fit, naming every term in GiB, the shortfall and the fix', () => {
    // Llama-3-8B bf16 with 16 x 8192-token sequences on one 22.35 GiB L4.
    const specs = withClass((c) => ({ ...c, instanceType: 'g6.xlarge' }));
    expect(() => defineCapacityClasses(specs, { contract: LLAMA_CONTRACT })).toThrow(
      "class 'l40s' memory: g6.xlarge cannot hold this model: needs 34.0 GiB (weights 15.0 GiB + workspace 2.0 GiB + " +
        'KV cache 16.0 GiB for 16 x 8192 tokens + margin 1.0 GiB) but 1 x 22.4 GiB x 0.9 = 20.1 GiB is usable; short by 13.9 GiB. ' +
        'Fix: lower runtime.maxConcurrentSequences to at most 2, or use a larger instance',
    );
  });

  test('memory boundary: the largest batch that fits passes, one more sequence fails', () => {
    // L40S: 44.7 x 0.9 = 40.23 usable; 18 GiB fixed; 1 GiB per 8192-token sequence -> 22 sequences fit.
    const at = (n: number) => withClass((c) => ({ ...c, runtime: { ...c.runtime, maxConcurrentSequences: n } }));
    expect(problemsOf(at(22))).toEqual([]);
    expect(problemsOf(at(23)).join('\n')).toContain('lower runtime.maxConcurrentSequences to at most 22');
  });

  test('fails when even the weights do not fit', () => {
    const specs = withClass((c) => ({ ...c, footprint: { ...c.footprint, weightsGiB: 60 } }));
    expect(problemsOf(specs).join('\n')).toContain('the weights alone do not fit; use a larger instance, a higher tensor-parallel degree');
  });

  test('fails when the tensor-parallel degree does not divide the accelerators, listing the allowed degrees', () => {
    const specs = withClass((c) => ({ ...c, footprint: { ...c.footprint, tensorParallelDegree: 3 } }), 2);
    expect(problemsOf(specs)).toContain('inf2 footprint.tensorParallelDegree: 3 does not divide the 2 NeuronCores of inf2.xlarge; allowed: 1, 2');
    const gpu = withClass((c) => ({ ...c, instanceType: 'g6e.12xlarge', footprint: { ...c.footprint, tensorParallelDegree: 3 } }));
    expect(problemsOf(gpu)).toContain('l40s footprint.tensorParallelDegree: 3 does not divide the 4 GPUs of g6e.12xlarge; allowed: 1, 2, 4');
    const ok = withClass((c) => ({ ...c, instanceType: 'g6e.12xlarge', footprint: { ...c.footprint, tensorParallelDegree: 4 } }));
    expect(problemsOf(ok)).toEqual([]);
  });

  test('EC2 replicas per instance follow the tensor-parallel degree; SageMaker runs one container per instance', () => {
    const specs = withClass((c) => ({ ...c, instanceType: 'g6e.12xlarge', footprint: { ...c.footprint, tensorParallelDegree: 2 } }));
    const [l40s] = defineCapacityClasses(specs);
    expect(l40s.replicasPerInstance).toBe(2);
    expect(l40s.usdPerReplicaHour).toBeCloseTo(10.49264 / 2);
  });

  test('fails when a CUDA artifact is placed on Neuron hardware and the other way round', () => {
    const cudaOnNeuron = withClass((c) => ({ ...c, instanceType: 'inf2.xlarge' }));
    expect(problemsOf(cudaOnNeuron).join('\n')).toContain(
      "l40s footprint.acceleratorTarget: the artifact targets 'cuda' but inf2.xlarge carries AWS Inferentia2 (neuron); a CUDA artifact runs only on NVIDIA GPUs",
    );
    const neuronOnGpu = withClass((c) => ({ ...c, instanceType: 'g6e.2xlarge' }), 2);
    expect(problemsOf(neuronOnGpu).join('\n')).toContain('a Neuron-compiled artifact runs only on Inferentia/Trainium');
  });

  test('fails when an image uses a mutable tag or model data is not pinned by digest', () => {
    const specs = withClass((c) => ({
      ...c,
      artifact: { image: 'vllm/vllm-openai:latest', modelData: { uri: 'https://example.com/m.tar', sha256: 'abc', versionId: ' ' } },
    }));
    expect(problemsOf(specs)).toEqual([
      "l40s artifact.image: 'vllm/vllm-openai:latest' is not pinned by digest; use <registry>/<repository>@sha256:<64 hex characters> " +
        '(a mutable tag can change under a running fleet)',
      "l40s artifact.modelData.uri: 'https://example.com/m.tar' is not an S3 URI; use s3://<bucket>/<key>",
      "l40s artifact.modelData.sha256: 'abc' is not a SHA-256 digest; use 64 lower-case hex characters",
      'l40s artifact.modelData.versionId: is empty; give the S3 object version or omit it',
    ]);
    expect(problemsOf(withClass((c) => ({ ...c, artifact: { image: imageRef('x', 'f') } })))).toEqual([]);
  });

  test('an image holding a CDK token must still end in a literal digest: a token repository URI or tag may resolve to a mutable tag', () => {
    const repoUri = '${Token[TOKEN.66]}.dkr.ecr.${Token[TOKEN.65]}.${Token[AWS.URLSuffix.4]}/${Token[TOKEN.72]}';
    const digest = `@sha256:${'1'.repeat(64)}`;
    const imageOf = (image: string) => problemsOf(withClass((c) => ({ ...c, artifact: { image } })));
    // repo.repositoryUriForDigest('sha256:...') with a literal digest: the registry and repository resolve at deploy time.
    expect(imageOf(repoUri + digest)).toEqual([]);
    expect(imageOf('${Token[TOKEN.9]}' + digest)).toEqual([]);
    // repo.repositoryUri, repo.repositoryUriForTag('latest'), `${param.valueAsString}:latest`, a token digest, a tag beside the digest.
    for (const image of [repoUri, `${repoUri}:latest`, '${Token[TOKEN.9]}:latest', `${repoUri}@\${Token[TOKEN.3]}`,
      `${repoUri}@sha256:\${Token[TOKEN.3]}`, `${repoUri}:v1${digest}`, `${repoUri}@sha256:${'A'.repeat(64)}`]) {
      expect(imageOf(image)).toEqual([
        `l40s artifact.image: '${image}' holds a CDK token and does not end in a literal @sha256:<64 lower-case hex>, so it may resolve to a tag ` +
          '(a mutable tag can change under a running fleet); allowed: a literal <registry>/<repository>@sha256:<64 lower-case hex>, or a reference ' +
          "whose tokens stand for the registry or repository only and that ends in a literal digest (e.g. repository.repositoryUriForDigest('sha256:<64 hex>'), " +
          'not repositoryUri or repositoryUriForTag)',
      ]);
    }
    expect(isDigestPinnedImage(`\${Token[TOKEN.1]}:5000/vllm${digest}`)).toBe(true); // a port is not a tag
    expect(isDigestPinnedImage(`\${Token[TOKEN.1]}/vllm:v1${digest}`)).toBe(false);
  });

  test('fails when the instance type is a CDK token, saying so instead of looking it up in the catalog', () => {
    expect(problemsOf(withClass((c) => ({ ...c, instanceType: '${Token[TOKEN.426]}' })))).toEqual([
      "l40s instanceType: '${Token[TOKEN.426]}' is a CDK token, which is only resolved at deploy time; allowed: a literal instance type of the " +
        "hardware catalog (e.g. 'g6e.xlarge', 'ml.g5.xlarge'), because the construct computes with it at synth (accelerator memory, price, " +
        'tensor-parallel units and the platform come from the catalog)',
    ]);
  });

  test('measuredOn must be a real calendar day', () => {
    const on = (measuredOn: string) => problemsOf(withClass((c) => ({ ...c, envelope: { ...c.envelope, measuredOn } })));
    for (const bad of ['2026-13-45', '2026-02-30', '2025-02-29', '2026-00-10', '2026-1-5', '${Token[TOKEN.1]}']) {
      expect(on(bad)).toEqual([`l40s envelope.measuredOn: '${bad}' is not a calendar date; use YYYY-MM-DD (e.g. '2026-10-01')`]);
    }
    for (const good of ['2026-10-01', '2024-02-29', '2026-12-31']) expect(on(good)).toEqual([]);
  });

  test('a class without its artifact, footprint or runtime (a configuration file) is one problem per missing part, not a TypeError', () => {
    for (const part of ['artifact', 'footprint', 'runtime'] as const) {
      for (const value of [undefined, null]) {
        const specs = withClass((c) => ({ ...c, [part]: value as never }));
        const { classes, problems } = checkCapacityClasses(specs, { contract: LLAMA_CONTRACT, platform: 'ec2' });
        expect(problems).toEqual([expect.objectContaining({ className: 'l40s', field: part, message: expect.stringMatching(`^is ${value === null ? 'null' : 'missing'}; allowed: an object with `) })]);
        expect(classes.map((c) => c.name)).toEqual(['a10g', 'inf2']);
      }
    }
    const bare = checkCapacityClasses([{ name: 'l40s', instanceType: 'g6e.xlarge', maxReplicas: 2 } as never], { contract: LLAMA_CONTRACT });
    expect(bare.problems.map((p) => p.field)).toEqual(['artifact', 'footprint', 'runtime', 'envelope']);
  });

  test('a contract without its slo or request shape is reported field by field, and no class is resolved against it', () => {
    for (const part of ['slo', 'requestShape'] as const) {
      const contract = { ...LLAMA_CONTRACT, [part]: undefined as never };
      const { classes, problems } = checkCapacityClasses(llamaClasses(), { contract });
      expect(problems.map((p) => `${p.field}: ${p.message}`)).toEqual(part === 'slo'
        ? ['contract.slo.ttftP95Ms: is undefined; allowed: a finite number above 0 ms', 'contract.slo.deadlineMs: is undefined; allowed: a finite number above 0 ms']
        : ['contract.requestShape.meanPromptTokens: is undefined; allowed: a finite number at least 0 tokens', expect.stringMatching(/^contract.requestShape.meanOutputTokens: is undefined/)]);
      expect(classes).toEqual([]);
    }
  });

  test('fails when names are duplicated or are not RFC 1123 labels', () => {
    const [a, b] = llamaClasses();
    expect(problemsOf([a, { ...b, name: 'l40s' }])).toContain(
      " name: 'l40s' is used by more than one class; class names must be unique within a service",
    );
    expect(problemsOf([{ ...a, name: 'L40S_Pool' }])).toContain(
      "L40S_Pool name: is 'L40S_Pool'; allowed: a DNS-1123 label: 1 to 63 lower-case letters, digits and \"-\", starting and ending with a letter or digit (it names Kubernetes objects and SageMaker resources)",
    );
    expect(problemsOf([{ ...a, name: 'x'.repeat(64) }]).join()).toContain('(64 characters); allowed: a DNS-1123 label: 1 to 63');
    expect(problemsOf([{ ...a, name: 'x'.repeat(63) }])).toEqual([]);
  });

  test('fails when the envelope is missing, non-positive, implausible or measured above the SLO', () => {
    const missing = withClass((c) => ({ ...c, envelope: undefined as never }));
    expect(problemsOf(missing).join()).toContain('a class without a measured performance envelope cannot take routed traffic');
    const zero = withClass((c) => ({ ...c, envelope: { ...c.envelope, tokensPerSecondPerReplica: 0 } }));
    expect(problemsOf(zero)).toContain('l40s envelope.tokensPerSecondPerReplica: is 0 tokens/s; allowed: a finite number above 0 tokens/s');
    // 16 sequences at 10000 tokens/s means 1.6 ms per token, far below a 35 ms p95: prompt tokens were counted.
    const implausible = withClass((c) => ({ ...c, envelope: { ...c.envelope, tokensPerSecondPerReplica: 10000 } }));
    expect(problemsOf(implausible).join()).toContain('implies a mean inter-token latency of 1.6 ms, implausibly far below the measured p95 of 35 ms');
    const slow = withClass((c) => ({ ...c, envelope: { ...c.envelope, ttftP95Ms: 1600, itlP95Ms: 61 } }));
    expect(problemsOf(slow)).toEqual([
      "l40s envelope.ttftP95Ms: 1600 ms exceeds the SLO's p95 time to first token of 1500 ms; allowed: at most the SLO of the contract " +
        '(the envelope must be measured at the SLO)',
      "l40s envelope.itlP95Ms: 61 ms exceeds the SLO's p95 inter-token latency of 60 ms; allowed: at most the SLO of the contract " +
        '(the envelope must be measured at the SLO)',
    ]);
    // Whole requests: a fraction was floored by the admission limits, and below 1 admitted nothing (review R261).
    const half = withClass((c) => ({ ...c, envelope: { ...c.envelope, safeConcurrency: 0.5 } }));
    expect(problemsOf(half).join()).toContain('l40s envelope.safeConcurrency: is 0.5 requests; allowed: a whole number at least 1 requests');
    expect(problemsOf(withClass((c) => ({ ...c, envelope: { ...c.envelope, safeConcurrency: 2.5 } }))).join()).toContain('safeConcurrency: is 2.5');
    // An ITL the contract bounds must be measured: without it every answer would read as its first token (review R260).
    const noItl = withClass((c) => ({ ...c, envelope: { ...c.envelope, itlP95Ms: undefined } }));
    expect(problemsOf(noItl)).toEqual([
      "l40s envelope.itlP95Ms: is missing while the contract's SLO bounds the inter-token latency at 60 ms; allowed: measured whenever " +
        "the contract's SLO bounds the inter-token latency (slo.itlP95Ms) (a model that streams no tokens cannot meet an ITL SLO, so its " +
        'contract sets none; a streaming class without it would read as answering at its first token, and its deadline check would be skipped)',
    ]);
    const atSlo = withClass((c) => ({ ...c, envelope: { ...c.envelope, ttftP95Ms: 1500, itlP95Ms: 60 } }));
    expect(problemsOf(atSlo)).toEqual([]);
    const badDate = withClass((c) => ({ ...c, envelope: { ...c.envelope, measuredOn: 'last week', workload: ' ' } }));
    expect(problemsOf(badDate)).toEqual([
      "l40s envelope.measuredOn: 'last week' is not a calendar date; use YYYY-MM-DD (e.g. '2026-10-01')",
      'l40s envelope.workload: is empty; say which workload the envelope was measured with',
    ]);
  });

  test('fails when the batch size of this class is below the concurrency its envelope was measured at', () => {
    const copied = withClass((c) => ({ ...c, runtime: { ...c.runtime, maxConcurrentSequences: 4 } }), 1);
    expect(problemsOf(copied)).toContain(
      "a10g runtime.maxConcurrentSequences: 4 is below the envelope's safe concurrency of 8; allowed: at least the envelope's safe concurrency " +
        '(the envelope was measured with larger batches than this class runs; re-measure it or raise the batch size)',
    );
  });

  test('fails when the queue delay is not below the deadline', () => {
    const at = (ms: number) => withClass((c) => ({ ...c, runtime: { ...c.runtime, maxQueueDelayMs: ms } }));
    expect(problemsOf(at(30000)).join()).toContain('runtime.maxQueueDelayMs: is 30000 ms, not below the service deadline of 30000 ms');
    expect(problemsOf(at(29999))).toEqual([]);
  });

  test('fails when the platform is wrong, the type unknown or the price unknown', () => {
    expect(problemsOf(llamaClasses(), { platform: 'sagemaker' })[0]).toBe(
      "l40s instanceType: 'g6e.xlarge' is a ec2 type; this service runs on sagemaker and needs a SageMaker 'ml.' instance type",
    );
    expect(problemsOf(withClass((c) => ({ ...c, instanceType: 'g9.huge' })))).toEqual([
      "l40s instanceType: 'g9.huge' is not in the hardware catalog; register it with HardwareCatalog.with({...})",
    ]);
    // ml.g6e.xlarge has no sourced price in the catalog.
    const unpriced = llamaClasses('ml.').map((c) => ({ ...c, usdPerHour: undefined }));
    expect(problemsOf(unpriced, { platform: 'sagemaker' })).toEqual([
      "l40s usdPerHour: no price is known for 'ml.g6e.xlarge'; set usdPerHour (USD per instance-hour) on the class",
    ]);
    const priced = HardwareCatalog.builtIn().withPrice('ml.g6e.xlarge', 2.61, '2026-08-17');
    expect(problemsOf(unpriced, { platform: 'sagemaker', catalog: priced })).toEqual([]);
  });

  test('lists every problem of every class in one error', () => {
    const specs = llamaClasses().map((c) => ({ ...c, maxReplicas: 0, artifact: { image: 'x:1' } }));
    const error = (() => {
      try {
        defineCapacityClasses(specs);
      } catch (e) {
        return e as ConstructValidationError;
      }
      throw new Error('expected an error');
    })();
    expect(error).toBeInstanceOf(ConstructValidationError);
    expect(error.construct).toBe('defineCapacityClasses');
    expect(error.problems).toHaveLength(6);
    expect(error.message).toMatch(/^defineCapacityClasses is invalid \(6 problems\):\n {2}- class 'l40s' artifact.image/);
  });

  test('rejects number tokens the plan would compute with, and carries a string token image that ends in a literal digest', () => {
    const token = -1.8881545897087626e289;
    const specs = withClass((c) => ({
      ...c,
      maxReplicas: token,
      runtime: { ...c.runtime, maxConcurrentSequences: token },
      artifact: { image: `\${Token[TOKEN.123]}@sha256:${'a'.repeat(64)}` },
    }));
    const problems = problemsOf(specs);
    expect(problems).toHaveLength(2);
    expect(problems[0]).toContain(
      'l40s runtime.maxConcurrentSequences: is a CDK token, which is only resolved at deploy time; ' +
        'allowed: a literal value at synth (a whole number at least 1)',
    );
    expect(problems[1]).toMatch(/^l40s maxReplicas: is a CDK token/);
    expect(problemsOf(withClass((c) => ({ ...c, name: '${Token[TOKEN.1]}' })))[0]).toContain('is a CDK token');
  });
});

describe('hardware catalog', () => {
  test('built-in catalog carries sourced facts and derived tensor-parallel units', () => {
    const inf2 = HardwareCatalog.builtIn().get('inf2.48xlarge');
    expect(inf2).toMatchObject({ acceleratorCount: 12, tensorParallelUnits: 24, memoryPerUnitGiB: 16, acceleratorTarget: 'neuron' });
    expect(inf2.kubernetesResourceName).toBe('aws.amazon.com/neuroncore');
    expect(HardwareCatalog.builtIn().get('p5.48xlarge')).toMatchObject({ acceleratorName: 'NVIDIA H100', kubernetesResourceName: 'nvidia.com/gpu' });
  });

  test('registering and overriding are immutable', () => {
    const base = HardwareCatalog.builtIn();
    const custom = base.with({ ...base.get('g6e.xlarge'), instanceType: 'g7e.xlarge', onDemandUsdPerHour: 3 });
    expect(custom.get('g7e.xlarge').onDemandUsdPerHour).toBe(3);
    expect(base.find('g7e.xlarge')).toBeUndefined();
    expect(base.withPrice('g5.xlarge', 0.5).get('g5.xlarge').onDemandUsdPerHour).toBe(0.5);
    expect(base.get('g5.xlarge').onDemandUsdPerHour).toBe(1.006);
  });

  test('fails when a type is unknown, naming the known ones', () => {
    expect(() => HardwareCatalog.builtIn().get('g9.xlarge')).toThrow(/Unknown instance type 'g9.xlarge'. Known types: g5.12xlarge, g5.2xlarge/);
  });

  test('fails when a registered profile is invalid, listing every problem', () => {
    const base = HardwareCatalog.builtIn().get('g5.xlarge');
    expect(() => HardwareCatalog.empty().with({ ...base, instanceType: 'ml.x', acceleratorCount: 0.5, onDemandUsdPerHour: -1 })).toThrow(
      "Invalid hardware profile 'ml.x':\n  - platform is 'ec2' but the type name says 'sagemaker' (SageMaker types start with 'ml.')\n" +
        '  - acceleratorCount is 0.5; it must be a whole number\n  - onDemandUsdPerHour is -1; it must be a positive number of USD',
    );
  });
});
