#!/usr/bin/env node
/**
 * game-day: the reference experiment as a command. Take the preferred class's capacity away, hold the shortage while
 * the fallback carries the load, give it back, and record the timeline. Refuses to start without stop conditions,
 * restores on every exit (an interrupt included) and appends every change to an audit file as it happens.
 *
 *   cdk-capacity-game-day --stack <name> --stop-alarm <alarm> --max-duration 45m --hold 20m [options]
 *
 * The control flow and the injections are pure (lib/core/game-day); this file reaches AWS and the cluster.
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import {
  ApplicationAutoScalingClient, DescribeScalableTargetsCommand, RegisterScalableTargetCommand,
} from '@aws-sdk/client-application-auto-scaling';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient, DescribeAlarmsCommand, GetMetricDataCommand, type MetricDataResult } from '@aws-sdk/client-cloudwatch';
import { unansweredQueries } from '../lib/core/metrics/metric-data-status';
import { FisClient } from '@aws-sdk/client-fis';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { DescribeEndpointCommand, SageMakerClient } from '@aws-sdk/client-sagemaker';
import { capacityErrorsDuring, compareOutcomes, observedOutcome, observedSeries, type PredictedOutcome } from '../lib/core/game-day/observed';
import { type ChartSeries } from '../lib/core/report/chart-series';
import {
  guardedWrite, type LimitsPatch, limitsNotInForce, nodePoolCap, type NodePoolCap, type NodePoolState, patchRefused, pinNotInForce, pinRefusal,
  refusedOutright, scalableTargetPin,
  type ScalableBounds, type ScalableTargetPin,
} from '../lib/core/game-day/injection';
import { VARIANT_SCALABLE_DIMENSION, VARIANT_SERVICE_NAMESPACE, variantResourceId } from '../lib/core/platform/sagemaker-scalable-target';
import { FIS_ZONES_CONFIRMED_FLAG, fisZoneRefusal, type NodePoolZones } from '../lib/core/game-day/fis-zones';
import { type NodeClaimState, NODEPOOL_LABEL, type PdbState, type PodState, type ReclaimPlan, reclaimPlan } from '../lib/core/game-day/reclaim';
import { type AuditEvent, type GameDayOptions, gameDayProblems, type Injection, runGameDay } from '../lib/core/game-day/runner';
import { KARPENTER_SERVICE_ACCOUNT } from '../lib/core/platform/service-accounts';

import { type ReconcilerConfig } from '../lib/core/reconciler/config';
import { buildQueryBatch, windowsFromResults } from '../lib/core/reconciler/io';
import { queryStart } from '../lib/core/reconciler/observe';
import { type CapacityHolder, routingTarget } from '../lib/core/reconciler/targets';
import { signalPlan } from '../lib/core/reconciler/signal-sources';
import { scenarioCharts } from '../lib/sim/report';
import { type ScenarioSummary } from '../lib/sim/suite';
import { type CfnTemplate } from '../lib/core/metrics/template-check';
import { servingRecordOf, type ServingRecord } from '../lib/core/service/serving-record';
import { predictShortage, type ReclaimShape, routedClassPrices, type ShortageWindow } from './game-day-prediction';
import { parseCommandLine, UsageError } from './args';
import { cliClientConfig, type HttpTimeouts } from '../lib/core/sdk-client-profiles';
import { clientRegion } from './aws-clients';
import { asksForHelp, CONSOLE_IO, type Io, runAsProcess, runCommand } from './command';
import { type Deployment, findDeployment, noReconcilerMessage, physicalId } from './deployment';
import { fisInjection } from './game-day-fis';
import { podIdentityRole } from '../lib/core/verify/template';
import { type Kubectl, kubectl, KubectlError } from './kubectl';
import { resolvePolicyConfig } from '../lib/core/policy/defaults';
import { interruptionHoldSeconds } from '../lib/core/platform/control-loop';

export { UsageError, type Io, type Kubectl };

export const USAGE = `cdk-capacity-game-day: exercise the fallback under load by taking the preferred class's capacity away

Usage:
  cdk-capacity-game-day --stack <name> --stop-alarm <alarm> [--stop-alarm <alarm> ...] --max-duration <dur> --hold <dur>
                        [--service <name>] [--class <name>] [--poll <dur>] [--watch-return <dur>] [--audit <file>]
                        [--kube-context <context>] [--reclaim <n|all>] [--region <region>] [--dry-run]

Stop conditions (required; it refuses to start without both):
  --stop-alarm <name>    a CloudWatch alarm on the SLO; any alarm in ALARM ends the hold (repeatable)
  --max-duration <dur>   the experiment never lasts longer (e.g. 45m)

  --hold <dur>           how long the shortage is held (at most --max-duration)
  --service <name>       the service whose reconciler is watched, when the stack holds several (its contract name)
  --class <name>         the class to take away (default: the preferred class, preference rank 0)
  --poll <dur>           how often the stop alarms and the shortage (cap, pin or experiment) are read (default 30s)
  --watch-return <dur>   keep the timeline going this long after the restore (default 15m)
  --audit <file>         JSON lines of every change and event (default game-day-audit.jsonl)
  --report <dir>         the window's metrics from CloudWatch beside the simulator's run of the same shortage on the
                         serving record the construct wrote into the template, charted by the simulator's report
                         (default game-day-report)
  --predicted <file>     instead, results.json of your own 'cdk-capacity-sim run' of the shortage
  --kube-context <ctx>   EKS: the kubeconfig context of the cluster (default: kubectl's current context)
  --fis-zones <z1,z2>    EKS: instead of the cap, AWS FIS aws:ec2:api-insufficient-instance-capacity-error on the
                         Karpenter controller role in these zones (IDs like use1-az1 or names): a zonal shortage of the
                         classes whose NodePool is held to one of them, a different scenario from the NodePool-limit cap
                         (needs --fis-role). FIS does not support requests that ask in several zones, and Karpenter asks
                         in every zone its NodePool allows: refused unless the class's NodePool is held to one zone named
  --fis-zones-confirmed  skip that check: you know every launch of the class asks in one of those zones only
  --fis-role <arn>       the role FIS assumes (trusting fis.amazonaws.com; ec2:InjectApiError for that action on the
                         Karpenter role)
  --karpenter-role <arn> the Karpenter controller role (default: the stack's karpenter Pod Identity association)
  --reclaim <n|all>      EKS: take existing capacity away, like a spot reclaim: cap the class's NodePool limits at zero,
                         then delete the n Ready NodeClaims running most of the class's pods (or all Ready ones);
                         Karpenter drains them (PodDisruptionBudgets and the NodeClaim's terminationGracePeriod
                         respected) and cannot replace them. For a class already at its most replicas, where the cap
                         alone takes nothing away
  --dry-run              print the change it would make (patch, bounds or FIS template) and exit, changing nothing

The shortage:
  EKS        caps the class's Karpenter NodePool spec.limits at its status.resources (kubectl patch --type merge):
             no new nodes, pods stay Pending, the reconciler sees desired > ready. Not an insufficient-capacity
             error: for that, --fis-zones (AWS FIS aws:ec2:api-insufficient-instance-capacity-error on the
             Karpenter controller role: a zonal shortage of the classes held to one of those zones, a different
             scenario; stop alarms become FIS stop conditions; StopExperiment on every exit).
  EKS with --reclaim: limits to zero, n NodeClaims deleted; the restore lifts the cap (the deleted nodes do not come
             back: Karpenter launches replacements for the Pending pods). Refused, before anything changes, when a
             PodDisruptionBudget of the class allows no disruption, a pod on those nodes carries
             karpenter.sh/do-not-disrupt, a NodeClaim has no terminationGracePeriod, or no pod of the class
             would be evicted.
  SageMaker  pins the class's variant's scalable target at its current instance count (RegisterScalableTarget
             MinCapacity = MaxCapacity = current): the variant cannot grow while load rises. Refused, before anything
             changes, when the variant already runs its MaxCapacity: it cannot grow anyway.
Load is yours: run it during your own traffic, or drive an existing load tool from the contract's request shape.
Durations: 90s, 20m, 1h or seconds.
`;

export interface GameDayCommand {
  readonly command: 'help' | 'run';
  readonly stack?: string;
  readonly options?: GameDayOptions;
  /** The service (its reconciler's `service`) when the stack serves several. */
  readonly service?: string;
  readonly className?: string;
  readonly audit?: string;
  readonly report?: string;
  readonly predicted?: string;
  readonly kubeContext?: string;
  readonly region?: string;
  readonly dryRun?: boolean;
  readonly fisZones?: readonly string[];
  /** --fis-zones-confirmed: the class's NodePool is not read for its zones. */
  readonly fisZonesConfirmed?: boolean;
  readonly fisRole?: string;
  readonly karpenterRole?: string;
  /** EKS: delete this many of the class's NodeClaims under a zero cap. */
  readonly reclaim?: number | 'all';
}

