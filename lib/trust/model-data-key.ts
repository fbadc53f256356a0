import { ArnFormat, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import { type IConstruct } from 'constructs';
import { type ModelDataKeyFacts } from '../core/validation/rules';

/*
 * The model-data key: the customer managed KMS key of a model-data bucket that uses SSE-KMS. One concept for every
 * reader of model data: the SageMaker execution role of each class (`SageMakerCapacityEndpointProps`), the deploy-time
 * verifier and the sign-model publishers (`ArtifactTrustProps`), and the EKS model-data pod identity of each class
 * (`EksInferenceServiceProps`), each through its `modelDataEncryptionKey` prop.
 *
 * Each gets `kms:Decrypt` on that key only when S3 asks on its behalf (`kms:ViaService` = `s3.<key region>.amazonaws.com`;
 * an SSE-KMS key is in the bucket's region): a GetObject of an SSE-KMS object needs it, and so does a HeadObject with
 * `ChecksumMode: ENABLED` ("If you enable checksum mode and the object is uploaded with a checksum and encrypted with
 * a KMS key, you must have permission to use the kms:Decrypt action to retrieve the checksum",
 * https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadObject.html). kms:Decrypt has the resource type `key*` and
 * the condition key kms:ViaService (https://docs.aws.amazon.com/service-authorization/latest/reference/list_awskeymanagementservice.html).
 *
 * A kms.IAlias fits kms.IKey but is refused at synth (MODEL_DATA_KEY_RULE in lib/core/validation/rules.ts): its keyArn
 * is the alias ARN (aws-cdk-lib@2.269.0 aws-kms/lib/alias.js: `get keyArn(){...formatArn({service:"kms",resource:
 * this.aliasName})}`), and a grant on that is no grant on the key.
 *
 * The key's own policy must let the account's IAM policies grant it (the default key policy of a key CDK creates does;
 * for a key from elsewhere, check its policy).
 */

/**
 * The statement that lets a reader decrypt model data with `key` through S3 only. No `Sid`: a principal that reads
 * model data of two keys (a publisher of two ArtifactTrusts) gets two such statements, and IAM rejects a policy whose
 * statement ids repeat (CDK merges only identical statements).
 */
export function modelDataDecryptStatement(scope: IConstruct, key: kms.IKey): iam.PolicyStatement {
  const region = Stack.of(scope).splitArn(key.keyArn, ArnFormat.SLASH_RESOURCE_NAME).region;
  return new iam.PolicyStatement({
    actions: ['kms:Decrypt'],
    resources: [key.keyArn],
    conditions: { StringEquals: { 'kms:ViaService': `s3.${region}.amazonaws.com` } },
  });
}

/**
 * What the validation rule checks of a model-data key. Every IAlias carries `aliasName` (`new kms.Alias`,
 * `Alias.fromAliasName`, `Alias.fromAliasAttributes`; only the first is an `instanceof kms.Alias`); a key does not.
 */
export function modelDataKeyFacts(key: kms.IKey): ModelDataKeyFacts {
  return { keyArn: key.keyArn, ...('aliasName' in key ? { alias: key.node.path } : {}) };
}
