#!/usr/bin/env node
/**
 * cdk-capacity-sign-model: produce what the deploy-time artifact verifier checks for a class's model data.
 *
 *   cdk-capacity-sign-model digest <file>
 *   cdk-capacity-sign-model sign --key <kms-key-arn> (--file <path> | --sha256 <hex>) [--s3 s3://bucket/key [--version-id <id>]] [--region <r>]
 *
 * `sign` signs the model's SHA-256 with the KMS key (ECDSA P-256, MessageType DIGEST) and, given --s3, records the
 * signature as a tag on that object version and prints the `modelData` to put in the class record.
 */
import { createReadStream } from 'node:fs';
import { createHash } from 'node:crypto';
import { KMSClient, SignCommand } from '@aws-sdk/client-kms';
import { GetObjectTaggingCommand, HeadObjectCommand, PutObjectTaggingCommand, S3Client, type Tag } from '@aws-sdk/client-s3';
import {
  MODEL_SHA256_METADATA,
  MODEL_SIGNATURE_TAG,
  MODEL_SIGNING_ALGORITHM,
  base64Sha256ToHex,
  isFullObjectChecksum,
  modelDigestMessage,
  parseS3Object,
} from '../lib/core/trust/artifact-verification';
import { cliClientConfig, type HttpTimeouts } from '../lib/core/sdk-client-profiles';

export const USAGE = `Usage:
  cdk-capacity-sign-model digest <file>
      Print the SHA-256 of a local model archive (streamed; works for files of any size).

  cdk-capacity-sign-model sign --key <kms-key-arn> (--file <path> | --sha256 <hex>) [--s3 s3://bucket/key [--version-id <id>]] [--region <r>]
      Sign the SHA-256 with the KMS key (${MODEL_SIGNING_ALGORITHM}, MessageType DIGEST). With --s3, record the signature
      as the object version's '${MODEL_SIGNATURE_TAG}' tag (other tags are kept) and print the class's modelData.
      Without --version-id the current version is signed and printed, so the record pins it.

Upload so the verifier can prove the digest:
  single PUT (up to 5 GB):  aws s3api put-object --checksum-algorithm SHA256 --metadata ${MODEL_SHA256_METADATA}=<hex> ...
  multipart (larger files): aws s3 cp model.tar s3://bucket/key --metadata ${MODEL_SHA256_METADATA}=<hex>
  (S3 keeps only a composite checksum for multipart uploads; the verifier then trusts x-amz-meta-${MODEL_SHA256_METADATA}
  of the pinned, immutable version, whose digest must carry a valid KMS signature.)
`;

import { parseCommandLine, UsageError } from './args';
import { asksForHelp, runAsProcess, runCommand } from './command';

export { UsageError };

export type Command =
  | { readonly command: 'help' }
  | { readonly command: 'digest'; readonly file: string }
  | {
      readonly command: 'sign';
      readonly keyArn: string;
      readonly file?: string;
      readonly sha256?: string;
      readonly s3?: { readonly bucket: string; readonly key: string };
      readonly versionId?: string;
      readonly region?: string;
    };

/** Parses the command line; throws UsageError naming every problem. */
export function parseArgs(argv: readonly string[]): Command {
  const [command, ...rest] = argv;
  if (asksForHelp(argv)) return { command: 'help' };
  if (command === 'digest') {
    const { positionals } = parseCommandLine('digest', rest, {}, 1);
    if (positionals.length !== 1) throw new UsageError('digest takes exactly one file');
    return { command: 'digest', file: positionals[0] };
  }
  if (command !== 'sign') throw new UsageError(`unknown command '${command}'; expected digest or sign`);
  const { values, repeated } = parseCommandLine('sign', rest, {
    key: { type: 'string' }, file: { type: 'string' }, sha256: { type: 'string' }, s3: { type: 'string' },
    'version-id': { type: 'string' }, region: { type: 'string' },
  });
  const flags = new Map(Object.entries(values).map(([k, v]) => [`--${k}`, v as string]));
  const problems: string[] = repeated.map((flag) => `${flag} is given twice`);
  const keyArn = flags.get('--key');
  if (!keyArn) problems.push('--key <kms-key-arn> is required');
  else if (!/^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:(key|alias)\/.+$/.test(keyArn)) problems.push(`--key '${keyArn}' is not a KMS key or alias ARN`);
  const file = flags.get('--file');
  const sha256 = flags.get('--sha256');
  if ((file === undefined) === (sha256 === undefined)) problems.push('give exactly one of --file <path> and --sha256 <hex>');
  if (sha256 !== undefined && !/^[0-9a-f]{64}$/.test(sha256)) problems.push(`--sha256 '${sha256}' is not 64 lower-case hex characters`);
  const s3Uri = flags.get('--s3');
  const s3 = s3Uri === undefined ? undefined : parseS3Object(s3Uri);
  if (s3Uri !== undefined && !s3) problems.push(`--s3 '${s3Uri}' is not one S3 object (s3://bucket/key)`);
  const versionId = flags.get('--version-id');
  if (versionId !== undefined && s3Uri === undefined) problems.push('--version-id needs --s3');
  if (problems.length > 0) throw new UsageError(problems.join('\n'));
  return { command: 'sign', keyArn: keyArn!, file, sha256, s3, versionId, region: flags.get('--region') };
}

