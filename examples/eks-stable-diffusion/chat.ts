/**
 * The second service on the example's cluster: a chat model (Llama 3 8B Instruct) on two GPU types with two engines,
 * vLLM (bf16 on L40S) and TGI (AWQ int4 on A10G). It shows what a platform team's shared cluster carries: another
 * namespace, NodePools, a rule on the shared ALB's listener and a reconciler, and no second copy of the controllers.
 *
 * The envelopes are placeholders in the shape a load test produces (docs/capacity-classes.md): replace them with your
 * own measurements before trusting the plan.
 */
import { type CapacityClassSpec } from '../../lib/core/service/capacity-class';
import { type ServiceContract } from '../../lib/core/service/contract';
import { LLAMA_3_8B_BF16 } from '../../lib/core/service/footprints';

export const CHAT_CONTRACT: ServiceContract = {
  name: 'chat',
  slo: { ttftP95Ms: 1500, itlP95Ms: 60, deadlineMs: 30_000 },
  requestShape: { meanPromptTokens: 1000, meanOutputTokens: 250 },
  peakRequestsPerSecond: 10,
  headroom: 0.2,
};

/** The ECR repositories of the chat images (created by ArtifactTrust with the others). */
export const CHAT_REPOSITORIES = ['chat/vllm', 'chat/tgi'];

/** Replace with the digests of your own images (these are well-formed placeholders). */
function image(account: string, region: string, server: string, seed: string): string {
  return `${account}.dkr.ecr.${region}.amazonaws.com/chat/${server}@sha256:${seed.repeat(64).slice(0, 64)}`;
}

/** The chat classes in preference order, for an account and region; the weights are in the images (at /opt/model). */
export function chatClasses(account: string, region: string): CapacityClassSpec[] {
  return [
    {
      name: 'l40s-vllm',
      instanceType: 'g6e.xlarge',
      artifact: { image: image(account, region, 'vllm', '1') },
      footprint: LLAMA_3_8B_BF16,
      runtime: { engine: 'vllm', engineVersion: '0.29.0', maxConcurrentSequences: 16, maxQueueDelayMs: 2000, modelPath: '/opt/model' },
      envelope: { tokensPerSecondPerReplica: 1200, safeConcurrency: 16, ttftP95Ms: 900, itlP95Ms: 35, measuredOn: '2026-10-01', workload: 'placeholder: replace with your load test' },
      maxReplicas: 6,
    },
    {
      name: 'a10g-tgi',
      instanceType: 'g5.xlarge',
      artifact: { image: image(account, region, 'tgi', '2') },
      footprint: { ...LLAMA_3_8B_BF16, weightsGiB: 5.7, quantization: 'int4-awq' },
      runtime: { engine: 'tgi', maxConcurrentSequences: 8, maxQueueDelayMs: 2000, modelPath: '/opt/model' },
      envelope: { tokensPerSecondPerReplica: 400, safeConcurrency: 8, ttftP95Ms: 1200, itlP95Ms: 45, measuredOn: '2026-10-01', workload: 'placeholder: replace with your load test' },
      maxReplicas: 12,
    },
  ];
}
