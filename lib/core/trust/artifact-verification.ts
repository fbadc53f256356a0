/**
 * What counts as a verified class artifact: the rules the deploy-time verifier applies and the class record it checks
 * against (its AWS calls retry with the one policy in lib/core/reconciler/retry.ts). Pure: no AWS SDK and no aws-cdk-lib imports,
 * so the verifier Lambda, the signing CLI and the constructs share one definition of "approved".
 */
import { type Problem } from '../validation/error';
import { type CapacityClassSpec } from '../service/capacity-class';
import { parseEcrImage } from './image-reference';
import { parseS3Object } from './s3-uri';
import { isUnresolved } from '../validation/tokens';

// ---------------------------------------------------------------------------------------------------------------
// References
// ---------------------------------------------------------------------------------------------------------------

// The image reference parser lives in image-reference.ts (one parser for every caller); re-exported for this module's users.
export { type EcrImageReference, parseEcrImage } from './image-reference';

// The S3 URI parser lives in s3-uri.ts (one reader of a model-data URI, small enough for the simulator's checks); re-exported.
export { parseS3Object, parseS3Uri, type S3ObjectReference, type S3UriReference } from './s3-uri';

/** AWS Signer profile names: letters, digits and underscores only (no hyphens), 2..64 characters. */
export const SIGNING_PROFILE_NAME = /^[a-zA-Z0-9_]{2,64}$/;

/** The ARN of a signing profile, as ECR `DescribeImageSigningStatus` reports it (note the `/` before `signing-profiles`). */
export function signingProfileArn(partition: string, region: string, account: string, profileName: string): string {
  return `arn:${partition}:signer:${region}:${account}:/signing-profiles/${profileName}`;
}

/**
 * The region and account of a Signer ARN (a profile's, a profile version's or a job's), or undefined: what the grants
 * and the one-region revocation check read of an ARN, without holding its resource part to a pattern.
 */
export function signerArnPlace(arn: string): { readonly region: string; readonly account: string } | undefined {
  const m = /^arn:[^:]+:signer:([^:]+):(\d{12}):/.exec(arn);
  return m ? { region: m[1], account: m[2] } : undefined;
}

/** The one form of a signing profile ARN that `parseSigningProfileArn` reads, as messages name it. */
export const SIGNING_PROFILE_ARN_FORM = 'arn:<partition>:signer:<region>:<account>:/signing-profiles/<name>';

/**
 * The region, account and name of a signing profile ARN, or undefined. The one reading of a profile ARN: the synth checks
 * of `previousSigningProfileArns` and the verifier (which asks `GetSigningProfile` by name and owner) both call it, and
 * the same ARN is granted to the verifier literally and compared with what ECR reports, so one form serves every use.
 * - ECR reports and takes exactly `^arn:aws(-[a-z]+)*:signer:[a-z0-9-]+:[0-9]{12}:\/signing-profiles\/[a-zA-Z0-9_]{2,}$`:
 *   the `/` after the account, any partition (aws, aws-cn, aws-us-gov, aws-iso...), no version
 *   (https://docs.aws.amazon.com/AmazonECR/latest/APIReference/API_ImageSigningStatus.html,
 *   https://docs.aws.amazon.com/AmazonECR/latest/APIReference/API_SigningRule.html,
 *   https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-properties-ecr-signingconfiguration-rule.html).
 * - Signer gives a profile's `arn` no pattern ("Type: String": https://docs.aws.amazon.com/signer/latest/api/API_GetSigningProfile.html,
 *   https://docs.aws.amazon.com/signer/latest/api/API_SigningProfile.html), nor does CloudFormation to
 *   AWS::Signer::SigningProfile's `Arn`, the construct's own profile (aws-cdk-lib: signingProfileArn = attrArn), beyond a
 *   generic `^arn:aws(-(cn|gov))?:[a-z-]+:(([a-z]+-)+[0-9])?:([0-9]{12})?:[^.]+$`
 *   (https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-signer-signingprofile.html#aws-resource-signer-signingprofile-return-values).
 *   The form without the `/` (which the verifier's own regex used to take) is refused: IAM names a profile
 *   `arn:${Partition}:signer:${Region}:${Account}:/signing-profiles/${ProfileName}`
 *   (https://docs.aws.amazon.com/service-authorization/latest/reference/list_awssigner.html), so a grant of the ARN without it
 *   matches no profile and the verifier could not read it; and the construct's ECR signing rule, which requires the `/`,
 *   takes that same `Arn` attribute.
 * - A profile version ARN (`.../signing-profiles/<name>/<version>`, the separate `ProfileVersionArn` attribute) is refused:
 *   no record holds one, and GetSigningProfile takes no version.
 * - GetSigningProfile's `profileName` is `^[a-zA-Z0-9_]{2,}` of 2 to 64 characters, its `profileOwner` 12 digits.
 */