/** `90s`, `20m`, `1h` or a number of seconds. */
export function parseDuration(flag: string, value: string): number {
  const m = /^(\d+(?:\.\d+)?)(s|m|h)?$/.exec(value.trim());
  if (!m) throw new UsageError(`${flag} '${value}' is not a duration (90s, 20m, 1h or seconds)`);
  return Number(m[1]) * ({ s: 1, m: 60, h: 3600 } as const)[(m[2] ?? 's') as 's' | 'm' | 'h'];
}

export function parseArgs(argv: readonly string[]): GameDayCommand {
  if (asksForHelp(argv)) return { command: 'help' };
  const { values, repeated } = parseCommandLine('game-day', argv, {
    stack: { type: 'string' }, 'stop-alarm': { type: 'string', multiple: true }, 'max-duration': { type: 'string' }, hold: { type: 'string' },
    class: { type: 'string' }, service: { type: 'string' }, poll: { type: 'string' }, 'watch-return': { type: 'string' }, audit: { type: 'string' },
    'kube-context': { type: 'string' }, region: { type: 'string' }, 'dry-run': { type: 'boolean' }, report: { type: 'string' },
    predicted: { type: 'string' }, 'fis-zones': { type: 'string' }, 'fis-role': { type: 'string' }, 'karpenter-role': { type: 'string' },
    reclaim: { type: 'string' }, 'fis-zones-confirmed': { type: 'boolean' },
  });
  const problems = repeated.map((f) => `${f} is given twice`);
  const str = (k: string) => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
  if (!str('stack')) problems.push('--stack <name> is required');
  if (!str('hold')) problems.push('--hold <duration> is required');
  const unparsed = new Set<string>();
  const duration = (k: string, fallback: number) => {
    try {
      return str(k) === undefined ? fallback : parseDuration(`--${k}`, str(k)!);
    } catch (e) {
      problems.push((e as Error).message);
      unparsed.add(k);
      return fallback;
    }
  };
  const options: GameDayOptions = {
    holdSeconds: duration('hold', 0),
    stop: { alarmNames: (values['stop-alarm'] as string[] | undefined) ?? [], maxDurationSeconds: duration('max-duration', 0) },
    pollSeconds: duration('poll', 30),
    returnWatchSeconds: duration('watch-return', 900),
  };
  // A --hold that is missing or not a duration is said once, above, not again as a hold of 0 s.
  problems.push(...gameDayProblems(options).filter((p) => !(p.startsWith('--hold must') && (!str('hold') || unparsed.has('hold')))));
  const fisZones = str('fis-zones')?.split(',').map((z) => z.trim()).filter((z) => z !== '');
  if (fisZones && fisZones.length === 0) problems.push('--fis-zones names no zone');
  if ((fisZones !== undefined) !== (str('fis-role') !== undefined)) problems.push('--fis-zones and --fis-role go together (the zones to starve, the role FIS assumes)');
  const fisZonesConfirmed = values['fis-zones-confirmed'] === true;
  if (fisZonesConfirmed && fisZones === undefined) problems.push(`${FIS_ZONES_CONFIRMED_FLAG} confirms the zones of --fis-zones: give both or neither`);
  const reclaim = str('reclaim') === undefined ? undefined : str('reclaim') === 'all' ? 'all' as const : Number(str('reclaim'));
  if (reclaim !== undefined && reclaim !== 'all' && !(Number.isInteger(reclaim) && reclaim >= 1)) {
    problems.push(`--reclaim '${str('reclaim')}' is not a count of NodeClaims (1, 2, ... or all)`);
  }
  if (reclaim !== undefined && fisZones) problems.push('--reclaim and --fis-zones are different scenarios: choose one');
  if (problems.length > 0) throw new UsageError(problems.join('\n'));
  return {
    command: 'run', stack: str('stack'), options, service: str('service'), className: str('class'), audit: str('audit') ?? 'game-day-audit.jsonl',
    report: str('report') ?? 'game-day-report', predicted: str('predicted'),
    kubeContext: str('kube-context'), region: str('region'), dryRun: values['dry-run'] === true,
    fisZones, ...(fisZonesConfirmed ? { fisZonesConfirmed } : {}), fisRole: str('fis-role'), karpenterRole: str('karpenter-role'), reclaim,
  };
}

