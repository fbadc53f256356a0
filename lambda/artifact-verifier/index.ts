/**
 * Deploy-time verifier of one capacity class's artifacts (a CloudFormation custom resource).
 *
 * Create and Update gather evidence from ECR, AWS Signer, S3 and KMS and report SUCCESS only when
 * `verifyArtifacts()` (lib/core) passes. Every error, exhausted retry or approaching timeout reports FAILED, so the
 * class's Model or Deployment, which depends on this resource, is never created. Delete always succeeds: removing
 * a gate must never block removing a stack.
 *
 * The physical id names the record it verified (`physicalIdOf`). An Update asked to verify the record the resource
 * already holds is a rollback of an update this check refused: CloudFormation calls Update again with the old
 * properties when a stack update fails ("a failed update triggers a rollback causing CloudFormation to call update on
 * the custom resource again"), and a refused check kept the old id. That record was verified when it was deployed and
 * is what runs; checked again, a signature revoked since (the reason to bump `verificationNonce`) would fail the
 * rollback too and leave the stack UPDATE_ROLLBACK_FAILED. It answers SUCCESS and deploys nothing new. Where this
 * check passed and another resource failed the update, the resource holds the new record, and the rollback to the old
 * one is checked like any update: a user's revert looks the same and must be checked. That rollback reads the earlier
 * record with the grants of the trust stack as deployed, which name the current records: ArtifactTrust grants the
 * objects under a `modelDataLocations` entry and all its repositories so that it stays readable, and
 * docs/artifact-trust.md ("Limits") says which rollbacks do and the recovery for the others. A forward update changes
 * what is checked (the record, the nonce, the options), so it is checked; one that changes only the ServiceToken names
 * the same record, verified already.
 */
