import { type CapacityClass, type CapacityClassSpec } from '../core/service/capacity-class';
import { defineCapacityClasses } from '../core/service/checks';
import { type ServiceContract } from '../core/service/contract';
import { LLAMA_3_8B_BF16 } from '../core/service/footprints';
import { type CapacityPlan, planCapacity } from '../core/service/sizing';
import { type ClassRuntimeBehavior } from './classes';
import { AZURE_CONVERSATION_OUTPUT, AZURE_CONVERSATION_PROMPT, tokenTableMean } from './workload';

/**
 * The services the built-in scenarios run: declared with the library's own capacity classes and planned with its
 * own `planCapacity`, exactly as a user would declare them for the constructs.
 */
export interface ServiceDefinition {
  readonly contract: ServiceContract;
  readonly classes: readonly CapacityClass[];
  readonly plan: CapacityPlan;
  readonly behavior: Readonly<Record<string, ClassRuntimeBehavior>>;
  /** Cost of a prompt token relative to an output token in the simulator's service-time model. */
  readonly prefillWeight: number;
}

/**
 * The specs as a user who measured each class's replica-ready time on a deployment declares them
 * (`envelope.replicaReadyTimeP95Seconds`): the slowest start of the class's run-time behavior, which its p95 does not
 * exceed. The Reconciler's provisioning grace follows it, in the simulator as deployed.
 */
function withMeasuredReadyTime(specs: readonly CapacityClassSpec[], behavior: Readonly<Record<string, ClassRuntimeBehavior>>): CapacityClassSpec[] {
  return specs.map((s) => {
    const p = behavior[s.name].provisioningSeconds;
    return { ...s, envelope: { ...s.envelope, replicaReadyTimeP95Seconds: typeof p === 'number' ? p : p[1] } };
  });
}

const digest = (seed: string) => seed.repeat(64).slice(0, 64);
const image = (repo: string, seed: string) => `123456789012.dkr.ecr.us-east-1.amazonaws.com/${repo}@sha256:${digest(seed)}`;


/** Llama-3-8B chat on L40S (preferred), Inferentia2 and A10G: the LLM scenarios' service. */
export function llamaChatSpecs(): CapacityClassSpec[] {
  const envelope = (tokensPerSecondPerReplica: number, safeConcurrency: number, ttftP95Ms: number, itlP95Ms: number) => ({
    tokensPerSecondPerReplica, safeConcurrency, ttftP95Ms, itlP95Ms, measuredOn: '2026-10-01', workload: 'azure-llm-conversation-2023 token tables',
  });
  return [
    {
      name: 'l40s',
      instanceType: 'g6e.xlarge',
      artifact: { image: image('vllm', 'a'), modelData: { uri: 's3://models/llama3-8b/bf16.tar', sha256: digest('a'), versionId: 'v1' } },
      footprint: LLAMA_3_8B_BF16,
      runtime: { engine: 'vllm', engineVersion: '0.29.0', maxConcurrentSequences: 16, maxQueueDelayMs: 2000 },
      envelope: envelope(1200, 16, 900, 35),
      maxReplicas: 12,
    },
    {
      name: 'inf2',
      instanceType: 'inf2.xlarge',
      artifact: { image: image('neuron', 'c'), modelData: { uri: 's3://models/llama3-8b/neuron-tp2.tar', sha256: digest('c') } },
      footprint: { ...LLAMA_3_8B_BF16, workspaceGiB: 3, tensorParallelDegree: 2, acceleratorTarget: 'neuron' },
      // The runtime contract binds Neuron classes through DJL LMI (lib/core/runtime/engines.ts); 0.30.0 as in
      // examples/sagemaker-llm/stack.ts.
      runtime: { engine: 'djl-lmi', engineVersion: '0.30.0', maxConcurrentSequences: 4, maxQueueDelayMs: 2000 },
      envelope: envelope(300, 4, 1100, 25),
      maxReplicas: 24,
    },
    {
      name: 'a10g',
      instanceType: 'g5.xlarge',
      artifact: { image: image('vllm', 'b'), modelData: { uri: 's3://models/llama3-8b/awq.tar', sha256: digest('b'), versionId: 'v1' } },
      footprint: { ...LLAMA_3_8B_BF16, weightsGiB: 5.7, quantization: 'int4-awq' },
      runtime: { engine: 'vllm', engineVersion: '0.29.0', maxConcurrentSequences: 8, maxQueueDelayMs: 2000 },
      envelope: envelope(400, 8, 1200, 45),
      maxReplicas: 24,
    },
  ];
}

/** Mean request rate of the LLM scenarios: 3.6x the Azure conversation trace's 5.53 req/s. */
export const LLAMA_MEAN_RATE = 20;

