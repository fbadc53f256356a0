import { ArnFormat, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { type Construct } from 'constructs';

/**
 * A customer managed key for the library's audit-trail log groups (the reconciler's decisions, the artifact verifier's
 * verdicts): CloudWatch Logs encrypts a log group with a KMS key only if the key policy lets the regional Logs service
 * principal use it, bound by the `kms:EncryptionContext:aws:logs:arn` of log groups in this account and region
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/encrypt-log-data-kms.html). Rotation is on.
 */
export function newLogGroupKey(scope: Construct, id: string, description: string): kms.Key {
  const stack = Stack.of(scope);
  const key = new kms.Key(scope, id, { enableKeyRotation: true, description });
  key.addToResourcePolicy(new iam.PolicyStatement({
    principals: [new iam.ServicePrincipal(`logs.${stack.region}.amazonaws.com`)],
    actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
    resources: ['*'],
    conditions: {
      ArnLike: { 'kms:EncryptionContext:aws:logs:arn': stack.formatArn({ service: 'logs', resource: 'log-group', resourceName: '*', arnFormat: ArnFormat.COLON_RESOURCE_NAME }) },
    },
  }));
  return key;
}