import { createHash } from 'node:crypto';
import {
  BatchGetImageCommand,
  DescribeImageSigningStatusCommand,
  ECRClient,
  GetDownloadUrlForLayerCommand,
  type ImageReferrer,
  ListImageReferrersCommand,
} from '@aws-sdk/client-ecr';
import { KMSClient, VerifyCommand } from '@aws-sdk/client-kms';
import { GetObjectTaggingCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { GetRevocationStatusCommand, GetSigningProfileCommand, SignerClient } from '@aws-sdk/client-signer';
import type { CloudFormationCustomResourceEvent, Context } from 'aws-lambda';
import {
  type ApprovedArtifacts,
  type ApprovedModelData,
  type CurrentObjectEvidence,
  type EcrImageReference,
  type ImageSigningEvidence,
  type ModelObjectEvidence,
  type ModelSignatureEvidence,
  type MultipartDigestPolicy,
  type SignatureRevocationEvidence,
  type SigningProfileEvidence,
  type VerificationVerdict,
  MODEL_SHA256_METADATA,
  MODEL_SIGNATURE_TAG,
  MODEL_SIGNING_ALGORITHM,
  NOTATION_PLATFORM_ID,
  acceptedSigningProfiles,
  isVersionOfProfile,
  modelDigestMessage,
  parseEcrImage,
  parseSigningProfileArn,
  SIGNING_PROFILE_ARN_FORM,
  signingInProgress,
  VERIFIER_RETRY_DEFAULTS,
  verifyArtifacts,
} from '../../lib/core/trust/artifact-verification';
import { isAccessDenied, isRetryableError, type RetryOptions, withRetries } from '../../lib/core/reconciler/retry';
import { customResourceResponseBody } from '../../lib/core/platform/custom-resource-response';
import { LAMBDA_CLIENT_OPTIONS } from '../../lib/core/sdk-client-profiles';
import { NOTATION_SIGNATURE_ARTIFACT_TYPE, NotSignerSignatureError, parseNotationEnvelope } from './envelope';

/** ResourceProperties as CloudFormation delivers them (every scalar is a string). */
interface VerifierProperties {
  readonly Record: {
    readonly className: string;
    readonly image: string;
    readonly signingProfileArn: string;
    readonly previousSigningProfileArns?: readonly string[];
    readonly modelData?: { readonly bucket: string; readonly key: string; readonly versionId: string; readonly sha256: string };
  };
  readonly ModelSigningKeyArn: string;
  readonly MultipartDigest: string;
  /** 'true' when a consumer reads the model data without a version id (SageMaker): the approved version must be current. */
  readonly RequireCurrentVersion?: string;
  readonly MaxAttempts: string;
  readonly BaseDelayMs: string;
  readonly MaxDelayMs: string;
}

/** Time kept back from the Lambda timeout to send FAILED before CloudFormation would wait an hour for an answer. */
const RESPONSE_RESERVE_MS = 15_000;
/**
 * Time kept back from the verifier's deadline when it stops waiting for an image's signing (`signingInProgress`): to
 * read the signatures after it (ListImageReferrers, then per signature BatchGetImage, GetDownloadUrlForLayer, the envelope
 * and GetRevocationStatus), while the other evidence is read beside it.
 */
export const SIGNATURE_READ_RESERVE_MS = 15_000;
/** How long the answer to CloudFormation may take: well inside RESPONSE_RESERVE_MS. */
const RESPONSE_TIMEOUT_MS = 10_000;
/** Ends a Reason cut to fit the response's size limit (`customResourceResponseBody`): the whole verdict is logged. */
const REASON_CUT_NOTE = "... (see the verifier's log)";

export async function handler(event: CloudFormationCustomResourceEvent, context: Pick<Context, 'getRemainingTimeInMillis'>): Promise<void> {
  const props = event.ResourceProperties as unknown as VerifierProperties;
  if (event.RequestType === 'Delete') {
    await respond(event, event.PhysicalResourceId, 'SUCCESS', 'nothing to verify on delete');
    return;
  }
  const verified = physicalIdOf(event.ResourceProperties);
  if (event.RequestType === 'Update' && event.PhysicalResourceId === verified) {
    log({ className: props.Record?.className, image: props.Record?.image, passed: true, rollback: true });
    await respond(event, verified, 'SUCCESS', 'the record in force, verified when it was deployed (a rollback): nothing new deployed', {
      ImageDigest: parseEcrImage(props.Record.image)?.digest ?? '',
      ModelSha256: props.Record.modelData?.sha256 ?? '',
    });
    return;
  }
  // A failed check keeps the physical id in force, so that a rollback to it is recognised; a failed Create answers an
  // id no record has, so that a retry of it is checked again, never skipped.
  const physicalId = event.RequestType === 'Create' ? `artifact-gate/${props.Record?.className ?? 'unknown'}/unverified` : event.PhysicalResourceId;
  let verdict: VerificationVerdict;
  const budgetMs = context.getRemainingTimeInMillis() - RESPONSE_RESERVE_MS;
  try {
    verdict = await withDeadline(verifyClass(props, budgetMs - SIGNATURE_READ_RESERVE_MS), budgetMs);
  } catch (err) {
    // Fail closed: an error is never a pass.
    verdict = { passed: false, failures: [`verification could not complete: ${describeError(err)}`] };
  }
  const record = props.Record;
  // `signedBy` names the profile the image was accepted under: a verdict with `signedByPrevious: true` is a class whose
  // image still carries only a previous profile's signature, so the transition is not complete (docs/artifact-trust.md).
  const signedBy = verdict.signedBy ? { signedBy: verdict.signedBy.profileArn, signedByPrevious: verdict.signedBy.previous } : {};
  log({ className: record?.className, image: record?.image, passed: verdict.passed, ...signedBy, failures: verdict.failures });
  if (verdict.passed) {
    const how = verdict.signedBy?.previous ? ` (image signed by the previous profile ${verdict.signedBy.profileArn}, not yet by the approved one)` : '';
    await respond(event, verified, 'SUCCESS', `artifacts verified${how}`, {
      ImageDigest: parseEcrImage(record.image)?.digest ?? '',
      ModelSha256: record.modelData?.sha256 ?? '',
    });
  } else {
    const reason = `class '${record?.className ?? '?'}' artifacts rejected: ${verdict.failures.join('; ')}`;
    await respond(event, physicalId, 'FAILED', reason);
  }
}

/**
 * `artifact-gate/<class>/<digest>`: the digest of everything the check is asked (the record, the key, the nonce, the
 * options; not the ServiceToken, which changes when the function is replaced, not what it checks).
 */
export function physicalIdOf(properties: Readonly<Record<string, unknown>>): string {
  const { ServiceToken: _, ...asked } = properties;
  const canonical = (v: unknown): unknown => (Array.isArray(v) ? v.map(canonical) : v && typeof v === 'object'
    ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])])) : v);
  const digest = createHash('sha256').update(JSON.stringify(canonical(asked))).digest('hex').slice(0, 32);
  const record = (asked as Partial<VerifierProperties>).Record;
  return `artifact-gate/${record?.className ?? 'unknown'}/${digest}`;
}

