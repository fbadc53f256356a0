/**
 * Permissions of the EKS model-data init container: its script, exactly as the synthesized Deployment carries it, runs
 * under /bin/sh with an `aws` on PATH that records the AWS CLI call it is asked to make (the AWS CLI itself is not
 * installed here); each recorded `s3api get-object` is resolved to its IAM authorizations (with kms:Decrypt through S3
 * for an SSE-KMS object) and must be allowed by the class's pod identity role as synthesized, which may grant nothing
 * else.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
import { Template } from 'aws-cdk-lib/assertions';
import type * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { EksInferenceService } from '../../lib/eks/inference-service';
import { FETCHER_IMAGE, LLAMA_CONTRACT, llamaClasses, testStack } from '../util';
import { type CapturedCall } from './aws-endpoint';
import { permissionReport } from './harness';
import { REGION, resolver, roleStatements } from './iam-policy';

/** A stand-in `aws` that records its arguments and writes a known object (a small tar archive) to its last argument. */
const FAKE_AWS = '#!/bin/sh\nprintf "%s\\n" "$@" > "$CAI_TEST_CALLS/$$.args"\nfor last; do :; done\ncp "$CAI_TEST_BODY" "$last"\n';

describe('EKS model-data init container permissions', () => {
  const { stack } = testStack('Fetch');
  const key = new kms.Key(stack, 'ModelKey', { enableKeyRotation: true });
  const service = new EksInferenceService(stack, 'Llama', {
    contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'),
    modelDataEncryptionKey: key,
  });
  const template = Template.fromStack(stack).toJSON();
  const keyArn = resolver(template)({ 'Fn::GetAtt': [stack.getLogicalId(key.node.defaultChild as kms.CfnKey), 'Arn'] }) as string;

  test.each(service.units.map((u) => [u.cls.name, u] as const))('class %s: the script\'s S3 read is allowed by its own role, and nothing else is granted', (name, unit) => {
    const init = unit.objects.deployment.spec.template.spec.initContainers?.[0];
    expect(init).toBeDefined();
    const env = Object.fromEntries((init!.env ?? []).map((e) => [e.name, String(e.value)]));
    const work = mkdtempSync(join(tmpdir(), 'fetch-'));
    writeFileSync(join(work, 'aws'), FAKE_AWS);
    chmodSync(join(work, 'aws'), 0o755);
    writeFileSync(join(work, 'weights.bin'), 'model bytes');
    execFileSync('tar', ['-cf', join(work, 'body.tar'), '-C', work, 'weights.bin']);
    const sha256 = createHash('sha256').update(readFileSync(join(work, 'body.tar'))).digest('hex');
    execFileSync(init!.command![0], init!.command!.slice(1), {
      env: {
        ...env, CAI_FETCH_SHA256: sha256, CAI_MODEL_VOLUME: join(work, 'volume'), CAI_MODEL_DIR: join(work, 'volume', 'model'),
        CAI_TEST_CALLS: work, CAI_TEST_BODY: join(work, 'body.tar'), PATH: `${work}:/usr/bin:/bin`,
      },
      stdio: 'pipe',
    });
    // The script verified the digest and unpacked the archive: it ran to the end.
    expect(readFileSync(join(work, 'volume', 'model', 'weights.bin'), 'utf8')).toBe('model bytes');
    const argsFile = execFileSync('/bin/sh', ['-c', `ls ${work}/*.args`]).toString().trim();
    const argv = readFileSync(argsFile, 'utf8').trim().split('\n');
    const flag = (f: string) => (argv.includes(f) ? argv[argv.indexOf(f) + 1] : undefined);
    expect(argv.slice(0, 2)).toEqual(['s3api', 'get-object']);
    const call: CapturedCall = {
      service: 's3', operation: 'GetObject', region: REGION,
      input: { Bucket: flag('--bucket'), Key: flag('--key'), ...(flag('--version-id') ? { VersionId: flag('--version-id') } : {}) },
    };
    expect(call.input.VersionId).toBe(unit.cls.artifact.modelData?.versionId);
    // The bucket uses SSE-KMS with the model-data key: S3 asks KMS on the caller's behalf.
    const reply = { headers: { 'x-amz-server-side-encryption': 'aws:kms', 'x-amz-server-side-encryption-aws-kms-key-id': keyArn } };
    const roleId = stack.getLogicalId(service.servingRoles[name].node.defaultChild as iam.CfnRole);
    const report = permissionReport([{ call, reply }], roleStatements(template, roleId));
    expect(report.denied).toEqual([]);
    expect(report.unused).toEqual([]);
  });
});
