#!/usr/bin/env node
/**
 * verify: a post-deploy conformance check of a deployed stack, read-only. Each check prints PASS or FAIL with the fact
 * about the account it settles (the facts the offline tests can only read about: docs/verify.md lists them).
 *
 *   cdk-capacity-verify --stack <name> [--region <r>] [--kube-context <ctx>] [--burst <class>=<url> ...] [--time-weight-update] [--json]
 *
 * The judging is pure (lib/core/verify); this file makes the calls (read-only, except the opt-in --burst and
 * --time-weight-update) and prints.
 */
import { ApplicationAutoScalingClient, DescribeScalingPoliciesCommand, type ServiceNamespace } from '@aws-sdk/client-application-auto-scaling';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient, GetMetricDataCommand, ListMetricsCommand, type Metric } from '@aws-sdk/client-cloudwatch';
import { CloudWatchLogsClient, TestMetricFilterCommand } from '@aws-sdk/client-cloudwatch-logs';
import { DescribeAddonCommand, DescribeAddonConfigurationCommand, EKSClient } from '@aws-sdk/client-eks';
import { GetRoleCommand, IAMClient, SimulatePrincipalPolicyCommand, type EvaluationResult } from '@aws-sdk/client-iam';
import { LambdaClient } from '@aws-sdk/client-lambda';
import Ajv from 'ajv';
import { OBSERVABILITY_ADDON_NAME } from '../lib/core/metrics/template-check';
import { KARPENTER_SERVICE_ACCOUNT, KEDA_OPERATOR_SERVICE_ACCOUNT } from '../lib/core/platform/service-accounts';
import { routingTarget } from '../lib/core/reconciler/targets';
import { ENV_PREFIX } from '../lib/core/runtime/binding';
import { addonChecks, type InstalledAddon } from '../lib/core/verify/addon';
import { capacityFilterSamples } from '../lib/core/verify/log-lines';
import { karpenterPodsOfPattern } from '../lib/core/metrics/karpenter-capacity';
import { metricFilterChecks } from '../lib/core/verify/metric-filter';
import {
  exactlyListed, expectedMetrics, listMetricsFilter, type ListMetricsFilter, metricPresenceCheck, recentlyActiveFilter,
} from '../lib/core/verify/metric-presence';
import {
  decisionFor, kedaOperatorProbes, karpenterControllerProbes, modelDataReaderProbes, modelDataSkipped, modelDataUnnamed, permissionChecks,
  type ProbeDecision, reconcilerProbes, sageMakerExecutionProbes, type SimulationGroup, simulationGroups,
} from '../lib/core/verify/permissions';
import { type PermissionProbe } from '../lib/core/verify/probe';
import { type CheckResult, formatCheck, summarizeChecks } from '../lib/core/verify/result';
import {
  capacityFilters, getAttArnOf, observabilityAddons, podIdentityRole, roleStatements, statementsAllowing,
} from '../lib/core/verify/template';
import { type BurstAnswer, burstCheck, burstPlan, type BurstPlan } from '../lib/core/verify/burst';
import { type StatusSample, updatingSeconds, WEIGHT_UPDATE_MAX_SECONDS, WEIGHT_UPDATE_POLL_SECONDS, weightUpdateCheck } from '../lib/core/verify/weight-update';
import { platformModel } from '../lib/sim/platform';
import { type PodList, podsReadyCheck, renderedWorkloads } from '../lib/core/verify/pods';
import {
  type LivePolicyRead, policyArnOf, type ScalingMetricAnswer, scalingMetricCheck, type ScalingMetricPolicy, scalingMetricPolicies, type ScalingQuery,
  scalingQueryPlan,
} from '../lib/core/verify/scaling-metric';
import { servingRecordOf, servingRecords } from '../lib/core/service/serving-record';
import { setTimeout as delay } from 'node:timers/promises';
import { DescribeEndpointCommand, SageMakerClient, UpdateEndpointWeightsAndCapacitiesCommand } from '@aws-sdk/client-sagemaker';
import { parseCommandLine, UsageError } from './args';
import { cliClientConfig, type HttpTimeouts } from '../lib/core/sdk-client-profiles';
import { clientRegion } from './aws-clients';
import { asksForHelp, CONSOLE_IO, type Io, runAsProcess, runCommand } from './command';
import { type Deployment, findDeployment, noReconcilerMessage, physicalId, roleNameOf } from './deployment';
import { refusedOutright } from '../lib/core/game-day/injection';
import { DEFAULT_RETRY, isRetryableError, withRetries } from '../lib/core/reconciler/retry';
import { type Kubectl, kubectl } from './kubectl';

export { UsageError, type Io };

