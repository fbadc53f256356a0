/**
 * What the model-data init container needs beyond a digest-pinned image: the tools its script runs and room in the
 * model volume for what coexists during the fetch. Pure (the construct turns the problems into its synth error).
 */
import { type CapacityClass } from '../core/service/capacity-class';
import { type ClassProblem } from '../core/service/checks';
import { modelDataShape } from '../core/service/model-archive';
import { unpackNeedGiB } from '../core/service/model-disk';
import { factNumber } from '../core/runtime/facts';
import { parseS3Object } from '../core/trust/artifact-verification';
import { imageRepository } from '../core/trust/image-reference';
import { isUnresolved } from '../core/validation/tokens';
import { type ModelFetch, unpackOf } from './manifests/workload';

/**
 * Repositories of the AWS CLI v2 image. Its Dockerfile installs only `less groff findutils jq` on Amazon Linux 2023
 * (aws/aws-cli 2.36.7 docker/Dockerfile; before 2025-07-15, `less groff` on Amazon Linux 2), and the Amazon Linux
 * container images are minimal (no tar: amazonlinux/container-images#29); a request to add tar is open
 * (aws/aws-cli#5106). It can fetch single-file model data, not unpack an archive: the init container would fail closed
 * on every start. A derived image (`FROM` the CLI image, `RUN dnf install -y tar gzip`) has everything.
 */
export const AWS_CLI_IMAGE_REPOSITORIES: readonly string[] = [
  'public.ecr.aws/aws-cli/aws-cli',
  'amazon/aws-cli',
  'docker.io/amazon/aws-cli',
  'index.docker.io/amazon/aws-cli',
];

/** A class whose model data is an archive needs `tar` (and `gzip` for .tar.gz) in the fetcher image. */
export function fetcherToolProblems(classes: readonly CapacityClass[], image: string | undefined): ClassProblem[] {
  if (image === undefined || !AWS_CLI_IMAGE_REPOSITORIES.includes(imageRepository(image))) return [];
  return classes.flatMap((cls) => {
    const location = cls.artifact.modelData ? parseS3Object(cls.artifact.modelData.uri) : undefined;
    if (!location || unpackOf(location.key) === 'none') return [];
    return [{
      className: cls.name,
      field: 'modelDataFetcherImage',
      message: `'${image}' is the AWS CLI image, which has no tar (aws/aws-cli docker/Dockerfile installs less, groff, findutils and jq only), ` +
        `but the model data '${cls.artifact.modelData!.uri}' is an archive: use an image built FROM it with 'dnf install -y tar gzip' (see docs/eks-inference-service.md)`,
    }];
  });
}

/**
 * The model volume a class needs, GiB: the larger of what coexists there during the fetch (an archive and the tree
 * unpacked from it until the script removes the archive, twice the weights; a single file once; each + 10 %) and what
 * the running server keeps there (the weights and the engine's caches: HOME, XDG_CACHE_HOME and the engine's cache
 * variables point into the volume, lib/eks/runtime.ts; fact any.behaviour.cache-size).
 */
export function modelVolumeNeedGiB(cls: CapacityClass, fetch: ModelFetch | undefined): number {
  const serving = cls.footprint.weightsGiB + factNumber('any.behaviour.cache-size');
  return Math.ceil(Math.max(serving, fetchNeedGiB(cls, fetch)));
}

function fetchNeedGiB(cls: CapacityClass, fetch: ModelFetch | undefined): number {
  return fetch ? unpackNeedGiB(cls.footprint.weightsGiB, holdsTwoCopies(fetch)) : 0;
}

/**
 * Whether the archive and the tree unpacked from it share the volume: a tar the script extracts, or an archive of another
 * kind that a `custom` image unpacks itself beside it (CAI_CACHE_DIR is on the same volume; `modelDataArchiveNote`).
 */
function holdsTwoCopies(fetch: ModelFetch): boolean {
  return fetch.unpack !== 'none' || modelDataShape(fetch.key) === 'other-archive';
}

/** The model volume of a class, GiB: the option, else what it needs (at least 20, and 2 x weights for a server that downloads them). */
export function modelCacheGiB(cls: CapacityClass, fetch: ModelFetch | undefined, option: number | undefined): number {
  if (option !== undefined) return option;
  return Math.max(20, modelVolumeNeedGiB(cls, fetch), Math.ceil(2 * cls.footprint.weightsGiB));
}

/** A modelCacheSize too small for the fetch or for the weights and the engine's caches. */
export function modelCacheProblems(cls: CapacityClass, fetch: ModelFetch | undefined, option: number | undefined): ClassProblem[] {
  if (option === undefined || isUnresolved(option) || isUnresolved(cls.footprint.weightsGiB)) return [];
  const need = modelVolumeNeedGiB(cls, fetch);
  if (option >= need) return [];
  const weights = cls.footprint.weightsGiB;
  const during = !fetch ? 'nothing is fetched'
    : !holdsTwoCopies(fetch) ? `the model file needs ${Math.ceil(fetchNeedGiB(cls, fetch))} GiB (${weights} GiB + 10 %)`
      : `the archive and the tree unpacked from it, which coexist, need ${Math.ceil(fetchNeedGiB(cls, fetch))} GiB (2 x ${weights} GiB + 10 %)`;
  return [{
    className: cls.name,
    field: 'classOptions.modelCacheSize',
    message: `is ${option} GiB but the model volume needs ${need} GiB: during the fetch ${during}; while serving it holds the weights ` +
      `(${weights} GiB) and the engine's caches (${factNumber('any.behaviour.cache-size')} GiB); allowed: at least ${need} GiB`,
  }];
}
