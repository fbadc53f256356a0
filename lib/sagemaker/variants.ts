/**
 * How capacity classes become SageMaker production variants with instance pools: pool priorities, scaling ranges,
 * scaling targets and initial weights, all derived from the capacity plan. Pure (no aws-cdk-lib): the construct
 * renders the result, tests and the cost table of docs/sagemaker-endpoint.md compute it directly.
 */
import { type CapacityClass } from '../core/service/capacity-class';
import { type ClassProblem } from '../core/service/checks';
import { type CapacityPlan, type ClassPlan, HOURS_PER_MONTH } from '../core/service/sizing';
import { describeRule, ruleProblem } from '../core/validation/checker';
import { duplicates } from '../core/validation/names';
import { SAGEMAKER_RULES } from '../core/validation/rules';
import { forbiddenRoutes, initialWeights } from '../core/service/initial-weights';
import { type PlacementOptions } from '../core/reconciler/config';
import { routedClassFacts, type SageMakerRoutingFacts } from '../core/reconciler/routing-facts';
import { type RecordedVariant } from '../core/service/serving-record';
import { isUnresolved } from '../core/validation/tokens';
import { SAGEMAKER_ENDPOINT_LIMITS } from '../core/platform/limits';
import { variantScalingDefaults } from '../core/platform/control-loop';

/** One pool of a variant: a class and, optionally, an explicit priority. */
export interface VariantPoolOptions {
  /** Name of a capacity class of the endpoint. */
  readonly className: string;
  /**
   * Provisioning priority, 1 (tried first) to 5.
   * @default - the pool's position in the variant's class list (1 for the first)
   */
  readonly priority?: number;
}

/** Autoscaling of one variant. */
export interface VariantScalingOptions {
  /**
   * Fewest instances. Application Auto Scaling never goes below it.
   * @default - the largest minReplicas of the variant's classes in the capacity plan (the preferred class's
   * steady fleet for the preferred variant, the warm standby for a fallback variant)
   */
  readonly minInstances?: number;
  /**
   * Most instances. Must not exceed the quota of the variant's pool types added up (classes' maxReplicas).
   * @default - the largest maxReplicas of the variant's classes in the capacity plan (replicas for planned peak on
   * the slowest pool type, bounded by its quota)
   */
  readonly maxInstances?: number;
  /**
   * Target of `ConcurrentRequestsPerModel` per instance. At most the smallest safe concurrency of the variant's pool
   * types: least-outstanding-requests routing gives every instance about the same concurrency, so the slowest type
   * sets the limit.
   * @default - the smallest planned target concurrency of the variant's classes (`inFlightAtEnvelope` / (1 + headroom), lib/core/service/sizing.ts)
   */
  readonly targetConcurrencyPerInstance?: number;
  /**
   * A variant with several pools: scale each instance type to its own pool's planned target. Two target-tracking
   * policies: the predefined high-resolution one at the priority-1 pool's target, and one on metric math over the
   * per-`InstanceType` `ConcurrentRequestsPerModel` (each type over its own target, the largest ratio), so a slower type
   * sets the level only while it has instances. The steady fleet of the priority-1 type is then sized for its own
   * envelope instead of the slowest pool's, and has no spare instances when running ones are lost
   * (docs/sagemaker-endpoint.md has the measured trade-off). Not with `targetConcurrencyPerInstance`.
   * @default false
   */
  readonly perPoolTargets?: boolean;
}

/** A routing group of classes, one instance pool each (the construct's `EndpointVariantOptions`, timeouts in seconds). */
export interface VariantSpec {
  /** Production variant name (SageMaker VariantName: letters, digits and '-'; unique in the endpoint). */
  readonly name: string;
  /**
   * The classes of this variant, one instance pool each, in provisioning priority order (the first is tried first
   * at create and scale-out; the last is removed first at scale-in).
   */
  readonly classes: ReadonlyArray<string | VariantPoolOptions>;
  /**
   * How long SageMaker tries to provision instances across all pools of the variant before failing, in seconds.
   * @default - the endpoint's provisionTimeout
   */
  readonly provisionTimeoutSeconds?: number;
  /** @default - range and target from the capacity plan */
  readonly scaling?: VariantScalingOptions;
  /**
   * Initial variant weight (relative to the other variants).
   * @default - from the cost plan: fallback variants get a warm floor their standby can carry, the preferred
   * variant the rest
   */
  readonly initialWeight?: number;
}