export const USAGE = `cdk-capacity-verify: post-deploy conformance checks of a deployed stack (read-only unless asked)

Usage:
  cdk-capacity-verify --stack <name> [--region <region>] [--kube-context <context>] [--burst <class>=<url> ...]
                      [--time-weight-update] [--json]

Checks, each printed as PASS or FAIL with the fact it settles:
  metrics      every metric the reconciler reads, each class's requests and shed requests the alarms read, and the
               reconciler's own metrics the heartbeat and replica-shortage alarms read, is listed by CloudWatch under
               the dimension set read, with data in the past 3 hours unless only an event publishes it (ListMetrics,
               RecentlyActive PT3H)
  add-on       the amazon-cloudwatch-observability version and configuration are accepted (DescribeAddonConfiguration
               schema, DescribeAddon status)
  filters      each Karpenter capacity-error filter matches Karpenter's real line for its NodePool and not a foreign
               pod's (TestMetricFilter)
  permissions  the reconciler's, the KEDA operator's, the Karpenter controller's, each EKS class's model-data and
               each SageMaker class's execution role can make their handlers' calls and no more, conditioned calls
               with the request context they carry (SimulatePrincipalPolicy with ContextEntries)
  scaling      each target-tracking policy on metric math (a SageMaker variant's perPoolTargets) has queries CloudWatch
               accepts and answers with data in the last 3 hours (GetMetricData on the live policy's own queries from
               DescribeScalingPolicies; the template's when no live policy is read)
  pods         EKS: each class's model-server pods are Ready and run the args and environment the library rendered
               (the Deployment manifest in the deployed template against kubectl get pods -o json; your kubeconfig,
               --kube-context to choose the cluster)

NOT read-only, opt-in:
  --burst <class>=<url>  send one replica of the class a short burst a little above the admission bound the library
               set (its serving record in the template), the contract's request shape, and count the engine's
               rejections (vLLM 503, TGI 429, DJL 503): PASS when it sheds, and not before the bound. The URL must
               reach ONE replica, e.g. after 'kubectl port-forward deploy/<deployment> 8080:<CAI_PORT>' use
               http://127.0.0.1:8080. At most 512 requests, each with a timeout; real load, some of it shed: run it
               off-peak. Repeatable, one class each. Not for SageMaker (InvokeEndpoint needs signed requests).
  --time-weight-update  SageMaker: write each variant's current weight back (UpdateEndpointWeightsAndCapacities,
               weights only, nothing else changes) and time how long the endpoint stays Updating, read every
               ${WEIGHT_UPDATE_POLL_SECONDS} s for up to ${WEIGHT_UPDATE_MAX_SECONDS} s: AWS publishes no figure, the simulator assumes one, and the
               library's SageMaker results depend on it. While Updating, the endpoint takes no other update (its
               autoscaling waits): run it off-peak. Needs sagemaker:DescribeEndpoint and
               sagemaker:UpdateEndpointWeightsAndCapacities on the endpoint.

Needs read-only credentials: cloudformation:ListStackResources, cloudformation:GetTemplate,
lambda:GetFunctionConfiguration (on the reconciler function only), cloudwatch:ListMetrics, cloudwatch:GetMetricData,
application-autoscaling:DescribeScalingPolicies, logs:TestMetricFilter, eks:DescribeAddon,
eks:DescribeAddonConfiguration, iam:GetRole, iam:SimulatePrincipalPolicy; for pods, list pods in the service's
namespace (and eks:DescribeCluster for the 'aws eks update-kubeconfig' that writes kubectl's context). Exit status 1
when a check fails.
`;

export interface BurstTarget {
  readonly className: string;
  readonly url: string;
}

export interface VerifyCommand {
  readonly command: 'help' | 'verify';
  readonly stack?: string;
  readonly region?: string;
  readonly json?: boolean;
  readonly kubeContext?: string;
  readonly bursts?: readonly BurstTarget[];
  /** SageMaker: time a weights-only update of the stack's endpoint (writes its current weights back). */
  readonly timeWeightUpdate?: boolean;
}

export function parseArgs(argv: readonly string[]): VerifyCommand {
  if (asksForHelp(argv)) return { command: 'help' };
  const { values, repeated } = parseCommandLine('verify', argv, {
    stack: { type: 'string' }, region: { type: 'string' }, json: { type: 'boolean' }, 'kube-context': { type: 'string' }, burst: { type: 'string', multiple: true },
    'time-weight-update': { type: 'boolean' },
  });
  const problems = repeated.map((f) => `${f} is given twice`);
  if (typeof values.stack !== 'string' || values.stack === '') problems.push('--stack <name> is required');
  const bursts: BurstTarget[] = [];
  for (const b of (values.burst as string[] | undefined) ?? []) {
    const m = /^([^=]+)=(https?:\/\/.+)$/.exec(b);
    if (!m) problems.push(`--burst '${b}' is not <class>=<http(s) URL>`);
    else if (bursts.some((x) => x.className === m[1])) problems.push(`--burst names class ${m[1]} twice`);
    else bursts.push({ className: m[1], url: m[2] });
  }
  if (problems.length > 0) throw new UsageError(problems.join('\n'));
  return {
    command: 'verify', stack: values.stack as string, region: values.region as string | undefined, json: values.json === true,
    kubeContext: values['kube-context'] as string | undefined, bursts, timeWeightUpdate: values['time-weight-update'] === true,
  };
}