/** A NodePool's `spec.limits` through kubectl: the merge patch, and the command that applies a patch by hand. */
function nodePoolLimits(nodePool: string, run: Kubectl, kubeContext?: string) {
  const ctx = kubeContext ? ` --context ${kubeContext}` : '';
  return {
    target: `NodePool ${nodePool} spec.limits`,
    patch: (body: LimitsPatch) => run(['patch', 'nodepool', nodePool, '--type', 'merge', '-p', JSON.stringify(body)]),
    byHand: (body: LimitsPatch | undefined) => (body ? `kubectl${ctx} patch nodepool ${nodePool} --type merge -p '${JSON.stringify(body)}'` : '(nothing was changed)'),
  };
}

/** A refused patch is an exit of kubectl itself (code set) with the API server's answer on its standard error. */
function kubectlRefused(e: unknown): boolean {
  return e instanceof KubectlError && e.code !== null && patchRefused(e.stderr);
}

/** What a dry run prints: the change the injection would make, read from the current state. */
export interface Previewed {
  preview(): Promise<string>;
}

/** EKS: cap the NodePool's limits at what it has provisioned; restore its limits as they were. */
export function nodePoolInjection(nodePool: string, run: Kubectl, kubeContext?: string): Injection & Previewed & { plan(): Promise<NodePoolCap> } {
  let applied: NodePoolCap | undefined;
  const { target, patch, byHand } = nodePoolLimits(nodePool, run, kubeContext);
  const read = async () => JSON.parse(await run(['get', 'nodepool', nodePool, '-o', 'json'])) as NodePoolState;
  const plan = async () => nodePoolCap(await read());
  return {
    description: `cap Karpenter NodePool ${nodePool}'s spec.limits at its status.resources`,
    get manualRestore() {
      return byHand(applied?.restore);
    },
    plan,
    preview: async () => `would set ${JSON.stringify((await plan()).cap)}`,
    async inject() {
      const cap = await plan();
      await guardedWrite(() => patch(cap.cap), kubectlRefused, () => {
        applied = cap;
      });
      applied = cap;
      return { target, before: cap.before ?? null, after: cap.after };
    },
    async inForce() {
      // A read that fails (kubectl or the API server down) throws, as the FIS path's GetExperiment does: the runner
      // ends the game day as an error naming the failure and restores. Not "not in force" (nothing says the cap went),
      // and not "in force" either (nothing says it held): a hold that cannot be watched is not reported as held.
      if (!applied) return 'no cap was applied';
      return limitsNotInForce(nodePool, (await read()).spec.limits, applied.after);
    },
    async restore() {
      if (!applied) return { target, before: null, after: null };
      await patch(applied.restore);
      return { target, before: applied.after, after: applied.before ?? null };
    },
  };
}

/**
 * EKS, --reclaim: the class's NodePool limits to zero, then `count` of its NodeClaims deleted (Karpenter drains them
 * and, capped, cannot replace them); the restore puts the limits back. Facts and refusals: lib/core/game-day/reclaim.ts.
 */
export function reclaimInjection(
  target: Extract<CapacityHolder, { kind: 'nodepool' }>, count: number | 'all', run: Kubectl, kubeContext?: string,
): Injection & Previewed & { plan(): Promise<ReclaimPlan>; shape(): ReclaimShape | undefined } {
  let applied: ReclaimPlan | undefined;
  let requested: readonly string[] = [];
  let deleteFailed = false;
  const { nodePool, namespace, deploymentName } = target;
  const { target: limitsTarget, patch, byHand } = nodePoolLimits(nodePool, run, kubeContext);
  const json = async <T>(args: string[]) => JSON.parse(await run([...args, '-o', 'json'])) as T;
  const plan = async (): Promise<ReclaimPlan> => {
    const pool = await json<NodePoolState>(['get', 'nodepool', nodePool]);
    const claims = await json<{ items: NodeClaimState[] }>(['get', 'nodeclaims', '-l', `${NODEPOOL_LABEL}=${nodePool}`]);
    type Labels = Record<string, string>;
    const deployment = await json<{ spec: { selector: { matchLabels: Labels }; template: { metadata: { labels?: Labels } } } }>(
      ['get', 'deployment', deploymentName, '-n', namespace]);
    const selector = Object.entries(deployment.spec.selector.matchLabels).map(([k, v]) => `${k}=${v}`).join(',');
    const pods = await json<{ items: PodState[] }>(['get', 'pods', '-n', namespace, '-l', selector]);
    const pdbs = await json<{ items: PdbState[] }>(['get', 'poddisruptionbudgets', '-n', namespace]);
    return reclaimPlan({
      pool, nodeClaims: claims.items, count, pods: pods.items, podLabels: deployment.spec.template.metadata.labels ?? {}, pdbs: pdbs.items,
    });
  };
  return {
    description: `cap Karpenter NodePool ${nodePool}'s spec.limits at zero and delete ${count === 'all' ? 'all' : count} of its NodeClaims (a reclaim)`,
    get manualRestore() {
      return byHand(applied?.restore);
    },
    plan,
    preview: async () => reclaimPreview(await plan()),
    shape: () => (applied ? {
      instances: applied.reclaimed.length, evictedPods: applied.evictedPods, allowedAtOnce: applied.disruptionsAllowed,
      terminationGracePeriodSeconds: applied.terminationGracePeriodSeconds,
      podTerminationGracePeriodSeconds: applied.podTerminationGracePeriodSeconds,
    } : undefined),
    get notRestorable() {
      if (requested.length === 0) return undefined;
      const which = deleteFailed
        ? `deletion of NodeClaim(s) ${requested.join(', ')} failed part-way or entirely (kubectl's output is in the error line): any deleted`
        : `NodeClaim(s) ${requested.join(', ')} deleted (deletion requested; the drain may still run)`;
      return `${which}, not restorable: Karpenter launches replacements for the Pending pods now the cap is lifted`;
    },
    async inject(step) {
      const p = await plan();
      // Read again at the injection: what was true at the preflight may not be now.
      if (p.refusals.length > 0) throw new Error(`not injected: ${p.refusals.join('; ')}`);
      await guardedWrite(() => patch(p.cap), kubectlRefused, () => {
        applied = p;
      });
      applied = p;
      step?.({ target: limitsTarget, before: p.before ?? null, after: p.after });
      // The cap is in place before any NodeClaim goes, so Karpenter cannot launch a replacement. --wait=false: kubectl
      // returns once the API server accepted each deletion; the drain runs under Karpenter's finalizer while the game day
      // holds. Deletion is requested, not done: the nodes leave as their pods are evicted (terminationGracePeriod at most).
      requested = p.reclaimed;
      try {
        await run(['delete', 'nodeclaim', ...p.reclaimed, '--wait=false']);
      } catch (e) {
        deleteFailed = true;
        // kubectl deletes one by one: its output names the ones it deleted before failing; the audit keeps it.
        const said = [(e as { stdout?: string }).stdout, e instanceof Error ? e.message : String(e)]
          .map((x) => x?.trim() ?? '').filter((x) => x !== '').join('\n');
        throw new Error(`deleting NodeClaim(s) ${p.reclaimed.join(', ')} failed (some may be deleted: see kubectl's output): ${said}`, { cause: e });
      }
      return { target: `NodeClaims of NodePool ${nodePool}`, before: [...p.reclaimed, ...p.kept], after: { deletionRequested: p.reclaimed, kept: p.kept } };
    },
    async inForce() {
      // As the cap's (nodePoolInjection): limits put back mid-hold let Karpenter replace the reclaimed nodes, and that
      // hold is no hold. A read that fails throws: the runner ends the game day as an error naming it, and restores.
      if (!applied) return 'no cap was applied';
      return limitsNotInForce(nodePool, (await json<NodePoolState>(['get', 'nodepool', nodePool])).spec.limits, applied.after);
    },
    async restore() {
      if (!applied) return { target: limitsTarget, before: null, after: null };
      await patch(applied.restore);
      return { target: limitsTarget, before: applied.after, after: applied.before ?? null };
    },
  };
}