/**
 * Gathers all evidence for one class and judges it. Throws when AWS cannot be asked. A signing still in progress is
 * read again for up to `signingWaitMs` (`imageSigningEvidence`).
 */
export async function verifyClass(props: VerifierProperties, signingWaitMs: number): Promise<VerificationVerdict> {
  const approved = approvedFrom(props);
  const retry = retryOptions(props);
  const multipartDigest: MultipartDigestPolicy = props.MultipartDigest === 'metadata' ? 'metadata' : 'reject';
  const image = parseEcrImage(approved.image);
  if (!image) return { passed: false, failures: [`image '${approved.image}' is not a private ECR image pinned by digest`] };
  const model = approved.modelData;
  const requireCurrentVersion = props.RequireCurrentVersion === 'true';
  const previous = acceptedSigningProfiles(approved).slice(1);
  // The signatures are read once the signing has settled (`signingInProgress`): one still being generated is not there yet.
  const imageEvidence = async () => {
    const signing = await imageSigningEvidence(approved, image, retry, signingWaitMs);
    return [signing, await signatureRevocationEvidence(image, approved.signingProfileArn, retry, previous)] as const;
  };
  const [[imageSigning, signatureRevocation], signingProfile, modelEvidence, previousSigningProfiles] = await Promise.all([
    imageEvidence(),
    signingProfileEvidence(approved.signingProfileArn, retry),
    model ? modelEvidenceFor(model, props.ModelSigningKeyArn, requireCurrentVersion, retry) : Promise.resolve(undefined),
    previousProfilesEvidence(previous, retry),
  ]);
  return verifyArtifacts(
    approved,
    {
      imageSigning,
      signingProfile,
      previousSigningProfiles,
      signatureRevocation,
      modelObject: modelEvidence?.object,
      currentModelObject: modelEvidence?.current,
      modelSignature: modelEvidence?.signature,
    },
    { modelSigningKeyArn: props.ModelSigningKeyArn, multipartDigest, requireCurrentVersion },
  );
}

/** The image's signing read while an accepted profile's signing was still in progress: the wait goes on. */
class SigningInProgress extends Error {
  constructor(readonly evidence: ImageSigningEvidence) {
    super('image signing in progress');
  }
}

/**
 * ECR `DescribeImageSigningStatus` of the image, read again while an accepted profile's signing is IN_PROGRESS
 * (`signingInProgress`) for up to `waitMs`, with the verifier's own backoff (BaseDelayMs doubling to MaxDelayMs); each
 * read retries its own failures as any call does. At the end of the wait the last answer is the evidence, marked
 * `inProgressAtDeadline`, and the rules fail the image unless another accepted profile's signing is COMPLETE.
 */
