/**
 * Finds a deployed stack's parts for the post-deploy commands (verify, game-day): its template, its resources and
 * each reconciler function's role and configuration. Read-only: CloudFormation ListStackResources and GetTemplate,
 * Lambda GetFunctionConfiguration of the reconciler functions alone (picked from the template), so an operator may grant
 * that action on the reconciler only; the stack's other functions (the artifact verifier, CDK's providers) are not read.
 * The reconciler's configuration comes from the deployed function, so every value in it (endpoint, listener, target
 * groups, cluster) is resolved, which the template's tokens are not.
 */
import { type CloudFormationClient, GetTemplateCommand, ListStackResourcesCommand, type StackResourceSummary } from '@aws-sdk/client-cloudformation';
import { GetFunctionConfigurationCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import { type CfnTemplate } from '../lib/core/metrics/template-check';
import { RECONCILER_CONFIG_ENV, type ReconcilerConfig } from '../lib/core/reconciler/config';
import { nestedStackIds, reconcilerFunctionIds } from '../lib/core/verify/template';

export interface DeployedReconciler {
  readonly logicalId: string;
  readonly functionName: string;
  readonly roleArn: string;
  readonly config: ReconcilerConfig;
}

export interface Deployment {
  readonly stackName: string;
  readonly template: CfnTemplate;
  readonly resources: readonly StackResourceSummary[];
  readonly reconcilers: readonly DeployedReconciler[];
}

export interface DeploymentClients {
  readonly cloudFormation: CloudFormationClient;
  readonly lambda: LambdaClient;
}

/** The physical id of a resource of the stack by its logical id. */
export function physicalId(d: Deployment, logicalId: string): string | undefined {
  return d.resources.find((r) => r.LogicalResourceId === logicalId)?.PhysicalResourceId;
}

export async function findDeployment(stackName: string, clients: DeploymentClients): Promise<Deployment> {
  const resources: StackResourceSummary[] = [];
  let next: string | undefined;
  do {
    const page = await clients.cloudFormation.send(new ListStackResourcesCommand({ StackName: stackName, NextToken: next }));
    resources.push(...(page.StackResourceSummaries ?? []));
    next = page.NextToken;
  } while (next);
  const body = (await clients.cloudFormation.send(new GetTemplateCommand({ StackName: stackName, TemplateStage: 'Original' }))).TemplateBody;
  let template: CfnTemplate;
  try {
    template = JSON.parse(body ?? '{}') as CfnTemplate;
  } catch {
    throw new Error(`${stackName}: the template is not JSON (a CDK app writes JSON templates; was this stack deployed from one?)`);
  }
  const reconcilers: DeployedReconciler[] = [];
  for (const logicalId of reconcilerFunctionIds(template)) {
    const functionName = resources.find((r) => r.LogicalResourceId === logicalId)?.PhysicalResourceId;
    if (!functionName) continue;
    const fn = await clients.lambda.send(new GetFunctionConfigurationCommand({ FunctionName: functionName }));
    const raw = fn.Environment?.Variables?.[RECONCILER_CONFIG_ENV];
    if (raw === undefined || !fn.Role) continue;
    reconcilers.push({ logicalId, functionName, roleArn: fn.Role, config: JSON.parse(raw) as ReconcilerConfig });
  }
  return { stackName, template, resources, reconcilers };
}

/**
 * The commands' error for a stack without a reconciler. A nested stack's resources are not listed with its parent's
 * (ListStackResources and GetTemplate read one stack), so when the template nests stacks the reconciler may be in one.
 */
export function noReconcilerMessage(d: Deployment): string {
  const missing = `${d.stackName} has no reconciler function (no Lambda function with ${RECONCILER_CONFIG_ENV})`;
  const nested = nestedStackIds(d.template).map((id) => `${id} (${physicalId(d, id) ?? 'not created'})`);
  return nested.length === 0 ? `${missing}: is it a stack of this library?`
    : `${missing}; it nests stacks whose resources are not read: ${nested.join(', ')}: if the reconciler is in one of them, `
      + 'pass that nested stack\'s name or ID with --stack';
}

/** The name of a role from its ARN (`arn:aws:iam::123456789012:role/path/name`). */
export function roleNameOf(arn: string): string {
  return arn.slice(arn.lastIndexOf('/') + 1);
}
