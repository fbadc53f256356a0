/**
 * What every integ app (test/integ/integ.*.ts) shares: where its stacks deploy and the context it synthesizes with.
 *
 * - `npm run integ` (integ-runner 2.204.5) runs each app file itself and synthesizes it with the context of the nearest
 *   cdk.json above the test (this repository's), `@aws-cdk/core:target-partitions` unset and creation stack traces off
 *   (aws/aws-cdk-cli@integ-runner@v2.204.5 packages/@aws-cdk/integ-runner/lib/runner/cdk-test-app.ts:608-637 and
 *   lib/runner/private/test-specific-context.ts:11-47).
 * - `npm test` (integ-snapshot.test.ts) synthesizes the same apps offline with `integSynthContext()`: cdk.json's
 *   context (the flags a `cdk init` app gets at the pinned aws-cdk-lib) with the same key removed, so the committed
 *   snapshot is what integ-runner deploys and what a consumer's app with this library synthesizes.
 */
import { App, type Environment, type Stack } from 'aws-cdk-lib';
import { cdkJsonContext } from '../util';

/** An integ app builder: `outdir` and `context` for the offline snapshot check, nothing under integ-runner. */
export type IntegAppBuilder = (options?: IntegAppOptions) => App;

export interface IntegAppOptions {
  readonly outdir?: string;
  readonly context?: Record<string, unknown>;
}

export function integApp(options: IntegAppOptions = {}): App {
  return new App({ ...(options.outdir ? { outdir: options.outdir } : {}), ...(options.context ? { context: options.context } : {}) });
}

/**
 * The account and region the integ stacks deploy to: the CLI's (credentials and AWS_REGION), or placeholders offline.
 * Without credentials the toolkit passes the placeholders `unknown-account` / `unknown-region`
 * (aws/aws-cdk-cli@integ-runner@v2.204.5 packages/@aws-cdk/cloud-assembly-api/lib/environment.ts:24-25); the
 * library's constructs need a literal region (ECR image URIs, the ALB log-delivery principal), so those count as unset.
 */
export function integEnv(): Environment {
  const known = (value: string | undefined) => (value && !value.startsWith('unknown-') ? value : undefined);
  return {
    account: known(process.env.CDK_DEFAULT_ACCOUNT) ?? '111111111111',
    region: known(process.env.CDK_DEFAULT_REGION) ?? 'us-east-1',
  };
}

/** cdk.json's context without the key integ-runner unsets. */
export function integSynthContext(): Record<string, unknown> {
  const { ['@aws-cdk/core:target-partitions']: _unset, ...context } = cdkJsonContext();
  return context;
}

/**
 * Seeds the availability-zone lookup of a stack with zones a, b and c of its region, so that synthesis stays offline
 * (as the EKS example does). Use a region where those zones offer the classes' instance types.
 */
export function seedAvailabilityZones(stack: Stack): void {
  stack.node.setContext(`availability-zones:account=${stack.account}:region=${stack.region}`, ['a', 'b', 'c'].map((z) => `${stack.region}${z}`));
}