/** One instance pool, resolved. */
export interface PlannedPool {
  readonly priority: number;
  readonly capacityClass: CapacityClass;
  /**
   * The class's plan the variant is sized from (bounds, targets). Its steady fleet and cost are `planCapacity()`'s
   * class-as-its-own-fleet estimate; what the variant runs is `fleetCost`'s.
   */
  readonly plan: ClassPlan;
}

/** One production variant, resolved from the capacity plan. */
export interface PlannedVariant {
  readonly name: string;
  /** 'preferred' when it holds the service's most preferred class. */
  readonly role: 'preferred' | 'fallback';
  /** Pools in priority order (priority 1 first). */
  readonly pools: readonly PlannedPool[];
  readonly provisionTimeoutSeconds: number;
  readonly minInstances: number;
  readonly maxInstances: number;
  /** ConcurrentRequestsPerModel target per instance (the predefined high-resolution policy). */
  readonly targetConcurrencyPerInstance: number;
  /** `scaling.perPoolTargets`: each pool's own target (priority order) for the per-pool policy. */
  readonly poolTargets?: readonly number[];
  readonly initialWeight: number;
}

export interface VariantPlanOptions {
  /** Provision timeout of variants that do not set their own, in seconds. */
  readonly provisionTimeoutSeconds: number;
  /** Largest share of traffic a fallback variant gets in the cost plan (further bounded by what its standby carries). */
  readonly warmFloorShare: number;
  /** The placement the endpoint's Reconciler enforces: a variant it forbids gets no initial weight. @default - none forbidden */
  readonly placement?: PlacementOptions;
}

/**
 * Lays the classes out as variants and checks every SageMaker limit and every contradiction with the plan. Whether
 * every class is in a variant and every variant names declared classes is `variantCoverageProblems`: with `addClass()`
 * and `addVariant()` it is known only once the endpoint is complete.
 */
export function planVariants(
  classes: readonly CapacityClass[],
  plan: CapacityPlan,
  specs: readonly VariantSpec[],
  options: VariantPlanOptions,
): { readonly variants: PlannedVariant[]; readonly problems: ClassProblem[] } {
  const problems: ClassProblem[] = [];
  const L = SAGEMAKER_ENDPOINT_LIMITS;
  const add = (field: string, message: string) => problems.push({ field, message });
  /** Checks `value` against the SAGEMAKER_RULES row `rule`; true when it holds. */
  const rule = (key: keyof typeof SAGEMAKER_RULES, value: unknown, field: string): boolean => {
    const r = SAGEMAKER_RULES[key] as (typeof SAGEMAKER_RULES)[keyof typeof SAGEMAKER_RULES];
    const problem = r.kind === 'number' || r.kind === 'name' ? ruleProblem(r, value) : undefined;
    if (problem) add(field, problem);
    return problem === undefined;
  };

  if (specs.length > L.maxVariants) {
    add('variants', `${specs.length} variants are declared; an endpoint allows at most ${L.maxVariants} production variants`);
  }
  for (const name of duplicates(specs.map((s) => s.name))) {
    add('variants', `variant name '${name}' is used more than once; variant names must be unique in the endpoint`);
  }
  const byName = new Map(classes.map((c) => [c.name, c]));
  const placed = new Map<string, string>();
  rule('provisionTimeout', options.provisionTimeoutSeconds, 'provisionTimeout');
  rule('warmFloorShare', options.warmFloorShare, 'warmFloorShare');

  const variants: PlannedVariant[] = [];
  for (const spec of specs) {
    const field = `variants['${spec.name}']`;
    const before = problems.length;
    rule('variants[].name', spec.name, `${field}.name`);
    if (spec.classes.length === 0) {
      add(`${field}.classes`, 'is empty; a variant needs at least one class (one instance pool)');
    }
    if (spec.classes.length > L.maxPoolsPerVariant) {
      add(`${field}.classes`, `has ${spec.classes.length} classes; a variant holds at most ${L.maxPoolsPerVariant} instance pools. Split them over more variants`);
    }
    const pools = spec.classes.map((p, i) =>
      typeof p === 'string' || p.priority === undefined
        ? { className: typeof p === 'string' ? p : p.className, priority: i + 1, explicit: false }
        : { className: p.className, priority: p.priority, explicit: true },
    );
    // Positions past 5 are reported once, by the pool count above.
    for (const pool of pools.filter((p) => p.explicit)) rule('variants[].classes[].priority', pool.priority, `${field}.classes['${pool.className}'].priority`);
    for (const priority of duplicates(pools.map((p) => p.priority))) {
      const holders = pools.filter((p) => p.priority === priority).map((p) => `'${p.className}'`);
      add(`${field}.classes`, `priority ${priority} is given to ${holders.join(', ')}; each pool of a variant needs its own priority`);
    }
    for (const pool of pools) {
      const other = placed.get(pool.className);
      if (other !== undefined) {
        add(`${field}.classes`, `class '${pool.className}' is already in variant '${other}'; each class serves from exactly one variant so that its weight is unambiguous`);
      } else {
        placed.set(pool.className, spec.name);
      }
    }
    const resolved = pools
      .filter((p) => byName.has(p.className))
      .map((p) => ({ priority: p.priority, capacityClass: byName.get(p.className)!, plan: plan.classes.find((c) => c.name === p.className)! }))
      .sort((a, b) => a.priority - b.priority);
    for (const type of duplicates(resolved.map((p) => p.capacityClass.instanceType))) {
      const holders = resolved.filter((p) => p.capacityClass.instanceType === type).map((p) => `'${p.capacityClass.name}'`);
      add(`${field}.classes`, `${holders.join(' and ')} both run on ${type}; the pools of a variant need distinct instance types. Put them in separate variants`);
    }
    const timeout = spec.provisionTimeoutSeconds ?? options.provisionTimeoutSeconds;
    if (spec.provisionTimeoutSeconds !== undefined) rule('variants[].provisionTimeout', timeout, `${field}.provisionTimeout`);
    // Classes that failed their own checks are missing from `resolved`; their problems are already reported.
    if (problems.length > before || resolved.length !== pools.length || resolved.length === 0) continue;
    const variant = resolveScaling(spec, resolved, timeout, field, add);
    if (variant) variants.push(variant);
  }
  return { variants: withInitialWeights(variants, specs, plan, options, add), problems };
}