async function imageSigningEvidence(
  approved: ApprovedArtifacts,
  image: EcrImageReference,
  retry: RetryOptions,
  waitMs: number,
): Promise<ImageSigningEvidence> {
  const ecr = new ECRClient({ ...LAMBDA_CLIENT_OPTIONS, region: image.region });
  const command = new DescribeImageSigningStatusCommand({
    registryId: image.registryId, repositoryName: image.repositoryName, imageId: { imageDigest: image.digest },
  });
  const read = async (): Promise<ImageSigningEvidence> => {
    const evidence = { statuses: (await withRetries(() => ecr.send(command), retry)).signingStatuses ?? [] };
    if (signingInProgress(approved, evidence).length > 0) throw new SigningInProgress(evidence);
    return evidence;
  };
  const waitEnds = AbortSignal.timeout(Math.max(0, waitMs));
  try {
    return await withRetries(read, {
      ...retry, maxAttempts: Number.POSITIVE_INFINITY, signal: waitEnds, retryable: (err) => err instanceof SigningInProgress,
    });
  } catch (err) {
    if (err instanceof SigningInProgress) return { ...err.evidence, inProgressAtDeadline: true };
    throw err;
  }
}

/**
 * Most signature referrers read per image: a bound on work, far above what signing on push produces. An image with
 * more fails the check (`notRead`): an unread signature may be a revoked one.
 */
const MAX_SIGNATURES = 20;

/**
 * Reads the image's Notation signatures from ECR (referrers API, then the envelope blob) and asks AWS Signer whether
 * the signing job, profile version or certificates of each signature by the approved profile, or by a previous profile
 * of a transition, are revoked. Signer is asked in the approved profile's region: a previous profile of another region
 * fails the class (lib/core `previousProfileRegionFailures`), so no answer from the wrong region counts.
 */
async function signatureRevocationEvidence(
  image: EcrImageReference,
  profileArn: string,
  retry: RetryOptions,
  previousProfileArns: readonly string[] = [],
): Promise<SignatureRevocationEvidence> {
  const ecr = new ECRClient({ ...LAMBDA_CLIENT_OPTIONS, region: image.region });
  const repo = { registryId: image.registryId, repositoryName: image.repositoryName };
  const referrers: ImageReferrer[] = [];
  let nextToken: string | undefined;
  do {
    const page = await withRetries(
      () =>
        ecr.send(
          new ListImageReferrersCommand({
            ...repo,
            subjectId: { imageDigest: image.digest },
            // 'ANY': without a status filter ECR lists ACTIVE artifacts only (ListImageReferrersFilter.artifactStatus,
            // @aws-sdk/client-ecr@3.1169.0 dist-types/models/models_0.d.ts:3302), so an archived revoked signature would
            // go unread while an active one beside it passes. An archived one whose manifest cannot be pulled lands in
            // `unreadable` below and fails the class.
            filter: { artifactTypes: [NOTATION_SIGNATURE_ARTIFACT_TYPE], artifactStatus: 'ANY' },
            nextToken,
          }),
        ),
      retry,
    );
    referrers.push(...(page.referrers ?? []));
    nextToken = page.nextToken;
  } while (nextToken && referrers.length < MAX_SIGNATURES);
  // With a page still unread the count beyond the bound is unknown: 'some'.
  const notRead = nextToken ? 'some' as const : referrers.length > MAX_SIGNATURES ? referrers.length - MAX_SIGNATURES : undefined;

  const signer = new SignerClient({ ...LAMBDA_CLIENT_OPTIONS, region: arnRegion(profileArn) });
  const signatures: SignatureRevocationEvidence['signatures'][number][] = [];
  const unreadable: string[] = [];
  for (const referrer of referrers.slice(0, MAX_SIGNATURES)) {
    const signatureDigest = referrer.digest ?? '?';
    let facts;
    try {
      const blob = await signatureBlob(ecr, repo, signatureDigest, retry);
      facts = parseNotationEnvelope(blob.mediaType, blob.bytes);
    } catch (err) {
      // Another signer's signature (no Signer attributes) is none of the profile's. One we cannot read may be a revoked
      // one: it fails the check (`signatureRevocationFailures`).
      if (!(err instanceof NotSignerSignatureError)) unreadable.push(`${signatureDigest}: ${describeError(err)}`);
      continue;
    }
    if (![profileArn, ...previousProfileArns].some((p) => isVersionOfProfile(facts.profileVersionArn, p))) continue;
    const out = await withRetries(
      () =>
        signer.send(
          new GetRevocationStatusCommand({
            signatureTimestamp: facts.signingTime,
            platformId: NOTATION_PLATFORM_ID,
            profileVersionArn: facts.profileVersionArn,
            jobArn: facts.jobArn,
            certificateHashes: facts.certificateHashes,
          }),
        ),
      retry,
    );
    signatures.push({ signatureDigest, ...facts, revokedEntities: out.revokedEntities ?? [] });
  }
  return {
    signatures,
    unreadable,
    read: Math.min(referrers.length, MAX_SIGNATURES),
    checkedAt: new Date(),
    ...(notRead !== undefined ? { notRead } : {}),
  };
}

