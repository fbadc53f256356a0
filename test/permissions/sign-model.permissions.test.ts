/**
 * Permissions of the publisher workflow, end to end: bin/sign-model.ts (its exported `main`, as the CLI runs it) with
 * the real AWS SDK against the recording endpoint on 127.0.0.1; every call must be allowed by what
 * `ArtifactTrust.grantModelSigning()` grants, and that grant must hold nothing sign-model does not call.
 */
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { main } from '../../bin/sign-model';
import { MODEL_SIGNATURE_TAG } from '../../lib/core/trust/artifact-verification';
import { ArtifactTrust } from '../../lib/trust/artifact-trust';
import { testStack } from '../util';
import { type CapturedCall, fault, RecordingEndpoint, type Reply } from './aws-endpoint';
import { permissionReport, withEnvironment } from './harness';
import { REGION, resolver, roleStatements, type Statement } from './iam-policy';

const MODEL_SHA = 'd'.repeat(64);

function publisher(options: { locations?: string[]; encrypted: boolean }) {
  const { stack } = testStack('Publisher');
  const modelKey = options.encrypted ? new kms.Key(stack, 'ModelKey', { enableKeyRotation: true }) : undefined;
  const trust = new ArtifactTrust(stack, 'Trust', { modelDataLocations: options.locations, modelDataEncryptionKey: modelKey });
  const ci = new iam.Role(stack, 'Ci', { assumedBy: new iam.AccountRootPrincipal() });
  trust.grantModelSigning(ci);
  const template = Template.fromStack(stack).toJSON();
  const resolve = resolver(template);
  const id = (prefix: string) => Object.keys(template.Resources as object).find((k) => k.startsWith(prefix))!;
  return {
    statements: roleStatements(template, id('Ci')),
    signingKeyArn: resolve({ 'Fn::GetAtt': [id('TrustModelSigningKey'), 'Arn'] }) as string,
    modelKeyArn: modelKey ? (resolve({ 'Fn::GetAtt': [id('ModelKey'), 'Arn'] }) as string) : undefined,
  };
}

/** S3 and KMS as a publisher finds them: the object uploaded with a full-object SHA-256, SSE-KMS when a key is given. */
function world(modelKeyArn: string | undefined, faults: Set<string>): (call: CapturedCall) => Reply {
  return (call) => {
    if (faults.delete(`${call.service}:${call.operation}`)) return fault('SlowDown', 503);
    const version = (call.input.VersionId as string | undefined) ?? 'v2';
    switch (`${call.service}:${call.operation}`) {
      case 's3:HeadObject':
        return { headers: {
          'x-amz-version-id': version, 'x-amz-checksum-sha256': Buffer.from(MODEL_SHA, 'hex').toString('base64'), 'x-amz-checksum-type': 'FULL_OBJECT',
          ...(modelKeyArn ? { 'x-amz-server-side-encryption': 'aws:kms', 'x-amz-server-side-encryption-aws-kms-key-id': modelKeyArn } : {}),
        } };
      case 's3:GetObjectTagging': return { headers: { 'x-amz-version-id': version }, xml: '<Tagging><TagSet><Tag><Key>team</Key><Value>ml</Value></Tag></TagSet></Tagging>' };
      case 's3:PutObjectTagging': return { headers: { 'x-amz-version-id': version } };
      case 'kms:Sign': return { output: { KeyId: call.input.KeyId, Signature: Buffer.from('der-signature').toString('base64'), SigningAlgorithm: 'ECDSA_SHA_256' } };
      default: return fault('UnknownOperationException', 400);
    }
  };
}

async function signModel(argv: string[], modelKeyArn: string | undefined, faults: string[] = []) {
  const endpoint = new RecordingEndpoint(world(modelKeyArn, new Set(faults)));
  await endpoint.start();
  try {
    const out: string[] = [];
    const err: string[] = [];
    const code = await withEnvironment(endpoint.sdkEnvironment(REGION), () => main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) }));
    return { code, out, err, exchanges: endpoint.exchanges };
  } finally {
    await endpoint.stop();
  }
}

