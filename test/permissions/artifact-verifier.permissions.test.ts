/**
 * Permissions of the artifact verifier, end to end: the verifier handler (lambda/artifact-verifier, its exported
 * `handler`) runs with the real AWS SDK against the recording endpoint on 127.0.0.1, with the custom resource
 * properties ArtifactTrust synthesized; every call it makes is resolved to its IAM action and resource ARN and must be
 * allowed by the verifier role ArtifactTrust synthesized, which must grant nothing the verifier does not call.
 */
import { createHash } from 'node:crypto';
import { Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { physicalIdOf } from '../../lambda/artifact-verifier';
import { defineCapacityClasses } from '../../lib/core/service/checks';
import { MODEL_SIGNATURE_TAG } from '../../lib/core/trust/artifact-verification';
import { ArtifactTrust } from '../../lib/trust/artifact-trust';
import { jwsEnvelope } from '../trust/envelope-fixtures';
import { LLAMA_CONTRACT, llamaClasses, testStack } from '../util';
import { type CapturedCall, fault, RecordingEndpoint, type Reply } from './aws-endpoint';
import { LAMBDA_LOG_DELIVERY, permissionReport, withEnvironment } from './harness';
import { ACCOUNT, REGION, resolver, roleStatements } from './iam-policy';

const DIGEST = `sha256:${'a'.repeat(64)}`;
const IMAGE = `${ACCOUNT}.dkr.ecr.${REGION}.amazonaws.com/vllm@${DIGEST}`;
const MODEL_SHA = 'b'.repeat(64);
/** The image's signature manifests, one per signing profile of the world (`WorldOptions.signedBy`). */
const SIGNATURE_MANIFESTS = [`sha256:${'c'.repeat(64)}`, `sha256:${'d'.repeat(64)}`];
/** The profile a transition replaced: a literal ARN in the stack's account and region (ArtifactTrust refuses others). */
const PREVIOUS_PROFILE = `arn:aws:signer:${REGION}:${ACCOUNT}:/signing-profiles/serving_2025`;

interface Gated {
  readonly template: Record<string, unknown>;
  readonly roleId: string;
  readonly properties: Record<string, unknown>;
  readonly modelKeyArn?: string;
}

/** One ArtifactTrust gating one class, synthesized; the custom resource's properties and the role as deployed. */
function gated(
  id: string,
  options: {
    pinned: boolean; encrypted: boolean; requireCurrentVersion?: boolean; previousSigningProfileArns?: readonly string[];
    repositoryNames?: string[]; modelDataLocations?: string[]; image?: string; modelUri?: string; modelSha256?: string;
  },
): Gated {
  const { stack } = testStack(id);
  const modelKey = options.encrypted ? new kms.Key(stack, 'ModelKey', { enableKeyRotation: true }) : undefined;
  const trust = new ArtifactTrust(stack, 'Trust', {
    repositoryNames: options.repositoryNames ?? ['vllm'], requireModelVersion: options.pinned, modelDataEncryptionKey: modelKey,
    previousSigningProfileArns: options.previousSigningProfileArns, modelDataLocations: options.modelDataLocations,
  });
  const [spec] = llamaClasses();
  const [cls] = defineCapacityClasses([{
    ...spec,
    artifact: {
      image: options.image ?? IMAGE,
      modelData: {
        uri: options.modelUri ?? 's3://models-bucket/llama3-8b/bf16.tar', sha256: options.modelSha256 ?? MODEL_SHA, ...(options.pinned ? { versionId: 'v1' } : {}),
      },
    },
  }], { contract: LLAMA_CONTRACT });
  trust.gateFor(stack, cls, { requireCurrentVersion: options.requireCurrentVersion });
  const template = Template.fromStack(stack).toJSON();
  const resolve = resolver(template);
  const resources = template.Resources as Record<string, { Type: string; Properties: Record<string, unknown> }>;
  const custom = Object.values(resources).find((r) => r.Type === 'Custom::ClassArtifactVerification')!;
  const roleId = Object.keys(resources).find((k) => resources[k].Type === 'AWS::IAM::Role' && k.startsWith('TrustVerifierRole'))!;
  const keyId = Object.keys(resources).find((k) => k.startsWith('ModelKey'));
  return {
    template,
    roleId,
    properties: resolve(custom.Properties) as Record<string, unknown>,
    modelKeyArn: keyId ? (resolve({ 'Fn::GetAtt': [keyId, 'Arn'] }) as string) : undefined,
  };
}

/**
 * Which of the record's accepted profiles hold the image's ECR signing status COMPLETE and a Notation signature: the
 * approved one (the default), only the previous ones of a transition, or all of them (approved first).
 */
interface WorldOptions {
  readonly signedBy?: 'approved' | 'previous' | 'all';
}

/**
 * AWS as the verifier should find it for an approved class: signed, active, not revoked, digest and signature in place.
 * A transition's previous profiles are Canceled (CloudFormation cancels the profile it replaced) and never revoked.
 */
function approvedWorld(
  g: Gated, envelopeUrl: string, faults: Set<string>, options: WorldOptions = {},
): { world: (call: CapturedCall) => Reply; envelopes: Map<string, Buffer> } {
  const record = g.properties.Record as {
    signingProfileArn: string; previousSigningProfileArns?: string[]; modelData: { versionId: string; sha256: string };
  };
  const approved = record.signingProfileArn;
  const previous = record.previousSigningProfileArns ?? [];
  const signedBy = options.signedBy === 'previous' ? previous : options.signedBy === 'all' ? [approved, ...previous] : [approved];
  const signatures = signedBy.map((profile, i) => {
    const envelope = jwsEnvelope({
      targetDigest: DIGEST, profileVersionArn: `${profile}/v1abc`, jobArn: `arn:aws:signer:${REGION}:${ACCOUNT}:/signing-jobs/5808635f-05de-4207-a891-c95f827b50f${i + 4}`,
      signingTime: new Date('2026-10-01T12:00:00Z'),
    });
    const layerDigest = `sha256:${createHash('sha256').update(envelope).digest('hex')}`;
    return { manifest: SIGNATURE_MANIFESTS[i], envelope, layerDigest, url: i === 0 ? envelopeUrl : `${envelopeUrl}-${i}` };
  });
  const version = record.modelData.versionId || 'current-version';
  const world = (call: CapturedCall): Reply => {
    // Each fault fires once: the verifier's retry layer must get through it.
    if (faults.delete(`hang:${call.service}:${call.operation}`)) return { hang: true };
    if (faults.delete(`${call.service}:${call.operation}`)) return fault(call.service === 's3' ? 'SlowDown' : 'ThrottlingException', call.service === 's3' ? 503 : 400);
    switch (`${call.service}:${call.operation}`) {
      case 'ecr:DescribeImageSigningStatus':
        return { output: { signingStatuses: signedBy.map((signingProfileArn) => ({ signingProfileArn, status: 'COMPLETE' })) } };
      case 'ecr:ListImageReferrers':
        return { output: { referrers: signatures.map((s) => ({
          digest: s.manifest, mediaType: 'application/vnd.oci.image.manifest.v1+json', artifactType: 'application/vnd.cncf.notary.signature', size: 700,
        })) } };
      case 'ecr:BatchGetImage': {
        const wanted = (call.input.imageIds as Array<{ imageDigest: string }>)[0].imageDigest;
        const s = signatures.find((x) => x.manifest === wanted);
        if (!s) return { output: { images: [], failures: [{ imageId: { imageDigest: wanted }, failureCode: 'ImageNotFound' }] } };
        return { output: { images: [{ imageManifest: JSON.stringify({
          schemaVersion: 2, mediaType: 'application/vnd.oci.image.manifest.v1+json', artifactType: 'application/vnd.cncf.notary.signature',
          layers: [{ mediaType: 'application/jose+json', digest: s.layerDigest, size: s.envelope.length }], subject: { digest: DIGEST },
        }) }], failures: [] } };
      }
      case 'ecr:GetDownloadUrlForLayer': {
        const s = signatures.find((x) => x.layerDigest === call.input.layerDigest);
        return s ? { output: { downloadUrl: s.url, layerDigest: s.layerDigest } } : fault('LayersNotFoundException', 400);
      }
      case 'signer:GetSigningProfile': {
        const profile = [approved, ...previous].find((p) => p.endsWith(`/signing-profiles/${call.input.profileName}`));
        if (!profile) return fault('ResourceNotFoundException', 404);
        const status = profile === approved ? 'Active' : 'Canceled';
        return { output: { arn: profile, status, platformId: 'Notation-OCI-SHA384-ECDSA', profileVersionArn: `${profile}/v1abc` } };
      }
      case 'signer:GetRevocationStatus': return { output: { revokedEntities: [] } };
      case 's3:HeadObject':
        return { headers: {
          'x-amz-version-id': version, 'x-amz-checksum-sha256': Buffer.from(record.modelData.sha256, 'hex').toString('base64'),
          'x-amz-checksum-type': 'FULL_OBJECT',
          ...(g.modelKeyArn ? { 'x-amz-server-side-encryption': 'aws:kms', 'x-amz-server-side-encryption-aws-kms-key-id': g.modelKeyArn } : {}),
        } };
      case 's3:GetObjectTagging':
        return { headers: { 'x-amz-version-id': version }, xml: `<Tagging><TagSet><Tag><Key>${MODEL_SIGNATURE_TAG}</Key><Value>${Buffer.from('der').toString('base64')}</Value></Tag></TagSet></Tagging>` };
      case 'kms:Verify': return { output: { KeyId: call.input.KeyId, SignatureValid: true, SigningAlgorithm: 'ECDSA_SHA_256' } };
      default: return fault('UnknownOperationException', 400);
    }
  };
  return { world, envelopes: new Map(signatures.map((s) => [new URL(s.url).pathname, s.envelope])) };
}

/**
 * Runs the verifier on `g`'s properties: a Create, or with `rollbackFrom` the Update of a rollback (CloudFormation's
 * Update with the old properties, `g`'s, after the check of `rollbackFrom` passed and another resource failed: the
 * resource holds the physical id of `rollbackFrom`).
 */
async function verify(
  g: Gated, faults: string[] = [], remainingMs = 300_000, worldOptions: WorldOptions = {}, rollbackFrom?: Record<string, unknown>,
) {
  const responses: Array<{ Status: string; Reason: string }> = [];
  let envelopes = new Map<string, Buffer>();
  const plainFaults = new Set(faults);
  const endpoint = new RecordingEndpoint(() => fault('NotReady', 500), (req) => {
    if (req.method === 'PUT' && req.path === '/cfn-response') {
      responses.push(JSON.parse(req.body.toString('utf8')));
      return { status: 200 };
    }
    const envelope = envelopes.get(req.path);
    if (envelope) return plainFaults.delete('hang:envelope') ? { status: 0, hang: true } : { status: 200, body: envelope };
    return { status: 404 };
  });
  await endpoint.start();
  try {
    const approved = approvedWorld(g, `${endpoint.url}/blob/envelope`, new Set(faults), worldOptions);
    endpoint.answerWith(approved.world);
    envelopes = approved.envelopes;
    const delivered = (properties: Record<string, unknown>) => ({
      ...properties, ServiceToken: String(properties.ServiceToken), BaseDelayMs: '1', MaxDelayMs: '2',
    });
    const base = {
      ServiceToken: String(g.properties.ServiceToken), ResponseURL: `${endpoint.url}/cfn-response`,
      StackId: `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/test/1`, RequestId: 'req-1', LogicalResourceId: 'Verify', ResourceType: 'Custom::ClassArtifactVerification',
      ResourceProperties: delivered(g.properties),
    };
    const event: CloudFormationCustomResourceEvent = rollbackFrom
      ? { ...base, RequestType: 'Update', PhysicalResourceId: physicalIdOf(delivered(rollbackFrom)), OldResourceProperties: delivered(rollbackFrom) }
      : { ...base, RequestType: 'Create' };
    await withEnvironment(endpoint.sdkEnvironment(REGION), async () => {
      const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
      try {
        const { handler } = await import('../../lambda/artifact-verifier');
        await handler(event, { getRemainingTimeInMillis: () => remainingMs });
      } finally {
        log.mockRestore();
      }
    });
    return { responses, exchanges: endpoint.exchanges };
  } finally {
    await endpoint.stop();
  }
}

describe('artifact verifier permissions (real SDK against a recording endpoint on 127.0.0.1)', () => {
  test.each([
    ['a pinned, SSE-KMS-encrypted model version, through throttling and a 503', { pinned: true, encrypted: true }, ['ecr:DescribeImageSigningStatus', 's3:HeadObject', 'kms:Verify']],
    ['unpinned model data (requireModelVersion: false)', { pinned: false, encrypted: false }, []],
    // SageMaker's gate: the current version (HeadObject without a version id) is read too, authorized by s3:GetObject.
    ['a pinned, SSE-KMS-encrypted version that must be the current one (SageMaker)', { pinned: true, encrypted: true, requireCurrentVersion: true }, []],
  ])('%s: every call is allowed and nothing else is granted', async (name, options, faults) => {
    const g = gated(name.replace(/[^A-Za-z]/g, '').slice(0, 40), options);
    const { responses, exchanges } = await verify(g, faults);
    expect(responses).toEqual([expect.objectContaining({ Status: 'SUCCESS' })]);
    // The faults really happened (and were retried).
    for (const f of faults) expect(exchanges.filter((e) => `${e.call.service}:${e.call.operation}` === f).length).toBe(2);
    const report = permissionReport(exchanges, roleStatements(g.template, g.roleId), LAMBDA_LOG_DELIVERY);
    expect(report.denied).toEqual([]);
    expect(report.unused).toEqual([]);
    expect(report.used).toEqual([
      'ecr:BatchGetImage', 'ecr:DescribeImageSigningStatus', 'ecr:GetDownloadUrlForLayer',
      ...(options.encrypted ? ['kms:Decrypt'] : []), 'kms:Verify',
      ...(options.pinned
        ? [...('requireCurrentVersion' in options ? ['s3:GetObject'] : []), 's3:GetObjectTagging', 's3:GetObjectVersion', 's3:GetObjectVersionTagging']
        : ['s3:GetObject', 's3:GetObjectTagging']),
      'signer:GetRevocationStatus', 'signer:GetSigningProfile',
    ]);
  });

  // A signing-profile transition (previousSigningProfileArns): the verifier also reads the previous profile, Canceled as
  // CloudFormation leaves the profile it replaced, and asks about the revocation of its signatures; the role grants
  // both on that profile, and no more.
  test.each([
    ['signed only by the previous profile', 'previous', `artifacts verified (image signed by the previous profile ${PREVIOUS_PROFILE}, not yet by the approved one)`],
    ['signed by both the approved and the previous profile', 'all', 'artifacts verified'],
  ] as const)('a signing-profile transition, the image %s: every call is allowed and nothing else is granted', async (_name, signedBy, reason) => {
    const g = gated(`Transition${signedBy}`, { pinned: true, encrypted: false, previousSigningProfileArns: [PREVIOUS_PROFILE] });
    const { responses, exchanges } = await verify(g, [], 300_000, { signedBy });
    expect(responses).toEqual([expect.objectContaining({ Status: 'SUCCESS', Reason: reason })]);
    // The previous profile was really read, and its signature's revocation really asked (each a request the role judges).
    const signer = exchanges.filter((e) => e.call.service === 'signer');
    expect(signer.filter((e) => e.call.operation === 'GetSigningProfile').map((e) => e.call.input.profileName)).toContain('serving_2025');
    expect(signer.filter((e) => e.call.operation === 'GetRevocationStatus').map((e) => e.call.input.profileVersionArn)).toContain(`${PREVIOUS_PROFILE}/v1abc`);
    const report = permissionReport(exchanges, roleStatements(g.template, g.roleId), LAMBDA_LOG_DELIVERY);
    expect(report.denied).toEqual([]);
    expect(report.unused).toEqual([]);
    expect(report.used).toEqual([
      'ecr:BatchGetImage', 'ecr:DescribeImageSigningStatus', 'ecr:GetDownloadUrlForLayer', 'kms:Verify',
      's3:GetObjectTagging', 's3:GetObjectVersion', 's3:GetObjectVersionTagging', 'signer:GetRevocationStatus', 'signer:GetSigningProfile',
    ]);
  });

  // Review R228: a rollback of the serving stack after this check passed and another resource failed is an Update with the
  // old properties, which the verifier checks (a revert looks the same). The trust stack deployed first and holds the
  // grants of the new record. On SageMaker every model is a new key (it must contain the SHA-256); here the class also
  // moved from one of the trust's repositories to another.
  describe('a rollback to the earlier record, with the grants of the new one', () => {
    const OLD_SHA = MODEL_SHA;
    const NEW_SHA = 'e'.repeat(64);
    const synth = (id: string, sha: string, image: string, modelDataLocations?: string[]) => gated(id, {
      pinned: true, encrypted: false, requireCurrentVersion: true, repositoryNames: ['vllm', 'neuron'], modelDataLocations,
      image, modelUri: `s3://models-bucket/llama3-8b/${sha}/model.tar.gz`, modelSha256: sha,
    });
    const NEW_IMAGE = IMAGE.replace('/vllm@', '/neuron@');

    test('is allowed when the model data lies under a modelDataLocations entry, and the class moved between its repositories', async () => {
      const locations = ['s3://models-bucket/llama3-8b/'];
      const older = synth('RollbackOld', OLD_SHA, IMAGE, locations);
      const newer = synth('RollbackNew', NEW_SHA, NEW_IMAGE, locations);
      const { responses, exchanges } = await verify({ ...newer, properties: older.properties }, [], 300_000, {}, newer.properties);
      // Checked, not waved through: the answer names the earlier record.
      expect(responses).toEqual([expect.objectContaining({ Status: 'SUCCESS', Reason: 'artifacts verified', Data: { ImageDigest: DIGEST, ModelSha256: OLD_SHA } })]);
      // The earlier record was really read: its repository and its key.
      expect(exchanges.some((e) => e.call.operation === 'DescribeImageSigningStatus' && e.call.input.repositoryName === 'vllm')).toBe(true);
      expect(exchanges.some((e) => e.call.operation === 'HeadObject' && String(e.call.input.Key).includes(OLD_SHA))).toBe(true);
      expect(permissionReport(exchanges, roleStatements(newer.template, newer.roleId), LAMBDA_LOG_DELIVERY).denied).toEqual([]);
    });

    test('is denied on the earlier object when no modelDataLocations entry holds it (the exact-object grant): recovery in the docs', async () => {
      const older = synth('RollbackOldExact', OLD_SHA, IMAGE);
      const newer = synth('RollbackNewExact', NEW_SHA, NEW_IMAGE);
      const { exchanges } = await verify({ ...newer, properties: older.properties }, [], 300_000, {}, newer.properties);
      const object = `arn:aws:s3:::models-bucket/llama3-8b/${OLD_SHA}/model.tar.gz`;
      expect(permissionReport(exchanges, roleStatements(newer.template, newer.roleId), LAMBDA_LOG_DELIVERY).denied)
        .toEqual(expect.arrayContaining([`s3:GetObjectVersion ${object}`]));
    });
  });

  test('a request that never gets an answer costs one attempt (the request timeout), not the whole time budget', async () => {
    // One hung S3 HeadObject, one hung ECR call and one hung envelope download: each is abandoned after the SDK's (or the
    // fetch's) 5 s request timeout and retried. Without a timeout they would hang until the deadline, 12 s on.
    const g = gated('Hung', { pinned: true, encrypted: false });
    const started = Date.now();
    const { responses, exchanges } = await verify(g, ['hang:s3:HeadObject', 'hang:ecr:DescribeImageSigningStatus', 'hang:envelope'], 15_000 + 12_000);
    expect(responses).toEqual([expect.objectContaining({ Status: 'SUCCESS' })]);
    expect(exchanges.filter((e) => e.call.operation === 'HeadObject')).toHaveLength(2);
    expect(exchanges.filter((e) => e.call.operation === 'DescribeImageSigningStatus')).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(11_000);
  }, 30_000);

  test('fails when the role lacks a permission the verifier needs: without the model-data key the decrypt is denied', async () => {
    // The same encrypted object, verified by a role synthesized without modelDataEncryptionKey (the state before issue 20).
    const withKey = gated('Keyed', { pinned: true, encrypted: true });
    const without = gated('Keyless', { pinned: true, encrypted: false });
    const { exchanges } = await verify(withKey);
    const report = permissionReport(exchanges, roleStatements(without.template, without.roleId), LAMBDA_LOG_DELIVERY);
    expect(report.denied).toEqual([`kms:Decrypt ${withKey.modelKeyArn}`]);
  });
});