export interface VerifyClients {
  readonly cloudFormation: CloudFormationClient;
  readonly lambda: LambdaClient;
  readonly cloudWatch: CloudWatchClient;
  readonly applicationAutoScaling: ApplicationAutoScalingClient;
  readonly logs: CloudWatchLogsClient;
  readonly eks: EKSClient;
  readonly iam: IAMClient;
  /** --time-weight-update's reads. */
  readonly sageMaker: SageMakerClient;
  /**
   * --time-weight-update's one write, with one SDK attempt (cliClientConfig's `singleAttempt`: the write is not safe to
   * repeat); only a throttled attempt, which SageMaker did not take, is sent again (`weightUpdateResults`).
   */
  readonly sageMakerWrite: SageMakerClient;
}

export function clients(region?: string, timeouts?: HttpTimeouts): VerifyClients {
  const config = cliClientConfig(region, timeouts);
  return {
    cloudFormation: new CloudFormationClient(config),
    lambda: new LambdaClient(config),
    cloudWatch: new CloudWatchClient(config),
    applicationAutoScaling: new ApplicationAutoScalingClient(config),
    logs: new CloudWatchLogsClient(config),
    eks: new EKSClient(config),
    iam: new IAMClient(config),
    sageMaker: new SageMakerClient(config),
    sageMakerWrite: new SageMakerClient(cliClientConfig(region, timeouts, { singleAttempt: true })),
  };
}

async function listMetrics(cw: CloudWatchClient, filter: ListMetricsFilter): Promise<Metric[]> {
  const out: Metric[] = [];
  let next: string | undefined;
  do {
    const page = await cw.send(new ListMetricsCommand({ ...filter, NextToken: next }));
    out.push(...(page.Metrics ?? []));
    next = page.NextToken;
  } while (next);
  return out;
}

async function metricChecks(d: Deployment, c: VerifyClients): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const r of d.reconcilers) {
    for (const m of expectedMetrics(r.config)) {
      // Over the past 3 hours for a metric published continuously; over the two weeks when that does not list it (to
      // tell a metric that stopped from one never published), and for one published only on an event.
      const recentFilter = recentlyActiveFilter(m);
      const recent = recentFilter && await listMetrics(c.cloudWatch, recentFilter);
      const listed = recent && exactlyListed(m, recent) ? recent : await listMetrics(c.cloudWatch, listMetricsFilter(m));
      results.push(metricPresenceCheck(m, listed, recent));
    }
  }
  return results;
}

/** An error as a check's detail quotes it: its name and message. */
const errorText = (e: unknown): string => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));

/** Hours of data the scaling check asks for: long enough to hold traffic on a quiet endpoint, short enough to be current. */
const SCALING_WINDOW_HOURS = 3;

/** GetMetricData on a policy's own queries (every page), by query id; an error is the check's evidence, not a crash. */
async function scalingAnswer(cw: CloudWatchClient, queries: readonly ScalingQuery[]): Promise<ScalingMetricAnswer> {
  const end = new Date();
  const start = new Date(end.getTime() - SCALING_WINDOW_HOURS * 3600_000);
  const values = new Map<string, number[]>();
  const messages: string[] = [];
  let next: string | undefined;
  try {
    do {
      const page = await cw.send(new GetMetricDataCommand({
        // Every query returns its data, so the check can say which pools' series had datapoints.
        MetricDataQueries: queries.map((q) => ({
          ...q,
          ReturnData: true,
          MetricStat: q.MetricStat && { ...q.MetricStat, Metric: { ...q.MetricStat.Metric, Dimensions: [...q.MetricStat.Metric.Dimensions] } },
        })),
        StartTime: start, EndTime: end, NextToken: next,
      }));
      for (const r of page.MetricDataResults ?? []) {
        if (r.Id) values.set(r.Id, [...values.get(r.Id) ?? [], ...r.Values ?? []]);
        for (const m of r.Messages ?? []) messages.push(`${r.Id}: ${m.Code ?? ''} ${m.Value ?? ''}`.trim());
      }
      for (const m of page.Messages ?? []) messages.push(`${m.Code ?? ''} ${m.Value ?? ''}`.trim());
      next = page.NextToken;
    } while (next);
  } catch (e) {
    return { error: errorText(e) };
  }
  return { results: [...values].map(([id, v]) => ({ id, values: v })), messages };
}

/**
 * The stack's policy as Application Auto Scaling holds it now, its values resolved: DescribeScalingPolicies (every
 * page) with the policy's namespace and, where the template has them as literals, its resource id and name, matched by
 * the ARN of the stack's physical id. Request: ServiceNamespace (required), ResourceId, PolicyNames, NextToken; answer:
 * ScalingPolicies of ScalingPolicy (PolicyARN, TargetTrackingScalingPolicyConfiguration), NextToken
 * (@aws-sdk/client-application-auto-scaling@3.1141.0 dist-types/models/models_0.d.ts:1689, :1695, :1781, :1901, :3114,
 * :3120, :2864, :3087). A refusal (no application-autoscaling:DescribeScalingPolicies) is the reason the check reads the
 * template instead, not a crash.
 */
