import { Token } from 'aws-cdk-lib';

/**
 * `withName` (a text that names `name`) within `max` characters, for a field AWS bounds while the name may be longer
 * (a service name takes up to 255 characters, the Service dimension rule): cut short with '...' (ASCII, so it counts the
 * same in characters and in bytes). A name known only at deploy (a token) has no length at synth and could resolve past
 * the bound, so `withoutName` stands instead.
 */
export function nameWithin(max: number, name: string, withName: string, withoutName: string): string {
  if (Token.isUnresolved(name)) return withoutName;
  return withName.length <= max ? withName : `${withName.slice(0, max - 3)}...`;
}
