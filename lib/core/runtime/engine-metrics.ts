/**
 * Which Prometheus metrics of each model server become which metric of the contract, and the CloudWatch agent
 * configuration (Prometheus scrape jobs and EMF metric declarations) that publishes them under the contract's names
 * with `Service` and `CapacityClass` dimensions. Pure (no aws-cdk-lib): the EKS observability construct renders it,
 * the signal contract check reads it back from the synthesized add-on configuration.
 *
 * What the classic CloudWatch agent does with a scrape (aws/amazon-cloudwatch-agent plugins/inputs/prometheus):
 * - counters become per-scrape deltas (calculator.go, delta_calculator.go), so `Sum` over a period is what the
 *   server counted in that period, however many replicas report;
 * - histograms and untyped metrics are dropped (metrics_filter.go: "Only Gauge, Counter and Summary are supported"):
 *   vLLM's time-to-first-token and queue-time histograms and TGI's token histograms are lost. Queue depth
 *   (`RequestsWaiting`) stands in for queue time, ALB/SageMaker latency for time to first token, and request counts x
 *   mean tokens for TGI's token counts;
 * - the type is looked up by the metric's name before relabelling (metrics_type_handler.go:157-191), which is how the
 *   contract names can be set with a `__name__` rewrite in `metric_relabel_configs`. For a renamed metric the lookup
 *   that strips `_total` never runs, so a renamed counter keeps its type only when the exposition's TYPE line carries
 *   `_total`: Prometheus text 0.0.4 does, OpenMetrics (which the scrape proposes first by default) does not. Every job
 *   therefore asks for `PrometheusText0.0.4` (facts cloudwatch-agent.behaviour.renamed-counter and
 *   cloudwatch-agent.flag.scrape_protocols): the counters arrive typed whichever way the handler is read.
 */
import { factString } from './facts';
import { Dim, METRIC_NAMESPACE, type MetricSpec, Metrics } from '../metrics/contract';

/** What one engine exposes on its Prometheus endpoint, in contract terms. */
export interface EnginePrometheusMetrics {
  /** Engine name as in `runtime.engine`. */
  readonly engine: string;
  /** Port of `/metrics`. @default - the serving port of the class */
  readonly metricsPort?: number;
  readonly metricsPath: string;
  /** Prometheus metric name -> contract metric. Only gauges and counters (histograms are dropped by the agent). */
  readonly metrics: Readonly<Record<string, MetricSpec>>;
  /** Where the names come from. */
  readonly source: string;
}

export const ENGINE_PROMETHEUS_METRICS: readonly EnginePrometheusMetrics[] = [
  {
    engine: 'vllm',
    metricsPath: '/metrics',
    metrics: {
      'vllm:num_requests_running': Metrics.requestsRunning,
      'vllm:num_requests_waiting': Metrics.requestsWaiting,
      // vllm:gpu_cache_usage_perc is the deprecated name of the same gauge (PR #18354); every supported release (>= the
      // floor, 0.29.0) has the new one. Names and types: facts vllm.metric.*.
      'vllm:kv_cache_usage_perc': Metrics.kvCacheUsage,
      'vllm:generation_tokens_total': Metrics.generatedTokens,
      'vllm:prompt_tokens_total': Metrics.promptTokens,
    },
    source: 'https://docs.vllm.ai/en/latest/design/metrics.html (vllm/v1/metrics/loggers.py); served on the OpenAI API port',
  },
  {
    engine: 'tgi',
    metricsPath: '/metrics',
    // tgi_request_generated_tokens and tgi_request_input_length are histograms: the agent drops them.
    metrics: { tgi_batch_current_size: Metrics.requestsRunning, tgi_queue_size: Metrics.requestsWaiting },
    source: 'https://huggingface.co/docs/text-generation-inference/en/reference/metrics',
  },
  {
    engine: 'triton',
    metricsPort: 8002,
    metricsPath: '/metrics',
    metrics: { nv_inference_pending_request_count: Metrics.requestsWaiting },
    source: 'https://docs.nvidia.com/deeplearning/triton-inference-server/user-guide/docs/user_guide/metrics.html (port 8002)',
  },
];

/** The engine's Prometheus metrics, if the library knows them. */
export function enginePrometheusMetrics(engine: string): EnginePrometheusMetrics | undefined {
  return ENGINE_PROMETHEUS_METRICS.find((e) => e.engine === engine);
}

/** Whether the engine counts the tokens it generates in a metric the agent keeps (a counter, not a histogram). */
export function engineCountsGeneratedTokens(engine: string): boolean {
  return Object.values(enginePrometheusMetrics(engine)?.metrics ?? {}).includes(Metrics.generatedTokens);
}

