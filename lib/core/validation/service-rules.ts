/**
 * The rules of the service contract and of a capacity class: every serving construct checks them, and so does
 * `defineCapacityClasses` (lib/core/service/checks.ts, contract.ts). `rules.ts` re-exports them beside every construct's
 * own table (`VALIDATION_MATRIX`).
 *
 * A module of their own so that what checks only a contract or a class imports these alone: the simulator builds its
 * scenarios' classes through those checks, and BENCHMARKS.md records a hash of the simulator's import closure
 * (lib/sim/source-hash.ts). With every construct's table in one module, a fix to an EKS or SageMaker rule made the
 * benchmarks stale, to be rerun for identical results.
 */
import { crossRule, nameRule, numberRule } from './checker';
import { duplicates, quoted } from './names';
import { isUnresolved } from './tokens';

/**
 * A class's measured p95 replica-ready time (`envelope.replicaReadyTimeP95Seconds`, and the routing facts that carry it):
 * at most 3 hours, the longest SageMaker lets an instance take from capacity to a passing health check, each step at its
 * API maximum of 3600 s (VariantInstanceProvisionTimeoutInSeconds, ProductionVariantModelDataDownloadTimeoutInSeconds,
 * ProductionVariantContainerStartupHealthCheckTimeoutInSeconds: boto/botocore@1.43.67
 * botocore/data/sagemaker/2017-07-24/service-2.json:51105-51110, 41759-41764, 41399-41404). On EKS no one setting
 * bounds the whole start (node launch, the init container's download, then the server's `startupTimeout`, 30 minutes by
 * default); 3 hours is six of those. Longer reads as a unit mistake (milliseconds, minutes), and the grace it gives
 * (`defaultProvisioningGraceSeconds`) stays far within the history a run may read ('policy.window<=periods').
 */
export const REPLICA_READY_TIME_RULE = numberRule({
  above: 0, max: 10_800, unit: 's', why: 'a p95 start-up time in seconds, at most what SageMaker\'s three start-up timeouts allow together',
});

/** The service contract (`contract` of every serving construct, and `defineCapacityClasses({ contract })`). */
export const CONTRACT_RULES = {
  name: nameRule('dns1123Label', { why: 'it names Kubernetes objects, SageMaker resources and the Service metric dimension' }),
  'slo.ttftP95Ms': numberRule({ above: 0, unit: 'ms' }),
  'slo.itlP95Ms': numberRule({ above: 0, unit: 'ms' }),
  'slo.deadlineMs': numberRule({ above: 0, unit: 'ms' }),
  'slo.deadlineMs>ttft': crossRule<{ readonly deadlineMs: number; readonly ttftP95Ms: number }>(
    'a deadline above the p95 time to first token (a request cannot be answered before its first token)',
    ({ deadlineMs, ttftP95Ms }) => (deadlineMs > ttftP95Ms ? undefined : `is ${deadlineMs} ms, not above slo.ttftP95Ms ${ttftP95Ms} ms`),
  ),
  'requestShape.meanPromptTokens': numberRule({ min: 0, unit: 'tokens' }),
  'requestShape.meanOutputTokens': numberRule({ above: 0, unit: 'tokens', why: 'demand in tokens/s and admission limits divide by it; count 1 per request for models that do not generate tokens' }),
  peakRequestsPerSecond: numberRule({ above: 0, unit: 'requests/s', why: 'the fleet is planned for it' }),
  headroom: numberRule({ min: 0, max: 4, why: 'a fraction: 0.2 plans 20 % above peak' }),
  'peakRequestsPerSecond@quotas': crossRule<{
    readonly peakRequestsPerSecond: number;
    readonly meanOutputTokens: number;
    readonly headroom: number;
    readonly plannedTokensPerSecond: number;
    readonly classes: ReadonlyArray<{ readonly name: string; readonly maxReplicas: number; readonly tokensPerSecondPerReplica: number }>;
  }>(
    'a planned demand (peak x mean output tokens x (1 + headroom)) that the classes at their quotas (maxReplicas x envelope tokens/s, ' +
      'added up) carry: raise a quota (maxReplicas, after a quota increase), add a class, or lower the peak or the headroom',
    (p) => {
      const carried = p.classes.reduce((sum, c) => sum + c.maxReplicas * c.tokensPerSecondPerReplica, 0);
      if (carried >= p.plannedTokensPerSecond) return undefined;
      const parts = p.classes.map((c) => `${c.name} ${c.maxReplicas} x ${c.tokensPerSecondPerReplica}`).join(' + ');
      return `is ${p.peakRequestsPerSecond} requests/s: ${p.peakRequestsPerSecond} x ${p.meanOutputTokens} tokens x (1 + ${p.headroom}) = ` +
        `${round(p.plannedTokensPerSecond)} tokens/s planned, but every class at its quota carries ${parts} = ${round(carried)} tokens/s ` +
        `(${Math.floor((100 * carried) / p.plannedTokensPerSecond)} % of it)`;
    },
    'above what the quotas carry, requests are shed whatever the routing does: the plan would promise capacity the account cannot get',
  ),
} as const;

