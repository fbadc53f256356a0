/**
 * The game day's control flow: refuse without stop conditions, inject, hold while watching them, and restore on every
 * way out (hold complete, an alarm, the maximum duration, an interrupt, an error), writing each step to the audit as it
 * happens. No AWS SDK here: the injection, the alarm reader, the clock and the audit writer are passed in, so the
 * tests drive every path with fakes and the CLI (bin/game-day.ts) with the real clients.
 */
import { DEFAULT_RETRY, withRetries } from '../reconciler/retry';

/** One change the game day made or undid: what, and its value before and after. */
export interface AuditChange {
  readonly target: string;
  readonly before: unknown;
  readonly after: unknown;
}

export type AuditEventName =
  | 'start' | 'refused' | 'inject' | 'hold-complete' | 'stop-condition' | 'max-duration' | 'interrupt' | 'error'
  | 'restore' | 'restore-failed' | 'end';

export interface AuditEvent {
  /** ISO 8601 time. */
  readonly at: string;
  readonly event: AuditEventName;
  readonly detail?: string;
  readonly change?: AuditChange;
}

/** One way to take the preferred class's capacity away, and give it back. */
export interface Injection {
  /** What it does, in one line (printed before anything changes). */
  readonly description: string;
  /** The command that undoes it by hand, printed if restoring fails. */
  readonly manualRestore: string;
  /**
   * Makes the change and returns it. An injection of several changes reports each earlier one through `step` as it is
   * made (each is audited at once, so a failure halfway leaves a record of what was changed). One that waits for its
   * change to take effect stops waiting when `signal` is aborted (an interrupt) and returns what it made: the game day
   * then restores it.
   */
  inject(step?: (change: AuditChange) => void, signal?: AbortSignal): Promise<AuditChange>;
  restore(): Promise<AuditChange>;
  /** What the restore cannot give back (a reclaim's deleted NodeClaims), said in the last audit line; none: everything. */
  readonly notRestorable?: string;
  /**
   * Whether the shortage still holds, asked at every poll of the hold and once more at its end: undefined when it does,
   * else why not. For an injection that something else can end before the restore (an AWS FIS experiment that a stop
   * condition stops, or whose action fails, between two polls): a hold whose shortage ended early is no hold, so the game
   * day then ends as an error instead of reporting a full hold. Absent: the change holds until the restore undoes it.
   */
  inForce?(): Promise<string | undefined>;
}

export interface StopConditions {
  /** CloudWatch alarms (on the SLO): any of them in ALARM ends the hold. At least one. */
  readonly alarmNames: readonly string[];
  /** The whole experiment, injection to restore, never lasts longer. */
  readonly maxDurationSeconds: number;
}

export interface GameDayOptions {
  /** How long the shortage is held. */
  readonly holdSeconds: number;
  readonly stop: StopConditions;
  /** How often the alarms are read. */
  readonly pollSeconds: number;
  /** How long to keep watching after the restore (the return to cost mode), with no changes. @default 0 */
  readonly returnWatchSeconds?: number;
}

export interface GameDayDeps {
  readonly injection: Injection;
  /**
   * StateValue per alarm name (OK, ALARM, INSUFFICIENT_DATA); a name missing from the answer does not exist. May reject
   * once `signal` is aborted (a read abandoned by the interrupt): the game day then ends as an interrupt.
   */
  readonly alarmStates: (names: readonly string[]) => Promise<Readonly<Record<string, string>>>;
  readonly now: () => number;
  /** Resolves after `ms`, or as soon as `signal` aborts. */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Writes one event to the audit. Best effort: a throw is reported through `recordFailed`, never ends the run. */
  readonly record: (event: AuditEvent) => void;
  /** Told when `record` throws (the event stays in the outcome's events); the restore goes on regardless. */
  readonly recordFailed?: (event: AuditEvent, error: unknown) => void;
  /** Aborted on interrupt (SIGINT, SIGTERM). */
  readonly signal: AbortSignal;
  /**
   * Attempts at restoring before giving up and printing the manual command; a test seam, not a user option. The
   * restore is always attempted: a value below 1 counts as 1. @default 4 (RESTORE_BACKOFF_MS.length + 1)
   */
  readonly restoreAttempts?: number;
}

