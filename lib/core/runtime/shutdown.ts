/**
 * How each model server stops: what it does with the requests it holds when the platform sends SIGTERM, and the one
 * setting the binding derives from it. The facts follow the engine facts table's form (facts.ts) and are checked the
 * same way (test/core/runtime-facts.test.ts); they live here, outside facts.ts, because the simulator imports the
 * table and models no termination: a fact about stopping must not make BENCHMARKS.md stale.
 */
import { type ServiceContract } from '../service/contract';
import { type EngineName } from './engines';
import { type EngineFact } from './facts';

const VLLM_SHUTDOWN_PR = 'https://github.com/vllm-project/vllm/pull/36666 (merged 2026-03-10; re-applies #34730, reverted by #36628)';
const TGI = 'huggingface/text-generation-inference@v3.3.7';

export const SHUTDOWN_FACTS: readonly EngineFact[] = [
  {
    id: 'vllm.flag.shutdown-timeout', subject: 'vllm', kind: 'flag', name: 'shutdown-timeout', since: '0.18.0', value: 0,
    statement: 'Seconds the API server waits on SIGTERM for in-flight requests, rejecting new ones; the default 0 aborts '
      + 'them at once. First released in 0.18.0 (the PR author, llm-d/llm-d#927); read in a main-branch test, not at the '
      + '0.29.0 tag (the repository is too large to read whole).',
    source: `${VLLM_SHUTDOWN_PR}; https://github.com/llm-d/llm-d/issues/927 ("included in the v0.18.0 release"); `
      + 'vllm-project/vllm@3be31f74 tests/entrypoints/launchers/test_shutdown.py (test_wait_timeout_completes_requests, '
      + 'test_abort_timeout_fails_inflight_requests); https://github.com/vllm-project/vllm/pull/43208 (Kubernetes guide: '
      + 'grace >= preStop sleep + --shutdown-timeout)',
    status: 'docs',
  },
  {
    id: 'tgi.behaviour.graceful-shutdown', subject: 'tgi', kind: 'behaviour', name: 'graceful-termination', value: 90,
    statement: 'On SIGTERM the launcher sends SIGTERM to the router, which stops accepting connections and finishes the '
      + 'requests it holds (axum graceful shutdown), and kills it after GRACEFUL_TERMINATION_TIMEOUT seconds (default 90; '
      + 'a fixed 90 s before 3.2.2). Nothing to set for a deadline up to 90 s.',
    source: `${TGI} launcher/src/main.rs:911-913 (graceful_termination_timeout), 2015-2036 (terminate), 2224-2230 `
      + '(ctrlc with the "termination" feature, launcher/Cargo.toml:11), 2352-2358; router/src/server.rs:2329-2331, '
      + '2376-2400 (shutdown_signal); tokio-rs/axum@axum-v0.7.9 axum/src/serve.rs:368-460 (stops accepting, '
      + 'graceful_shutdown on each connection, waits for them); huggingface/text-generation-inference@v2.0.0 '
      + 'launcher/src/main.rs:1521 (90 s)',
    status: 'source',
  },
  {
    id: 'sagemaker.behaviour.container-stop', subject: 'sagemaker', kind: 'behaviour', name: 'SIGTERM', value: 30,
    statement: 'When an instance is removed (UpdateEndpointWeightsAndCapacities) or replaced (UpdateEndpoint), SageMaker '
      + 'sends the container SIGTERM and SIGKILL thirty seconds later. The vLLM DLC execs the server, so the server gets the signal.',
    source: 'https://docs.aws.amazon.com/sagemaker/latest/dg/your-algorithms-inference-code.html ("How SageMaker Runs Your '
      + 'Inference Image"); aws/deep-learning-containers@cb035a10 vllm/build_artifacts/sagemaker_entrypoint.sh '
      + '(exec python3 -m vllm.entrypoints.openai.api_server)',
    status: 'docs',
  },
];

/** Seconds an admitted request may still need: the contract's deadline in whole seconds, the in-flight part of a pod's grace. */
export function requestDeadlineSeconds(contract: ServiceContract): number {
  return Math.ceil(contract.slo.deadlineMs / 1000);
}

/**
 * The engine's own drain setting, as a flag name and value (undefined: none to set). vLLM aborts what it holds at
 * SIGTERM unless `--shutdown-timeout` says how long to wait (fact vllm.flag.shutdown-timeout): it gets the request
 * deadline, the part of the EKS pod's grace after the preStop sleep (lib/eks/manifests/workload.ts), so that what it
 * holds at SIGTERM may finish before the kubelet's SIGKILL. SageMaker sends SIGKILL 30 s after SIGTERM
 * (sagemaker.behaviour.container-stop): the same setting lets requests finish up to then instead of aborting them.
 * TGI drains by itself for up to 90 s (tgi.behaviour.graceful-shutdown); DJL, Triton and custom images are not read.
 */
export function shutdownSetting(engine: EngineName, contract: ServiceContract): { name: string; value: number } | undefined {
  return engine === 'vllm' ? { name: 'shutdown-timeout', value: requestDeadlineSeconds(contract) } : undefined;
}