/** One class's pods to scrape. */
export interface ScrapeTarget {
  readonly service: string;
  readonly className: string;
  readonly namespace: string;
  readonly engine: string;
  /** The serving port of the class's pods. */
  readonly port: number;
  /** Pod label whose value is the class name (set on every serving pod). */
  readonly classLabel: string;
}

/** The serving container of every class pod on EKS, and its one named port (lib/eks/manifests/workload.ts renders both). */
export const SERVING_CONTAINER = 'model-server';
export const SERVING_PORT_NAME = 'http';

/** Prometheus relabel label name of a pod label (Kubernetes SD: non-alphanumerics become '_'). */
function podLabelMeta(label: string): string {
  return `__meta_kubernetes_pod_label_${label.replace(/[^a-zA-Z0-9_]/g, '_')}`;
}

function anchored(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The Prometheus scrape job of one class (undefined when the engine's metrics are unknown). */
export function scrapeJob(t: ScrapeTarget, intervalSeconds: number): Record<string, unknown> | undefined {
  const e = enginePrometheusMetrics(t.engine);
  if (!e) return undefined;
  const port = e.metricsPort ?? t.port;
  return {
    job_name: `cai-${t.service}-${t.className}`,
    scrape_interval: `${intervalSeconds}s`,
    // Prometheus text 0.0.4: its TYPE line names counters with `_total`, so a renamed counter keeps its type.
    scrape_protocols: [factString('cloudwatch-agent.flag.scrape_protocols')],
    metrics_path: e.metricsPath,
    kubernetes_sd_configs: [{ role: 'pod', namespaces: { names: [t.namespace] } }],
    relabel_configs: [
      // Only this class's serving pods, once per pod. Pod discovery makes a target of every container port, and of every
      // container without one (the model-data init container among them: prometheus/prometheus@v3.0.1
      // discovery/kubernetes/pod.go:273-293); the agent keeps each target's original address in a label of its own
      // (amazon-cloudwatch-agent@v1.300070.0 plugins/inputs/prometheus/start.go:335-362), so two targets rewritten to
      // the same address would both be scraped and every datapoint published twice. Keep the serving port alone.
      { source_labels: [podLabelMeta(t.classLabel)], regex: anchored(t.className), action: 'keep' },
      { source_labels: ['__meta_kubernetes_pod_container_name', '__meta_kubernetes_pod_container_port_name'], regex: `${SERVING_CONTAINER};${SERVING_PORT_NAME}`, action: 'keep' },
      { source_labels: ['__meta_kubernetes_pod_phase'], regex: 'Running', action: 'keep' },
      { source_labels: ['__meta_kubernetes_pod_ip'], regex: '(.+)', target_label: '__address__', replacement: `$1:${port}` },
      { target_label: Dim.SERVICE, replacement: t.service, action: 'replace' },
      { target_label: Dim.CLASS, replacement: t.className, action: 'replace' },
    ],
    metric_relabel_configs: [
      { source_labels: ['__name__'], regex: Object.keys(e.metrics).map(anchored).join('|'), action: 'keep' },
      ...Object.entries(e.metrics).map(([from, spec]) => ({
        source_labels: ['__name__'], regex: anchored(from), target_label: '__name__', replacement: spec.name, action: 'replace',
      })),
    ],
  };
}

/**
 * The EMF metric declarations that publish the scraped metrics: one per contract metric, with its dimension sets,
 * selected by the `Service` label so other scrapes of the same agent are not published under our namespace.
 */
export function emfMetricDeclarations(service: string, specs: readonly MetricSpec[]): Array<Record<string, unknown>> {
  const bySets = new Map<string, { dimensions: string[][]; names: string[] }>();
  for (const spec of new Set(specs)) {
    const dimensions = [[...spec.dimensions], ...spec.rollups.map((r) => [...r])];
    const key = JSON.stringify(dimensions);
    const entry = bySets.get(key) ?? { dimensions, names: [] };
    entry.names.push(spec.name);
    bySets.set(key, entry);
  }
  return [...bySets.values()].map(({ dimensions, names }) => ({
    source_labels: [Dim.SERVICE],
    label_matcher: `^${anchored(service)}$`,
    dimensions,
    metric_selectors: names.map((n) => `^${n}$`),
  }));
}

/** The namespace scraped model-server metrics are published in (the contract's own). */
export const SCRAPED_METRIC_NAMESPACE = METRIC_NAMESPACE;
