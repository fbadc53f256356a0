import { Duration, Lazy, RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import {
  applicationLogGroupName,
  FILTER_PATTERN_MAX_LENGTH,
  karpenterCapacityErrorMetric,
  karpenterCapacityErrorPattern,
  type KarpenterPods,
  prometheusLogGroupName,
} from '../core/metrics/karpenter-capacity';
import { KARPENTER_NAMESPACE } from './karpenter';
import { emfMetricDeclarations, enginePrometheusMetrics, SCRAPED_METRIC_NAMESPACE, scrapeJob, type ScrapeTarget } from '../core/runtime/engine-metrics';
import { AwsMetrics, type MetricSpec } from '../core/metrics/contract';
import { EXTERNAL_AGENTS_METADATA, EXTERNAL_PRODUCERS_METADATA, OBSERVABILITY_ADDON_NAME } from '../core/metrics/template-check';
import { type MetricStatSource } from '../core/metrics/aws-published';
import { SCRAPER_RESOURCES } from '../core/platform/system-nodes';
import { Checker } from '../core/validation/checker';
import { ConstructValidationError, type Problem, throwIfInvalid } from '../core/validation/error';
import { EKS_RULES } from '../core/validation/rules';
import { durationSeconds } from '../util/duration';
import { acknowledgeNistRules, acknowledgeWildcardResources, NIST_ONE_ROLE_POLICY } from '../util/nag';
import { logGroupArns } from '../util/log-arns';

/**
 * Pinned add-on version. Check it against your cluster version with
 * `aws eks describe-addon-versions --addon-name amazon-cloudwatch-observability --kubernetes-version 1.33`.
 * The configuration keys used below are those of aws-observability/helm-charts
 * charts/amazon-cloudwatch-observability values.yaml (chart 6.4.0), which the add-on packages.
 */
export const OBSERVABILITY_ADDON_VERSION = 'v6.4.0-eksbuild.1';

/**
 * Karpenter's pods as this library installs it (lib/eks/karpenter.ts: release `karpenter` of the `karpenter` chart in
 * KARPENTER_NAMESPACE, so the Deployment and its pods are named `karpenter-...`): the only pods whose lines count.
 */
export const KARPENTER_PODS: KarpenterPods = { namespace: KARPENTER_NAMESPACE, podNamePrefix: 'karpenter-' };

/** Namespace and service account of the add-on's agent (and Fluent Bit): the pod identity association's subject. */
export const OBSERVABILITY_NAMESPACE = 'amazon-cloudwatch';
export const OBSERVABILITY_SERVICE_ACCOUNT = 'cloudwatch-agent';
/** The dedicated agent that scrapes the model servers once (a Deployment, not the per-node DaemonSet). */
export const SCRAPER_AGENT_NAME = 'cai-model-server-scraper';

/** The cluster already runs the add-on (installed elsewhere). */
export interface ExistingObservabilityAddon {
  /**
   * The add-on's current configuration values, when you can pass them: the construct checks the settings the loop
   * needs (container logs on, Container Insights on) and fails at synth naming what is missing.
   * Either the object or the JSON string of `aws eks describe-addon-configuration` / the add-on's
   * `configurationValues`.
   * @default - not checked: you assert container logs and Container Insights (enhanced) are on
   */
  readonly configurationValues?: Record<string, unknown> | string;
  /**
   * The application log group exists already (Fluent Bit creates it on first write): the metric filters attach to it
   * by name. Set false to have this construct create it (it must not exist yet).
   * @default true
   */
  readonly applicationLogGroupExists?: boolean;
  /**
   * You merged this construct's model-server scraper agent (`EksObservability.configurationValues.agents`, the
   * `cai-model-server-scraper` entry) into that add-on's configuration: the loop then reads the scraped metrics.
   * @default false - served tokens are estimated as requests x the contract's mean output tokens
   */
  readonly modelServerScrape?: boolean;
}

export interface ObservabilityOptions {
  /** @default OBSERVABILITY_ADDON_VERSION */
  readonly addonVersion?: string;
  /** Retention of the add-on's five log groups (application, dataplane, host, performance, prometheus). @default logs.RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /** Key that encrypts those log groups. @default - a new key with rotation */
  readonly logEncryptionKey?: kms.IKey;
  /**
   * Period of the model-server scrape: 10, 12, 15, 20, 30 or 60 seconds, or 2, 3 or 4 minutes (EKS_RULES
   * `observability.scrapeInterval`, `observability.scrapeInterval@periods`).
   * @default Duration.minutes(1)
   */
  readonly scrapeInterval?: Duration;
  /** The cluster already runs the add-on: do not install it. @default - install it */
  readonly existingAddon?: ExistingObservabilityAddon;
  /**
   * The add-on's log groups (application, dataplane, host, performance and prometheus) exist already, e.g. kept
   * (RETAIN) by an earlier deployment of this construct that was deleted, or made at run time by the add-on before this
   * construct created all five (an upgrade: the running add-on recreates a deleted group within seconds): attach to them
   * by name instead of creating them (creating a log group whose fixed name exists fails the deployment). Their
   * retention and key stay as they are, so `logRetention` and `logEncryptionKey` cannot be combined with it; the key and
   * the groups an earlier deployment created leave the template and are kept (RETAIN).
   * @default false - create them (they must not exist yet)
   */
  readonly existingLogGroups?: boolean;
}

export interface ObservabilityClass extends ScrapeTarget {
  readonly nodePoolName: string;
}

export interface EksObservabilityProps extends ObservabilityOptions {
  readonly cluster: eks.ICluster;
  readonly clusterName: string;
  /**
   * The classes whose NodePools get a capacity-error filter and whose pods are scraped. Services on a shared cluster
   * add theirs with `addClasses`.
   * @default - none yet
   */
  readonly classes?: readonly ObservabilityClass[];
  /**
   * The Karpenter pods whose log lines count (a Karpenter installed outside this library may run elsewhere).
   * @default KARPENTER_PODS
   */
  readonly karpenterPods?: KarpenterPods;
}

/** The signal producers of one service's classes. */
export interface ServiceSignalProducers {
  readonly capacityErrorFilters: readonly logs.MetricFilter[];
  /** Capacity-error metric of each class (by class name). */
  readonly capacityErrorMetrics: Readonly<Record<string, MetricStatSource>>;
  /** Contract metrics the scrape publishes, per class. */
  readonly scrapedMetrics: Readonly<Record<string, readonly MetricSpec[]>>;
}

/** Every problem of the options, under `observability.` (the prop of EksInferenceService that carries them). */
export function observabilityProblems(o: ObservabilityOptions): Problem[] {
  const c = new Checker(EKS_RULES);
  if (o.addonVersion !== undefined) c.cross('observability.addonVersion', o.addonVersion);
  const scrape = durationSeconds(o.scrapeInterval);
  if (c.optional('observability.scrapeInterval', scrape) && scrape !== undefined) c.cross('observability.scrapeInterval@periods', scrape, 'observability.scrapeInterval');
  if (o.existingLogGroups === true) {
    const set = (['logRetention', 'logEncryptionKey', 'existingAddon'] as const).filter((prop) => o[prop] !== undefined);
    c.cross('observability.existingLogGroups', set);
  }
  const existing = o.existingAddon;
  if (!existing) return c.problems;
  const set = (['addonVersion', 'logRetention', 'logEncryptionKey'] as const).filter((prop) => o[prop] !== undefined);
  c.cross('observability.existingAddon', { set, createsLogGroup: existing.applicationLogGroupExists === false });
  const raw = existing.configurationValues;
  if (raw === undefined) return c.problems;
  const values = parsedValues(raw);
  if (!c.cross('observability.existingAddon.configurationValues', values)) return c.problems;
  const v = values as {
    containerLogs?: { enabled?: unknown }; containerInsights?: { enabled?: unknown }; agent?: { config?: unknown }; agents?: unknown;
  };
  c.cross('observability.existingAddon.configurationValues.containerLogs.enabled', v.containerLogs?.enabled);
  c.cross('observability.existingAddon.configurationValues.containerInsights.enabled', v.containerInsights?.enabled);
  c.cross('observability.existingAddon.configurationValues.agent.config', v.agent?.config);
  // The chart renders one AmazonCloudWatchAgent per `agents` entry, each `merge`d over `agent` (the entry's own keys
  // win), named `cloudwatch-agent` unless the entry names it (charts/amazon-cloudwatch-observability
  // templates/linux/cloudwatch-agent-custom-resource.yaml, chart 6.4.0 lines 69 and 104-107, review R202; the same in
  // aws-observability/helm-charts@0168249e): an entry's own `config` replaces `agent.config` for that agent.
  const agents = Array.isArray(v.agents) ? (v.agents as Array<{ name?: unknown; config?: unknown } | null>) : [];
  agents.forEach((entry, i) => {
    if (entry && (entry.name === undefined || entry.name === DEFAULT_AGENT_NAME)) {
      c.cross('observability.existingAddon.configurationValues.agents[].config', entry.config,
        `observability.existingAddon.configurationValues.agents[${i}].config`);
    }
  });
  return c.problems;
}

/** The name the chart gives the agent an `agents` entry does not name (its `cloudwatch-agent.name` helper). */
const DEFAULT_AGENT_NAME = 'cloudwatch-agent';

/** The configuration values as an object: CloudFormation's `ConfigurationValues` is their JSON string. */
function parsedValues(raw: Record<string, unknown> | string): unknown {
  if (typeof raw !== 'string') return raw;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** CloudWatch Logs: metric filters per log group (PutMetricFilter: "The maximum number ... is 100"). */
const METRIC_FILTERS_PER_LOG_GROUP = 100;

/**
 * The producers of the EKS control loop's signals: the `amazon-cloudwatch-observability` EKS add-on (CloudWatch agent
 * with Container Insights enhanced observability, Fluent Bit container logs) with a pod identity for its agent; the
 * five log groups it writes to, created first with retention and encryption; a capacity-error
 * metric filter per Karpenter NodePool on the application log group; and a dedicated agent that scrapes each class's
 * model servers and publishes their metrics under the contract's names.
 *
 * Cost (us-east-1 list prices, see https://aws.amazon.com/cloudwatch/pricing/): Container Insights with enhanced
 * observability is billed per observation; the application logs at the Logs ingestion price per GB; every metric
 * filter metric and every scraped (metric, dimension set) is a custom metric (about USD 0.30 per metric-month).
 */
export class EksObservability extends Construct {
  public readonly addon?: eks.Addon;
  public readonly agentRole?: iam.Role;
  public readonly applicationLogGroup: logs.ILogGroup;
  public readonly prometheusLogGroup?: logs.ILogGroup;
  /** The filters of every class added so far (all services). */
  public readonly capacityErrorFilters: logs.MetricFilter[] = [];
  /** Capacity-error metric of each class (by class name) of the classes given at construction. */
  public readonly capacityErrorMetrics: Readonly<Record<string, MetricStatSource>>;
  /** Contract metrics the scrape publishes, per class given at construction. */
  public readonly scrapedMetrics: Readonly<Record<string, readonly MetricSpec[]>>;
  private readonly clusterName: string;
  /** How often the model servers' metrics are scraped (and their counters published), in seconds. */
  public readonly scrapeIntervalSeconds: number;
  private readonly karpenterPods: KarpenterPods;
  private readonly existing?: ExistingObservabilityAddon;
  /** Every class of every service, in the order they were added: NodePools, scrape jobs, EMF declarations. */
  private readonly classes: ObservabilityClass[] = [];

  constructor(scope: Construct, id: string, props: EksObservabilityProps) {
    super(scope, id);
    throwIfInvalid('EksObservability', this.node.path, [
      ...(Token.isUnresolved(props.clusterName) ? [{ field: 'clusterName', message: 'is a CDK token; allowed: a literal (log group and metric names)' }] : []),
      ...observabilityProblems(props),
    ]);
    this.clusterName = props.clusterName;
    this.scrapeIntervalSeconds = (props.scrapeInterval ?? Duration.minutes(1)).toSeconds();
    this.karpenterPods = props.karpenterPods ?? KARPENTER_PODS;
    const existing = props.existingAddon;
    this.existing = existing;
    const retention = props.logRetention ?? logs.RetentionDays.ONE_MONTH;
    const imported = props.existingLogGroups === true || (existing !== undefined && existing.applicationLogGroupExists !== false);
    const key = imported ? undefined : props.logEncryptionKey ?? newLogKey(this, props.clusterName);

    // Created before the add-on: Fluent Bit's auto_create_group would otherwise make it without retention or key,
    // and the metric filters need it at deploy time.
    // The add-on's log groups have fixed names: attached when they exist already, else created with retention and key,
    // and kept (RETAIN) so that container logs outlive the cluster.
    const addonLogGroup = (id: string, logGroupName: string, exists: boolean): logs.ILogGroup => (exists
      ? logs.LogGroup.fromLogGroupName(this, id, logGroupName)
      : new logs.LogGroup(this, id, { logGroupName, retention, encryptionKey: key, removalPolicy: RemovalPolicy.RETAIN }));
    this.applicationLogGroup = addonLogGroup('ApplicationLogs', applicationLogGroupName(props.clusterName), imported);

    // At synth: a pattern grows with each NodePool (of any service on the cluster) whose name extends its own.
    this.node.addValidation({ validate: () => this.filterPatternErrors() });
    const own = this.addClasses(this, props.classes ?? []);
    this.capacityErrorMetrics = own.capacityErrorMetrics;
    this.scrapedMetrics = own.scrapedMetrics;

    if (existing) {
      // What runs outside the template, recorded for the signal contract check (lib/core/metrics/template-check.ts);
      // at synth, so that it covers the classes services add after this construct.
      const template = Stack.of(this).templateOptions;
      template.metadata = {
        ...template.metadata,
        [EXTERNAL_PRODUCERS_METADATA]: [OBSERVABILITY_ADDON_NAME],
        ...(existing.modelServerScrape ? { [EXTERNAL_AGENTS_METADATA]: Lazy.any({ produce: () => this.scraperAgents() }) } : {}),
      };
      return;
    }

    this.prometheusLogGroup = addonLogGroup('PrometheusLogs', prometheusLogGroupName(props.clusterName), props.existingLogGroups === true);
    // Fluent Bit's dataplane and host groups and the agent's performance group too: the add-on would otherwise create
    // them at run time (auto_create_group, chart 6.4.0 values.yaml) without retention or key, outside the stack, where
    // they outlive it and are billed for ever (review R225).
    const otherLogGroups = OTHER_ADDON_LOG_GROUPS.map((group) =>
      addonLogGroup(`${pascal(group)}Logs`, otherAddonLogGroupName(props.clusterName, group), props.existingLogGroups === true));
    this.agentRole = new iam.Role(this, 'AgentRole', {
      assumedBy: new iam.SessionTagsPrincipal(new iam.ServicePrincipal('pods.eks.amazonaws.com')),
      description: `CloudWatch agent and Fluent Bit of the ${OBSERVABILITY_ADDON_NAME} add-on on ${props.clusterName}`,
    });
    for (const statement of agentStatements(this, props.clusterName)) this.agentRole.addToPolicy(statement);
    acknowledgeNistRules(this.agentRole, { IAMNoInlinePolicy: NIST_ONE_ROLE_POLICY });
    acknowledgeWildcardResources(
      this.agentRole,
      'The add-on writes only the Container Insights log groups of this cluster (application, dataplane and host from Fluent Bit, ' +
        'performance and prometheus from the agent; chart 6.4.0 values.yaml), in streams it names per node at run time; ' +
        'ec2:DescribeVolumes and ec2:DescribeTags have no resource-level permissions (host metadata); cloudwatch:PutMetricData has no ' +
        'resource type for metrics (only the optional dataset type, which names no metric) and is bound to the ContainerInsights namespace by the cloudwatch:namespace condition.',
    );
    this.addon = new eks.Addon(this, 'Addon', {
      cluster: props.cluster,
      addonName: OBSERVABILITY_ADDON_NAME,
      addonVersion: props.addonVersion ?? OBSERVABILITY_ADDON_VERSION,
      // Rendered at synth: the scrape jobs of every service on the cluster.
      configurationValues: Lazy.any({ produce: () => this.configurationValues }) as unknown as Record<string, unknown>,
      preserveOnDelete: false,
    });
    const cfn = this.addon.node.defaultChild as eks.CfnAddon;
    cfn.podIdentityAssociations = [{ serviceAccount: OBSERVABILITY_SERVICE_ACCOUNT, roleArn: this.agentRole.roleArn }];
    this.addon.node.addDependency(this.applicationLogGroup, this.prometheusLogGroup, ...otherLogGroups);
    const agent = props.cluster.eksPodIdentityAgent;
    if (agent) this.addon.node.addDependency(agent);
  }

  /**
   * Problems of adding `count` more capacity-error filters (one per NodePool) to the application log group: "The
   * maximum number of metric filters that can be associated with a log group is 100" (CloudWatch Logs API,
   * PutMetricFilter), so the NodePools of all services on one cluster are bounded by it. A deploy past it fails with
   * LimitExceededException after the cluster work is done; at synth it is one clear error instead. Filters made
   * outside this library on the same log group are not known here.
   */
  public capacityFilterProblems(count: number): Problem[] {
    const total = this.capacityErrorFilters.length + count;
    return total <= METRIC_FILTERS_PER_LOG_GROUP ? [] : [{
      field: 'classes',
      message: `adds ${count} NodePool capacity-error filter(s) to the cluster's application log group, which has ` +
        `${this.capacityErrorFilters.length} from this library already (${total}); allowed: at most ${METRIC_FILTERS_PER_LOG_GROUP} ` +
        'metric filters per log group (CloudWatch Logs quota): fewer classes, or another cluster',
    }];
  }

  /**
   * The signal producers of one service's classes: a capacity-error metric filter per NodePool (created in `scope`, so
   * that each service owns its own) and the scrape of its model servers (in the add-on configuration). The filter
   * patterns tell each pool from every other pool on the cluster, including those added later.
   */
  public addClasses(scope: Construct, classes: readonly ObservabilityClass[]): ServiceSignalProducers {
    // The service checks this at construction with its other problems; this guards any other caller.
    throwIfInvalid('EksObservability', this.node.path, this.capacityFilterProblems(classes.length));
    this.classes.push(...classes);
    const metrics: Record<string, MetricStatSource> = {};
    // Rendered at synth: services attached later add NodePools each pattern must tell apart.
    const pattern = (pool: string) =>
      logs.FilterPattern.literal(Lazy.string({ produce: () => karpenterCapacityErrorPattern(pool, this.karpenterPods, this.nodePoolNames()) }));
    const filters = classes.map((c) => {
      const metric = karpenterCapacityErrorMetric(this.clusterName, c.nodePoolName);
      metrics[c.className] = metric;
      const filter = new logs.MetricFilter(scope, `CapacityErrors-${c.className}`, {
        logGroup: this.applicationLogGroup,
        filterPattern: pattern(c.nodePoolName),
        metricNamespace: metric.namespace,
        metricName: metric.metricName,
        metricValue: '1',
      });
      (filter.node.defaultChild as logs.CfnMetricFilter).addMetadata('cdk-capacity-aware-inference:produces',
        `CapacityErrors of class ${c.className}: Karpenter's "failed launching nodeclaim" insufficient-capacity lines for NodePool ${c.nodePoolName} `
        + '(kubernetes-sigs/karpenter v1.14.1 pkg/controllers/nodeclaim/lifecycle/launch.go)');
      return filter;
    });
    this.capacityErrorFilters.push(...filters);
    const scraped: Record<string, MetricSpec[]> = {};
    if (!this.existing || this.existing.modelServerScrape) {
      for (const c of classes) {
        const e = enginePrometheusMetrics(c.engine);
        if (e) scraped[c.className] = Object.values(e.metrics);
      }
    }
    return { capacityErrorFilters: filters, capacityErrorMetrics: metrics, scrapedMetrics: scraped };
  }

  /** The add-on configuration values for every class added so far (what to merge into an add-on you run yourself). */
  public get configurationValues(): Record<string, unknown> {
    const jobs = this.classes.flatMap((c): Array<Record<string, unknown>> => {
      const job = scrapeJob(c, this.scrapeIntervalSeconds);
      return job ? [job] : [];
    });
    const services = [...new Set(this.classes.map((c) => c.service))];
    const declarations = services.flatMap((service) => emfMetricDeclarations(service, this.classes
      .filter((c) => c.service === service)
      .flatMap((c) => Object.values(enginePrometheusMetrics(c.engine)?.metrics ?? {}))));
    return addonConfiguration(this.clusterName, jobs, declarations);
  }

  /** A capacity-error pattern CloudWatch Logs would refuse: too long for its NodePool's exclusions. */
  private filterPatternErrors(): string[] {
    const pools = this.nodePoolNames();
    const problems = pools.flatMap((pool): Problem[] => {
      const length = karpenterCapacityErrorPattern(pool, this.karpenterPods, pools).length;
      if (length <= FILTER_PATTERN_MAX_LENGTH) return [];
      const extending = pools.filter((p) => p.startsWith(`${pool}-`));
      return [{
        field: `nodePoolName '${pool}'`,
        message: `has a capacity-error filter pattern of ${length} characters, as it excludes the NodePools whose names extend ` +
          `'${pool}-' (${extending.join(', ')}); allowed: at most ${FILTER_PATTERN_MAX_LENGTH} (CloudWatch Logs filterPattern): ` +
          'shorter class or service names, or names that do not extend another NodePool\'s name and a \'-\'',
      }];
    });
    return problems.length === 0 ? [] : [new ConstructValidationError('EksObservability', this.node.path, problems).message];
  }

  /** Every NodePool on the cluster the construct knows (each filter excludes the longer names of the others). */
  private nodePoolNames(): string[] {
    return this.classes.map((c) => c.nodePoolName);
  }

  /** The scraper agent to record as external, or undefined (no class is scraped): the key is then left out. */
  private scraperAgents(): Array<Record<string, unknown>> | undefined {
    const scraper = (this.configurationValues.agents as Array<Record<string, unknown>>).find((a) => a.name === SCRAPER_AGENT_NAME);
    return scraper ? [scraper] : undefined;
  }
}

/** The add-on's log groups beside the application and Prometheus ones: Fluent Bit's dataplane and host, the agent's performance. */
const OTHER_ADDON_LOG_GROUPS = ['dataplane', 'host', 'performance'] as const;

function otherAddonLogGroupName(clusterName: string, group: (typeof OTHER_ADDON_LOG_GROUPS)[number]): string {
  return `/aws/containerinsights/${clusterName}/${group}`;
}

/** `dataplane` -> `Dataplane`: a construct id from a log group's short name. */
function pascal(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/** Log groups the add-on writes on a cluster: Fluent Bit's three (chart 6.4.0 values.yaml cloudwatch_logs outputs) and the agent's two. */
export function containerInsightsLogGroupNames(clusterName: string): string[] {
  const others = OTHER_ADDON_LOG_GROUPS.map((group) => otherAddonLogGroupName(clusterName, group));
  return [applicationLogGroupName(clusterName), ...others, prometheusLogGroupName(clusterName)];
}

/**
 * What the agent's pod identity may do, instead of CloudWatchAgentServerPolicy (PutMetricData in every namespace and
 * writes to every log group: a pod with the identity could forge the contract's ReplicaFloor, PolicyMode, capacity
 * errors and audit lines). Container Insights (enhanced) and the model-server scrape publish by EMF in these log
 * groups, not by PutMetricData: the agent configuration the chart renders has no `metrics` section
 * (aws-observability/helm-charts amazon-cloudwatch-observability-6.4.0 templates/_helpers.tpl). PutMetricData stays
 * allowed in the ContainerInsights namespace only, so that no metric of this library's namespace can be put with it.
 * No PutRetentionPolicy: a writer must not shorten the retention this construct sets. No X-Ray (Application Signals
 * is off), no SSM (the configuration comes from the add-on). Residual risk, documented: EMF lines in these log groups
 * may name any namespace; only pods running as the amazon-cloudwatch/cloudwatch-agent service account get the role.
 */
function agentStatements(scope: Construct, clusterName: string): iam.PolicyStatement[] {
  const groups = containerInsightsLogGroupNames(clusterName).map((n) => logGroupArns(scope, n));
  return [
    // Fluent Bit's auto_create_group and the agent create their group when it is missing (this construct creates all five first).
    new iam.PolicyStatement({
      sid: 'ContainerInsightsLogGroups',
      actions: ['logs:CreateLogGroup', 'logs:DescribeLogStreams'],
      resources: groups.flatMap((g) => [g.bare, g.group]),
    }),
    new iam.PolicyStatement({
      sid: 'ContainerInsightsLogStreams',
      actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
      resources: groups.map((g) => g.streams),
    }),
    new iam.PolicyStatement({ sid: 'HostMetadata', actions: ['ec2:DescribeVolumes', 'ec2:DescribeTags'], resources: ['*'] }),
    new iam.PolicyStatement({
      sid: 'ContainerInsightsMetricsOnly',
      actions: ['cloudwatch:PutMetricData'],
      resources: ['*'],
      conditions: { StringEquals: { 'cloudwatch:namespace': AwsMetrics.containerInsights.namespace } },
    }),
  ];
}

function newLogKey(scope: Construct, clusterName: string): kms.Key {
  const key = new kms.Key(scope, 'LogKey', { enableKeyRotation: true, description: `Container Insights log groups of ${clusterName}` });
  // CloudWatch Logs encrypts with the key only if its policy lets the service use it for these log groups.
  // https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/encrypt-log-data-kms.html
  const stack = Stack.of(scope);
  key.addToResourcePolicy(new iam.PolicyStatement({
    principals: [new iam.ServicePrincipal(`logs.${stack.region}.amazonaws.com`)],
    actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
    resources: ['*'],
    conditions: {
      ArnLike: { 'kms:EncryptionContext:aws:logs:arn': `arn:${stack.partition}:logs:${stack.region}:${stack.account}:log-group:/aws/containerinsights/${clusterName}/*` },
    },
  }));
  return key;
}

/**
 * Where the scraper may run: on the system nodes, never on a node Karpenter launched. Unset, it would take the chart's
 * root toleration `- operator: Exists` (aws-observability/helm-charts amazon-cloudwatch-observability-6.4.0
 * charts/amazon-cloudwatch-observability/values.yaml:27-28; an `agents[]` entry without `tolerations` falls back to
 * it, templates/_helpers.tpl:8-20, applied by templates/linux/cloudwatch-agent-custom-resource.yaml:313), which
 * tolerates the accelerator taints of the classes' NodePools, so it could land on a GPU or Neuron node. There it
 * keeps the node from ever being empty: Karpenter counts a node empty only when no reschedulable non-DaemonSet pod
 * has a positive eviction cost (kubernetes-sigs/karpenter v1.14.1 pkg/controllers/disruption/types.go:150-157,198-209,
 * emptiness.go:72-74, pkg/utils/pod/scheduling.go:44-51), and the scraper's system-node-critical priority (values.yaml:739) makes its cost positive
 * (pkg/utils/disruption/disruption.go:62-68); with `expireAfter: Never` that node would run, and bill, for good.
 * - affinity: the whole of it, because Helm's mergeOverwrite replaces lists (Masterminds/sprig v3.3.0 dict.go:109-117,
 *   dario.cat/mergo v1.0.1 merge.go:166-170): the chart's own Fargate exclusion (values.yaml:740-748) is kept beside
 *   `karpenter.sh/nodepool DoesNotExist`, the label Karpenter puts on its nodes (pkg/apis/v1/labels.go:41) and the
 *   rule its own chart keeps the controller off them with (aws/karpenter-provider-aws v1.14.1
 *   charts/karpenter/values.yaml:93-99).
 * - tolerations: replace the root one (a non-nil entry list wins, _helpers.tpl:11-13) with Karpenter's controller's
 *   own (values.yaml:109-111 there), so the scraper runs wherever Karpenter's controller can, and tolerates neither
 *   the class nodes' taints (`classTaints`, lib/eks/manifests/karpenter.ts) nor `node.kubernetes.io/unschedulable` (a
 *   draining system node).
 * The scraper's configuration opens no port (only EMF, StatsD, collectd, OTLP, JMX, X-Ray and Application Signals do:
 * aws/amazon-cloudwatch-agent-operator v3.6.0, the chart's operator, internal/manifests/collector/ports.go:126-299),
 * so on the host network it does not clash with the DaemonSet agent of the same node.
 */
const SCRAPER_PLACEMENT = {
  affinity: {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{
          matchExpressions: [
            { key: 'eks.amazonaws.com/compute-type', operator: 'NotIn', values: ['fargate'] },
            { key: 'karpenter.sh/nodepool', operator: 'DoesNotExist' },
          ],
        }],
      },
    },
  },
  tolerations: [{ key: 'CriticalAddonsOnly', operator: 'Exists' }],
} as const;