/** Classes in no variant and variants naming undeclared classes: problems of an endpoint that is complete. */
export function variantCoverageProblems(declaredClassNames: readonly string[], specs: readonly VariantSpec[]): ClassProblem[] {
  const problems: ClassProblem[] = [];
  const placed = new Set<string>();
  for (const spec of specs) {
    for (const pool of spec.classes) {
      const className = typeof pool === 'string' ? pool : pool.className;
      placed.add(className);
      if (!declaredClassNames.includes(className)) {
        problems.push({
          field: `variants['${spec.name}'].classes`,
          message: `'${className}' is not a class of this endpoint; declared classes: ${declaredClassNames.map((n) => `'${n}'`).join(', ') || 'none'}`,
        });
      }
    }
  }
  for (const name of declaredClassNames.filter((n) => !placed.has(n))) {
    problems.push({ field: 'variants', message: `class '${name}' is in no variant; add it to one with addVariant(), or remove the class` });
  }
  return problems;
}

function resolveScaling(
  spec: VariantSpec,
  pools: PlannedPool[],
  provisionTimeoutSeconds: number,
  field: string,
  add: (field: string, message: string) => void,
): PlannedVariant | undefined {
  const role = pools.some((p) => p.capacityClass.preferenceRank === 0) ? 'preferred' : 'fallback';
  const quota = pools.reduce((sum, p) => sum + p.capacityClass.maxReplicas, 0);
  const s = spec.scaling ?? {};
  const planned = variantScalingDefaults(pools.map((p) => p.plan), s.perPoolTargets === true);
  const minInstances = s.minInstances ?? planned.minInstances;
  const maxInstances = s.maxInstances ?? planned.maxInstances;
  const before = { count: 0 };
  const report = (f: string, m: string) => {
    before.count++;
    add(`${field}.scaling.${f}`, m);
  };
  const check = (key: 'minInstances' | 'maxInstances' | 'targetConcurrencyPerInstance', value: unknown) => {
    const r = SAGEMAKER_RULES[`variants[].scaling.${key}`];
    const problem = ruleProblem(r, value);
    if (problem) report(key, problem);
    return problem === undefined;
  };
  const minOk = check('minInstances', minInstances);
  const maxOk = check('maxInstances', maxInstances);
  if (minOk && maxOk && maxInstances < minInstances) {
    report('maxInstances', `${maxInstances} is below minInstances ${minInstances}`);
  }
  if (maxOk && maxInstances > quota) {
    const parts = pools.map((p) => `${p.capacityClass.name} ${p.capacityClass.maxReplicas}`).join(' + ');
    report('maxInstances', `${maxInstances} exceeds the quota of the variant's pool types (${parts} = ${quota}); scale-out past it would fail. Raise the classes' maxReplicas after a quota increase`);
  }
  const preferred = pools.find((p) => p.capacityClass.preferenceRank === 0);
  if (maxOk && preferred && maxInstances < preferred.plan.maxReplicas) {
    report(
      'maxInstances',
      `${maxInstances} is below the ${preferred.plan.maxReplicas} instances of '${preferred.capacityClass.name}' the capacity plan needs for ` +
        'planned peak with headroom; the preferred variant could not carry the planned load',
    );
  }
  const safest = Math.min(...pools.map((p) => p.capacityClass.envelope.safeConcurrency));
  const target = s.targetConcurrencyPerInstance ?? planned.targetConcurrencyPerInstance;
  const perPoolRule = SAGEMAKER_RULES['variants[].scaling.perPoolTargets'];
  const perPoolProblem = perPoolRule.check({
    value: s.perPoolTargets, pools: pools.map((p) => p.capacityClass.name), targetConcurrencyPerInstance: s.targetConcurrencyPerInstance,
  });
  if (perPoolProblem) report('perPoolTargets', `${perPoolProblem}; allowed: ${describeRule(perPoolRule)}`);
  // The priority-1 pool's target under perPoolTargets comes with the per-pool policy, which holds a slower type
  // present to its own target; a single target must be safe on every pool type.
  if (check('targetConcurrencyPerInstance', target) && planned.poolTargets === undefined && target > safest) {
    report(
      'targetConcurrencyPerInstance',
      `is ${target}; allowed: above 0 and at most ${safest}, the smallest safe concurrency of the variant's pool types ` +
        '(least-outstanding-requests routing gives every instance about the same concurrency, so the slowest type sets the limit)',
    );
  }
  if (before.count > 0) return undefined;
  return {
    name: spec.name, role, pools, provisionTimeoutSeconds, minInstances, maxInstances, targetConcurrencyPerInstance: target,
    ...(planned.poolTargets ? { poolTargets: planned.poolTargets } : {}), initialWeight: 0,
  };
}

