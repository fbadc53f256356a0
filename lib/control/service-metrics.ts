import { durationSeconds } from '../util/duration';
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import {
  ADMISSION_REJECTIONS,
  type AdmissionDecision,
  type CapacityOutcome,
  classDimensions,
  Dim,
  dimensionMap,
  METRIC_PERIOD_SECONDS,
  type MetricSpec,
  Metrics,
  serviceDimensions,
} from '../core/metrics/contract';
import { type RoutedClassFacts, type RoutingFacts } from '../core/reconciler/routing-facts';
import { routingTarget } from '../core/reconciler/targets';
import { type ClassSignalProducers, type ServingDescription } from '../core/reconciler/serving';
import { Checker } from '../core/validation/checker';
import { type Problem } from '../core/validation/error';
import { OBSERVABILITY_RULES } from '../core/validation/rules';
import { servingDescriptionProblems, servingPropProblem } from '../core/validation/serving';
import { type IInferenceServing } from './serving';
import { type MetricStatSource } from '../core/metrics/aws-published';
import { classRequests, classShedRequests, fallbackLoadReading, routeAwsDimensions, shedStatusClasses } from '../core/metrics/class-serving';
import { type ServingLoadBalancer } from '../core/metrics/load-balancer';

/** What the dashboard and the alarms are built from. */
export interface ServiceObservabilityProps {
  /**
   * The serving construct (SageMakerCapacityEndpoint, EksInferenceService, or anything implementing
   * IInferenceServing): its service name, routing facts and the signals its platform produces.
   */
  readonly serving: IInferenceServing;
  /**
   * Period of every metric on the dashboard and of every alarm: a whole number of minutes, at most one day (every metric
   * they read is published once a minute). Alarm default durations are rounded up to whole periods.
   * @default Duration.minutes(1) - the reconciler's tick
   */
  readonly period?: Duration;
}

/** A class with where its AWS serving metrics live. */
export interface ObservedClass {
  readonly facts: RoutedClassFacts;
  /** Index in preference order; also the suffix of its math-expression ids. */
  readonly index: number;
  /** Dimensions of its AWS-owned request and latency metrics. */
  readonly awsDimensions: Record<string, string>;
}

/**
 * A routed class: what one weight of the router points at and what the reconciler decides on. On an ALB it is one
 * capacity class (its target group); on SageMaker it is one production variant, whose instance pools are classes.
 * The reconciler's per-weight metrics (RouteWeight, DesiredReplicas, ReadyReplicas, HealthyTargets) carry its name in the
 * `CapacityClass` dimension.
 */
export interface ObservedRoute {
  readonly name: string;
  /** Index in preference order; also the suffix of its math-expression ids. */
  readonly index: number;
  /** Its classes in preference order (one on an ALB; the variant's pools on SageMaker). */
  readonly classes: readonly ObservedClass[];
  /**
   * Dimensions of its AWS-owned request metrics: those its classes share (`routeAwsDimensions`), on SageMaker the
   * variant-level series [EndpointName, VariantName] whatever its pools.
   */
  readonly awsDimensions: Record<string, string>;
  /** The best rank among its classes. */
  readonly preferenceRank: number;
  /**
   * Most replicas (instances) it may run, as the reconciler bounds it (`Route.maxReplicas`): its classes' quotas added
   * up, and on SageMaker no more than the variant's `maxInstances` where the facts name it, the MaxCapacity of its
   * scalable target (lib/sagemaker/endpoint.ts `addVariant`, `routingFacts`).
   */
  readonly maxReplicas: number;
}

/** Math-expression ids must start with a lower-case letter; class names may hold '-', so ids use indices. */
/**
 * A metric-math percentage of requests, 0 in a period with fewer than `minRequests` (so a handful of requests cannot
 * breach a share alarm); `part` and `total` are expressions, each parenthesized if compound.
 */
export function percentOfRequests(part: string, total: string, minRequests: number): string {
  return `IF(${total} >= ${minRequests}, 100 * ${part} / ${total}, 0)`;
}

export function metricId(prefix: string, index: number): string {
  return `${prefix}${index}`;
}

/**
 * Builds every CloudWatch metric of one service from the metric contract: the library's own metrics by service and
 * class, the AWS-owned serving metrics of each class (SageMaker variant / instance pool, or ALB target group), and
 * the metric-math derived series (shares, cost per 1M tokens) the dashboard and the alarms share.
 */
