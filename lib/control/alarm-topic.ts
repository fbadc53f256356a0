import { ArnFormat, Stack } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { type Construct } from 'constructs';
import { nameWithin } from '../util/name-within';

const TOPIC_DISPLAY_NAME_MAX = 100;

/**
 * Where the library's alarms page someone: one SNS topic, encrypted with a customer managed key, that every alarm
 * notifies on ALARM and on OK. InferenceAlarms and the Reconciler create one each by default, under `idPrefix`; pass
 * one topic to both (`alarmTopic`) to have a single subscription point.
 */
export interface EncryptedAlarmTopic {
  readonly topic: sns.Topic;
  readonly key: kms.Key;
}

/**
 * A new topic encrypted with a new rotating key that CloudWatch may use, accepting only TLS publishers and letting the
 * alarms of this account and region publish.
 */
export function encryptedAlarmTopic(scope: Construct, idPrefix: string, service: string): EncryptedAlarmTopic {
  const key = new kms.Key(scope, `${idPrefix}Key`, { description: `Encrypts the alarm topic of inference service ${service}`, enableKeyRotation: true });
  // CloudWatch publishes alarm notifications to an encrypted topic only if the key lets it (the AWS managed SNS key does not).
  key.addToResourcePolicy(new iam.PolicyStatement({
    principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
    actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
    resources: ['*'],
  }));
  // SNS takes a DisplayName of at most 100 characters (aws-cdk-lib 2.269.0 aws-sns throws DisplayNameLessEqualCharacters
  // above it) and a service name may take 255.
  const displayName = nameWithin(TOPIC_DISPLAY_NAME_MAX, service, `Inference alarms: ${service}`, 'Inference alarms');
  const topic = new sns.Topic(scope, idPrefix, { masterKey: key, enforceSSL: true, displayName });
  // enforceSSL writes a topic policy, and a topic policy replaces SNS's default one, whose AWS:SourceOwner statement is
  // what let same-account alarms publish; SnsAction.bind adds no statement (aws-cdk-lib@2.269.0 aws-cloudwatch-actions/lib/sns.ts).
  // Without this one every alarm action fails "... alarm:<name> is not authorized to perform: SNS:Publish":
  // https://repost.aws/knowledge-center/cloudwatch-receive-sns-for-alarm-trigger (the statement and its ArnLike
  // aws:SourceArn condition). The alarm ARN pins account and region; aws:SourceAccount is left out, as no AWS page
  // confirms CloudWatch sends it with an alarm's publish and a condition on a missing key would deny every notification.
  // No other publisher exists: the library's EventBridge rules target the reconciler function and queues, not this topic.
  topic.addToResourcePolicy(new iam.PolicyStatement({
    sid: 'AllowAlarmsOfThisAccountToPublish',
    principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
    actions: ['sns:Publish'],
    resources: [topic.topicArn],
    conditions: {
      ArnLike: { 'aws:SourceArn': Stack.of(scope).formatArn({ service: 'cloudwatch', resource: 'alarm', resourceName: '*', arnFormat: ArnFormat.COLON_RESOURCE_NAME }) },
    },
  }));
  return { topic, key };
}

/** Every alarm notifies `topic` when it enters ALARM and when it returns to OK. */
export function notifyOnAlarmAndOk(topic: sns.ITopic, alarms: readonly cloudwatch.Alarm[]): void {
  const action = new actions.SnsAction(topic);
  for (const alarm of alarms) {
    alarm.addAlarmAction(action);
    alarm.addOkAction(action);
  }
}
