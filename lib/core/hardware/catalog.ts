import { BUILT_IN_HARDWARE } from './catalog-data';
import { type HardwareProfile, type HardwareProfileData, type Platform, toHardwareProfile } from './profile';

/**
 * Instance facts by type. Immutable: `with()` and `withPrice()` return a new catalog, so a user's overrides
 * never leak into another service's classes.
 *
 * @example
 * const catalog = HardwareCatalog.builtIn()
 *   .withPrice('ml.g6e.xlarge', 2.61, '2026-08-17')
 *   .with({ instanceType: 'g7.xlarge', ... });
 */
export class HardwareCatalog {
  /** The sourced catalog that ships with the library (EC2 and SageMaker GPU and Neuron types). */
  public static builtIn(): HardwareCatalog {
    return new HardwareCatalog(BUILT_IN_HARDWARE.map(toHardwareProfile));
  }

  /** An empty catalog, for users who want to state every fact themselves. */
  public static empty(): HardwareCatalog {
    return new HardwareCatalog([]);
  }

  private readonly byType: ReadonlyMap<string, HardwareProfile>;

  private constructor(profiles: readonly HardwareProfile[]) {
    this.byType = new Map(profiles.map((p) => [p.instanceType, p]));
  }

  /** Registers a new type or replaces the facts of a known one. */
  public with(profile: HardwareProfileData): HardwareCatalog {
    const problems = hardwareProfileProblems(profile);
    if (problems.length > 0) {
      throw new Error(`Invalid hardware profile '${profile.instanceType}':\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    }
    return new HardwareCatalog([...this.list().filter((p) => p.instanceType !== profile.instanceType), toHardwareProfile(profile)]);
  }

  /** Overrides the price of a known type (prices change; SageMaker prices are often missing from public sources). */
  public withPrice(instanceType: string, usdPerHour: number, asOf?: string): HardwareCatalog {
    const known = this.get(instanceType);
    return this.with({ ...known, onDemandUsdPerHour: usdPerHour, priceAsOf: asOf ?? known.priceAsOf });
  }

  /** The profile of a type, or undefined. */
  public find(instanceType: string): HardwareProfile | undefined {
    return this.byType.get(instanceType);
  }

  /** The profile of a type; throws naming the known types when it is missing. */
  public get(instanceType: string): HardwareProfile {
    const profile = this.find(instanceType);
    if (!profile) {
      throw new Error(
        `Unknown instance type '${instanceType}'. Known types: ${[...this.byType.keys()].sort().join(', ')}. ` +
          'Register it with HardwareCatalog.with({...}).',
      );
    }
    return profile;
  }

  /** Every profile, sorted by instance type. */
  public list(): HardwareProfile[] {
    return [...this.byType.values()].sort((a, b) => a.instanceType.localeCompare(b.instanceType));
  }
}

function hardwareProfileProblems(p: HardwareProfileData): string[] {
  const problems: string[] = [];
  const expectedPlatform: Platform = p.instanceType.startsWith('ml.') ? 'sagemaker' : 'ec2';
  if (p.platform !== expectedPlatform) {
    problems.push(`platform is '${p.platform}' but the type name says '${expectedPlatform}' (SageMaker types start with 'ml.')`);
  }
  if (p.acceleratorKind !== 'gpu' && p.acceleratorKind !== 'neuron') {
    problems.push(`acceleratorKind is '${p.acceleratorKind}'; allowed: 'gpu', 'neuron'`);
  }
  for (const [field, value] of [
    ['acceleratorCount', p.acceleratorCount],
    ['acceleratorMemoryGiB', p.acceleratorMemoryGiB],
    ['coresPerAccelerator', p.coresPerAccelerator],
    ['vcpu', p.vcpu],
    ['memoryGiB', p.memoryGiB],
  ] as const) {
    if (!(Number.isFinite(value) && value > 0)) problems.push(`${field} is ${value}; it must be a positive number`);
  }
  for (const field of ['acceleratorCount', 'coresPerAccelerator'] as const) {
    if (!Number.isInteger(p[field])) problems.push(`${field} is ${p[field]}; it must be a whole number`);
  }
  if (p.onDemandUsdPerHour !== undefined && !(p.onDemandUsdPerHour > 0)) {
    problems.push(`onDemandUsdPerHour is ${p.onDemandUsdPerHour}; it must be a positive number of USD`);
  }
  return problems;
}
