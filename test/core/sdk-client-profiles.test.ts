/**
 * Every AWS SDK client the package builds (lambda/, bin/, lib/) takes its configuration from one profile of
 * lib/core/sdk-client-profiles.ts, read from the sources' syntax trees: a client built with options of its own
 * (a region alone, as sign-model's were) has no timeout and waits for ever on an endpoint that never answers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as ts from 'typescript';
import {
  CLI_HTTP_TIMEOUTS, cliClientConfig, LAMBDA_CLIENT_OPTIONS, LAMBDA_HTTP_TIMEOUTS, requestHandlerOptions,
} from '../../lib/core/sdk-client-profiles';

const ROOT = join(__dirname, '..', '..');
const PROFILES_MODULE = /(^|\/)lib\/core\/sdk-client-profiles$/;
/** The profiles a client may be built from: the Lambda functions' options, the commands' configuration. */
const PROFILE_NAMES = new Set(['LAMBDA_CLIENT_OPTIONS', 'cliClientConfig']);
/** Options that would replace a profile's bounds where a construction spreads it. */
const PROFILE_KEYS = new Set(['requestHandler', 'maxAttempts']);

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

interface Construction { readonly at: string; readonly client: string; readonly problem?: string }

/** Each `new <X>Client(...)` of an @aws-sdk/client-* import in `file`, and what is wrong with its options. */
function constructions(file: string): Construction[] {
  const sf = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const sdkClients = new Set<string>();
  const profiles = new Set<string>();
  for (const statement of sf.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const from = statement.moduleSpecifier.text;
    const bindings = statement.importClause?.namedBindings;
    if (!bindings || !ts.isNamedImports(bindings)) continue;
    for (const element of bindings.elements) {
      if (/^@aws-sdk\/client-/.test(from) && element.name.text.endsWith('Client')) sdkClients.add(element.name.text);
      if (PROFILES_MODULE.test(from.replace(/\.ts$/, '')) && PROFILE_NAMES.has(element.name.text)) profiles.add(element.name.text);
    }
  }
  const variables = new Map<string, ts.Expression>();
  const found: Construction[] = [];
  const fromProfile = (e: ts.Expression | undefined, seen: ReadonlySet<string> = new Set()): string | undefined => {
    if (!e) return 'no options';
    if (ts.isIdentifier(e)) {
      if (profiles.has(e.text)) return undefined;
      const init = variables.get(e.text);
      if (init && !seen.has(e.text)) return fromProfile(init, new Set([...seen, e.text]));
      return `${e.text} is not a profile of lib/core/sdk-client-profiles.ts`;
    }
    if (ts.isCallExpression(e) && ts.isIdentifier(e.expression) && profiles.has(e.expression.text)) return undefined;
    if (ts.isObjectLiteralExpression(e)) {
      const spreads = e.properties.filter(ts.isSpreadAssignment);
      if (!spreads.some((s) => fromProfile(s.expression, seen) === undefined)) return `{ ${e.getText(sf).slice(2, 60)}... } spreads no profile`;
      const override = e.properties.find((p) => !ts.isSpreadAssignment(p) && p.name && ts.isIdentifier(p.name) && PROFILE_KEYS.has(p.name.text));
      return override ? `${override.name!.getText(sf)} replaces the profile's` : undefined;
    }
    return `${e.getText(sf)} is not a profile of lib/core/sdk-client-profiles.ts`;
  };
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) variables.set(node.name.text, node.initializer);
    // `const { CloudWatchClient } = await import('@aws-sdk/client-cloudwatch')`: the reconciler loads its clients lazily.
    if (ts.isVariableDeclaration(node) && ts.isObjectBindingPattern(node.name) && node.initializer) {
      const call = ts.isAwaitExpression(node.initializer) ? node.initializer.expression : node.initializer;
      const from = ts.isCallExpression(call) && call.expression.kind === ts.SyntaxKind.ImportKeyword ? call.arguments[0] : undefined;
      if (from && ts.isStringLiteral(from) && /^@aws-sdk\/client-/.test(from.text)) {
        for (const element of node.name.elements) {
          if (ts.isIdentifier(element.name) && element.name.text.endsWith('Client')) sdkClients.add(element.name.text);
        }
      }
    }
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && sdkClients.has(node.expression.text)) {
      const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
      const problem = fromProfile(node.arguments?.[0]);
      found.push({ at: `${relative(ROOT, join(ROOT, file))}:${line}`, client: node.expression.text, ...(problem ? { problem } : {}) });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

describe('every AWS SDK client is built from a profile of lib/core/sdk-client-profiles.ts', () => {
  const all = ['lambda', 'bin', 'lib'].flatMap(sources).flatMap(constructions);

  test('none is built with options of its own', () => {
    expect(all.filter((c) => c.problem)).toEqual([]);
  });

  test('the scan sees the clients of both Lambda functions and of every command', () => {
    const files = new Set(all.map((c) => c.at.replace(/:\d+$/, '')));
    for (const file of [
      'lambda/reconciler/index.ts', 'lambda/reconciler/targets/sagemaker.ts', 'lambda/reconciler/targets/alb.ts', 'lambda/artifact-verifier/index.ts',
      'bin/verify.ts', 'bin/game-day.ts', 'bin/sign-model.ts',
    ]) {
      expect(files).toContain(file);
    }
    expect(all.length).toBeGreaterThanOrEqual(25);
  });
});

describe('the profiles', () => {
  test('the Lambda functions\': one SDK attempt, 2 s to connect, 5 s to the headers, a timeout that throws', () => {
    expect(LAMBDA_HTTP_TIMEOUTS).toEqual({ connectionTimeoutMs: 2_000, requestTimeoutMs: 5_000 });
    expect(LAMBDA_CLIENT_OPTIONS).toEqual({
      maxAttempts: 1, requestHandler: { connectionTimeout: 2_000, requestTimeout: 5_000, throwOnRequestTimeout: true },
    });
  });

  test('the commands\': the SDK\'s retries, 5 s to connect, 20 s to the headers and of socket inactivity', () => {
    expect(CLI_HTTP_TIMEOUTS).toEqual({ connectionTimeoutMs: 5_000, requestTimeoutMs: 20_000, socketTimeoutMs: 20_000 });
    expect(cliClientConfig('eu-west-1')).toEqual({ region: 'eu-west-1', requestHandler: requestHandlerOptions(CLI_HTTP_TIMEOUTS) });
    expect(cliClientConfig()).not.toHaveProperty('region');
    expect(cliClientConfig()).not.toHaveProperty('maxAttempts');
  });

  test('the commands\' for a write that may not be sent twice: the same bounds, one attempt (R250)', () => {
    expect(cliClientConfig('eu-west-1', undefined, { singleAttempt: true }))
      .toEqual({ region: 'eu-west-1', requestHandler: requestHandlerOptions(CLI_HTTP_TIMEOUTS), maxAttempts: 1 });
  });
});
