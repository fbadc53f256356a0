/**
 * What the deployed path does with a request that waits in its model server's queue after its client has gone: who
 * gives up on it, and whether the server then drops it or serves it anyway. The facts follow the engine facts table's
 * form (facts.ts) and are checked the same way (test/core/runtime-facts.test.ts). The simulator imports this module
 * (lib/sim/simulator.ts, `pull`), so a change here, a citation included, makes BENCHMARKS.md stale as any simulated
 * rule does.
 *
 * No server knows a request's output length before it serves it, and none of these drops a queued request because it
 * would finish late: a queued request leaves the queue unserved only when its connection has closed and its server
 * notices. What closes it, as far as the library deploys: on EKS the ALB, after its idle timeout without a byte
 * (`albIdleTimeoutSeconds`, at least 60 s; the library renders it from the deadline). A client that gives up sooner (at
 * the contract's deadline, say) is the user's, and whether its disconnect reaches the server through the ALB or
 * SageMaker is not documented; on SageMaker whether the 60 s InvokeEndpoint limit closes the container's connection is
 * not documented either. Both fail safe, the less kind way: the server is taken not to notice, and serves the request
 * after all, its capacity spent on an answer nobody reads.
 */
import { albIdleTimeoutSeconds } from '../platform/alb-connection';
import { type EngineFact } from './facts';
import { type ServingPlatform } from './platform';

const VLLM_MAIN = 'vllm-project/vllm@6adad087 (main, 2026-08-14; not at the 0.29.0 tag), read in jsboige/vllm@75b227d8';
const TGI = 'huggingface/text-generation-inference@v3.3.7';
const DJL = 'deepjavalibrary/djl-serving';
const TRITON = 'triton-inference-server/server@v2.71.0';

export const ABANDONMENT_FACTS: readonly EngineFact[] = [
  {
    id: 'vllm.behaviour.abort-on-disconnect', subject: 'vllm', kind: 'behaviour', name: 'with_cancellation',
    statement: 'The completion and chat routes (and SageMaker\'s /invocations, which calls the same decorated handlers) '
      + 'cancel their handler when the client disconnects; the cancelled generate() aborts the request, and the scheduler '
      + 'removes an aborted request from its waiting queue as from its running batch. Main, not at 0.29.0.',
    source: `${VLLM_MAIN} vllm/entrypoints/serve/utils/api_utils.py:37-92 (listen_for_disconnect, with_cancellation), `
      + 'vllm/entrypoints/openai/chat_completion/api_router.py:51, completion/api_router.py:44, '
      + 'vllm/entrypoints/serve/sagemaker/api_router.py:66-88, vllm/entrypoints/generate/factories.py:24-39, '
      + 'vllm/v1/engine/async_llm.py:616-623, vllm/v1/core/sched/scheduler.py:2325-2371 (finish_requests)',
    status: 'source',
  },
  {
    id: 'tgi.behaviour.drop-disconnected', subject: 'tgi', kind: 'behaviour', name: 'response_tx.is_closed',
    statement: 'When the router builds its next batch it skips, unserved, every queued entry whose response receiver was '
      + 'dropped ("entries where the request was dropped by the client"), counting it in tgi_request_failure{err="dropped"}. '
      + 'The same filter in 2.0.0.',
    source: `${TGI} backends/v3/src/queue.rs:277-285; huggingface/text-generation-inference@v2.0.0 router/src/queue.rs:225`,
    status: 'source',
  },
  {
    id: 'tgi.behaviour.sse-keep-alive', subject: 'tgi', kind: 'behaviour', name: 'KeepAlive::default',
    statement: 'Every streamed route (/generate_stream, /v1/completions and /v1/chat/completions with stream) answers with '
      + 'server-sent events whose keep-alive sends a comment every 15 s, and the response starts before the request is '
      + 'queued (the queue entry is made inside the lazily polled stream): a streamed request never leaves its connection '
      + 'idle, so the ALB never closes it, and TGI serves it however long it waited (review R259).',
    source: `${TGI} router/src/server.rs:504,532-555,984,1247 (Sse::new(..).keep_alive(KeepAlive::default())); `
      + 'tokio-rs/axum axum/src/response/sse.rs (KeepAlive::new: 15 s; TGI v3.3.7 Cargo.lock pins axum 0.7.9)',
    status: 'source',
  },
  {
    id: 'djl-lmi.behaviour.skip-cancelled', subject: 'djl-lmi', kind: 'behaviour', name: 'isCancelled',
    statement: 'When the client\'s channel goes inactive the server marks its request cancelled, and the worker skips a '
      + 'cancelled job when it takes it off the job queue ("Skip cancelled job"). Read at 0.29.0 and 0.35.0 (tags 0.30.0-0.34.0 '
      + 'are not in the snapshot).',
    source: `${DJL}@v0.29.0 serving/src/main/java/ai/djl/serving/http/InferenceRequestHandler.java:159-170, `
      + 'wlm/src/main/java/ai/djl/serving/wlm/ModelInfo.java:1231-1240; '
      + `${DJL}@v0.35.0 InferenceRequestHandler.java:159-170, ModelInfo.java:1312-1321`,
    status: 'source',
  },
  {
    id: 'triton.behaviour.cancel-on-disconnect', subject: 'triton', kind: 'behaviour', name: 'RequestFiniHook',
    statement: 'The HTTP server cancels a request whose connection is finished, but Triton core checks for cancelled '
      + 'requests only in the dynamic and sequence batchers (and not once a request reaches the rate limiter): whether a '
      + 'queued request is dropped depends on the model\'s scheduler, set in its config.pbtxt, which the library does not '
      + 'write. Taken to be served.',
    source: `${TRITON} src/http_server.cc:3961-3978,3993 (RequestFiniHook, evhtp_hook_on_request_fini), `
      + 'docs/user_guide/request_cancellation.md:61-75',
    status: 'not-confirmed',
  },
  {
    id: 'sagemaker.behaviour.invocation-timeout', subject: 'sagemaker', kind: 'behaviour', name: 'InvokeEndpoint', value: 60,
    statement: 'A model container must answer InvokeEndpoint within 60 seconds. Whether SageMaker then closes its '
      + 'connection to the container is not documented; a user reports the container\'s work going on past the timeout.',
    source: 'https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_runtime_InvokeEndpoint.html; '
      + 'https://github.com/aws/sagemaker-python-sdk/issues/1119',
    status: 'not-confirmed',
  },
];

/**
 * Engines whose server drops a queued request once its connection has closed (the confirmed rows above). Not TGI,
 * although it drops such an entry: a streamed request keeps its connection busy with keep-alives, so nothing closes it,
 * and whether a service's clients stream is not known to the library (the contract's ITL implies they may): served.
 */
const DROPS_DISCONNECTED: readonly string[] = ['vllm', 'djl-lmi'];

/**
 * Seconds after its arrival at which a request still queued at a class's server is dropped unserved, or undefined when
 * the deployed path has it served however long it waited. Dropped only where the platform is known to close the
 * server's connection (EKS: the ALB's idle timeout, from the deadline) and the server is known to notice (vLLM at once,
 * DJL when it reaches it in its queue; the simulator drops it when a replica would take it, so it counts in a vLLM bound
 * a little longer than deployed). Never from the request's output length: no server knows it.
 */
export function queuedRequestDroppedAfterSeconds(engine: string, requestDeadlineMs: number, platform: ServingPlatform): number | undefined {
  if (platform !== 'eks' || !DROPS_DISCONNECTED.includes(engine)) return undefined;
  return albIdleTimeoutSeconds(requestDeadlineMs);
}
