/**
 * Recognises values that are CDK tokens without importing aws-cdk-lib, so that `lib/core` stays
 * importable from a Lambda bundle. Checks skip such values: they are resolved at deploy time.
 *
 * CDK encodes string tokens as `${Token[...]}`, list tokens as `#{Token[...]}` and number tokens as
 * doubles around -1.8881545897087626e+289.
 */
export function isUnresolved(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('${Token[') || value.includes('#{Token[');
  // -Infinity is not a token: it is an invalid number that the checks must report as such.
  if (typeof value === 'number') return Number.isFinite(value) && value < -1e289;
  if (Array.isArray(value)) return value.some(isUnresolved);
  return false;
}
