/**
 * A game day's window as CloudWatch answers it (GetMetricData, aws-sdk-client-mock): the reconciler's signals per
 * minute from a function of (class, signal, minute), for the report tests and the docs example.
 */
import { GetMetricDataCommand, type GetMetricDataCommandInput } from '@aws-sdk/client-cloudwatch';
import { type AwsStub } from 'aws-sdk-client-mock';
import { type ReconcilerConfig } from '../../lib/core/reconciler/config';
import { buildQueryBatch } from '../../lib/core/reconciler/io';
import { signalPlan } from '../../lib/core/reconciler/signal-sources';
import { defineCapacityClasses } from '../../lib/core/service/checks';
import { type ServiceContract } from '../../lib/core/service/contract';
import { SERVING_RECORD_METADATA_KEY, servingRecord, type ServingRecord } from '../../lib/core/service/serving-record';
import { planCapacity } from '../../lib/core/service/sizing';
import { sd21Specs } from '../../lib/sim/services';
import { reconcilerFunction } from '../verify/deployed-template';

/** A raw metric value (before the query's scale) of a class's signal, or of 'mode' / 'ramping' (className undefined). */
export type WindowValue = (className: string | undefined, signal: string, minute: number) => number | undefined;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function serveWindow(cw: AwsStub<any, any, any>, config: ReconcilerConfig, value: WindowValue): void {
  const batch = buildQueryBatch(signalPlan(config, 60), 60);
  cw.on(GetMetricDataCommand).callsFake((input: GetMetricDataCommandInput) => {
    const start = input.StartTime!.getTime();
    const minutes = Math.round((input.EndTime!.getTime() - start) / 60_000);
    return {
      MetricDataResults: (input.MetricDataQueries ?? []).map((q) => {
        const entry = batch.index.find((e) => e.id === q.Id)!;
        const points = Array.from({ length: minutes }, (_, m) => [m, value(entry.className, entry.signal, m)] as const)
          .filter((p): p is readonly [number, number] => p[1] !== undefined);
        return { Id: q.Id, Timestamps: points.map(([m]) => new Date(start + m * 60_000)), Values: points.map(([, v]) => v / entry.scale) };
      }),
    };
  });
}


/** Minute 10 injection, minute 20 restore: capacity mode from 12 to 26, inf2 capped at 60 tok/s, 5 tok/s shed for 2 minutes. */
export function shortageWorld(className: string | undefined, signal: string, m: number): number | undefined {
  const held = m >= 10 && m < 20;
  if (signal === 'mode') return m >= 12 && m < 26 ? 1 : 0;
  if (signal === 'ramping') return m >= 26 && m < 29 ? 1 : 0;
  const inf2 = className === 'inf2';
  switch (signal) {
    case 'servedTokensPerSecond': return inf2 ? (held ? 60 : 80) : held ? 35 + Math.min(5, m - 10) : 20;
    case 'rejectedTokensPerSecond': return m === 10 || m === 11 ? 5 : 0;
    case 'readyReplicas': return inf2 ? 4 : held && m >= 13 ? 3 : 1;
    case 'latencyP95Ms': return m >= 10 && m < 13 ? 1400 : 800;
    default: return undefined;
  }
}

/**
 * The serving record (template Metadata) of the service `shortageWorld` describes: Stable Diffusion 2.1 on inf2
 * (preferred) and a10g, envelopes that fit the world's traffic (about 20 images/s per replica), one image per request.
 */
export function shortageWorldRecord(): ServingRecord {
  const contract: ServiceContract = {
    name: 'sd21', slo: { ttftP95Ms: 1000, deadlineMs: 2500 }, requestShape: { meanPromptTokens: 0, meanOutputTokens: 1 }, peakRequestsPerSecond: 100, headroom: 0.2,
  };
  const specs = sd21Specs().filter((s) => s.name === 'inf2' || s.name === 'a10g-triton').map((s) => ({
    ...s, name: s.name === 'inf2' ? 'inf2' : 'a10g', maxReplicas: 8, runtime: { ...s.runtime, maxConcurrentSequences: 20 },
    envelope: { ...s.envelope, tokensPerSecondPerReplica: 25, safeConcurrency: 20, ttftP95Ms: 800 },
  }));
  const classes = defineCapacityClasses(specs, { contract, platform: 'ec2' });
  return servingRecord('eks', contract, classes, planCapacity(contract, classes));
}

/** A deployed template with the record of `shortageWorldRecord()`, as CloudFormation GetTemplate returns it. */
export function recordedTemplateBody(): string {
  return JSON.stringify({ Metadata: { [SERVING_RECORD_METADATA_KEY]: { sd21: shortageWorldRecord() } }, Resources: { Fn: reconcilerFunction() } });
}
