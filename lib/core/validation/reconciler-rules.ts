/**
 * The Reconciler's props (the routing policy's tunables included), with the rules they share with the observability
 * constructs. The reconciler Lambda checks its configuration with some of them (lib/core/validation/reconciler-config.ts:
 * the service name, the tokens per request, the metric delay, the policy) and the routing facts with
 * routing-facts-rules.ts. The Reconciler construct and the observability constructs check the same props with these at
 * construction. `rules.ts` re-exports them beside every other construct's table (`VALIDATION_MATRIX`).
 *
 * A module of their own so that the Lambda bundles only these: with every construct's table in one module, esbuild keeps
 * all of them in the bundle (each built by a call it cannot prove pure), and an edit to any construct's rule (a SageMaker
 * variant's perPoolTargets message) changed the Lambda's asset hash, so `cdk deploy` updated the function for nothing.
 * test/foundation/structure.test.ts pins what the Lambda bundles. Nothing the simulator runs imports this module, so a
 * fix to a Reconciler rule leaves BENCHMARKS.md fresh (test/core/validation-closure.test.ts).
 */
import { RECONCILER_TIMING_DEFAULTS } from '../platform/control-loop';
import { historyPeriodMultiple } from '../platform/limits';
import { crossRule, nameRule, numberRule } from './checker';
import { quoted } from './names';

/**
 * The `Service` dimension of every contract metric, alarm and log line: one rule wherever a service name enters the
 * control loop (the Reconciler, the observability constructs and the reconciler Lambda's configuration check).
 */
export const SERVICE_DIMENSION_RULE = nameRule('cloudWatchDimension', {
  tokens: 'carry',
  why: 'the Service dimension of every metric and alarm; CloudWatch alarms document 255 characters',
});

/**
 * The warm floor: the share every ready fallback keeps, in the reconciler's policy and in the initial weights the
 * serving constructs deploy (lib/core/service/initial-weights.ts). Above 0.2, floors would crowd out the cheapest class.
 */
export const WARM_FLOOR_SHARE_RULE = numberRule({ min: 0, max: 0.2 });

/** The `serving` prop of every control construct (Reconciler, InferenceAlarms, InferenceDashboard, InferenceObservability). */
export const SERVING_RULE = crossRule<{ readonly serving: unknown; readonly legacyProps: readonly string[] }>(
  'a serving construct: SageMakerCapacityEndpoint, EksInferenceService, or an object with servingDescription() (IInferenceServing)',
  ({ serving, legacyProps }) => {
    if (typeof (serving as { servingDescription?: unknown } | undefined)?.servingDescription === 'function') return undefined;
    const what = serving === undefined || serving === null ? 'missing' : 'not an IInferenceServing (it has no servingDescription())';
    return `is ${what}` + (legacyProps.length > 0
      ? `; ${quoted(legacyProps)} ${legacyProps.length === 1 ? 'is a prop' : 'are props'} of the API before the control constructs took the ` +
        "serving construct: pass { serving: endpoint } instead (CHANGELOG, 'Migration: the control constructs take the serving construct')"
      : '');
  },
);

/** The longest `metricDelay` METRIC_DELAY_RULE accepts: the history a run reads starts at most this much earlier again. */
const METRIC_DELAY_MAX_SECONDS = 900;

/**
 * How late CloudWatch publishes a period, as the user declares it: the Reconciler's `metricDelay` (the newest period a
 * run reads ends this long ago) and InferenceAlarms' (the periods its M of N alarms leave for a datapoint to land).
 */
export const METRIC_DELAY_RULE = numberRule({ integer: true, min: 0, max: METRIC_DELAY_MAX_SECONDS, unit: 's' });

/** `Reconciler` props (the routing policy's tunables included). */
/**
 * The most periods of history a run reads (`policyWindowPeriods`): a day at 60 s periods. GetMetricData answers at
 * most 100,800 datapoints a page (MaxDatapoints) and the reconciler follows at most 5 pages (MAX_METRIC_PAGES,
 * lambda/reconciler/reconcile.ts), and CloudWatch keeps 60 s datapoints for 15 days; a longer history (a reentryMemory
 * of days) would page past the bound or read as missing data.
 */
export const MAX_WINDOW_PERIODS = 1440;