/** The envelope blob of one signature manifest, checked against its digest. */
async function signatureBlob(
  ecr: ECRClient,
  repo: { registryId: string; repositoryName: string },
  manifestDigest: string,
  retry: RetryOptions,
): Promise<{ mediaType: string; bytes: Uint8Array }> {
  const got = await withRetries(
    () =>
      ecr.send(
        new BatchGetImageCommand({ ...repo, imageIds: [{ imageDigest: manifestDigest }], acceptedMediaTypes: ['application/vnd.oci.image.manifest.v1+json'] }),
      ),
    retry,
  );
  const manifestText = got.images?.[0]?.imageManifest;
  if (!manifestText) throw new Error(`signature manifest not returned (${got.failures?.[0]?.failureReason ?? 'no reason given'})`);
  const layer = (JSON.parse(manifestText) as { layers?: { mediaType?: string; digest?: string }[] }).layers?.[0];
  if (!layer?.digest || !layer.mediaType) throw new Error('signature manifest has no envelope layer');
  const layerDigest = layer.digest;
  const url = await withRetries(() => ecr.send(new GetDownloadUrlForLayerCommand({ ...repo, layerDigest })), retry);
  if (!url.downloadUrl) throw new Error('ECR returned no download URL for the signature envelope');
  const downloadUrl = url.downloadUrl;
  const bytes = await withRetries(async () => {
    // Bounded like an SDK request: a hung download costs one attempt (a TimeoutError, retried), not the whole budget.
    const res = await fetch(downloadUrl, { signal: AbortSignal.timeout(LAMBDA_CLIENT_OPTIONS.requestHandler.requestTimeout) });
    if (!res.ok) throw Object.assign(new Error(`envelope download failed: HTTP ${res.status}`), { $metadata: { httpStatusCode: res.status } });
    return new Uint8Array(await res.arrayBuffer());
  }, retry);
  const actual = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  if (actual !== layerDigest) throw new Error(`envelope digest is ${actual}, manifest says ${layerDigest}`);
  return { mediaType: layer.mediaType, bytes };
}

async function signingProfileEvidence(profileArn: string, retry: RetryOptions): Promise<SigningProfileEvidence> {
  // The synth checks' parser: an ARN it refuses is not asked about (fails closed), whatever reached the record.
  const profile = parseSigningProfileArn(profileArn);
  if (!profile) throw new Error(`'${profileArn}' is not a signing profile ARN (${SIGNING_PROFILE_ARN_FORM})`);
  const signer = new SignerClient({ ...LAMBDA_CLIENT_OPTIONS, region: profile.region });
  const input = { profileName: profile.name, profileOwner: profile.account };
  const out = await withRetries(() => signer.send(new GetSigningProfileCommand(input)), retry);
  return { arn: out.arn, status: out.status, platformId: out.platformId, revocationRecord: out.revocationRecord };
}

