import { Lazy, Stack, Token, Tokenization } from 'aws-cdk-lib';
import { type Construct } from 'constructs';
import { SERVING_RECORD_METADATA_KEY, TOKEN_TEXT, type ServingRecord } from '../core/service/serving-record';
import { Checker } from '../core/validation/checker';
import { ConstructValidationError } from '../core/validation/error';
import { SERVICE_PER_ENVIRONMENT_RULE, SERVICE_PER_STACK_RULE } from '../core/validation/rules';
import { EnvironmentClaims } from '../util/environment-key';

/** Every value that is a CloudFormation token becomes TOKEN_TEXT: the record says what was literal, never a reference. */
function literalOnly(value: unknown): unknown {
  if (typeof value === 'string' || typeof value === 'number') return Token.isUnresolved(value) ? TOKEN_TEXT : value;
  if (Array.isArray(value)) return Tokenization.isResolvable(value) ? TOKEN_TEXT : value.map(literalOnly);
  if (value && typeof value === 'object') {
    if (Tokenization.isResolvable(value)) return TOKEN_TEXT;
    return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined).map(([k, v]) => [k, literalOnly(v)]));
  }
  return value;
}

/** The construct path that records each service name, per stack (`SERVICE_PER_STACK_RULE`). */
const RECORDED_BY = new WeakMap<Stack, Map<string, string>>();
/** The serving construct of each service name in each known account and Region, by construct tree root (`SERVICE_PER_ENVIRONMENT_RULE`). */
const SERVED_IN = new EnvironmentClaims();

/**
 * Records a serving construct's `servingRecord()` in its stack's template Metadata, under its service's name, for the
 * post-deploy commands (lib/core/service/serving-record.ts says what reads it). Produced at synth, when every class
 * is known. A second serving construct of the same service name in the stack fails (`construct` names its class), and
 * so does one in another stack of the app in the same account and Region (unknown for an environment-agnostic stack).
 */
export function recordServing(scope: Construct, construct: string, service: string, produce: () => ServingRecord): void {
  const stack = Stack.of(scope);
  const recorded = RECORDED_BY.get(stack) ?? new Map<string, string>();
  RECORDED_BY.set(stack, recorded);
  const c = new Checker({ 'contract.name@stack': SERVICE_PER_STACK_RULE, 'contract.name@environment': SERVICE_PER_ENVIRONMENT_RULE });
  const at = SERVED_IN.find(scope, service);
  if (c.cross('contract.name@stack', { service, servedBy: recorded.get(service) }, 'contract.name')) {
    // After the stack's own check: two in one stack share its account and Region as a matter of course.
    c.cross('contract.name@environment', { service, servedBy: at?.claimedBy, where: at?.where }, 'contract.name');
  }
  if (c.problems.length > 0) throw new ConstructValidationError(construct, scope.node.path, c.problems);
  recorded.set(service, scope.node.path);
  SERVED_IN.claim(scope, service);
  const metadata: Record<string, unknown> = (stack.templateOptions.metadata ??= {});
  const records = (metadata[SERVING_RECORD_METADATA_KEY] ??= {}) as Record<string, unknown>;
  records[service] = Lazy.any({ produce: () => literalOnly(produce()) });
}