async function livePolicy(d: Deployment, c: VerifyClients, p: ScalingMetricPolicy): Promise<LivePolicyRead> {
  const physical = physicalId(d, p.logicalId);
  const arn = policyArnOf(physical);
  if (!arn) return { missing: physical ? `its physical id ${physical} holds no policy ARN` : 'the stack lists no physical id for it (not created yet?)' };
  const { ServiceNamespace: namespace, ResourceId, PolicyNames } = p.lookup;
  let next: string | undefined;
  try {
    do {
      const page = await c.applicationAutoScaling.send(new DescribeScalingPoliciesCommand({
        ServiceNamespace: namespace as ServiceNamespace, ResourceId, PolicyNames: PolicyNames && [...PolicyNames], NextToken: next,
      }));
      const found = page.ScalingPolicies?.find((x) => x.PolicyARN === arn);
      if (found) return { policy: found };
      next = page.NextToken;
    } while (next);
  } catch (e) {
    return { missing: `DescribeScalingPolicies failed: ${errorText(e)}` };
  }
  return { missing: `DescribeScalingPolicies lists no live policy with ARN ${arn}` };
}

async function scalingResults(d: Deployment, c: VerifyClients): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const p of scalingMetricPolicies(d.template)) {
    const plan = scalingQueryPlan(p, await livePolicy(d, c, p));
    results.push(scalingMetricCheck(plan, 'queries' in plan ? await scalingAnswer(c.cloudWatch, plan.queries) : undefined, SCALING_WINDOW_HOURS));
  }
  return results;
}

/**
 * Each probe's decision (`decisions[i]` answers `probes[i]`): one SimulatePrincipalPolicy call per resource and
 * context (ResourceArns and ContextEntries apply to every action of a call), following Marker.
 */
async function simulate(iam: IAMClient, roleArn: string, probes: readonly PermissionProbe[]): Promise<Array<ProbeDecision | undefined>> {
  const answers: Array<{ group: SimulationGroup; results: EvaluationResult[] }> = [];
  for (const group of simulationGroups(probes)) {
    const results: EvaluationResult[] = [];
    let marker: string | undefined;
    do {
      const page = await iam.send(new SimulatePrincipalPolicyCommand({
        PolicySourceArn: roleArn, ActionNames: group.actions, ResourceArns: [group.resource],
        ...(group.context.length > 0 ? { ContextEntries: group.context } : {}), Marker: marker,
      }));
      results.push(...(page.EvaluationResults ?? []));
      marker = page.IsTruncated ? page.Marker : undefined;
    } while (marker);
    answers.push({ group, results });
  }
  return probes.map((p) => decisionFor(p, answers));
}

async function roleChecks(c: VerifyClients, label: string, roleArn: string, probes: readonly PermissionProbe[]): Promise<CheckResult[]> {
  return permissionChecks(label, roleArn, probes, await simulate(c.iam, roleArn, probes));
}

/** The ARN of a role of the stack by its logical id (GetRole on its physical name). */
async function roleArnOf(d: Deployment, c: VerifyClients, logicalId: string): Promise<string | undefined> {
  const name = physicalId(d, logicalId);
  return name ? (await c.iam.send(new GetRoleCommand({ RoleName: name }))).Role?.Arn : undefined;
}

/** Partition, account (from a role ARN of the stack) and the region verify runs in. */
async function arnParts(c: VerifyClients, roleArn: string): Promise<{ partition: string; account: string; region: string }> {
  const [, partition, , , account] = roleArn.split(':');
  return { partition, account, region: await c.cloudFormation.config.region() };
}

/** The ARN a statement's Resource names: a literal ARN, or a KMS key of the stack (`Fn::GetAtt [key, Arn]`). */
function keyArnOf(d: Deployment, resource: unknown, p: { partition: string; account: string; region: string }): string | undefined {
  if (typeof resource === 'string' && resource.startsWith('arn:')) return resource;
  const id = getAttArnOf(resource);
  const keyId = id && d.template.Resources?.[id]?.Type === 'AWS::KMS::Key' ? physicalId(d, id) : undefined;
  return keyId ? `arn:${p.partition}:kms:${p.region}:${p.account}:key/${keyId}` : undefined;
}

async function permissionResults(d: Deployment, c: VerifyClients): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const r of d.reconcilers) results.push(...await roleChecks(c, `reconciler role ${roleNameOf(r.roleArn)}`, r.roleArn, reconcilerProbes(r.config.facts)));
  const kedaRole = podIdentityRole(d.template, KEDA_OPERATOR_SERVICE_ACCOUNT);
  const kedaArn = kedaRole && await roleArnOf(d, c, kedaRole);
  if (kedaArn) results.push(...await roleChecks(c, `KEDA operator role ${roleNameOf(kedaArn)}`, kedaArn, kedaOperatorProbes()));
  results.push(...await karpenterResults(d, c), ...await modelDataResults(d, c), ...await executionRoleResults(d, c));
  return results;
}

