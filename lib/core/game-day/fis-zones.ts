/**
 * Whether AWS FIS's zonal capacity error can reach the launches of the class the game day takes away: a pure check of
 * the class's NodePool before anything changes (bin/game-day.ts reads the pool with kubectl and refuses, exit 2).
 *
 * - `aws:ec2:api-insufficient-instance-capacity-error` injects on RunInstances, CreateCapacityReservation,
 *   StartInstances and CreateFleet, but "Requests that include capacity asks in multiple Availability Zones are not
 *   supported" (https://docs.aws.amazon.com/fis/latest/userguide/fis-actions-reference.html#api-ice).
 * - Karpenter launches a node with one CreateFleet call whose overrides are every instance type and zone the NodeClaim
 *   allows, one per pair, each with its AvailabilityZone (aws/karpenter-provider-aws@v1.14.1
 *   pkg/providers/instance/instance.go: `launchInstance` :351-435, its one CreateFleet :391, `getOverrides` :505-571, the zone at :562). A
 *   NodeClaim's requirements start from its NodePool's (kubernetes-sigs/karpenter@6e7eab7a0f48, the commit v1.14.1's
 *   go.mod pins: pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go `NewNodeClaimTemplate` :66-83); its pods
 *   may narrow them, nothing widens them.
 * So only a pool held to one zone makes every launch of the class a one-zone request; a pool without a zone
 * requirement (the library's default: a class's `placement.zones` unset) asks in every zone of its subnets at once,
 * which FIS does not support: the experiment would run while no launch of the class fails. Whether FIS then fails the
 * request, passes it or rejects it is not documented: refused, whatever it does.
 *
 * Narrowing a pool's zones for the game day drifts its nodes in other zones: Karpenter compares each NodeClaim's labels
 * with the pool's current requirements (kubernetes-sigs/karpenter@6e7eab7a0f48
 * pkg/controllers/nodeclaim/disruption/drift.go `areRequirementsDrifted` :170-180) and replaces those it finds drifted.
 */

/** A NodePool requirement as Kubernetes writes it (NodeSelectorRequirement). */
export interface ZoneRequirement {
  readonly key: string;
  readonly operator: string;
  readonly values?: readonly string[];
}

/** The parts of a NodePool the check reads. */
export interface NodePoolZones {
  readonly metadata: { readonly name: string };
  readonly spec: { readonly template?: { readonly spec?: { readonly requirements?: readonly ZoneRequirement[] } } };
}

/**
 * The labels that hold a node's zone: its name, and its ID (aws/karpenter-provider-aws@v1.14.1 pkg/apis/v1/labels.go:172
 * `topology.k8s.aws/zone-id`, a well-known label each offering carries: pkg/providers/instancetype/offering/base_resolver.go:138).
 */
export const ZONE_LABEL = 'topology.kubernetes.io/zone';
export const ZONE_ID_LABEL = 'topology.k8s.aws/zone-id';

/** The flag that skips the check, for a user who knows each launch of the class asks in one of the zones only. */
export const FIS_ZONES_CONFIRMED_FLAG = '--fis-zones-confirmed';

/** `key Op [values]`, as the refusal quotes a requirement. */
function quoted(r: ZoneRequirement): string {
  return `${r.key} ${r.operator}${r.values?.length ? ` [${r.values.join(', ')}]` : ''}`;
}

/**
 * Why AWS FIS's zonal error in `zones` cannot be counted on to fail the class's launches, or undefined when the pool
 * is held to exactly one zone (`In` with one value, by name or ID) that `zones` names. Requirements are ANDed, so one
 * such requirement is enough, whatever the others say.
 */
export function fisZoneRefusal(pool: NodePoolZones, zones: readonly string[]): string | undefined {
  const name = pool.metadata.name;
  const onZone = (pool.spec.template?.spec?.requirements ?? []).filter((r) => r.key === ZONE_LABEL || r.key === ZONE_ID_LABEL);
  if (onZone.some((r) => r.operator === 'In' && r.values?.length === 1 && zones.includes(r.values[0]))) return undefined;
  const held = onZone.find((r) => r.operator === 'In' && r.values?.length === 1);
  const found = onZone.length === 0
    ? `NodePool ${name} has no ${ZONE_LABEL} or ${ZONE_ID_LABEL} requirement: Karpenter may launch its nodes in every zone of its subnets`
    : held
      ? `NodePool ${name} is held to ${held.values![0]} (${quoted(held)}), which --fis-zones (${zones.join(', ')}) does not name `
        + `(name it as the pool does: a zone name for ${ZONE_LABEL}, a zone ID for ${ZONE_ID_LABEL})`
      : `NodePool ${name} is not held to one zone (${onZone.map(quoted).join('; ')})`;
  // Zone IDs read like use1-az1 (https://docs.aws.amazon.com/ram/latest/userguide/working-with-az-ids.html); anything else is taken for a name.
  const key = /-az\d+$/.test(zones[0]) ? ZONE_ID_LABEL : ZONE_LABEL;
  return `${found}. AWS FIS aws:ec2:api-insufficient-instance-capacity-error does not support "requests that include capacity asks in `
    + 'multiple Availability Zones", and Karpenter launches a node with one CreateFleet call that asks in every zone its NodePool allows: '
    + 'the experiment could run while no launch of the class fails. Hold the pool to one of those zones for the game day (the class\'s '
    + `placement.zones, or kubectl patch nodepool ${name} --type json -p '[{"op":"add","path":"/spec/template/spec/requirements/-",`
    + `"value":{"key":"${key}","operator":"In","values":["${zones[0]}"]}}]', removed again afterwards; its nodes in other zones then drift `
    + `and are replaced, so let them settle first) and run again, or pass ${FIS_ZONES_CONFIRMED_FLAG} if you know every launch of the class `
    + 'asks in one of those zones only (its pods pinned to one zone). Nothing was changed.';
}
