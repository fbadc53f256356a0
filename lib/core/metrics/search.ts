/**
 * CloudWatch `SEARCH` expressions of the form the library writes, and the metric they read:
 * `SEARCH('{Namespace,Dim,...} MetricName="X" Dim="v" ...', 'stat', period)`. The builder and the parser live together so
 * what verify reads back is what the reconciler queries. Syntax: "CloudWatch search expression syntax",
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/search-expression-syntax.html (the `{...}` metric schema
 * matches only metrics with exactly those dimensions; a quoted value is an exact match).
 *
 * Pure TypeScript (no aws-cdk-lib).
 */

/** One `SEARCH` call: the metric schema, the terms it pins, and the statistic and period it reads them at. */
export interface SearchSpec {
  /** The schema's namespace, e.g. `AWS/SageMaker`. */
  readonly namespace: string;
  /** The schema's dimension names, in the order written: a matched series carries exactly these. */
  readonly dimensionNames: readonly string[];
  readonly metricName: string;
  /** Dimension values matched exactly, written in this order after `MetricName`; the other schema dimensions are searched over. */
  readonly pinned: Readonly<Record<string, string>>;
  /** `Sum`, `Average`, a percentile such as `p95`, ... */
  readonly stat: string;
  /**
   * The period written into the call; without it the graph's period applies (the call's third argument is optional:
   * the syntax page's form is `SEARCH('{...} SearchTerm', 'Statistic')`).
   */
  readonly periodSeconds?: number;
}

/** The metric a `SEARCH` reads: the schema's dimension names, each with its pinned value or `undefined` (any value). */
export interface SearchedMetric {
  readonly namespace: string;
  readonly name: string;
  readonly dimensions: Readonly<Record<string, string | undefined>>;
}

/** A search term's quoted value: backslashes and double quotes escaped. */
function quote(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

function unquote(value: string): string {
  return value.replace(/\\(["\\])/g, '$1');
}

/**
 * The expression of one `SEARCH` call, e.g.
 * `SEARCH('{AWS/SageMaker,EndpointName,VariantName} MetricName="ModelLatency" EndpointName="e" VariantName="v"', 'p95', 60)`.
 */
export function searchExpression(spec: SearchSpec): string {
  const terms = [['MetricName', spec.metricName], ...Object.entries(spec.pinned)].map(([k, v]) => `${k}=${quote(v)}`);
  const period = spec.periodSeconds === undefined ? '' : `, ${spec.periodSeconds}`;
  return `SEARCH('{${[spec.namespace, ...spec.dimensionNames].join(',')}} ${terms.join(' ')}', '${spec.stat}'${period})`;
}

// A SEARCH call as searchExpression writes it: the schema, then only Name="value" terms (escapes inside the quotes).
const TERM = /([A-Za-z]\w*)="((?:[^"\\]|\\.)*)"/g;
const CALL = String.raw`SEARCH\('\{([^}]*)\}((?:\s*[A-Za-z]\w*="(?:[^"\\]|\\.)*")*)\s*',\s*'[^']*'\s*(?:,\s*\d+\s*)?\)`;

function searched(schema: string, terms: string): SearchedMetric | undefined {
  const [namespace, ...names] = schema.split(',').map((s) => s.trim().replace(/^"(.*)"$/, '$1'));
  const values = new Map([...terms.matchAll(TERM)].map((t) => [t[1], unquote(t[2])]));
  const name = values.get('MetricName');
  if (!name) return undefined;
  return { namespace, name, dimensions: Object.fromEntries(names.map((n) => [n, values.get(n)])) };
}

/** The metric an expression that is one `SEARCH` call reads; undefined for any other expression. */
export function parseSearch(expression: string): SearchedMetric | undefined {
  const m = new RegExp(`^\\s*${CALL}\\s*$`).exec(expression);
  return m ? searched(m[1], m[2]) : undefined;
}

/** The metrics of every `SEARCH` call inside a metric-math expression (e.g. `MAX([MAX(SEARCH(...)), MAX(SEARCH(...))])`), in order. */
export function searchesIn(expression: string): SearchedMetric[] {
  return [...expression.matchAll(new RegExp(CALL, 'g'))].flatMap((m) => searched(m[1], m[2]) ?? []);
}

/**
 * The largest value of any series any of the `SEARCH` calls finds, per period: `MAX([MAX(SEARCH(...)), MAX(SEARCH(...))])`.
 * A search that finds no series leaves the others' reading, so each is the others' fallback. "The MAX value of an array
 * of time series returns a single time series" (CloudWatch metric math,
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/using-metric-math.html).
 */
export function maxOfSearches(searches: readonly string[]): string {
  return `MAX([${searches.map((s) => `MAX(${s})`).join(', ')}])`;
}

/** The metrics of an expression `maxOfSearches` wrote, in order (each the others' fallback); undefined for any other expression. */
export function parseMaxOfSearches(expression: string): SearchedMetric[] | undefined {
  const operand = String.raw`MAX\(${CALL}\)`;
  if (!new RegExp(String.raw`^\s*MAX\(\[\s*${operand}(?:\s*,\s*${operand})*\s*\]\)\s*$`).test(expression)) return undefined;
  const metrics = [...expression.matchAll(new RegExp(CALL, 'g'))].map((m) => searched(m[1], m[2]));
  return metrics.every((m): m is SearchedMetric => m !== undefined) ? metrics : undefined;
}
