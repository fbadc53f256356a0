import { type ModelDataLanding, modelDataLandingProblem, modelDataShape } from '../../lib/core/service/model-archive';

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
    expect(modelDataLandingProblem('s3://b/x.Tar.Gz', landing)).toBeUndefined();
    expect(modelDataLandingProblem('s3://b/x.bin', landing)).toBeUndefined();
    expect(modelDataLandingProblem('s3://b/x.TAR', landing)).toBe(
      "'s3://b/x.TAR' is an uncompressed tar archive, which P would not unpack (it unpacks .tar.gz; anything else it places as the one file /m/x.TAR), " +
        'so the engine would find no model and nothing starts; allowed (suffixes in any case): a .tar.gz or one file',
    );
    expect(modelDataLandingProblem('s3://b/x.7Z', landing)).toContain("'s3://b/x.7Z' is an archive or compressed file (.7z), which P would not unpack");
  });
});