/** The reclaim a dry run would make. */
function reclaimPreview(p: ReclaimPlan): string {
  return `would set ${JSON.stringify(p.cap)}, then delete NodeClaim(s) ${p.reclaimed.join(', ')} `
    + `(${p.evictedPods} pod(s) of the class evicted, ${p.keptPods} left on ${p.kept.length} node(s))`;
}

export interface SageMakerClients {
  readonly sageMaker: SageMakerClient;
  readonly autoScaling: ApplicationAutoScalingClient;
}

/**
 * A variant's scalable target bounds (undefined: not registered, the variant is not autoscaled) and its current instance
 * count (DescribeEndpoint's ProductionVariants[].CurrentInstanceCount,
 * https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ProductionVariantSummary.html; undefined: not given).
 */
async function variantCapacity(
  endpointName: string, variantName: string, c: SageMakerClients,
): Promise<{ resourceId: string; bounds?: ScalableBounds; current?: number }> {
  const resourceId = variantResourceId(endpointName, variantName);
  const t = (await c.autoScaling.send(new DescribeScalableTargetsCommand({
    ServiceNamespace: VARIANT_SERVICE_NAMESPACE, ResourceIds: [resourceId], ScalableDimension: VARIANT_SCALABLE_DIMENSION,
  }))).ScalableTargets?.[0];
  if (t?.MinCapacity === undefined || t.MaxCapacity === undefined) return { resourceId };
  const endpoint = await c.sageMaker.send(new DescribeEndpointCommand({ EndpointName: endpointName }));
  const current = endpoint.ProductionVariants?.find((v) => v.VariantName === variantName)?.CurrentInstanceCount;
  return { resourceId, bounds: { minCapacity: t.MinCapacity, maxCapacity: t.MaxCapacity }, current };
}

/** SageMaker: pin the variant's scalable target at its current instance count; restore its bounds. */
export function scalableTargetInjection(endpointName: string, variantName: string, c: SageMakerClients): Injection & Previewed {
  const resourceId = variantResourceId(endpointName, variantName);
  let before: ScalableBounds | undefined;
  let pinned: ScalableBounds | undefined;
  const register = (b: ScalableBounds) => c.autoScaling.send(new RegisterScalableTargetCommand({
    ServiceNamespace: VARIANT_SERVICE_NAMESPACE, ResourceId: resourceId, ScalableDimension: VARIANT_SCALABLE_DIMENSION,
    MinCapacity: b.minCapacity, MaxCapacity: b.maxCapacity,
  }));
  const target = `scalable target ${resourceId}`;
  const describe = async () => (await c.autoScaling.send(new DescribeScalableTargetsCommand({
    ServiceNamespace: VARIANT_SERVICE_NAMESPACE, ResourceIds: [resourceId], ScalableDimension: VARIANT_SCALABLE_DIMENSION,
  }))).ScalableTargets?.[0];
  const plan = async (): Promise<ScalableTargetPin> => {
    const { bounds, current } = await variantCapacity(endpointName, variantName, c);
    if (!bounds) throw new Error(`${resourceId} has no scalable target: the variant is not autoscaled, nothing to pin`);
    return scalableTargetPin(resourceId, bounds, current ?? 0);
  };
  return {
    description: `pin ${resourceId}'s scalable target (${VARIANT_SCALABLE_DIMENSION}) at its current instance count`,
    get manualRestore() {
      return before
        ? `aws application-autoscaling register-scalable-target --service-namespace sagemaker --resource-id ${resourceId} `
          + `--scalable-dimension ${VARIANT_SCALABLE_DIMENSION} --min-capacity ${before.minCapacity} --max-capacity ${before.maxCapacity}`
        : '(nothing was changed)';
    },
    async preview() {
      const pin = await plan();
      return `would register ${target} (${VARIANT_SCALABLE_DIMENSION}) with MinCapacity ${pin.after.minCapacity}, `
        + `MaxCapacity ${pin.after.maxCapacity} (now ${pin.before.minCapacity}, ${pin.before.maxCapacity})`;
    },
    async inject() {
      const pin = await plan();
      // Refused outright (a 4xx on its only attempt: AccessDenied, a validation error), nothing changed: nothing to
      // restore and no "NOT RESTORED"; any other failure leaves the outcome unknown and the restore runs (R245).
      const applied = () => {
        before = pin.before;
        pinned = pin.after;
      };
      await guardedWrite(() => register(pin.after), refusedOutright, applied);
      applied();
      return { target, before: pin.before, after: pin.after };
    },
    async inForce() {
      // A failed DescribeScalableTargets throws, as the FIS path's GetExperiment does: the runner ends the game day as
      // an error naming the failure and restores, rather than guess either way about a pin it could not read.
      if (!pinned) return 'no pin was applied';
      const t = await describe();
      return pinNotInForce(resourceId, t && { minCapacity: t.MinCapacity, maxCapacity: t.MaxCapacity }, pinned);
    },
    async restore() {
      if (!before) return { target, before: null, after: null };
      await register(before);
      return { target, before: pinned ?? null, after: before };
    },
  };
}

