/**
 * The game day's control flow with a fake injection, alarm reader and clock: it refuses without stop conditions,
 * ends the hold on each stop condition and on interrupt, and restores on every way out.
 */
import {
  type AuditEvent, type GameDayDeps, type GameDayOptions, gameDayProblems, type Injection, RESTORE_BACKOFF_MS, runGameDay,
} from '../../lib/core/game-day/runner';

const OPTIONS: GameDayOptions = { holdSeconds: 600, stop: { alarmNames: ['slo-p95'], maxDurationSeconds: 900 }, pollSeconds: 30 };

interface Fake {
  deps: GameDayDeps;
  calls: string[];
  /** Seconds since the start of each restore attempt. */
  restoreTimes: number[];
  audit: AuditEvent[];
  controller: AbortController;
}

/** A world whose clock advances only when the runner sleeps; `alarmAt` puts the alarm in ALARM from that second on. */
interface WorldOptions {
  alarmAt?: number;
  abortAt?: number;
  failRestore?: number;
  failInject?: boolean;
  injectSeconds?: number;
  states?: Record<string, string>;
  /** The shortage ends on its own (an AWS FIS experiment stopped or failed) this many seconds after the start. */
  endsAt?: number;
  /** The interrupt comes during this read of the alarms (1: the first), which its abort rejects, as the CLI's reads do. */
  abortInRead?: number;
}

function world(opts: WorldOptions = {}): Fake {
  let t = Date.UTC(2026, 11, 1, 10, 0, 0);
  const start = t;
  const calls: string[] = [];
  const restoreTimes: number[] = [];
  const audit: AuditEvent[] = [];
  const controller = new AbortController();
  let restoreFailures = opts.failRestore ?? 0;
  const injection: Injection = {
    description: 'cap NodePool pool-a',
    manualRestore: 'kubectl patch nodepool pool-a --type merge -p \'{"spec":{"limits":null}}\'',
    inject: async () => {
      calls.push('inject');
      t += (opts.injectSeconds ?? 0) * 1000;
      if (opts.failInject) throw new Error('forbidden');
      return { target: 'NodePool pool-a spec.limits', before: null, after: { cpu: '8' } };
    },
    restore: async () => {
      calls.push('restore');
      restoreTimes.push((t - start) / 1000);
      if (restoreFailures-- > 0) throw new Error('throttled');
      return { target: 'NodePool pool-a spec.limits', before: { cpu: '8' }, after: null };
    },
    ...(opts.endsAt === undefined ? {} : {
      inForce: async () => {
        calls.push('inForce');
        return (t - start) / 1000 >= opts.endsAt! ? 'AWS FIS experiment EXP1 is stopped (Experiment stopped by stop condition)' : undefined;
      },
    }),
  };
  const deps: GameDayDeps = {
    injection,
    alarmStates: async (names) => {
      calls.push('alarms');
      if (calls.filter((c) => c === 'alarms').length === opts.abortInRead) {
        controller.abort();
        throw Object.assign(new Error('Request aborted'), { name: 'AbortError' });
      }
      if (opts.states) return opts.states;
      const s = (t - start) / 1000;
      return Object.fromEntries(names.map((n) => [n, opts.alarmAt !== undefined && s >= opts.alarmAt ? 'ALARM' : 'OK']));
    },
    now: () => t,
    sleep: async (ms, signal) => {
      // Like the real sleep: an aborted signal ends the pause at once.
      if (signal.aborted) return;
      const s = (t - start) / 1000;
      if (opts.abortAt !== undefined && s + ms / 1000 >= opts.abortAt && !controller.signal.aborted) {
        t = start + opts.abortAt * 1000;
        controller.abort();
        return;
      }
      t += ms;
    },
    record: (e) => audit.push(e),
    signal: controller.signal,
  };
  return { deps, calls, restoreTimes, audit, controller };
}