/** `GetSigningProfile` of each previous profile; an error names the profile, which may have to be delisted (deleted, denied). */
async function previousProfilesEvidence(profileArns: readonly string[], retry: RetryOptions): Promise<Record<string, SigningProfileEvidence>> {
  const found = await Promise.all(profileArns.map(async (arn) => {
    try {
      return [arn, await signingProfileEvidence(arn, retry)] as const;
    } catch (err) {
      throw new Error(`previous signing profile ${arn}: ${describeError(err)}`, { cause: err });
    }
  }));
  return Object.fromEntries(found);
}

async function modelEvidenceFor(
  model: ApprovedModelData,
  keyArn: string,
  requireCurrentVersion: boolean,
  retry: RetryOptions,
): Promise<{ object: ModelObjectEvidence; current?: CurrentObjectEvidence; signature: ModelSignatureEvidence }> {
  const s3 = new S3Client({ ...LAMBDA_CLIENT_OPTIONS, followRegionRedirects: true });
  const version = model.versionId ? { VersionId: model.versionId } : {};
  const head = await withRetries(
    () => s3.send(new HeadObjectCommand({ Bucket: model.bucket, Key: model.key, ChecksumMode: 'ENABLED', ...version })),
    retry,
  );
  const object: ModelObjectEvidence = {
    versionId: head.VersionId,
    deleteMarker: head.DeleteMarker,
    checksumSha256: head.ChecksumSHA256,
    checksumType: head.ChecksumType,
    metadataSha256: head.Metadata?.[MODEL_SHA256_METADATA],
  };
  // The HeadObject above names the approved version, so S3 answers that version whatever is current. A consumer that
  // reads the key without a version (SageMaker) gets the current object: ask for it the same way, with no version id.
  const current = requireCurrentVersion && model.versionId ? await currentObjectEvidence(s3, model, retry) : undefined;
  const tags = await withRetries(() => s3.send(new GetObjectTaggingCommand({ Bucket: model.bucket, Key: model.key, ...version })), retry);
  const signatureB64 = tags.TagSet?.find((t) => t.Key === MODEL_SIGNATURE_TAG)?.Value;
  if (signatureB64 === undefined) return { object, current, signature: { signaturePresent: false, signatureValid: false } };
  const kms = new KMSClient({ ...LAMBDA_CLIENT_OPTIONS, region: arnRegion(keyArn) });
  const signatureValid = await withRetries(async () => {
    try {
      const out = await kms.send(
        new VerifyCommand({
          KeyId: keyArn,
          Message: modelDigestMessage(model.sha256),
          MessageType: 'DIGEST',
          Signature: Uint8Array.from(Buffer.from(signatureB64, 'base64')),
          SigningAlgorithm: MODEL_SIGNING_ALGORITHM,
        }),
      );
      return out.SignatureValid === true;
    } catch (err) {
      // KMS answers an invalid signature with this error, not with SignatureValid: false.
      if ((err as { name?: string }).name === 'KMSInvalidSignatureException') return false;
      throw err;
    }
  }, retry);
  return { object, current, signature: { signaturePresent: true, signatureValid } };
}

/**
 * HeadObject of the key with no version id (no checksum mode: only the version id is read, and an SSE-KMS object then
 * needs no decrypt). S3 answers a key whose current version is a delete marker with 404; a key that does not exist is
 * 403 to a caller without s3:ListBucket, which the verifier does not have (HeadObject API reference): an AWS error, so
 * the class fails as "could not complete" rather than "missing". Either way it fails.
 */
