import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import * as ts from 'typescript';
import { ALL_METRIC_NAMES, AwsMetrics, METRIC_NAMESPACE } from '../../lib/core/metrics/contract';

/**
 * Every metric name and namespace used anywhere comes from the contract module: a string literal in lib/ or lambda/
 * (outside lib/core/metrics/contract.ts) that is, or contains as a whole word, a contract metric name or namespace fails.
 */

const ROOT = resolve(__dirname, '..', '..');
const CONTRACT_FILE = join('lib', 'core', 'metrics', 'contract.ts');
const NAMES = new Set<string>(ALL_METRIC_NAMES);
const NAMESPACES: readonly string[] = [METRIC_NAMESPACE, ...Object.values(AwsMetrics).map((g) => g.namespace)];

function sourceFiles(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return []; // lambda/ may not exist yet
  }
  return entries.flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** The text of every string literal and template chunk of a TypeScript source. */
export function stringLiterals(fileName: string, text: string): Array<{ line: number; value: string }> {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true);
  const found: Array<{ line: number; value: string }> = [];
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node)
      || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
      found.push({ line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1, value: node.text });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

/**
 * Contract names spelt by hand in a source, as `file:line 'name'`: a metric name as the whole literal or as a word in
 * it (metric-math and SEARCH expressions), a namespace as the whole literal or as a SEARCH schema (`{namespace,`).
 * A namespace inside prose is not flagged: `/aws/sagemaker/Endpoints` is also the prefix of the endpoints' log groups.
 */
export function handSpeltNames(fileName: string, text: string): string[] {
  return stringLiterals(fileName, text).flatMap(({ line, value }) => {
    const words = value === '' ? [] : [value, ...value.split(/[^A-Za-z0-9_]+/)];
    const found = [
      ...words.filter((w) => NAMES.has(w)),
      ...NAMESPACES.filter((ns) => value === ns || value.includes(`{${ns},`)),
    ];
    return [...new Set(found)].map((w) => `${fileName}:${line} '${w}'`);
  });
}

describe('metric names come only from the contract', () => {
  test('no source in lib/ or lambda/ spells a contract metric name or namespace', () => {
    const files = [...sourceFiles(join(ROOT, 'lib')), ...sourceFiles(join(ROOT, 'lambda'))]
      .map((f) => relative(ROOT, f))
      .filter((f) => f !== CONTRACT_FILE);
    expect(files.length).toBeGreaterThan(5);
    expect(files).toContain(join('lib', 'control', 'dashboard.ts'));
    const offences = files.flatMap((f) => handSpeltNames(f, readFileSync(join(ROOT, f), 'utf8')));
    expect(offences).toEqual([]);
  });

  test('the scan catches a name in a quoted string, a template literal and a metric-math expression', () => {
    const src = [
      "const a = 'QueueWait';",
      'const b = `FallbackShareTokens`;',
      'const c = `SEARCH(\'{CapacityAwareInference,Service} MetricName="Decisions"\', \'Sum\', ${period})`;',
      'const d = { metricName: "HTTPCode_Target_5XX_Count", namespace: "AWS/ApplicationELB" };',
    ].join('\n');
    expect(handSpeltNames('x.ts', src)).toEqual([
      "x.ts:1 'QueueWait'",
      "x.ts:2 'FallbackShareTokens'",
      "x.ts:3 'Decisions'",
      "x.ts:3 'CapacityAwareInference'",
      "x.ts:4 'HTTPCode_Target_5XX_Count'",
      "x.ts:4 'AWS/ApplicationELB'",
    ]);
  });

  test('the scan ignores comments, identifiers, and words that only look like a name', () => {
    const src = [
      '// QueueWait is read from Metrics.queueWait',
      'const queueWait = Metrics.queueWait.name;',
      "const msg = 'Runbook: FallbackShare and DeadlineExhaustion sections';",
      "const why = 'cloudwatch:PutMetricData is bound to the /aws/sagemaker/Endpoints namespace';",
    ].join('\n');
    expect(handSpeltNames('y.ts', src)).toEqual([]);
  });
});
