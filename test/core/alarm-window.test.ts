import { lateTolerantWindow, latePeriods } from '../../lib/core/metrics/alarm-window';
import { maxAlarmEvaluationSeconds } from '../../lib/core/platform/limits';

describe('CloudWatch alarm evaluation range (PutMetricAlarm, Period)', () => {
  test('1 day at periods under one hour, 7 days from one hour on', () => {
    expect(maxAlarmEvaluationSeconds(60)).toBe(86_400);
    expect(maxAlarmEvaluationSeconds(3540)).toBe(86_400);
    expect(maxAlarmEvaluationSeconds(3600)).toBe(604_800);
    expect(maxAlarmEvaluationSeconds(86_400)).toBe(604_800);
  });
});

describe('lateTolerantWindow', () => {
  test('N exceeds M by the periods of the metric delay, at least one', () => {
    expect(latePeriods(60, 0)).toBe(1);
    expect(latePeriods(60, 120)).toBe(2);
    expect(latePeriods(60, 121)).toBe(3);
    expect(latePeriods(300, 120)).toBe(1);
    expect(lateTolerantWindow(5, 60, 300)).toEqual({ datapointsToAlarm: 5, evaluationPeriods: 10 });
  });

  test('keeps the whole margin up to the bound, and throws past it rather than shrinking it (the duration rule refuses first)', () => {
    expect(lateTolerantWindow(1425, 60, 900)).toEqual({ datapointsToAlarm: 1425, evaluationPeriods: 1440 });
    expect(() => lateTolerantWindow(1440, 60, 900)).toThrow('an M of N alarm of 1440 + 15 periods of 60 s exceeds the 86400 s CloudWatch evaluates');
    // At an hour the bound is 7 days: 167 + 1 periods fit, 168 + 1 do not.
    expect(lateTolerantWindow(167, 3600, 120)).toEqual({ datapointsToAlarm: 167, evaluationPeriods: 168 });
    expect(() => lateTolerantWindow(168, 3600, 120)).toThrow(/exceeds the 604800 s/);
  });

  test('the Reconciler\'s missing-data alarm fits at every policy.period and metricDelay its rules allow', () => {
    // Its M: at least 3 periods and 10 minutes (lib/control/reconciler.ts missingDataRuns); policy.period 60..21600 s in
    // whole minutes, metricDelay 0..900 s (RECONCILER_RULES). Its longest window, 6 h x (3 + 1), is one day.
    for (let period = 60; period <= 21_600; period += 60) {
      const m = Math.max(3, Math.ceil(600 / period));
      expect(() => lateTolerantWindow(m, period, 900)).not.toThrow();
    }
  });
});