/** The Karpenter controller's role, when the stack installs Karpenter: its tag, PassRole and region conditions. */
async function karpenterResults(d: Deployment, c: VerifyClients): Promise<CheckResult[]> {
  const roleId = podIdentityRole(d.template, KARPENTER_SERVICE_ACCOUNT);
  const arn = roleId && await roleArnOf(d, c, roleId);
  if (!roleId || !arn) return [];
  const clusterName = d.reconcilers.map((r) => r.config.clusterName).find((n) => n);
  const holder = d.reconcilers.map((r) => routingTarget(r.config.facts).capacityHolder(r.config.facts)).find((h) => h.kind === 'nodepool');
  const passRole = statementsAllowing(roleStatements(d.template, roleId), 'iam:PassRole')[0];
  const nodeRoleId = passRole && getAttArnOf(passRole.Resource);
  const nodeRoleArn = nodeRoleId && await roleArnOf(d, c, nodeRoleId);
  const label = `Karpenter controller role ${roleNameOf(arn)}`;
  if (!clusterName || holder?.kind !== 'nodepool' || !nodeRoleArn) {
    return [{
      id: `iam:${label}`, status: 'skip', settles: `${label} makes its calls under its policy's conditions and no others`,
      detail: !clusterName || holder?.kind !== 'nodepool' ? 'no reconciler names the cluster and a NodePool' : 'the node role it passes is not a role of this stack',
    }];
  }
  const p = await arnParts(c, arn);
  return roleChecks(c, label, arn, karpenterControllerProbes({ ...p, clusterName, nodeRoleArn, nodePool: holder.nodePool }));
}

/**
 * Each SageMaker class's execution role, matched to its class by its model's container environment (the service and
 * class the library renders into it, lib/core/runtime/binding.ts) and the template's serving record.
 */
async function executionRoleResults(d: Deployment, c: VerifyClients): Promise<CheckResult[]> {
  const records = servingRecords(d.template);
  const results: CheckResult[] = [];
  for (const r of Object.values(d.template.Resources ?? {})) {
    if (r.Type !== 'AWS::SageMaker::Model') continue;
    type Container = { Environment?: Record<string, unknown> } | undefined;
    const container = (r.Properties?.PrimaryContainer ?? (r.Properties?.Containers as unknown[] | undefined)?.[0]) as Container;
    const env = container?.Environment ?? {};
    const cls = records[String(env[`${ENV_PREFIX}SERVICE`])]?.classes.find((x) => x.name === env[`${ENV_PREFIX}CLASS`]);
    const roleId = getAttArnOf(r.Properties?.ExecutionRoleArn);
    const arn = cls && roleId && await roleArnOf(d, c, roleId);
    if (!cls || !roleId || !arn) continue;
    const p = await arnParts(c, arn);
    const decrypt = statementsAllowing(roleStatements(d.template, roleId), 'kms:Decrypt')[0];
    const probes = sageMakerExecutionProbes(cls, p.partition, decrypt ? keyArnOf(d, decrypt.Resource, p) : undefined);
    const label = `execution role ${roleNameOf(arn)} (class ${cls.name})`;
    results.push(...await roleChecks(c, label, arn, probes), ...(modelDataUnnamed(cls.artifact.modelData) ? [modelDataSkipped(label)] : []));
  }
  return results;
}

/** Each EKS class's model-data pod identity: its pinned object, its version and its key through S3 only. */
async function modelDataResults(d: Deployment, c: VerifyClients): Promise<CheckResult[]> {
  const classes = Object.values(servingRecords(d.template)).flatMap((r) => r.classes);
  const results: CheckResult[] = [];
  for (const w of renderedWorkloads(d.template)) {
    const modelData = classes.find((cls) => cls.name === w.className && cls.artifact.modelData)?.artifact.modelData;
    const roleId = modelData && w.serviceAccountName ? podIdentityRole(d.template, w.serviceAccountName) : undefined;
    const arn = roleId && await roleArnOf(d, c, roleId);
    if (!modelData || !roleId || !arn) continue;
    const p = await arnParts(c, arn);
    const decrypt = statementsAllowing(roleStatements(d.template, roleId), 'kms:Decrypt')[0];
    const keyArn = decrypt ? keyArnOf(d, decrypt.Resource, p) : undefined;
    const label = `model-data role ${roleNameOf(arn)} (class ${w.className})`;
    if (modelDataUnnamed(modelData)) results.push(modelDataSkipped(label));
    else results.push(...await roleChecks(c, label, arn, modelDataReaderProbes(modelData, p.partition, keyArn)));
  }
  return results;
}

