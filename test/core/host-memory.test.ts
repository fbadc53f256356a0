import { hostMemoryNote } from '../../lib/core/service/host-memory';

describe('hostMemoryNote (review R229)', () => {
  test('nothing while the weights fit the memory, a note naming both once they exceed it', () => {
    expect(hostMemoryNote(15, 16, "ml.inf2.xlarge's memory")).toBeUndefined();
    expect(hostMemoryNote(16, 16, 'x')).toBeUndefined();
    expect(hostMemoryNote(15, 12, 'the limit')).toMatch(/^its weights \(15 GiB\) exceed the limit \(12 GiB\)\. The engines' default loaders stream safetensors/);
  });
});
