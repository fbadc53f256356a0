import { Stack, Token } from 'aws-cdk-lib';
import { type Construct } from 'constructs';

/**
 * Where a construct deploys, `<account>/<region>`, and the key `<account>/<region>/<name>` of a one-per-account-and-Region
 * check, when its stack names both account and Region; else undefined: an environment-agnostic stack deploys wherever
 * the CLI points, so what else shares its account and Region is unknown at synth. The key of every such check: a
 * Reconciler's service name (`service@environment`) and a serving construct's (`contract.name@environment`), since the
 * metrics both read and write are keyed by `Service` alone within an account and Region, and the registry's one ECR
 * signing configuration (ArtifactTrust, `manageRegistrySigningConfiguration@environment`).
 */
export function environmentKey(scope: Construct, name: string): { where: string; key: string } | undefined {
  const { account, region } = Stack.of(scope);
  if (Token.isUnresolved(account) || Token.isUnresolved(region)) return undefined;
  return { where: `${account}/${region}`, key: `${account}/${region}/${name}` };
}
