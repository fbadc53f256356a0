import { createHash } from 'node:crypto';
import {
  BatchGetImageCommand,
  DescribeImageSigningStatusCommand,
  ECRClient,
  GetDownloadUrlForLayerCommand,
  ListImageReferrersCommand,
} from '@aws-sdk/client-ecr';
import { KMSClient, KMSInvalidSignatureException, VerifyCommand } from '@aws-sdk/client-kms';
import { GetObjectTaggingCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { GetRevocationStatusCommand, GetSigningProfileCommand, SignerClient } from '@aws-sdk/client-signer';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { handler, physicalIdOf, SIGNATURE_READ_RESERVE_MS } from '../../lambda/artifact-verifier';
import { MODEL_SIGNATURE_TAG } from '../../lib/core/trust/artifact-verification';
import { CHAIN_HASHES, coseEnvelope, coseTag, jwsEnvelope } from './envelope-fixtures';
import { ACCEPTED_PROFILE_ARNS, REFUSED_PROFILE_ARNS } from './profile-arn-forms';

// GIVEN an approved record: image vllm@sha256:aaa..., signed by profile `serving`, model data v1 with a known digest.
const DIGEST = `sha256:${'a'.repeat(64)}`;
const IMAGE = `123456789012.dkr.ecr.us-east-1.amazonaws.com/vllm@${DIGEST}`;
const PROFILE = 'arn:aws:signer:us-east-1:123456789012:/signing-profiles/serving';
const PROFILE_VERSION = `${PROFILE}/v1abc`;
const OTHER_PROFILE = 'arn:aws:signer:us-east-1:123456789012:/signing-profiles/someone_else';
const JOB = 'arn:aws:signer:us-east-1:123456789012:/signing-jobs/5808635f-05de-4207-a891-c95f827b50f4';
const KEY = 'arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
const MODEL_SHA = 'b'.repeat(64);
const MODEL_SHA_B64 = Buffer.from(MODEL_SHA, 'hex').toString('base64');
const SIGNATURE_MANIFEST = `sha256:${'c'.repeat(64)}`;
const SIGNED_AT = new Date('2026-10-01T12:00:00Z');
const RESPONSE_URL = 'https://cloudformation-custom-resource-response.example/response';
const ENVELOPE_URL = 'https://prod-us-east-1-starport-layer-bucket.example/envelope';

const ecr = mockClient(ECRClient);
const signer = mockClient(SignerClient);
const s3 = mockClient(S3Client);
const kms = mockClient(KMSClient);

let responses: { Status: string; Reason: string; PhysicalResourceId: string; Data?: Record<string, string> }[];
/** The response bodies as sent (the JSON text). */
let bodies: string[];
let envelope: { mediaType: string; bytes: Buffer };

function event(type: 'Create' | 'Update' | 'Delete', overrides: Record<string, unknown> = {}): CloudFormationCustomResourceEvent {
  const ResourceProperties = {
    ServiceToken: 'arn:aws:lambda:us-east-1:123456789012:function:verifier',
    Record: {
      className: 'l40s',
      image: IMAGE,
      signingProfileArn: PROFILE,
      modelData: { bucket: 'models-bucket', key: 'llama3-8b/bf16.tar', versionId: 'v1', sha256: MODEL_SHA },
    },
    ModelSigningKeyArn: KEY,
    MultipartDigest: 'metadata',
    MaxAttempts: '4',
    BaseDelayMs: '1',
    MaxDelayMs: '2',
    ...overrides,
  };
  const base = {
    ServiceToken: ResourceProperties.ServiceToken,
    ResponseURL: RESPONSE_URL,
    StackId: 'arn:aws:cloudformation:us-east-1:123456789012:stack/test/1',
    RequestId: 'req-1',
    LogicalResourceId: 'VerifyL40s',
    ResourceType: 'Custom::ClassArtifactVerification',
    ResourceProperties,
  };
  if (type === 'Create') return { ...base, RequestType: 'Create' };
  if (type === 'Update') return { ...base, RequestType: 'Update', PhysicalResourceId: 'artifact-gate/l40s', OldResourceProperties: ResourceProperties };
  return { ...base, RequestType: 'Delete', PhysicalResourceId: 'artifact-gate/l40s' };
}

/** The input of the first call of `command` on a mocked client (fails the test when there was none). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function firstInput(mock: { commandCalls: (c: any) => { args: [{ input: unknown }] }[] }, command: unknown): unknown {
  const calls = mock.commandCalls(command);
  expect(calls.length).toBeGreaterThan(0);
  return calls[0].args[0].input;
}

const context = (ms = 300_000) => ({ getRemainingTimeInMillis: () => ms });

function setAllGood(): void {
  ecr.on(DescribeImageSigningStatusCommand).resolves({ signingStatuses: [{ signingProfileArn: PROFILE, status: 'COMPLETE' }] });
  ecr.on(ListImageReferrersCommand).resolves({
    referrers: [{ digest: SIGNATURE_MANIFEST, mediaType: 'application/vnd.oci.image.manifest.v1+json', artifactType: 'application/vnd.cncf.notary.signature', size: 700 }],
  });
  envelope = { mediaType: 'application/jose+json', bytes: jwsEnvelope({ targetDigest: DIGEST, profileVersionArn: PROFILE_VERSION, jobArn: JOB, signingTime: SIGNED_AT }) };
  ecr.on(BatchGetImageCommand).callsFake(() => ({
    images: [
      {
        imageManifest: JSON.stringify({
          schemaVersion: 2,
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          artifactType: 'application/vnd.cncf.notary.signature',
          layers: [{ mediaType: envelope.mediaType, digest: `sha256:${createHash('sha256').update(envelope.bytes).digest('hex')}`, size: envelope.bytes.length }],
          subject: { digest: DIGEST },
        }),
      },
    ],
  }));
  ecr.on(GetDownloadUrlForLayerCommand).resolves({ downloadUrl: ENVELOPE_URL });
  signer.on(GetSigningProfileCommand).resolves({ arn: PROFILE, status: 'Active', platformId: 'Notation-OCI-SHA384-ECDSA', profileVersionArn: PROFILE_VERSION });
  signer.on(GetRevocationStatusCommand).resolves({ revokedEntities: [] });
  s3.on(HeadObjectCommand).resolves({ VersionId: 'v1', ChecksumSHA256: MODEL_SHA_B64, ChecksumType: 'FULL_OBJECT' });
  s3.on(GetObjectTaggingCommand).resolves({ TagSet: [{ Key: MODEL_SIGNATURE_TAG, Value: Buffer.from('der-signature').toString('base64') }] });
  kms.on(VerifyCommand).resolves({ SignatureValid: true, KeyId: KEY, SigningAlgorithm: 'ECDSA_SHA_256' });
}

beforeEach(() => {
  ecr.reset();
  signer.reset();
  s3.reset();
  kms.reset();
  responses = [];
  bodies = [];
  jest.spyOn(console, 'log').mockImplementation(() => undefined);
  jest.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
    const url = String(input);
    if (url === RESPONSE_URL) {
      bodies.push(String(init?.body));
      responses.push(JSON.parse(String(init?.body)));
      return new Response('', { status: 200 });
    }
    if (url === ENVELOPE_URL) return new Response(envelope.bytes, { status: 200 });
    throw new Error(`unexpected fetch ${url}`);
  });
  setAllGood();
});

afterEach(() => jest.restoreAllMocks());

/** Runs the handler and returns its single response; a failure test asserts it is FAILED (never SUCCESS). */
async function run(e: CloudFormationCustomResourceEvent = event('Create'), ms?: number) {
  await handler(e, context(ms));
  expect(responses).toHaveLength(1);
  return responses[0];
}

async function expectRejected(reason: RegExp, e?: CloudFormationCustomResourceEvent) {
  const res = await run(e);
  expect(res.Status).toBe('FAILED');
  expect(res.Data).toBeUndefined();
  expect(res.Reason).toMatch(reason);
  return res;
}

describe('artifact verifier', () => {
  test('reports SUCCESS when image, signer, revocation, model object and model signature all check out', async () => {
    const res = await run();
    expect(res).toMatchObject({ Status: 'SUCCESS', Data: { ImageDigest: DIGEST, ModelSha256: MODEL_SHA } });
    expect(res.PhysicalResourceId).toMatch(/^artifact-gate\/l40s\/[0-9a-f]{32}$/);
    expect(firstInput(ecr, DescribeImageSigningStatusCommand)).toMatchObject({ registryId: '123456789012', repositoryName: 'vllm', imageId: { imageDigest: DIGEST } });
    expect(firstInput(ecr, ListImageReferrersCommand)).toMatchObject({
      subjectId: { imageDigest: DIGEST },
      filter: { artifactTypes: ['application/vnd.cncf.notary.signature'], artifactStatus: 'ANY' },
    });
    expect(firstInput(signer, GetSigningProfileCommand)).toMatchObject({ profileName: 'serving', profileOwner: '123456789012' });
    expect(firstInput(signer, GetRevocationStatusCommand)).toMatchObject({
      signatureTimestamp: SIGNED_AT,
      platformId: 'Notation-OCI-SHA384-ECDSA',
      profileVersionArn: PROFILE_VERSION,
      jobArn: JOB,
      certificateHashes: CHAIN_HASHES,
    });
    expect(firstInput(s3, HeadObjectCommand)).toMatchObject({ Bucket: 'models-bucket', Key: 'llama3-8b/bf16.tar', VersionId: 'v1', ChecksumMode: 'ENABLED' });
    expect(firstInput(s3, GetObjectTaggingCommand)).toMatchObject({ Bucket: 'models-bucket', Key: 'llama3-8b/bf16.tar', VersionId: 'v1' });
    const verify = kms.commandCalls(VerifyCommand)[0].args[0].input;
    expect(verify).toMatchObject({ KeyId: KEY, MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_256' });
    expect(Buffer.from(verify.Message!).toString('hex')).toBe(MODEL_SHA);
    expect(Buffer.from(verify.Signature!).toString()).toBe('der-signature');
  });

  test('bounds both downloads (the envelope and the answer to CloudFormation) with a timeout signal', async () => {
    expect((await run()).Status).toBe('SUCCESS');
    const calls = (globalThis.fetch as jest.Mock).mock.calls as [string, RequestInit | undefined][];
    expect(calls.map(([url]) => url)).toEqual([ENVELOPE_URL, RESPONSE_URL]);
    for (const [, init] of calls) expect(init?.signal).toBeInstanceOf(AbortSignal);
  });

  test('reads COSE envelopes as well as JWS', async () => {
    envelope = { mediaType: 'application/cose', bytes: coseEnvelope({ targetDigest: DIGEST, profileVersionArn: PROFILE_VERSION, jobArn: JOB, signingTime: SIGNED_AT }) };
    expect((await run()).Status).toBe('SUCCESS');
    expect(firstInput(signer, GetRevocationStatusCommand)).toMatchObject({ certificateHashes: CHAIN_HASHES, signatureTimestamp: SIGNED_AT });
  });

  describe('signature expiry (io.cncf.notary.expiry, optional)', () => {
    const facts = { targetDigest: DIGEST, profileVersionArn: PROFILE_VERSION, jobArn: JOB, signingTime: SIGNED_AT };
    const seconds = (d: Date) => Math.floor(d.getTime() / 1000);
    const future = new Date(Date.now() + 86_400_000);
    const past = new Date('2026-11-01T00:00:00Z');
    const jws = (expiry: unknown) => ({ mediaType: 'application/jose+json', bytes: jwsEnvelope({ ...facts, expiry }) });
    const cose = (expiry: unknown) => ({ mediaType: 'application/cose', bytes: coseEnvelope({ ...facts, expiry }) });

    test('passes a signature that expires later (JWS: RFC 3339; COSE: tag 1 epoch seconds)', async () => {
      envelope = jws(future.toISOString().replace(/\.\d+Z$/, 'Z'));
      expect((await run()).Status).toBe('SUCCESS');
      responses = [];
      envelope = cose(coseTag(1, seconds(future)));
      expect((await run()).Status).toBe('SUCCESS');
    });

    test.each([
      ['JWS', () => jws('2026-11-01T00:00:00Z')],
      ['JWS with an offset', () => jws('2026-11-01T01:00:00+01:00')],
      ['COSE', () => cose(coseTag(1, seconds(past)))],
    ])('fails a %s signature that expired', async (_, make) => {
      envelope = make();
      await expectRejected(new RegExp(`signature ${SIGNATURE_MANIFEST} \\(job .*\\) expired at 2026-11-01T00:00:00.000Z`));
    });

    test.each([
      ['JWS, not RFC 3339', () => jws('next tuesday')],
      ['JWS, a number', () => jws(seconds(future))],
      ['COSE, an untagged integer', () => cose(seconds(future))],
      ['COSE, another tag', () => cose(coseTag(0, future.toISOString()))],
    ])('fails closed on an unreadable expiry (%s): the signature counts as unreadable', async (_, make) => {
      envelope = make();
      await expectRejected(/signatures that could not be read \(any may be a revoked one\): .*signature expiry is unreadable/);
    });
  });

  test('Update re-verifies and names the record it verified', async () => {
    const update = event('Update');
    expect(await run(update)).toMatchObject({ Status: 'SUCCESS', PhysicalResourceId: physicalIdOf(update.ResourceProperties) });
    expect(ecr.commandCalls(DescribeImageSigningStatusCommand).length).toBeGreaterThan(0);
  });

  describe('a rollback to the record in force (CloudFormation calls Update again with the old properties)', () => {
    const revoke = () => signer.on(GetRevocationStatusCommand).resolves({ revokedEntities: [JOB] });
    const deployed = event('Create').ResourceProperties;

    test('succeeds without checking again, though its signature was revoked since', async () => {
      revoke();
      const rollback = { ...event('Update'), PhysicalResourceId: physicalIdOf(deployed), OldResourceProperties: { ...deployed, Nonce: 'r2' } };
      expect(await run(rollback as CloudFormationCustomResourceEvent)).toMatchObject({ Status: 'SUCCESS', PhysicalResourceId: physicalIdOf(deployed) });
      expect(ecr.calls()).toHaveLength(0);
      expect(signer.calls()).toHaveLength(0);
    });

    test('a forward update (a new nonce) is checked, and a failure keeps the id in force so that the rollback is recognised', async () => {
      revoke();
      const bumped = { ...event('Update', { Nonce: 'r2' }), PhysicalResourceId: physicalIdOf(deployed), OldResourceProperties: deployed };
      const res = await expectRejected(/is revoked/, bumped as CloudFormationCustomResourceEvent);
      expect(res.PhysicalResourceId).toBe(physicalIdOf(deployed));
      expect(physicalIdOf(bumped.ResourceProperties)).not.toBe(physicalIdOf(deployed));
    });

    test('the id ignores the ServiceToken (a replaced function checks the same record) and the order of keys', () => {
      const { ServiceToken: _, ...rest } = deployed;
      expect(physicalIdOf({ ...rest, ServiceToken: 'arn:aws:lambda:us-east-1:123456789012:function:other' })).toBe(physicalIdOf(deployed));
      expect(physicalIdOf(Object.fromEntries(Object.entries(deployed).reverse()))).toBe(physicalIdOf(deployed));
      expect(physicalIdOf({ ...deployed, MaxAttempts: '5' })).not.toBe(physicalIdOf(deployed));
    });
  });

  test('a failed Create answers an id no record has, so a retry of it is checked again', async () => {
    signer.on(GetRevocationStatusCommand).resolves({ revokedEntities: [JOB] });
    const created = event('Create');
    const res = await expectRejected(/is revoked/, created);
    expect(res.PhysicalResourceId).toBe('artifact-gate/l40s/unverified');
  });

  test("another signer's signature (no Signer attributes) is passed over, not counted as unreadable", async () => {
    const other = { targetDigest: DIGEST, signingTime: SIGNED_AT } as unknown as Parameters<typeof jwsEnvelope>[0];
    envelope = { mediaType: 'application/jose+json', bytes: jwsEnvelope(other) };
    const res = await expectRejected(/no Notation signature by .* found among its referrers/);
    expect(res.Reason).not.toMatch(/could not be read/);
  });

  test('Delete always succeeds and calls nothing', async () => {
    ecr.on(DescribeImageSigningStatusCommand).rejects(new Error('must not be called'));
    expect((await run(event('Delete'))).Status).toBe('SUCCESS');
    expect(ecr.calls()).toHaveLength(0);
    expect(s3.calls()).toHaveLength(0);
  });

  test('fails when the image is not signed', async () => {
    ecr.on(DescribeImageSigningStatusCommand).resolves({ signingStatuses: [] });
    await expectRejected(/class 'l40s' artifacts rejected: .*has no signature by the approved profile .*serving \(it is not signed\)/);
  });

  test('fails when the image is signed by another profile only', async () => {
    ecr.on(DescribeImageSigningStatusCommand).resolves({ signingStatuses: [{ signingProfileArn: OTHER_PROFILE, status: 'COMPLETE' }] });
    envelope = {
      mediaType: 'application/jose+json',
      bytes: jwsEnvelope({ targetDigest: DIGEST, profileVersionArn: `${OTHER_PROFILE}/x1`, jobArn: JOB, signingTime: SIGNED_AT }),
    };
    const res = await expectRejected(/signed only by .*someone_else/);
    expect(res.Reason).toMatch(/no Notation signature by .*serving found/);
    expect(signer.commandCalls(GetRevocationStatusCommand)).toHaveLength(0);
  });

  test('fails at once when signing by the approved profile FAILED: the status is read once, not waited on', async () => {
    ecr.on(DescribeImageSigningStatusCommand).resolves({
      signingStatuses: [{ signingProfileArn: PROFILE, status: 'FAILED', failureCode: 'SIGNING_FAILED', failureReason: 'profile canceled' }],
    });
    await expectRejected(/signing by .*serving FAILED \(SIGNING_FAILED: profile canceled\)/);
    expect(ecr.commandCalls(DescribeImageSigningStatusCommand)).toHaveLength(1);
  });

  describe('a signing still in progress (ECR signs after the push)', () => {
    const inProgress = { signingStatuses: [{ signingProfileArn: PROFILE, status: 'IN_PROGRESS' as const }] };

    test('is read again until COMPLETE, and the signatures are read only then', async () => {
      ecr.on(DescribeImageSigningStatusCommand).resolvesOnce(inProgress).resolvesOnce(inProgress)
        .resolves({ signingStatuses: [{ signingProfileArn: PROFILE, status: 'COMPLETE' }] });
      expect((await run()).Status).toBe('SUCCESS');
      expect(ecr.commandCalls(DescribeImageSigningStatusCommand)).toHaveLength(3);
      const order = ecr.calls().map((c) => (c.args[0] as object).constructor.name);
      expect(order.indexOf('ListImageReferrersCommand')).toBeGreaterThan(order.lastIndexOf('DescribeImageSigningStatusCommand'));
    });

    test('fails closed when it is still IN_PROGRESS at the deadline, saying so, before the Lambda timeout', async () => {
      ecr.on(DescribeImageSigningStatusCommand).resolves(inProgress);
      // 15 s kept to answer CloudFormation, 15 s to read the signatures after the wait: 100 ms of waiting.
      const res = await run(event('Create'), 15_000 + SIGNATURE_READ_RESERVE_MS + 100);
      expect(res.Status).toBe('FAILED');
      expect(res.Reason).toMatch(/signing by .*serving was still IN_PROGRESS at the verifier's deadline/);
      expect(res.Reason).not.toMatch(/did not finish within/);
      expect(ecr.commandCalls(DescribeImageSigningStatusCommand).length).toBeGreaterThan(1);
    });

    test("another profile's signing in progress is not waited for; one FAILED ends the wait", async () => {
      ecr.on(DescribeImageSigningStatusCommand).resolves({
        signingStatuses: [{ signingProfileArn: PROFILE, status: 'COMPLETE' }, { signingProfileArn: OTHER_PROFILE, status: 'IN_PROGRESS' }],
      });
      expect((await run()).Status).toBe('SUCCESS');
      expect(ecr.commandCalls(DescribeImageSigningStatusCommand)).toHaveLength(1);
      ecr.on(DescribeImageSigningStatusCommand).resolvesOnce(inProgress)
        .resolves({ signingStatuses: [{ signingProfileArn: PROFILE, status: 'FAILED', failureCode: 'X', failureReason: 'y' }] });
      responses = [];
      await expectRejected(/signing by .*serving FAILED \(X: y\)/);
    });
  });

  test('fails when the signature is revoked', async () => {
    signer.on(GetRevocationStatusCommand).resolves({ revokedEntities: [JOB] });
    await expectRejected(new RegExp(`signature ${SIGNATURE_MANIFEST} \\(job .*\\) is revoked: ${JOB}`));
  });

  test('fails when a certificate of the chain is revoked', async () => {
    signer.on(GetRevocationStatusCommand).resolves({ revokedEntities: [CHAIN_HASHES[0]] });
    await expectRejected(/is revoked: [0-9a-f]{192}/);
  });

  test('fails when the signing profile is revoked', async () => {
    signer.on(GetSigningProfileCommand).resolves({
      arn: PROFILE,
      status: 'Revoked',
      platformId: 'Notation-OCI-SHA384-ECDSA',
      revocationRecord: { revocationEffectiveFrom: new Date('2026-09-01T00:00:00Z'), revokedBy: 'security-team' },
    });
    const res = await expectRejected(/profile .*serving is Revoked, not Active/);
    expect(res.Reason).toMatch(/signing profile .*serving was revoked \(effective from 2026-09-01T00:00:00.000Z by security-team\)/);
  });

  test('fails when the signature covers another digest', async () => {
    const bytes = jwsEnvelope({ targetDigest: `sha256:${'d'.repeat(64)}`, profileVersionArn: PROFILE_VERSION, jobArn: JOB, signingTime: SIGNED_AT });
    envelope = { mediaType: 'application/jose+json', bytes };
    await expectRejected(/covers sha256:d{64}, not sha256:a{64}/);
  });

  test('fails when the signature envelope does not match its manifest digest (tampered blob)', async () => {
    const good = envelope.bytes;
    ecr.on(BatchGetImageCommand).resolves({
      images: [{ imageManifest: JSON.stringify({ layers: [{ mediaType: 'application/jose+json', digest: `sha256:${createHash('sha256').update(good).digest('hex')}` }] }) }],
    });
    envelope = { mediaType: 'application/jose+json', bytes: Buffer.concat([good, Buffer.from(' ')]) };
    await expectRejected(/no Notation signature .*; .*signatures that could not be read \(any may be a revoked one\): .*envelope digest is sha256:/);
  });

  test('fails when one signature cannot be read, even beside a good one: it may be the revoked one', async () => {
    const unreadable = `sha256:${'9'.repeat(64)}`;
    ecr.on(ListImageReferrersCommand).resolves({
      referrers: [SIGNATURE_MANIFEST, unreadable].map((digest) => ({ digest, mediaType: 'application/vnd.oci.image.manifest.v1+json', artifactType: 'application/vnd.cncf.notary.signature', size: 700 })),
    });
    ecr.on(BatchGetImageCommand, { imageIds: [{ imageDigest: unreadable }] }).resolves({ images: [] });
    const res = await expectRejected(new RegExp(`signatures that could not be read \\(any may be a revoked one\\): ${unreadable}`));
    expect(res.Reason).not.toMatch(/no Notation signature/);
  });

  test('lists archived signatures too, and fails when an archived one beside a good one cannot be read', async () => {
    const archived = `sha256:${'8'.repeat(64)}`;
    // ECR lists only ACTIVE referrers unless the request asks for others: answer the archived one only to 'ANY'.
    ecr.on(ListImageReferrersCommand, { filter: { artifactTypes: ['application/vnd.cncf.notary.signature'], artifactStatus: 'ANY' } }).resolves({
      referrers: [
        { digest: SIGNATURE_MANIFEST, mediaType: 'application/vnd.oci.image.manifest.v1+json', artifactType: 'application/vnd.cncf.notary.signature', size: 700 },
        { digest: archived, mediaType: 'application/vnd.oci.image.manifest.v1+json', artifactType: 'application/vnd.cncf.notary.signature', size: 700, artifactStatus: 'ARCHIVED' },
      ],
    });
    ecr.on(BatchGetImageCommand, { imageIds: [{ imageDigest: archived }] }).resolves({
      images: [],
      failures: [{ imageId: { imageDigest: archived }, failureCode: 'ImageNotFound', failureReason: 'archived' }],
    });
    const res = await expectRejected(new RegExp(`signatures that could not be read \\(any may be a revoked one\\): ${archived}`));
    expect(res.Reason).not.toMatch(/no Notation signature/);
  });

  test('fails when the image has more signature referrers than the verifier reads', async () => {
    const referrer = (i: number) => ({ digest: `sha256:${String(i).padStart(64, '0')}`, mediaType: 'application/vnd.oci.image.manifest.v1+json', artifactType: 'application/vnd.cncf.notary.signature', size: 700 });
    ecr.on(ListImageReferrersCommand)
      .resolvesOnce({ referrers: Array.from({ length: 15 }, (_, i) => referrer(i)), nextToken: 'a' })
      .resolvesOnce({ referrers: Array.from({ length: 15 }, (_, i) => referrer(15 + i)), nextToken: 'b' });
    await expectRejected(/more signature referrers beyond the 20 read were not checked/);
  });

  test('fails when the image has more signature referrers than the verifier reads, all on one page', async () => {
    const referrer = (i: number) => ({ digest: `sha256:${String(i).padStart(64, '0')}`, mediaType: 'application/vnd.oci.image.manifest.v1+json', artifactType: 'application/vnd.cncf.notary.signature', size: 700 });
    ecr.on(ListImageReferrersCommand).resolves({ referrers: Array.from({ length: 30 }, (_, i) => referrer(i)) });
    await expectRejected(/10 signature referrers beyond the 20 read were not checked/);
  });

  test('fails when a page of signature referrers is left unread', async () => {
    const referrer = (i: number) => ({ digest: `sha256:${String(i).padStart(64, '0')}`, mediaType: 'application/vnd.oci.image.manifest.v1+json', artifactType: 'application/vnd.cncf.notary.signature', size: 700 });
    ecr.on(ListImageReferrersCommand).resolves({ referrers: Array.from({ length: 20 }, (_, i) => referrer(i)), nextToken: 'more' });
    await expectRejected(/more signature referrers beyond the 20 read were not checked/);
    expect(ecr.commandCalls(ListImageReferrersCommand)).toHaveLength(1);
  });

  test('fails when the model object digest does not match', async () => {
    s3.on(HeadObjectCommand).resolves({ VersionId: 'v1', ChecksumSHA256: Buffer.from('e'.repeat(64), 'hex').toString('base64'), ChecksumType: 'FULL_OBJECT' });
    await expectRejected(new RegExp(`S3 SHA-256 is e{64}, approved ${MODEL_SHA}`));
  });

  test('fails when the model object version is not the approved one', async () => {
    s3.on(HeadObjectCommand).resolves({ VersionId: 'v2', ChecksumSHA256: MODEL_SHA_B64, ChecksumType: 'FULL_OBJECT' });
    await expectRejected(/object version is v2, approved v1/);
  });

  test('fails when the pinned version is a delete marker', async () => {
    s3.on(HeadObjectCommand).resolves({ DeleteMarker: true, VersionId: 'v1' });
    await expectRejected(/version v1 is a delete marker/);
  });

  test('fails when the KMS signature does not verify (KMSInvalidSignatureException)', async () => {
    kms.on(VerifyCommand).rejects(new KMSInvalidSignatureException({ message: 'invalid', $metadata: {} }));
    await expectRejected(new RegExp(`signature of SHA-256 ${MODEL_SHA} does not verify with KMS key ${KEY}`));
    expect(kms.commandCalls(VerifyCommand)).toHaveLength(1);
  });

  test('fails when KMS answers SignatureValid: false', async () => {
    kms.on(VerifyCommand).resolves({ SignatureValid: false });
    await expectRejected(/does not verify with KMS key/);
  });

  test('fails when the model object carries no signature tag', async () => {
    s3.on(GetObjectTaggingCommand).resolves({ TagSet: [{ Key: 'owner', Value: 'ml' }] });
    await expectRejected(new RegExp(`no ${MODEL_SIGNATURE_TAG} tag on version v1`));
    expect(kms.commandCalls(VerifyCommand)).toHaveLength(0);
  });

  describe('RequireCurrentVersion (SageMaker reads the key with no version id)', () => {
    const sagemaker = () => event('Create', { RequireCurrentVersion: 'true' });
    /** The pinned HeadObject answers the approved version whatever is current; the unversioned one the current object. */
    const currentIs = (answer: Record<string, unknown> | Error) => {
      const pinned = { VersionId: 'v1', ChecksumSHA256: MODEL_SHA_B64, ChecksumType: 'FULL_OBJECT' as const };
      s3.on(HeadObjectCommand).callsFake((input: { VersionId?: string }) => {
        if (input.VersionId === 'v1') return pinned;
        if (answer instanceof Error) throw answer;
        return answer;
      });
    };

    test('passes when the approved version is the current one, asking S3 with and without the version id', async () => {
      currentIs({ VersionId: 'v1' });
      expect((await run(sagemaker())).Status).toBe('SUCCESS');
      const heads = s3.commandCalls(HeadObjectCommand).map((c) => c.args[0].input);
      expect(heads).toEqual([
        expect.objectContaining({ VersionId: 'v1', ChecksumMode: 'ENABLED' }),
        { Bucket: 'models-bucket', Key: 'llama3-8b/bf16.tar' },
      ]);
    });

    test('fails when a later upload made another version current: SageMaker would serve it', async () => {
      currentIs({ VersionId: 'v2', ChecksumSHA256: Buffer.from('e'.repeat(64), 'hex').toString('base64') });
      await expectRejected(/the current version is v2, approved v1 \(a later upload to the key\); SageMaker reads the current object/, sagemaker());
    });

    test('fails when the bucket returns no version id (unversioned)', async () => {
      currentIs({});
      await expectRejected(/S3 returned no version id for the current object \(is the bucket versioned\?\)/, sagemaker());
    });

    test('fails when the key has no current object (404)', async () => {
      currentIs(Object.assign(new Error('NotFound'), { name: 'NotFound', $metadata: { httpStatusCode: 404 } }));
      await expectRejected(/the key has no current object/, sagemaker());
    });

    test('without it (EKS fetches the pinned version itself) only the pinned version is read', async () => {
      currentIs({ VersionId: 'v2' });
      expect((await run()).Status).toBe('SUCCESS');
      expect(s3.commandCalls(HeadObjectCommand).map((c) => c.args[0].input.VersionId)).toEqual(['v1']);
    });
  });

  describe('multipart uploads (composite checksum)', () => {
    beforeEach(() => {
      s3.on(HeadObjectCommand).resolves({ VersionId: 'v1', ChecksumSHA256: `${MODEL_SHA_B64.slice(0, -1)}A=-12`, ChecksumType: 'COMPOSITE', Metadata: { sha256: MODEL_SHA } });
    });

    test('passes on the version metadata digest under the metadata policy', async () => {
      expect((await run()).Status).toBe('SUCCESS');
    });

    test('fails when the metadata digest differs', async () => {
      s3.on(HeadObjectCommand).resolves({ VersionId: 'v1', ChecksumSHA256: 'abc=-3', ChecksumType: 'COMPOSITE', Metadata: { sha256: 'f'.repeat(64) } });
      await expectRejected(/x-amz-meta-sha256 is f{64}, approved b{64}/);
    });

    test('fails when the metadata digest is missing', async () => {
      s3.on(HeadObjectCommand).resolves({ VersionId: 'v1', ChecksumSHA256: 'abc=-3', ChecksumType: 'COMPOSITE' });
      await expectRejected(/only a composite checksum \(abc=-3\) and no x-amz-meta-sha256/);
    });

    test('fails under the reject policy', async () => {
      await expectRejected(/policy requires a full-object SHA-256/, event('Create', { MultipartDigest: 'reject' }));
    });

    test('an unknown policy value is treated as reject', async () => {
      await expectRejected(/policy requires a full-object SHA-256/, event('Create', { MultipartDigest: 'lenient' }));
    });
  });

  describe('the answer fits CloudFormation\'s 4096-byte response body (crpg-ref-responses.html)', () => {
    // A denial naming a non-ASCII key: 2,500 UTF-16 units (under the former 3,000-character cap) and about 4,500 bytes.
    const key = `llama3-8b/${'модель-😀/'.repeat(250)}model.tar.gz`;
    const note = "... (see the verifier's log)";
    const denied = () => Object.assign(new Error(`not authorized to read s3://models-bucket/${key}`), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } });

    test('a FAILED reason in multi-byte text is cut by UTF-8 bytes, whole characters only, and says where the rest is', async () => {
      s3.on(HeadObjectCommand).rejects(denied());
      const res = await expectRejected(
        /^class 'l40s' artifacts rejected: verification could not complete: AccessDenied: not authorized to read s3:\/\/models-bucket\/llama3-8b\//,
      );
      expect(Buffer.byteLength(bodies[0], 'utf8')).toBeLessThanOrEqual(4096);
      expect(res.Reason.endsWith(note)).toBe(true);
      // No surrogate pair split: the reason survives a UTF-8 round trip (a lone half would come back as U+FFFD).
      expect(Buffer.from(res.Reason, 'utf8').toString('utf8')).toBe(res.Reason);
      const full = `class 'l40s' artifacts rejected: verification could not complete: AccessDenied: not authorized to read s3://models-bucket/${key}`;
      expect(full.startsWith(res.Reason.slice(0, -note.length))).toBe(true);
      // The whole verdict is in the log.
      expect(JSON.stringify((console.log as jest.Mock).mock.calls)).toContain('model.tar.gz');
    });

    test('a reason that fits is sent whole', async () => {
      s3.on(HeadObjectCommand).rejects(Object.assign(new Error('Forbidden: модель'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } }));
      const res = await expectRejected(/AccessDenied: Forbidden: модель$/);
      expect(res.Reason).not.toContain(note);
    });
  });

  describe('faults', () => {
    const throttle = () => Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });

    test('fails when throttled on every attempt: retries exactly MaxAttempts times, then FAILED', async () => {
      ecr.on(DescribeImageSigningStatusCommand).rejects(throttle());
      await expectRejected(/verification could not complete: ThrottlingException: Rate exceeded/);
      expect(ecr.commandCalls(DescribeImageSigningStatusCommand)).toHaveLength(4);
    });

    test('recovers when throttling stops before the attempts run out', async () => {
      ecr.on(DescribeImageSigningStatusCommand).rejectsOnce(throttle()).rejectsOnce(throttle())
        .resolves({ signingStatuses: [{ signingProfileArn: PROFILE, status: 'COMPLETE' }] });
      expect((await run()).Status).toBe('SUCCESS');
      expect(ecr.commandCalls(DescribeImageSigningStatusCommand)).toHaveLength(3);
    });

    test('fails when KMS is throttled on every attempt (the signature is not assumed valid)', async () => {
      kms.on(VerifyCommand).rejects(Object.assign(new Error('slow down'), { name: 'ThrottlingException' }));
      await expectRejected(/could not complete: ThrottlingException/);
      expect(kms.commandCalls(VerifyCommand)).toHaveLength(4);
    });

    test('fails when a denial lasts: tried again within the attempts (a new grant may still be spreading), then FAILED', async () => {
      s3.on(HeadObjectCommand).rejects(Object.assign(new Error('Forbidden'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } }));
      await expectRejected(/could not complete: AccessDenied: Forbidden/);
      expect(s3.commandCalls(HeadObjectCommand)).toHaveLength(4);
    });

    test('fails when a grant still spreading right after the role changed fails the class: a denial that stops is recovered', async () => {
      const denied = Object.assign(new Error('not authorized to perform kms:Verify'), { name: 'AccessDeniedException', $metadata: { httpStatusCode: 400 } });
      kms.on(VerifyCommand).rejectsOnce(denied).resolves({ SignatureValid: true, KeyId: KEY, SigningAlgorithm: 'ECDSA_SHA_256' });
      expect((await run()).Status).toBe('SUCCESS');
      expect(kms.commandCalls(VerifyCommand)).toHaveLength(2);
    });

    test("a network failure of the envelope download (fetch's TypeError with the code on its cause) is retried", async () => {
      const fetch = globalThis.fetch as jest.Mock;
      const download = fetch.getMockImplementation()!;
      const reset = new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) });
      fetch.mockImplementation(async (input: unknown, init?: RequestInit) => {
        if (String(input) === ENVELOPE_URL && fetch.mock.calls.length === 1) throw reset;
        return download(input, init);
      });
      expect((await run()).Status).toBe('SUCCESS');
      expect(fetch.mock.calls.filter(([url]) => url === ENVELOPE_URL)).toHaveLength(2);
    });

    test('a fetch TypeError that is not a network failure is not retried: the signature is unreadable and the class fails', async () => {
      const fetch = globalThis.fetch as jest.Mock;
      const download = fetch.getMockImplementation()!;
      fetch.mockImplementation(async (input: unknown, init?: RequestInit) => {
        if (String(input) === ENVELOPE_URL) throw new TypeError('fetch failed', { cause: new Error('bad port') });
        return download(input, init);
      });
      await expectRejected(/signatures that could not be read .*TypeError: fetch failed/);
      expect(fetch.mock.calls.filter(([url]) => url === ENVELOPE_URL)).toHaveLength(1);
    });

    test('fails when the image does not exist', async () => {
      ecr.on(DescribeImageSigningStatusCommand).rejects(Object.assign(new Error('not found'), { name: 'ImageNotFoundException' }));
      await expectRejected(/ImageNotFoundException/);
    });

    test('fails before the Lambda timeout when AWS does not answer', async () => {
      signer.on(GetSigningProfileCommand).callsFake(() => new Promise(() => undefined));
      const res = await run(event('Create'), 15_050);
      expect(res.Status).toBe('FAILED');
      expect(res.Reason).toMatch(/did not finish within 50 ms/);
    });

    test('fails when the record is incomplete', async () => {
      await expectRejected(/missing Record.className/, event('Create', { Record: { className: 'l40s' } }));
    });

    test('fails when the image is referenced by tag', async () => {
      await expectRejected(/not a private ECR image pinned by digest/, event('Create', { Record: { className: 'x', image: '123456789012.dkr.ecr.us-east-1.amazonaws.com/vllm:latest', signingProfileArn: PROFILE } }));
      expect(ecr.calls()).toHaveLength(0);
    });
  });

  describe('a transition from a previous signing profile (Record.previousSigningProfileArns)', () => {
    const OLD = 'arn:aws:signer:us-east-1:123456789012:/signing-profiles/serving_2025';
    const OLD_JOB = 'arn:aws:signer:us-east-1:123456789012:/signing-jobs/0b1e7c2a-0000-4000-8000-000000000001';
    const transition = (type: 'Create' | 'Update' = 'Create') =>
      event(type, { Record: { ...event('Create').ResourceProperties.Record as object, previousSigningProfileArns: [OLD] } });
    const referrer = (digest: string) => ({ digest, mediaType: 'application/vnd.oci.image.manifest.v1+json', artifactType: 'application/vnd.cncf.notary.signature', size: 700 });
    /** The image's signatures, one envelope per referrer, each served under its own layer digest. */
    function signatures(...envelopes: Array<{ manifest: string; profileVersionArn: string; jobArn: string }>): void {
      const blobs = new Map(envelopes.map((e) => {
        const bytes = jwsEnvelope({ targetDigest: DIGEST, profileVersionArn: e.profileVersionArn, jobArn: e.jobArn, signingTime: SIGNED_AT });
        return [e.manifest, { bytes, layer: `sha256:${createHash('sha256').update(bytes).digest('hex')}` }] as const;
      }));
      ecr.on(ListImageReferrersCommand).resolves({ referrers: envelopes.map((e) => referrer(e.manifest)) });
      ecr.on(BatchGetImageCommand).callsFake((input: { imageIds: { imageDigest: string }[] }) => {
        const blob = blobs.get(input.imageIds[0].imageDigest)!;
        return { images: [{ imageManifest: JSON.stringify({ layers: [{ mediaType: 'application/jose+json', digest: blob.layer, size: blob.bytes.length }] }) }] };
      });
      ecr.on(GetDownloadUrlForLayerCommand).callsFake((input: { layerDigest: string }) => ({ downloadUrl: `${ENVELOPE_URL}?layer=${input.layerDigest}` }));
      (globalThis.fetch as jest.Mock).mockImplementation(async (input: unknown, init?: RequestInit) => {
        const url = String(input);
        if (url === RESPONSE_URL) {
          responses.push(JSON.parse(String(init?.body)));
          return new Response('', { status: 200 });
        }
        const blob = [...blobs.values()].find((b) => url === `${ENVELOPE_URL}?layer=${b.layer}`);
        if (blob) return new Response(blob.bytes, { status: 200 });
        throw new Error(`unexpected fetch ${url}`);
      });
    }
    const profiles = (old: { status: string; revocationRecord?: object }) =>
      signer.on(GetSigningProfileCommand).callsFake((input: { profileName: string }) => (input.profileName === 'serving_2025'
        ? { arn: OLD, platformId: 'Notation-OCI-SHA384-ECDSA', ...old }
        : { arn: PROFILE, status: 'Active', platformId: 'Notation-OCI-SHA384-ECDSA', profileVersionArn: PROFILE_VERSION }));
    const verdictLine = () => ((console.log as jest.Mock).mock.calls as string[][]).map(([line]) => JSON.parse(line)).find((l) => l.event === 'artifact-verification');

    beforeEach(() => {
      // The image as it is when the profile was replaced: signed on push by the previous profile only.
      ecr.on(DescribeImageSigningStatusCommand).resolves({ signingStatuses: [{ signingProfileArn: OLD, status: 'COMPLETE' }] });
      signatures({ manifest: SIGNATURE_MANIFEST, profileVersionArn: `${OLD}/v0old`, jobArn: OLD_JOB });
      // CloudFormation canceled the replaced profile in the cleanup of the trust stack's update.
      profiles({ status: 'Canceled' });
    });

    test("accepts the previous profile's signature, checking its state and revocation, and says which profile in the log and the reason", async () => {
      const res = await run(transition());
      expect(res.Status).toBe('SUCCESS');
      expect(res.Reason).toBe(`artifacts verified (image signed by the previous profile ${OLD}, not yet by the approved one)`);
      expect(signer.commandCalls(GetSigningProfileCommand).map((c) => c.args[0].input)).toEqual(expect.arrayContaining([
        { profileName: 'serving', profileOwner: '123456789012' }, { profileName: 'serving_2025', profileOwner: '123456789012' },
      ]));
      expect(firstInput(signer, GetRevocationStatusCommand)).toMatchObject({ profileVersionArn: `${OLD}/v0old`, jobArn: OLD_JOB });
      expect(verdictLine()).toMatchObject({ className: 'l40s', passed: true, signedBy: OLD, signedByPrevious: true });
    });

    test('the same image without the transition fails, and asks nothing about the previous profile', async () => {
      await expectRejected(/has no signature by the approved profile .*serving \(signed only by .*serving_2025\)/);
      expect(signer.commandCalls(GetSigningProfileCommand).map((c) => c.args[0].input.profileName)).toEqual(['serving']);
      expect(signer.commandCalls(GetRevocationStatusCommand)).toHaveLength(0);
    });

    test('an image pushed again (signed by both) is accepted under the approved profile: the log says the transition is done for it', async () => {
      ecr.on(DescribeImageSigningStatusCommand).resolves({
        signingStatuses: [{ signingProfileArn: OLD, status: 'COMPLETE' }, { signingProfileArn: PROFILE, status: 'COMPLETE' }],
      });
      const fresh = `sha256:${'e'.repeat(64)}`;
      signatures({ manifest: SIGNATURE_MANIFEST, profileVersionArn: `${OLD}/v0old`, jobArn: OLD_JOB }, { manifest: fresh, profileVersionArn: PROFILE_VERSION, jobArn: JOB });
      const res = await run(transition());
      expect(res).toMatchObject({ Status: 'SUCCESS', Reason: 'artifacts verified' });
      // Both profiles' signatures are checked for revocation.
      expect(signer.commandCalls(GetRevocationStatusCommand).map((c) => c.args[0].input.jobArn).sort()).toEqual([JOB, OLD_JOB].sort());
      expect(verdictLine()).toMatchObject({ passed: true, signedBy: PROFILE, signedByPrevious: false });
    });

    test("a revoked signature of the previous profile fails the image beside the approved profile's valid one", async () => {
      ecr.on(DescribeImageSigningStatusCommand).resolves({ signingStatuses: [{ signingProfileArn: PROFILE, status: 'COMPLETE' }] });
      const fresh = `sha256:${'e'.repeat(64)}`;
      signatures({ manifest: SIGNATURE_MANIFEST, profileVersionArn: `${OLD}/v0old`, jobArn: OLD_JOB }, { manifest: fresh, profileVersionArn: PROFILE_VERSION, jobArn: JOB });
      signer.on(GetRevocationStatusCommand, { jobArn: OLD_JOB }).resolves({ revokedEntities: [OLD_JOB] });
      await expectRejected(new RegExp(`signature ${SIGNATURE_MANIFEST} \\(job ${OLD_JOB}\\) is revoked`), transition());
    });

    test('a revoked previous profile fails the class', async () => {
      profiles({ status: 'Revoked', revocationRecord: { revokedBy: 'security-team' } });
      await expectRejected(/previous signing profile .*serving_2025 is Revoked, not Active or Canceled; .*was revoked/, transition());
    });

    test('a previous profile Signer cannot find (deleted long after its cancellation) fails, naming it', async () => {
      signer.on(GetSigningProfileCommand, { profileName: 'serving_2025' }).rejects(Object.assign(new Error('profile not found'), {
        name: 'ResourceNotFoundException', $metadata: { httpStatusCode: 404 },
      }));
      await expectRejected(/could not complete: Error: previous signing profile .*serving_2025: ResourceNotFoundException/, transition());
    });

    test('a record whose previous profiles are not a list fails closed', async () => {
      const bad = event('Create', { Record: { ...event('Create').ResourceProperties.Record as object, previousSigningProfileArns: OLD } });
      await expectRejected(/Record.previousSigningProfileArns that is not a list/, bad);
    });
  });

  describe("profile ARNs are read with the synth checks' parser (parseSigningProfileArn)", () => {
    const withProfiles = (approved: string, previous?: string[]) =>
      event('Create', { Record: { ...event('Create').ResourceProperties.Record as object, signingProfileArn: approved, previousSigningProfileArns: previous } });
    const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

    test.each(ACCEPTED_PROFILE_ARNS)('asks Signer about %s in its region, by name and owner', async (arn, parts) => {
      await run(withProfiles(arn));
      const calls = signer.commandCalls(GetSigningProfileCommand);
      expect(calls.map((c) => c.args[0].input)).toEqual([{ profileName: parts.name, profileOwner: parts.account }]);
      expect(await (calls[0].thisValue as SignerClient).config.region()).toBe(parts.region);
    });

    test.each(REFUSED_PROFILE_ARNS)('fails closed on the approved profile %s (%s), asking Signer nothing about it', async (arn) => {
      await expectRejected(new RegExp(`'${escaped(arn)}' is not a signing profile ARN`), withProfiles(arn));
      expect(signer.commandCalls(GetSigningProfileCommand)).toHaveLength(0);
    });

    test.each(REFUSED_PROFILE_ARNS)('fails closed on the previous profile %s (%s), naming it', async (arn) => {
      await expectRejected(new RegExp(`previous signing profile ${escaped(arn)}: .*is not a signing profile ARN`), withProfiles(PROFILE, [arn]));
      expect(signer.commandCalls(GetSigningProfileCommand).map((c) => c.args[0].input.profileName)).toEqual(['serving']);
    });
  });

  test('a class without model data is verified on its image alone', async () => {
    const res = await run(event('Create', { Record: { className: 'baked', image: IMAGE, signingProfileArn: PROFILE } }));
    expect(res.Status).toBe('SUCCESS');
    expect(s3.calls()).toHaveLength(0);
    expect(kms.calls()).toHaveLength(0);
  });
});

test('the prebuilt bundle that the construct deploys loads and exports the handler', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const bundle = require('../../assets/lambda/artifact-verifier/index.js') as { handler?: unknown };
  expect(typeof bundle.handler).toBe('function');
});
