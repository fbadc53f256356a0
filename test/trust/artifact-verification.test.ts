import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { backoffDelayMs, DEFAULT_RETRY, isRetryableError, withRetries } from '../../lib/core/reconciler/retry';
import { defineCapacityClasses } from '../../lib/core/service/checks';
import {
  type ApprovedArtifacts,
  type VerificationEvidence,
  acceptedSigningProfiles,
  approvedArtifactsFor,
  isVersionOfProfile,
  parseSigningProfileArn,
  modelObjectFailures,
  signingProfileArn,
  parseS3Object,
  parseS3Uri,
  sameSigningProfile,
  signingInProgress,
  verifyArtifacts,
  VERIFIER_RETRY_DEFAULTS,
} from '../../lib/core/trust/artifact-verification';
import { ecrRepositoryArn, parseEcrImage } from '../../lib/core/trust/image-reference';
import { ACCEPTED_PROFILE_ARNS, REFUSED_PROFILE_ARNS } from './profile-arn-forms';
import { LLAMA_CONTRACT, llamaClasses } from '../util';

const DIGEST = `sha256:${'a'.repeat(64)}`;
const PROFILE = 'arn:aws:signer:us-east-1:123456789012:/signing-profiles/serving';
const MODEL = { bucket: 'models-bucket', key: 'm.tar', versionId: 'v1', sha256: 'b'.repeat(64) };
const APPROVED: ApprovedArtifacts = {
  className: 'l40s',
  image: `123456789012.dkr.ecr.us-east-1.amazonaws.com/vllm@${DIGEST}`,
  signingProfileArn: PROFILE,
  modelData: MODEL,
};
// Every check a class without a transition needs (previous profiles' evidence is asked only of a record that lists them).
const GOOD: Required<Omit<VerificationEvidence, 'previousSigningProfiles'>> = {
  imageSigning: { statuses: [{ signingProfileArn: PROFILE, status: 'COMPLETE' }] },
  signingProfile: { arn: PROFILE, status: 'Active', platformId: 'Notation-OCI-SHA384-ECDSA' },
  signatureRevocation: { signatures: [{ signatureDigest: 'sha256:s', targetDigest: DIGEST, profileVersionArn: `${PROFILE}/v1`, jobArn: 'job', revokedEntities: [] }] },
  modelObject: { versionId: 'v1', checksumSha256: Buffer.from(MODEL.sha256, 'hex').toString('base64'), checksumType: 'FULL_OBJECT' },
  currentModelObject: { versionId: 'v1' },
  modelSignature: { signaturePresent: true, signatureValid: true },
};
/** Deterministic property runs. */
const SEEDED = { seed: 20261130, numRuns: 200 };
const OPTIONS = { modelSigningKeyArn: 'arn:aws:kms:us-east-1:123456789012:key/k', multipartDigest: 'metadata' as const, requireCurrentVersion: true };

