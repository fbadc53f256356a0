import { type Duration, type Size, SizeRoundingBehavior } from 'aws-cdk-lib';
import { UNRESOLVED_DURATION } from '../core/validation/checker';

/**
 * A Duration in seconds for checking: fractional seconds stay fractional (so a rule can say "whole seconds" with our
 * construct path, instead of aws-cdk-lib throwing its own error first), and a token Duration becomes a token number.
 */
export function durationSeconds(d: Duration | undefined): number | undefined {
  if (d === undefined) return undefined;
  return d.isUnresolved() ? UNRESOLVED_DURATION : d.toSeconds({ integral: false });
}

/** A Duration in milliseconds for checking (see durationSeconds). */
export function durationMillis(d: Duration | undefined): number | undefined {
  if (d === undefined) return undefined;
  return d.isUnresolved() ? UNRESOLVED_DURATION : d.toMilliseconds({ integral: false });
}

/** A Duration in days for checking (see durationSeconds). */
export function durationDays(d: Duration | undefined): number | undefined {
  if (d === undefined) return undefined;
  return d.isUnresolved() ? UNRESOLVED_DURATION : d.toDays({ integral: false });
}

/** A Size in GiB for checking: fractions stay fractions instead of aws-cdk-lib throwing first. */
export function sizeGibibytes(s: Size | undefined): number | undefined {
  if (s === undefined) return undefined;
  return s.isUnresolved() ? UNRESOLVED_DURATION : s.toGibibytes({ rounding: SizeRoundingBehavior.NONE });
}