/**
 * The pauses before the second, third and fourth attempt at restoring. Attempts with no pause between them run within
 * the same few milliseconds, so one throttling answer (HTTP 429 from the API server, a ThrottlingException) or a
 * timeout of a few seconds fails them all and leaves the shortage in place; these give the API about a minute in all.
 */
export const RESTORE_BACKOFF_MS: readonly number[] = [5_000, 15_000, 45_000];

/**
 * The signal the restore's pauses wait on: never aborted. The run's own signal is already aborted after an interrupt,
 * and a sleep on it returns at once, which would put every retry back in the same instant.
 */
const NEVER_ABORTED = new AbortController().signal;

export type EndedBy = 'hold-complete' | 'stop-condition' | 'max-duration' | 'interrupt' | 'error' | 'refused';

export interface GameDayOutcome {
  readonly endedBy: EndedBy;
  /** Epoch ms of the injection and of the restore (absent when it never happened). */
  readonly injectedAt?: number;
  readonly restoredAt?: number;
  /** Whether everything the game day changed was undone. */
  readonly restored: boolean;
  readonly events: readonly AuditEvent[];
}

/** Why the options cannot start a game day (empty when they can). */
export function gameDayProblems(o: GameDayOptions): string[] {
  const problems: string[] = [];
  if (o.stop.alarmNames.length === 0 || o.stop.alarmNames.some((n) => n.trim() === '')) {
    problems.push('a stop condition is required: at least one CloudWatch alarm on the SLO (--stop-alarm <name>, repeatable)');
  }
  if (!(o.stop.maxDurationSeconds > 0)) problems.push('a stop condition is required: --max-duration (e.g. 30m) greater than 0');
  if (!(o.holdSeconds > 0)) problems.push(`--hold must be greater than 0 (got ${o.holdSeconds} s)`);
  if (o.holdSeconds > o.stop.maxDurationSeconds) {
    problems.push(`--hold (${o.holdSeconds} s) is longer than --max-duration (${o.stop.maxDurationSeconds} s)`);
  }
  if (!(o.pollSeconds > 0)) problems.push(`--poll must be greater than 0 (got ${o.pollSeconds})`);
  if ((o.returnWatchSeconds ?? 0) < 0) problems.push('--watch-return cannot be negative');
  return problems;
}

/** Why the game day must not start (nothing changed yet), or undefined: bad options, stop alarms missing or firing, an interrupt. */
async function whyNotStart(options: GameDayOptions, deps: GameDayDeps): Promise<string | undefined> {
  const problems = gameDayProblems(options);
  if (problems.length > 0) return problems.join('; ');
  const names = options.stop.alarmNames;
  let before: Readonly<Record<string, string>>;
  try {
    before = await deps.alarmStates(names);
  } catch (e) {
    // The CLI's reads end with the interrupt (their abort rejects them): nothing has changed yet.
    if (deps.signal.aborted) return 'interrupted before the injection';
    throw e;
  }
  const missing = names.filter((n) => before[n] === undefined);
  if (missing.length > 0) return `stop alarm(s) ${missing.join(', ')} do not exist: a stop condition that cannot fire is none`;
  const firing = names.filter((n) => before[n] === 'ALARM');
  if (firing.length > 0) return `stop alarm(s) ${firing.join(', ')} already in ALARM: the service is not healthy enough to start`;
  return deps.signal.aborted ? 'interrupted before the injection' : undefined;
}