export class ServiceMetrics {
  /** Classes in preference order (rank, then declaration order). */
  readonly classes: readonly ObservedClass[];
  /** The classes with the lowest preference rank. */
  readonly preferred: readonly ObservedClass[];
  /** Routed classes in preference order (by their best class). */
  readonly routes: readonly ObservedRoute[];
  readonly period: Duration;
  readonly service: string;
  readonly facts: RoutingFacts;

  constructor(
    readonly serving: ServingDescription,
    period: Duration = Duration.seconds(METRIC_PERIOD_SECONDS),
  ) {
    this.period = period;
    this.service = serving.service;
    this.facts = serving.routing;
    const facts = this.facts;
    const observed = observedClasses(facts);
    this.classes = [...observed].sort((a, b) => a.facts.preferenceRank - b.facts.preferenceRank).map((c, index) => ({ ...c, index }));
    const best = Math.min(...this.classes.map((c) => c.facts.preferenceRank));
    this.preferred = this.classes.filter((c) => c.facts.preferenceRank === best);
    const byName = new Map(this.classes.map((c) => [c.facts.name, c]));
    this.routes = routeMembers(facts)
      .map(({ name, classNames, maxReplicas }) => {
        const classes = classNames.map((n) => byName.get(n)!).sort((a, b) => a.index - b.index);
        return { name, classes, awsDimensions: routeAwsDimensions(classes), preferenceRank: classes[0].facts.preferenceRank, maxReplicas };
      })
      .sort((a, b) => a.classes[0].index - b.classes[0].index)
      .map((r, index) => ({ ...r, index }));
  }

  // ----- the library's own metrics -------------------------------------------------------------------------------