describe('sign-model permissions (real SDK against a recording endpoint on 127.0.0.1)', () => {
  const p = publisher({ locations: ['s3://models-bucket/llama3-8b/'], encrypted: true });
  const object = 's3://models-bucket/llama3-8b/bf16.tar';

  test('sign --s3 with and without --version-id, and sign alone: every call is allowed and grantModelSigning holds nothing else', async () => {
    const runs = [
      await signModel(['sign', '--key', p.signingKeyArn, '--sha256', MODEL_SHA, '--s3', object, '--version-id', 'v1'], p.modelKeyArn, ['s3:PutObjectTagging']),
      await signModel(['sign', '--key', p.signingKeyArn, '--sha256', MODEL_SHA, '--s3', object], p.modelKeyArn),
      await signModel(['sign', '--key', p.signingKeyArn, '--sha256', MODEL_SHA], p.modelKeyArn),
    ];
    for (const r of runs) expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: [] });
    // The signature went onto the version, beside the tags it already had.
    const put = runs[0].exchanges.filter((e) => e.call.operation === 'PutObjectTagging');
    expect(put).toHaveLength(2); // the 503 was retried by the SDK
    expect(put[1].call.input).toEqual(expect.objectContaining({ VersionId: 'v1', TagSet: [{ Key: 'team', Value: 'ml' }, { Key: MODEL_SIGNATURE_TAG, Value: expect.any(String) }] }));
    const report = permissionReport(runs.flatMap((r) => r.exchanges), p.statements);
    expect(report.denied).toEqual([]);
    expect(report.unused).toEqual([]);
    expect(report.used).toEqual(['kms:Decrypt', 'kms:Sign', 's3:GetObject', 's3:GetObjectTagging', 's3:GetObjectVersion', 's3:GetObjectVersionTagging',
      's3:PutObjectTagging', 's3:PutObjectVersionTagging']);
  });

  test('fails when the publisher was granted kms:Sign alone (the grant before issue 20): the S3 calls are denied', async () => {
    const before: Statement[] = [{ Effect: 'Allow', Action: ['kms:Sign', 'kms:GetPublicKey', 'kms:DescribeKey'], Resource: p.signingKeyArn }];
    const run = await signModel(['sign', '--key', p.signingKeyArn, '--sha256', MODEL_SHA, '--s3', object, '--version-id', 'v1'], p.modelKeyArn);
    const report = permissionReport(run.exchanges, before);
    expect(report.denied).toEqual([
      `kms:Decrypt ${p.modelKeyArn}`,
      's3:GetObjectTagging arn:aws:s3:::models-bucket/llama3-8b/bf16.tar',
      's3:GetObjectVersion arn:aws:s3:::models-bucket/llama3-8b/bf16.tar',
      's3:GetObjectVersionTagging arn:aws:s3:::models-bucket/llama3-8b/bf16.tar',
      's3:PutObjectTagging arn:aws:s3:::models-bucket/llama3-8b/bf16.tar',
      's3:PutObjectVersionTagging arn:aws:s3:::models-bucket/llama3-8b/bf16.tar',
    ]);
    expect(report.unused).toEqual(['kms:DescribeKey', 'kms:GetPublicKey']);
  });

  test('an object outside modelDataLocations is not granted', async () => {
    const run = await signModel(['sign', '--key', p.signingKeyArn, '--sha256', MODEL_SHA, '--s3', 's3://models-bucket/other/model.tar', '--version-id', 'v1'], p.modelKeyArn);
    expect(permissionReport(run.exchanges, p.statements).denied).toEqual(expect.arrayContaining(['s3:GetObjectVersion arn:aws:s3:::models-bucket/other/model.tar']));
  });
});
