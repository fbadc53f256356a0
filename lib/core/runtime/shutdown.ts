/**
 * How each model server stops: what it does with the requests it holds when the platform sends SIGTERM, and the one
 * setting the binding derives from it. The facts follow the engine facts table's form (facts.ts) and are checked the
 * same way (test/core/runtime-facts.test.ts). They live here, outside facts.ts, which the simulator imports for other
 * facts; since stop 57 the simulator imports this module too (`servesAfterSigtermSeconds`: a removed SageMaker
 * instance's drain), so a change here, a citation included, makes BENCHMARKS.md stale as any simulated rule does.
 */
import { type ServiceContract } from '../service/contract';
import { type EngineName } from './engines';
import { type EngineFact } from './facts';
import { type ServingPlatform } from './platform';

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
      + 'grace >= preStop sleep + --shutdown-timeout; its review asks for strictly greater, VLLM_EXIT_MARGIN_SECONDS)',
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
 * Seconds left between the end of vLLM's drain and the SIGKILL, for its own exit. vLLM's shutdown allows its engine
 * processes max(--shutdown-timeout, 5) s to stop, 5 s being the fixed allowance it had before the drain existed
 * (vllm-project/vllm#34730, review of 2026-02-28: "`shutdown()` had a hard-coded timeout of 5s before, so I just went
 * with that `max(configured_timeout, 5)`"); a grace of exactly preStop + timeout leaves that exit no time, and the
 * Kubernetes guide's review asks for a grace strictly above it (vllm-project/vllm#43208, docs/deployment/k8s.md). The
 * margin does not guarantee the exit fits: vLLM's own test allows a tiny model up to timeout + 10 s to exit after
 * SIGTERM (vllm-project/vllm@3be31f74 tests/entrypoints/launchers/test_shutdown.py, test_wait_timeout_with_short_duration).
 */
export const VLLM_EXIT_MARGIN_SECONDS = 5;

/** A numeric fact of the table by id (seconds, for these): a missing or non-numeric one is a bug of the table. */
function secondsFact(id: string): number {
  const value = SHUTDOWN_FACTS.find((f) => f.id === id)?.value;
  if (typeof value !== 'number') throw new Error(`internal: no numeric fact ${id}`);
  return value;
}

/**
 * vLLM's `--shutdown-timeout`: as long as what it holds may still need (the deadline), less the exit margin before the
 * SIGKILL. On EKS the SIGKILL comes a deadline after SIGTERM (the pod's grace is the preStop sleep plus the deadline:
 * lib/eks/manifests/workload.ts), so the margin comes off the deadline and the grace, and the NodePool's grace built
 * on it, stay as they are; on SageMaker it comes 30 s after SIGTERM whatever the deadline. Never under
 * min(deadline, margin): vLLM allows its engine the margin to stop whatever the timeout (max(timeout, 5)), so a
 * shorter drain, down to 0 (abort everything at SIGTERM), would cut requests without bringing its exit any earlier.
 */
export function vllmShutdownTimeoutSeconds(contract: ServiceContract, platform: ServingPlatform): number {
  return vllmTimeoutFor(requestDeadlineSeconds(contract), platform);
}

function vllmTimeoutFor(deadline: number, platform: ServingPlatform): number {
  const killAfter = killAfterSeconds(deadline, platform);
  return Math.max(Math.min(deadline, killAfter - VLLM_EXIT_MARGIN_SECONDS), Math.min(deadline, VLLM_EXIT_MARGIN_SECONDS));
}

/** Seconds from SIGTERM to SIGKILL: on SageMaker its fixed 30 s, on EKS the pod's grace after its preStop sleep, the deadline. */
function killAfterSeconds(deadline: number, platform: ServingPlatform): number {
  return platform === 'sagemaker' ? secondsFact('sagemaker.behaviour.container-stop') : deadline;
}

/**
 * Seconds a server goes on serving the requests it holds after SIGTERM, with the drain setting the binding renders
 * (`shutdownSetting`); what it still holds then is lost. vLLM: its `--shutdown-timeout`; TGI: its own 90 s drain; an
 * engine whose stop is not read here (DJL, Triton, custom): until the SIGKILL. Never past the SIGKILL. The simulator
 * ends a removed SageMaker instance's requests here (lib/sim/simulator.ts, `drain`); `deadlineSeconds` is rounded up
 * to whole seconds as the binding's is. Until the SIGKILL for DJL assumes what its image makes likely, not what was
 * observed: its entrypoint runs djl-serving from a bash script without exec, and djl-serving registers no shutdown hook
 * (deepjavalibrary/djl-serving@v0.29.0 serving/docker/dockerd-entrypoint.sh:12-16, review R219), so SIGTERM reaches a
 * bash PID 1, which ignores it, unless the platform runs an init process (not documented for SageMaker); then it
 * would lose what it holds at SIGTERM. TGI's SageMaker entrypoint has no exec either: the same 30 s there.
 */
export function servesAfterSigtermSeconds(engine: string, deadlineSeconds: number, platform: ServingPlatform): number {
  const deadline = Math.ceil(deadlineSeconds);
  const killAfter = killAfterSeconds(deadline, platform);
  if (engine === 'vllm') return vllmTimeoutFor(deadline, platform);
  return engine === 'tgi' ? Math.min(secondsFact('tgi.behaviour.graceful-shutdown'), killAfter) : killAfter;
}

/**
 * The engine's own drain setting, as a flag name and value (undefined: none to set). vLLM aborts what it holds at
 * SIGTERM unless `--shutdown-timeout` says how long to wait (fact vllm.flag.shutdown-timeout): it waits for what it
 * holds up to the SIGKILL less its exit margin (vllmShutdownTimeoutSeconds), on EKS (the kubelet's SIGKILL at the end
 * of the pod's grace) and on SageMaker (SIGKILL 30 s after SIGTERM, sagemaker.behaviour.container-stop) alike. TGI
 * drains by itself for up to 90 s (tgi.behaviour.graceful-shutdown); DJL, Triton and custom images are not read.
 */
export function shutdownSetting(
  engine: EngineName,
  contract: ServiceContract,
  platform: ServingPlatform,
): { name: string; value: number } | undefined {
  return engine === 'vllm' ? { name: 'shutdown-timeout', value: vllmShutdownTimeoutSeconds(contract, platform) } : undefined;
}
