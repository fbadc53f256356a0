import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KMSClient, SignCommand } from '@aws-sdk/client-kms';
import { GetObjectTaggingCommand, HeadObjectCommand, PutObjectTaggingCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { UsageError, main, parseArgs, recordSignature, sha256OfFile, signDigest } from '../../bin/sign-model';
import { MODEL_SIGNATURE_TAG } from '../../lib/core/trust/artifact-verification';

const KEY = 'arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
const SHA = 'd'.repeat(64);
const SHA_B64 = Buffer.from(SHA, 'hex').toString('base64');
const SIGNATURE = Buffer.from('3045022100-fake-der-ecdsa-signature');

const kmsMock = mockClient(KMSClient);
const s3Mock = mockClient(S3Client);
const kms = new KMSClient({ region: 'us-east-1' });
const s3 = new S3Client({ region: 'us-east-1' });

beforeEach(() => {
  kmsMock.reset();
  s3Mock.reset();
  kmsMock.on(SignCommand).resolves({ Signature: SIGNATURE, KeyId: KEY, SigningAlgorithm: 'ECDSA_SHA_256' });
  s3Mock.on(HeadObjectCommand).resolves({ VersionId: 'v7', ChecksumSHA256: SHA_B64, ChecksumType: 'FULL_OBJECT' });
  s3Mock.on(GetObjectTaggingCommand).resolves({ TagSet: [{ Key: 'team', Value: 'ml' }, { Key: MODEL_SIGNATURE_TAG, Value: 'old' }] });
  s3Mock.on(PutObjectTaggingCommand).resolves({});
});

describe('parseArgs', () => {
  test('help, digest and sign', () => {
    expect(parseArgs([])).toEqual({ command: 'help' });
    expect(parseArgs(['--help'])).toEqual({ command: 'help' });
    expect(parseArgs(['digest', 'model.tar'])).toEqual({ command: 'digest', file: 'model.tar' });
    expect(parseArgs(['sign', '--key', KEY, '--sha256', SHA, '--s3', 's3://models-bucket/m/model.tar', '--version-id', 'v7'])).toEqual({
      command: 'sign',
      keyArn: KEY,
      sha256: SHA,
      file: undefined,
      s3: { bucket: 'models-bucket', key: 'm/model.tar' },
      versionId: 'v7',
      region: undefined,
    });
  });

  test('fails when the sign options are wrong, naming every problem', () => {
    expect(() => parseArgs(['sign', '--key', 'my-key', '--file', 'a', '--sha256', 'XYZ', '--s3', 's3://b/prefix/'])).toThrow(
      new UsageError(
        [
          "--key 'my-key' is not a KMS key or alias ARN",
          'give exactly one of --file <path> and --sha256 <hex>',
          "--sha256 'XYZ' is not 64 lower-case hex characters",
          "--s3 's3://b/prefix/' is not one S3 object (s3://bucket/key)",
        ].join('\n'),
      ),
    );
    expect(() => parseArgs(['sign', '--key', KEY, '--sha256', SHA, '--version-id', 'v1'])).toThrow('--version-id needs --s3');
    expect(() => parseArgs(['sign', '--key'])).toThrow(new UsageError("sign: Option '--key <value>' argument missing; sign takes --key, --file, --sha256, --s3, --version-id, --region"));
    expect(() => parseArgs(['sign', '--key', KEY, '--key', KEY, '--sha256', SHA])).toThrow(new UsageError('--key is given twice'));
    expect(() => parseArgs(['verify'])).toThrow("unknown command 'verify'");
    expect(() => parseArgs(['digest'])).toThrow('digest takes exactly one file');
    expect(() => parseArgs(['digest', 'a.tar', 'b.tar'])).toThrow("digest: unexpected argument 'b.tar'; digest takes no options");
  });

  test('a misspelt option fails at once, naming it and the options the command takes (strict util.parseArgs)', () => {
    expect(() => parseArgs(['sign', '--key', KEY, '--sha256', SHA, '--regoin', 'us-east-1'])).toThrow(
      new UsageError("sign: Unknown option '--regoin'; sign takes --key, --file, --sha256, --s3, --version-id, --region"),
    );
    expect(() => parseArgs(['digest', '--sha', 'model.tar'])).toThrow(new UsageError("digest: Unknown option '--sha'; digest takes no options"));
  });
});

describe('sha256OfFile', () => {
  test('streams a multi-chunk file to the same digest as hashing it whole', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sign-model-'));
    try {
      const data = Buffer.alloc(3 * 1024 * 1024 + 17, 'model weights '); // several 64 KiB read chunks
      const file = join(dir, 'model.tar');
      writeFileSync(file, data);
      expect(await sha256OfFile(file)).toBe(createHash('sha256').update(data).digest('hex'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('signDigest', () => {
  test('asks KMS to sign the 32-byte digest itself (MessageType DIGEST, ECDSA_SHA_256)', async () => {
    expect(await signDigest(kms, KEY, SHA)).toBe(SIGNATURE.toString('base64'));
    const input = kmsMock.commandCalls(SignCommand)[0].args[0].input;
    expect(input).toMatchObject({ KeyId: KEY, MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_256' });
    expect(Buffer.from(input.Message!).toString('hex')).toBe(SHA);
  });
});

describe('recordSignature', () => {
  test('tags the version that S3 proves holds the digest, keeping other tags and replacing an old signature', async () => {
    expect(await recordSignature(s3, { bucket: 'models-bucket', key: 'm.tar' }, SHA, 'c2ln')).toEqual({
      versionId: 'v7',
      digestProvenBy: 'S3 full-object SHA-256 checksum',
    });
    expect(s3Mock.commandCalls(HeadObjectCommand)[0].args[0].input).toMatchObject({ ChecksumMode: 'ENABLED' });
    expect(s3Mock.commandCalls(PutObjectTaggingCommand)[0].args[0].input).toEqual({
      Bucket: 'models-bucket',
      Key: 'm.tar',
      VersionId: 'v7',
      Tagging: { TagSet: [{ Key: 'team', Value: 'ml' }, { Key: MODEL_SIGNATURE_TAG, Value: 'c2ln' }] },
    });
  });

  test('accepts the metadata digest of a multipart upload', async () => {
    s3Mock.on(HeadObjectCommand).resolves({ VersionId: 'v7', ChecksumSHA256: 'abc=-40', ChecksumType: 'COMPOSITE', Metadata: { sha256: SHA } });
    expect((await recordSignature(s3, { bucket: 'b1', key: 'm.tar', versionId: 'v7' }, SHA, 'c2ln')).digestProvenBy).toBe('x-amz-meta-sha256 of the pinned version');
  });

  test.each([
    ['the S3 checksum differs', { VersionId: 'v7', ChecksumSHA256: Buffer.from('e'.repeat(64), 'hex').toString('base64'), ChecksumType: 'FULL_OBJECT' }, /not the signed d{64}/],
    ['a multipart upload has no metadata digest', { VersionId: 'v7', ChecksumSHA256: 'abc=-40', ChecksumType: 'COMPOSITE' }, /x-amz-meta-sha256 is missing/],
    ['the bucket is not versioned', { VersionId: 'null', ChecksumSHA256: SHA_B64 }, /enable versioning/],
  ])('fails when %s, and tags nothing', async (_why, head, message) => {
    s3Mock.on(HeadObjectCommand).resolves(head as never);
    await expect(recordSignature(s3, { bucket: 'b1', key: 'm.tar' }, SHA, 'c2ln')).rejects.toThrow(message);
    expect(s3Mock.commandCalls(PutObjectTaggingCommand)).toHaveLength(0);
  });

  test('fails when the version already has ten other tags', async () => {
    s3Mock.on(GetObjectTaggingCommand).resolves({ TagSet: Array.from({ length: 10 }, (_, i) => ({ Key: `k${i}`, Value: 'v' })) });
    await expect(recordSignature(s3, { bucket: 'b1', key: 'm.tar' }, SHA, 'c2ln')).rejects.toThrow('S3 allows 10');
  });
});

describe('main', () => {
  function io() {
    const out: string[] = [];
    const err: string[] = [];
    return { out, err, io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l), kms, s3 } };
  }

  test('sign --s3 prints the signature and the modelData to pin in the class record', async () => {
    const t = io();
    expect(await main(['sign', '--key', KEY, '--sha256', SHA, '--s3', 's3://models-bucket/m.tar'], t.io)).toBe(0);
    expect(JSON.parse(t.out[0])).toEqual({
      sha256: SHA,
      signature: SIGNATURE.toString('base64'),
      keyArn: KEY,
      signingAlgorithm: 'ECDSA_SHA_256',
      digestProvenBy: 'S3 full-object SHA-256 checksum',
      modelData: { uri: 's3://models-bucket/m.tar', sha256: SHA, versionId: 'v7' },
    });
    // What the verifier reads back is exactly what KMS produced.
    const tag = s3Mock.commandCalls(PutObjectTaggingCommand)[0].args[0].input.Tagging!.TagSet!.find((x) => x.Key === MODEL_SIGNATURE_TAG)!;
    expect(Buffer.from(tag.Value!, 'base64')).toEqual(SIGNATURE);
  });

  test('usage errors exit 2 with the usage text; AWS errors exit 1', async () => {
    const bad = io();
    expect(await main(['sign'], bad.io)).toBe(2);
    expect(bad.err[0]).toMatch(/--key <kms-key-arn> is required[\s\S]*Usage:/);
    const denied = io();
    kmsMock.on(SignCommand).rejects(Object.assign(new Error('not authorized to perform kms:Sign'), { name: 'AccessDeniedException' }));
    expect(await main(['sign', '--key', KEY, '--sha256', SHA], denied.io)).toBe(1);
    expect(denied.err).toEqual(['sign-model: not authorized to perform kms:Sign']);
  });
});