describe('references', () => {
  test.each([
    ['123456789012.dkr.ecr.us-east-1.amazonaws.com/vllm@' + DIGEST, { registryId: '123456789012', region: 'us-east-1', repositoryName: 'vllm', digest: DIGEST }],
    ['123456789012.dkr.ecr-fips.us-gov-west-1.amazonaws.com/team/vllm-openai@' + DIGEST, { region: 'us-gov-west-1', repositoryName: 'team/vllm-openai' }],
    ['123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn/vllm@' + DIGEST, { region: 'cn-north-1' }],
  ])('parses %s', (image, expected) => {
    expect(parseEcrImage(image)).toMatchObject(expected);
  });

  test.each([
    '123456789012.dkr.ecr.us-east-1.amazonaws.com/vllm:latest',
    '123456789012.dkr.ecr.us-east-1.amazonaws.com/vllm:v1@' + DIGEST,
    'public.ecr.aws/vllm/vllm@' + DIGEST,
    '123456789012.dkr.ecr.us-east-1.amazonaws.com/VLLM@' + DIGEST,
    '123456789012.dkr.ecr.us-east-1.amazonaws.com/vllm@sha256:' + 'a'.repeat(63),
  ])('rejects %s', (image) => {
    expect(parseEcrImage(image)).toBeUndefined();
  });

  test('the repository ARN IAM names a pull by, in the partition given', () => {
    const image = parseEcrImage('123456789012.dkr.ecr-fips.us-gov-west-1.amazonaws.com/team/vllm-openai@' + DIGEST)!;
    expect(ecrRepositoryArn(image, 'aws-us-gov')).toBe('arn:aws-us-gov:ecr:us-gov-west-1:123456789012:repository/team/vllm-openai');
  });

  test('S3 objects, not prefixes', () => {
    expect(parseS3Object('s3://models-bucket/llama/bf16.tar')).toEqual({ bucket: 'models-bucket', key: 'llama/bf16.tar' });
    expect(parseS3Object('s3://models-bucket/llama/')).toBeUndefined();
    expect(parseS3Object('https://models-bucket.s3.amazonaws.com/x')).toBeUndefined();
  });

  test('one reading of an S3 URI, literal or with a token bucket: a literal bucket is a bucket name, a prefix never one object', () => {
    // The string encoding of a CDK token (aws-cdk-lib core/lib/private/encoding.ts: ${Token[<key of [a-zA-Z0-9:._-]>]}).
    const token = '${Token[Models.Ref.1234]}';
    expect(parseS3Uri(`s3://${token}/llama/bf16.tar`)).toEqual({ bucket: token, key: 'llama/bf16.tar', prefix: false });
    expect(parseS3Object(`s3://${token}/llama/bf16.tar`)).toEqual({ bucket: token, key: 'llama/bf16.tar' });
    expect(parseS3Object(`s3://models-${token}/m.tar`)).toEqual({ bucket: `models-${token}`, key: 'm.tar' });
    expect(parseS3Uri(`s3://${token}/llama/`)).toEqual({ bucket: token, key: 'llama/', prefix: true });
    expect(parseS3Object(`s3://${token}/llama/`)).toBeUndefined();
    expect(parseS3Uri('s3://models-bucket/llama/')).toEqual({ bucket: 'models-bucket', key: 'llama/', prefix: true });
    // A token elsewhere does not excuse a literal bucket that is no bucket name.
    expect(parseS3Object(`s3://Models_Bucket/${token}`)).toBeUndefined();
    expect(parseS3Object(`s3://models-bucket/${token}`)).toEqual({ bucket: 'models-bucket', key: token });
    for (const bad of [token, `s3://${token}`, `s3://${token}/`, `https://${token}/m.tar`, 's3://Models_Bucket/m.tar', 's3://models-bucket']) {
      expect(parseS3Uri(bad)).toBeUndefined();
    }
  });

  test('the artifact record reads model data with the same parser: a token bucket is kept, a token prefix refused', () => {
    const [l40s] = defineCapacityClasses(llamaClasses());
    const token = '${Token[Models.Ref.1234]}';
    const options = { defaultSigningProfileArn: PROFILE, partition: 'aws', region: 'us-east-1', account: '123456789012', requireModelVersion: true };
    const at = (uri: string) =>
      approvedArtifactsFor({ ...l40s, artifact: { ...l40s.artifact, modelData: { ...l40s.artifact.modelData!, uri } } }, options);
    expect(at(`s3://${token}/m.tar`).record?.modelData).toEqual({ bucket: token, key: 'm.tar', versionId: 'v1', sha256: 'a'.repeat(64) });
    expect(at(`s3://${token}/llama/`).problems.map((p) => p.message)).toEqual([expect.stringContaining(`'s3://${token}/llama/' is not one S3 object`)]);
  });

  test('profile ARNs are the same only in the one form parseSigningProfileArn reads, names exactly', () => {
    for (const [arn] of ACCEPTED_PROFILE_ARNS) expect(sameSigningProfile(arn, arn)).toBe(true);
    // Without the `/` after the account: the form ECR's SigningRule pattern and IAM do not take (artifact-verification.ts).
    const loose = PROFILE.replace(':/signing-profiles/', ':signing-profiles/');
    expect(loose).not.toBe(PROFILE);
    expect(sameSigningProfile(PROFILE, loose)).toBe(false);
    expect(sameSigningProfile(loose, PROFILE)).toBe(false);
    expect(sameSigningProfile(PROFILE, 'arn:aws:signer:us-east-1:123456789012:/signing-profiles/Serving')).toBe(false);
    expect(sameSigningProfile(PROFILE, 'arn:aws:signer:us-east-1:210987654321:/signing-profiles/serving')).toBe(false);
  });

  test.each(REFUSED_PROFILE_ARNS)('%s (%s) is not the same profile as itself: unreadable fails closed', (arn) => {
    expect(sameSigningProfile(arn, arn)).toBe(false);
    expect(isVersionOfProfile(`${arn}/v1abc`, arn)).toBe(false);
  });

  test('profile versions belong to their profile only', () => {
    expect(isVersionOfProfile(`${PROFILE}/abc123`, PROFILE)).toBe(true);
    expect(isVersionOfProfile(`${PROFILE}_evil/abc123`, PROFILE)).toBe(false);
    expect(isVersionOfProfile(PROFILE, PROFILE)).toBe(false);
    expect(isVersionOfProfile(`${PROFILE}/`, PROFILE)).toBe(false);
    expect(isVersionOfProfile(`${PROFILE.replace(':/signing-profiles/', ':signing-profiles/')}/abc123`, PROFILE)).toBe(false);
  });
});