function round(n: number): number {
  return Math.round(n * 10) / 10;
}

/** One capacity class (`classes[]` of every serving construct and of `defineCapacityClasses`). */
export const CLASS_RULES = {
  name: nameRule('dns1123Label', { why: 'it names Kubernetes objects and SageMaker resources' }),
  maxReplicas: numberRule({ integer: true, min: 1 }),
  usdPerHour: numberRule({ above: 0, unit: 'USD per instance-hour' }),
  'footprint.weightsGiB': numberRule({ above: 0, unit: 'GiB' }),
  'footprint.workspaceGiB': numberRule({ min: 0, unit: 'GiB' }),
  'footprint.kvCacheBytesPerToken': numberRule({ min: 0, unit: 'bytes' }),
  'footprint.maxSequenceTokens': numberRule({ integer: true, min: 1, unit: 'tokens' }),
  'footprint.tensorParallelDegree': numberRule({ integer: true, min: 1 }),
  'runtime.maxConcurrentSequences': numberRule({ integer: true, min: 1 }),
  'runtime.maxBatchTokens': numberRule({ integer: true, min: 1, unit: 'tokens' }),
  'runtime.maxQueueDelayMs': numberRule({ min: 0, unit: 'ms' }),
  'runtime.maxQueueDelayMs<deadline': crossRule<{ readonly maxQueueDelayMs: number; readonly deadlineMs: number }>(
    'a queue delay below the service deadline (contract.slo.deadlineMs)',
    ({ maxQueueDelayMs, deadlineMs }) => (maxQueueDelayMs < deadlineMs ? undefined
      : `is ${maxQueueDelayMs} ms, not below the service deadline of ${deadlineMs} ms; a request that waits that long cannot be answered in time`),
  ),
  'runtime.queueBound': crossRule<unknown>("'required' or 'best-effort'", (v) => (v === undefined || v === 'required' || v === 'best-effort' ? undefined : `is ${JSON.stringify(v)}`)),
  'runtime.modelPath': crossRule<unknown>(
    "an absolute path inside the image ('/...')",
    (v) => {
      if (v === undefined || isUnresolved(v) || (typeof v === 'string' && v.startsWith('/'))) return undefined;
      if (typeof v !== 'string' || v.trim() === '') return `is ${JSON.stringify(v)}, empty`;
      return `is '${v}', which the engine reads as a Hugging Face Hub id (or a path relative to its working directory)`;
    },
    'the servers load a path that is not a local directory from the Hugging Face Hub at start: weights nobody pinned or verified ' +
      '(the model argument of vLLM, TGI --model-id); give baked-in weights by their absolute path, or use artifact.modelData',
  ),
  'envelope.tokensPerSecondPerReplica': numberRule({ above: 0, unit: 'tokens/s' }),
  'envelope.safeConcurrency': numberRule({
    min: 1, integer: true, unit: 'requests',
    why: 'whole requests: the engines\' batch and admission limits are counts',
  }),
  'envelope.ttftP95Ms': numberRule({ above: 0, unit: 'ms' }),
  'envelope.itlP95Ms': numberRule({ above: 0, unit: 'ms' }),
  'envelope.replicaReadyTimeP95Seconds': REPLICA_READY_TIME_RULE,
  'envelope.serviceTime<deadline': crossRule<{
    readonly serviceTimeMs: number;
    readonly ttftP95Ms: number;
    readonly meanOutputTokens: number;
    readonly itlP95Ms: number;
    readonly deadlineMs: number;
  }>(
    'p95 TTFT + mean output tokens x p95 ITL below the service deadline (the same rule on EKS and SageMaker)',
    (e) => (e.serviceTimeMs < e.deadlineMs ? undefined
      : `a mean request needs ${e.serviceTimeMs} ms on this class (p95 TTFT ${e.ttftP95Ms} ms + ${e.meanOutputTokens} tokens x p95 ITL ${e.itlP95Ms} ms), ` +
        `not below the service deadline of ${e.deadlineMs} ms; it cannot answer in time even with an empty queue`),
    'a mean request that needs the whole deadline on an idle replica can never be answered in time',
  ),
  'envelope.plausible': crossRule<{ readonly tokensPerSecondPerReplica: number; readonly safeConcurrency: number; readonly itlP95Ms: number }>(
    'generated tokens only: tokens/s at the safe concurrency may not imply a mean inter-token latency more than 8x below the p95',
    (e) => {
      // With C sequences decoding at once, each gets X/C tokens/s: a mean inter-token latency of 1000*C/X ms. Batched
      // decoding stalls behind prefills, so p95 can sit several times above the mean; a mean more than 8x faster than
      // the p95 is no longer a tail: the envelope counts prompt tokens or understates its concurrency.
      const impliedMeanItlMs = (1000 * e.safeConcurrency) / e.tokensPerSecondPerReplica;
      return impliedMeanItlMs >= e.itlP95Ms / 8 ? undefined
        : `${e.tokensPerSecondPerReplica} tokens/s at a safe concurrency of ${e.safeConcurrency} implies a mean inter-token latency of ` +
          `${impliedMeanItlMs.toFixed(1)} ms, implausibly far below the measured p95 of ${e.itlP95Ms} ms; ` +
          'tokensPerSecondPerReplica must count generated tokens only, at that concurrency';
    },
  ),
  'envelope.plausibleLow': crossRule<{
    readonly tokensPerSecondPerReplica: number;
    readonly safeConcurrency: number;
    readonly meanOutputTokens: number;
    readonly serviceTimeMs: number;
  }>(
    'at least 1/8 of the tokens/s that the safe concurrency generates when each request takes p95 TTFT + mean output tokens x p95 ITL',
    (e) => {
      // Measured at the safe concurrency, C requests are in flight; each takes at most about its p95 service time, so a
      // replica generates at least C x mean output tokens per service time. Far below that, the replica idled through
      // the measurement or the rate is per instance-minute or per request: planning with it would buy 8x the fleet.
      const floor = (e.safeConcurrency * e.meanOutputTokens * 1000) / e.serviceTimeMs;
      return e.tokensPerSecondPerReplica >= floor / 8 ? undefined
        : `${e.tokensPerSecondPerReplica} tokens/s at a safe concurrency of ${e.safeConcurrency} is ${(floor / e.tokensPerSecondPerReplica).toFixed(0)}x ` +
          `below the ${floor.toFixed(1)} tokens/s of ${e.safeConcurrency} requests of ${e.meanOutputTokens} tokens in ${e.serviceTimeMs} ms each; ` +
          'tokensPerSecondPerReplica is generated tokens per second of one replica at that concurrency';
    },
    'an implausibly low envelope plans several times the fleet the load needs, at its cost',
  ),
  'envelope.itlP95Ms@slo': crossRule<{ readonly itlP95Ms: number | undefined; readonly sloItlP95Ms: number }>(
    "measured whenever the contract's SLO bounds the inter-token latency (slo.itlP95Ms)",
    (e) => (e.itlP95Ms !== undefined ? undefined
      : `is missing while the contract's SLO bounds the inter-token latency at ${e.sloItlP95Ms} ms`),
    'a model that streams no tokens cannot meet an ITL SLO, so its contract sets none; a streaming class without it would read as '
      + 'answering at its first token, and its deadline check would be skipped',
  ),
  'envelope.latency<=slo': crossRule<{ readonly measuredMs: number; readonly sloMs: number; readonly what: string }>(
    'at most the SLO of the contract (the envelope must be measured at the SLO)',
    (e) => (e.measuredMs <= e.sloMs ? undefined : `${e.measuredMs} ms exceeds the SLO's p95 ${e.what} of ${e.sloMs} ms`),
  ),
  'runtime.maxConcurrentSequences>=safeConcurrency': crossRule<{ readonly maxConcurrentSequences: number; readonly safeConcurrency: number }>(
    "at least the envelope's safe concurrency",
    (r) => (r.safeConcurrency <= r.maxConcurrentSequences ? undefined
      : `${r.maxConcurrentSequences} is below the envelope's safe concurrency of ${r.safeConcurrency}`),
    'the envelope was measured with larger batches than this class runs; re-measure it or raise the batch size',
  ),
  'memory.utilizationCap': numberRule({ above: 0, max: 1 }),
  'memory.marginGiB': numberRule({ min: 0, unit: 'GiB' }),
  'placement.zones': nameRule('availabilityZone'),
  // Karpenter v1 NodePool CRD, requirements x-kubernetes-validations: "requirements with operator 'In' must have a value
  // defined" (test/schemas/karpenter/karpenter.sh_nodepools.yaml).
  'placement.zones[]': crossRule<readonly string[]>(
    'a non-empty list of distinct zones (omit placement.zones to use every zone of the region)',
    (zones) => {
      if (zones.length === 0) return 'is []';
      const twice = duplicates(zones);
      return twice.length === 0 ? undefined : `lists ${quoted(twice)} twice`;
    },
    'Karpenter requirements with the In operator need at least one value: an empty list would leave the class no node',
  ),
  'placement.zones@region': crossRule<{ readonly zone: string; readonly region: string }>(
    "zones of the stack's region: '<region><letter>', or a Local Zone '<region>-<zone>'",
    ({ zone, region }) => (isUnresolved(zone) || isUnresolved(region) || /^[a-z]$/.test(zone.slice(region.length)) && zone.startsWith(region)
      || zone.startsWith(`${region}-`) ? undefined : `is '${zone}', not a zone of the stack's region ${region}`),
    'Karpenter would wait for nodes in a zone the cluster cannot launch in',
  ),
  'placement.zones@sagemaker': crossRule<readonly string[]>(
    'no zones on SageMaker (omit placement.zones)',
    (zones) => `is [${zones.join(', ')}]`,
    'SageMaker places endpoint instances itself and has no zone setting: the zones would be silently ignored',
  ),
} as const;
