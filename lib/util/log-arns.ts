import { ArnFormat, Stack } from 'aws-cdk-lib';
import { type IConstruct } from 'constructs';

/** One log group's resources, each in the form IAM policies name it for the actions on that resource type. */
export interface LogGroupArns {
  /**
   * The group's ARN without the trailing `:*`: the form CloudWatch Logs documents only for TagResource, UntagResource
   * and ListTagsForResource (the page cited at `group`).
   */
  readonly bare: string;
  /**
   * For the actions on the `log-group` resource type (CreateLogGroup, DescribeLogStreams): the group's ARN with a
   * trailing `:*`, the form CloudWatch Logs documents for IAM policies of every action but TagResource, UntagResource
   * and ListTagsForResource (https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/iam-access-control-overview-cwl.html;
   * LogGroup.arn, @aws-sdk/client-cloudwatch-logs 3.1169.0 dist-types/models/models_0.d.ts:3018-3023). The bare ARN
   * does not do: a denied CreateLogGroup names `arn:...:log-group:<name>:log-stream:` (elastic/apm-aws-lambda#526).
   */
  readonly group: string;
  /**
   * For the actions on the `log-stream` resource type (CreateLogStream, PutLogEvents):
   * `arn:...:log-group:<name>:log-stream:<stream>`, every stream, since the writer names them at run time.
   */
  readonly streams: string;
}

/**
 * The ARNs of `logGroupName` (a name or a token for one) in the stack of `scope`. Resource types per action: Service
 * Authorization Reference, https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazoncloudwatchlogs.html.
 * Neither form reaches another group: a log group name has no `:` (CreateLogGroup: a-z, A-Z, 0-9, '_', '-', '/', '.',
 * '#'; @aws-sdk/client-cloudwatch-logs 3.1169.0 dist-types/commands/CreateLogGroupCommand.d.ts:39-41).
 */
export function logGroupArns(scope: IConstruct, logGroupName: string): LogGroupArns {
  const arn = Stack.of(scope).formatArn({ service: 'logs', resource: 'log-group', resourceName: logGroupName, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
  return { bare: arn, group: `${arn}:*`, streams: `${arn}:log-stream:*` };
}
