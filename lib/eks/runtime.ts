/**
 * The EKS side of the runtime contract: a class's server arguments and environment (from lib/core's bindRuntime),
 * the init container that fetches its model data, and the checks that only a pod needs.
 */
import { bindRuntime, type RuntimeBinding } from '../core/runtime/binding';
import { type CapacityClass } from '../core/service/capacity-class';
import { type ClassProblem } from '../core/service/checks';
import { type ServiceContract } from '../core/service/contract';
import { modelDataArchiveNote, modelDataLandingProblem } from '../core/service/model-archive';
import { parseS3Object, parseS3Uri } from '../core/trust/s3-uri';
import { DIGEST_PINNED_FORM, isDigestPinnedImage } from '../core/trust/image-reference';
import { isUnresolved } from '../core/validation/tokens';
import { EKS_MODEL_DATA_LANDING, MODEL_DATA_DIR, MODEL_VOLUME_PATH, type ModelFetch, SERVER_UID, unpackOf } from './manifests/workload';

/**
 * Where the server writes its caches: the pod's model volume (an emptyDir sized for the weights and the engine's
 * caches), because the root filesystem is read-only and uid 1000 has no home.
 */
export const ENGINE_CACHE_DIR = `${MODEL_VOLUME_PATH}/cache`;

/** The class's model server in a pod listening on `port`; model data (if any) is where the init container leaves it. */
export function eksRuntime(cls: CapacityClass, contract: ServiceContract, port: number): RuntimeBinding {
  // The Deployment runs the server as SERVER_UID (manifests/workload.ts): the binding names that uid's account.
  return bindRuntime(cls, contract, { platform: 'eks', port, modelDataPath: MODEL_DATA_DIR, cacheDir: ENGINE_CACHE_DIR, runAsUser: SERVER_UID });
}

/**
 * What a pod needs to fetch a class's model data: one object (one digest pins one object, not a prefix) and an image
 * that can fetch it. A pinned version is not required here: the digest pins the content either way, and ArtifactTrust
 * (requireModelVersion) is where a deployment insists on versions.
 */
export function modelDataProblems(cls: CapacityClass, fetcherImage: string | undefined): ClassProblem[] {
  const data = cls.artifact.modelData;
  if (!data) return [];
  const problems: ClassProblem[] = [];
  const add = (field: string, message: string) => problems.push({ className: cls.name, field, message });
  if (fetcherImage === undefined) {
    add(
      'artifact.modelData',
      'is set but the service has no modelDataFetcherImage; on EKS an init container fetches and verifies the model data, ' +
        'so give an image with sh, the AWS CLI v2 (2.15.0 or later: EKS Pod Identity), sha256sum and tar by digest (e.g. public.ecr.aws/aws-cli/aws-cli@sha256:<digest>)',
    );
  }
  // Read with the one parser whether or not the URI holds a token: a URI the init container cannot be built from is
  // refused here, never left without one (the pod would start its server on an empty model directory).
  const location = parseS3Uri(data.uri);
  if (!location) {
    add('artifact.modelData.uri', isUnresolved(data.uri)
      ? `'${data.uri}' holds a CDK token but is not s3://<bucket>/<key> around it; on EKS the init container needs the bucket and key apart, ` +
        'so allowed: s3://<bucket>/<key> where the bucket may be a token (e.g. s3://${bucket.bucketName}/model.tar)'
      : `'${data.uri}' is not an s3://<bucket>/<key> URI`);
  } else if (location.prefix) {
    add('artifact.modelData.uri', `'${data.uri}' is a prefix; on EKS the model data must be one object (a .tar, .tar.gz or single file) so that its SHA-256 pins all of it`);
  } else if (isUnresolved(location.key)) {
    add('artifact.modelData.uri', `'${data.uri}' has a CDK token in its key; on EKS the init container unpacks the object by its key's suffix ` +
      '(.tar, .tar.gz or .tgz in any case, else one file), chosen at synth, and the key must be one object, not a prefix; ' +
      'allowed: a literal key (only the bucket may be a token, e.g. s3://${bucket.bucketName}/model.tar)');
  } else {
    const landing = modelDataLandingProblem(data.uri, EKS_MODEL_DATA_LANDING, cls.runtime.engine);
    if (landing !== undefined) add('artifact.modelData.uri', landing);
  }
  return problems;
}

/** A custom image's model data that the init container places as one archive file, for the image to unpack: a synth warning. */
export function modelDataNote(cls: CapacityClass): string | undefined {
  const uri = cls.artifact.modelData?.uri;
  const note = uri === undefined ? undefined : modelDataArchiveNote(uri, EKS_MODEL_DATA_LANDING, cls.runtime.engine);
  return note === undefined ? undefined : `Class '${cls.name}': ${note}`;
}

/** Problems of the fetcher image itself (once per service). */
export function fetcherImageProblems(image: string | undefined): ClassProblem[] {
  // A reference holding a token is pinned only when it still ends in a literal digest (isDigestPinnedImage).
  if (image === undefined || isDigestPinnedImage(image)) return [];
  return [{ field: 'modelDataFetcherImage', message: `'${image}' is not pinned by digest; allowed: ${DIGEST_PINNED_FORM} (tags are mutable)` }];
}

/** The init container's inputs for a checked class, or undefined when the weights are in the image. */
export function modelFetchOf(cls: CapacityClass, image: string | undefined): ModelFetch | undefined {
  const data = cls.artifact.modelData;
  // Undefined only for what modelDataProblems refuses (no fetcher image, not one object, a key with a token). A token
  // bucket reaches the init container's env as is: KubernetesManifest renders its manifest with `stack.toJsonString`
  // (aws-cdk-lib@2.269.0 aws-eks-v2/lib/k8s-manifest.ts, "enables embedding CDK tokens"), so CloudFormation resolves it.
  const location = data ? parseS3Object(data.uri) : undefined;
  if (!data || !location || isUnresolved(location.key) || !image) return undefined;
  return { image, bucket: location.bucket, key: location.key, versionId: data.versionId, sha256: data.sha256, unpack: unpackOf(location.key) };
}
