/**
 * Finds a deployed stack's parts for the post-deploy commands (verify, game-day): its template, its resources and
 * each reconciler function's role and configuration. Read-only: CloudFormation ListStackResources and GetTemplate,
 * Lambda GetFunctionConfiguration. The reconciler's configuration comes from the deployed function, so every value
 * in it (endpoint, listener, target groups, cluster) is resolved, which the template's tokens are not.
 */
import { type CloudFormationClient, GetTemplateCommand, ListStackResourcesCommand, type StackResourceSummary } from '@aws-sdk/client-cloudformation';
import { GetFunctionConfigurationCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import { type CfnTemplate } from '../lib/core/metrics/template-check';
import { RECONCILER_CONFIG_ENV, type ReconcilerConfig } from '../lib/core/reconciler/config';

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
  for (const r of resources) {
    if (r.ResourceType !== 'AWS::Lambda::Function' || !r.PhysicalResourceId || !r.LogicalResourceId) continue;
    const fn = await clients.lambda.send(new GetFunctionConfigurationCommand({ FunctionName: r.PhysicalResourceId }));
    const raw = fn.Environment?.Variables?.[RECONCILER_CONFIG_ENV];
    if (raw === undefined || !fn.Role) continue;
    reconcilers.push({
      logicalId: r.LogicalResourceId, functionName: r.PhysicalResourceId, roleArn: fn.Role, config: JSON.parse(raw) as ReconcilerConfig,
    });
  }
  return { stackName, template, resources, reconcilers };
}

/** The name of a role from its ARN (`arn:aws:iam::123456789012:role/path/name`). */
export function roleNameOf(arn: string): string {
  return arn.slice(arn.lastIndexOf('/') + 1);
}
