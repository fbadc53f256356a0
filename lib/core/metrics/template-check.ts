/**
 * The signal contract check: every metric that the reconciler's GetMetricData batch, an alarm or a dashboard widget
 * of a synthesized template reads must be either AWS-published (the table in signals.ts, with what it requires
 * installed) or produced by something in the same template: a CloudWatch Logs metric filter, the CloudWatch agent's
 * Prometheus EMF declarations in the amazon-cloudwatch-observability add-on configuration, or the reconciler's own
 * EMF. Pure: takes the template as JSON.
 */
import { ENGINE_PROMETHEUS_METRICS } from '../runtime/engine-metrics';
import { dimensionSets, metricsEmittedBy } from './contract';
import { buildQueryBatch } from '../reconciler/io';
import { RECONCILER_CONFIG_ENV, type ReconcilerConfig } from '../reconciler/config';
import { signalPlan } from '../reconciler/signal-sources';
import { AWS_PUBLISHED_METRICS, type PublishedMetricPrerequisite } from './aws-published';
import { searchesIn } from './search';
import { resolvePolicyConfig } from '../policy/defaults';

/** The add-on whose agent and Fluent Bit produce Container Insights metrics and application logs. */
export const OBSERVABILITY_ADDON_NAME = 'amazon-cloudwatch-observability';
/**
 * Template metadata key listing producers that run outside the template but that the construct was told about
 * (e.g. a cluster that already runs the add-on, with the settings the loop needs).
 */
export const EXTERNAL_PRODUCERS_METADATA = 'cdk-capacity-aware-inference:external-producers';
/** Template metadata key holding agent entries (as in the add-on's `agents[]`) merged into an add-on run elsewhere. */
export const EXTERNAL_AGENTS_METADATA = 'cdk-capacity-aware-inference:external-agents';

export interface MetricRead {
  readonly namespace: string;
  readonly name: string;
  readonly dimensions: readonly string[];
  /** Who reads it: `<logical id> (<resource type>)`. */
  readonly reader: string;
  /** A `SEARCH` the check could not parse (then the read is a problem of its own: unknown is not closed). */
  readonly unparsed?: string;
}

export interface MetricProducer {
  readonly namespace: string;
  /** Exact name, or a regular expression (agent metric selectors). */
  readonly name: string | RegExp;
  readonly dimensionSets: ReadonlyArray<readonly string[]>;
  readonly producer: string;
}

type Json = unknown;
type Resource = { Type: string; Properties?: Record<string, Json>; Metadata?: Record<string, Json> };
export interface CfnTemplate {
  readonly Resources?: Record<string, Resource>;
  readonly Metadata?: Record<string, Json>;
}

/** A CloudFormation value as text: intrinsic functions become `{token}` so JSON inside a Fn::Join still parses. */
function text(value: Json): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const join = (value as Record<string, Json>)['Fn::Join'];
    if (Array.isArray(join)) return (join[1] as Json[]).map(text).join(String(join[0]));
  }
  return '{token}';
}

function parseJson(value: Json): Json | undefined {
  try {
    return JSON.parse(text(value));
  } catch {
    return undefined;
  }
}

