/**
 * The one error every construct (and `defineCapacityClasses`) throws for invalid input: the construct, its path and
 * every problem at once, each naming the field, the value and what is allowed. Pure (no aws-cdk-lib): the core checks
 * build the problems, the constructs add their path. When each construct throws it, and why then: docs/validation.md.
 */

/** One thing wrong with an input: the field it is about and a message naming the value and what is allowed. */
export interface Problem {
  /** The capacity class the problem is about; undefined for the construct's own props (or a set of classes). */
  readonly className?: string;
  /** Dotted path of the field under the construct's props, e.g. `runtime.maxQueueDelayMs` or `policy.period`. */
  readonly field: string;
  /** What the value is and what is allowed, e.g. `is 0; allowed: a whole number at least 1`. */
  readonly message: string;
}

/** One problem as a line of the error: `  - class 'a10g' runtime.maxQueueDelayMs: is 40000 ms; allowed: ...`. */
export function formatProblem(p: Problem): string {
  return `  - ${p.className === undefined ? '' : `class '${p.className}' `}${p.field}: ${p.message}`;
}

/** Invalid input of a construct: thrown with every problem it has, never one at a time. */
export class ConstructValidationError extends Error {
  /**
   * @param construct the construct's class (or the function's name, e.g. `defineCapacityClasses`)
   * @param path the construct path (`Stack/Endpoint`); undefined for a function
   * @param problems every problem, in the order the checks found them
   */
  constructor(
    public readonly construct: string,
    public readonly path: string | undefined,
    public readonly problems: readonly Problem[],
  ) {
    const n = problems.length;
    super(`${construct}${path === undefined ? '' : ` '${path}'`} is invalid (${n} problem${n === 1 ? '' : 's'}):\n${problems.map(formatProblem).join('\n')}`);
    this.name = 'ConstructValidationError';
  }
}

/** Throws one ConstructValidationError listing `problems`; does nothing when there are none. */
export function throwIfInvalid(construct: string, path: string | undefined, problems: readonly Problem[]): void {
  if (problems.length > 0) throw new ConstructValidationError(construct, path, problems);
}
