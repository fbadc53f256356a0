/**
 * The game day's control flow with a fake injection, alarm reader and clock: it refuses without stop conditions,
 * ends the hold on each stop condition and on interrupt, and restores on every way out.
 */
import { type AuditEvent, type GameDayDeps, type GameDayOptions, gameDayProblems, type Injection, runGameDay } from '../../lib/core/game-day/runner';

const OPTIONS: GameDayOptions = { holdSeconds: 600, stop: { alarmNames: ['slo-p95'], maxDurationSeconds: 900 }, pollSeconds: 30 };

interface Fake {
  deps: GameDayDeps;
  calls: string[];
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
}

function world(opts: WorldOptions = {}): Fake {
  let t = Date.UTC(2026, 11, 1, 10, 0, 0);
  const start = t;
  const calls: string[] = [];
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
      if (restoreFailures-- > 0) throw new Error('throttled');
      return { target: 'NodePool pool-a spec.limits', before: { cpu: '8' }, after: null };
    },
  };
  const deps: GameDayDeps = {
    injection,
    alarmStates: async (names) => {
      calls.push('alarms');
      if (opts.states) return opts.states;
      const s = (t - start) / 1000;
      return Object.fromEntries(names.map((n) => [n, opts.alarmAt !== undefined && s >= opts.alarmAt ? 'ALARM' : 'OK']));
    },
    now: () => t,
    sleep: async (ms, signal) => {
      const s = (t - start) / 1000;
      if (opts.abortAt !== undefined && s + ms / 1000 >= opts.abortAt && !signal.aborted) {
        t = start + opts.abortAt * 1000;
        controller.abort();
        return;
      }
      t += ms;
    },
    record: (e) => audit.push(e),
    signal: controller.signal,
  };
  return { deps, calls, audit, controller };
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
  expect(stuck.audit.filter((e) => e.event === 'restore-failed').at(-1)?.detail).toBe(
    'attempt 3/3: throttled; restore by hand: kubectl patch nodepool pool-a --type merge -p \'{"spec":{"limits":null}}\'');
  expect(stuck.audit.at(-1)?.detail).toBe('ended by hold-complete; NOT restored');
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

test('the last line says what the restore cannot give back, never "everything restored" for it', async () => {
  const w = world();
  const outcome = await runGameDay(OPTIONS, { ...w.deps, injection: { ...w.deps.injection, notRestorable: 'NodeClaim(s) a deleted, not restorable' } });
  expect(outcome.events.at(-1)?.detail).toBe('ended by hold-complete; restored what can be; NodeClaim(s) a deleted, not restorable');
  expect((await runGameDay(OPTIONS, world().deps)).events.at(-1)?.detail).toBe('ended by hold-complete; everything restored');
});