export async function runGameDay(options: GameDayOptions, deps: GameDayDeps): Promise<GameDayOutcome> {
  const events: AuditEvent[] = [];
  const record = (event: AuditEvent['event'], extra: Omit<AuditEvent, 'at' | 'event'> = {}) => {
    const e: AuditEvent = { at: new Date(deps.now()).toISOString(), event, ...extra };
    events.push(e);
    try {
      deps.record(e);
    } catch (error) {
      // An audit that cannot be written (disk full, a removed directory) must never keep the restore from running.
      deps.recordFailed?.(e, error);
    }
  };
  const refuse = (detail: string): GameDayOutcome => {
    record('refused', { detail });
    return { endedBy: 'refused', restored: true, events };
  };

  const refusal = await whyNotStart(options, deps);
  if (refusal !== undefined) return refuse(refusal);
  const names = options.stop.alarmNames;

  record('start', { detail: deps.injection.description });
  const started = deps.now();
  let endedBy: EndedBy;
  let injectedAt: number | undefined;
  let attempted = false;
  try {
    attempted = true;
    const change = await deps.injection.inject((c) => record('inject', { change: c }), deps.signal);
    injectedAt = deps.now();
    record('inject', { change });
    for (;;) {
      if (deps.signal.aborted) {
        endedBy = 'interrupt';
        record('interrupt', { detail: 'interrupted: restoring' });
        break;
      }
      const now = deps.now();
      const due: EndedBy | undefined = now - started >= options.stop.maxDurationSeconds * 1000 ? 'max-duration'
        : now - injectedAt >= options.holdSeconds * 1000 ? 'hold-complete' : undefined;
      if (due === undefined) {
        const states = await deps.alarmStates(names);
        const alarms = names.filter((n) => states[n] === 'ALARM');
        if (alarms.length > 0) {
          endedBy = 'stop-condition';
          record('stop-condition', { detail: `in ALARM: ${alarms.join(', ')}` });
          break;
        }
      }
      // Asked at the end of the hold too: a shortage that ended after the last poll was not held for --hold either.
      const gone = await deps.injection.inForce?.();
      if (gone !== undefined) {
        endedBy = 'error';
        record('error', { detail: `${Math.round((deps.now() - injectedAt) / 1000)} s into the hold the shortage is no longer in force: ${gone}` });
        break;
      }
      if (due === 'max-duration') {
        endedBy = due;
        record('max-duration', { detail: `${options.stop.maxDurationSeconds} s since the start` });
        break;
      }
      if (due === 'hold-complete') {
        endedBy = due;
        record('hold-complete', { detail: `held ${options.holdSeconds} s` });
        break;
      }
      const left = Math.min(options.holdSeconds * 1000 - (now - injectedAt), options.stop.maxDurationSeconds * 1000 - (now - started));
      await deps.sleep(Math.max(0, Math.min(options.pollSeconds * 1000, left)), deps.signal);
    }
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    if (deps.signal.aborted) {
      // A read in flight when the interrupt came is abandoned (its abort rejects it): that is the interrupt, not a fault.
      endedBy = 'interrupt';
      record('interrupt', { detail: `interrupted: restoring (${message})` });
    } else {
      endedBy = 'error';
      record('error', { detail: message });
    }
  }

  let restored = !attempted;
  let restoredAt: number | undefined;
  if (attempted) {
    const attempts = Math.max(1, deps.restoreAttempts ?? RESTORE_BACKOFF_MS.length + 1);
    let gaveUp = false;
    let change: AuditChange | undefined;
    try {
      // Every error is worth another attempt: the shortage stays in place until one succeeds.
      change = await withRetries(() => deps.injection.restore(), {
        ...DEFAULT_RETRY,
        maxAttempts: attempts,
        retryable: () => true,
        delayMs: (i) => RESTORE_BACKOFF_MS[Math.min(i - 1, RESTORE_BACKOFF_MS.length - 1)],
        sleep: (ms) => deps.sleep(ms, NEVER_ABORTED),
        onFailure: (e, i, next) => {
          gaveUp = next === undefined;
          record('restore-failed', {
            detail: `attempt ${i}/${attempts}: ${e instanceof Error ? e.message : String(e)}`
              + (gaveUp ? `; restore by hand: ${deps.injection.manualRestore}` : `; retrying in ${next! / 1000} s`),
          });
        },
      });
      restored = true;
      restoredAt = deps.now();
    } catch (e) {
      // The attempts ran out: each is in the audit, the last with the command that restores by hand. Anything else
      // (a pause that threw) is a fault of the run itself.
      if (!gaveUp) throw e;
    }
    if (restored) record('restore', { change });
  }
  if (restored && attempted && !deps.signal.aborted && (options.returnWatchSeconds ?? 0) > 0) {
    await deps.sleep(options.returnWatchSeconds! * 1000, deps.signal);
  }
  const notRestorable = attempted ? deps.injection.notRestorable : undefined;
  const state = !restored ? 'NOT restored' : notRestorable ? `restored what can be; ${notRestorable}` : 'everything restored';
  record('end', { detail: `ended by ${endedBy}; ${state}` });
  return { endedBy, injectedAt, restoredAt, restored, events };
}
