import { type ModelDataLanding, modelDataArchiveNote, modelDataLandingProblem, modelDataShape } from '../../lib/core/service/model-archive';
import { ENGINES } from '../../lib/core/runtime/engines';

describe('the one reading of a model-data URI (review R251)', () => {
  test('reads the suffix of the last part of the key in any case', () => {
    const shapes = Object.fromEntries([
      's3://b/m/', 's3://b/m.tar', 's3://b/m.TAR', 's3://b/m.tar.gz', 's3://b/m.TAR.GZ', 's3://b/m.Tar.Gz', 's3://b/m.tgz', 's3://b/m.Tgz',
      's3://b/m.safetensors', 's3://b/m.gguf', 's3://b/m.zip', 's3://b/m.ZIP', 's3://b/m.tar.xz', 's3://b/m.tar.bz2', 's3://b/m.safetensors.gz',
      's3://b/tar.gz/model.bin', 's3://b/m.targz',
    ].map((uri) => [uri, modelDataShape(uri)]));
    expect(shapes).toEqual({
      's3://b/m/': 'prefix',
      's3://b/m.tar': 'tar', 's3://b/m.TAR': 'tar',
      's3://b/m.tar.gz': 'tar.gz', 's3://b/m.TAR.GZ': 'tar.gz', 's3://b/m.Tar.Gz': 'tar.gz', 's3://b/m.tgz': 'tar.gz', 's3://b/m.Tgz': 'tar.gz',
      's3://b/m.safetensors': 'file', 's3://b/m.gguf': 'file',
      's3://b/m.zip': 'other-archive', 's3://b/m.ZIP': 'other-archive', 's3://b/m.tar.xz': 'other-archive', 's3://b/m.tar.bz2': 'other-archive',
      's3://b/m.safetensors.gz': 'other-archive',
      // Only the last part of the key counts, and only a whole suffix.
      's3://b/tar.gz/model.bin': 'file', 's3://b/m.targz': 'file',
    });
  });

  test('a platform refuses what it does not serve, naming the shape, where it would land and what is allowed', () => {
    const landing: ModelDataLanding = {
      platform: 'P', serves: ['tar.gz', 'file'], unpacks: 'it unpacks .tar.gz', modelDirectory: '/m', consequence: 'nothing starts', allowed: 'a .tar.gz or one file',
    };
    expect(modelDataLandingProblem('s3://b/x.Tar.Gz', landing, 'vllm')).toBeUndefined();
    expect(modelDataLandingProblem('s3://b/x.bin', landing, 'vllm')).toBeUndefined();
    expect(modelDataLandingProblem('s3://b/x.TAR', landing, 'vllm')).toBe(
      "'s3://b/x.TAR' is an uncompressed tar archive, which P would not unpack (it unpacks .tar.gz; anything else it places as the one file /m/x.TAR), " +
        'so the engine would find no model and nothing starts; allowed (suffixes in any case): a .tar.gz or one file',
    );
    expect(modelDataLandingProblem('s3://b/x.7Z', landing, 'vllm')).toBe(
      "'s3://b/x.7Z' is an archive or compressed file (.7z), which P would not unpack (it unpacks .tar.gz; anything else it places as the one file " +
        "/m/x.7Z), so the engine would find no model and nothing starts; allowed (suffixes in any case): a .tar.gz or one file; or engine 'custom', " +
        'whose image may unpack it itself',
    );
  });

  test('an archive no platform unpacks is refused for every engine the library binds, and a warning for a custom image (review R252)', () => {
    const landing: ModelDataLanding = {
      platform: 'P', serves: ['tar.gz', 'file'], unpacks: 'it unpacks .tar.gz', modelDirectory: '/m', consequence: 'nothing starts', allowed: 'a .tar.gz or one file',
    };
    for (const engine of ENGINES.filter((e) => e !== 'custom')) {
      expect({ engine, problem: modelDataLandingProblem('s3://b/model.zip', landing, engine) !== undefined }).toEqual({ engine, problem: true });
      expect({ engine, note: modelDataArchiveNote('s3://b/model.zip', landing, engine) }).toEqual({ engine, note: undefined });
    }
    expect(modelDataLandingProblem('s3://b/model.zip', landing, 'custom')).toBeUndefined();
    expect(modelDataArchiveNote('s3://b/model.zip', landing, 'custom')).toBe(
      "'s3://b/model.zip' is an archive or compressed file (.zip), which P does not unpack (it unpacks .tar.gz): it lands as-is, as the one file " +
        '/m/model.zip, and the custom image must unpack it itself (into a writable directory such as CAI_CACHE_DIR) before it serves, or nothing starts. ' +
        'Acknowledge this warning once the image does, or use an archive P unpacks: a .tar.gz or one file',
    );
    // Any other shape the platform does not serve is refused for a custom image too, and is no archive to warn of.
    expect(modelDataLandingProblem('s3://b/model.tar', landing, 'custom')).toContain('is an uncompressed tar archive, which P would not unpack');
    expect(modelDataArchiveNote('s3://b/model.tar', landing, 'custom')).toBeUndefined();
    expect(modelDataArchiveNote('s3://b/model.tar.gz', landing, 'custom')).toBeUndefined();
    // An engine the library does not know is refused elsewhere (bindRuntime); here it is not taken for a custom image.
    expect(modelDataLandingProblem('s3://b/model.zip', landing, 'onnx')).toBeDefined();
  });
});
