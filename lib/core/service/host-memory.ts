import { type EngineName } from '../runtime/engines';
import { conversionMemory } from './weights-conversion';

/**
 * Whether a model server has host memory for its weights. Not a synth error: the engines' default loaders do not hold
 * the whole model in process memory, and the page cache of a mapped file is reclaimable. Read by reviews R229 and R235:
 * - vLLM's default load format maps safetensors lazily, and "eager" reads whole files into memory
 *   (vllm-project/vllm@030eb66 vllm/config/load.py, on main: the repository is over the fetch limit, so unconfirmed at
 *   the pinned 0.29.0);
 * - transformers-neuronx loads safetensors layer by layer and frees each (`load_safetensors`, "Lazily load",
 *   aws-neuron/transformers-neuronx@v0.13.0 module.py:199-220), and DJL LMI 0.29.0 routes a safetensors or precompiled
 *   model through it (djl-serving@v0.29.0 neuron_utils/model_loader.py:258-264, 319-345); later LMI NeuronX images
 *   (NxDI) load the whole state dict at once (neuronx-distributed-inference modules/checkpoint.py `load_state_dict`);
 * - TGI opens every safetensors shard with `safe_open` (huggingface/text-generation-inference@v3.3.7
 *   server/text_generation_server/utils/weights.py:7,152,170-172), which "Opens a safetensors lazily and returns tensors
 *   as asked" from a memory map (huggingface/safetensors@000a16f4 bindings/python/src/lib.rs). A model with only .bin or
 *   .pt weights is converted first, which holds about twice the largest file (weights-conversion.ts, with its sources);
 * - Triton's backends and custom images: not read; their own loader decides.
 * An eager load holds the weights and more: a single `pytorch_model.bin` ("Eagerly load", transformers-neuronx
 * module.py), an eager load format, or a Neuron model compiled at start-up (aws-neuron/nki-samples#87: an 8B model
 * killed on a 32 GB trn1.2xlarge). Which loader an artifact takes is not known at synth: a warning.
 */

/** What streams the weights by default for each engine, as the warning says it; undefined where nothing was read. */
const STREAMING_LOADER: Partial<Record<EngineName, string>> = {
  'vllm': 'vLLM maps safetensors (its default load format)',
  'tgi': 'TGI maps safetensors',
  'djl-lmi': 'DJL LMI streams safetensors or precompiled Neuron artifacts through transformers-neuronx (0.29.0; NxDI-based images load the whole checkpoint)',
};

/**
 * Why `weightsGiB` of model weights may not load in `memoryGiB` (`what` says whose: "of <type>'s memory"), or undefined when they fit
 * with room: an eager load needs the weights and the server's own memory besides.
 */
export function hostMemoryNote(engine: string, weightsGiB: number, memoryGiB: number, what: string): string | undefined {
  if (!(weightsGiB > memoryGiB)) return undefined;
  const loader = STREAMING_LOADER[engine as EngineName];
  const conversion = conversionMemory(engine);
  return `its weights (${weightsGiB} GiB) exceed the ${memoryGiB} GiB ${what}. ` +
    (loader ? `${loader}, which fits; ` : `What ${engine === 'custom' ? 'the image' : `${engine}'s backend`} loads with is not known to the library; `) +
    (conversion ? `${conversion}; ` : '') +
    'an eager load (a single pytorch_model.bin, an eager load format, a Neuron model compiled at start-up) needs more than the ' +
    'weights and is killed. Use a safetensors or precompiled artifact (or a type with more memory) and acknowledge this warning';
}