describe('refuses to start without stop conditions', () => {
  test.each([
    ['no alarm', { ...OPTIONS, stop: { ...OPTIONS.stop, alarmNames: [] } }, 'a stop condition is required: at least one CloudWatch alarm on the SLO'],
    ['no maximum duration', { ...OPTIONS, stop: { ...OPTIONS.stop, maxDurationSeconds: 0 } }, 'a stop condition is required: --max-duration'],
    ['a hold longer than the maximum duration', { ...OPTIONS, holdSeconds: 1000 }, '--hold (1000 s) is longer than --max-duration (900 s)'],
  ])('fails when there is %s, changing nothing', async (_, options, message) => {
    const w = world();
    expect(gameDayProblems(options).join('\n')).toContain(message);
    const outcome = await runGameDay(options, w.deps);
    expect(outcome.endedBy).toBe('refused');
    expect(w.calls).toEqual([]);
    expect(w.audit.map((e) => e.event)).toEqual(['refused']);
  });

  test('fails when a stop alarm does not exist or is already in ALARM', async () => {
    const missing = world({ states: {} });
    expect((await runGameDay(OPTIONS, missing.deps)).events[0].detail).toBe('stop alarm(s) slo-p95 do not exist: a stop condition that cannot fire is none');
    const firing = world({ states: { 'slo-p95': 'ALARM' } });
    expect((await runGameDay(OPTIONS, firing.deps)).events[0].detail).toBe('stop alarm(s) slo-p95 already in ALARM: the service is not healthy enough to start');
    expect([...missing.calls, ...firing.calls]).toEqual(['alarms', 'alarms']);
  });
});

test('holds for --hold, then restores; the audit records each step with its time', async () => {
  const w = world();
  const outcome = await runGameDay(OPTIONS, w.deps);
  expect(outcome).toMatchObject({ endedBy: 'hold-complete', restored: true });
  expect(outcome.restoredAt! - outcome.injectedAt!).toBe(600_000);
  expect(w.calls.filter((c) => c !== 'alarms')).toEqual(['inject', 'restore']);
  expect(w.audit.map((e) => [e.at, e.event])).toEqual([
    ['2026-12-01T10:00:00.000Z', 'start'],
    ['2026-12-01T10:00:00.000Z', 'inject'],
    ['2026-12-01T10:10:00.000Z', 'hold-complete'],
    ['2026-12-01T10:10:00.000Z', 'restore'],
    ['2026-12-01T10:10:00.000Z', 'end'],
  ]);
  expect(w.audit[1].change).toEqual({ target: 'NodePool pool-a spec.limits', before: null, after: { cpu: '8' } });
});

test('a stop condition firing ends the hold at the next poll and restores', async () => {
  const w = world({ alarmAt: 95 });
  const outcome = await runGameDay(OPTIONS, w.deps);
  expect(outcome.endedBy).toBe('stop-condition');
  expect((outcome.restoredAt! - outcome.injectedAt!) / 1000).toBe(120);
  expect(w.audit.find((e) => e.event === 'stop-condition')?.detail).toBe('in ALARM: slo-p95');
  expect(w.calls.at(-1)).toBe('restore');
});

test('the maximum duration bounds the whole experiment, a slow injection included', async () => {
  const w = world({ injectSeconds: 120 });
  const outcome = await runGameDay({ ...OPTIONS, holdSeconds: 850 }, w.deps);
  expect(outcome.endedBy).toBe('max-duration');
  expect((outcome.restoredAt! - outcome.injectedAt!) / 1000).toBe(780);
  expect(w.audit.find((e) => e.event === 'max-duration')?.detail).toBe('900 s since the start');
});

test('an interrupt mid-experiment ends the hold at once and restores', async () => {
  const w = world({ abortAt: 200 });
  const outcome = await runGameDay(OPTIONS, w.deps);
  expect(outcome.endedBy).toBe('interrupt');
  expect(outcome.restored).toBe(true);
  expect((outcome.restoredAt! - outcome.injectedAt!) / 1000).toBe(200);
  expect(w.audit.map((e) => e.event)).toEqual(['start', 'inject', 'interrupt', 'restore', 'end']);
});