async function filterResults(d: Deployment, c: VerifyClients): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const f of capacityFilters(d.template)) {
    const name = physicalId(d, f.logicalId) ?? f.logicalId;
    if (!f.filterPattern) {
      results.push({ id: `filter:${name}`, status: 'skip', settles: `metric filter ${name} matches Karpenter's line for ${f.nodePoolName}`, detail: 'its pattern holds a CloudFormation token' });
      continue;
    }
    // The lines are written by the pods the filter selects: an imported cluster's Karpenter may run elsewhere.
    const pods = karpenterPodsOfPattern(f.filterPattern);
    if (!pods) {
      results.push({ id: `filter:${name}`, status: 'skip', settles: `metric filter ${name} matches Karpenter's line for ${f.nodePoolName}`, detail: 'its pattern names no Karpenter namespace, container and pod prefix' });
      continue;
    }
    const samples = capacityFilterSamples(f.nodePoolName, pods);
    const answer = await c.logs.send(new TestMetricFilterCommand({ filterPattern: f.filterPattern, logEventMessages: samples.map((s) => s.line) }));
    results.push(...metricFilterChecks(name, samples, answer));
  }
  return results;
}

/** Ajv over EKS's schema (its `$schema` removed: Ajv 8 compiles the draft-07 vocabulary without it). */
function validateAgainst(schema: object, value: unknown): string[] {
  const { $schema: _ignored, ...rest } = schema as Record<string, unknown>;
  const ajv = new Ajv({ allErrors: true, strict: false });
  const validate = ajv.compile(rest);
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
}

async function addonResults(d: Deployment, c: VerifyClients): Promise<CheckResult[]> {
  const addons = observabilityAddons(d.template);
  const clusterName = d.reconcilers.map((r) => r.config.clusterName).find((n) => n);
  const results: CheckResult[] = [];
  for (const a of addons) {
    if (!a.addonVersion || !clusterName) {
      results.push({ id: `addon:${a.logicalId}`, status: 'skip', settles: `${OBSERVABILITY_ADDON_NAME} is accepted`,
        detail: !a.addonVersion ? 'the template pins no literal add-on version' : 'no reconciler names the cluster' });
      continue;
    }
    const schema = await c.eks.send(new DescribeAddonConfigurationCommand({ addonName: OBSERVABILITY_ADDON_NAME, addonVersion: a.addonVersion }));
    let installed: InstalledAddon | undefined;
    try {
      installed = (await c.eks.send(new DescribeAddonCommand({ clusterName, addonName: OBSERVABILITY_ADDON_NAME }))).addon;
    } catch (e) {
      if ((e as { name?: string }).name !== 'ResourceNotFoundException') throw e;
    }
    const declared = { clusterName, addonName: OBSERVABILITY_ADDON_NAME, addonVersion: a.addonVersion, configurationValues: a.configurationValues };
    results.push(...addonChecks(declared, schema.configurationSchema, installed, validateAgainst));
  }
  return results;
}

async function podResults(d: Deployment, run: Kubectl): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const w of renderedWorkloads(d.template)) {
    let pods: PodList;
    try {
      pods = JSON.parse(await run(['get', 'pods', '-n', w.namespace, '-l', w.selector, '-o', 'json'])) as PodList;
    } catch (e) {
      results.push({
        id: `pods:${w.namespace}/${w.deploymentName}`, status: 'fail', settles: `class ${w.className}'s pods are Ready with the rendered flags and environment`,
        detail: `kubectl get pods -n ${w.namespace} -l ${w.selector} failed: ${e instanceof Error ? e.message.split('\n')[0] : String(e)} (--kube-context <context> names the cluster)`,
      });
      continue;
    }
    results.push(podsReadyCheck(w, pods));
  }
  return results;
}

/** Sends a burst's requests (each with its timeout, staggered as planned) and returns what each got. */
export async function sendBurst(plan: BurstPlan, send: typeof fetch = fetch): Promise<BurstAnswer[]> {
  const one = async (i: number): Promise<BurstAnswer> => {
    if (plan.staggerMs > 0) await delay(i * plan.staggerMs);
    try {
      const res = await send(plan.url, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(plan.body), signal: AbortSignal.timeout(plan.timeoutMs),
      });
      await res.arrayBuffer().catch(() => undefined);
      return res.status;
    } catch {
      return 'error';
    }
  };
  return Promise.all(Array.from({ length: plan.requests }, (_, i) => one(i)));
}

/** Each `--burst` with the serving record of its class; a name no record has is the user's mistake, said before any check runs. */
function burstRecords(d: Deployment, bursts: readonly BurstTarget[]): Array<{ burst: BurstTarget; record: ReturnType<typeof servingRecordOf> }> {
  if (bursts.length === 0) return [];
  const records = d.reconcilers.map((r) => servingRecordOf(d.template, r.config.service));
  return bursts.map((b) => {
    const record = records.find((r) => r.classes.some((c) => c.name === b.className));
    if (!record) throw new Error(`--burst ${b.className}: no class of that name in the stack's serving records (${records.flatMap((r) => r.classes.map((c) => c.name)).join(', ')})`);
    return { burst: b, record };
  });
}

