import { computeMetrics } from '../../lib/sim/metrics';
import { S0, S1 } from '../../lib/sim/scenarios';
import { runSimulation } from '../../lib/sim/simulator';
import { policyFactory } from '../../lib/sim/suite';
import { traceHeadline, traceLines } from '../../lib/sim/trace';

const SHORT_LLM = { durationMinutes: 60, onsetMinute: 20, shortageMinutes: 30, meanRate: 10, preferredInstancesDuringShortage: 2 };

describe('traceLines: a run minute by minute', () => {
  const scenario = S1.build(3, SHORT_LLM);
  const run = runSimulation(scenario, policyFactory('library'), { seed: 3 });

  test('one line per minute of the range, every class with its weight, replicas, routing, shedding and serving', () => {
    const lines = traceLines(run, 20, 25);
    expect(lines).toHaveLength(6);
    expect(lines[0]).toMatch(/^minute mode demand \| per class: weight ready\/desired\(pending\)/);
    for (const [i, line] of lines.slice(1).entries()) {
      expect(line.startsWith(`${20 + i} ${run.series.modes[20 + i]} `)).toBe(true);
      for (const name of run.classNames) expect(line).toMatch(new RegExp(`\\| ${name} w\\d\\.\\d\\d \\d+/\\d+\\(\\d+\\) r\\d+ x\\d+ \\d+`));
    }
    // The library's audit reason closes the line, cut at the given length.
    expect(lines[1]).toContain(run.series.reasons[20].slice(0, 40));
    expect(traceLines(run, 20, 21, 10)[1].endsWith(`| ${run.series.reasons[20].slice(0, 10)}`)).toBe(true);
  });

  test('the range is clipped to the run', () => {
    expect(traceLines(run, 58, 100)).toHaveLength(3);
    expect(traceLines(run, 70, 80)).toHaveLength(1);
  });

  test('the headline says the SLO share, the cost, the time to fallback and the mode changes', () => {
    const m = computeMetrics(run, scenario);
    expect(traceHeadline('library', m)).toBe(`library: ${(100 * m.sloAttainment).toFixed(2)}% within the SLO, ` +
      `$${m.usdPerMillionSloTokens.toFixed(3)} per 1M SLO tokens, time to fallback ${Number.isFinite(m.timeToFallbackSeconds)
        ? `${Math.round(m.timeToFallbackSeconds)} s` : 'never'}, ${m.modeChanges} mode change(s)`);
    const steady = S0.build(1, { durationMinutes: 30, meanRate: 5 });
    const quiet = computeMetrics(runSimulation(steady, policyFactory('cost-only'), { seed: 1 }), steady);
    expect(traceHeadline('cost-only', quiet)).toContain('time to fallback no deficit, 0 mode change(s)');
  });
});
