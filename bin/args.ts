/**
 * Command-line parsing shared by the CLIs: Node's own `util.parseArgs` in strict mode, so a misspelt or misplaced
 * option fails with a message naming it and the options the command takes, instead of being ignored.
 * (https://nodejs.org/api/util.html#utilparseargsconfig)
 */
import { parseArgs } from 'node:util';

export class UsageError extends Error {}

export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  /** Repeatable; values accumulate in order. */
  readonly multiple?: boolean;
}

export interface ParsedCommandLine {
  readonly values: Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;
  readonly positionals: readonly string[];
  /** Options given more than once although they are not repeatable. */
  readonly repeated: readonly string[];
}

/**
 * Parses the arguments after `command` against exactly the options it takes. Throws UsageError naming the command,
 * the offending argument and the accepted options.
 */
export function parseCommandLine(
  command: string,
  argv: readonly string[],
  options: Readonly<Record<string, OptionSpec>>,
  maxPositionals = 0,
): ParsedCommandLine {
  const accepted = Object.keys(options).map((o) => `--${o}`);
  const takes = accepted.length > 0 ? `${command} takes ${accepted.join(', ')}` : `${command} takes no options`;
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: negativeValuesJoined(argv, options), options: { ...options }, strict: true, allowPositionals: true, tokens: true });
  } catch (e) {
    // Node's messages go on with advice about '--' that does not apply here; keep the first sentence. (Not
    // `instanceof Error`: under jest the error comes from another realm.)
    const message = typeof (e as { message?: unknown }).message === 'string' ? (e as { message: string }).message : String(e);
    const first = message.split(/\.\s/)[0].replace(/\.$/, '');
    throw new UsageError(`${command}: ${first}; ${takes}`);
  }
  if (parsed.positionals.length > maxPositionals) {
    const extra = parsed.positionals.slice(maxPositionals).map((p) => `'${p}'`).join(', ');
    throw new UsageError(`${command}: unexpected argument ${extra}; ${takes}`);
  }
  const counts = new Map<string, number>();
  for (const t of parsed.tokens ?? []) if (t.kind === 'option') counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
  const repeated = [...counts].filter(([name, n]) => n > 1 && !options[name]?.multiple).map(([name]) => `--${name}`);
  return { values: parsed.values, positionals: parsed.positionals, repeated };
}

/**
 * `--name -1` as `--name=-1`: parseArgs takes an argument that starts with a dash, after an option that needs a value,
 * for an option of its own and fails ("Option '--name' argument is ambiguous ... To specify an option argument
 * starting with a dash use '--name=-XYZ'": checkOptionLikeValue, Node's lib/internal/util/parse_args/parse_args.js).
 * A negative number is never an option (none of ours starts with a digit), so it is passed on as the value, for the
 * command to accept or refuse by its own rule. Not after `--`, where every argument is positional.
 */
function negativeValuesJoined(argv: readonly string[], options: Readonly<Record<string, OptionSpec>>): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') return [...out, ...argv.slice(i)];
    const next = argv[i + 1];
    if (arg.startsWith('--') && !arg.includes('=') && options[arg.slice(2)]?.type === 'string' && next !== undefined && /^-\.?\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}
