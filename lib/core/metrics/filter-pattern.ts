/**
 * A re-implementation of the small subset of CloudWatch Logs JSON filter-pattern syntax the library writes, so tests
 * can run its metric filters against real log lines offline. It is NOT CloudWatch's matcher: it covers `{ ... }`
 * patterns with `$.a.b` selectors, `=` / `!=` against double-quoted strings with `*` wildcards, `&&`, `||` and
 * parentheses, and rejects everything else. Syntax per
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/FilterAndPatternSyntax.html (JSON log events section).
 *
 * Semantics chosen where the documentation is silent: a comparison with a missing or non-string field is false
 * (for `!=` too), and `*` matches any run of characters (the library only writes trailing wildcards).
 */

type Node =
  | { readonly kind: 'and' | 'or'; readonly left: Node; readonly right: Node }
  | { readonly kind: 'cmp'; readonly path: readonly string[]; readonly op: '=' | '!='; readonly value: string };

class PatternSyntaxError extends Error {}

function tokenize(src: string): string[] {
  const tokens: string[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) { i++; continue; }
    if (src.startsWith('&&', i) || src.startsWith('||', i) || src.startsWith('!=', i)) { tokens.push(src.slice(i, i + 2)); i += 2; continue; }
    if ('{}()='.includes(c)) { tokens.push(c); i++; continue; }
    if (c === '"') {
      let j = i + 1;
      let out = '';
      while (j < src.length && src[j] !== '"') {
        if (src[j] === '\\') j++;
        out += src[j];
        j++;
      }
      if (j >= src.length) throw new PatternSyntaxError('unterminated string');
      tokens.push(`"${out}`);
      i = j + 1;
      continue;
    }
    const m = /^\$(\.[A-Za-z_][\w-]*)+/.exec(src.slice(i));
    if (!m) throw new PatternSyntaxError(`unsupported syntax at '${src.slice(i, i + 20)}'`);
    tokens.push(m[0]);
    i += m[0].length;
  }
  return tokens;
}

function parse(tokens: string[]): Node {
  let pos = 0;
  const peek = () => tokens[pos];
  const next = () => tokens[pos++];
  const expect = (t: string) => {
    if (next() !== t) throw new PatternSyntaxError(`expected '${t}'`);
  };
  const primary = (): Node => {
    if (peek() === '(') {
      next();
      const inner = or();
      expect(')');
      return inner;
    }
    const selector = next();
    if (!selector?.startsWith('$.')) throw new PatternSyntaxError(`expected a $. selector, got '${selector}'`);
    const op = next();
    if (op !== '=' && op !== '!=') throw new PatternSyntaxError(`unsupported operator '${op}'`);
    const value = next();
    if (!value?.startsWith('"')) throw new PatternSyntaxError('only double-quoted string values are supported');
    return { kind: 'cmp', path: selector.slice(2).split('.'), op, value: value.slice(1) };
  };
  const and = (): Node => {
    let left = primary();
    while (peek() === '&&') { next(); left = { kind: 'and', left, right: primary() }; }
    return left;
  };
  const or = (): Node => {
    let left = and();
    while (peek() === '||') { next(); left = { kind: 'or', left, right: and() }; }
    return left;
  };
  expect('{');
  const root = or();
  expect('}');
  if (pos !== tokens.length) throw new PatternSyntaxError('trailing input after }');
  return root;
}

function glob(pattern: string, value: string): boolean {
  const re = new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return re.test(value);
}

function evaluate(node: Node, event: unknown): boolean {
  if (node.kind !== 'cmp') {
    return node.kind === 'and' ? evaluate(node.left, event) && evaluate(node.right, event) : evaluate(node.left, event) || evaluate(node.right, event);
  }
  let v: unknown = event;
  for (const key of node.path) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined;
  if (typeof v !== 'string') return false;
  return node.op === '=' ? glob(node.value, v) : !glob(node.value, v);
}

/** Problems with a pattern (empty when this subset can evaluate it). */
export function filterPatternProblems(pattern: string): string[] {
  try {
    parse(tokenize(pattern));
    return [];
  } catch (e) {
    return [(e as Error).message];
  }
}

/** Whether one log event (its message text) matches the JSON filter pattern, by this subset's semantics. */
export function matchesFilterPattern(pattern: string, message: string): boolean {
  const ast = parse(tokenize(pattern));
  let event: unknown;
  try {
    event = JSON.parse(message);
  } catch {
    return false; // JSON patterns match JSON events only
  }
  return evaluate(ast, event);
}
