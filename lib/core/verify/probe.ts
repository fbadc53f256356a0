/**
 * One IAM permission probe of `verify`: an action on a resource and whether the role must be allowed or denied it. Its
 * own module because the routing-target kinds (lib/core/reconciler/targets/*) say which calls their writer makes, and
 * lib/core/verify/permissions.ts judges them: neither imports the other's module for it.
 */
export interface PermissionProbe {
  readonly action: string;
  readonly resource: string;
  readonly expect: 'allowed' | 'denied';
  readonly why: string;
  /**
   * The request context the call carries, for the condition keys the role's statements test (kms:ViaService,
   * s3:VersionId, aws:RequestTag/..., aws:ResourceTag/..., iam:PassedToService, aws:RequestedRegion). Passed to the
   * simulator as ContextEntries: "Whenever a context key is evaluated in one of the simulated IAM permissions policies,
   * the corresponding value is supplied" (https://docs.aws.amazon.com/IAM/latest/APIReference/API_SimulatePrincipalPolicy.html).
   * Without it a statement with a condition is judged on an absent key (the simulator then lists the key in
   * MissingContextValues). @default - no context
   */
  readonly context?: Readonly<Record<string, string | readonly string[]>>;
}

/** The same ARN with its last path segment renamed: a resource of the same type the role was not granted. */
export function neighbour(arn: string): string {
  return arn.replace(/([^/]+)$/, '$1-not-granted');
}

/**
 * A probe's context as the simulator's ContextEntries (ContextKeyType `string` for one value, `stringList` for a
 * list: https://docs.aws.amazon.com/IAM/latest/APIReference/API_ContextEntry.html). Plain data shaped like the SDK's.
 */
export function contextEntries(probe: PermissionProbe): Array<{ ContextKeyName: string; ContextKeyValues: string[]; ContextKeyType: 'string' | 'stringList' }> {
  return Object.entries(probe.context ?? {}).map(([key, value]) => (typeof value === 'string'
    ? { ContextKeyName: key, ContextKeyValues: [value], ContextKeyType: 'string' as const }
    : { ContextKeyName: key, ContextKeyValues: [...value], ContextKeyType: 'stringList' as const }));
}
