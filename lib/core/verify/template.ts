/**
 * What the conformance checks need from a deployed stack's template (CloudFormation GetTemplate): the reconciler
 * functions, the capacity-error metric filters, the observability add-on and the roles bound to service accounts.
 * Values that hold a CloudFormation token are reported as absent, never guessed.
 */
import { KARPENTER_CAPACITY_NAMESPACE } from '../metrics/karpenter-capacity';
import { OBSERVABILITY_ADDON_NAME, type CfnTemplate } from '../metrics/template-check';
import { nodePoolOfCapacityMetric } from '../metrics/karpenter-capacity';
import { RECONCILER_CONFIG_ENV } from '../reconciler/config';

type Json = unknown;

/** A literal string, or the text of an `Fn::Join` whose tokens become `{token}`; undefined for anything else. */
function text(value: Json): string | undefined {
  if (typeof value === 'string') return value;
  const join = value && typeof value === 'object' ? (value as Record<string, Json>)['Fn::Join'] : undefined;
  if (Array.isArray(join) && Array.isArray(join[1])) return (join[1] as Json[]).map((v) => text(v) ?? '{token}').join(String(join[0]));
  return undefined;
}

const literal = (value: Json): string | undefined => {
  const t = text(value);
  return t === undefined || t.includes('{token}') ? undefined : t;
};

/**
 * The logical ids of the template's reconciler functions: each Lambda function whose environment names the reconciler's
 * configuration variable (lib/control/reconciler.ts sets it; a CDK function renders its environment as
 * `Environment.Variables`, aws-cdk-lib@2.269.0 aws-lambda/lib/function.js `renderEnvironment`, the place
 * lib/core/metrics/template-check.ts reads it too). The key is literal even where the value holds a token.
 */
export function reconcilerFunctionIds(template: CfnTemplate): string[] {
  return Object.entries(template.Resources ?? {})
    .filter(([, r]) => r.Type === 'AWS::Lambda::Function')
    .filter(([, r]) => Object.hasOwn((r.Properties?.Environment as { Variables?: object } | undefined)?.Variables ?? {}, RECONCILER_CONFIG_ENV))
    .map(([logicalId]) => logicalId);
}

/** The logical ids of the template's nested stacks (AWS::CloudFormation::Stack): their resources are in stacks of their own. */
export function nestedStackIds(template: CfnTemplate): string[] {
  return Object.entries(template.Resources ?? {}).filter(([, r]) => r.Type === 'AWS::CloudFormation::Stack').map(([logicalId]) => logicalId);
}

export interface CapacityFilter {
  readonly logicalId: string;
  /** Undefined when the pattern holds a token (then it is not tested). */
  readonly filterPattern?: string;
  readonly nodePoolName: string;
}

/** The Karpenter capacity-error metric filters of a template (metric namespace KARPENTER_CAPACITY_NAMESPACE). */
export function capacityFilters(template: CfnTemplate): CapacityFilter[] {
  const out: CapacityFilter[] = [];
  for (const [logicalId, r] of Object.entries(template.Resources ?? {})) {
    if (r.Type !== 'AWS::Logs::MetricFilter') continue;
    const t = ((r.Properties?.MetricTransformations as Array<Record<string, Json>> | undefined) ?? [])
      .find((m) => m.MetricNamespace === KARPENTER_CAPACITY_NAMESPACE);
    const nodePoolName = t && nodePoolOfCapacityMetric(text(t.MetricName) ?? '');
    if (nodePoolName) out.push({ logicalId, filterPattern: literal(r.Properties?.FilterPattern), nodePoolName });
  }
  return out;
}

export interface ObservabilityAddon {
  readonly logicalId: string;
  readonly addonVersion?: string;
  readonly configurationValues?: string;
}

/** The amazon-cloudwatch-observability add-on(s) a template installs. */
export function observabilityAddons(template: CfnTemplate): ObservabilityAddon[] {
  return Object.entries(template.Resources ?? {})
    .filter(([, r]) => r.Type === 'AWS::EKS::Addon' && r.Properties?.AddonName === OBSERVABILITY_ADDON_NAME)
    .map(([logicalId, r]) => ({
      logicalId,
      addonVersion: literal(r.Properties?.AddonVersion),
      configurationValues: literal(r.Properties?.ConfigurationValues),
    }));
}

/** The role (logical id) bound to a Kubernetes service account by an EKS Pod Identity association of the template. */
export function podIdentityRole(template: CfnTemplate, serviceAccount: string): string | undefined {
  for (const r of Object.values(template.Resources ?? {})) {
    if (r.Type !== 'AWS::EKS::PodIdentityAssociation' || r.Properties?.ServiceAccount !== serviceAccount) continue;
    const att = (r.Properties?.RoleArn as Record<string, Json> | undefined)?.['Fn::GetAtt'];
    if (Array.isArray(att) && typeof att[0] === 'string') return att[0];
  }
  return undefined;
}

/** One statement of a role's policy in the template, as written (values may be CloudFormation intrinsics). */
export interface TemplateStatement {
  readonly Sid?: string;
  readonly Action?: string | string[];
  readonly Resource?: Json;
  readonly Condition?: Json;
}

/** The statements of the template's AWS::IAM::Policy resources attached to a role (by its logical id). */
export function roleStatements(template: CfnTemplate, roleLogicalId: string): TemplateStatement[] {
  return Object.values(template.Resources ?? {})
    .filter((r) => r.Type === 'AWS::IAM::Policy'
      && ((r.Properties?.Roles as Json[] | undefined) ?? []).some((x) => (x as Record<string, Json> | null)?.Ref === roleLogicalId))
    .flatMap((r) => ((r.Properties?.PolicyDocument as { Statement?: TemplateStatement[] } | undefined)?.Statement ?? []));
}

/** The statements of a role that allow an action (exactly as written in the policy). */
export function statementsAllowing(statements: readonly TemplateStatement[], action: string): TemplateStatement[] {
  return statements.filter((s) => [s.Action ?? []].flat().includes(action));
}

/** The logical id a `Fn::GetAtt [id, 'Arn']` names, or undefined for anything else. */
export function getAttArnOf(value: Json): string | undefined {
  const att = value && typeof value === 'object' ? (value as Record<string, Json>)['Fn::GetAtt'] : undefined;
  return Array.isArray(att) && att[1] === 'Arn' && typeof att[0] === 'string' ? att[0] : undefined;
}