/**
 * Why a variant's configuration-replacing update would need more quota than its priority-1 class's `maxReplicas`, or
 * undefined. An update that replaces the endpoint configuration (a new Model: image, model data, container variables;
 * or a changed variant field) is deployed "to a new fleet of instances", and the old instances are deleted only once
 * traffic has shifted (UpdateEndpoint, boto/botocore@1.43.67 botocore/data/sagemaker/2017-07-24/service-2.json:4551-4562), and with
 * `RetainAllVariantProperties` each same-named variant of the new fleet starts at the live DesiredInstanceCount, whatever
 * the new InitialInstanceCount (https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-scaling-update.html, step 6). The rule of
 * docs/sagemaker-endpoint.md ("A new endpoint configuration is a second fleet for a while") is to deploy such a change
 * while each pool type runs at most half of its quota, the class's `maxReplicas`; a variant that never runs fewer than
 * its minimum on its priority-1 type cannot meet it once that minimum is more than half. Whether SageMaker then fails
 * the update (UpdateEndpoint lists ResourceLimitExceeded, :4559-4561) or provisions the new fleet on lower-priority
 * pools is not documented, so a warning, not a refusal: the quota may already be larger than `maxReplicas`.
 */
export function blueGreenQuotaNote(v: PlannedVariant): string | undefined {
  const first = v.pools[0].capacityClass;
  if (isUnresolved(v.minInstances) || isUnresolved(first.maxReplicas) || v.minInstances * 2 <= first.maxReplicas) return undefined;
  return `variant '${v.name}' keeps at least ${v.minInstances} instances (its scaling minimum), more than half of the ${first.maxReplicas} ` +
    `${first.instanceType} its priority-1 class '${first.name}' may run (maxReplicas, the account's quota for the type): a deployment that ` +
    'replaces the endpoint configuration (image, model data, container variables, or a changed InitialInstanceCount or InitialVariantWeight) ' +
    'is a blue/green update whose new fleet starts at the live instance counts, so a configuration change then needs quota for both fleets: ' +
    `at least ${v.minInstances * 2} ${first.instanceType}, and ${v.maxInstances * 2} (twice the variant's maximum, ${v.maxInstances}) of each pool type ` +
    'to update at any count. Request that quota. The warning clears where maxReplicas is at least twice the minimum' +
    (v.role === 'preferred'
      ? ` (the preferred variant's default minimum follows maxReplicas up to the ${v.pools[0].plan.replicasForPeak} instances its peak needs, ` +
        `so at maxReplicas ${2 * v.pools[0].plan.replicasForPeak})`
      : '') +
    ', or where scaling.minInstances is at most half of maxReplicas (docs/sagemaker-endpoint.md, "Quotas and regions"); or acknowledge it';
}

