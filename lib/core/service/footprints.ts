import { type ModelFootprint } from './capacity-class';

/**
 * Meta-Llama-3-8B-Instruct in bf16 on CUDA, one GPU: the footprint the examples, the simulator's LLM service and the
 * tests share. Variants (AWQ, Neuron TP 2) spread it and change what differs.
 */
export const LLAMA_3_8B_BF16: ModelFootprint = {
  weightsGiB: 15,
  workspaceGiB: 2,
  kvCacheBytesPerToken: 131072, // 2 x 32 layers x 8 KV heads x 128 dims x 2 bytes
  maxSequenceTokens: 8192,
  tensorParallelDegree: 1,
  quantization: 'bf16',
  revision: 'meta-llama/Meta-Llama-3-8B-Instruct@5f0b02c',
  acceleratorTarget: 'cuda',
};