export function parseSigningProfileArn(arn: string): { readonly region: string; readonly account: string; readonly name: string } | undefined {
  const m = /^arn:aws(?:-[a-z]+)*:signer:([a-z0-9-]+):(\d{12}):\/signing-profiles\/([a-zA-Z0-9_]{2,64})$/.exec(arn);
  return m ? { region: m[1], account: m[2], name: m[3] } : undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// The class record
// ---------------------------------------------------------------------------------------------------------------

/** Model data approved for a class: the exact object version and its content digest. */
export interface ApprovedModelData {
  readonly bucket: string;
  readonly key: string;
  /** S3 object version. */
  readonly versionId: string;
  /** SHA-256 of the whole object, 64 lower-case hex characters. */
  readonly sha256: string;
}

/**
 * What one class may run, bound together: the image digest, the signer that must have signed it, and the model
 * data's digest and object version. No mutable tag appears anywhere in it.
 */
export interface ApprovedArtifacts {
  readonly className: string;
  /** The image reference exactly as the class deploys it (`...@sha256:...`). */
  readonly image: string;
  /** ARN of the AWS Signer profile that must have signed the image. */
  readonly signingProfileArn: string;
  /**
   * Profiles whose signature is accepted instead during a transition from them to `signingProfileArn` (the profile
   * this one replaced): each is held to the same evidence, except that it may be Canceled (`previousSigningProfileFailures`).
   * @default - none; absent rather than empty, so that the record of a class without a transition stays as it was
   */
  readonly previousSigningProfileArns?: readonly string[];
  /** @default - weights are in the image */
  readonly modelData?: ApprovedModelData;
}

/** How the trust construct resolves a class's signer and what it requires. */
export interface ArtifactRecordOptions {
  /** ARN of the Signer profile used when a class names none. */
  readonly defaultSigningProfileArn: string;
  readonly partition: string;
  readonly region: string;
  readonly account: string;
  /** Whether model data must pin an S3 object version. */
  readonly requireModelVersion: boolean;
  /**
   * ARNs of profiles the caller created, by profile name: a class that names one of them gets the resource's own ARN
   * attribute, never an ARN rebuilt from the name (the deployed name may differ, e.g. when CloudFormation generated it).
   * @default - none
   */
  readonly knownProfileArns?: Readonly<Record<string, string>>;
  /**
   * Profiles the default profile replaced, accepted besides it for the classes whose approved profile is the default
   * one. A class that names a profile of its own gets none: what accepts that profile's predecessors is for its own
   * owner to say, and a class isolated on its own profile (e.g. `allowSensitive: false`) must not start trusting the
   * default profile's predecessors.
   * @default - none
   */
  readonly previousSigningProfileArns?: readonly string[];
}

/**
 * The approved-artifact record of a class, or every reason it cannot be built. Values that are CDK tokens are not
 * read: their record fields are left as given and the verifier checks them at deploy time.
 */
export function approvedArtifactsFor(
  cls: CapacityClassSpec,
  options: ArtifactRecordOptions,
): { readonly record?: ApprovedArtifacts; readonly problems: Problem[] } {
  const problems: Problem[] = [];
  const add = (field: string, message: string) => problems.push({ className: cls.name, field, message });
  const { image, modelData } = cls.artifact;
  if (!isUnresolved(image) && !parseEcrImage(image)) {
    add('artifact.image', `'${image}' is not a private ECR image pinned by digest; ` +
      'the verifier needs <account>.dkr.ecr.<region>.amazonaws.com/<repository>@sha256:<64 hex>');
  }
  const profileName = cls.artifact.signingProfileName;
  if (profileName !== undefined && !isUnresolved(profileName) && !SIGNING_PROFILE_NAME.test(profileName)) {
    add('artifact.signingProfileName', `'${profileName}' is not an AWS Signer profile name (2..64 of [A-Za-z0-9_])`);
  }
  let approvedModel: ApprovedModelData | undefined;
  if (modelData) {
    // A bucket given as a token (`s3://${bucket.bucketName}/key`) stays a token inside the record and the IAM ARN.
    const object = parseS3Object(modelData.uri);
    if (!object) {
      add('artifact.modelData.uri', `'${modelData.uri}' is not one S3 object (s3://bucket/key); ` +
        'a prefix cannot be pinned by one digest: archive it (e.g. model.tar.gz, which both platforms unpack) and sign the archive');
    }
    if (!isUnresolved(modelData.sha256) && !/^[0-9a-f]{64}$/.test(modelData.sha256)) {
      add('artifact.modelData.sha256', `'${modelData.sha256}' is not 64 lower-case hex characters`);
    }
    if (modelData.versionId === undefined && options.requireModelVersion) {
      add('artifact.modelData.versionId', 'is missing; the verifier pins model data by object version ' +
        '(enable bucket versioning and give the version id, or set requireModelVersion: false)');
    } else if (modelData.versionId !== undefined && !isUnresolved(modelData.versionId) && !/^[\x21-\x7e]{1,1024}$/.test(modelData.versionId)) {
      add('artifact.modelData.versionId', `'${modelData.versionId}' is not an S3 version id`);
    } else if (modelData.versionId === 'null') {
      // An object written while versioning was off or suspended has the version id "null", and a later write in that state
      // replaces it under the same id (S3 user guide, "Working with objects in a versioning-suspended bucket"): it pins nothing.
      add('artifact.modelData.versionId', "is 'null', the id of an object written without versioning, which a later upload replaces in place; "
        + 'allowed: the version id of an upload made with versioning enabled');
    }
    if (object) approvedModel = { ...object, versionId: modelData.versionId ?? '', sha256: modelData.sha256 };
  }
  if (problems.length > 0) return { problems };
  const approvedProfile = profileName === undefined
    ? options.defaultSigningProfileArn
    : (options.knownProfileArns?.[profileName] ?? signingProfileArn(options.partition, options.region, options.account, profileName));
  const previous = approvedProfile === options.defaultSigningProfileArn ? options.previousSigningProfileArns ?? [] : [];
  return {
    problems,
    record: {
      className: cls.name,
      image,
      signingProfileArn: approvedProfile,
      ...(previous.length > 0 ? { previousSigningProfileArns: [...previous] } : {}),
      modelData: approvedModel,
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Evidence and rules
// ---------------------------------------------------------------------------------------------------------------

/** ECR `DescribeImageSigningStatus` for the class's image digest. */
export interface ImageSigningEvidence {
  readonly statuses: readonly {
    readonly signingProfileArn?: string;
    /** `IN_PROGRESS`, `COMPLETE` or `FAILED` (SigningStatus, @aws-sdk/client-ecr@3.1169.0 dist-types/models/enums.d.ts:256-260). */
    readonly status?: string;
    readonly failureCode?: string;
    readonly failureReason?: string;
  }[];
  /**
   * The verifier stopped reading the status again at its deadline with a signing still `IN_PROGRESS` (`signingInProgress`).
   * @default false
   */
  readonly inProgressAtDeadline?: boolean;
}

/** The status ECR reports while it signs (API_ImageSigningStatus.html: "IN_PROGRESS - Signing is currently in progress"). */
export const SIGNING_IN_PROGRESS = 'IN_PROGRESS';

/**
 * The accepted profiles (`acceptedSigningProfiles`) whose signing of the image ECR still reports `IN_PROGRESS`. ECR signs
 * after the push ("IN_PROGRESS - Signing is currently in progress", then COMPLETE or FAILED:
 * https://docs.aws.amazon.com/AmazonECR/latest/APIReference/API_ImageSigningStatus.html), so a deploy right after a
 * push finds it in progress: the verifier reads the status again while this is not empty, until its deadline, and only
 * then reads the signatures (COMPLETE is "The signature was successfully generated"; that ECR lists it as a referrer
 * before then is not documented, so they are not read before). A FAILED or COMPLETE one is final; a profile no rule
 * signs with (no status) or another signer's status is not waited for, and nothing is once an accepted profile's is
 * COMPLETE.
 */
export function signingInProgress(approved: ApprovedArtifacts, evidence: ImageSigningEvidence): string[] {
  const by = (status: string, p: string) => (s: ImageSigningEvidence['statuses'][number]) =>
    s.status === status && s.signingProfileArn !== undefined && sameSigningProfile(s.signingProfileArn, p);
  const accepted = acceptedSigningProfiles(approved);
  // One accepted profile's complete signing is enough (`verifyArtifacts` accepts the image by any of them): waiting for
  // another's would only delay the answer (review R214).
  if (accepted.some((p) => evidence.statuses.some(by('COMPLETE', p)))) return [];
  return accepted.filter((p) => evidence.statuses.some(by(SIGNING_IN_PROGRESS, p)));
}

/** AWS Signer `GetSigningProfile` of the approved profile. */
export interface SigningProfileEvidence {
  readonly arn?: string;
  readonly status?: string;
  readonly platformId?: string;
  readonly revocationRecord?: { readonly revocationEffectiveFrom?: Date; readonly revokedAt?: Date; readonly revokedBy?: string };
}

/** The image's Notation signatures (ECR referrers) and what AWS Signer `GetRevocationStatus` said about each. */
export interface SignatureRevocationEvidence {
  readonly signatures: readonly {
    /** Digest of the signature manifest in the repository. */
    readonly signatureDigest: string;
    readonly targetDigest: string;
    readonly profileVersionArn: string;
    readonly jobArn: string;
    /** `revokedEntities`: job, profile version or certificate hashes Signer reports revoked. */
    readonly revokedEntities: readonly string[];
    /** The signature's `io.cncf.notary.expiry` (its signer's "best by use" time), when it has one. */
    readonly expiry?: Date;
  }[];
  /** When the signatures were read: the time their expiry is judged at. */
  readonly checkedAt?: Date;
  /** Signatures that could not be read, with the reason. */
  readonly unreadable?: readonly string[];
  /** How many signature referrers were read (each signature, another signer's or unreadable). @default - the signatures and unreadable ones */
  readonly read?: number;
  /** How many signature referrers the image has beyond those read (more than the verifier reads). */
  readonly notRead?: 'some' | number;
}

/** S3 `HeadObject` (checksum mode enabled) and the object's tags, for the pinned version. */
export interface ModelObjectEvidence {
  readonly versionId?: string;
  readonly deleteMarker?: boolean;
  /** Base64; `<base64>-<parts>` for a composite checksum of a multipart upload. */
  readonly checksumSha256?: string;
  /** `FULL_OBJECT` or `COMPOSITE`. */
  readonly checksumType?: string;
  /** User metadata `sha256` written at upload (immutable for the version). */
  readonly metadataSha256?: string;
}

/**
 * S3 `HeadObject` of the key WITHOUT a version id: the object a reader that names no version gets, which is what
 * SageMaker serves (its S3ModelDataSource has no VersionId; lib/sagemaker/class-model.ts). The pinned HeadObject
 * names the approved version, so S3 answers that version or an error, and cannot say whether it is still the current one.
 */
export interface CurrentObjectEvidence {
  /** `x-amz-version-id` of the current object; absent when the bucket is unversioned (S3 sends none). */
  readonly versionId?: string;
  /** The key has no current object (S3 answered 404: deleted, or a delete marker is current). */
  readonly missing?: boolean;
}

/** KMS `Verify` of the model digest's signature. */
export interface ModelSignatureEvidence {
  /** The signature found on the object version (tag `MODEL_SIGNATURE_TAG`). */
  readonly signaturePresent: boolean;
  readonly signatureValid: boolean;
}

/** Platform of the Signer profiles that sign OCI images for ECR managed signing. */
export const NOTATION_PLATFORM_ID = 'Notation-OCI-SHA384-ECDSA';
/** Object tag that carries the base64 KMS signature of the model data's SHA-256. */
export const MODEL_SIGNATURE_TAG = 'cai:model-sha256-signature';
/** Object metadata (x-amz-meta-sha256) that carries the whole object's SHA-256 in hex. */
export const MODEL_SHA256_METADATA = 'sha256';
/** KMS key spec and algorithm: a P-256 ECDSA signature of a 32-byte SHA-256 digest fits in one object tag. */
export const MODEL_SIGNING_KEY_SPEC = 'ECC_NIST_P256';
export const MODEL_SIGNING_ALGORITHM = 'ECDSA_SHA_256';

/** The verifier's retry of its AWS calls where the custom resource's properties do not say (the construct always does). */
export const VERIFIER_RETRY_DEFAULTS = { maxAttempts: 5, baseDelayMs: 500, maxDelayMs: 8000 } as const;

/** How the verifier accepts a model digest when S3 holds no full-object SHA-256 (multipart uploads). */
export type MultipartDigestPolicy = 'metadata' | 'reject';

/**
 * The profiles whose signature a class accepts: its approved profile, then each previous one once. A previous profile
 * that is the approved one is dropped, not refused: the approved profile is held to the stricter rule (Active) anyway,
 * and the verdict must not report an image as accepted under a "previous" profile that is the current one. (The
 * construct refuses it at synth where it can know; with a generated profile name only the deployed ARN tells.)
 */
export function acceptedSigningProfiles(approved: ApprovedArtifacts): string[] {
  const accepted = [approved.signingProfileArn];
  for (const p of approved.previousSigningProfileArns ?? []) if (!accepted.some((a) => sameSigningProfile(a, p))) accepted.push(p);
  return accepted;
}

/** How a message names a profile: the approved one, or a previous one of a transition. */
function profileRole(approved: ApprovedArtifacts, profile: string): string {
  return profile === approved.signingProfileArn ? 'the approved profile' : 'the previous profile';
}

/** Failures of the image signature by `profile` (default: the approved one): signed by it, signing complete. */
export function imageSignatureFailures(approved: ApprovedArtifacts, evidence: ImageSigningEvidence, profile = approved.signingProfileArn): string[] {
  const by = (s: { readonly signingProfileArn?: string }) => s.signingProfileArn !== undefined && sameSigningProfile(s.signingProfileArn, profile);
  const mine = evidence.statuses.filter(by);
  if (mine.length === 0) {
    const others = evidence.statuses.map((s) => s.signingProfileArn ?? '?');
    return [
      `image ${approved.image} has no signature by ${profileRole(approved, profile)} ${profile}` +
        (others.length > 0 ? ` (signed only by ${others.join(', ')})` : ' (it is not signed)'),
    ];
  }
  if (mine.some((s) => s.status === 'COMPLETE')) return [];
  return mine.map((s) =>
    s.status === 'FAILED'
      ? `image ${approved.image}: signing by ${profile} FAILED (${s.failureCode ?? '?'}: ${s.failureReason ?? '?'})`
      : s.status === SIGNING_IN_PROGRESS && evidence.inProgressAtDeadline
        ? `image ${approved.image}: signing by ${profile} was still IN_PROGRESS at the verifier's deadline (ECR signs after the push); ` +
          'deploy again once DescribeImageSigningStatus reports COMPLETE, or give the verifier more time (verifierTimeout)'
        : `image ${approved.image}: signing by ${profile} is ${s.status ?? 'in an unknown state'}, not COMPLETE`,
  );
}

/**
 * Whether two signing profile ARNs name the same profile: both are in the one form `parseSigningProfileArn` reads (the
 * `/` after the account, as ECR's SigningRule pattern and IAM name a profile: see there) and they are equal. Anything
 * else is not the same profile, the form without that `/` included: it names no profile IAM or ECR knows, and an
 * approval check that cannot read an ARN fails closed. Names compare exactly: an approval check does not fold case.
 */
export function sameSigningProfile(a: string, b: string): boolean {
  return parseSigningProfileArn(a) !== undefined && parseSigningProfileArn(b) !== undefined && a === b;
}

/**
 * Whether a signing profile version ARN (`<profile ARN>/<version>`, a non-empty version) belongs to the profile ARN,
 * read with `sameSigningProfile` (so an unreadable profile part belongs to no profile).
 */
export function isVersionOfProfile(profileVersionArn: string, profileArn: string): boolean {
  const cut = profileVersionArn.lastIndexOf('/');
  return cut > 0 && cut < profileVersionArn.length - 1 && sameSigningProfile(profileVersionArn.slice(0, cut), profileArn);
}

type ReadSignature = SignatureRevocationEvidence['signatures'][number];

function noNotationSignature(approved: ApprovedArtifacts, profile: string): string {
  return `image ${approved.image}: no Notation signature by ${profile} found among its referrers`;
}

/** Signatures that were not read: any may be a revoked one of an accepted profile, so each fails the image. */
function signatureGapFailures(approved: ApprovedArtifacts, evidence: SignatureRevocationEvidence): string[] {
  const failures: string[] = [];
  if (evidence.unreadable?.length) {
    failures.push(`image ${approved.image}: signatures that could not be read (any may be a revoked one): ${evidence.unreadable.join('; ')}`);
  }
  if (evidence.notRead !== undefined) {
    failures.push(`image ${approved.image}: ${evidence.notRead === 'some' ? 'more' : evidence.notRead} signature referrers beyond the ` +
      `${evidence.read ?? evidence.signatures.length + (evidence.unreadable?.length ?? 0)} read were not checked (any may be a revoked one); ` +
      'delete the image\'s stale signatures');
  }
  return failures;
}

/** Failures of signatures that were read: each must cover the image's digest, be unrevoked and unexpired. */
function signatureSoundnessFailures(
  approved: ApprovedArtifacts, imageDigest: string, signatures: readonly ReadSignature[], checkedAt?: Date,
): string[] {
  const failures: string[] = [];
  for (const s of signatures) {
    if (s.targetDigest !== imageDigest) {
      failures.push(`image ${approved.image}: signature ${s.signatureDigest} covers ${s.targetDigest}, not ${imageDigest}`);
    }
    if (s.revokedEntities.length > 0) {
      failures.push(`image ${approved.image}: signature ${s.signatureDigest} (job ${s.jobArn}) is revoked: ${s.revokedEntities.join(', ')}`);
    }
    // "The artifact is considered expired when the current time is greater than or equal to expiry time"
    // (notaryproject/specifications@v1.1.0:specs/trust-store-trust-policy.md:231). Like a revoked one, an expired
    // signature fails the image even beside a valid one: re-sign it and delete the stale signature.
    if (s.expiry !== undefined) {
      if (!checkedAt) failures.push(`image ${approved.image}: signature ${s.signatureDigest} has an expiry that was not checked`);
      else if (checkedAt.getTime() >= s.expiry.getTime()) {
        failures.push(`image ${approved.image}: signature ${s.signatureDigest} (job ${s.jobArn}) expired at ${s.expiry.toISOString()} ` +
          "(io.cncf.notary.expiry, its signer's 'best by use' time); re-sign the image and delete the expired signature");
      }
    }
  }
  return failures;
}

/**
 * Failures of signature revocation: the image must carry at least one signature by the approved profile that covers
 * its digest, and no signature by that profile may be revoked or expired (a revocation signals a compromise: a second,
 * unrevoked signature does not outvote it). So every signature must be read: one that could not be, or one beyond
 * those the verifier reads, may be the revoked one, and fails the check too.
 */
export function signatureRevocationFailures(approved: ApprovedArtifacts, imageDigest: string, evidence: SignatureRevocationEvidence): string[] {
  const mine = evidence.signatures.filter((s) => isVersionOfProfile(s.profileVersionArn, approved.signingProfileArn));
  return [
    ...(mine.length === 0 ? [noNotationSignature(approved, approved.signingProfileArn)] : []),
    ...signatureGapFailures(approved, evidence),
    ...signatureSoundnessFailures(approved, imageDigest, mine, evidence.checkedAt),
  ];
}

/** Failures of a profile's `GetSigningProfile`: it must be the profile asked for, in an allowed status, Notation, never revoked. */
function profileFailures(profile: string, evidence: SigningProfileEvidence, allowedStatuses: readonly string[], role: string): string[] {
  const failures: string[] = [];
  if (evidence.arn !== undefined && !sameSigningProfile(evidence.arn, profile)) failures.push(`signing profile is ${evidence.arn}, expected ${profile}`);
  if (evidence.status === undefined || !allowedStatuses.includes(evidence.status)) {
    failures.push(`${role} ${profile} is ${evidence.status ?? 'in an unknown state'}, not ${allowedStatuses.join(' or ')}`);
  }
  if (evidence.revocationRecord) {
    const r = evidence.revocationRecord;
    failures.push(
      `${role} ${profile} was revoked (effective from ${r.revocationEffectiveFrom?.toISOString() ?? '?'} by ${r.revokedBy ?? '?'}): ` +
        'its signatures are no longer trusted',
    );
  }
  if (evidence.platformId !== NOTATION_PLATFORM_ID) {
    failures.push(`${role} ${profile} has platform ${evidence.platformId ?? '?'}, expected ${NOTATION_PLATFORM_ID}`);
  }
  return failures;
}

/** Failures of the signing profile: it must be the approved one, active, Notation, and never revoked. */
export function signingProfileFailures(approved: ApprovedArtifacts, evidence: SigningProfileEvidence): string[] {
  return profileFailures(approved.signingProfileArn, evidence, ['Active'], 'signing profile');
}

/**
 * Failures of a previous profile of a transition: never revoked, Notation, and Active or Canceled. Canceled is allowed
 * because CloudFormation cancels the profile it replaced: the delete handler of AWS::Signer::SigningProfile calls
 * signer:CancelSigningProfile (the resource schema's handlers.delete.permissions, as rendered from the CloudFormation
 * registry in stackql/stackql-registry-docs:docs/aws-docs/providers/aws/signer/signing_profiles/index.md; Signer has no
 * delete call), in the cleanup after the update, so a serving
 * stack that deploys after the trust's stack finds the previous profile Canceled. Canceling stops new signing jobs
 * ("it cannot perform new signing jobs", https://docs.aws.amazon.com/signer/latest/api/API_CancelSigningProfile.html),
 * so each signature of a canceled profile was made while it was Active; what invalidates signatures is revocation
 * (https://docs.aws.amazon.com/signer/latest/api/API_RevokeSigningProfile.html), which fails here as it does for the
 * approved profile. Any failure here fails the class whichever profile signed its image: a listed profile that is
 * revoked signals a compromise, one that is not Notation is a mistake, and either is fixed by delisting it.
 */
export function previousSigningProfileFailures(profile: string, evidence: SigningProfileEvidence): string[] {
  return profileFailures(profile, evidence, ['Active', 'Canceled'], 'previous signing profile');
}

/**
 * Failures of a previous profile's place: the verifier asks one Signer region, the approved profile's, about the
 * revocation of every accepted signature; whether that region answers for a profile of another is not documented, so
 * such a profile fails rather than be reported unrevoked.
 */
function previousProfileRegionFailures(approved: ApprovedArtifacts, profile: string): string[] {
  const [mine, theirs] = [signerArnPlace(approved.signingProfileArn)?.region, signerArnPlace(profile)?.region];
  return theirs !== undefined && theirs === mine ? [] : [`previous signing profile ${profile} is not in the region of ` +
    `${approved.signingProfileArn}; allowed: a profile of the approved profile's region (revocation is asked there)`];
}

/** The profile an image was accepted under. */
export interface AcceptedSigningProfile {
  readonly profileArn: string;
  /** Accepted under a previous profile of a transition, not the approved one: the transition is not complete. */
  readonly previous: boolean;
}

/**
 * The image's trust: accepted under the first profile of `acceptedSigningProfiles` that signed it (a COMPLETE ECR
 * signing status and a Notation signature by it), while failures that another profile's signature cannot outweigh fail
 * it anyway: missing evidence, the approved profile's own state (as before transitions existed), any failure of a
 * previous profile's state, unread signatures, and any signature of an accepted profile that is revoked, expired or
 * covers another digest.
 */
function imageTrust(
  approved: ApprovedArtifacts,
  evidence: VerificationEvidence,
): { readonly failures: string[]; readonly accepted?: AcceptedSigningProfile } {
  const profiles = acceptedSigningProfiles(approved);
  const failures: string[] = [];
  const refusals: string[] = [];
  const missing = (what: string) => failures.push(`${what} was not checked`);
  if (!evidence.imageSigning) missing('the image signature');
  if (evidence.signingProfile) failures.push(...signingProfileFailures(approved, evidence.signingProfile));
  else missing('the signing profile');
  for (const p of profiles.slice(1)) {
    failures.push(...previousProfileRegionFailures(approved, p));
    const found = evidence.previousSigningProfiles?.[p];
    if (found) failures.push(...previousSigningProfileFailures(p, found));
    else missing(`the previous signing profile ${p}`);
  }
  const digest = parseEcrImage(approved.image)?.digest;
  const revocation = evidence.signatureRevocation;
  if (!digest) failures.push(`image '${approved.image}' is not a private ECR image pinned by digest`);
  else if (revocation) failures.push(...signatureGapFailures(approved, revocation));
  else missing('signature revocation');
  let accepted: AcceptedSigningProfile | undefined;
  for (const [i, profile] of profiles.entries()) {
    const signatures = revocation?.signatures.filter((s) => isVersionOfProfile(s.profileVersionArn, profile)) ?? [];
    if (digest && revocation) failures.push(...signatureSoundnessFailures(approved, digest, signatures, revocation.checkedAt));
    if (!evidence.imageSigning || !digest || !revocation) continue;
    const why = [
      ...imageSignatureFailures(approved, evidence.imageSigning, profile),
      ...(signatures.length === 0 ? [noNotationSignature(approved, profile)] : []),
    ];
    if (why.length === 0) accepted ??= { profileArn: profile, previous: i > 0 };
    refusals.push(...why);
  }
  // Why no profile accepted the image, first; a profile that did makes the others' refusals moot.
  return accepted ? { failures, accepted } : { failures: [...refusals, ...failures] };
}

/** Hex of a base64 value, or undefined when it is not 32 bytes of base64. */
export function base64Sha256ToHex(value: string): string | undefined {
  if (!/^[A-Za-z0-9+/]{43}=$/.test(value)) return undefined;
  return Buffer.from(value, 'base64').toString('hex');
}

/** Whether S3's checksum is of the whole object (a composite checksum of parts ends with `-<parts>`). */
export function isFullObjectChecksum(checksum: string, checksumType: string | undefined): boolean {
  return checksumType !== 'COMPOSITE' && !/-\d+$/.test(checksum);
}

/**
 * Failures of the model object version. S3 proves the content digest itself when it holds a full-object SHA-256
 * (single-part uploads with `--checksum-algorithm SHA256`). For multipart uploads S3 keeps only a checksum of the
 * parts' checksums, which cannot be compared with the whole object's SHA-256 without reading the object; under the
 * `metadata` policy the verifier then accepts the `x-amz-meta-sha256` written at upload (immutable for a pinned
 * version, and the digest it names must still carry a valid KMS signature), under `reject` it fails.
 */
export function modelObjectFailures(model: ApprovedModelData, evidence: ModelObjectEvidence, multipart: MultipartDigestPolicy): string[] {
  const where = `model data s3://${model.bucket}/${model.key}`;
  if (evidence.deleteMarker) return [`${where}: version ${model.versionId || '(latest)'} is a delete marker`];
  const failures: string[] = [];
  // The verifier names the approved version in its HeadObject, so S3 answers that version or an error and this cannot
  // fail against S3; it is kept for evidence gathered otherwise. Whether the approved version is the CURRENT one is
  // `currentVersionFailures`.
  if (model.versionId && evidence.versionId !== model.versionId) {
    failures.push(`${where}: object version is ${evidence.versionId ?? '(unversioned)'}, approved ${model.versionId}`);
  }
  const checksum = evidence.checksumSha256;
  if (checksum !== undefined && isFullObjectChecksum(checksum, evidence.checksumType)) {
    const hex = base64Sha256ToHex(checksum);
    if (hex !== model.sha256) failures.push(`${where}: S3 SHA-256 is ${hex ?? `unreadable (${checksum})`}, approved ${model.sha256}`);
    return failures;
  }
  const why = checksum === undefined ? 'S3 holds no SHA-256 checksum for it' : `S3 holds only a composite checksum (${checksum})`;
  if (multipart === 'reject') {
    failures.push(`${where}: ${why}, and the policy requires a full-object SHA-256 (upload with one PUT and --checksum-algorithm SHA256)`);
  } else if (!model.versionId) {
    failures.push(`${where}: ${why}; its metadata digest is only trusted for a pinned object version, and none is approved`);
  } else if (evidence.metadataSha256 === undefined) {
    failures.push(`${where}: ${why} and no x-amz-meta-${MODEL_SHA256_METADATA}; record the digest at upload (bin/sign-model.ts prints how)`);
  } else if (evidence.metadataSha256.toLowerCase() !== model.sha256) {
    failures.push(`${where}: x-amz-meta-${MODEL_SHA256_METADATA} is ${evidence.metadataSha256}, approved ${model.sha256}`);
  }
  return failures;
}

/**
 * Failures of the current object at the key, for a consumer that reads the key without a version id (SageMaker): the
 * approved version must be the current one, or the consumer serves bytes the gate never checked. An unversioned bucket
 * (no version id) or a missing object fails: neither can be proven to be the approved version.
 */
export function currentVersionFailures(model: ApprovedModelData, current: CurrentObjectEvidence): string[] {
  const where = `model data s3://${model.bucket}/${model.key}`;
  const served = 'SageMaker reads the current object of the key (it names no version), so it would not serve the approved one';
  if (current.missing) return [`${where}: the key has no current object (deleted, or a delete marker is current); ${served}`];
  if (current.versionId === undefined) {
    return [`${where}: S3 returned no version id for the current object (is the bucket versioned?), so it cannot be proven to be ` +
      `the approved version ${model.versionId}; ${served}`];
  }
  if (current.versionId !== model.versionId) {
    return [`${where}: the current version is ${current.versionId}, approved ${model.versionId} (a later upload to the key); ${served}`];
  }
  return [];
}

/** Failures of the model digest's KMS signature. */
export function modelSignatureFailures(model: ApprovedModelData, evidence: ModelSignatureEvidence, keyArn: string): string[] {
  const where = `model data s3://${model.bucket}/${model.key}`;
  if (!evidence.signaturePresent) return [`${where}: no ${MODEL_SIGNATURE_TAG} tag on version ${model.versionId || '(latest)'}; sign it with bin/sign-model.ts`];
  if (!evidence.signatureValid) return [`${where}: the signature of SHA-256 ${model.sha256} does not verify with KMS key ${keyArn}`];
  return [];
}

/** The 32 bytes KMS signs and verifies (`MessageType: DIGEST`) for a model's hex SHA-256. */
export function modelDigestMessage(sha256Hex: string): Uint8Array {
  if (!/^[0-9a-f]{64}$/.test(sha256Hex)) throw new Error(`'${sha256Hex}' is not a SHA-256 digest in lower-case hex`);
  return Uint8Array.from(Buffer.from(sha256Hex, 'hex'));
}

/** Everything the verifier found about one class. A check that did not run is absent, and absence never passes. */
export interface VerificationEvidence {
  readonly imageSigning?: ImageSigningEvidence;
  readonly signingProfile?: SigningProfileEvidence;
  /** `GetSigningProfile` of each previous profile of the record, by its ARN as the record lists it. */
  readonly previousSigningProfiles?: Readonly<Record<string, SigningProfileEvidence>>;
  readonly signatureRevocation?: SignatureRevocationEvidence;
  readonly modelObject?: ModelObjectEvidence;
  /** Only gathered when `requireCurrentVersion` is set and a version is approved. */
  readonly currentModelObject?: CurrentObjectEvidence;
  readonly modelSignature?: ModelSignatureEvidence;
}

export interface VerificationVerdict {
  readonly passed: boolean;
  readonly failures: readonly string[];
  /** The profile the image was accepted under, when one was (also when another check failed the class). */
  readonly signedBy?: AcceptedSigningProfile;
}

/** The verdict on one class: passes only when every required check ran and found nothing. */
export function verifyArtifacts(
  approved: ApprovedArtifacts,
  evidence: VerificationEvidence,
  options: {
    readonly modelSigningKeyArn: string;
    readonly multipartDigest: MultipartDigestPolicy;
    /**
     * The consumer reads the key without a version id (SageMaker): the approved version must also be the current one.
     * @default false - the consumer fetches the approved version itself (EKS: `aws s3api get-object --version-id`)
     */
    readonly requireCurrentVersion?: boolean;
  },
): VerificationVerdict {
  const image = imageTrust(approved, evidence);
  const failures = [...image.failures];
  const missing = (what: string) => failures.push(`${what} was not checked`);
  const model = approved.modelData;
  if (model) {
    if (evidence.modelObject) failures.push(...modelObjectFailures(model, evidence.modelObject, options.multipartDigest));
    else missing('the model object');
    // Without an approved version the pinned check already read the current object.
    if (options.requireCurrentVersion && model.versionId) {
      if (evidence.currentModelObject) failures.push(...currentVersionFailures(model, evidence.currentModelObject));
      else missing('the current model object version');
    }
    if (evidence.modelSignature) failures.push(...modelSignatureFailures(model, evidence.modelSignature, options.modelSigningKeyArn));
    else missing('the model signature');
  }
  return { passed: failures.length === 0, failures, ...(image.accepted ? { signedBy: image.accepted } : {}) };
}