/** The variants as the reconciler's routing facts name them (`SageMakerRoutingFacts.variants`). */
export function variantRoutingFacts(variants: readonly PlannedVariant[]): SageMakerRoutingFacts['variants'] {
  return variants.map((v) => ({
    variantName: v.name,
    classes: v.pools.map((p) => routedClassFacts(p.capacityClass)),
    // A floor above the scalable target's MaxCapacity would be undone by Application Auto Scaling.
    ...(isUnresolved(v.maxInstances) ? {} : { maxInstances: v.maxInstances }),
  }));
}

/** The variants as the serving record keeps them for the game day's prediction (`ServingRecord.variants`). */
export function recordedVariants(variants: readonly PlannedVariant[]): RecordedVariant[] {
  return variants.map((v) => ({
    name: v.name, classes: v.pools.map((p) => p.capacityClass.name), minInstances: v.minInstances, maxInstances: v.maxInstances,
    targetConcurrencyPerInstance: v.targetConcurrencyPerInstance, ...(v.poolTargets ? { poolTargets: v.poolTargets } : {}),
  }));
}

/**
 * Initial weights: the one rule of both serving constructs (lib/core/service/initial-weights.ts), the policy's cost plan
 * at planned demand with each variant's minimum ready, on its priority-1 pool, under the Reconciler's placement; an
 * explicit `initialWeight` wins, except on a variant that placement forbids (the Reconciler never routes to it).
 */
function withInitialWeights(
  variants: PlannedVariant[],
  specs: readonly VariantSpec[],
  plan: CapacityPlan,
  options: VariantPlanOptions,
  add: (field: string, message: string) => void,
): PlannedVariant[] {
  const placement = options.placement ?? {};
  // The policy's view of a variant reads its pools and bounds only (targets/sagemaker.ts policyClasses), not the
  // endpoint's identity, which is not known here.
  const facts: SageMakerRoutingFacts = { kind: 'sagemaker', endpointName: '', endpointArn: '', variants: variantRoutingFacts(variants) };
  const forbidden = new Set(forbiddenRoutes(facts, placement));
  const sensitivePools = (name: string) => variants.find((v) => v.name === name)!.pools
    .filter((p) => !p.capacityClass.placement.allowSensitive).map((p) => `'${p.capacityClass.name}'`).join(', ');
  const explicit = new Map<string, number>();
  for (const s of specs.filter((v) => v.initialWeight !== undefined)) {
    const problem = ruleProblem(SAGEMAKER_RULES['variants[].initialWeight'], s.initialWeight);
    // An invalid weight is reported and never computed with (a token's encoding would be rounded into garbage).
    if (problem) add(`variants['${s.name}'].initialWeight`, problem);
    else if (forbidden.has(s.name) && s.initialWeight !== 0) {
      add(`variants['${s.name}'].initialWeight`, `is ${s.initialWeight} but the variant's pool ${sensitivePools(s.name)} has allowSensitive: false ` +
        'and the Reconciler routes sensitive requests (sensitive: true), so it never gives the variant weight; allowed: 0, or no initialWeight');
    } else explicit.set(s.name, s.initialWeight!);
  }
  if (variants.length > 0 && forbidden.size === variants.length) {
    add('variants', 'every variant has a pool with allowSensitive: false and the Reconciler routes sensitive requests (sensitive: true), ' +
      'so no variant may take traffic; allowed: at least one variant whose pools all allow sensitive requests');
    return variants.map((v) => ({ ...v, initialWeight: 0 }));
  }
  const planned = variants.length === 0 ? {} : initialWeights(
    facts,
    Object.fromEntries(variants.map((v) => [v.name, v.minInstances])),
    plan.plannedTokensPerSecond,
    { warmFloorShare: options.warmFloorShare, placement },
  );
  // A forbidden variant's planned weight is 0, and an explicit one above 0 is refused above.
  const weighted = variants.map((v) => ({ ...v, initialWeight: explicit.get(v.name) ?? planned[v.name] ?? 0 }));
  if (weighted.length > 0 && weighted.every((v) => v.initialWeight === 0)) {
    add('variants', 'every variant has an initial weight of 0; at least one variant must take traffic');
  }
  return weighted;
}

