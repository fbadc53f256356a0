import { type RunMetrics } from './metrics';
import { type RunResult } from './simulator';

/**
 * One run minute by minute, to read why a policy did what it did (what `cdk-capacity-sim trace` prints): per minute the
 * policy's mode and the demand that arrived (output tokens per second); per class the weight in force at the end of the
 * minute, ready / desired replicas (pending in brackets), requests routed to it, requests turned away (rejected by its
 * server, dropped from its queue, or unroutable) and tokens it served per second; then the policy's reason for the
 * minute (the library's audit message, cut at `reasonChars`). Minutes `from` (inclusive) to `to` (exclusive).
 */
export function traceLines(run: RunResult, from: number, to: number, reasonChars = 240): string[] {
  const s = run.series;
  const k = s.classCount;
  const lines = ['minute mode demand | per class: weight ready/desired(pending) routed turned-away served-tok/s | reason'];
  for (let m = Math.max(0, from); m < Math.min(to, s.minutes); m++) {
    const classes = run.classNames.map((name, c) => {
      const i = m * k + c;
      return `${name} w${s.weights[i].toFixed(2)} ${s.readyReplicas[i]}/${s.desiredReplicas[i]}(${s.pendingReplicas[i]}) ` +
        `r${Math.round(s.routedRequests[i])} x${Math.round(s.rejected[i] + s.unroutable[i])} ${Math.round(s.servedTokens[i] / 60)}`;
    });
    const reason = (s.reasons[m] ?? '').slice(0, reasonChars);
    lines.push(`${m} ${s.modes[m] ?? ''} ${Math.round(s.demandTokens[m] / 60)} | ${classes.join(' | ')}${reason ? ` | ${reason}` : ''}`);
  }
  return lines;
}

/** The run's headline: share of requests within the SLO, cost per 1M SLO-meeting tokens, time to fallback, mode changes. */
export function traceHeadline(policy: string, m: RunMetrics): string {
  const t = m.timeToFallbackSeconds;
  const ttf = Number.isNaN(t) ? 'no deficit' : Number.isFinite(t) ? `${Math.round(t)} s` : 'never';
  return `${policy}: ${(100 * m.sloAttainment).toFixed(2)}% within the SLO, $${m.usdPerMillionSloTokens.toFixed(3)} per 1M SLO tokens, ` +
    `time to fallback ${ttf}, ${m.modeChanges} mode change(s)`;
}