export interface GameDayClients {
  readonly cloudFormation: CloudFormationClient;
  readonly lambda: LambdaClient;
  readonly cloudWatch: CloudWatchClient;
  readonly sageMaker: SageMakerClient;
  readonly autoScaling: ApplicationAutoScalingClient;
  /** AWS FIS, for --fis-zones. */
  readonly fis: FisClient;
}

export function clients(region?: string, timeouts?: HttpTimeouts): GameDayClients {
  const config = cliClientConfig(region, timeouts);
  const cloudWatch = new CloudWatchClient(config);
  return {
    cloudFormation: new CloudFormationClient(config),
    lambda: new LambdaClient(config),
    cloudWatch,
    sageMaker: new SageMakerClient(config),
    autoScaling: new ApplicationAutoScalingClient(config),
    // @aws-sdk/client-fis stays at 3.523.0 (the newest version the npm registry serves here), whose own default
    // credential chain is older than the other clients': its credential-provider-ini@3.523.0 knows no `login_session`
    // profile (`aws login`), which the current one reads (credential-provider-ini@3.973.32 dist-cjs/index.js:110-120).
    // So FIS signs with the credentials the other clients resolve, through the provider it takes as `credentials`
    // (@aws-sdk/core@3.523.0 dist-types/httpAuthSchemes/aws_sdk/resolveAwsSdkSigV4Config.d.ts:10).
    fis: new FisClient({ ...config, credentials: cloudWatch.config.credentials }),
  };
}

/**
 * StateValue per alarm name; names CloudWatch does not know are left out. `signal`: an interrupt abandons the read
 * (a read changes nothing), so Ctrl-C during a slow poll goes straight to the restore.
 */
export async function alarmStates(cw: CloudWatchClient, names: readonly string[], signal?: AbortSignal): Promise<Record<string, string>> {
  const answer = await cw.send(
    new DescribeAlarmsCommand({ AlarmNames: [...names], AlarmTypes: ['MetricAlarm', 'CompositeAlarm'] }), { abortSignal: signal },
  );
  const states: Record<string, string> = {};
  for (const a of [...(answer.MetricAlarms ?? []), ...(answer.CompositeAlarms ?? [])]) {
    if (a.AlarmName && a.StateValue) states[a.AlarmName] = a.StateValue;
  }
  return states;
}

export async function sleep(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await delay(ms, undefined, { signal });
  } catch {
    // aborted: the runner sees the signal and restores
  }
}

/** A window as the report reads it: the chart series, and a class's capacity errors summed over slots [from, to]. */
export interface ObservedWindow {
  readonly series: ChartSeries;
  capacityErrors(className: string, from: number, to: number): number | undefined;
}

/** The reconciler's signals over [start, end) (epoch seconds), one slot per period, from GetMetricData. */
export async function observeWindow(cw: CloudWatchClient, config: ReconcilerConfig, start: number, end: number): Promise<ObservedWindow> {
  const period = resolvePolicyConfig(config.policy).periodSeconds;
  const batch = buildQueryBatch(signalPlan(config, period), period);
  const slots = Math.max(1, Math.ceil((end - start) / period));
  // As a run's query: a counter read over a longer period ends its last bucket at the window's end (`queryStart`).
  const queryFrom = queryStart(batch, start, start + slots * period, end);
  const results: MetricDataResult[] = [];
  let next: string | undefined;
  do {
    const page = await cw.send(new GetMetricDataCommand({
      MetricDataQueries: batch.queries, StartTime: new Date(queryFrom * 1000), EndTime: new Date((start + slots * period) * 1000), NextToken: next,
    }));
    // A query CloudWatch did not answer is not an empty series: the report would say no capacity error was seen.
    const unanswered = unansweredQueries(page);
    if (unanswered) throw unanswered;
    results.push(...(page.MetricDataResults ?? []));
    next = page.NextToken;
  } while (next);
  const windows = windowsFromResults(results, batch, { start, periodSeconds: period, slots });
  return {
    series: observedSeries(batch, windows, slots),
    capacityErrors: (className, from, to) => capacityErrorsDuring(batch, windows, className, from, to),
  };
}

/** The library policy's means from a `cdk-capacity-sim run` results.json. */
export function predictedFrom(resultsJson: string): PredictedOutcome {
  type Means = Record<string, { mean: number } | undefined>;
  const parsed = JSON.parse(resultsJson) as { scenarios?: Array<{ policies?: Array<{ policy: string; metrics: Means }> }> };
  const library = parsed.scenarios?.[0]?.policies?.find((p) => p.policy === 'library')?.metrics;
  if (!library) throw new Error('--predicted: no library policy in the first scenario of that results.json (run cdk-capacity-sim run with --policies library)');
  const mean = (k: string) => library[k]?.mean ?? NaN;
  return {
    timeToFallbackSeconds: mean('timeToFallbackSeconds'), timeToReturnSeconds: mean('timeToReturnSeconds'), rejectedShare: mean('rejectedShare'),
    latencyP95Seconds: mean('latencyP95Seconds'), modeChangesPerEvent: mean('modeChangesPerEvent'), costUsd: mean('costUsd'),
  };
}

/** The report's Markdown: observed beside predicted with each difference named, the prediction's assumptions, the charts. */
export function reportMarkdown(
  stack: string, className: string, rows: ReturnType<typeof compareOutcomes>, charts: readonly string[], prediction: readonly string[] = [],
  observed: readonly string[] = [],
): string {
  return [
    `# Game day on ${stack}: ${className} taken away`,
    '',
    '| measure | observed | predicted | difference |',
    '|---|---:|---:|---|',
    ...rows.map((r) => `| ${r.measure} | ${r.observed} | ${r.predicted} | ${r.difference} |`),
    '',
    ...(observed.length > 0 ? ['Observed:', '', ...observed.map((a) => `- ${a}`), ''] : []),
    ...(prediction.length > 0 ? ['Prediction:', '', ...prediction.map((a) => `- ${a}`), ''] : []),
    ...charts.map((c) => `![${c}](${c}.svg)`),
    '',
  ].join('\n');
}

