/**
 * What a serving construct records in its stack's template for the post-deploy commands: the service contract, the
 * checked capacity classes (envelopes, footprints, runtimes, prices) and the capacity plan it deployed, and the
 * platform. The game day runs the simulator on exactly this (`cdk-capacity-game-day` predicts the shortage it injects)
 * and `cdk-capacity-verify --burst` reads each class's admission bound and request shape from it. The reconciler's own
 * configuration cannot serve: it carries routing facts only, within Lambda's 4 KB environment.
 *
 * Stored as template Metadata (`Metadata[SERVING_RECORD_METADATA_KEY][service]`), read back with CloudFormation
 * GetTemplate or from a synthesized template. Plain data, no aws-cdk-lib: values that were CloudFormation tokens at
 * synth are recorded as the text TOKEN_TEXT, never resolved.
 */
import { type CapacityClass } from './capacity-class';
import { type ServiceContract } from './contract';
import { type CapacityPlan } from './sizing';
import { type ServingPlatform } from '../runtime/platform';

/** The template Metadata key under which each service's record is stored, by contract name. */
export const SERVING_RECORD_METADATA_KEY = 'CdkCapacityAwareInference::Serving';

/** Bumped when a reader that ignores a new field would misread the record; a reader refuses a version it does not know. */
export const SERVING_RECORD_VERSION = 1;

/** What a value that was a CloudFormation token at synth is recorded as. */
export const TOKEN_TEXT = '{token}';

export interface ServingRecord {
  readonly version: number;
  readonly platform: ServingPlatform;
  readonly contract: ServiceContract;
  /** In preference order. */
  readonly classes: readonly CapacityClass[];
  readonly plan: CapacityPlan;
  /**
   * SageMaker: each production variant as deployed, its scaling included (what the game day's prediction scales it by).
   * Absent from records written before stop 65, and on EKS.
   */
  readonly variants?: readonly RecordedVariant[];
}

/** A SageMaker production variant as the endpoint deployed it. */
export interface RecordedVariant {
  readonly name: string;
  /** Its classes, one instance pool each, in pool priority order. */
  readonly classes: readonly string[];
  /** Its scalable target's MinCapacity and MaxCapacity as rendered. */
  readonly minInstances: number;
  readonly maxInstances: number;
  /** The predefined target tracking's `ConcurrentRequestsPerModel` target per instance. */
  readonly targetConcurrencyPerInstance: number;
  /** `scaling.perPoolTargets`: each pool's own target, in priority order (a second, per-pool policy). */
  readonly poolTargets?: readonly number[];
}

/** The record a serving construct writes (the one function both constructs call). */
export function servingRecord(
  platform: ServingPlatform, contract: ServiceContract, classes: readonly CapacityClass[], plan: CapacityPlan, variants?: readonly RecordedVariant[],
): ServingRecord {
  return {
    version: SERVING_RECORD_VERSION, platform, contract, classes: [...classes].sort((a, b) => a.preferenceRank - b.preferenceRank), plan,
    ...(variants ? { variants } : {}),
  };
}

/** The records of a template by service name (empty when the stack was deployed without them). */
export function servingRecords(template: { readonly Metadata?: Readonly<Record<string, unknown>> }): Record<string, ServingRecord> {
  const all = template.Metadata?.[SERVING_RECORD_METADATA_KEY];
  if (!all || typeof all !== 'object') return {};
  const out: Record<string, ServingRecord> = {};
  for (const [service, r] of Object.entries(all as Record<string, unknown>)) {
    const record = r as Partial<ServingRecord> | undefined;
    if (record?.version !== SERVING_RECORD_VERSION) {
      throw new Error(`the serving record of ${service} has version ${String(record?.version)}; this command reads version ${SERVING_RECORD_VERSION} (use the library version that deployed it)`);
    }
    out[service] = record as ServingRecord;
  }
  return out;
}

/** The record of one service, or an error saying how to get one. */
export function servingRecordOf(template: { readonly Metadata?: Readonly<Record<string, unknown>> }, service: string): ServingRecord {
  const records = servingRecords(template);
  const r = records[service];
  if (!r) {
    const known = Object.keys(records);
    throw new Error(`the template records no serving description for service '${service}' (Metadata.${SERVING_RECORD_METADATA_KEY}; `
      + (known.length > 0 ? `it has: ${known.join(', ')})` : 'it was deployed by an older version of the library, which did not record it: redeploy with this one)'));
  }
  return r;
}
