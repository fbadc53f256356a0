import { isUnresolved } from '../validation/tokens';

/** One S3 object. */
export interface S3ObjectReference {
  readonly bucket: string;
  readonly key: string;
}

/** An S3 URI of model data: one object, or a prefix (`prefix`: the key ends with `/`, which only SageMaker reads). */
export interface S3UriReference extends S3ObjectReference {
  readonly prefix: boolean;
}

/**
 * The bucket and key of `s3://<bucket>/<key>`, or undefined. The one reading of a model-data URI: EKS (the init
 * container and its pod identity), SageMaker (its execution role) and the artifact record all call it, so a bucket given
 * as a CDK token (`s3://${bucket.bucketName}/model.tar`, resolved by CloudFormation) reads the same everywhere. A literal
 * bucket must be an S3 bucket name; a bucket part holding a token is taken as given, since a string token's encoding
 * `${Token[<key>]}` never contains `/` (its key is of [a-zA-Z0-9:._-]: aws-cdk-lib@2.269.0 core/lib/private/encoding.ts
 * VALID_KEY_CHARS), so the first `/` after the bucket still ends it. A key may hold a token; whether it is a prefix
 * is read from its literal end.
 */
export function parseS3Uri(uri: string): S3UriReference | undefined {
  const location = parseS3Location(uri);
  return location && location.key !== '' ? location : undefined;
}

/**
 * `s3://<bucket>`, `s3://<bucket>/` or `s3://<bucket>/<key or prefix>`, read as `parseS3Uri` reads its bucket; the key is
 * '' for the bucket itself (a place model data is published under, `ArtifactTrust.modelDataLocations`).
 */
export function parseS3Location(uri: string): S3UriReference | undefined {
  const m = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(uri);
  if (!m) return undefined;
  const [, bucket, key = ''] = m;
  if (!isUnresolved(bucket) && !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) return undefined;
  return { bucket, key, prefix: key === '' || key.endsWith('/') };
}

/** Parses `s3://bucket/key` of a single object (`parseS3Uri`); undefined for a prefix (`.../`) or anything else. */
export function parseS3Object(uri: string): S3ObjectReference | undefined {
  const location = parseS3Uri(uri);
  return location && !location.prefix ? { bucket: location.bucket, key: location.key } : undefined;
}