export const RECONCILER_RULES = {
  serving: SERVING_RULE,
  'serving@once': crossRule<{ readonly routedBy?: string }>(
    'one Reconciler per serving construct',
    ({ routedBy }) => (routedBy === undefined ? undefined : `is already routed by the Reconciler at '${routedBy}'`),
    'two reconcilers would write the same weights against each other every period',
  ),
  'service@environment': crossRule<{ readonly sharedWith?: string; readonly service: string; readonly where?: string }>(
    'a service name that no other Reconciler uses in the same account and Region',
    ({ sharedWith, service, where }) => (sharedWith === undefined ? undefined
      : `is '${service}', which the Reconciler at '${sharedWith}' also routes in ${where}`),
    'the reconciler keeps its state (the routing mode, replica floors, replica history) as CloudWatch metrics keyed by Service: two deployments '
      + 'of one name would read each other\'s and write into them; give each its own contract name',
  ),
  // One rule for both ways an InferenceAlarms reaches a Reconciler (on its serving, checked at synth; through
  // capacityAlarms, checked at construction), so the two cannot say different things.
  'policy.period@alarms': crossRule<{
    readonly inferenceAlarms: string; readonly alarm?: string; readonly alarmPeriodSeconds: number; readonly periodSeconds: number;
  }>(
    "the reconcilerPeriod of every InferenceAlarms that reads this Reconciler's runs (one on the same serving, or one whose replica shortage "
      + 'or heartbeat alarm is in capacityAlarms): the same period',
    ({ inferenceAlarms, alarm, alarmPeriodSeconds, periodSeconds }) => (alarmPeriodSeconds === periodSeconds ? undefined
      : `is ${periodSeconds} s, and InferenceAlarms '${inferenceAlarms}' ${alarm === undefined ? 'of the same serving' : `(its '${alarm}' is in capacityAlarms)`} `
        + `evaluates its replica shortage and heartbeat alarms every ${alarmPeriodSeconds} s (its reconcilerPeriod, one minute unless set): set `
        + `that InferenceObservability's (or InferenceAlarms') reconcilerPeriod to this Reconciler's policy.period, Duration.seconds(${periodSeconds})`
        + (alarm === undefined ? '' : ', or leave its alarms out of capacityAlarms')),
    'each of those alarms reads one datapoint per run: at a shorter period runs leave periods without datapoints (the replica shortage '
      + 'could never fire, the heartbeat fires between runs); at a longer one the replica shortage pairs one run\'s desired count with another\'s '
      + 'ready count and fires on an ordinary scale-in',
  ),
  // Beside the period rule above, for the same two ways in (checkInferenceAlarms, lib/control/reconciler.ts).
  'metricDelay@alarms': crossRule<{
    readonly inferenceAlarms: string; readonly alarm?: string; readonly alarmsDelaySeconds: number; readonly metricDelaySeconds: number;
  }>(
    'at most the metricDelay of every InferenceAlarms on the same serving (or whose replica shortage or heartbeat alarm is in capacityAlarms) '
      + 'that has an M of N alarm (deadline exhaustion, capacity errors, a SageMaker replica shortage, the fallback share of a pooled preferred variant)',
    ({ inferenceAlarms, alarm, alarmsDelaySeconds, metricDelaySeconds }) => (metricDelaySeconds <= alarmsDelaySeconds ? undefined
      : `is ${metricDelaySeconds} s, and InferenceAlarms '${inferenceAlarms}' ${alarm === undefined ? 'of the same serving' : `(its '${alarm}' is in capacityAlarms)`} `
        + `leaves its M of N alarms ${alarmsDelaySeconds} s for a datapoint to land (its metricDelay, ${RECONCILER_TIMING_DEFAULTS.metricDelaySeconds} s unless set): set that `
        + `InferenceObservability's (or InferenceAlarms') metricDelay to this Reconciler's, Duration.seconds(${metricDelaySeconds})`),
    'those alarms FILL a period not yet published with 0, so their N exceeds M by the periods of their metricDelay; a datapoint later than that '
      + 'leaves the window before it lands, and a breach as long as the alarm\'s duration never fires',
  ),
  'serving.service': SERVICE_DIMENSION_RULE,
  'serving.tokensPerRequest': numberRule({ above: 0, unit: 'tokens' }),
  'serving.signals.classes': crossRule<{ readonly name: string; readonly known: readonly string[] }>(
    'names of capacity classes of the routing facts',
    ({ name, known }) => (known.includes(name) ? undefined : `names no capacity class of the routing facts (known: ${known.join(', ')})`),
  ),
  'serving.signals.containerInsightsClusterName': crossRule<{ readonly required: boolean; readonly clusterName?: string }>(
    'the Container Insights cluster name wherever the routing target is an ALB',
    ({ required, clusterName }) => (!required || clusterName ? undefined : 'is undefined'),
    'desired replicas of EKS classes come from Container Insights',
  ),
  sensitive: crossRule<{ readonly sensitive: boolean; readonly allowed: readonly string[] }>(
    'a routed class that may take sensitive requests (placement.allowSensitive) when sensitive is true',
    ({ sensitive, allowed }) => (!sensitive || allowed.length > 0 ? undefined : 'is true but every routed class has allowSensitive: false'),
  ),
  'policy.period': numberRule({
    integer: true, min: 60, max: 21_600, multipleOf: 60, unit: 's',
    why: 'the schedule runs at EventBridge rates of whole minutes, and a trigger event may wait one period, up to Lambda\'s maximum event age of 21600 s',
  }),
  'policy.headroom': numberRule({ min: 0, max: 4 }),
  // Beside the Reconciler's other checks against what its serving deploys (validate(), lib/control/reconciler.ts).
  'policy.headroom@serving': crossRule<{ readonly headroom: number; readonly servingHeadroom: number; readonly serving: string }>(
    "the serving's headroom (its contract's), or unset to follow it; to plan with another margin, set the contract's headroom",
    ({ headroom, servingHeadroom, serving }) => (headroom === servingHeadroom ? undefined
      : `is ${headroom}, and ${serving} plans with headroom ${servingHeadroom}: its autoscalers target envelope / ${1 + servingHeadroom} per `
        + `replica, and replica floors and capacity writes would be sized at envelope / ${1 + headroom}`),
    'a count sized for another target than the autoscaler keeps is taken back: a SageMaker fallback lowered below what target tracking holds '
      + 'is scaled out again and the endpoint stays Updating, refusing writes; a floor sized above it holds replicas the load does not need',
  ),
  'policy.warmFloorShare': WARM_FLOOR_SHARE_RULE,
  'policy.weightTotal': numberRule({ integer: true, min: 10, max: 999, why: 'ALB accepts at most 999 per target group' }),
  'policy.capacityErrorLookback': numberRule({ integer: true, min: 1, unit: 's' }),
  'policy.provisioningGrace': numberRule({ integer: true, min: 1, unit: 's' }),
  'policy.stabilizationWindow': numberRule({ integer: true, min: 1, unit: 's' }),
  'policy.windows%period': crossRule<{ readonly seconds: number; readonly periodSeconds: number }>(
    'a whole number of periods, at least one',
    ({ seconds, periodSeconds }) => (seconds >= periodSeconds && seconds % periodSeconds === 0 ? undefined
      : `is ${seconds} s, not a whole number of ${periodSeconds} s periods`),
  ),
  'policy.latencySloP95': numberRule({ above: 0, unit: 'ms' }),
  'policy.latencyBreachPeriods': numberRule({ integer: true, min: 1, max: 60 }),
  'policy.rampStepShare': numberRule({ above: 0, max: 1 }),
  'policy.rampStep>=2': crossRule<{ readonly rampStepShare: number; readonly weightTotal: number }>(
    'at least 2 weight units per tick (rampStepShare x weightTotal >= 2)',
    ({ rampStepShare, weightTotal }) => (rampStepShare * weightTotal >= 2 ? undefined
      : `is ${rampStepShare}: ${rampStepShare} x weightTotal ${weightTotal} = ${rampStepShare * weightTotal} weight units per tick`),
  ),
  'policy.minWeightChangeShare': numberRule({ min: 0, below: 1 }),
  'policy.minWeightChange<ramp': crossRule<{ readonly minWeightChangeShare: number; readonly rampStepShare: number }>(
    'below rampStepShare',
    ({ minWeightChangeShare, rampStepShare }) => (minWeightChangeShare < rampStepShare ? undefined
      : `is ${minWeightChangeShare}, not below rampStepShare ${rampStepShare}`),
  ),
  'policy.demandWindowPeriods': numberRule({ integer: true, min: 1, max: 60 }),
  'policy.demandQuantile': numberRule({ min: 0, max: 1 }),
  'policy.reentryMemory': numberRule({ integer: true, min: 0, unit: 's' }),
  'policy.maxReturnHold': numberRule({ integer: true, min: 1, unit: 's' }),
  'policy.window<=periods': crossRule<{ readonly periods: number; readonly periodSeconds: number }>(
    `a history of at most ${MAX_WINDOW_PERIODS} periods (each run reads it with GetMetricData, 100,800 datapoints a page, at most 5 pages), `
      + 'in a period CloudWatch still answers for its oldest datapoint (a multiple of 300 s beyond 15 days back, of 3600 s beyond 63 days)',
    ({ periods, periodSeconds }) => {
      if (periods > MAX_WINDOW_PERIODS) return `makes each run read ${periods} periods of ${periodSeconds} s`;
      // The run's newest period ends metricDelay before it, rounded down to a period (metricQuery, observe.ts): its
      // StartTime is up to one period more than the periods back (a batch with a longer query period may start earlier,
      // only where GetMetricData still answers every period of it: `queryStart`, observe.ts).
      const back = (periods + 1) * periodSeconds + METRIC_DELAY_MAX_SECONDS;
      const multiple = historyPeriodMultiple(back);
      return periodSeconds % multiple === 0 ? undefined
        : `makes each run read ${periods} periods of ${periodSeconds} s, from up to ${Math.ceil(back / 86_400)} days back, `
          + `where GetMetricData returns datapoints only for a period that is a multiple of ${multiple} s`;
    },
    'the oldest periods would read as missing data',
  ),
  'policy.maxReturnHold>=stabilization': crossRule<{ readonly maxReturnHoldSeconds: number; readonly stabilizationWindowSeconds: number }>(
    'at least stabilizationWindow',
    ({ maxReturnHoldSeconds: hold, stabilizationWindowSeconds: window }) => (hold >= window ? undefined
      : `is ${hold} s, below stabilizationWindow ${window} s`),
  ),
  'policy.replicaFloorsApplied': crossRule<unknown>(
    'true or false (set by the Reconciler from the serving construct)',
    // JSON-quoted: a string "true" from a hand-written configuration must not print like the boolean it is not.
    (v) => (typeof v === 'boolean' ? undefined : `is ${JSON.stringify(v)}`),
  ),
  metricDelay: METRIC_DELAY_RULE,
} as const;
