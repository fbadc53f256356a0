import { Template } from 'aws-cdk-lib/assertions';
import { type CapacityClassSpec } from '../../lib/core/service/capacity-class';
import { modelVolumeNeedGb, SAGEMAKER_MODEL_VOLUME, variantVolume } from '../../lib/sagemaker/instance-storage';
import { endpointStack, smClasses } from './fixtures';

/** The test classes with the Inferentia2 class's model data as a prefix of uncompressed files (its 15 GiB of weights once: 17 GB). */
function prefixInf2(): CapacityClassSpec[] {
  return smClasses().map((c) => (c.name !== 'inf2' ? c : {
    ...c, artifact: { ...c.artifact, modelData: { ...c.artifact.modelData!, uri: `s3://models-bucket/llama3-8b/neuron-tp2/${c.artifact.modelData!.sha256}/` } },
  }));
}

/** The error that building and synthesizing the stack throws, or '' when it synthesizes. */
function synthError(build: () => Parameters<typeof Template.fromStack>[0]): string {
  try {
    Template.fromStack(build());
    return '';
  } catch (e) {
    return (e as Error).message;
  }
}

const variantsOf = (t: Template) => Object.values(t.findResources('AWS::SageMaker::EndpointConfig'))[0].Properties.ProductionVariants as Array<Record<string, unknown>>;

describe('ML storage volume (VolumeSizeInGB)', () => {
  test('fails when an instance without local storage gets the 30 GB default for model data that unpacks to more', () => {
    // The fixtures' Inferentia2 model data is a .tar.gz archive (its 15 GiB of weights: 36 GB to unpack).
    const { stack } = endpointStack();
    const byName = Object.fromEntries(variantsOf(Template.fromStack(stack)).map((v) => [v.VariantName, v.VolumeSizeInGB]));
    // 2 x 15 GiB (archive and tree) = 32.2 GB, + 10%.
    expect(byName).toEqual({ preferred: undefined, fallback: 36 });
  });

  test('model data within the default sets nothing (no new endpoint configuration for existing endpoints)', () => {
    const { stack } = endpointStack({ classes: prefixInf2() });
    expect(variantsOf(Template.fromStack(stack)).map((v) => v.VolumeSizeInGB)).toEqual([undefined, undefined]);
  });

  test('fails at synth when a pool that needs a volume shares its variant with a pool type that has local storage', () => {
    const error = synthError(() => endpointStack({ variants: [{ name: 'all', classes: ['l40s', 'a10g', 'inf2'] }] }).stack);
    expect(error).toContain("SageMakerCapacityEndpoint 'Test/Llama' is invalid");
    expect(error).toContain("variants[all]: class 'inf2' (ml.inf2.xlarge, no local storage) needs a 36 GB ML storage volume for its model data");
    expect(error).toContain('ml.g6e.xlarge, ml.g5.xlarge (local storage) takes none; allowed: pools of one storage kind per variant');
  });

  test('needs: weights once for a file or prefix, twice for a gzip archive, 10% over, in GB; over 512 GB is refused', () => {
    const cls = (uri: string | undefined, weightsGiB: number) => ({
      name: 'x', instanceType: 'ml.inf2.48xlarge', hardware: {} as never,
      artifact: { image: 'i', ...(uri ? { modelData: { uri, sha256: 'a'.repeat(64) } } : {}) }, footprint: { weightsGiB } as never,
    });
    expect(modelVolumeNeedGb(cls('s3://b/m/', 100))).toBe(119);
    expect(modelVolumeNeedGb(cls('s3://b/m.tar.gz', 100))).toBe(237);
    expect(modelVolumeNeedGb(cls(undefined, 100))).toBe(0);
    expect(variantVolume([cls('s3://b/m/', 100)])).toEqual({ kind: 'size', gb: 119 });
    const over = variantVolume([cls('s3://b/m.tar.gz', 250)]);
    expect(over).toEqual({ kind: 'problem', message: expect.stringContaining(`VolumeSizeInGB allows 1 to ${SAGEMAKER_MODEL_VOLUME.maxGb}`) });
    // Local storage: SageMaker uses the instance store, and takes no VolumeSizeInGB.
    expect(variantVolume([{ ...cls('s3://b/m.tar.gz', 250), instanceType: 'ml.p5.48xlarge' }])).toEqual({ kind: 'default' });
  });
});
