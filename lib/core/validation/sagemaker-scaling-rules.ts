/**
 * The scaling target of a SageMaker variant (`variants[].scaling`): `SAGEMAKER_RULES` spreads these in, and the
 * simulator checks its scenarios' variants with them (lib/sim/model.ts), so a scenario cannot run a target the construct
 * refuses.
 *
 * A module of their own so that the simulator imports these alone: BENCHMARKS.md records a hash of its import closure
 * (lib/sim/source-hash.ts), and with SageMaker's whole table in it, a fix to any other endpoint rule made the benchmarks
 * stale, to be rerun for identical results.
 */
import { crossRule, numberRule } from './checker';
import { quoted } from './names';

export const SAGEMAKER_SCALING_TARGET_RULES = {
  'variants[].scaling.targetConcurrencyPerInstance': numberRule({ above: 0, unit: 'requests' }),
  'variants[].scaling.perPoolTargets': crossRule<{ readonly value: unknown; readonly pools: readonly string[]; readonly targetConcurrencyPerInstance?: number }>(
    'true or false; true only on a variant with several pools and without targetConcurrencyPerInstance (per-pool targets come from each pool\'s plan)',
    ({ value, pools, targetConcurrencyPerInstance }) => {
      // JSON-quoted: a string "true" must not print like the boolean it is not.
      if (value !== undefined && typeof value !== 'boolean') {
        const shown = typeof value === 'bigint' ? String(value) : JSON.stringify(value) ?? String(value);
        return `is ${shown} (${value === null ? 'null' : `a ${typeof value}`})`;
      }
      if (value !== true) return undefined;
      if (pools.length < 2) return `is true on a variant with one pool (${quoted(pools)})`;
      return targetConcurrencyPerInstance === undefined ? undefined : `is true with targetConcurrencyPerInstance ${targetConcurrencyPerInstance}`;
    },
  ),
} as const;
