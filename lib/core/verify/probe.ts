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
}

/** The same ARN with its last path segment renamed: a resource of the same type the role was not granted. */
export function neighbour(arn: string): string {
  return arn.replace(/([^/]+)$/, '$1-not-granted');
}