describe('approvedArtifactsFor', () => {
  const [l40s] = defineCapacityClasses(llamaClasses(), { contract: LLAMA_CONTRACT });
  const options = { defaultSigningProfileArn: PROFILE, partition: 'aws', region: 'us-east-1', account: '123456789012', requireModelVersion: true };

  test('binds image, signer, model digest and version into one record', () => {
    expect(approvedArtifactsFor(l40s, options)).toEqual({
      problems: [],
      record: {
        className: 'l40s',
        image: l40s.artifact.image,
        signingProfileArn: PROFILE,
        modelData: { bucket: 'models-bucket', key: 'llama3-8b/bf16.tar', versionId: 'v1', sha256: 'a'.repeat(64) },
      },
    });
  });

  test('fails when the model version is missing and required', () => {
    const spec = { ...l40s, artifact: { ...l40s.artifact, modelData: { uri: 's3://models-bucket/m.tar', sha256: 'a'.repeat(64) } } };
    expect(approvedArtifactsFor(spec, options).problems).toEqual([
      { className: 'l40s', field: 'artifact.modelData.versionId', message: expect.stringMatching(/^is missing; the verifier pins model data by object version/) },
    ]);
    expect(approvedArtifactsFor(spec, { ...options, requireModelVersion: false }).problems).toEqual([]);
  });

  test("fails when the pinned version is 'null', which a later upload without versioning replaces in place", () => {
    const spec = { ...l40s, artifact: { ...l40s.artifact, modelData: { uri: 's3://models-bucket/m.tar', sha256: 'a'.repeat(64), versionId: 'null' } } };
    expect(approvedArtifactsFor(spec, options).problems).toEqual([
      { className: 'l40s', field: 'artifact.modelData.versionId', message: expect.stringMatching(/^is 'null', the id of an object written without versioning/) },
    ]);
  });
});

