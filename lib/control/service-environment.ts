import { Stack, Token } from 'aws-cdk-lib';
import { type Construct } from 'constructs';

/**
 * `<account>/<region>/<service>` of a construct whose stack names both account and Region, else undefined: an
 * environment-agnostic stack deploys wherever the CLI points, so which others share its CloudWatch series is unknown
 * at synth. The key of the one-name-per-account-and-Region checks of Reconcilers (`service@environment`) and of
 * serving constructs (`contract.name@environment`): the metrics both read and write are keyed by `Service` alone within
 * an account and Region.
 */
export function serviceKey(scope: Construct, service: string): { where: string; key: string } | undefined {
  const { account, region } = Stack.of(scope);
  if (Token.isUnresolved(account) || Token.isUnresolved(region)) return undefined;
  return { where: `${account}/${region}`, key: `${account}/${region}/${service}` };
}
