import { Stack, Token } from 'aws-cdk-lib';
import { type Construct } from 'constructs';

/**
 * Where a construct deploys, `<account>/<region>`, and the key `<account>/<region>/<name>` of a one-per-account-and-Region
 * check, when its stack names both account and Region; else undefined: an environment-agnostic stack deploys wherever
 * the CLI points, so what else shares its account and Region is unknown at synth. The key of every such check: a
 * Reconciler's service name (`service@environment`) and a serving construct's (`contract.name@environment`), since the
 * metrics both read and write are keyed by `Service` alone within an account and Region, the registry's one ECR
 * signing configuration (ArtifactTrust, `manageRegistrySigningConfiguration@environment`), an ECR repository name
 * (ArtifactTrust `repositoryNames`), and what an EksInferenceCluster installs on a cluster name (`cluster@environment`).
 */
export function environmentKey(scope: Construct, name: string): { where: string; key: string } | undefined {
  const { account, region } = Stack.of(scope);
  if (Token.isUnresolved(account) || Token.isUnresolved(region)) return undefined;
  return { where: `${account}/${region}`, key: `${account}/${region}/${name}` };
}

/**
 * Who holds each one-per-account-and-Region name (`environmentKey`) in an app: keyed by the construct tree root, so
 * separate apps (and tests) never see each other's. A check reads `find` before the construct is valid, and the
 * construct `claim`s the name once it is.
 */
export class EnvironmentClaims {
  private readonly byRoot = new WeakMap<object, Map<string, string>>();

  /** Where `scope` deploys and the path of the construct that claimed `name` there before; undefined where unknown. */
  public find(scope: Construct, name: string): { readonly where: string; readonly claimedBy?: string } | undefined {
    const at = environmentKey(scope, name);
    return at && { where: at.where, claimedBy: this.byRoot.get(scope.node.root)?.get(at.key) };
  }

  /** Records `scope` as the holder of `name` in its account and Region (nothing for an environment-agnostic stack). */
  public claim(scope: Construct, name: string): void {
    const at = environmentKey(scope, name);
    if (!at) return;
    const claims = this.byRoot.get(scope.node.root) ?? new Map<string, string>();
    this.byRoot.set(scope.node.root, claims.set(at.key, scope.node.path));
  }
}