/**
 * The add-on configuration: the default DaemonSet agent (Container Insights with enhanced observability, which
 * publishes replicas_desired) and a single-replica Deployment agent that scrapes the model servers once, each
 * configured with the chart's `agents[]` keys (each entry merges over `agent`).
 */
function addonConfiguration(
  clusterName: string,
  jobs: ReadonlyArray<Record<string, unknown>>,
  metricDeclarations: ReadonlyArray<Record<string, unknown>>,
): Record<string, unknown> {
  // No `tolerations` at the root or on the per-node agent, Fluent Bit, dcgm-exporter or neuron-monitor: they keep the
  // chart's `- operator: Exists` (values.yaml:27-28), which tolerates the class nodes' SERVING_TAINT
  // (test/eks/class-node-daemonsets.test.ts); a list there would keep them off those nodes.
  const agents: Array<Record<string, unknown>> = [{ name: OBSERVABILITY_SERVICE_ACCOUNT }];
  if (jobs.length > 0) {
    agents.push({
      name: SCRAPER_AGENT_NAME,
      mode: 'deployment',
      replicas: 1,
      ...SCRAPER_PLACEMENT,
      // The requests the system node group is sized for (lib/core/platform/system-nodes.ts).
      resources: SCRAPER_RESOURCES,
      // The chart defaults every agent's service account to cloudwatch-agent: the same pod identity applies.
      config: {
        logs: {
          metrics_collected: {
            prometheus: {
              cluster_name: clusterName,
              log_group_name: prometheusLogGroupName(clusterName),
              emf_processor: { metric_namespace: SCRAPED_METRIC_NAMESPACE, metric_declaration: metricDeclarations },
            },
          },
        },
      },
      prometheus: { config: { global: { scrape_interval: '1m', scrape_timeout: '10s' }, scrape_configs: jobs } },
    });
  }
  // Application Signals (on by default) would need X-Ray write permissions and bills per request; the loop reads none of it.
  return { containerLogs: { enabled: true }, containerInsights: { enabled: true }, applicationSignals: { enabled: false }, agents };
}