async function currentObjectEvidence(s3: S3Client, model: ApprovedModelData, retry: RetryOptions): Promise<CurrentObjectEvidence> {
  try {
    const head = await withRetries(() => s3.send(new HeadObjectCommand({ Bucket: model.bucket, Key: model.key })), retry);
    return { versionId: head.VersionId };
  } catch (err) {
    if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return { missing: true };
    throw err;
  }
}

function approvedFrom(props: VerifierProperties): ApprovedArtifacts {
  const r = props.Record;
  if (!r || !r.className || !r.image || !r.signingProfileArn || !props.ModelSigningKeyArn) {
    throw new Error('the custom resource is missing Record.className, Record.image, Record.signingProfileArn or ModelSigningKeyArn');
  }
  const modelData = r.modelData ? { bucket: r.modelData.bucket, key: r.modelData.key, versionId: r.modelData.versionId ?? '', sha256: r.modelData.sha256 } : undefined;
  const previous = r.previousSigningProfileArns;
  if (previous !== undefined && (!Array.isArray(previous) || previous.some((p) => typeof p !== 'string'))) {
    throw new Error('the custom resource has a Record.previousSigningProfileArns that is not a list of ARNs');
  }
  return {
    className: r.className, image: r.image, signingProfileArn: r.signingProfileArn, modelData,
    ...(previous?.length ? { previousSigningProfileArns: previous } : {}),
  };
}

function retryOptions(props: VerifierProperties): RetryOptions {
  const int = (value: string | undefined, fallback: number) => {
    const n = Number(value);
    return Number.isFinite(n) && n >= 0 ? n : fallback;
  };
  return {
    maxAttempts: Math.max(1, int(props.MaxAttempts, VERIFIER_RETRY_DEFAULTS.maxAttempts)),
    baseDelayMs: int(props.BaseDelayMs, VERIFIER_RETRY_DEFAULTS.baseDelayMs),
    maxDelayMs: int(props.MaxDelayMs, VERIFIER_RETRY_DEFAULTS.maxDelayMs),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    random: Math.random,
    // The verifier runs right after CloudFormation creates or changes its role's policy (a new class, a new grant on
    // upgrade), while the grant may still be spreading: a denial is tried again within the same bounded attempts, and
    // a lasting one still fails the class (about 7.5 s later with the defaults).
    retryable: (err) => isRetryableError(err) || isAccessDenied(err),
  };
}

function arnRegion(arn: string): string | undefined {
  return /^arn:[^:]+:[^:]+:([^:]+):/.exec(arn)?.[1] || undefined;
}

async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`verification did not finish within ${Math.max(0, ms)} ms`)), Math.max(0, ms));
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function describeError(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}

async function respond(
  event: CloudFormationCustomResourceEvent,
  physicalResourceId: string,
  status: 'SUCCESS' | 'FAILED',
  reason: string,
  data?: Record<string, string>,
): Promise<void> {
  // CloudFormation limits the whole body to 4096 bytes of UTF-8: a Reason in non-ASCII text (an S3 key) is cut by bytes.
  const body = customResourceResponseBody({
    Status: status,
    Reason: reason,
    PhysicalResourceId: physicalResourceId,
    StackId: event.StackId,
    RequestId: event.RequestId,
    LogicalResourceId: event.LogicalResourceId,
    Data: data,
  }, REASON_CUT_NOTE);
  // The pre-signed response URL is signed without a content type.
  // Bounded: a hung PUT fails the invocation (CloudFormation then fails the resource at its ServiceTimeout) rather than
  // running out the Lambda timeout.
  const res = await fetch(event.ResponseURL, {
    method: 'PUT', body, headers: { 'content-type': '' }, signal: AbortSignal.timeout(RESPONSE_TIMEOUT_MS),
  });
  if (!res.ok) throw new Error(`CloudFormation response was not accepted: HTTP ${res.status}`);
}

function log(entry: Record<string, unknown>): void {
  // One structured line per verdict: the audit trail of what was approved or rejected and why.
  console.log(JSON.stringify({ event: 'artifact-verification', ...entry }));
}