export function llamaChatService(): ServiceDefinition {
  const contract: ServiceContract = {
    name: 'llama3-chat',
    slo: { ttftP95Ms: 1500, itlP95Ms: 50, deadlineMs: 30000 },
    requestShape: { meanPromptTokens: tokenTableMean(AZURE_CONVERSATION_PROMPT), meanOutputTokens: tokenTableMean(AZURE_CONVERSATION_OUTPUT) },
    peakRequestsPerSecond: LLAMA_MEAN_RATE * 2,
    headroom: 0.2,
  };
  // Boot 60-90 s + image pull 60-120 s + weights from S3 60-90 s + warm-up 30-60 s; Neuron loads are slower.
  const behavior: Record<string, ClassRuntimeBehavior> = {
    l40s: { provisioningSeconds: [240, 360] },
    inf2: { provisioningSeconds: [300, 480] },
    a10g: { provisioningSeconds: [240, 360] },
  };
  const classes = defineCapacityClasses(withMeasuredReadyTime(llamaChatSpecs(), behavior), { contract, platform: 'ec2' });
  return { contract, classes, plan: planCapacity(contract, classes), behavior, prefillWeight: 0.05 };
}

const SD21 = {
  weightsGiB: 5.2,
  workspaceGiB: 4,
  kvCacheBytesPerToken: 0,
  maxSequenceTokens: 77,
  tensorParallelDegree: 1,
  quantization: 'fp16',
  revision: 'stabilityai/stable-diffusion-2-1@5cae40e',
  acceleratorTarget: 'cuda' as const,
};

/**
 * The reference experiment (Biran & Kissos, arXiv 2503.20074): Stable Diffusion 2.1 on five deployment units, with
 * the measured breaking points (requests per minute at 900 ms) as envelopes and the published hourly prices.
 * One "token" is one image. Ordered by cost per image: inf2, trn1, g5-triton, g6-triton, g5-cuda.
 */
export function sd21Specs(): CapacityClassSpec[] {
  const envelope = (requestsPerMinute: number, safeConcurrency: number) => ({
    tokensPerSecondPerReplica: requestsPerMinute / 60, safeConcurrency, ttftP95Ms: 900, measuredOn: '2025-03-26',
    workload: 'arXiv 2503.20074 breaking point at 900 ms (requests per CloudWatch minute)',
  });
  const runtime = (engine: string) => ({ engine, maxConcurrentSequences: 2, maxQueueDelayMs: 1000 });
  const neuron = { ...SD21, tensorParallelDegree: 2, acceleratorTarget: 'neuron' as const };
  return [
    { name: 'inf2', instanceType: 'inf2.xlarge', artifact: { image: image('sd21-neuron', 'c') }, footprint: neuron, runtime: runtime('neuronx'),
      envelope: envelope(105, 2), maxReplicas: 40, usdPerHour: 0.7582 },
    { name: 'trn1', instanceType: 'trn1.2xlarge', artifact: { image: image('sd21-neuron', 'd') }, footprint: neuron, runtime: runtime('neuronx'),
      envelope: envelope(130, 2), maxReplicas: 40, usdPerHour: 1.3438 },
    { name: 'a10g-triton', instanceType: 'g5.xlarge', artifact: { image: image('sd21-triton', 'e') }, footprint: SD21, runtime: runtime('triton'),
      envelope: envelope(90, 2), maxReplicas: 40, usdPerHour: 1.006 },
    { name: 'l4-triton', instanceType: 'g6.xlarge', artifact: { image: image('sd21-triton', 'f') }, footprint: SD21, runtime: runtime('triton'),
      envelope: envelope(61, 1), maxReplicas: 40, usdPerHour: 0.8048 },
    { name: 'a10g-cuda', instanceType: 'g5.xlarge', artifact: { image: image('sd21-cuda', '1') }, footprint: SD21, runtime: runtime('pytorch-cuda'),
      envelope: envelope(60, 1), maxReplicas: 40, usdPerHour: 1.006 },
  ];
}

/** Peak request rate of P1's cosine load, images per second. */
export const SD21_PEAK_RATE = 16;

export function sd21Service(): ServiceDefinition {
  const contract: ServiceContract = {
    name: 'sd21',
    slo: { ttftP95Ms: 1000, deadlineMs: 2500 },
    requestShape: { meanPromptTokens: 0, meanOutputTokens: 1 },
    peakRequestsPerSecond: SD21_PEAK_RATE,
    headroom: 0.2,
  };
  const gpu = { provisioningSeconds: [180, 300] as const };
  const behavior: Record<string, ClassRuntimeBehavior> = {
    'inf2': { provisioningSeconds: [240, 420] },
    'trn1': { provisioningSeconds: [240, 420] },
    'a10g-triton': gpu,
    'l4-triton': gpu,
    'a10g-cuda': gpu,
  };
  const classes = defineCapacityClasses(withMeasuredReadyTime(sd21Specs(), behavior), { contract, platform: 'ec2' });
  return { contract, classes, plan: planCapacity(contract, classes), behavior, prefillWeight: 0 };
}