test('an interrupt during a read of the alarms (abandoned by its abort) ends the game day as an interrupt and restores', async () => {
  const w = world({ abortInRead: 3 });
  const outcome = await runGameDay(OPTIONS, w.deps);
  expect(outcome).toMatchObject({ endedBy: 'interrupt', restored: true });
  expect(w.audit.map((e) => e.event)).toEqual(['start', 'inject', 'interrupt', 'restore', 'end']);
  expect(w.audit[2].detail).toBe('interrupted: restoring (Request aborted)');
});

test('an interrupt during the first read of the alarms refuses, nothing changed', async () => {
  const w = world({ abortInRead: 1 });
  const outcome = await runGameDay(OPTIONS, w.deps);
  expect(outcome).toMatchObject({ endedBy: 'refused', restored: true });
  expect(w.calls).toEqual(['alarms']);
  expect(w.audit.map((e) => [e.event, e.detail])).toEqual([['refused', 'interrupted before the injection']]);
});

test('an injection that fails is still restored (it may have applied), and the error is recorded', async () => {
  const w = world({ failInject: true });
  const outcome = await runGameDay(OPTIONS, w.deps);
  expect(outcome).toMatchObject({ endedBy: 'error', restored: true });
  expect(w.audit.map((e) => e.event)).toEqual(['start', 'error', 'restore', 'end']);
});

test('a restore that keeps failing is retried, then reported with the command that restores by hand', async () => {
  const retried = world({ failRestore: 2 });
  expect((await runGameDay(OPTIONS, retried.deps)).restored).toBe(true);
  expect(retried.calls.filter((c) => c === 'restore')).toHaveLength(3);
  const stuck = world({ failRestore: 5 });
  const outcome = await runGameDay(OPTIONS, stuck.deps);
  expect(outcome.restored).toBe(false);
  const failed = stuck.audit.filter((e) => e.event === 'restore-failed').map((e) => e.detail);
  expect(failed).toEqual([
    'attempt 1/4: throttled; retrying in 5 s', 'attempt 2/4: throttled; retrying in 15 s', 'attempt 3/4: throttled; retrying in 45 s',
    'attempt 4/4: throttled; restore by hand: kubectl patch nodepool pool-a --type merge -p \'{"spec":{"limits":null}}\'',
  ]);
  expect(stuck.audit.at(-1)?.detail).toBe('ended by hold-complete; NOT restored');
});

// A throttled API (HTTP 429) or a timeout of a few seconds must not fail every attempt at once: the attempts are spaced,
// and an interrupt (whose aborted signal ends any pause on it at once) does not put them back in the same instant.
test.each([
  ['after the hold', {}, 600],
  ['after an interrupt', { abortAt: 200 }, 200],
])('the restore\'s attempts are spaced by RESTORE_BACKOFF_MS, %s', async (_, opts, first) => {
  const w = world({ ...opts, failRestore: 3 });
  const outcome = await runGameDay(OPTIONS, w.deps);
  expect(outcome.restored).toBe(true);
  expect(RESTORE_BACKOFF_MS).toEqual([5_000, 15_000, 45_000]);
  expect(w.restoreTimes).toEqual([first, first + 5, first + 20, first + 65]);
  expect((outcome.restoredAt! - outcome.injectedAt!) / 1000).toBe(first + 65);
});