/** The `SEARCH` calls of an expression (`searchesIn`, the parser of what the library writes): the schema and metric name each reads. */
function searchReads(expression: string, reader: string): MetricRead[] {
  const found = searchesIn(expression);
  const reads: MetricRead[] = found.map((m) => ({ namespace: m.namespace, name: m.name, dimensions: Object.keys(m.dimensions), reader }));
  // A SEARCH of another form reads something the check cannot name: fail closed.
  const calls = expression.match(/SEARCH\s*\(/g)?.length ?? 0;
  if (calls > found.length) reads.push({ namespace: '', name: '', dimensions: [], reader, unparsed: expression });
  return reads;
}

/**
 * The metrics of an alarm's or a target-tracking policy's metric specification (the two share one shape: one metric by
 * `Namespace`/`MetricName`/`Dimensions`, or `Metrics` queries with a `MetricStat` or an `Expression`).
 */
function metricSpecReads(spec: Record<string, Json>, reader: string): MetricRead[] {
  const dims = (d: Json) => (Array.isArray(d) ? d.map((x) => String((x as Record<string, Json>)?.Name)) : []);
  if (typeof spec.MetricName === 'string') return [{ namespace: String(spec.Namespace), name: spec.MetricName, dimensions: dims(spec.Dimensions), reader }];
  const out: MetricRead[] = [];
  for (const q of (Array.isArray(spec.Metrics) ? spec.Metrics : []) as Array<Record<string, Json> | null>) {
    const metric = (q?.MetricStat as Record<string, Json> | undefined)?.Metric as Record<string, Json> | undefined;
    if (metric) out.push({ namespace: String(metric.Namespace), name: String(metric.MetricName), dimensions: dims(metric.Dimensions), reader });
    if (typeof q?.Expression === 'string') out.push(...searchReads(q.Expression, reader));
  }
  return out;
}

/** The metrics of a target-tracking policy's customized metric (metric math over several metrics, or one metric). */
function scalingPolicyReads(id: string, p: Record<string, Json>): MetricRead[] {
  const custom = (p.TargetTrackingScalingPolicyConfiguration as Record<string, Json> | undefined)?.CustomizedMetricSpecification;
  return custom && typeof custom === 'object' ? metricSpecReads(custom as Record<string, Json>, `${id} (AWS::ApplicationAutoScaling::ScalingPolicy)`) : [];
}

function alarmReads(id: string, p: Record<string, Json>): MetricRead[] {
  return metricSpecReads(p, `${id} (AWS::CloudWatch::Alarm)`);
}

function dashboardReads(id: string, p: Record<string, Json>): MetricRead[] {
  const body = parseJson(p.DashboardBody) as { widgets?: Array<{ properties?: Record<string, Json> }> } | undefined;
  const out: MetricRead[] = [];
  for (const [i, w] of (body?.widgets ?? []).entries()) {
    const title = typeof w.properties?.title === 'string' ? w.properties.title : `widget ${i}`;
    const reader = `${id} (AWS::CloudWatch::Dashboard) widget '${title}'`;
    for (const row of (w.properties?.metrics as Json[][] | undefined) ?? []) {
      const options = row.find((x) => x && typeof x === 'object') as Record<string, Json> | undefined;
      if (typeof options?.expression === 'string') {
        out.push(...searchReads(options.expression, reader));
        continue;
      }
      const plain = row.filter((x) => typeof x === 'string') as string[];
      if (plain.length < 2) continue;
      const [namespace, name, ...rest] = plain;
      out.push({ namespace, name, dimensions: rest.filter((_, k) => k % 2 === 0), reader });
    }
  }
  return out;
}

/**
 * KEDA `aws-cloudwatch` triggers in the Kubernetes objects a template applies (KubernetesManifest `Manifest`) or patches
 * in (KubernetesPatch `ApplyPatchJson`, e.g. the replica-floor trigger): the autoscalers read CloudWatch too.
 */
function kedaReads(id: string, type: string, p: Record<string, Json>): MetricRead[] {
  const source = type === 'Custom::AWSCDK-EKS-KubernetesResource' ? p.Manifest : type === 'Custom::AWSCDK-EKS-KubernetesPatch' ? p.ApplyPatchJson : undefined;
  const parsed = source === undefined ? undefined : parseJson(source);
  const out: MetricRead[] = [];
  const walk = (node: Json) => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    const o = node as Record<string, Json>;
    if (o.type === 'aws-cloudwatch' && o.metadata && typeof o.metadata === 'object') {
      const m = o.metadata as Record<string, Json>;
      out.push({
        namespace: String(m.namespace), name: String(m.metricName), dimensions: String(m.dimensionName).split(';'),
        reader: `${id} (KEDA trigger ${String(o.name)})`,
      });
      return;
    }
    Object.values(o).forEach(walk);
  };
  walk(parsed);
  return out;
}

function reconcilerConfig(p: Record<string, Json>): ReconcilerConfig | undefined {
  const env = (p.Environment as { Variables?: Record<string, Json> } | undefined)?.Variables?.[RECONCILER_CONFIG_ENV];
  return env === undefined ? undefined : (parseJson(env) as ReconcilerConfig | undefined);
}

function reconcilerReads(id: string, config: ReconcilerConfig): MetricRead[] {
  const period = resolvePolicyConfig(config.policy).periodSeconds;
  const reader = `${id} (reconciler GetMetricData)`;
  return buildQueryBatch(signalPlan(config, period), period).queries.flatMap((q): MetricRead[] => {
    if (q.Expression) return searchReads(q.Expression, reader);
    const m = q.MetricStat!.Metric;
    return [{ namespace: m.Namespace, name: m.MetricName, dimensions: m.Dimensions.map((d) => d.Name), reader }];
  });
}

interface AddonProducers {
  readonly producers: MetricProducer[];
  readonly prerequisites: PublishedMetricPrerequisite[];
}

/** What the add-on's configuration produces: Container Insights (unless turned off) and the agents' Prometheus EMF. */
function addonProducers(id: string, p: Record<string, Json>): AddonProducers {
  const config = (p.ConfigurationValues === undefined ? {} : parseJson(p.ConfigurationValues) ?? {}) as Record<string, Json>;
  const containerInsights = (config.containerInsights as Record<string, Json> | undefined)?.enabled !== false;
  const agents = (config.agents as Array<Record<string, Json>> | undefined) ?? [];
  return { producers: agentProducers(id, agents), prerequisites: containerInsights ? [OBSERVABILITY_ADDON_NAME] : [] };
}

