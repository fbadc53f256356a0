/**
 * The permissions check shared by the handler suites: every call a handler made (captured by the recording endpoint)
 * resolved to its IAM authorizations must be allowed by the synthesized role, and the role must grant no action the
 * handler never needed (documented exceptions aside).
 */
import { type Reply, type CapturedCall } from './aws-endpoint';
import { allows, grantedActions, iamRequests, type IamRequest, type Statement } from './iam-policy';

/** Actions a role holds that no handler calls, each with why (stated in the report and the docs). */
export const LAMBDA_LOG_DELIVERY = {
  'logs:CreateLogStream': 'Lambda writes the function\'s own log streams with the execution role; the handler code never calls Logs',
  'logs:PutLogEvents': 'Lambda delivers the function\'s log lines (the audit trail, EMF) with the execution role',
} as const;

export interface PermissionReport {
  /** Authorizations the role denies, as `action resource`. */
  readonly denied: string[];
  /** Actions the role grants that no captured call needed and no exception names. */
  readonly unused: string[];
  /** Every action the calls needed. */
  readonly used: string[];
}

export function permissionReport(
  exchanges: ReadonlyArray<{ readonly call: CapturedCall; readonly reply: Reply }>,
  statements: readonly Statement[],
  exceptions: Readonly<Record<string, string>> = {},
): PermissionReport {
  const requests: IamRequest[] = exchanges.flatMap(({ call, reply }) => iamRequests(call, reply));
  const denied = [...new Set(requests.filter((r) => !allows(statements, r)).map((r) => `${r.action} ${r.resource}`))].sort();
  const used = [...new Set(requests.map((r) => r.action))].sort();
  const unused = grantedActions(statements).filter((a) => !used.includes(a) && !(a in exceptions));
  return { denied, unused, used };
}

/** Runs `fn` with these environment variables set, restoring the previous values after. */
export async function withEnvironment<T>(env: Readonly<Record<string, string>>, fn: () => Promise<T>): Promise<T> {
  const previous = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(previous)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
