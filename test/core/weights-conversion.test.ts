import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { conversionMemory, readOnlyWeightsNote } from '../../lib/core/service/weights-conversion';

describe('readOnlyWeightsNote (TGI converts .bin/.pt beside the weights: text-generation-inference@v3.3.7 cli.py:309-312)', () => {
  test('TGI: says what it writes where, what fails and how to avoid it', () => {
    expect(readOnlyWeightsNote('tgi', '/opt/ml/model, which SageMaker mounts read-only', 'the endpoint fails')).toBe(
      'TGI loads safetensors only: at start it converts .bin or .pt weights into .safetensors files it writes beside them, and no ' +
      'setting moves that write. Its weights are in /opt/ml/model, which SageMaker mounts read-only: without .safetensors files there ' +
      'the write fails ("Read-only file system") and the server exits before it answers a health check, so the endpoint fails. Ship the ' +
      'weights as safetensors (convert .bin or .pt beforehand, e.g. `text-generation-server download-weights <directory>` on a writable ' +
      'copy) and acknowledge this warning');
  });

  test('nothing for an engine whose conversion was not read (vLLM loads .bin itself; DJL, Triton, custom: their loader decides)', () => {
    for (const engine of ['vllm', 'djl-lmi', 'triton', 'custom', 'unknown']) {
      expect(readOnlyWeightsNote(engine, '/d', 'x')).toBeUndefined();
      expect(conversionMemory(engine)).toBeUndefined();
    }
  });

  test('the memory the conversion holds is the host-memory warning\'s (one module states the conversion)', () => {
    expect(conversionMemory('tgi')).toBe('it first converts .bin or .pt weights to safetensors, reading each file whole and then its copy (about twice the largest file)');
    const hostMemory = readFileSync(join(__dirname, '..', '..', 'lib', 'core', 'service', 'host-memory.ts'), 'utf8');
    expect(hostMemory).not.toContain('cli.py');
    expect(hostMemory).toContain('weights-conversion.ts');
  });

  test('cites where TGI writes, that nothing moves it, how it fails, and the SageMaker DLC, at pinned refs', () => {
    const source = readFileSync(join(__dirname, '..', '..', 'lib', 'core', 'service', 'weights-conversion.ts'), 'utf8').replace(/\n \* ?/g, ' ');
    for (const citation of [
      'huggingface/text-generation-inference@v3.3.7',
      'launcher/src/main.rs:1446-1454, called unconditionally at 2232-2241',
      'cli.py:139',
      'cli.py:309-312,335; utils/convert.py:85-87',
      'utils/hub.py:137-145, 161-170',
      'main.rs:1547-1567',
      'huggingface/text-generation-inference#756',
      'awslabs/llm-hosting-container@421a60a huggingface/pytorch/tgi/docker/3.3.6/Dockerfile:2,30-33',
    ]) expect({ citation, cited: source.includes(citation) }).toEqual({ citation, cited: true });
  });
});
