/**
 * Container image references: the one place that says what "pinned by digest" and "an Amazon ECR image" mean. The
 * class checks, the admission policy, the SageMaker models' pull permissions and the artifact verifier all call it.
 * Pure: no AWS SDK and no aws-cdk-lib imports.
 */
import { isUnresolved } from '../validation/tokens';

/**
 * `<registry host>[:port]/<repository path>@sha256:<64 hex>`, as the OCI distribution spec names repositories
 * (lower-case path components separated by `.`, `_`, `-`; https://github.com/opencontainers/distribution-spec/blob/main/spec.md#pulling-manifests).
 */
const DIGEST_REFERENCE = /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::\d+)?(?:\.[a-z0-9-]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)+@sha256:[0-9a-f]{64}$/;

/** A literal digest that ends a reference: where CDK tokens stand for the registry or repository, the digest must still be this. */
const LITERAL_DIGEST_END = /@sha256:[0-9a-f]{64}$/;

/**
 * Whether `image` names a registry, a repository and a sha256 digest (no tag: a tag can move under a running fleet).
 * CDK tokens may stand for the registry and repository (`repository.repositoryUriForDigest('sha256:<64 hex>')`, resolved
 * at deploy time): the reference is pinned when it ends in a literal `@sha256:<64 hex>`, after its last token, and holds
 * no other digest and no literal tag. A reference a token ends (`repository.repositoryUri`, `repositoryUriForTag('latest')`,
 * `${param.valueAsString}:latest`, a token digest) may resolve to a tag, so it is not pinned. A token's encoding
 * (`${Token[...]}`) ends in `}`, so the literal end cannot be a token's.
 */
export function isDigestPinnedImage(image: string): boolean {
  if (!isUnresolved(image)) return DIGEST_REFERENCE.test(image);
  const digest = LITERAL_DIGEST_END.exec(image);
  if (digest === null) return false;
  const head = image.slice(0, digest.index);
  // The literal text after the last token, like a literal reference, names no tag beside the digest (`${param}:v1@sha256:...`).
  const tail = head.slice(head.lastIndexOf('}') + 1);
  return !head.includes('@') && !tail.slice(tail.lastIndexOf('/') + 1).includes(':');
}

/** How to pin an image by digest, as messages say it. */
export const DIGEST_PINNED_FORM = 'a literal <registry>/<repository>@sha256:<64 lower-case hex>, or a reference whose tokens stand for the registry or ' +
  "repository only and that ends in a literal digest (e.g. repository.repositoryUriForDigest('sha256:<64 hex>'), not repositoryUri or repositoryUriForTag)";

/** A private ECR image pinned by digest. */
export interface EcrImageReference {
  /** The registry's account id. */
  readonly registryId: string;
  readonly region: string;
  readonly repositoryName: string;
  /** `sha256:<64 hex>`. */
  readonly digest: string;
}

// Repository names follow ECR's own pattern; the registry host covers the commercial, FIPS and China endpoints
// (https://docs.aws.amazon.com/AmazonECR/latest/userguide/Registries.html).
const ECR_HOST = String.raw`(\d{12})\.dkr\.ecr(?:-fips)?\.([a-z]{2}(?:-[a-z]+)+-\d)\.amazonaws\.com(?:\.cn)?`;
/** ECR's repositoryName pattern (its length, 2 to 256, is checked where a name is given alone: validation/checker.ts). */
export const ECR_REPOSITORY_PATTERN = String.raw`(?:[a-z0-9]+(?:[._-][a-z0-9]+)*\/)*[a-z0-9]+(?:[._-][a-z0-9]+)*`;
const ECR_IMAGE = new RegExp(`^${ECR_HOST}\\/(${ECR_REPOSITORY_PATTERN})@(sha256:[0-9a-f]{64})$`);

/** The form `parseEcrImage` reads, as messages name it. */
export const ECR_IMAGE_FORM = '<account>.dkr.ecr.<region>.amazonaws.com/<repository>@sha256:<64 hex>';

/**
 * The ARN of the repository `image` is in, the resource IAM names ECR pulls by
 * (`arn:${Partition}:ecr:${Region}:${Account}:repository/${RepositoryName}`, Service Authorization Reference, Amazon
 * ECR, resource type `repository`). `partition` may be a token (`Aws.PARTITION`).
 */
export function ecrRepositoryArn(image: EcrImageReference, partition: string): string {
  return `arn:${partition}:ecr:${image.region}:${image.registryId}:repository/${image.repositoryName}`;
}

/**
 * Parses `<account>.dkr.ecr.<region>.amazonaws.com/<repository>@sha256:<64 hex>`; undefined for anything else (tags
 * included, and references holding a CDK token: their callers check `isUnresolved` first, and `isDigestPinnedImage`
 * says whether such a reference is pinned).
 */
export function parseEcrImage(image: string): EcrImageReference | undefined {
  const m = ECR_IMAGE.exec(image);
  if (!m) return undefined;
  return { registryId: m[1], region: m[2], repositoryName: m[3], digest: m[4] };
}

/** The repository part of any image reference: without its tag or digest (`registry/path:tag@sha256:...` -> `registry/path`). */
export function imageRepository(image: string): string {
  const at = image.indexOf('@');
  const name = at >= 0 ? image.slice(0, at) : image;
  const colon = name.lastIndexOf(':');
  return colon > name.lastIndexOf('/') ? name.slice(0, colon) : name;
}