describe('verifyArtifacts', () => {
  test('passes when every check ran and found nothing', () => {
    expect(verifyArtifacts(APPROVED, GOOD, OPTIONS)).toEqual({ passed: true, failures: [], signedBy: { profileArn: PROFILE, previous: false } });
  });

  test('never passes when any required evidence is missing', () => {
    fc.assert(
      fc.property(fc.subarray(Object.keys(GOOD) as (keyof VerificationEvidence)[], { minLength: 1 }), (dropped) => {
        const evidence = Object.fromEntries(Object.entries(GOOD).filter(([k]) => !dropped.includes(k as keyof VerificationEvidence)));
        const verdict = verifyArtifacts(APPROVED, evidence, OPTIONS);
        expect(verdict.passed).toBe(false);
        expect(verdict.failures.length).toBeGreaterThanOrEqual(dropped.length);
      }),
      SEEDED,
    );
  });

  test('never passes when the image signature is not a COMPLETE one by the approved profile', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            signingProfileArn: fc.constantFrom(PROFILE, `${PROFILE}x`, 'arn:aws:signer:us-east-1:210987654321:/signing-profiles/serving'),
            status: fc.constantFrom('COMPLETE', 'FAILED', 'IN_PROGRESS', undefined),
          }),
          { maxLength: 4 },
        ),
        (statuses) => {
          const ok = statuses.some((s) => s.signingProfileArn === PROFILE && s.status === 'COMPLETE');
          expect(verifyArtifacts(APPROVED, { ...GOOD, imageSigning: { statuses } }, OPTIONS).passed).toBe(ok);
        },
      ),
      SEEDED,
    );
  });

  test('a revoked signature by the approved profile fails even next to an unrevoked one', () => {
    const revoked = { ...GOOD.signatureRevocation.signatures[0], signatureDigest: 'sha256:r', revokedEntities: ['job'] };
    const signatureRevocation = { signatures: [...GOOD.signatureRevocation.signatures, revoked] };
    const verdict = verifyArtifacts(APPROVED, { ...GOOD, signatureRevocation }, OPTIONS);
    expect(verdict.failures).toEqual([`image ${APPROVED.image}: signature sha256:r (job job) is revoked: job`]);
  });

  test('an expired signature by the approved profile fails at and after its expiry, even next to a valid one', () => {
    const expiry = new Date('2026-11-01T00:00:00Z');
    const expired = { ...GOOD.signatureRevocation.signatures[0], signatureDigest: 'sha256:e', expiry };
    const at = (checkedAt?: Date) => {
      const signatureRevocation = { signatures: [...GOOD.signatureRevocation.signatures, expired], checkedAt };
      return verifyArtifacts(APPROVED, { ...GOOD, signatureRevocation }, OPTIONS);
    };
    expect(at(new Date(expiry.getTime() - 1000)).passed).toBe(true);
    expect(at(expiry).failures).toEqual([expect.stringContaining('signature sha256:e (job job) expired at 2026-11-01T00:00:00.000Z')]);
    // An expiry with no time to judge it at is not a pass.
    expect(at(undefined).failures).toEqual([expect.stringContaining('has an expiry that was not checked')]);
  });

  test('a class without model data needs no model evidence', () => {
    const imageOnly = { ...GOOD, modelObject: undefined, currentModelObject: undefined, modelSignature: undefined };
    expect(verifyArtifacts({ ...APPROVED, modelData: undefined }, imageOnly, OPTIONS).passed).toBe(true);
  });
});

