/**
 * Whether a model server has host memory for its weights. Not a synth error: the engines' default loaders do not hold
 * the whole model in process memory (vLLM reads safetensors through mmap, `safetensors_weights_iterator` in
 * vllm/model_executor/model_loader/weight_utils.py; transformers-neuronx loads safetensors layer by layer and frees
 * each, `load_safetensors` "Lazily load", aws-neuron/transformers-neuronx@v0.13.0 module.py; TGI maps safetensors too,
 * not re-read at v3.3.7), and the page cache of a mapped file is reclaimable. But an eager load does hold it all: a
 * single `pytorch_model.bin` (`load_pytorch_model_bin`, "Eagerly load", same file), an eager safetensors strategy, or a
 * Neuron model compiled at start-up (aws-neuron/nki-samples#87: an 8B model killed on a 32 GB trn1.2xlarge). Review
 * R229 read these; which loader a given artifact takes cannot be known at synth, so a warning.
 */

/** Why `weightsGiB` of model weights may not load within `memoryGiB` (`what` names that memory), or undefined. */
export function hostMemoryNote(weightsGiB: number, memoryGiB: number, what: string): string | undefined {
  if (!(weightsGiB > memoryGiB)) return undefined;
  return `its weights (${weightsGiB} GiB) exceed ${what} (${memoryGiB} GiB). The engines' default loaders stream safetensors ` +
    '(vLLM through mmap, transformers-neuronx layer by layer) and fit; an eager load does not: a single pytorch_model.bin, an eager ' +
    'safetensors load strategy, or a Neuron model compiled at start-up holds the weights in memory and is killed for it. Use a ' +
    'safetensors or precompiled artifact (or a type with more memory) and acknowledge this warning';
}
