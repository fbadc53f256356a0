import { type CapacityClass } from '../service/capacity-class';

/**
 * A class's artifact fields that only an artifact gate reads, as the warning lists them, on a serving without one
 * (review R231): the image's signing profile on either platform; on SageMaker also the model data's version id, since
 * SageMaker downloads the key's current object (S3ModelDataSource has no VersionId), where EKS's init container
 * fetches the pinned version itself.
 */
export function ungatedArtifactFields(cls: CapacityClass, platform: 'eks' | 'sagemaker'): string[] {
  return [
    ...(cls.artifact.signingProfileName !== undefined
      ? [`artifact.signingProfileName '${cls.artifact.signingProfileName}' (nothing checks the image's signature)`] : []),
    ...(platform === 'sagemaker' && cls.artifact.modelData?.versionId !== undefined
      ? [`artifact.modelData.versionId '${cls.artifact.modelData.versionId}' (SageMaker downloads the key's current object whatever its version)`] : []),
  ];
}

/** The warning's text for `ungatedArtifactFields`, or undefined when there are none. */
export function ungatedArtifactNote(cls: CapacityClass, platform: 'eks' | 'sagemaker'): string | undefined {
  const unused = ungatedArtifactFields(cls, platform);
  if (unused.length === 0) return undefined;
  return `class '${cls.name}': ${unused.join(' and ')} ${unused.length === 1 ? 'does' : 'do'} nothing without artifactGate; pass an ArtifactTrust as ` +
    "artifactGate to verify the image's signature and the model data's version before the class is deployed, or remove " +
    (unused.length === 1 ? 'it' : 'them');
}