/** SHA-256 of a file, streamed. */
export async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The base64 KMS signature of a model's SHA-256, in the form the verifier checks. */
export async function signDigest(kms: KMSClient, keyArn: string, sha256: string): Promise<string> {
  const out = await kms.send(
    new SignCommand({ KeyId: keyArn, Message: modelDigestMessage(sha256), MessageType: 'DIGEST', SigningAlgorithm: MODEL_SIGNING_ALGORITHM }),
  );
  if (!out.Signature) throw new Error('KMS returned no signature');
  return Buffer.from(out.Signature).toString('base64');
}

/**
 * Records the signature on the object version after checking, where S3 can tell, that the version holds the signed
 * digest. Returns the version that was tagged.
 */
export async function recordSignature(
  s3: S3Client,
  object: { readonly bucket: string; readonly key: string; readonly versionId?: string },
  sha256: string,
  signature: string,
): Promise<{ versionId: string; digestProvenBy: string }> {
  const version = object.versionId ? { VersionId: object.versionId } : {};
  const head = await s3.send(new HeadObjectCommand({ Bucket: object.bucket, Key: object.key, ChecksumMode: 'ENABLED', ...version }));
  if (!head.VersionId || head.VersionId === 'null') throw new Error(`s3://${object.bucket}/${object.key} has no version id: enable versioning on the bucket and upload again`);
  let digestProvenBy: string;
  const checksum = head.ChecksumSHA256;
  if (checksum !== undefined && isFullObjectChecksum(checksum, head.ChecksumType)) {
    const hex = base64Sha256ToHex(checksum);
    if (hex !== sha256) throw new Error(`S3 reports SHA-256 ${hex ?? checksum} for version ${head.VersionId}, not the signed ${sha256}`);
    digestProvenBy = 'S3 full-object SHA-256 checksum';
  } else {
    const recorded = head.Metadata?.[MODEL_SHA256_METADATA];
    if (recorded !== sha256) {
      throw new Error(
        `version ${head.VersionId} has no full-object SHA-256 and its x-amz-meta-${MODEL_SHA256_METADATA} is ${recorded ?? 'missing'}, ` +
          `not ${sha256}: the verifier would reject it (upload again with --metadata ${MODEL_SHA256_METADATA}=${sha256})`,
      );
    }
    digestProvenBy = `x-amz-meta-${MODEL_SHA256_METADATA} of the pinned version`;
  }
  const target = { Bucket: object.bucket, Key: object.key, VersionId: head.VersionId };
  const existing = (await s3.send(new GetObjectTaggingCommand(target))).TagSet ?? [];
  const tags: Tag[] = [...existing.filter((t) => t.Key !== MODEL_SIGNATURE_TAG), { Key: MODEL_SIGNATURE_TAG, Value: signature }];
  if (tags.length > 10) throw new Error(`version ${head.VersionId} already has ${existing.length} tags; S3 allows 10`);
  await s3.send(new PutObjectTaggingCommand({ ...target, Tagging: { TagSet: tags } }));
  return { versionId: head.VersionId, digestProvenBy };
}

/**
 * The clients of `sign`, with the commands' profile (cliClientConfig): without it a call to an endpoint that never
 * answers waits for ever. Its 20 s request timeout bounds the time to a response's headers, which would cut the upload
 * of a large body (lib/core/sdk-client-profiles.ts reads why); these clients carry none: the model is hashed from the
 * local file, and S3 is only asked for the object's headers and tags, KMS for a signature of 32 bytes.
 */
export function clients(keyArn: string, region?: string, timeouts?: HttpTimeouts): { readonly kms: KMSClient; readonly s3: S3Client } {
  return {
    kms: new KMSClient(cliClientConfig(region ?? /^arn:[^:]+:kms:([^:]+):/.exec(keyArn)?.[1], timeouts)),
    s3: new S3Client({ ...cliClientConfig(region, timeouts), followRegionRedirects: true }),
  };
}

export interface Io {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  readonly kms?: KMSClient;
  readonly s3?: S3Client;
}

/** Runs the CLI; returns the exit code (0 ok, 1 failure, 2 usage). */
export async function main(argv: readonly string[], io: Io = { out: (l) => console.log(l), err: (l) => console.error(l) }): Promise<number> {
  return runCommand(argv, io, { prefix: 'sign-model: ', usage: USAGE, parse: parseArgs, run: (cmd) => execute(cmd, io) });
}

async function execute(cmd: Exclude<Command, { readonly command: 'help' }>, io: Io): Promise<number> {
  try {
    if (cmd.command === 'digest') {
      io.out(await sha256OfFile(cmd.file));
    } else {
      const sha256 = cmd.sha256 ?? (await sha256OfFile(cmd.file!));
      const made = io.kms && io.s3 ? undefined : clients(cmd.keyArn, cmd.region);
      const kms = io.kms ?? made!.kms;
      const signature = await signDigest(kms, cmd.keyArn, sha256);
      const result: Record<string, unknown> = { sha256, signature, keyArn: cmd.keyArn, signingAlgorithm: MODEL_SIGNING_ALGORITHM };
      if (cmd.s3) {
        const s3 = io.s3 ?? made!.s3;
        const recorded = await recordSignature(s3, { ...cmd.s3, versionId: cmd.versionId }, sha256, signature);
        result.digestProvenBy = recorded.digestProvenBy;
        result.modelData = { uri: `s3://${cmd.s3.bucket}/${cmd.s3.key}`, sha256, versionId: recorded.versionId };
      }
      io.out(JSON.stringify(result, null, 2));
    }
    return 0;
  } catch (err) {
    io.err(`sign-model: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

if (require.main === module) runAsProcess(main);