describe('a transition from previous signing profiles (the profile the construct replaced)', () => {
  const OLD = 'arn:aws:signer:us-east-1:123456789012:/signing-profiles/serving_2025';
  const TRANSITION: ApprovedArtifacts = { ...APPROVED, previousSigningProfileArns: [OLD] };
  const oldSignature = { signatureDigest: 'sha256:o', targetDigest: DIGEST, profileVersionArn: `${OLD}/v0`, jobArn: 'old-job', revokedEntities: [] };
  const ACTIVE_OLD = { arn: OLD, status: 'Active', platformId: 'Notation-OCI-SHA384-ECDSA' };
  /** The image as it is before it is pushed again: signed by the previous profile only. */
  const SIGNED_BY_OLD: VerificationEvidence = {
    ...GOOD,
    imageSigning: { statuses: [{ signingProfileArn: OLD, status: 'COMPLETE' }] },
    signatureRevocation: { signatures: [oldSignature] },
    previousSigningProfiles: { [OLD]: ACTIVE_OLD },
  };

  test('the record lists them only for classes on the default profile', () => {
    const [l40s, fallback] = defineCapacityClasses(llamaClasses(), { contract: LLAMA_CONTRACT });
    const options = {
      defaultSigningProfileArn: PROFILE, partition: 'aws', region: 'us-east-1', account: '123456789012', requireModelVersion: true,
      previousSigningProfileArns: [OLD],
    };
    expect(approvedArtifactsFor(l40s, options).record?.previousSigningProfileArns).toEqual([OLD]);
    // A class that names the default profile by its name is on it too.
    const named = { ...fallback, artifact: { ...fallback.artifact, signingProfileName: 'serving' } };
    expect(approvedArtifactsFor(named, { ...options, knownProfileArns: { serving: PROFILE } }).record?.previousSigningProfileArns).toEqual([OLD]);
    // A class on a profile of its own does not start trusting the default profile's predecessors.
    const own = { ...fallback, artifact: { ...fallback.artifact, signingProfileName: 'isolated' } };
    expect(approvedArtifactsFor(own, options).record).not.toHaveProperty('previousSigningProfileArns');
    // No transition: the record is as it was (its custom resource's properties and physical id unchanged).
    expect(approvedArtifactsFor(l40s, { ...options, previousSigningProfileArns: [] }).record).not.toHaveProperty('previousSigningProfileArns');
  });

  test('a previous profile that is the approved one is dropped, not accepted twice', () => {
    expect(acceptedSigningProfiles({ ...APPROVED, previousSigningProfileArns: [PROFILE, OLD, OLD] })).toEqual([PROFILE, OLD]);
    // The form without the `/` after the account is no reading of the approved profile (the synth checks and the verifier
    // refuse it before this): it is not folded into it, and no signature is ever by it (sameSigningProfile).
    const noSlash = PROFILE.replace(':/signing-profiles/', ':signing-profiles/');
    expect(acceptedSigningProfiles({ ...APPROVED, previousSigningProfileArns: [noSlash] })).toEqual([PROFILE, noSlash]);
    // So the verdict never calls the current profile a previous one, and asks no evidence of it.
    const verdict = verifyArtifacts({ ...APPROVED, previousSigningProfileArns: [PROFILE] }, GOOD, OPTIONS);
    expect(verdict).toEqual({ passed: true, failures: [], signedBy: { profileArn: PROFILE, previous: false } });
  });

  test('accepts an image signed by a previous profile only, and says so', () => {
    expect(verifyArtifacts(TRANSITION, SIGNED_BY_OLD, OPTIONS))
      .toEqual({ passed: true, failures: [], signedBy: { profileArn: OLD, previous: true } });
    // Without the transition the same image fails, as before.
    const verdict = verifyArtifacts(APPROVED, SIGNED_BY_OLD, OPTIONS);
    expect(verdict.passed).toBe(false);
    expect(verdict.failures).toEqual([
      `image ${APPROVED.image} has no signature by the approved profile ${PROFILE} (signed only by ${OLD})`,
      `image ${APPROVED.image}: no Notation signature by ${PROFILE} found among its referrers`,
    ]);
  });

  test('an image signed again by the approved profile is accepted under it: the transition is complete for it', () => {
    const both: VerificationEvidence = {
      ...SIGNED_BY_OLD,
      imageSigning: { statuses: [...SIGNED_BY_OLD.imageSigning!.statuses, ...GOOD.imageSigning.statuses] },
      signatureRevocation: { signatures: [oldSignature, ...GOOD.signatureRevocation.signatures] },
    };
    expect(verifyArtifacts(TRANSITION, both, OPTIONS).signedBy).toEqual({ profileArn: PROFILE, previous: false });
  });

  test('a previous profile CloudFormation canceled when it replaced it still vouches for what it signed while Active', () => {
    const canceled = { ...SIGNED_BY_OLD, previousSigningProfiles: { [OLD]: { ...ACTIVE_OLD, status: 'Canceled' } } };
    expect(verifyArtifacts(TRANSITION, canceled, OPTIONS).passed).toBe(true);
    // The approved profile is still held to Active, as before.
    const approvedCanceled = { ...canceled, signingProfile: { ...GOOD.signingProfile, status: 'Canceled' } };
    expect(verifyArtifacts(TRANSITION, approvedCanceled, OPTIONS).failures).toEqual([`signing profile ${PROFILE} is Canceled, not Active`]);
  });

  test('a revoked, non-Notation or unread previous profile fails the class, whichever profile signed the image', () => {
    const withOld = (profile: VerificationEvidence['signingProfile'] | undefined) =>
      verifyArtifacts(TRANSITION, { ...GOOD, previousSigningProfiles: profile ? { [OLD]: profile } : {} }, OPTIONS);
    const revoked = withOld({ ...ACTIVE_OLD, status: 'Revoked', revocationRecord: { revokedBy: 'security-team' } });
    expect(revoked.passed).toBe(false);
    expect(revoked.failures).toEqual([
      `previous signing profile ${OLD} is Revoked, not Active or Canceled`,
      `previous signing profile ${OLD} was revoked (effective from ? by security-team): its signatures are no longer trusted`,
    ]);
    expect(withOld({ ...ACTIVE_OLD, platformId: 'AWSLambda-SHA384-ECDSA' }).failures).toEqual([
      `previous signing profile ${OLD} has platform AWSLambda-SHA384-ECDSA, expected Notation-OCI-SHA384-ECDSA`,
    ]);
    expect(withOld(undefined).failures).toEqual([`the previous signing profile ${OLD} was not checked`]);
  });

  test("a revoked or expired signature of a previous profile fails the image beside the approved profile's valid one", () => {
    const signatureRevocation = { signatures: [...GOOD.signatureRevocation.signatures, { ...oldSignature, revokedEntities: ['old-job'] }] };
    const verdict = verifyArtifacts(TRANSITION, { ...GOOD, signatureRevocation, previousSigningProfiles: { [OLD]: ACTIVE_OLD } }, OPTIONS);
    expect(verdict.failures).toEqual([`image ${APPROVED.image}: signature sha256:o (job old-job) is revoked: old-job`]);
    const expired = { ...oldSignature, expiry: new Date('2026-01-01T00:00:00Z') };
    const late = { signatures: [expired], checkedAt: new Date('2026-06-01T00:00:00Z') };
    expect(verifyArtifacts(TRANSITION, { ...SIGNED_BY_OLD, signatureRevocation: late }, OPTIONS).failures).toEqual([
      expect.stringContaining('signature sha256:o (job old-job) expired at 2026-01-01T00:00:00.000Z'),
    ]);
  });

  test('a previous profile is accepted only with both a COMPLETE signing status and a Notation signature by it', () => {
    const noEnvelope = verifyArtifacts(TRANSITION, { ...SIGNED_BY_OLD, signatureRevocation: { signatures: [] } }, OPTIONS);
    expect(noEnvelope.passed).toBe(false);
    expect(noEnvelope.failures).toContain(`image ${APPROVED.image}: no Notation signature by ${OLD} found among its referrers`);
    const inProgress = verifyArtifacts(TRANSITION, { ...SIGNED_BY_OLD, imageSigning: { statuses: [{ signingProfileArn: OLD, status: 'IN_PROGRESS' }] } }, OPTIONS);
    expect(inProgress.failures).toContain(`image ${APPROVED.image}: signing by ${OLD} is IN_PROGRESS, not COMPLETE`);
    expect(inProgress.signedBy).toBeUndefined();
  });

  test("a previous profile of another region than the approved one's fails (revocation is asked in one region)", () => {
    const west = OLD.replace('us-east-1', 'us-west-2');
    const evidence = { ...GOOD, previousSigningProfiles: { [west]: { ...ACTIVE_OLD, arn: west } } };
    const verdict = verifyArtifacts({ ...APPROVED, previousSigningProfileArns: [west] }, evidence, OPTIONS);
    expect(verdict.failures).toEqual([expect.stringMatching(/^previous signing profile .*us-west-2.* is not in the region of /)]);
  });
});

