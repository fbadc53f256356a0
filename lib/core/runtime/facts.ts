/**
 * The engine facts table: every flag, variable, default, status code, metric name and type, version range and
 * entrypoint behaviour the library relies on, each with where it was read upstream and how sure we are. The runtime
 * binding renders only names that are in this table, and the tests pin every rendered setting against it, engine by
 * engine and platform by platform (test/core/runtime-facts.test.ts). A fact that is not confirmed is marked so, and the
 * design fails safe where it depends on one (docs/runtime-settings.md says what to check).
 *
 * Repositories read as snapshots at the tags below: deepjavalibrary/djl-serving, huggingface/text-generation-inference,
 * aws/amazon-cloudwatch-agent, aws-observability/helm-charts, triton-inference-server/server, boto/botocore,
 * prometheus/prometheus, prometheus/client_python. vllm-project/vllm is too large to read whole: single files were
 * read, and its 0.29.0 admission code only through the pull request and issue threads named below. Its main branch at
 * 6adad087 (2026-08-14, before the 0.29.0 release) was read whole in a fork that merged it (jsboige/vllm@75b227d8):
 * rows citing it say "main, not at 0.29.0".
 */
import { type ServingPlatform } from './platform';

/** How a fact was established. */
export type FactStatus =
  /** Read in the source at the named tag or commit. */
  | 'source'
  /** Read in the project's documentation or a maintainer's pull request / issue thread. */
  | 'docs'
  /** Not confirmed: the library fails safe where it depends on it. */
  | 'not-confirmed';

/** What kind of thing a fact names. */
export type FactKind =
  /** A command-line flag (rendered as an argument on EKS). */
  | 'flag'
  /** A positional command-line argument (rendered ahead of the flags on EKS). */
  | 'argument'
  /** An environment variable the server or its entrypoint reads. */
  | 'variable'
  /** A default value the library relies on. */
  | 'default'
  /** An HTTP status the server answers. */
  | 'status'
  /** A Prometheus metric the library scrapes. */
  | 'metric'
  /** A release that introduced or changed a behaviour. */
  | 'version'
  /** What an image's entrypoint does with its arguments and variables. */
  | 'entrypoint'
  /** A behaviour of the server the library sizes or checks against. */
  | 'behaviour'
  /** An HTTP path the server answers: its liveness and readiness routes (EKS probes, the target group's health check). */
  | 'path';

/** Who a fact is about: an engine, or something the platform runs around it. */
export type FactSubject = 'vllm' | 'tgi' | 'djl-lmi' | 'triton' | 'any-engine' | 'sagemaker' | 'cloudwatch-agent';

export interface EngineFact {
  /** Stable key, e.g. `tgi.variable.MAX_BATCH_SIZE`. */
  readonly id: string;
  readonly subject: FactSubject;
  readonly kind: FactKind;
  /** The flag (without dashes), variable, metric or status name; for a path, `live` or `ready`. */
  readonly name: string;
  /** Platforms it holds on. @default - both */
  readonly platforms?: readonly ServingPlatform[];
  /** Releases it holds for: from `since` (inclusive) and before `until` (exclusive). @default - every supported release */
  readonly since?: string;
  readonly until?: string;
  /** The default, status or path the library relies on, when there is one. */
  readonly value?: string | number;
  /** Prometheus type of a metric. */
  readonly metricType?: 'counter' | 'gauge';
  /** What the library relies on, in one sentence. */
  readonly statement: string;
  /** repository@tag path:line, or the documentation page / thread. */
  readonly source: string;
  readonly status: FactStatus;
}

const DJL = 'deepjavalibrary/djl-serving@v0.35.0';
const TGI = 'huggingface/text-generation-inference@v3.3.7';
const TGI2 = 'huggingface/text-generation-inference@v2.0.0';
const AGENT = 'aws/amazon-cloudwatch-agent@v1.300070.0';
const VLLM_QUEUE_PR = 'https://github.com/vllm-project/vllm/pull/49445 (opened 2026-07-22, approved 2026-08-31)';
const VLLM_BURST_ISSUE = 'https://github.com/vllm-project/vllm/issues/58192 (open; reported against the v0.29.0 tag)';
/** vLLM's main branch (the merge of PR #51655), read whole in a fork that merged it (jsboige/vllm@75b227d8). */
const VLLM_MAIN = 'vllm-project/vllm@6adad087 (main, 2026-08-14; not at the 0.29.0 tag)';
const VLLM_DOCS = 'https://docs.vllm.ai/en/latest/configuration/engine_args.html (vllm/config/scheduler.py, cache.py, parallel.py, model.py)';
const DLC_VLLM = 'aws/deep-learning-containers@cb035a10 vllm/build_artifacts/sagemaker_entrypoint.sh';
const SM_RUN = 'https://docs.aws.amazon.com/sagemaker/latest/dg/your-algorithms-inference-code.html ("docker run <image> serve")';
const XDG = 'https://specifications.freedesktop.org/basedir-spec/latest/ (XDG_CACHE_HOME; default $HOME/.cache)';
const VLLM_HEALTH = 'vllm-project/vllm@0001948b vllm/entrypoints/openai/api_server.py (setup_server binds the socket before the engine is built; ' +
  'run_server_worker builds the engine client, then build_and_serve -> serve_http, where uvicorn starts listening); ' +
  'vllm/entrypoints/serve/instrumentator/health.py (file index, several main-branch versions). Neither file is in the index at the v0.29.0 tag ' +
  '(98dff2a8, vllm-project/vllm-ascend#16393)';
const TGI_HEALTH = `${TGI} router/src/server.rs:218-241 (health), 2238,2241-2242 (/, /health, /ping), 2322-2329 (bind, then serve), ` +
  'router/src/infer/mod.rs:87,357-364, backends/v3/src/backend.rs:105-117, backends/v3/src/lib.rs:111-135 (warm-up before serving), ' +
  `launcher/src/main.rs:1239-1241,1664-1670,2294,2317 (the webserver starts once every shard is ready); ${TGI2} router/src/server.rs:116-127,1385-1386, router/src/main.rs:313,369`;
const DJL_PING = `${DJL} serving/src/main/java/ai/djl/serving/http/InferenceRequestHandler.java:69-71,111-139, models/ModelManager.java:392-443, ` +
  'ModelServer.java:203,221-224 (models loaded before the server binds),378-402, util/ConfigManager.java:304-306 (wait_model_loading, default true),313-315; ' +
  'deepjavalibrary/djl-serving@v0.27.0 ModelServer.java:202,221-224,462-463, InferenceRequestHandler.java:107-129, ConfigManager.java:227';
const TRITON_HEALTH = 'triton-inference-server/server@v2.71.0 src/http_server.cc:1182,1411-1433,4907-4911, src/main.cc:515-517,535 ' +
  '(endpoints start after the server, and its models, are created), src/command_line_parser.h:113,115, src/command_line_parser.cc:418-422, ' +
  'docs/customization_guide/deploy.md:164-169; triton-inference-server/core@73aad7c (main, 2026-06-09: no release tag in the snapshot) ' +
  'src/server.cc:259-286,396-413,416-475';