async function burstResults(bursts: ReturnType<typeof burstRecords>, send?: typeof fetch): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const { burst: b, record } of bursts) {
    const plan = burstPlan(record.classes.find((c) => c.name === b.className)!, record.contract, b.url);
    if ('skip' in plan) {
      results.push({ id: `burst:${b.className}`, status: 'skip', settles: `class ${b.className} sheds at the bound the library set`, detail: plan.skip });
      continue;
    }
    results.push(burstCheck(plan, await sendBurst(plan, send)));
  }
  return results;
}

export interface VerifyOptions {
  /** The cluster's kubectl (pods check); absent: the checks that need it are skipped. */
  readonly kubectl?: Kubectl;
  /** Opt-in load: one burst per class named. */
  readonly bursts?: readonly BurstTarget[];
  /** How the burst's requests are sent (tests pass their own). @default fetch */
  readonly fetch?: typeof fetch;
  /** Opt-in write: time a weights-only update of each SageMaker endpoint of the stack. */
  readonly timeWeightUpdate?: boolean;
  /** How the weight update's reads wait (tests pass their own clock). @default real time */
  readonly clock?: { readonly now: () => number; readonly sleep: (ms: number) => Promise<unknown> };
}

export async function runVerify(stack: string, c: VerifyClients, options: VerifyOptions = {}): Promise<CheckResult[]> {
  const d = await findDeployment(stack, c);
  if (d.reconcilers.length === 0) throw new Error(noReconcilerMessage(d));
  const bursts = burstRecords(d, options.bursts ?? []);
  return [
    ...await each('metrics', () => metricChecks(d, c)),
    ...await each('scaling', () => scalingResults(d, c)),
    ...await each('addon', () => addonResults(d, c)),
    ...await each('filter', () => filterResults(d, c)),
    ...await each('permissions', () => permissionResults(d, c)),
    ...options.kubectl ? await each('pods', () => podResults(d, options.kubectl!)) : [],
    ...await each('burst', () => burstResults(bursts, options.fetch)),
    ...options.timeWeightUpdate ? await each('weight-update', () => weightUpdateResults(d, c, options.clock)) : [],
  ];
}

/**
 * Each SageMaker endpoint of the stack: its variants' current weights written back, then its status read until it is
 * InService again after Updating (`weightUpdateCheck` judges). An endpoint not InService is not written.
 *
 * The write is sent once (`sageMakerWrite`): an attempt SageMaker took sets the endpoint Updating, and a repeat of it is
 * then refused (lambda/reconciler/targets/sagemaker.ts `landed` says the same of the Reconciler's writes), so the SDK's
 * retry of a write whose answer was lost would report verify's own update as another's. Its answer cannot say whether
 * it landed either (the weights written are the ones in force), so a write without an answer is taken as verify's own
 * when the endpoint turns Updating, and not measured when it does not. Only a throttled attempt is sent again, a few
 * times with backoff (`WEIGHT_WRITE_RETRY`): SageMaker did not take it, and read as a refusal it would fail the check.
 */
