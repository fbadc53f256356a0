import { hostMemoryNote } from '../../lib/core/service/host-memory';

describe('hostMemoryNote (reviews R229, R235)', () => {
  test('nothing while the weights fit the memory, a note naming both once they exceed it', () => {
    expect(hostMemoryNote('vllm', 15, 16, "ml.inf2.xlarge's memory")).toBeUndefined();
    expect(hostMemoryNote('vllm', 16, 16, 'x')).toBeUndefined();
    expect(hostMemoryNote('vllm', 15, 10, 'the limit')).toMatch(/^its weights \(15 GiB\) exceed the 10 GiB the limit\. vLLM maps safetensors \(its default load format\), which fits; an eager load/);
  });

  test('TGI: maps safetensors, but converts .bin or .pt weights first, reading them whole (text-generation-inference@v3.3.7)', () => {
    expect(hostMemoryNote('tgi', 15, 10, 'x')).toBe('its weights (15 GiB) exceed the 10 GiB x. TGI maps safetensors, which fits; it first converts ' +
      '.bin or .pt weights to safetensors, reading each file whole and then its copy (about twice the largest file); an eager load (a single ' +
      'pytorch_model.bin, an eager load format, a Neuron model compiled at start-up) needs more than the weights and is killed. Use a ' +
      'safetensors or precompiled artifact (or a type with more memory) and acknowledge this warning');
    expect(hostMemoryNote('vllm', 15, 10, 'x')).not.toContain('converts');
  });

  test('an engine whose loader was not read is said to be unknown, not streaming', () => {
    expect(hostMemoryNote('triton', 15, 10, 'x')).toContain("What triton's backend loads with is not known to the library; an eager load");
    expect(hostMemoryNote('custom', 15, 10, 'x')).toContain('What the image loads with is not known to the library');
  });
});