/** The Prometheus EMF declarations of the agents' configurations. */
function agentProducers(id: string, agents: ReadonlyArray<Record<string, Json>>): MetricProducer[] {
  const producers: MetricProducer[] = [];
  for (const agent of agents) {
    const prom = ((((agent.config as Record<string, Json> | undefined)?.logs as Record<string, Json> | undefined)
      ?.metrics_collected as Record<string, Json> | undefined)?.prometheus as Record<string, Json> | undefined);
    const emf = prom?.emf_processor as Record<string, Json> | undefined;
    const namespace = typeof emf?.metric_namespace === 'string' ? emf.metric_namespace : 'ContainerInsights/Prometheus';
    for (const d of (emf?.metric_declaration as Array<Record<string, Json>> | undefined) ?? []) {
      for (const selector of (d.metric_selectors as string[] | undefined) ?? []) {
        producers.push({
          namespace,
          name: new RegExp(selector),
          dimensionSets: (d.dimensions as string[][] | undefined) ?? [],
          producer: `${id} (add-on agent '${String(agent.name)}' Prometheus EMF)`,
        });
      }
    }
  }
  return producers;
}

/** Every read and every producer of a template. */
export function templateSignals(template: CfnTemplate): { reads: MetricRead[]; producers: MetricProducer[] } {
  const reads: MetricRead[] = [];
  const producers: MetricProducer[] = [];
  const prerequisites = new Set<PublishedMetricPrerequisite>(
    ((template.Metadata?.[EXTERNAL_PRODUCERS_METADATA] as PublishedMetricPrerequisite[] | undefined) ?? []),
  );
  const external = (template.Metadata?.[EXTERNAL_AGENTS_METADATA] as Array<Record<string, Json>> | undefined) ?? [];
  producers.push(...agentProducers('template metadata (an add-on run elsewhere)', external));
  for (const [id, r] of Object.entries(template.Resources ?? {})) {
    const p = r.Properties ?? {};
    if (r.Type === 'AWS::CloudWatch::Alarm') reads.push(...alarmReads(id, p));
    if (r.Type === 'AWS::CloudWatch::Dashboard') reads.push(...dashboardReads(id, p));
    if (r.Type === 'AWS::ApplicationAutoScaling::ScalingPolicy') reads.push(...scalingPolicyReads(id, p));
    reads.push(...kedaReads(id, r.Type, p));
    if (r.Type === 'AWS::Lambda::Function') {
      const config = reconcilerConfig(p);
      if (config) {
        reads.push(...reconcilerReads(id, config));
        for (const spec of metricsEmittedBy('reconciler')) {
          producers.push({ namespace: spec.namespace, name: spec.name, dimensionSets: dimensionSets(spec), producer: `${id} (reconciler EMF)` });
        }
      }
    }
    if (r.Type === 'AWS::Logs::MetricFilter') {
      for (const t of (p.MetricTransformations as Array<Record<string, Json>> | undefined) ?? []) {
        const keys = ((t.Dimensions as Array<Record<string, Json>> | undefined) ?? []).map((d) => String(d.Key));
        producers.push({ namespace: String(t.MetricNamespace), name: String(t.MetricName), dimensionSets: [keys], producer: `${id} (AWS::Logs::MetricFilter)` });
      }
    }
    if (r.Type === 'AWS::EKS::Addon' && p.AddonName === OBSERVABILITY_ADDON_NAME) {
      const a = addonProducers(id, p);
      producers.push(...a.producers);
      a.prerequisites.forEach((x) => prerequisites.add(x));
    }
  }
  for (const m of AWS_PUBLISHED_METRICS) {
    if (m.requires === undefined || prerequisites.has(m.requires)) {
      producers.push({ namespace: m.namespace, name: m.name, dimensionSets: m.dimensionSets, producer: `AWS (${m.source})` });
    }
  }
  return { reads, producers };
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((d) => b.includes(d));
}

/** The producer of one read, if any. */
export function producerOf(read: MetricRead, producers: readonly MetricProducer[]): MetricProducer | undefined {
  return producers.find((p) => p.namespace === read.namespace
    && (typeof p.name === 'string' ? p.name === read.name : p.name.test(read.name))
    && p.dimensionSets.some((set) => sameSet(set, read.dimensions)));
}

/** One line per metric read that nothing produces, naming the metric and its reader (empty when the loop is closed). */
export function signalContractProblems(template: CfnTemplate): string[] {
  const { reads, producers } = templateSignals(template);
  const problems = reads
    .filter((r) => r.unparsed !== undefined || !producerOf(r, producers))
    .map((r) => (r.unparsed !== undefined
      ? `${r.reader} reads a SEARCH this check cannot parse (write it with searchExpression, lib/core/metrics/search.ts): ${r.unparsed}`
      : `${r.namespace} ${r.name} [${r.dimensions.join(', ')}] read by ${r.reader} has no producer in the template and is not an AWS-published metric `
        + 'of lib/core/metrics/aws-published.ts (or what publishes it is not installed)'));
  return [...new Set(problems)];
}

/** Engines whose Prometheus metrics the agent scrape can publish (for documentation). */
export const SCRAPED_ENGINES: readonly string[] = ENGINE_PROMETHEUS_METRICS.map((e) => e.engine);