describe('a shortage that ends on its own (Injection.inForce) is not reported as a hold', () => {
  test('ended mid-hold (between two alarm polls, the alarms all OK): the game day ends as an error, says why, and restores', async () => {
    const w = world({ endsAt: 95 });
    const outcome = await runGameDay(OPTIONS, w.deps);
    expect(outcome).toMatchObject({ endedBy: 'error', restored: true });
    expect(w.audit.map((e) => e.event)).toEqual(['start', 'inject', 'error', 'restore', 'end']);
    expect(w.audit[2].detail).toBe(
      '120 s into the hold the shortage is no longer in force: AWS FIS experiment EXP1 is stopped (Experiment stopped by stop condition)');
    expect(w.audit.at(-1)?.detail).toBe('ended by error; everything restored');
    // Asked at every poll, after the alarms.
    expect(w.calls.slice(0, 5)).toEqual(['alarms', 'inject', 'alarms', 'inForce', 'alarms']);
  });

  test('ended after the last poll: asked once more at the end of the hold, so it is not "held 600 s"', async () => {
    const w = world({ endsAt: 599 });
    const outcome = await runGameDay(OPTIONS, w.deps);
    expect(outcome.endedBy).toBe('error');
    expect(w.audit[2].detail).toMatch(/^600 s into the hold the shortage is no longer in force/);
  });

  test('in force throughout: the hold completes', async () => {
    const w = world({ endsAt: 10_000 });
    expect((await runGameDay(OPTIONS, w.deps)).endedBy).toBe('hold-complete');
    expect(w.calls.filter((c) => c === 'inForce')).toHaveLength(21); // 20 polls of 30 s and the end of the hold
  });

  test('an alarm in ALARM at the same poll is the stop condition (the more telling end)', async () => {
    const w = world({ endsAt: 95, alarmAt: 95 });
    expect((await runGameDay(OPTIONS, w.deps)).endedBy).toBe('stop-condition');
  });
});

test('an audit that cannot be written never skips the restore (best effort; each failure reported)', async () => {
  const w = world();
  const failed: string[] = [];
  const outcome = await runGameDay(OPTIONS, {
    ...w.deps,
    record: () => {
      throw new Error('ENOSPC: no space left on device');
    },
    recordFailed: (e, error) => failed.push(`${e.event}: ${(error as Error).message}`),
  });
  expect(outcome).toMatchObject({ endedBy: 'hold-complete', restored: true });
  expect(w.calls.filter((c) => c !== 'alarms')).toEqual(['inject', 'restore']);
  expect(outcome.events.map((e) => e.event)).toEqual(['start', 'inject', 'hold-complete', 'restore', 'end']);
  expect(failed).toEqual(['start', 'inject', 'hold-complete', 'restore', 'end'].map((e) => `${e}: ENOSPC: no space left on device`));
  // An injection that fails while the audit fails too: still restored.
  const both = world({ failInject: true });
  const bothOutcome = await runGameDay(OPTIONS, { ...both.deps, record: () => { throw new Error('EIO'); } });
  expect(bothOutcome).toMatchObject({ endedBy: 'error', restored: true });
  expect(both.calls.filter((c) => c !== 'alarms')).toEqual(['inject', 'restore']);
});

test('an audit writer whose failure handler throws too never stops the restore\'s retries; at least one attempt is made', async () => {
  const w = world({ failRestore: 2 });
  const outcome = await runGameDay(OPTIONS, {
    ...w.deps,
    record: (e) => {
      if (e.event === 'restore-failed') throw new Error('EIO');
    },
    recordFailed: () => {
      throw new Error('stderr gone');
    },
  });
  expect(outcome).toMatchObject({ restored: true });
  expect(w.calls.filter((c) => c === 'restore')).toHaveLength(3);
  const once = world({ failRestore: 1 });
  const none = await runGameDay(OPTIONS, { ...once.deps, restoreAttempts: 0 });
  expect(once.calls.filter((c) => c === 'restore')).toHaveLength(1);
  expect(none.events.filter((e) => e.event === 'restore-failed').map((e) => e.detail)).toEqual([
    'attempt 1/1: throttled; restore by hand: kubectl patch nodepool pool-a --type merge -p \'{"spec":{"limits":null}}\'',
  ]);
});

test('the last line says what the restore cannot give back, never "everything restored" for it', async () => {
  const w = world();
  const outcome = await runGameDay(OPTIONS, { ...w.deps, injection: { ...w.deps.injection, notRestorable: 'NodeClaim(s) a deleted, not restorable' } });
  expect(outcome.events.at(-1)?.detail).toBe('ended by hold-complete; restored what can be; NodeClaim(s) a deleted, not restorable');
  expect((await runGameDay(OPTIONS, world().deps)).events.at(-1)?.detail).toBe('ended by hold-complete; everything restored');
});
