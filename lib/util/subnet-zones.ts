import { Token } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';

/**
 * The zone of each subnet, in order, or undefined when one is not known at synth: a subnet imported without its zone
 * (aws-cdk-lib's ImportedSubnet throws on `availabilityZone`), a string token, or a zone taken from a list token, which
 * reads `#{Token[...]}` and which Token.isUnresolved sees only as a one-element list (aws-cdk-lib 2.269.0
 * core/lib/private/encoding.js `unresolved`, BEGIN_LIST_TOKEN_MARKER): every subnet of such an imported VPC reads the
 * same zone, so zones compared as strings would say they share one.
 */
export function subnetZones(subnets: readonly ec2.ISubnet[]): string[] | undefined {
  const zones: string[] = [];
  for (const subnet of subnets) {
    let zone: string;
    try {
      zone = subnet.availabilityZone;
    } catch {
      return undefined;
    }
    if (Token.isUnresolved(zone) || Token.isUnresolved([zone])) return undefined;
    zones.push(zone);
  }
  return zones;
}