function round4(value: number): number {
  return Math.round(value * 1e4) / 1e4;
}

/** Hourly cost of the planned fleet of one variant. */
export interface VariantCost {
  readonly variant: string;
  readonly role: 'preferred' | 'fallback';
  /** Instances kept in steady state (the scaling minimum), on the priority-1 pool type. */
  readonly steadyInstances: number;
  readonly instanceType: string;
  readonly steadyUsdPerHour: number;
  /** Cost at the scaling maximum on the variant's most expensive pool type: the ceiling of a shortage. */
  readonly maxUsdPerHour: number;
}

/** Hourly and monthly cost of the endpoint's planned fleet. */
export interface FleetCost {
  readonly variants: readonly VariantCost[];
  /** Every variant at its scaling minimum on its priority-1 pool type: preferred fleet plus fallback standby. */
  readonly steadyUsdPerHour: number;
  /** The part of the steady cost that is fallback standby. */
  readonly standbyUsdPerHour: number;
  readonly steadyUsdPerMonth: number;
}

/**
 * The steady cost of a SageMaker layout: the one count of what the endpoint runs, read by `plannedCost` and, through
 * `planAsDeployed`, by the plan the endpoint reports and records. A variant's instances come from its priority-1 pool
 * while that pool has capacity, and scale-in "releases instances starting with the lowest-priority pool"
 * (https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-heterogeneous.html, "Auto-scaling with instance
 * pools"), so the steady fleet is the variant's scaling minimum on its priority-1 type and a lower-priority pool costs
 * nothing until the pools above it are short. Unlike `planCapacity()`'s one warm standby per fallback class, only
 * fallback *variants* pay for standby.
 */
export function fleetCost(variants: readonly PlannedVariant[], hoursPerMonth = HOURS_PER_MONTH): FleetCost {
  const costs = variants.map((v): VariantCost => {
    const first = v.pools[0].capacityClass;
    return {
      variant: v.name,
      role: v.role,
      steadyInstances: v.minInstances,
      instanceType: first.instanceType,
      steadyUsdPerHour: round4(v.minInstances * first.usdPerHour),
      maxUsdPerHour: round4(v.maxInstances * Math.max(...v.pools.map((p) => p.capacityClass.usdPerHour))),
    };
  });
  const steady = costs.reduce((sum, c) => sum + c.steadyUsdPerHour, 0);
  return {
    variants: costs,
    steadyUsdPerHour: round4(steady),
    standbyUsdPerHour: round4(costs.filter((c) => c.role === 'fallback').reduce((sum, c) => sum + c.steadyUsdPerHour, 0)),
    steadyUsdPerMonth: Math.round(steady * hoursPerMonth * 100) / 100,
  };
}

/**
 * The capacity plan with its steady fleet and cost as the layout deploys them (`fleetCost`), in place of
 * `planCapacity()`'s one fleet per class, which is an estimate until the variants are known: each variant's priority-1
 * class runs the variant's scaling minimum, every other pool (and a class in no variant) none. Bounds, targets and
 * coverage are the plan's own: the variants are sized from them.
 */
export function planAsDeployed(plan: CapacityPlan, variants: readonly PlannedVariant[], hoursPerMonth = HOURS_PER_MONTH): CapacityPlan {
  const cost = fleetCost(variants, hoursPerMonth);
  const steadyOf = new Map(variants.map((v, i) => [v.pools[0].capacityClass.name, cost.variants[i]]));
  return {
    ...plan,
    classes: plan.classes.map((c) => {
      const steady = steadyOf.get(c.name);
      const instances = steady?.steadyInstances ?? 0;
      return { ...c, steadyReplicas: instances, steadyInstances: instances, steadyUsdPerHour: steady?.steadyUsdPerHour ?? 0 };
    }),
    steadyUsdPerHour: cost.steadyUsdPerHour,
    steadyUsdPerMonth: cost.steadyUsdPerMonth,
    standbyUsdPerHour: cost.standbyUsdPerHour,
  };
}