/** Minutes of the window before the injection (the baseline the charts start from). */
const BASELINE_SECONDS = 600;

/** The service's serving record in the stack's template, or why there is none (a stack deployed before it was recorded). */
function recordOf(template: CfnTemplate, config: ReconcilerConfig): ServingRecord | Error {
  try {
    return servingRecordOf(template, config.service);
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
}

/** The prediction: a results.json given with --predicted, else the simulator's run of the same shortage on the deployed record. */
function prediction(cmd: GameDayCommand, record: ServingRecord | Error, config: ReconcilerConfig, series: ChartSeries, w: ShortageWindow): {
  outcome?: PredictedOutcome; chart?: ChartSeries; notes: string[];
} {
  if (cmd.predicted) return { outcome: predictedFrom(readFileSync(cmd.predicted, 'utf8')), notes: [`from ${cmd.predicted} (--predicted)`] };
  if (cmd.fisZones) {
    return { notes: ['not predicted: the FIS scenario is a zonal shortage of the classes held to those zones, the simulator\'s run models one class '
      + 'taken away (pass --predicted with your own scenario)'] };
  }
  try {
    if (record instanceof Error) throw record;
    const p = predictShortage(record, config, series, w);
    return { outcome: p.outcome, chart: p.chart, notes: ['the simulator\'s run of this shortage on the deployed serving record (template Metadata)', ...p.assumptions] };
  } catch (e) {
    return { notes: [`not predicted: ${e instanceof Error ? e.message : String(e)}`] };
  }
}

/** Each routed class's price from the serving record; none (cost '-') when the stack has no record (the prediction's notes say why). */
function observedPrices(record: ServingRecord | Error, config: ReconcilerConfig): Record<string, number> {
  return record instanceof Error ? {} : routedClassPrices(record, config);
}

/**
 * Whether AWS FIS's errors reached Karpenter, from the class's capacity-error signal over the hold: FIS fails a launch
 * only when one is made, and Karpenter's capacity-error metric filter counts only the failures it logs as insufficient
 * capacity. None counted means the report compares a shortage that may never have touched the class: said as a warning.
 */
function fisReachedKarpenter(className: string, errors: number | undefined, io: Io): string {
  if (errors === undefined) {
    const note = `${className} has no capacity-error signal (the reconciler counts no Karpenter capacity errors for it): whether AWS FIS's `
      + 'errors reached a launch of the class is not known';
    io.err(`warning: ${note}`);
    return note;
  }
  if (errors > 0) {
    const note = `capacity errors of ${className} during the hold: ${Math.round(errors * 100) / 100} (its capacity-error signal, summed)`;
    io.out(note);
    return note;
  }
  const note = `no capacity error of ${className} during the hold (its capacity-error signal summed to 0): AWS FIS injected nothing that `
    + 'Karpenter hit. No launch of the class was made in those zones (its pods fitted, or Karpenter launched in another zone), or the error '
    + 'was not logged as insufficient capacity; the comparison is of a shortage that may never have touched the class';
  io.err(`warning: ${note}`);
  return note;
}

async function writeReport(
  cmd: GameDayCommand, template: CfnTemplate, config: ReconcilerConfig, routedClass: string,
  injectedAt: number, restoredAt: number, endedAt: number, cw: CloudWatchClient, io: Io, reclaim?: ReclaimShape,
): Promise<void> {
  const period = resolvePolicyConfig(config.policy).periodSeconds;
  const start = Math.floor(injectedAt / 1000 / period) * period - BASELINE_SECONDS;
  const { series, capacityErrors } = await observeWindow(cw, config, start, Math.ceil(endedAt / 1000));
  const onset = injectedAt / 1000 - start;
  const restoration = restoredAt / 1000 - start;
  const observedNotes = cmd.fisZones
    ? [fisReachedKarpenter(routedClass, capacityErrors(routedClass, Math.floor(onset / period), Math.floor(restoration / period)), io)] : [];
  const record = recordOf(template, config);
  const observed = observedOutcome(series, Math.floor(onset / period), Math.floor(restoration / period), period, observedPrices(record, config));
  const window: ShortageWindow = {
    routedClass, onsetSeconds: onset, restorationSeconds: restoration, durationSeconds: series.modes.length * period, periodSeconds: period,
    reclaim,
  };
  const predicted = prediction(cmd, record, config, series, window);
  const rows = compareOutcomes(observed, predicted.outcome);
  // The simulator's report draws reality the way it draws a simulated run: the same charts, the shortage shaded.
  const summary = (name: string, chart: ChartSeries): ScenarioSummary => ({
    scenarioId: 'game-day', title: `${cmd.stack}: ${routedClass} taken away`, seeds: [], arrivalsPerRun: 0, policies: [],
    platform: routingTarget(config.facts).platform,
    charts: { [name]: chart }, chartSeed: 0, capacityEvents: [{ className: routedClass, onset, restoration }],
    // The contract's end-to-end deadline, as the simulator's charts draw it: not the policy's latency trigger, which a
    // user's latencySloP95 sets apart from it.
    deadlineSeconds: record instanceof Error ? NaN : record.contract.slo.deadlineMs / 1000,
  });
  const charts: Record<string, string> = { ...scenarioCharts(summary('observed', series)) };
  if (predicted.chart) {
    for (const [name, svg] of Object.entries(scenarioCharts(summary('predicted', predicted.chart)))) charts[`predicted-${name}`] = svg;
  }
  mkdirSync(cmd.report!, { recursive: true });
  for (const [name, svg] of Object.entries(charts)) writeFileSync(join(cmd.report!, `${name}.svg`), svg);
  writeFileSync(join(cmd.report!, 'report.md'), reportMarkdown(cmd.stack!, routedClass, rows, Object.keys(charts), predicted.notes, observedNotes));
  for (const r of rows) io.out(`${r.measure}: observed ${r.observed}, predicted ${r.predicted} (${r.difference})`);
  for (const n of predicted.notes) io.out(`prediction: ${n}`);
  io.out(`report: ${join(cmd.report!, 'report.md')}`);
}

export interface MainDeps {
  readonly clients: (region?: string) => GameDayClients;
  readonly kubectl: (context?: string) => Kubectl;
  /** Where interrupts come from (the process by default). */
  readonly signals: Pick<NodeJS.Process, 'on' | 'off'>;
  readonly now: () => number;
  /** Resolves after `ms`, or as soon as `signal` aborts. */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
}

const DEFAULT_DEPS: MainDeps = { clients, kubectl, signals: process, now: () => Date.now(), sleep };

/**
 * The alarms' ARNs by name (FIS stop conditions take ARNs), each alarm once: the names are de-duplicated before they
 * are asked for and counted, so a --stop-alarm given twice is one stop condition, not "an alarm without an ARN".
 */
export async function alarmArns(cw: CloudWatchClient, names: readonly string[]): Promise<string[]> {
  const unique = [...new Set(names)];
  const answer = await cw.send(new DescribeAlarmsCommand({ AlarmNames: unique, AlarmTypes: ['MetricAlarm', 'CompositeAlarm'] }));
  const arns = [...(answer.MetricAlarms ?? []), ...(answer.CompositeAlarms ?? [])].flatMap((a) => (a.AlarmArn ? [a.AlarmArn] : []));
  if (arns.length !== unique.length) throw new Error(`not every stop alarm has an ARN in DescribeAlarms (${unique.join(', ')}): FIS needs them as stop conditions`);
  return arns;
}

/** The Karpenter controller role's ARN: given, or the stack's karpenter Pod Identity association (CDK roles have the path /). */
function karpenterRoleArn(cmd: GameDayCommand, d: Deployment): string {
  if (cmd.karpenterRole) return cmd.karpenterRole;
  const logical = podIdentityRole(d.template, KARPENTER_SERVICE_ACCOUNT);
  const name = logical && physicalId(d, logical);
  if (!name) throw new Error(`${cmd.stack} binds no role to the ${KARPENTER_SERVICE_ACCOUNT} service account (an imported cluster's Karpenter?): pass --karpenter-role <arn>`);
  const [, partition, , , account] = d.reconcilers[0].roleArn.split(':'); // any role of the stack: same partition and account
  return `arn:${partition}:iam::${account}:role/${name}`;
}

/**
 * Why the NodePool cap, the FIS shortage or the SageMaker pin would exercise nothing, or undefined. All three only stop
 * growth (the cap refuses launches; FIS fails them; the pin holds the count): a class already running its most replicas
 * (the planner's preferred classes run at min = max by default) never grows, so the hold would pass with no shortage of
 * the class at all. Refused before anything changes. The reclaim takes nodes the class has, so it is not refused.
 */
async function atMostReplicas(cmd: GameDayCommand, target: CapacityHolder, run: Kubectl, c: SageMakerClients): Promise<string | undefined> {
  if (target.kind === 'variant') {
    // Not autoscaled (no bounds) or no count given: the injection's own read says so as an error.
    const { resourceId, bounds, current } = await variantCapacity(target.endpointName, target.variantName, c);
    const refused = bounds && current !== undefined ? pinRefusal(resourceId, bounds, current) : undefined;
    return refused && `${refused}. Raise the variant's scaling.maxInstances for the game day, or take away a class `
      + 'that autoscales (--class). Nothing was changed.';
  }
  if (cmd.reclaim !== undefined) return undefined;
  const out = await run(['get', 'deployment', target.deploymentName, '-n', target.namespace, '-o', 'jsonpath={.spec.replicas}']);
  const replicas = Number(out.trim());
  if (!Number.isFinite(replicas) || replicas < target.maxReplicas) return undefined;
  const atMost = `${target.routedClass} already runs ${replicas} replicas, its maximum (${target.maxReplicas}): `;
  const instead = 'Take existing capacity away instead (--reclaim <n|all>), raise its classOptions.maxReplicas for the game day, '
    + 'or take away a class that autoscales (--class). Nothing was changed.';
  return cmd.fisZones
    ? `${atMost}AWS FIS fails only launches, and the class never asks for another node, so no launch of it would fail. ${instead}`
    : `${atMost}capping NodePool ${target.nodePool} takes nothing away, since the class never asks for another node. ${instead}`;
}

/**
 * Why the FIS scenario would inject nothing into the class's launches, or undefined: its NodePool, read now, must be
 * held to one of the zones given (lib/core/game-day/fis-zones.ts says why), unless --fis-zones-confirmed. Refused
 * before anything changes, like `atMostReplicas`.
 */
async function fisZonesUnconfirmed(cmd: GameDayCommand, target: CapacityHolder, run: Kubectl, io: Io): Promise<string | undefined> {
  if (!cmd.fisZones || target.kind !== 'nodepool') return undefined;
  if (cmd.fisZonesConfirmed) {
    io.out(`note: ${FIS_ZONES_CONFIRMED_FLAG}: NodePool ${target.nodePool} is not checked for being held to one of ${cmd.fisZones.join(', ')}`);
    return undefined;
  }
  return fisZoneRefusal(JSON.parse(await run(['get', 'nodepool', target.nodePool, '-o', 'json'])) as NodePoolZones, cmd.fisZones);
}

async function chooseInjection(
  cmd: GameDayCommand, d: Deployment, target: CapacityHolder, c: GameDayClients, deps: MainDeps, run: Kubectl,
): Promise<Injection & Previewed> {
  if (cmd.fisZones) {
    if (target.kind !== 'nodepool') throw new Error('--fis-zones is the EKS scenario (Karpenter launches); this stack serves on SageMaker');
    return fisInjection(c.fis, {
      karpenterRoleArn: karpenterRoleArn(cmd, d), experimentRoleArn: cmd.fisRole!, zones: cmd.fisZones,
      durationSeconds: cmd.options!.stop.maxDurationSeconds,
      stopAlarmArns: await alarmArns(c.cloudWatch, cmd.options!.stop.alarmNames), stack: cmd.stack!, clientToken: `game-day-${deps.now()}`,
    }, (ms, signal) => deps.sleep(ms, signal ?? new AbortController().signal));
  }
  if (cmd.reclaim !== undefined) {
    if (target.kind !== 'nodepool') throw new Error('--reclaim is the EKS scenario (Karpenter NodeClaims); this stack serves on SageMaker');
    return reclaimInjection(target, cmd.reclaim, run, cmd.kubeContext);
  }
  return target.kind === 'nodepool'
    ? nodePoolInjection(target.nodePool, run, cmd.kubeContext)
    : scalableTargetInjection(target.endpointName, target.variantName, c);
}

export async function main(argv: readonly string[], io: Io = CONSOLE_IO, deps: MainDeps = DEFAULT_DEPS): Promise<number> {
  return runCommand(argv, io, { usage: USAGE, parse: parseArgs, run: (cmd) => execute(cmd, io, deps) });
}

async function execute(cmd: GameDayCommand, io: Io, deps: MainDeps): Promise<number> {
  const c = deps.clients(cmd.region);
  await clientRegion(c.cloudFormation);
  const d = await findDeployment(cmd.stack!, c);
  if (d.reconcilers.length === 0) {
    io.err(noReconcilerMessage(d));
    return 1;
  }
  // One service per run: the one named, or the only one of the stack.
  const services = d.reconcilers.map((r) => r.config.service);
  const reconciler = cmd.service === undefined
    ? (d.reconcilers.length === 1 ? d.reconcilers[0] : undefined)
    : d.reconcilers.find((r) => r.config.service === cmd.service);
  if (!reconciler) {
    io.err(cmd.service === undefined
      ? `${cmd.stack} has ${d.reconcilers.length} reconciler functions (services: ${services.join(', ') || 'none'}): name one with --service`
      : `${cmd.stack} has no reconciler for service '${cmd.service}' (services: ${services.join(', ') || 'none'})`);
    return 1;
  }
  // The routed class the game day takes away: the one named, or the preferred one (preference rank 0).
  const facts = reconciler.config.facts;
  const target = routingTarget(facts).capacityHolder(facts, cmd.className);
  // One kubectl runner for the whole run (EKS), in the named context.
  const run = deps.kubectl(cmd.kubeContext);
  const nothingToTake = await atMostReplicas(cmd, target, run, c) ?? await fisZonesUnconfirmed(cmd, target, run, io);
  if (nothingToTake) {
    io.err(nothingToTake);
    return 2;
  }
  const injection = await chooseInjection(cmd, d, target, c, deps, run);
  io.out(`game day on ${cmd.stack}: ${injection.description}; hold ${cmd.options!.holdSeconds} s, stop on ${cmd.options!.stop.alarmNames.join(', ')} `
    + `or after ${cmd.options!.stop.maxDurationSeconds} s; audit ${cmd.audit}`);
  const reclaim = cmd.reclaim !== undefined ? await (injection as ReturnType<typeof reclaimInjection>).plan() : undefined;
  if (reclaim) {
    for (const note of reclaim.notes) io.out(`note: ${note}`);
    const grace = reclaim.terminationGracePeriodSeconds;
    const own = reclaim.podTerminationGracePeriodSeconds;
    // Karpenter deletes the pods the budget holds at the node's grace less their own (the prediction's moment too).
    const deletedAfter = grace === undefined ? undefined : interruptionHoldSeconds(own ?? 0, grace);
    if (reclaim.evictedPods > reclaim.disruptionsAllowed && deletedAfter !== undefined && deletedAfter >= cmd.options!.holdSeconds) {
      io.out(`note: the hold (${cmd.options!.holdSeconds} s) ends before Karpenter deletes the pods the budget holds (after ${deletedAfter} s: `
        + `terminationGracePeriod ${grace} s less ${own === undefined ? '0 s (no pod grace read)' : `the pods' own ${own} s`}): the class loses ${reclaim.disruptionsAllowed} `
        + `of the ${reclaim.evictedPods} pod(s) during the hold, not all (the prediction assumes the same); hold longer to take them all`);
    }
    if (reclaim.refusals.length > 0) {
      for (const r of reclaim.refusals) io.err(`refused: ${r}`);
      io.err('Nothing was changed.');
      return 2;
    }
  }
  if (cmd.dryRun) {
    io.out(reclaim ? reclaimPreview(reclaim) : await injection.preview());
    io.out('dry run: nothing changed');
    return 0;
  }
  const controller = new AbortController();
  const onSignal = (signal: string) => {
    if (controller.signal.aborted) io.err(`${signal}: still restoring; the restore is not interrupted`);
    else {
      io.err(`${signal}: ending the game day and restoring`);
      controller.abort();
    }
  };
  // SIGHUP too: a closed SSH session or terminal must restore, not kill the process mid-experiment.
  const handlers = (['SIGINT', 'SIGTERM', 'SIGHUP'] as const).map((signal) => [signal, () => onSignal(signal)] as const);
  for (const [signal, handler] of handlers) deps.signals.on(signal, handler);
  let outcome: Awaited<ReturnType<typeof runGameDay>>;
  try {
    const record = (e: AuditEvent) => {
      io.out(`${e.at} ${e.event}${e.detail ? `: ${e.detail}` : ''}${e.change ? ` ${JSON.stringify(e.change)}` : ''}`);
      appendFileSync(cmd.audit!, `${JSON.stringify(e)}\n`);
    };
    // Best effort: the terminal keeps the timeline, and the restore never waits on the audit file.
    const recordFailed = (e: AuditEvent, error: unknown) => io.err(`audit ${cmd.audit} not written (${e.event}): ${error instanceof Error ? error.message : String(error)}`);
    outcome = await runGameDay(cmd.options!, {
      injection, alarmStates: (names) => alarmStates(c.cloudWatch, names, controller.signal), now: deps.now, sleep: deps.sleep, record, recordFailed,
      signal: controller.signal,
    });
  } finally {
    // The restore is behind us: an interrupt from here on (the report takes a while) ends the process as usual, instead
    // of saying it restores when nothing is left to restore.
    for (const [signal, handler] of handlers) deps.signals.off(signal, handler);
  }
  if (!outcome.restored) io.err(`NOT RESTORED: ${injection.manualRestore}`);
  if (outcome.injectedAt !== undefined && outcome.restoredAt !== undefined) {
    try {
      const { config } = reconciler;
      // A reclaim deletes one instance per NodeClaim; its pods leave as the drain lets them.
      const reclaimed = 'shape' in injection ? (injection as ReturnType<typeof reclaimInjection>).shape() : undefined;
      await writeReport(
        cmd, d.template, config, target.routedClass, outcome.injectedAt, outcome.restoredAt, deps.now(), c.cloudWatch, io, reclaimed,
      );
    } catch (e) {
      io.err(`report not written: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  // Exit 0 only for a game day that ran and was restored; an error (an injection that could not start) is a failure.
  return outcome.endedBy === 'refused' ? 2 : outcome.restored && outcome.endedBy !== 'error' ? 0 : 1;
}

if (require.main === module) {
  // After a hangup the terminal is gone and writing to it fails (EIO, EPIPE): the restore must not die of that. The audit
  // file keeps the record.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  runAsProcess(main);
}