describe('a signing still in progress (ECR signs after the push)', () => {
  const OLD = 'arn:aws:signer:us-east-1:123456789012:/signing-profiles/serving_2025';
  const OTHER = 'arn:aws:signer:us-east-1:123456789012:/signing-profiles/someone_else';
  const status = (signingProfileArn: string, s: string) => ({ signingProfileArn, status: s });

  test('the verifier waits while an accepted profile is IN_PROGRESS and none is COMPLETE; never for another signer, nor for FAILED', () => {
    const transition = { ...APPROVED, previousSigningProfileArns: [OLD] };
    expect(signingInProgress(APPROVED, { statuses: [status(PROFILE, 'IN_PROGRESS')] })).toEqual([PROFILE]);
    expect(signingInProgress(transition, { statuses: [status(PROFILE, 'IN_PROGRESS'), status(OLD, 'IN_PROGRESS')] })).toEqual([PROFILE, OLD]);
    // One accepted profile's COMPLETE is enough: no wait for the other's.
    expect(signingInProgress(transition, { statuses: [status(PROFILE, 'COMPLETE'), status(OLD, 'IN_PROGRESS')] })).toEqual([]);
    expect(signingInProgress(transition, { statuses: [status(PROFILE, 'IN_PROGRESS'), status(OLD, 'COMPLETE')] })).toEqual([]);
    expect(signingInProgress(APPROVED, { statuses: [status(PROFILE, 'COMPLETE'), status(OTHER, 'IN_PROGRESS')] })).toEqual([]);
    expect(signingInProgress(APPROVED, { statuses: [status(PROFILE, 'FAILED')] })).toEqual([]);
    expect(signingInProgress(APPROVED, { statuses: [] })).toEqual([]);
  });

  test('IN_PROGRESS fails the image; at the deadline the failure says the signing was still in progress then', () => {
    const inProgress = { statuses: [status(PROFILE, 'IN_PROGRESS')] };
    expect(verifyArtifacts(APPROVED, { ...GOOD, imageSigning: inProgress }, OPTIONS).failures).toEqual([
      expect.stringMatching(/signing by .*serving is IN_PROGRESS, not COMPLETE$/),
    ]);
    const atDeadline = verifyArtifacts(APPROVED, { ...GOOD, imageSigning: { ...inProgress, inProgressAtDeadline: true } }, OPTIONS);
    expect(atDeadline.passed).toBe(false);
    expect(atDeadline.failures).toEqual([expect.stringMatching(/signing by .*serving was still IN_PROGRESS at the verifier's deadline/)]);
  });
});

describe('signing profile ARNs: one parser for the synth checks and the verifier', () => {
  test.each(ACCEPTED_PROFILE_ARNS)('reads %s', (arn, parts) => {
    expect(parseSigningProfileArn(arn)).toEqual(parts);
  });

  test.each(REFUSED_PROFILE_ARNS)('refuses %s (%s)', (arn) => {
    expect(parseSigningProfileArn(arn)).toBeUndefined();
  });

  test('reads every ARN the construct builds from a profile name, in any partition', () => {
    for (const partition of ['aws', 'aws-cn', 'aws-us-gov', 'aws-iso', 'aws-iso-b']) {
      expect(parseSigningProfileArn(signingProfileArn(partition, 'r-1', '123456789012', 'serving'))).toEqual({ region: 'r-1', account: '123456789012', name: 'serving' });
    }
  });
});

describe('the approved version must be the current one for a consumer that reads the key without a version (SageMaker)', () => {
  const where = 's3://models-bucket/m.tar';
  test.each([
    ['a later upload to the key', { versionId: 'v2' }, `${where}: the current version is v2, approved v1 (a later upload to the key)`],
    ['an unversioned bucket (S3 sends no version id)', {}, `${where}: S3 returned no version id for the current object (is the bucket versioned?)`],
    ['no current object (deleted)', { missing: true }, `${where}: the key has no current object`],
  ])('fails on %s', (_, current, message) => {
    const verdict = verifyArtifacts(APPROVED, { ...GOOD, currentModelObject: current }, OPTIONS);
    expect(verdict.passed).toBe(false);
    expect(verdict.failures).toEqual([expect.stringContaining(message)]);
    expect(verdict.failures[0]).toContain('SageMaker reads the current object of the key');
  });

  test('is not asked of a consumer that fetches the approved version itself (EKS), nor without an approved version', () => {
    const later = { ...GOOD, currentModelObject: { versionId: 'v2' } };
    expect(verifyArtifacts(APPROVED, later, { ...OPTIONS, requireCurrentVersion: false }).passed).toBe(true);
    expect(verifyArtifacts(APPROVED, { ...GOOD, currentModelObject: undefined }, { ...OPTIONS, requireCurrentVersion: undefined }).passed).toBe(true);
    const unpinned = { ...APPROVED, modelData: { ...MODEL, versionId: '' } };
    expect(verifyArtifacts(unpinned, { ...GOOD, modelObject: { ...GOOD.modelObject, versionId: 'v2' }, currentModelObject: undefined }, OPTIONS).passed).toBe(true);
  });
});

describe('modelObjectFailures', () => {
  test('a composite checksum is never compared with the whole-object digest', () => {
    // The base64 part happens to be the approved digest's, but a checksum of part checksums proves nothing about it.
    const composite = `${Buffer.from(MODEL.sha256, 'hex').toString('base64')}-4`;
    expect(modelObjectFailures(MODEL, { versionId: 'v1', checksumSha256: composite }, 'reject')).toEqual([
      expect.stringContaining('S3 holds only a composite checksum'),
    ]);
  });

  test('the metadata digest is only trusted for a pinned version', () => {
    expect(modelObjectFailures({ ...MODEL, versionId: '' }, { metadataSha256: MODEL.sha256 }, 'metadata')).toEqual([
      expect.stringContaining('only trusted for a pinned object version'),
    ]);
  });
});

describe('retries', () => {
  test('classifies throttling and server faults as retryable, denials and missing objects as final', () => {
    expect(isRetryableError({ name: 'ThrottlingException' })).toBe(true);
    expect(isRetryableError({ name: 'TooManyRequestsException' })).toBe(true);
    expect(isRetryableError({ name: 'X', $metadata: { httpStatusCode: 503 } })).toBe(true);
    expect(isRetryableError({ name: 'AccessDeniedException', $metadata: { httpStatusCode: 400 } })).toBe(false);
    expect(isRetryableError({ name: 'NoSuchKey', $metadata: { httpStatusCode: 404 } })).toBe(false);
    expect(isRetryableError(undefined)).toBe(false);
  });

  test('makes at most maxAttempts calls, sleeps between them within the cap, and rethrows the last error', async () => {
    const attempts = fc.integer({ min: 1, max: 8 });
    const failuresBeforeSuccess = fc.integer({ min: 0, max: 12 });
    const baseDelay = fc.integer({ min: 1, max: 1000 });
    await fc.assert(
      fc.asyncProperty(attempts, failuresBeforeSuccess, baseDelay, async (maxAttempts, failures, base) => {
        let calls = 0;
        const sleeps: number[] = [];
        const op = async () => {
          calls++;
          if (calls <= failures) throw Object.assign(new Error(`throttled ${calls}`), { name: 'ThrottlingException' });
          return 'ok';
        };
        const sleep = async (ms: number) => void sleeps.push(ms);
        const result = withRetries(op, { maxAttempts, baseDelayMs: base, maxDelayMs: 4 * base, sleep, random: () => 0.5 });
        if (failures < maxAttempts) {
          await expect(result).resolves.toBe('ok');
          expect(calls).toBe(failures + 1);
        } else {
          await expect(result).rejects.toThrow(`throttled ${maxAttempts}`);
          expect(calls).toBe(maxAttempts);
        }
        expect(sleeps).toHaveLength(calls - 1);
        for (const ms of sleeps) expect(ms).toBeLessThanOrEqual(4 * base);
      }),
      SEEDED,
    );
  });

  test('backoff doubles up to the cap with half jitter', () => {
    const o = { baseDelayMs: 100, maxDelayMs: 1000 };
    expect([1, 2, 3, 4, 5].map((a) => backoffDelayMs(a, { ...o, random: () => 0 }))).toEqual([50, 100, 200, 400, 500]);
    expect(backoffDelayMs(3, { ...o, random: () => 0.999999 })).toBe(400);
  });
});

test('docs/reconciler.md gives the verifier its own retry bounds and its retried denials, not the reconciler\'s policy (R250)', () => {
  const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'reconciler.md'), 'utf8').replace(/\s+/g, ' ');
  const { maxAttempts, baseDelayMs, maxDelayMs } = VERIFIER_RETRY_DEFAULTS;
  expect(doc).toContain(`retried within the run (${DEFAULT_RETRY.maxAttempts} attempts, exponential backoff`);
  expect(doc).toContain(`which the artifact verifier also calls with bounds of its own, ${maxAttempts} attempts from ${baseDelayMs} ms doubling to at `
    + `most ${maxDelayMs / 1000} s unless \`verifierRetry\` says otherwise, and with access denials retried too`);
  expect(doc).not.toContain('the same policy the artifact verifier uses');
});
