import { Token } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import { isName } from '../core/validation/checker';

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

/**
 * The distinct zones of `subnets` when every one is known at synth (`subnetZones`) and real: undefined also for the
 * placeholder zones aws-cdk-lib gives a VPC until the CLI has looked the account's zones up (`dummy1a`...:
 * Stack.availabilityZones, core/lib/stack.js), since a zone cannot be judged against zones not known yet.
 */
export function knownZones(subnets: readonly ec2.ISubnet[]): string[] | undefined {
  const zones = subnetZones(subnets);
  return zones && zones.length > 0 && zones.every((z) => isName('availabilityZone', z)) ? [...new Set(zones)] : undefined;
}

/**
 * `vpc.selectSubnets(selection)` without touching the caller's selection: aws-cdk-lib 2.269.0 pushes into the given
 * `subnetFilters` array on `onePerAz` (ec2/lib/vpc.js `reifySelectionDefaults`), so the array is copied first.
 */
export function selectSubnetsOf(vpc: ec2.IVpc, selection: ec2.SubnetSelection): ec2.SelectedSubnets {
  return vpc.selectSubnets({ ...selection, subnetFilters: [...(selection.subnetFilters ?? [])] });
}
