import { CfnResource, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { type IConstruct } from 'constructs';

/**
 * cdk-nag acknowledgements for resources this library owns: the one module every construct acknowledges through.
 * cdk-nag 3 reports IAM findings with granular ids (`AwsSolutions-IAM5[Resource::<arn>]`) that must be acknowledged
 * one by one; their ARNs only settle once the template resolves, so the ids are computed during validation, from the
 * same rendering cdk-nag uses.
 */

/**
 * Why each role this library creates keeps its statements in its own AWS::IAM::Policy (cdk-nag NIST 800-53 rev 5
 * IAMNoInlinePolicy): the policy belongs to exactly one role made for one purpose and every statement is scoped to that
 * purpose (test/permissions checks them against what the handlers call); a customer managed policy would be a second
 * resource per role holding the same statements.
 */
export const NIST_ONE_ROLE_POLICY = 'Each policy belongs to exactly one role this library creates for one purpose, every statement scoped to ' +
  'that purpose (test/permissions checks them against the calls the handlers make); a customer managed policy would be a second resource ' +
  'per role holding the same statements.';

/** Acknowledges NIST 800-53 rev 5 rules (by their name without the `NIST.800.53.R5-` prefix) on `scope`, each with its reason. */
export function acknowledgeNistRules(scope: IConstruct, reasons: Readonly<Record<string, string>>): void {
  for (const [rule, reason] of Object.entries(reasons)) acknowledgeRule(scope, `NIST.800.53.R5-${rule}`, reason);
}

/** Acknowledges one plain rule (e.g. `AwsSolutions-SQS3`) on `scope`. */
export function acknowledgeRule(scope: IConstruct, id: string, reason: string): void {
  Validations.of(scope).acknowledge({ id, reason });
}

/**
 * Acknowledges every wildcard-resource finding (`AwsSolutions-IAM5[Resource::...]`) of the IAM policies under
 * `scope` whose rendered resource passes `accept` (default: all of them), with `reason`.
 */
export function acknowledgeWildcardResources(scope: IConstruct, reason: string, accept: (resource: string) => boolean = () => true): void {
  lazily(
    scope,
    () =>
      policyDocuments(scope)
        .flatMap((doc) => statementsOf(doc))
        .filter((s) => s.Effect === 'Allow')
        .flatMap((s) => toArray(s.Resource).map(flatten))
        .filter((r) => r.includes('*') && accept(r))
        .map((r) => `AwsSolutions-IAM5[Resource::${r}]`),
    reason,
  );
}

/** Acknowledges the AWS-managed-policy findings (`AwsSolutions-IAM4[Policy::...]`) of the roles under `scope`. */
export function acknowledgeManagedPolicies(scope: IConstruct, reason: string): void {
  lazily(
    scope,
    () =>
      scope.node
        .findAll()
        .filter((c): c is iam.CfnRole => c instanceof iam.CfnRole)
        .flatMap((role) => toArray(Stack.of(role).resolve(role.managedPolicyArns)).map((p) => flatten(Stack.of(role).resolve(p))))
        .filter((p) => p.includes(':iam::aws:'))
        .map((p) => `AwsSolutions-IAM4[Policy::${p}]`),
    reason,
  );
}

function lazily(scope: IConstruct, ids: () => string[], reason: string): void {
  scope.node.addValidation({
    validate: () => {
      for (const id of new Set(ids())) Validations.of(scope).acknowledge({ id, reason });
      return [];
    },
  });
}

interface Statement {
  readonly Effect?: string;
  readonly Resource?: unknown;
}

function policyDocuments(scope: IConstruct): unknown[] {
  return scope.node.findAll().flatMap((c) => {
    if (!(c instanceof CfnResource)) return [];
    const stack = Stack.of(c);
    if (c instanceof iam.CfnPolicy || c instanceof iam.CfnManagedPolicy) return [stack.resolve(c.policyDocument)];
    if (c instanceof iam.CfnRole) {
      return toArray(stack.resolve(c.policies)).map((p) => stack.resolve((p as { policyDocument?: unknown }).policyDocument));
    }
    return [];
  });
}

function statementsOf(doc: unknown): Statement[] {
  return toArray((doc as { Statement?: unknown } | undefined)?.Statement) as Statement[];
}

function toArray(value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

/** Renders a resolved CloudFormation value the way cdk-nag names it in granular finding ids (`<AWS::Partition>`, `<Res.Attr>`). */
export function nagRendering(node: unknown): string {
  return flatten(node);
}

function flatten(node: unknown): string {
  if (node === undefined) return '';
  if (typeof node === 'string') return node.replace(/\${/g, '<').replace(/}/g, '>');
  const o = node as Record<string, unknown>;
  if (o['Fn::Join']) {
    const [delimiter, items] = o['Fn::Join'] as [string, unknown[]];
    return items.map(flatten).join(delimiter);
  }
  if (o['Fn::Sub']) return flatten(o['Fn::Sub']);
  if (o['Fn::GetAtt']) {
    const [resource, attribute] = o['Fn::GetAtt'] as [unknown, unknown];
    return `<${flatten(resource)}.${flatten(attribute)}>`;
  }
  if (o['Fn::ImportValue']) return flatten(o['Fn::ImportValue']);
  if (o.Ref) return `<${flatten(o.Ref)}>`;
  return JSON.stringify(node);
}
