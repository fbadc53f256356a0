/**
 * The frame every command-line tool of the package shares (verify, game-day, sign-model): help, usage errors and exit
 * codes in one place. `parse` throws UsageError (bin/args.ts) for a bad command line; the command then prints the
 * message and its usage on stderr and exits 2. `parse` answers `{ command: 'help' }` for `--help`, `-h`, `help` or no
 * argument (`asksForHelp`): the usage is printed and the exit code is 0.
 * Exit 1 is the body's: a failure it reports. bin/sim.ts shares `Io` and `runAsProcess` but keeps its own parse (help
 * anywhere in the line, an unknown command prints the usage on stdout): it is in the benchmark's hashed closure.
 */
import { UsageError } from './args';

/** Where a command writes; tests pass their own. */
export interface Io {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

export const CONSOLE_IO: Io = { out: (l) => console.log(l), err: (l) => console.error(l) };

/** Whether the command line asks for the usage. */
export function asksForHelp(argv: readonly string[]): boolean {
  return argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help';
}

export interface CommandFrame<C> {
  /** The name printed before a usage error (e.g. `sign-model: `), or none. */
  readonly prefix?: string;
  readonly usage: string;
  /** Throws UsageError naming every problem of the command line. */
  readonly parse: (argv: readonly string[]) => C;
  /** Runs the parsed command; returns its exit code. */
  readonly run: (command: Exclude<C, { readonly command: 'help' }>) => Promise<number>;
}

/** Parses, prints help or a usage error, else runs: the exit code (0 ok, 1 failure, 2 usage). */
export async function runCommand<C extends { readonly command: string }>(argv: readonly string[], io: Io, frame: CommandFrame<C>): Promise<number> {
  let command: C;
  try {
    command = frame.parse(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.err(`${frame.prefix ?? ''}${e.message}\n\n${frame.usage}`);
    return 2;
  }
  if (command.command === 'help') {
    io.out(frame.usage);
    return 0;
  }
  return frame.run(command as Exclude<C, { readonly command: 'help' }>);
}

/** Runs `main` as the process's command: its code becomes the exit status, an unexpected error exits 1 with its message. */
export function runAsProcess(main: (argv: readonly string[]) => Promise<number>): void {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  }, (e: unknown) => {
    console.error(e instanceof Error ? e.message : String(e));
    process.exitCode = 1;
  });
}