async function weightUpdateResults(
  d: Deployment, c: VerifyClients, clock: NonNullable<VerifyOptions['clock']> = { now: Date.now, sleep: (ms: number) => delay(ms) },
): Promise<CheckResult[]> {
  // The endpoint a reconciler's writes hold Updating: where its capacity lives, a variant of it (on EKS a NodePool).
  const endpoints = [...new Set(d.reconcilers.flatMap((r) => {
    const holder = routingTarget(r.config.facts).capacityHolder(r.config.facts);
    return holder.kind === 'variant' ? [holder.endpointName] : [];
  }))];
  if (endpoints.length === 0) {
    return [{ id: 'weight-update', status: 'skip', settles: 'a weights-only update is timed', detail: 'the stack has no SageMaker endpoint' }];
  }
  const assumed = platformModel('sagemaker').endpointUpdate!.weightsSeconds;
  const results: CheckResult[] = [];
  for (const name of endpoints) {
    const sm = c.sageMaker;
    const skip = (detail: string) => results.push({ id: `weight-update:${name}`, status: 'skip', settles: `a weights-only update of ${name} is timed`, detail });
    const endpoint = await sm.send(new DescribeEndpointCommand({ EndpointName: name }));
    if (endpoint.EndpointStatus !== 'InService') {
      skip(`the endpoint is ${endpoint.EndpointStatus}, not InService: nothing written`);
      continue;
    }
    // The weights in force, as the Reconciler reads them (DesiredWeight ?? CurrentWeight); both are optional in the API.
    const variants = endpoint.ProductionVariants ?? [];
    const unknown = variants.filter((v) => (v.DesiredWeight ?? v.CurrentWeight) === undefined).map((v) => v.VariantName);
    if (variants.length === 0 || unknown.length > 0) {
      skip(`no weight known for ${unknown.length > 0 ? `variant(s) ${unknown.join(', ')}` : 'any variant'}: nothing written`);
      continue;
    }
    const desired = variants.map((v) => ({ VariantName: v.VariantName!, DesiredWeight: (v.DesiredWeight ?? v.CurrentWeight)! }));
    let start = clock.now();
    let lostAnswer: string | undefined;
    try {
      await withRetries(() => {
        // Before each attempt: SageMaker may set the endpoint Updating at any moment until its answer comes back (a
        // throttled attempt before it took nothing).
        start = clock.now();
        return c.sageMakerWrite.send(new UpdateEndpointWeightsAndCapacitiesCommand({ EndpointName: name, DesiredWeightsAndCapacities: desired }));
      }, { ...WEIGHT_WRITE_RETRY, sleep: async (ms) => { await clock.sleep(ms); } });
    } catch (e) {
      if (!refusedOutright(e) && !throttled(e)) lostAnswer = errorText(e);
      else {
        // Refused, so nothing written: another update (the Reconciler's, an autoscaling activity) may have started
        // between the read and the write.
        const now = await sm.send(new DescribeEndpointCommand({ EndpointName: name }));
        if (now.EndpointStatus !== 'InService') {
          skip(`another update started first (the endpoint is ${now.EndpointStatus}; the write was refused: ${errorText(e)}): not measured`);
          continue;
        }
        if (throttled(e)) throw new Error(`the write was throttled on each of its ${WEIGHT_WRITE_RETRY.maxAttempts} attempts: ${errorText(e)}`, { cause: e });
        throw e;
      }
    }
    const samples: StatusSample[] = [];
    for (let first = true; ; first = false) {
      if (!first) await clock.sleep(WEIGHT_UPDATE_POLL_SECONDS * 1000);
      const seconds = Math.round((clock.now() - start) / 1000);
      const read = await sm.send(new DescribeEndpointCommand({ EndpointName: name }));
      const capacityChanging = (read.ProductionVariants ?? [])
        .some((v) => v.DesiredInstanceCount !== undefined && v.DesiredInstanceCount !== v.CurrentInstanceCount);
      samples.push({ seconds, status: read.EndpointStatus, capacityChanging });
      const t = updatingSeconds(samples);
      // Done when back InService after Updating, at another status, when never seen Updating for 10 s (the write changed
      // nothing), or at the bound.
      if (!('never' in t) || (t.never === 'updating' && seconds >= 10) || seconds >= WEIGHT_UPDATE_MAX_SECONDS) break;
    }
    results.push(weightUpdateCheck(name, samples, assumed, lostAnswer));
  }
  return results;
}

/**
 * A write the service throttled: it answered with a 4xx (SageMaker's ThrottlingException, a 400, or a 429) that the
 * library's retry policy takes for throttling (`isRetryableError`; the SDK's own THROTTLING_ERROR_CODES name the same,
 * @smithy/core@3.41.1 dist-cjs/submodules/retry/index.js:20-58). SageMaker turned it away before taking it, so it is
 * safe to send again; a 5xx or a lost answer may have landed, and 408 is a request timeout, so those are never repeated.
 */
function throttled(e: unknown): boolean {
  const status = (e as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
  return status !== undefined && status >= 400 && status < 500 && status !== 408 && isRetryableError(e);
}

/**
 * The weight write's own attempts at a throttle (`throttled`; the client makes one attempt each): pauses of 1, 2 and 4 s
 * at most (jittered down to half), 7 s in all.
 */
const WEIGHT_WRITE_RETRY = { ...DEFAULT_RETRY, maxAttempts: 4, baseDelayMs: 1_000, maxDelayMs: 4_000, retryable: throttled } as const;

/**
 * One group of checks; an AWS error it did not expect (throttling, a denied call, an add-on version EKS does not know)
 * fails that group, named, and the other groups still report.
 */
async function each(group: string, run: () => Promise<CheckResult[]>): Promise<CheckResult[]> {
  try {
    return await run();
  } catch (e) {
    return [{ id: `${group}:error`, status: 'fail', settles: `the ${group} checks could run`, detail: errorText(e) }];
  }
}

export async function main(
  argv: readonly string[], io: Io = CONSOLE_IO, make = clients, kube: (context?: string) => Kubectl = kubectl,
): Promise<number> {
  return runCommand(argv, io, { usage: USAGE, parse: parseArgs, run: async (cmd) => {
    try {
      const c = make(cmd.region);
      await clientRegion(c.cloudFormation);
      const results = await runVerify(cmd.stack!, c, { kubectl: kube(cmd.kubeContext), bursts: cmd.bursts, timeWeightUpdate: cmd.timeWeightUpdate });
      const summary = summarizeChecks(results);
      if (cmd.json) io.out(JSON.stringify({ stack: cmd.stack, results, summary: summary.line }, null, 1));
      else {
        for (const r of results) io.out(formatCheck(r));
        io.out(summary.line);
      }
      return summary.failed > 0 ? 1 : 0;
    } catch (e) {
      io.err(e instanceof Error ? e.message : String(e));
      return 1;
    }
  } });
}

if (require.main === module) runAsProcess(main);
