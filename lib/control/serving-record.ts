import { Lazy, Stack, Token, Tokenization } from 'aws-cdk-lib';
import { type Construct } from 'constructs';
import { SERVING_RECORD_METADATA_KEY, TOKEN_TEXT, type ServingRecord } from '../core/service/serving-record';

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

/**
 * Records a serving construct's `servingRecord()` in its stack's template Metadata, under its service's name, for the
 * post-deploy commands (lib/core/service/serving-record.ts says what reads it). Produced at synth, when every class
 * is known.
 */
export function recordServing(scope: Construct, service: string, produce: () => ServingRecord): void {
  const options = Stack.of(scope).templateOptions;
  const metadata: Record<string, unknown> = (options.metadata ??= {});
  const records = (metadata[SERVING_RECORD_METADATA_KEY] ??= {}) as Record<string, unknown>;
  records[service] = Lazy.any({ produce: () => literalOnly(produce()) });
}
