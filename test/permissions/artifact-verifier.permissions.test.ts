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
const SIGNATURE_MANIFEST = `sha256:${'c'.repeat(64)}`;

interface Gated {
  readonly template: Record<string, unknown>;
  readonly roleId: string;
  readonly properties: Record<string, unknown>;
  readonly modelKeyArn?: string;
}

/** One ArtifactTrust gating one class, synthesized; the custom resource's properties and the role as deployed. */
function gated(id: string, options: { pinned: boolean; encrypted: boolean; requireCurrentVersion?: boolean }): Gated {
  const { stack } = testStack(id);
  const modelKey = options.encrypted ? new kms.Key(stack, 'ModelKey', { enableKeyRotation: true }) : undefined;
  const trust = new ArtifactTrust(stack, 'Trust', { repositoryNames: ['vllm'], requireModelVersion: options.pinned, modelDataEncryptionKey: modelKey });
  const [spec] = llamaClasses();
  const [cls] = defineCapacityClasses([{
    ...spec,
    artifact: { image: IMAGE, modelData: { uri: 's3://models-bucket/llama3-8b/bf16.tar', sha256: MODEL_SHA, ...(options.pinned ? { versionId: 'v1' } : {}) } },
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

/** AWS as the verifier should find it for an approved class: signed, active, not revoked, digest and signature in place. */
function approvedWorld(g: Gated, envelopeUrl: string, faults: Set<string>): { world: (call: CapturedCall) => Reply; envelope: Buffer } {
  const record = g.properties.Record as { signingProfileArn: string; modelData: { versionId: string } };
  const profile = record.signingProfileArn;
  const envelope = jwsEnvelope({
    targetDigest: DIGEST, profileVersionArn: `${profile}/v1abc`, jobArn: `arn:aws:signer:${REGION}:${ACCOUNT}:/signing-jobs/5808635f-05de-4207-a891-c95f827b50f4`,
    signingTime: new Date('2026-10-01T12:00:00Z'),
  });
  const layerDigest = `sha256:${createHash('sha256').update(envelope).digest('hex')}`;
  const version = record.modelData.versionId || 'current-version';
  const world = (call: CapturedCall): Reply => {
    // Each fault fires once: the verifier's retry layer must get through it.
    if (faults.delete(`hang:${call.service}:${call.operation}`)) return { hang: true };
    if (faults.delete(`${call.service}:${call.operation}`)) return fault(call.service === 's3' ? 'SlowDown' : 'ThrottlingException', call.service === 's3' ? 503 : 400);
    switch (`${call.service}:${call.operation}`) {
      case 'ecr:DescribeImageSigningStatus': return { output: { signingStatuses: [{ signingProfileArn: profile, status: 'COMPLETE' }] } };
      case 'ecr:ListImageReferrers':
        return { output: { referrers: [{ digest: SIGNATURE_MANIFEST, mediaType: 'application/vnd.oci.image.manifest.v1+json', artifactType: 'application/vnd.cncf.notary.signature', size: 700 }] } };
      case 'ecr:BatchGetImage':
        return { output: { images: [{ imageManifest: JSON.stringify({
          schemaVersion: 2, mediaType: 'application/vnd.oci.image.manifest.v1+json', artifactType: 'application/vnd.cncf.notary.signature',
          layers: [{ mediaType: 'application/jose+json', digest: layerDigest, size: envelope.length }], subject: { digest: DIGEST },
        }) }], failures: [] } };
      case 'ecr:GetDownloadUrlForLayer': return { output: { downloadUrl: envelopeUrl, layerDigest } };
      case 'signer:GetSigningProfile': return { output: { arn: profile, status: 'Active', platformId: 'Notation-OCI-SHA384-ECDSA', profileVersionArn: `${profile}/v1abc` } };
      case 'signer:GetRevocationStatus': return { output: { revokedEntities: [] } };
      case 's3:HeadObject':
        return { headers: {
          'x-amz-version-id': version, 'x-amz-checksum-sha256': Buffer.from(MODEL_SHA, 'hex').toString('base64'), 'x-amz-checksum-type': 'FULL_OBJECT',
          ...(g.modelKeyArn ? { 'x-amz-server-side-encryption': 'aws:kms', 'x-amz-server-side-encryption-aws-kms-key-id': g.modelKeyArn } : {}),
        } };
      case 's3:GetObjectTagging':
        return { headers: { 'x-amz-version-id': version }, xml: `<Tagging><TagSet><Tag><Key>${MODEL_SIGNATURE_TAG}</Key><Value>${Buffer.from('der').toString('base64')}</Value></Tag></TagSet></Tagging>` };
      case 'kms:Verify': return { output: { KeyId: call.input.KeyId, SignatureValid: true, SigningAlgorithm: 'ECDSA_SHA_256' } };
      default: return fault('UnknownOperationException', 400);
    }
  };
  return { world, envelope };
}

async function verify(g: Gated, faults: string[] = [], remainingMs = 300_000) {
  const responses: Array<{ Status: string; Reason: string }> = [];
  let envelope: Buffer | undefined;
  const plainFaults = new Set(faults);
  const endpoint = new RecordingEndpoint(() => fault('NotReady', 500), (req) => {
    if (req.method === 'PUT' && req.path === '/cfn-response') {
      responses.push(JSON.parse(req.body.toString('utf8')));
      return { status: 200 };
    }
    if (req.path === '/blob/envelope') return plainFaults.delete('hang:envelope') ? { status: 0, hang: true } : { status: 200, body: envelope };
    return { status: 404 };
  });
  await endpoint.start();
  try {
    const approved = approvedWorld(g, `${endpoint.url}/blob/envelope`, new Set(faults));
    endpoint.answerWith(approved.world);
    envelope = approved.envelope;
    const event: CloudFormationCustomResourceEvent = {
      RequestType: 'Create', ServiceToken: String(g.properties.ServiceToken), ResponseURL: `${endpoint.url}/cfn-response`,
      StackId: `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/test/1`, RequestId: 'req-1', LogicalResourceId: 'Verify', ResourceType: 'Custom::ClassArtifactVerification',
      ResourceProperties: { ...g.properties, ServiceToken: String(g.properties.ServiceToken), BaseDelayMs: '1', MaxDelayMs: '2' },
    };
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
