/**
 * Reconciler Lambda entry point: triggered every minute by EventBridge and at once by capacity alarm state changes.
 * Thin: read the configuration the construct validated at synth, run one reconciliation, fail the invocation (so the
 * function's Errors metric shows it) when an AWS call failed after retries. Weights are left unchanged in that case.
 */
import { RECONCILER_CONFIG_ENV, type ReconcilerConfig } from '../../lib/core/reconciler/config';
import { failureAuditLine, failureEmf, RECONCILER_SERVICE_ENV } from '../../lib/core/reconciler/faults';
import { type Clients, reconcile, type RunResult } from './reconcile';

// Our own retry layer (retry.ts) is the only one: one SDK attempt per call.
const sdk = { maxAttempts: 1 };
let clients: Clients | undefined;
let config: ReconcilerConfig | undefined;

function loadConfig(): ReconcilerConfig {
  const raw = process.env[RECONCILER_CONFIG_ENV];
  // The construct always sets it; reaching this means the function was edited by hand.
  if (!raw) throw new Error(`${RECONCILER_CONFIG_ENV} is not set: deploy the function through the Reconciler construct`);
  return JSON.parse(raw) as ReconcilerConfig;
}

/**
 * Only the clients this target needs: the SageMaker client alone is most of the bundle, and loading the module of a
 * client that is never called would only lengthen the cold start. esbuild keeps dynamic imports lazy.
 */
async function makeClients(c: ReconcilerConfig): Promise<Clients> {
  const { CloudWatchClient } = await import('@aws-sdk/client-cloudwatch');
  if (c.facts.kind === 'sagemaker') {
    const { SageMakerClient } = await import('@aws-sdk/client-sagemaker');
    return { cloudwatch: new CloudWatchClient(sdk), sagemaker: new SageMakerClient(sdk) };
  }
  const { ElasticLoadBalancingV2Client } = await import('@aws-sdk/client-elastic-load-balancing-v2');
  return { cloudwatch: new CloudWatchClient(sdk), elbv2: new ElasticLoadBalancingV2Client(sdk) };
}

export async function handler(event: { 'detail-type'?: string; source?: string } = {}): Promise<RunResult> {
  const trigger = event['detail-type'] ?? 'manual';
  const log = (line: Record<string, unknown>) => console.log(JSON.stringify({ trigger, ...line }));
  const nowMs = Date.now();
  try {
    config ??= loadConfig();
    clients ??= await makeClients(config);
  } catch (error) {
    // Even a run that cannot start leaves its audit line and the failure datapoint the failure alarm watches.
    const detail = `weights unchanged: cannot start: ${(error as Error).name}: ${(error as Error).message}`;
    log(failureEmf(process.env[RECONCILER_SERVICE_ENV] || 'unknown', 'invalid-config', nowMs));
    log(failureAuditLine(Math.floor(nowMs / 1000), 'invalid-config', detail));
    throw new Error(`reconciler: ${detail}`, { cause: error });
  }
  const result = await reconcile(config, clients, { nowMs, log });
  if (result.action === 'failed') throw new Error(`reconciler: ${result.detail}`);
  return result;
}