const f = (fact: EngineFact): EngineFact => fact;
const eksOnly: readonly ServingPlatform[] = ['eks'];
const smOnly: readonly ServingPlatform[] = ['sagemaker'];

export const ENGINE_FACT_TABLE: readonly EngineFact[] = [
  // ----- vLLM ---------------------------------------------------------------------------------------------------------
  f({ id: 'vllm.version.floor', subject: 'vllm', kind: 'version', name: 'minimum', value: '0.29.0', statement:
    'Oldest release the library renders for: its flags, its bounded queue and its metric names (kv_cache_usage_perc, from PR #18354, ~0.9) are cited at 0.29.0; older releases are not confirmed.',
  source: `${VLLM_QUEUE_PR}; ${VLLM_BURST_ISSUE}; https://github.com/vllm-project/vllm/pull/18354`, status: 'docs' }),
  f({ id: 'vllm.argument.model_tag', subject: 'vllm', kind: 'argument', name: 'model_tag', platforms: eksOnly, statement:
    'The vllm/vllm-openai image\'s ENTRYPOINT is `vllm serve`, which takes the model as its optional positional model_tag (copied over --model). ' +
    '`vllm serve` deprecates --model: it warns "will be removed in a future version" and moves it to the front as the positional, so a release ' +
    'that removes it exits at start on --model; the library passes the model positionally, first. Main, not at 0.29.0; the positional ' +
    'is older than the floor (model_tag in a 0.7.2 log, issue #13150).',
  source: `${VLLM_MAIN} docker/Dockerfile:1055,1063, vllm/entrypoints/openai/cli_args.py:373-378, vllm/entrypoints/cli/serve.py:50-53,165, ` +
    'vllm/utils/argparse_utils.py:251-282; https://github.com/vllm-project/vllm/pull/39518 (merged, at 0.19: "removed in a future version" ' +
    'instead of v0.13), issue #39506; https://github.com/vllm-project/vllm/issues/13150', status: 'source' }),
  f({ id: 'vllm.flag.model', subject: 'vllm', kind: 'flag', name: 'model', platforms: smOnly, statement:
    'The SageMaker DLC runs `python3 -m vllm.entrypoints.openai.api_server`, whose parser takes the model as --model (SM_VLLM_MODEL): it ' +
    'parses a positional model_tag too but never copies it to the model (only `vllm serve` does), and the deprecation is `vllm serve`\'s alone. ' +
    'Main, not at 0.29.0.',
  source: `${DLC_VLLM}:20; ${VLLM_MAIN} vllm/entrypoints/openai/api_server.py:792-804, vllm/engine/arg_utils.py:842, ` +
    'vllm/utils/argparse_utils.py:251',
  status: 'source' }),
  f({ id: 'vllm.flag.port', subject: 'vllm', kind: 'flag', name: 'port', platforms: eksOnly, statement: 'API server port (the SageMaker DLC passes --port 8080 itself).', source: VLLM_DOCS, status: 'docs' }),
  f({ id: 'vllm.flag.max-num-seqs', subject: 'vllm', kind: 'flag', name: 'max-num-seqs', statement: 'Sequences per iteration: the class batch.', source: VLLM_DOCS, status: 'docs' }),
  f({ id: 'vllm.flag.max-num-batched-tokens', subject: 'vllm', kind: 'flag', name: 'max-num-batched-tokens', statement:
    'Tokens per iteration: the class batch tokens. Below max-num-seqs the scheduler config raises ValueError at start (read at a main-branch commit, not at the pinned tag).',
  source: `${VLLM_DOCS}; vllm-project/vllm@f0de1a604cad003379e5bb4dfc3cc5d2a1f25fa8 vllm/config/scheduler.py:250-261`, status: 'docs' }),
  f({ id: 'vllm.flag.tensor-parallel-size', subject: 'vllm', kind: 'flag', name: 'tensor-parallel-size', statement: 'Tensor-parallel degree.', source: VLLM_DOCS, status: 'docs' }),
  f({ id: 'vllm.flag.max-model-len', subject: 'vllm', kind: 'flag', name: 'max-model-len', statement: 'Longest sequence (prompt + output).', source: VLLM_DOCS, status: 'docs' }),
  f({ id: 'vllm.flag.gpu-memory-utilization', subject: 'vllm', kind: 'flag', name: 'gpu-memory-utilization', statement: 'Share of accelerator memory vLLM may take: the memory cap.', source: VLLM_DOCS, status: 'docs' }),
  f({ id: 'vllm.flag.max-num-queued-reqs', subject: 'vllm', kind: 'flag', name: 'max-num-queued-reqs', since: '0.29.0', statement:
    'Cap on in-flight requests (waiting + running) of the API server; past it new requests get 503; a request with n > 1 counts as n slots.',
  source: VLLM_QUEUE_PR, status: 'docs' }),
  f({ id: 'vllm.flag.max-num-queued-tokens', subject: 'vllm', kind: 'flag', name: 'max-num-queued-tokens', since: '0.29.0', statement:
    'Cap on the prompt tokens of requests still in the prefill phase (counted conservatively: the full prompt until prefill ends); past it new requests get 503. Sized as target TTFT x prefill throughput. ' +
    'Read at a main-branch commit, not the tag: a request is admitted while the counted tokens are below the cap (its own prompt is not added first), so the backlog may pass the cap by one prompt; ' +
    'the simulator (lib/sim/class-state.ts admitsQueued) and admitBurst admit only a prompt that fits, one prompt stricter.',
  source: `${VLLM_QUEUE_PR}; vllm/config/scheduler.py max_num_queued_tokens field doc (file index); vllm-project/vllm@eb4d64a3 vllm/v1/engine/async_llm.py (check in add_request before process_inputs), tests/v1/engine/test_admission_control.py (test_tokens_rejects_at_limit, test_tokens_allows_when_under_limit)`, status: 'docs' }),
  f({ id: 'vllm.status.queue-full', subject: 'vllm', kind: 'status', name: 'queue-full', value: 503, since: '0.29.0', statement: 'A request past either admission cap is answered 503.', source: VLLM_QUEUE_PR, status: 'docs' }),
  f({ id: 'vllm.behaviour.burst-bound', subject: 'vllm', kind: 'behaviour', name: 'soft-under-bursts', since: '0.29.0', statement:
    'The cap is checked before the request is rendered and counted only after (the issue); a main-branch commit checks it again when the request is handed to the engine (current + n > cap) and counts it with no await between, which is exact for n = 1, but that second check is not confirmed at the tag (the repository is too large to read whole). ' +
    'The issue\'s own run (300 simultaneous requests, cap 166, no 503) peaked at 88 waiting, so it shows late 503s after rendering rather than an overshoot. Not confirmed either way at 0.29.0: the simulator keeps the bound soft for requests within the render time (a server that admits more than its cap, the less kind model) and the burst check staggers its requests.',
  source: `${VLLM_BURST_ISSUE}; vllm-project/vllm@eb4d64a3 vllm/v1/engine/async_llm.py (_add_request), tests/v1/engine/test_admission_control.py`, status: 'not-confirmed' }),
  f({ id: 'vllm.behaviour.api-server-count', subject: 'vllm', kind: 'behaviour', name: 'api-server-count', value: 1, statement:
    'The caps are counted per API server process; `vllm serve` starts one per data-parallel rank (1 without data parallelism), so one process counts the whole replica.',
  source: `${VLLM_MAIN} vllm/entrypoints/cli/serve.py:109-121 (api_server_count defaults to data_parallel_size), as at main 00a5fdd; ` +
    'https://github.com/vllm-project/vllm/pull/54746', status: 'source' }),
  f({ id: 'vllm.variable.VLLM_HTTP_TIMEOUT_KEEP_ALIVE', subject: 'vllm', kind: 'variable', name: 'VLLM_HTTP_TIMEOUT_KEEP_ALIVE', value: 5, platforms: eksOnly, statement:
    'Seconds the API server (uvicorn) keeps an idle HTTP connection open (default 5): passed as timeout_keep_alive to serve_http. ' +
    'Main, not at 0.29.0.',
  source: `${VLLM_MAIN} vllm/envs.py:109,1116-1119, vllm/entrypoints/openai/api_server.py:684,694,729,739 (serve_http(timeout_keep_alive=...))`,
  status: 'source' }),
  f({ id: 'vllm.variable.VLLM_CACHE_ROOT', subject: 'vllm', kind: 'variable', name: 'VLLM_CACHE_ROOT', statement:
    'vLLM cache root (torch.compile and other caches); defaults to $XDG_CACHE_HOME/vllm or ~/.cache/vllm. Main, not at 0.29.0.',
  source: `${VLLM_MAIN} vllm/envs.py:317-321,693-701`, status: 'source' }),
  f({ id: 'vllm.variable.HF_HOME', subject: 'vllm', kind: 'variable', name: 'HF_HOME', statement: 'Hugging Face hub cache root (tokenizer and config downloads).', source: 'https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables#hfhome', status: 'docs' }),
  f({ id: 'vllm.entrypoint.sagemaker-variables', subject: 'vllm', kind: 'entrypoint', name: 'SM_VLLM_<FLAG>', platforms: smOnly, statement:
    'The vLLM SageMaker DLC turns each SM_VLLM_<X> into --x followed by its value when the value is non-empty, a bare --x when it is empty (a newer DLC also maps true to a bare flag and false to nothing); it starts the API server with --port 8080 and ignores its own arguments.',
  source: `${DLC_VLLM}; newer DLC entrypoint (file index: "booleans: true=flag only, false=skip", empty value -> bare flag)`, status: 'source' }),
  f({ id: 'vllm.entrypoint.sagemaker-serve', subject: 'vllm', kind: 'entrypoint', name: 'serve', platforms: smOnly, statement:
    'SageMaker starts the container as `<image> serve`: only an image whose entrypoint ignores that argument (the DLC) can serve; an image whose ENTRYPOINT is `vllm serve` would load a model named serve.',
  source: `${SM_RUN}; ${DLC_VLLM}`, status: 'docs' }),
  f({ id: 'vllm.metric.num_requests_running', subject: 'vllm', kind: 'metric', name: 'vllm:num_requests_running', metricType: 'gauge',
    statement: 'Requests decoding now (main, not at 0.29.0).',
  source: `${VLLM_MAIN} vllm/v1/metrics/loggers.py:493-497; https://docs.vllm.ai/en/latest/design/metrics.html`, status: 'source' }),
  f({ id: 'vllm.metric.num_requests_waiting', subject: 'vllm', kind: 'metric', name: 'vllm:num_requests_waiting', metricType: 'gauge',
    statement: 'Requests waiting in the engine queue (main, not at 0.29.0).',
  source: `${VLLM_MAIN} vllm/v1/metrics/loggers.py:503-507`, status: 'source' }),
  f({ id: 'vllm.metric.kv_cache_usage_perc', subject: 'vllm', kind: 'metric', name: 'vllm:kv_cache_usage_perc', metricType: 'gauge', statement: 'KV-cache use 0..1 (replaces gpu_cache_usage_perc, PR #18354).', source: 'https://github.com/vllm-project/vllm/pull/18354', status: 'docs' }),
  f({ id: 'vllm.metric.generation_tokens_total', subject: 'vllm', kind: 'metric', name: 'vllm:generation_tokens_total', metricType: 'counter', statement:
    'Counter family vllm:generation_tokens (a prometheus_client Counter); the sample is exposed with _total. Main, not at 0.29.0.',
  source: `${VLLM_MAIN} vllm/v1/metrics/loggers.py:9,445,704-708; prometheus/client_python@v0.25.0`, status: 'source' }),
  f({ id: 'vllm.metric.prompt_tokens_total', subject: 'vllm', kind: 'metric', name: 'vllm:prompt_tokens_total', metricType: 'counter', statement:
    'Counter family vllm:prompt_tokens (a prometheus_client Counter); the sample is exposed with _total. Main, not at 0.29.0.',
  source: `${VLLM_MAIN} vllm/v1/metrics/loggers.py:9,445,670-674`, status: 'source' }),
  f({ id: 'vllm.metric.exposition', subject: 'vllm', kind: 'behaviour', name: 'make_asgi_app', statement:
    '/metrics is prometheus_client make_asgi_app: it answers OpenMetrics when the scraper asks for it (TYPE line without _total), Prometheus text 0.0.4 otherwise (TYPE line with _total).',
  source: 'prometheus/client_python@v0.25.0 prometheus_client/exposition.py:303-305,343-357, openmetrics/exposition.py:62-66, asgi.py:15-24; vLLM mounts Mount("/metrics", make_asgi_app(...))', status: 'source' }),
  f({ id: 'vllm.path.live', subject: 'vllm', kind: 'path', name: 'live', value: '/health', statement:
    'Liveness: /health awaits the engine client\'s check_health and answers 200, or 503 once the engine is dead (EngineDeadError), so a dead engine restarts the pod. ' +
    'Before the model is loaded nothing answers (the socket is bound but not listening). Some main-branch versions also answer 503 while the engine is paused (an admin call the library never makes) and add /live. ' +
    'Not read at the 0.29.0 tag: a release without /health would keep every pod from turning Ready (the startup probe restarts it): fails closed.',
  source: VLLM_HEALTH, status: 'not-confirmed' }),
  f({ id: 'vllm.path.ready', subject: 'vllm', kind: 'path', name: 'ready', value: '/health', statement:
    'Readiness: the API server listens only after the engine client is built (the model loaded), so /health answers nothing while loading and 200 after; ' +
    'a version with a serve warm-up answers 503 until it ends. Not read at the 0.29.0 tag: every version read answers only once the model is loaded; ' +
    'a release that answered 200 earlier would send requests to a loading pod, which no probe here could see (docs/runtime-settings.md says to check).',
  source: VLLM_HEALTH, status: 'not-confirmed' }),

  // ----- TGI ----------------------------------------------------------------------------------------------------------
  f({ id: 'tgi.version.floor', subject: 'tgi', kind: 'version', name: 'minimum', value: '2.0.0', statement:
    'max_input_tokens replaced max_input_length in 2.0; every rendered variable exists from 2.0.0 through 3.3.7.', source: `${TGI2} launcher/src/main.rs:224-307`, status: 'source' }),
  f({ id: 'tgi.variable.MODEL_ID', subject: 'tgi', kind: 'variable', name: 'MODEL_ID', platforms: eksOnly, statement: 'Model path or hub id.', source: `${TGI} launcher/src/main.rs (model_id, #[clap(long, env)])`, status: 'source' }),
  f({ id: 'tgi.variable.PORT', subject: 'tgi', kind: 'variable', name: 'PORT', platforms: eksOnly, value: 3000, statement: 'Serving port (default 3000).', source: `${TGI} launcher/src/main.rs:772-774`, status: 'source' }),
  f({ id: 'tgi.variable.NUM_SHARD', subject: 'tgi', kind: 'variable', name: 'NUM_SHARD', platforms: eksOnly, statement: 'Shards (tensor parallel).', source: `${TGI} launcher/src/main.rs (num_shard)`, status: 'source' }),
  f({ id: 'tgi.variable.MAX_TOTAL_TOKENS', subject: 'tgi', kind: 'variable', name: 'MAX_TOTAL_TOKENS', statement: 'Longest prompt + output of one request.', source: `${TGI} launcher/src/main.rs:694-695`, status: 'source' }),
  f({ id: 'tgi.variable.MAX_INPUT_TOKENS', subject: 'tgi', kind: 'variable', name: 'MAX_INPUT_TOKENS', statement:
    'Longest prompt; must be < MAX_TOTAL_TOKENS (v3.3.7 main.rs:2157-2162). Unset, 2.0 defaults it to min(max_position_embeddings, 4096) - 1 and exits when the prefill budget is below it: the library always renders it.',
  source: `${TGI} launcher/src/main.rs:678-679; ${TGI2} launcher/src/main.rs:1317-1331,1367-1371`, status: 'source' }),
  f({ id: 'tgi.variable.MAX_BATCH_PREFILL_TOKENS', subject: 'tgi', kind: 'variable', name: 'MAX_BATCH_PREFILL_TOKENS', statement:
    'Prefill token budget per batch; must be >= MAX_INPUT_TOKENS (launcher check through 2.3.x; router check in 3.x unless the model supports chunking). Unset, 2.0 defaults it to max_batch_size x max_input_tokens (warm-up then prefills that many tokens) and 3.x to about 4096: the library always renders it (maxBatchTokens, else MAX_INPUT_TOKENS).',
  source: `${TGI2} launcher/src/main.rs:1348-1349,1367-1371; ${TGI} launcher/src/main.rs:2114-2153; ${TGI} backends/v3/src/main.rs:188-189`, status: 'source' }),
  f({ id: 'tgi.variable.MAX_BATCH_TOTAL_TOKENS', subject: 'tgi', kind: 'variable', name: 'MAX_BATCH_TOTAL_TOKENS', statement:
    'Token budget of the batch; ignored (with a "deprecated" warning) for flash-attention models, which infer it from memory: only non-flash models honour it. '
    + 'Must be >= MAX_BATCH_PREFILL_TOKENS: 2.0 checks the value passed for every model, 3.x the budget the backend reports.',
  source: `${TGI} backends/v3/src/lib.rs:86-98, backends/v3/src/main.rs:191-192; ${TGI2} router/src/main.rs:334, launcher/src/main.rs:1412-1417`, status: 'source' }),
  f({ id: 'tgi.variable.MAX_BATCH_SIZE', subject: 'tgi', kind: 'variable', name: 'MAX_BATCH_SIZE', statement:
    'Requests per batch; the batching loop never grows a batch past it (flash models included): the class batch bound.',
  source: `${TGI} launcher/src/main.rs:758-760, backends/v3/src/backend.rs:198; ${TGI2} router/src/infer.rs:414`, status: 'source' }),
  f({ id: 'tgi.variable.CUDA_MEMORY_FRACTION', subject: 'tgi', kind: 'variable', name: 'CUDA_MEMORY_FRACTION', statement: 'Share of GPU memory: the memory cap (CUDA only).', source: `${TGI} launcher/src/main.rs (cuda_memory_fraction)`, status: 'source' }),
  f({ id: 'tgi.variable.MAX_CONCURRENT_REQUESTS', subject: 'tgi', kind: 'variable', name: 'MAX_CONCURRENT_REQUESTS', value: 128, statement:
    'In-flight requests; past it the router answers 429 at once (a semaphore try_acquire): a hard bound, bursts included.',
  source: `${TGI} launcher/src/main.rs:645-649, router/src/infer/mod.rs:114-117`, status: 'source' }),
  f({ id: 'tgi.status.overloaded', subject: 'tgi', kind: 'status', name: 'overloaded', value: 429, statement: 'InferError::Overloaded is answered 429.', source: `${TGI} router/src/server.rs:2408`, status: 'source' }),
  f({ id: 'tgi.variable.HF_HOME', subject: 'tgi', kind: 'variable', name: 'HF_HOME', statement: 'Hub cache root; the image sets HF_HOME=/data, which is not writable under a read-only root.', source: `${TGI} Dockerfile:147`, status: 'source' }),
  f({ id: 'tgi.entrypoint.sagemaker', subject: 'tgi', kind: 'entrypoint', name: 'sagemaker-entrypoint.sh', platforms: smOnly, statement:
    'Exits unless HF_MODEL_ID is set (it becomes MODEL_ID); SM_NUM_GPUS becomes NUM_SHARD; runs text-generation-launcher --port 8080 and no other argument (the container\'s arguments never reach the launcher).',
  source: `${TGI} sagemaker-entrypoint.sh:3-25, Dockerfile:234-240 (the sagemaker target's ENTRYPOINT); ${TGI2} the same`, status: 'source' }),
  f({ id: 'tgi.entrypoint.launcher-variables', subject: 'tgi', kind: 'entrypoint', name: '<LAUNCHER_OPTION>', statement:
    'Every launcher option but --env is `#[clap(long, env)]`: --max-batch-prefill-tokens is also the variable MAX_BATCH_PREFILL_TOKENS (the option in upper case, - as _).',
  source: `${TGI} launcher/src/main.rs:579-914; ${TGI2} launcher/src/main.rs:139-415`, status: 'source' }),
  f({ id: 'tgi.entrypoint.args', subject: 'tgi', kind: 'entrypoint', name: 'tgi-entrypoint.sh', platforms: eksOnly, statement:
    'The image\'s ENTRYPOINT runs text-generation-launcher with the container\'s arguments unquoted ($@): an argument with whitespace is split, one with *?[ glob-expanded.',
  source: `${TGI} tgi-entrypoint.sh:6, Dockerfile:242-249; ${TGI2} tgi-entrypoint.sh:5, Dockerfile:246-251`, status: 'source' }),
  f({ id: 'tgi.variable.HF_MODEL_ID', subject: 'tgi', kind: 'variable', name: 'HF_MODEL_ID', platforms: smOnly, statement: 'Required by the SageMaker entrypoint.', source: `${TGI} sagemaker-entrypoint.sh:3-7`, status: 'source' }),
  f({ id: 'tgi.variable.SM_NUM_GPUS', subject: 'tgi', kind: 'variable', name: 'SM_NUM_GPUS', platforms: smOnly, statement: 'Becomes NUM_SHARD in the SageMaker entrypoint.', source: `${TGI} sagemaker-entrypoint.sh:13-15`, status: 'source' }),
  f({ id: 'tgi.metric.queue_size', subject: 'tgi', kind: 'metric', name: 'tgi_queue_size', metricType: 'gauge', statement: 'Requests waiting.', source: `${TGI} backends/v3/src/queue.rs:143-158, router/src/server.rs:2047`, status: 'source' }),
  f({ id: 'tgi.metric.batch_current_size', subject: 'tgi', kind: 'metric', name: 'tgi_batch_current_size', metricType: 'gauge', statement: 'Requests in the running batch.', source: `${TGI} backends/v3/src/backend.rs:170`, status: 'source' }),
  f({ id: 'tgi.metric.request_failure', subject: 'tgi', kind: 'metric', name: 'tgi_request_failure', metricType: 'counter', statement:
    'Counts every 429 with label err="overloaded" (not scraped: the platform 4XX metric counts the same rejections on both platforms).', source: `${TGI} router/src/infer/mod.rs:117`, status: 'source' }),
  f({ id: 'tgi.behaviour.idle-connections', subject: 'tgi', kind: 'behaviour', name: 'keep-alive', platforms: eksOnly, statement:
    'The router never closes an idle keep-alive connection: axum 0.7.9 `serve` builds hyper-util\'s auto builder without a timer, and hyper 1.6.0 drops its 30 s header_read_timeout when no timer is set (it would otherwise also bound the wait for the next request). No setting exists. v2.0.0: axum 0.6.20 on hyper 0.14.28, no header read timeout by default.',
  source: `${TGI} router/src/server.rs:2322-2332 and Cargo.lock (axum 0.7.9, hyper 1.6.0, hyper-util 0.1.10); tokio-rs/axum@axum-v0.7.9 axum/src/serve.rs:423-424; hyperium/hyper-util@v0.1.10 src/server/conn/auto/mod.rs:85-96; hyperium/hyper@v1.6.0 src/server/conn/http1.rs:236,242,461-466, src/common/time.rs:63-71; ${TGI2} router/src/server.rs:1485-1489`, status: 'source' }),
  f({ id: 'tgi.behaviour.metrics-port', subject: 'tgi', kind: 'behaviour', name: 'prometheus_port', value: 9000, since: '3.3.0', statement:
    'From 3.3.0 the router also serves metrics on PROMETHEUS_PORT (9000); /metrics stays on the serving port, which the library scrapes.', source: `${TGI} router/src/server.rs:1970-1975,2243 (commit 02715dc5)`, status: 'source' }),
  f({ id: 'tgi.path.live', subject: 'tgi', kind: 'path', name: 'live', value: '/health', statement:
    'Liveness: /health (also / and /ping) answers 200 while the backend is healthy, 503 when it is not: after a failed generation it asks the shards for a one-token model check, ' +
    'otherwise for a small allocation on each device (gRPC Health). Same route and codes in 2.0.0.',
  source: TGI_HEALTH, status: 'source' }),
  f({ id: 'tgi.path.ready', subject: 'tgi', kind: 'path', name: 'ready', value: '/health', statement:
    'Readiness: the launcher starts the router only once every shard has loaded the model, and the router binds its port only after the warm-up, so /health answers nothing while loading and 200 after.',
  source: TGI_HEALTH, status: 'source' }),

  // ----- DJL Serving / LMI ---------------------------------------------------------------------------------------------
  f({ id: 'djl-lmi.version.floor', subject: 'djl-lmi', kind: 'version', name: 'minimum', value: '0.27.0', statement:
    'option.gpu_memory_utilization / option.max_model_len (vLLM backend) exist from 0.27.0.', source: 'deepjavalibrary/djl-serving serving/docs/lmi/user_guides/vllm_user_guide.md', status: 'docs' }),
  f({ id: 'djl-lmi.variable.OPTION_', subject: 'djl-lmi', kind: 'entrypoint', name: 'OPTION_<NAME>', statement: 'Every non-empty OPTION_<NAME> becomes model option option.<name>.', source: `${DJL} wlm/src/main/java/ai/djl/serving/wlm/ModelInfo.java:893-915`, status: 'source' }),
  f({ id: 'djl-lmi.variable.SERVING_', subject: 'djl-lmi', kind: 'entrypoint', name: 'SERVING_<KEY>', statement: 'Every SERVING_<KEY> becomes server property <key>.', source: `${DJL} serving/src/main/java/ai/djl/serving/util/ConfigManager.java:133-138`, status: 'source' }),
  f({ id: 'djl-lmi.variable.OPTION_MODEL_ID', subject: 'djl-lmi', kind: 'variable', name: 'OPTION_MODEL_ID', statement: 'Model location.', source: 'deepjavalibrary/djl-serving serving/docs/lmi/deployment_guide/configurations.md', status: 'docs' }),
  f({ id: 'djl-lmi.variable.SERVING_INFERENCE_ADDRESS', subject: 'djl-lmi', kind: 'variable', name: 'SERVING_INFERENCE_ADDRESS', platforms: eksOnly, statement: 'Listen address (SageMaker: 8080 by default).', source: 'deepjavalibrary/djl-serving serving/docs/configurations_global.md', status: 'docs' }),
  f({ id: 'djl-lmi.variable.OPTION_MAX_ROLLING_BATCH_SIZE', subject: 'djl-lmi', kind: 'variable', name: 'OPTION_MAX_ROLLING_BATCH_SIZE', value: 32, statement:
    'Requests in the rolling batch; the worker waits (up to predict_timeout, 120 s) when it is full.', source: `${DJL} engines/python/src/main/java/ai/djl/python/engine/RollingBatch.java:73,217-236`, status: 'source' }),
  f({ id: 'djl-lmi.variable.OPTION_MAX_ROLLING_BATCH_PREFILL_TOKENS', subject: 'djl-lmi', kind: 'variable', name: 'OPTION_MAX_ROLLING_BATCH_PREFILL_TOKENS', statement:
    'The vLLM rolling batch passes option.max_rolling_batch_prefill_tokens on as vLLM\'s max_num_batched_tokens (lmi-dist too before 0.35.0; TensorRT-LLM reads option.max_num_tokens instead; NeuronX: not read).',
  source: `${DJL} engines/python/setup/djl_python/properties_manager/vllm_rb_properties.py:62-64,88,197-199; deepjavalibrary/djl-serving@v0.29.0 ` +
    'rolling_batch/rolling_batch_vllm_utils.py:247, lmi_dist_rolling_batch.py:74; deepjavalibrary/djl-serving@v0.27.0 rolling_batch/vllm_rolling_batch.py:56; ' +
    'v0.29.0 serving/docs/lmi/user_guides/trt_llm_user_guide.md:44', status: 'source' }),
  f({ id: 'djl-lmi.entrypoint.serve', subject: 'djl-lmi', kind: 'entrypoint', name: 'dockerd-entrypoint.sh', statement:
    'ENTRYPOINT dockerd-entrypoint.sh, CMD ["serve"]: on serve it runs djl-serving with the arguments after it; any other first argument is run as a shell command (eval). ' +
    'SageMaker passes serve alone; on EKS container arguments replace the CMD. The server reads its settings from OPTION_* and SERVING_* variables.',
  source: `${DJL} serving/docker/lmi.Dockerfile:26,61-62, dockerd-entrypoint-with-cuda-compat.sh:65-84, Dockerfile:53-54, dockerd-entrypoint.sh:10-32; ` +
    'deepjavalibrary/djl-serving@v0.29.0 pytorch-inf2.Dockerfile:57-58, dockerd-entrypoint.sh:12-24; ' +
    'https://kubernetes.io/docs/tasks/inject-data-application/define-command-argument-container/ (args without command replace the image CMD)', status: 'source' }),
  f({ id: 'djl-lmi.variable.OPTION_TENSOR_PARALLEL_DEGREE', subject: 'djl-lmi', kind: 'variable', name: 'OPTION_TENSOR_PARALLEL_DEGREE', statement: 'Tensor-parallel degree.', source: `${DJL} wlm/src/main/java/ai/djl/serving/wlm/LmiConfigRecommender.java:87-106`, status: 'source' }),
  f({ id: 'djl-lmi.variable.OPTION_MAX_MODEL_LEN', subject: 'djl-lmi', kind: 'variable', name: 'OPTION_MAX_MODEL_LEN', statement: 'Longest sequence (vLLM backend, GPU).', source: 'deepjavalibrary/djl-serving serving/docs/lmi/user_guides/vllm_user_guide.md', status: 'docs' }),
  f({ id: 'djl-lmi.variable.OPTION_N_POSITIONS', subject: 'djl-lmi', kind: 'variable', name: 'OPTION_N_POSITIONS', statement: 'Longest sequence (NeuronX).', source: 'deepjavalibrary/djl-serving serving/docs/lmi/configurations_large_model_inference_containers.md', status: 'docs' }),
  f({ id: 'djl-lmi.variable.OPTION_GPU_MEMORY_UTILIZATION', subject: 'djl-lmi', kind: 'variable', name: 'OPTION_GPU_MEMORY_UTILIZATION', statement: 'Memory cap (vLLM backend, GPU).', source: 'deepjavalibrary/djl-serving serving/docs/lmi/user_guides/vllm_user_guide.md', status: 'docs' }),
  f({ id: 'djl-lmi.variable.SERVING_JOB_QUEUE_SIZE', subject: 'djl-lmi', kind: 'variable', name: 'SERVING_JOB_QUEUE_SIZE', value: 1000, statement:
    'Jobs waiting for the worker; runJob rejects when the queue is full (or has one place left while every worker is busy). The worker takes a job off the queue before it predicts, so the queue does not count the rolling batch.',
  source: `${DJL} wlm/src/main/java/ai/djl/serving/wlm/WorkLoadManager.java:113-123, PermanentBatchAggregator.java:48-55, util/WlmConfigManager.java:18`, status: 'source' }),
  f({ id: 'djl-lmi.status.queue-full', subject: 'djl-lmi', kind: 'status', name: 'queue-full', value: 503, statement: 'WlmCapacityException is answered throttle_error_http_code, 503 by default.', source: `${DJL} serving/src/main/java/ai/djl/serving/http/InferenceRequestHandler.java:508-512, util/ConfigManager.java:496-497`, status: 'source' }),
  f({ id: 'djl-lmi.behaviour.in-flight-bound', subject: 'djl-lmi', kind: 'behaviour', name: 'in-flight-bound', statement:
    'In rolling-batch (non-async) mode one worker per device takes jobs off the queue into the rolling batch: in flight <= max_rolling_batch_size + job_queue_size before a 503.',
  source: `${DJL} RollingBatch.java:217-247, WorkLoadManager.java:113-123, wlm/src/main/java/ai/djl/serving/wlm/ModelInfo.java:476-505 (one Python worker per device)`, status: 'source' }),
  f({ id: 'djl-lmi.variable.OPTION_ASYNC_MODE', subject: 'djl-lmi', kind: 'variable', name: 'OPTION_ASYNC_MODE', since: '0.35.0', statement:
    'From 0.35.0 (LMI v17) the vLLM backend defaults to async mode, where AsyncRequestManager.addInput returns at once and SERVING_JOB_QUEUE_SIZE never fills: the library sets it to false.',
  source: `${DJL} LmiConfigRecommender.java:69-71 (commit fc651296, first tag v0.35.0), engines/python/.../AsyncRequestManager.java:59-72, PyModel.java:153-154`, status: 'source' }),
  f({ id: 'djl-lmi.variable.OPTION_ROLLING_BATCH', subject: 'djl-lmi', kind: 'variable', name: 'OPTION_ROLLING_BATCH', statement:
    'A value other than auto is kept as given (vllm: rolling batch on the vLLM backend, GPU); auto with NeuronX (tnx) features becomes tnx, while the NeuronX default without it is disable (no rolling batch).',
  source: `${DJL} LmiConfigRecommender.java:56-78; deepjavalibrary/djl-serving@v0.29.0 LmiConfigRecommender.java:100-130`, status: 'source' }),
  f({ id: 'djl-lmi.behaviour.neuron-0.35', subject: 'djl-lmi', kind: 'behaviour', name: 'neuron-rolling-batch', since: '0.35.0', statement:
    'Which rolling batch a NeuronX image of 0.35.0 or later runs is not confirmed (no tnx branch in its recommender): the library refuses a bounded queue for it.',
  source: `${DJL} LmiConfigRecommender.java (no isTnxEnabled); tags 0.30.0-0.34.0 are not in the snapshot`, status: 'not-confirmed' }),
  f({ id: 'djl-lmi.behaviour.idle-connections', subject: 'djl-lmi', kind: 'behaviour', name: 'keep-alive', platforms: eksOnly, statement:
    'The Netty pipeline has no idle or read timeout handler (ssl, HttpServerCodec, HttpObjectAggregator, handlers) and the server socket only sets SO_KEEPALIVE: an idle keep-alive connection is never closed. No setting exists (max_idle_time scales idle workers, not connections). Read at 0.27.0 and 0.35.0; tags 0.30.0-0.34.0 are not in the snapshot.',
  source: `${DJL} serving/src/main/java/ai/djl/serving/ServerInitializer.java:64-91, ModelServer.java:330-334; deepjavalibrary/djl-serving@v0.27.0 ServerInitializer.java:64-85`, status: 'source' }),
  f({ id: 'djl-lmi.path.live', subject: 'djl-lmi', kind: 'path', name: 'live', value: '/ping', statement:
    'Liveness: /ping answers 200 while every model is loaded, 500 when one FAILED (the server stops 3 s after a failed load), 503 once an error_rate_* limit is exceeded (none is set by default). ' +
    'A worker pool below its size (a dead Python worker) still answers 200 unless SAGEMAKER_HEALTH_CHECK_OVERRIDE is set.',
  source: DJL_PING, status: 'source' }),
  f({ id: 'djl-lmi.path.ready', subject: 'djl-lmi', kind: 'path', name: 'ready', value: '/ping', statement:
    'Readiness: with wait_model_loading (default true; the library never renders SERVING_WAIT_MODEL_LOADING) the server binds its port only after every startup model is loaded, ' +
    'so /ping answers nothing while loading and 200 after. With it false, /ping would answer 200 (207 with allow_multi_status) while a model is still PENDING.',
  source: DJL_PING, status: 'source' }),
  f({ id: 'djl-lmi.variable.DJL_CACHE_DIR', subject: 'djl-lmi', kind: 'variable', name: 'DJL_CACHE_DIR', statement: 'DJL cache (default ~/.djl.ai, or java.io.tmpdir when HOME is not writable).', source: 'deepjavalibrary/djl@02b4111 api/src/main/java/ai/djl/util/Utils.java getCacheDir()', status: 'source' }),
  f({ id: 'djl-lmi.variable.HF_HOME', subject: 'djl-lmi', kind: 'variable', name: 'HF_HOME', statement: 'Hub cache root of the Python handlers.', source: 'https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables#hfhome', status: 'docs' }),

  // ----- Triton -------------------------------------------------------------------------------------------------------
  f({ id: 'triton.flag.model-repository', subject: 'triton', kind: 'flag', name: 'model-repository', platforms: eksOnly, statement: 'Model repository path.', source: 'triton-inference-server/server@v2.71.0 src/command_line_parser.cc', status: 'source' }),
  f({ id: 'triton.flag.http-port', subject: 'triton', kind: 'flag', name: 'http-port', platforms: eksOnly, statement: 'HTTP port of the inference API.', source: 'triton-inference-server/server@v2.71.0 src/command_line_parser.cc', status: 'source' }),
  f({ id: 'triton.variable.SAGEMAKER_TRITON_ADDITIONAL_ARGS', subject: 'triton', kind: 'variable', name: 'SAGEMAKER_TRITON_ADDITIONAL_ARGS', platforms: smOnly, since: '2.36.0', statement:
    'SageMaker runs the image\'s serve script (COPY docker/sagemaker/serve /usr/bin/ in images built with the sagemaker endpoint), which appends this variable to the ' +
    'tritonserver command line unquoted (split at whitespace, glob-expanded), after the flags it sets itself (--model-repository=/opt/ml/model/, --allow-sagemaker=true, ' +
    '--allow-http=false, --model-control-mode=explicit, --load-model). From commit 7fb48588, first tag v2.36.0.',
  source: 'triton-inference-server/server@v2.71.0 docker/sagemaker/serve:63,132-134,159,180,183, build.py:1243-1247', status: 'source' }),
  f({ id: 'triton.behaviour.queue', subject: 'triton', kind: 'behaviour', name: 'max_queue_size', statement:
    'The bounded queue is max_queue_size in each model config.pbtxt (0 = unbounded); no flag sets it, so the library cannot bound it.', source: 'triton-inference-server/server@v2.71.0 docs/user_guide/batcher.md:183; core RequestQueue::Enqueue', status: 'source' }),
  f({ id: 'triton.status.queue-full', subject: 'triton', kind: 'status', name: 'queue-full', value: 503, statement: '"Exceeds maximum queue size" is UNAVAILABLE, answered 503 over HTTP.', source: 'triton-inference-server/server@v2.71.0 src/http_server.cc:111-112; core RequestQueue::Enqueue', status: 'source' }),
  f({ id: 'triton.behaviour.idle-connections', subject: 'triton', kind: 'behaviour', name: 'keep-alive', platforms: eksOnly, statement:
    'The HTTP server never calls evhtp_set_timeouts (libevhtp then sets no read or write timeout) and no flag sets one (the keepalive flags are gRPC\'s): an idle keep-alive connection is never closed. Triton\'s libevhtp copy read at r25.07, not r26.07.',
  source: 'triton-inference-server/server@v2.71.0 src/http_server.cc:211-220, src/command_line_parser.cc:482-508; triton-inference-server/third_party@r25.07 libevhtp/libevhtp/evhtp.c:2730-2748,5356-5390', status: 'source' }),
  f({ id: 'triton.path.live', subject: 'triton', kind: 'path', name: 'live', value: '/v2/health/live', statement:
    'Liveness: 200 while the server has initialised and is not exiting, whatever its models\' state; 400 otherwise (503 while exiting).',
  source: TRITON_HEALTH, status: 'source' }),
  f({ id: 'triton.path.ready', subject: 'triton', kind: 'path', name: 'ready', value: '/v2/health/ready', statement:
    'Readiness: 200 only while every model is READY (--strict-readiness, default true) and its backend instances pass their runtime check (core main; the tag\'s deploy.md ' +
    'states the models part), 400 otherwise. In the default model-control mode the models load before the endpoints start and --exit-on-error (default true) exits on a failed load.',
  source: TRITON_HEALTH, status: 'source' }),
  f({ id: 'triton.metric.pending_request_count', subject: 'triton', kind: 'metric', name: 'nv_inference_pending_request_count', metricType: 'gauge', statement: 'Requests awaiting execution; metrics on port 8002.', source: 'triton-inference-server/server@v2.71.0 docs/user_guide/metrics.md:33-47,101', status: 'source' }),

  // ----- every engine -------------------------------------------------------------------------------------------------
  f({ id: 'any.variable.HOME', subject: 'any-engine', kind: 'variable', name: 'HOME', statement:
    'Home of the server user: ~/.cache, ~/.triton, ~/.djl.ai and the like live under it; the EKS root filesystem is read-only and uid 1000 has no home.', source: XDG, status: 'docs' }),
  f({ id: 'any.variable.USER', subject: 'any-engine', kind: 'variable', name: 'USER', platforms: eksOnly, statement:
    'Login name: Python\'s getpass.getuser() returns the first of LOGNAME, USER, LNAME, USERNAME that is set, and only then asks pwd.getpwuid(), ' +
    'which raises KeyError for a uid without a passwd entry (uid 1000 in the engine images); PyTorch calls it on import to name its Inductor cache ' +
    '(fixed in torch 2.13, which vLLM 0.29.0 is built against; not in the torch of older vLLM, TGI or DJL images). Rendered where the platform picks the uid (EKS).',
  source: 'https://docs.python.org/3/library/getpass.html#getpass.getuser; pytorch/pytorch#140765 (torch/_inductor/runtime/cache_dir_utils.py default_cache_dir), ' +
    '#184208 (the fallback, torch 2.13: vllm-project/vllm#44579 review); vllm-project/vllm#44548, #46734 ("TORCHINDUCTOR_CACHE_DIR alone is not sufficient"); ' +
    'ai-dynamo/dynamo#12457 (vllm/vllm-openai at runAsUser 1000); NVIDIA-NeMo/RL#4080 (vLLM 0.29.0 wheels built against torch 2.13)', status: 'docs' }),
  f({ id: 'any.variable.LOGNAME', subject: 'any-engine', kind: 'variable', name: 'LOGNAME', platforms: eksOnly, statement:
    'Login name, the first variable getpass.getuser() reads: set with USER so that both name the same account. Rendered where the platform picks the uid (EKS).',
  source: 'https://docs.python.org/3/library/getpass.html#getpass.getuser', status: 'docs' }),
  f({ id: 'any.variable.XDG_CACHE_HOME', subject: 'any-engine', kind: 'variable', name: 'XDG_CACHE_HOME', statement: 'User cache root; vLLM and Hugging Face libraries read it.', source: XDG, status: 'docs' }),
  f({ id: 'any.variable.NEURON_COMPILE_CACHE_URL', subject: 'any-engine', kind: 'variable', name: 'NEURON_COMPILE_CACHE_URL', statement:
    'Neuron compiler cache (default /var/tmp/neuron-compile-cache, read-only under a read-only root). Rendered on Neuron classes only; pointing it at a writable directory is harmless if a release ignores it.',
  source: 'https://awsdocs-neuron.readthedocs-hosted.com (Neuron persistent cache); not read in source', status: 'not-confirmed' }),
  f({ id: 'any.behaviour.cache-size', subject: 'any-engine', kind: 'behaviour', name: 'engine-cache-size', value: 10, statement:
    'GiB the library reserves for engine caches (compiled graphs, kernels, tokenizer files) on the writable cache volume; an estimate, not measured upstream.', source: 'estimate (torch.compile / Neuron caches are typically a few GiB)', status: 'not-confirmed' }),

  // ----- SageMaker ----------------------------------------------------------------------------------------------------
  f({ id: 'sagemaker.entrypoint.serve', subject: 'sagemaker', kind: 'entrypoint', name: 'serve', statement: 'SageMaker runs the container as `docker run <image> serve`, listening on 8080.', source: SM_RUN, status: 'docs' }),
  f({ id: 'sagemaker.behaviour.model-data-version', subject: 'sagemaker', kind: 'behaviour', name: 'S3ModelDataSource', statement:
    'S3ModelDataSource has S3Uri, S3DataType, CompressionType, ModelAccessConfig, HubAccessConfig, ManifestS3Uri, ETag, ManifestEtag: no VersionId, so SageMaker downloads the current object at every scale-out. ETag is not in CloudFormation and whether SageMaker enforces it is not documented.',
  source: 'boto/botocore@1.43.67 botocore/data/sagemaker/2017-07-24/service-2.json S3ModelDataSource; aws-cdk-lib CfnModel.S3DataSourceProperty', status: 'source' }),
  f({ id: 'sagemaker.behaviour.writable-tmp', subject: 'sagemaker', kind: 'behaviour', name: '/tmp', statement:
    'The container can write /tmp (SageMaker mounts /opt/ml/model read-only); the library puts caches there. Its size is the instance storage SageMaker gives the container, not declared by the library. ' +
    'Read-only /opt/ml/model is reported, not documented: AWS\'s pages say where model data lands (a model.tar.gz unpacked, uncompressed S3Object or S3Prefix data placed as files), not its mode.',
  source: 'https://docs.aws.amazon.com/sagemaker/latest/dg/your-algorithms-inference-code.html, API_S3ModelDataSource.html, large-model-inference-uncompressed.html; ' +
    'autogluon/autogluon#3064 (/opt/ml/model read-only); aws/sagemaker-python-sdk#5698 (DJL LMI: /opt/ml/model read-only); ' +
    'awslabs/llm-hosting-container#27 (TGI from a model.tar.gz: convert the weights to safetensors first)', status: 'not-confirmed' }),
  f({ id: 'sagemaker.metric.ModelSetupTime', subject: 'sagemaker', kind: 'metric', name: 'ModelSetupTime', statement:
    'Documented for serverless endpoints only ("time it takes to launch new compute resources for a serverless endpoint"): not read for instance variants.', source: 'https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_RecommendationMetrics.html', status: 'docs' }),

  // ----- CloudWatch agent ---------------------------------------------------------------------------------------------
  f({ id: 'cloudwatch-agent.version', subject: 'cloudwatch-agent', kind: 'version', name: 'agent', value: '1.300070.0', statement:
    'The amazon-cloudwatch-observability add-on v6.4.0 runs agent 1.300070.0b1586.', source: 'aws-observability/helm-charts@93a934e (release v6.4.0) charts/amazon-cloudwatch-observability/values.yaml:728-729', status: 'source' }),
  f({ id: 'cloudwatch-agent.behaviour.renamed-counter', subject: 'cloudwatch-agent', kind: 'behaviour', name: 'renamed-counter-type', statement:
    'The type of a scraped metric is looked up by its name before relabelling; for a renamed metric the _total-stripping lookup never runs, so a renamed counter whose TYPE line lacks _total (OpenMetrics, the default first protocol) gets no type and is dropped; with Prometheus text 0.0.4 the TYPE line carries _total and the type is kept.',
  source: `${AGENT} plugins/inputs/prometheus/metrics_type_handler.go:157-191; prometheus/prometheus@v3.0.1 scrape/scrape.go:1127-1141, config/config.go:526-531`, status: 'source' }),
  f({ id: 'cloudwatch-agent.flag.scrape_protocols', subject: 'cloudwatch-agent', kind: 'flag', name: 'scrape_protocols', value: 'PrometheusText0.0.4', statement:
    'Per-job scrape_protocols; the agent loads its Prometheus file with config.LoadFile, so the field is honoured: every model-server job asks for PrometheusText0.0.4.',
  source: `prometheus/prometheus@v3.0.1 config/config.go:669; ${AGENT} plugins/inputs/prometheus/start.go:388 (go.mod prometheus v0.300.1)`, status: 'source' }),
  f({ id: 'cloudwatch-agent.behaviour.types', subject: 'cloudwatch-agent', kind: 'behaviour', name: 'kept-types', statement: 'Only gauges, counters and summaries are kept; histograms and untyped metrics are dropped.', source: `${AGENT} plugins/inputs/prometheus/metrics_filter.go:23-26`, status: 'source' }),
];

/** The fact with this id (throws on an unknown id: a typo must fail a test, not render nothing). */
export function engineFact(id: string): EngineFact {
  const fact = ENGINE_FACT_TABLE.find((x) => x.id === id);
  if (!fact) throw new Error(`internal: no engine fact '${id}'`);
  return fact;
}

/** The numeric value of a fact (status codes, defaults). */
export function factNumber(id: string): number {
  const value = engineFact(id).value;
  if (typeof value !== 'number') throw new Error(`internal: engine fact '${id}' has no numeric value`);
  return value;
}

/** The string value of a fact (versions, protocol names). */
export function factString(id: string): string {
  const value = engineFact(id).value;
  if (typeof value !== 'string') throw new Error(`internal: engine fact '${id}' has no string value`);
  return value;
}
