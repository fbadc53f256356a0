import { type Environment } from 'aws-cdk-lib';

/**
 * Where the example stacks synthesize. Offline and without an account, a placeholder account is used; with
 * credentials (`cdk deploy`), the CLI's account and region are.
 */
export const EXAMPLE_ENV: Environment = {
  account: process.env.CDK_DEFAULT_ACCOUNT ?? '111111111111',
  region: process.env.CDK_DEFAULT_REGION ?? 'us-east-1',
};