  /** A contract metric; `dims` must be one of its dimension sets (checked by the contract). */
  own(spec: MetricSpec, dims: Record<string, string>, options: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: spec.namespace,
      metricName: spec.name,
      dimensionsMap: dimensionMap(spec, dims),
      statistic: spec.statistic,
      period: this.period,
      ...options,
    });
  }

  perClass(spec: MetricSpec, cls: ObservedClass, options: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.own(spec, classDimensions(this.service, cls.facts.name), { label: cls.facts.name, ...options });
  }

  /** A reconciler metric of one routed class (RouteWeight, DesiredReplicas, ReadyReplicas, HealthyTargets). */
  perRoute(spec: MetricSpec, route: ObservedRoute, options: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.own(spec, classDimensions(this.service, route.name), { label: route.name, ...options });
  }

  perService(spec: MetricSpec, options: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.own(spec, serviceDimensions(this.service), options);
  }

  capacityAttempts(cls: ObservedClass, outcome: CapacityOutcome): cloudwatch.Metric {
    return this.own(Metrics.capacityAttempts, { ...classDimensions(this.service, cls.facts.name), [Dim.OUTCOME]: outcome }, {
      label: `${cls.facts.name} ${outcome}`,
    });
  }

  admissions(cls: ObservedClass, decision: AdmissionDecision): cloudwatch.Metric {
    return this.own(Metrics.admissions, { ...classDimensions(this.service, cls.facts.name), [Dim.DECISION]: decision }, {
      label: `${cls.facts.name} ${decision}`,
    });
  }

  /** Service-wide admissions of one decision (the contract's [Service, Decision] rollup). */
  serviceAdmissions(decision: AdmissionDecision): cloudwatch.Metric {
    return this.own(Metrics.admissions, { ...serviceDimensions(this.service), [Dim.DECISION]: decision }, { label: decision });
  }

  /** The signals the platform produces for a class (none when it produces none). */
  producers(cls: ObservedClass): ClassSignalProducers {
    return this.serving.signals.classes[cls.facts.name] ?? {};
  }

  private produced(source: MetricStatSource, label: string): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: source.namespace,
      metricName: source.metricName,
      dimensionsMap: { ...source.dimensions },
      statistic: source.stat,
      period: this.period,
      label,
    });
  }

  /**
   * Capacity errors of a class, from the platform's producer (EKS: the Karpenter log metric filter of its NodePool).
   * Undefined when the platform produces none (SageMaker: shortages show as desired > ready replicas).
   */
  capacityErrors(cls: ObservedClass): cloudwatch.Metric | undefined {
    const source = this.producers(cls).capacityErrors;
    return source ? this.produced(source, `${cls.facts.name} capacity errors`) : undefined;
  }

  /** Requests waiting in the engine queue of a class, where the model server's metrics are scraped. */
  requestsWaiting(cls: ObservedClass): cloudwatch.Metric | undefined {
    const source = this.producers(cls).requestsWaiting;
    return source ? this.produced(source, cls.facts.name) : undefined;
  }

  /**
   * Output tokens of a class per period: what the model server counted where its metrics are scraped every period or
   * more often, else requests x the contract's mean output tokens. A counter scraped less often than the period
   * (`generatedTokensIntervalSeconds`) leaves some periods without tokens, and a share over classes, or an alarm that
   * needs every period, would swing between 0% and 100%; one expression reads all its metrics at one period, so it
   * cannot read that counter over a longer one as the reconciler does (`counterPerSecond`): it uses the requests,
   * which every platform counts each period.
   */
  tokens(cls: ObservedClass, idPrefix = 'tk'): cloudwatch.IMetric {
    const producers = this.producers(cls);
    const source = producers.generatedTokens;
    if (source && (producers.generatedTokensIntervalSeconds ?? 0) <= this.period.toSeconds()) return this.produced(source, cls.facts.name);
    return this.requestTokens(this.requests(cls), metricId(`${idPrefix}r`, cls.index), cls.facts.name);
  }

  /**
   * Output tokens of a routed class per period: its only class's (`tokens`); with several classes (a SageMaker
   * variant's instance pools, which may run different engines: the reconciler reads such a variant the same way), its
   * requests x the contract's mean output tokens.
   */
  routeTokens(route: ObservedRoute, idPrefix = 'rt'): cloudwatch.IMetric {
    if (route.classes.length === 1) return this.tokens(route.classes[0], idPrefix);
    return this.requestTokens(this.routeRequests(route), metricId(`${idPrefix}v`, route.index), route.name);
  }

  /** Requests x the contract's mean output tokens, the requests under `id`. */
  private requestTokens(requests: cloudwatch.IMetric, id: string, name: string): cloudwatch.MathExpression {
    return new cloudwatch.MathExpression({
      expression: `${id} * ${this.serving.tokensPerRequest}`,
      usingMetrics: { [id]: requests },
      label: `${name} (requests x ${this.serving.tokensPerRequest} tokens)`,
      period: this.period,
    });
  }

  /** Requests the class answered with a server error (SageMaker Invocation5XXErrors, ALB HTTPCode_Target_5XX_Count). */
  serverErrors(cls: ObservedClass): cloudwatch.Metric {
    const { namespace, serverErrors: metricName } = routingTarget(this.facts).servingMetrics;
    return new cloudwatch.Metric({ namespace, metricName, dimensionsMap: cls.awsDimensions, statistic: 'Sum', period: this.period, label: cls.facts.name });
  }

  /**
   * Requests the class's server shed to protect the deadline: its engine rejects what its admission limit (sized from
   * the deadline) cannot serve in time, with its status (TGI 429, vLLM / DJL / Triton 503), which the platform counts in
   * its 4XX or 5XX metric (SageMaker Invocation4XX/5XXErrors, ALB HTTPCode_Target_4XX/5XX_Count). Other errors of the
   * same status class count too: the rate errs high, never low.
   */
  shedRequests(cls: ObservedClass): cloudwatch.Metric {
    return this.produced(classShedRequests(this.facts, cls, this.producers(cls).rejectionStatus === '4xx' ? '4xx' : '5xx'), `${cls.facts.name} shed`);
  }

  /**
   * Requests the routed class's servers shed (as `shedRequests`), on its own series (`ObservedRoute.awsDimensions`):
   * one metric per status class its classes shed in (`shedStatusClasses`), so a SageMaker variant whose pools shed with
   * 429 and 503 reads both.
   */
  routeShedRequests(route: ObservedRoute): Array<{ readonly status: '4xx' | '5xx'; readonly metric: cloudwatch.Metric }> {
    const statuses = shedStatusClasses(route.classes.map((c) => this.producers(c).rejectionStatus));
    return statuses.map((status) => ({
      status,
      metric: this.produced(classShedRequests(this.facts, route, status), `${route.name} shed${statuses.length > 1 ? ` (${status.toUpperCase()})` : ''}`),
    }));
  }

  /** Requests a class turned away (every decision but `admitted`), summed. */
  rejections(cls: ObservedClass): cloudwatch.MathExpression {
    const using = Object.fromEntries(ADMISSION_REJECTIONS.map((d, i) => [`${metricId('rj', cls.index)}_${i}`, this.admissions(cls, d)]));
    return new cloudwatch.MathExpression({
      expression: Object.keys(using).join(' + '),
      usingMetrics: using,
      label: `${cls.facts.name} rejected`,
      period: this.period,
    });
  }

  // ----- AWS-owned serving metrics -------------------------------------------------------------------------------

  /** Requests that reached the class: SageMaker Invocations or ALB RequestCount, Sum. */
  requests(cls: ObservedClass): cloudwatch.Metric {
    return this.produced(classRequests(this.facts, cls), cls.facts.name);
  }

  /** Requests that reached the routed class, on its own series (`ObservedRoute.awsDimensions`). */
  routeRequests(route: ObservedRoute): cloudwatch.Metric {
    return this.produced(classRequests(this.facts, route), route.name);
  }

  /** Latency of the class at `statistic` (e.g. 'p95') in milliseconds: SageMaker ModelLatency or ALB TargetResponseTime. */
  latencyMs(cls: ObservedClass, statistic: string, id: string): cloudwatch.MathExpression {
    const { namespace, latency: metricName, latencyToMs: factor } = routingTarget(this.facts).servingMetrics;
    const raw = new cloudwatch.Metric({ namespace, metricName, dimensionsMap: cls.awsDimensions, statistic, period: this.period });
    return new cloudwatch.MathExpression({
      expression: `${id}_raw * ${factor}`,
      usingMetrics: { [`${id}_raw`]: raw },
      label: `${cls.facts.name} ${statistic}`,
      period: this.period,
    });
  }

  /** The serving's load balancer (EKS: its ALB), whose own 5XX answers are in no class's metrics; undefined on SageMaker. */
  get loadBalancer(): ServingLoadBalancer | undefined {
    return routingTarget(this.facts).loadBalancer(this.facts);
  }

  /**
   * The 5XX the load balancer answered itself (HTTPCode_ELB_5XX_Count, Sum) as a share (%) of everything it answered
   * or sent to a target (its RequestCount + those 5XX; a 502 or 504 after a target was chosen is in both), 0 in a
   * period with fewer than `minRequests`; undefined without a load balancer. FILL: the 5XX count is published only in
   * a period that has one, the request count only with traffic.
   */
  loadBalancerErrorShare(minRequests: number, idPrefix = 'lb'): cloudwatch.MathExpression | undefined {
    const lb = this.loadBalancer;
    if (!lb) return undefined;
    const e = `${idPrefix}e`;
    const r = `${idPrefix}r`;
    const total = `(FILL(${r}, 0) + FILL(${e}, 0))`;
    return new cloudwatch.MathExpression({
      expression: percentOfRequests(`FILL(${e}, 0)`, total, minRequests),
      usingMetrics: { [e]: this.produced(lb.elb5xx, 'load balancer 5XX'), [r]: this.produced(lb.requests, 'load balancer requests') },
      label: `5XX answered by the load balancer itself (% of its requests)${lb.sharedListener ? ', every service on it' : ''}`,
      period: this.period,
    });
  }

  /** The load balancer's own 5XX answers per period (HTTPCode_ELB_5XX_Count, Sum); undefined without a load balancer. */
  loadBalancerErrors(): cloudwatch.Metric | undefined {
    const lb = this.loadBalancer;
    return lb ? this.produced(lb.elb5xx, `${lb.fullName} 5XX (its own)`) : undefined;
  }

  // ----- derived series --------------------------------------------------------------------------------------------

  /** Each class's share (%) of the service total of `metricOf`, one expression per class. */
  shares(prefix: string, metricOf: (cls: ObservedClass) => cloudwatch.IMetric): cloudwatch.MathExpression[] {
    const using = Object.fromEntries(this.classes.map((c) => [metricId(prefix, c.index), metricOf(c)]));
    const total = `SUM([${Object.keys(using).join(', ')}])`;
    return this.classes.map((c) => new cloudwatch.MathExpression({
      expression: `100 * ${metricId(prefix, c.index)} / ${total}`,
      usingMetrics: using,
      label: c.facts.name,
      period: this.period,
    }));
  }

  /** The classes that are not preferred (rank above the best). */
  get fallback(): readonly ObservedClass[] {
    return this.classes.filter((c) => !this.preferred.includes(c));
  }

  /**
   * The fallback classes the fallback share reads on their own series, FILLed (`fallbackShare`): the lower-priority
   * instance pools of a routed class that holds a preferred one. Where there are any, an alarm on the share FILLs.
   */
  get fallbackPools(): readonly ObservedClass[] {
    const best = this.preferred[0].facts.preferenceRank;
    return this.routes.flatMap((r) => fallbackLoadReading(r.classes, best).pools);
  }

  /**
   * The observed share (%) of the load served by non-preferred classes: by generated tokens (model-server metric) or
   * by requests (SageMaker Invocations / ALB RequestCount). No datapoint in a period without traffic.
   *
   * The total is every routed class's own series, `<idPrefix><route>`, and so is the fallback load of a route with no
   * preferred class. The fallback pools of a route that holds a preferred one (a SageMaker variant's lower-priority
   * instance pools) are read on their per-InstanceType series, `<idPrefix>p<class>`, FILLed with 0: SageMaker documents
   * those series for pools but a deployment may lack them, and a missing one must leave its load out (the share reads
   * low) rather than leave the numerator without the variant it is divided by (100% whenever a fallback variant serves).
   */
  fallbackShare(basis: 'tokens' | 'requests', idPrefix: string): cloudwatch.MathExpression {
    const best = this.preferred[0].facts.preferenceRank;
    const using: Record<string, cloudwatch.IMetric> = {};
    const totals: string[] = [];
    const fallbackRoutes: string[] = [];
    const fallbackPools: string[] = [];
    for (const route of this.routes) {
      const id = metricId(idPrefix, route.index);
      using[id] = basis === 'tokens' ? this.routeTokens(route, `${idPrefix}t`) : this.routeRequests(route);
      totals.push(id);
      const { whole, pools } = fallbackLoadReading(route.classes, best);
      if (whole) fallbackRoutes.push(id);
      for (const c of pools) {
        const pool = metricId(`${idPrefix}p`, c.index);
        using[pool] = basis === 'tokens' ? this.requestTokens(this.requests(c), metricId(`${idPrefix}pr`, c.index), c.facts.name) : this.requests(c);
        fallbackPools.push(`FILL(${pool}, 0)`);
      }
    }
    const fallback = [...(fallbackRoutes.length > 0 ? [`SUM([${fallbackRoutes.join(', ')}])`] : []), ...fallbackPools];
    const total = `SUM([${totals.join(', ')}])`;
    return new cloudwatch.MathExpression({
      // The FallbackShare alarm watches this, so its SUMs are of arrays: "The SUM of an array of time series returns a
      // single time series"; the guide advises against SUM in alarms only "if you want the function to return a scalar.
      // For example, SUM(m1)", which acts differently when an alarm asks for more datapoints than it evaluates
      // (using-metric-math.html, "SUM": awsdocs/amazon-cloudwatch-user-guide@b355497 doc_source/using-metric-math.md:132).
      // Arithmetic reads a missing value as 0 and drops a datapoint that divides by zero (same file:60), so a period with
      // no total has no datapoint, whatever the FILLed pools read.
      expression: fallback.length === 0 ? `0 * ${total}`
        : `100 * ${fallback.length > 1 ? `(${fallback.join(' + ')})` : fallback[0]} / ${total}`,
      usingMetrics: using,
      label: `observed, by ${basis}`,
      period: this.period,
    });
  }

  /**
   * Output tokens per second of the class: tokens over the period / the period's seconds. The seconds are `PERIOD()` of
   * a metric of the same graph, not `this.period`: the dashboard adapts every graph's period to its time range
   * (`PeriodOverride.AUTO`), and a constant would misstate the rate on any other period. PERIOD takes a metric, not
   * an expression (CloudWatch User Guide, using-metric-math.html, "PERIOD"), and the tokens may be one (requests x
   * mean), so the class's requests, which the platform counts whenever there are tokens, give the period.
   */
  classTokensPerSecond(cls: ObservedClass): cloudwatch.MathExpression {
    const id = metricId('gt', cls.index);
    const probe = metricId('gp', cls.index);
    return new cloudwatch.MathExpression({
      expression: `${id} / PERIOD(${probe})`,
      usingMetrics: { [id]: this.tokens(cls, 'gx'), [probe]: this.requests(cls) },
      label: cls.facts.name,
      period: this.period,
    });
  }

  /** Output tokens per second per ready replica of the class (compare with its envelope). */
  tokensPerReadyReplica(cls: ObservedClass): cloudwatch.MathExpression {
    const t = metricId('pt', cls.index);
    const r = metricId('pr', cls.index);
    return new cloudwatch.MathExpression({
      expression: `${t} / PERIOD(${r}) / ${r}`,
      usingMetrics: { [t]: this.tokens(cls, 'px'), [r]: this.perClass(Metrics.readyReplicas, cls, { statistic: 'Average' }) },
      label: cls.facts.name,
      period: this.period,
    });
  }

  /**
   * USD per 1M output tokens the class actually served: what its ready replicas cost over the period divided by the
   * tokens it generated in that period. No datapoint when the class generated no tokens.
   */
  costPerMillionTokens(cls: ObservedClass): cloudwatch.MathExpression {
    const r = metricId('cr', cls.index);
    const t = metricId('ct', cls.index);
    return new cloudwatch.MathExpression({
      expression: `${usd(cls.facts.usdPerReplicaHour)} * ${r} * PERIOD(${r}) / 3600 / ${t} * 1000000`,
      usingMetrics: {
        [r]: this.perClass(Metrics.readyReplicas, cls, { statistic: 'Average' }),
        [t]: this.tokens(cls, 'cx'),
      },
      label: `${cls.facts.name} USD / 1M tokens`,
      period: this.period,
    });
  }

  /**
   * USD per 1M output tokens of the whole service: every class's ready replicas (including the warm standby of
   * fallback classes that serve little or nothing) over every token served.
   */
  serviceCostPerMillionTokens(): cloudwatch.MathExpression {
    const using: Record<string, cloudwatch.IMetric> = {};
    const dollars: string[] = [];
    const tokens: string[] = [];
    for (const c of this.classes) {
      const r = metricId('sr', c.index);
      const t = metricId('st', c.index);
      using[r] = this.perClass(Metrics.readyReplicas, c, { statistic: 'Average' });
      using[t] = this.tokens(c, 'sx');
      dollars.push(`${usd(c.facts.usdPerReplicaHour)} * ${r}`);
      tokens.push(t);
    }
    return new cloudwatch.MathExpression({
      expression: `(${dollars.join(' + ')}) * PERIOD(${metricId('sr', this.classes[0].index)}) / 3600 / (${tokens.join(' + ')}) * 1000000`,
      usingMetrics: using,
      label: 'service USD / 1M tokens (incl. warm standby)',
      period: this.period,
    });
  }
}

/** Price literal for metric math: finite, no exponent notation. */
function usd(value: number): string {
  return Number(value.toFixed(6)).toString();
}

/** The routed classes of the facts, the names of the capacity classes behind each and the most replicas each may run. */
export function routeMembers(facts: RoutingFacts): Array<{ name: string; classNames: string[]; maxReplicas: number }> {
  return routingTarget(facts).routes(facts).map((r) => ({ name: r.name, classNames: r.classes.map((c) => c.name), maxReplicas: r.maxReplicas }));
}

/** The classes of the facts with the dimensions of their AWS serving metrics, in declaration order. */
export function observedClasses(facts: RoutingFacts): Array<Omit<ObservedClass, 'index'>> {
  return routingTarget(facts).observedClasses(facts);
}

/**
 * Every problem of the shared props: the serving prop itself (missing, or the props of the old API), the serving
 * description (the one rule set of lib/core/validation/serving.ts) and the period. A serving construct whose own input
 * is invalid or incomplete throws its own error from `servingDescription()`: a control construct never reports the
 * facts an invalid serving would produce in place of the serving's problems.
 */
export function serviceObservabilityProblems(props: ServiceObservabilityProps): Problem[] {
  const serving = servingPropProblem(props);
  if (serving) return [serving];
  const c = new Checker(OBSERVABILITY_RULES);
  const period = durationSeconds(props.period);
  if (period !== undefined) c.cross('period', period);
  return [...servingDescriptionProblems(props.serving.servingDescription()), ...c.problems];
}
