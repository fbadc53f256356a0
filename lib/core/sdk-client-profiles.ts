/**
 * The one place that says how the package's AWS SDK v3 clients are configured: a profile per kind of caller, each a
 * plain options object (no SDK import, so pure code may hold it), spread into every client's constructor. Every
 * `new <X>Client(...)` in lambda/, bin/ and lib/ is built from one of them (test/core/sdk-client-profiles.test.ts scans
 * the sources for it).
 *
 * Two profiles, because two kinds of caller:
 * - LAMBDA_CLIENT_OPTIONS, the reconciler and the artifact verifier: a function with a hard deadline and its own retry
 *   layer (lib/core/reconciler/retry.ts), so one SDK attempt per call and short per-attempt bounds that let four
 *   attempts fit in a run's budget; a stalled response body is cut by the run's deadline signal.
 * - cliClientConfig, the commands (verify, game-day, sign-model): an operator waits at a terminal, the calls are
 *   control-plane calls that can take seconds, and no deadline of their own stops a stalled body, so longer bounds,
 *   the SDK's own retries, and a socket inactivity bound that goes on covering the response's body. A write that may
 *   not be sent twice takes the same bounds with one attempt (`singleAttempt`).
 *
 * What the options mean, read at the handler the clients bundle (@smithy/node-http-handler@4.14.2, package-lock.json;
 * dist-cjs/index.js):
 * - `connectionTimeout` (setConnectionTimeout, :49-82): from the socket's creation to its `connect`; a TimeoutError.
 * - `requestTimeout` (setRequestTimeout, :84-103; armed at :405 and cleared by `resolve`, :313-317, which the response
 *   callback calls when the headers arrive, :371-378): ONE timer over the whole time from the request's start to the
 *   response's headers. It covers the upload of a request body (the service answers after reading all of it) and not a
 *   response body streamed after the headers. Its default is 0, none (DEFAULT_REQUEST_TIMEOUT, :232).
 * - `throwOnRequestTimeout`: without it a breached requestTimeout only logs a warning (:87-98; "a warning will be
 *   emitted unless throwOnRequestTimeout=true, in which case a TimeoutError will be thrown", @smithy/types@4.20.0
 *   dist-types/http/httpHandlerInitialization.d.ts:30-42).
 * - `socketTimeout` (setSocketTimeout, :133-169): `socket.setTimeout`, inactivity of the socket in either direction,
 *   re-armed by every byte, so it bounds a stall anywhere in a transfer, body included, and never a transfer that
 *   keeps moving. A value of 6 s or more is registered after a 3 s deferral (:162-167).
 *
 * So neither profile may be used for a call that streams a large body up (PutObject, UploadPart of a model): its
 * requestTimeout would cut a healthy multi-GB upload. Such a client needs a profile of its own with requestTimeout 0
 * and a socketTimeout only. The package makes no such call today (sign-model hashes the file locally and only reads
 * and tags the object; the verifier reads headers and tags).
 */

/** How long one attempt of one call may take, in milliseconds. */
export interface HttpTimeouts {
  /** TCP connect ("did not establish a connection with the server within the configured timeout"). */
  readonly connectionTimeoutMs: number;
  /** From the request's start to the response's headers (the request body's upload, the TLS handshake and the service's work included). */
  readonly requestTimeoutMs: number;
  /** Inactivity of the socket, which goes on covering the response's body once its headers have come. @default - none */
  readonly socketTimeoutMs?: number;
}

/** What `requestHandler` of every @aws-sdk client's constructor takes (NodeHttpHandlerOptions); each client builds its handler from it. */
export interface RequestHandlerOptions {
  readonly connectionTimeout: number;
  readonly requestTimeout: number;
  readonly socketTimeout?: number;
  readonly throwOnRequestTimeout: true;
}

/**
 * The handler options of a profile. Given as an object, not as a handler instance: each client builds its own handler
 * from it (`NodeHttpHandler.create(config?.requestHandler ?? ...)` in each client's runtime config, e.g.
 * @aws-sdk/client-sagemaker@3.1142.0 dist-cjs/index.js:13773, @aws-sdk/client-fis@3.523.0 dist-cjs/runtimeConfig.js:37),
 * so no module needs @smithy/node-http-handler, and a client bundling an older handler (client-fis's
 * @smithy/node-http-handler@2.5.0, which has no throwOnRequestTimeout and treats requestTimeout as socket inactivity:
 * its dist-cjs/index.js:215-220, :311) reads the same options in its own way.
 */
export function requestHandlerOptions(timeouts: HttpTimeouts): RequestHandlerOptions {
  return {
    connectionTimeout: timeouts.connectionTimeoutMs,
    requestTimeout: timeouts.requestTimeoutMs,
    ...(timeouts.socketTimeoutMs === undefined ? {} : { socketTimeout: timeouts.socketTimeoutMs }),
    throwOnRequestTimeout: true,
  };
}

/**
 * The Lambda functions' per-attempt bounds: 2 s to connect, 5 s until the response's headers, so that one hung socket
 * costs one attempt, not the run's whole time budget. No socket timeout: a body that stalls after its headers runs on
 * to the run's deadline, whose abort signal every call carries (review R92).
 */
export const LAMBDA_HTTP_TIMEOUTS: HttpTimeouts = { connectionTimeoutMs: 2_000, requestTimeoutMs: 5_000 };

/**
 * Options of every AWS SDK client of the library's Lambda functions: one SDK attempt per call (`maxAttempts: 1`), the
 * retry layer of lib/core/reconciler/retry.ts being the only one, so a run's time budget stays predictable; a
 * timed-out attempt fails with a `TimeoutError`, which that layer retries.
 */
export const LAMBDA_CLIENT_OPTIONS = {
  maxAttempts: 1,
  requestHandler: requestHandlerOptions(LAMBDA_HTTP_TIMEOUTS),
} as const;

/**
 * The commands' bounds. Their control-plane calls (DescribeAlarms, GetExperiment, RegisterScalableTarget,
 * GetMetricData, SimulatePrincipalPolicy, Sign, HeadObject, PutObjectTagging, ...) answer in well under a second to a
 * few seconds; 20 s is several times that, short enough that a stalled call cannot hold a game day for long. Without
 * them a call to an endpoint that accepts the connection and never answers waits for ever: DEFAULT_REQUEST_TIMEOUT is
 * 0 (above), and the clients pinned here pass no socket timeout of their own (client-application-auto-scaling@3.1141.0,
 * client-sagemaker@3.1142.0 and client-lambda@3.1164.0 set no `defaultSocketTimeout`; the 3.1169.0 ones set 900 s of
 * socket inactivity). The SDK retries a timed-out attempt (TimeoutError is transient to its standard retry strategy;
 * 3 attempts unless AWS_MAX_ATTEMPTS or the config file say otherwise), so a call that never answers fails after about
 * a minute.
 */
export const CLI_HTTP_TIMEOUTS: HttpTimeouts = { connectionTimeoutMs: 5_000, requestTimeoutMs: 20_000, socketTimeoutMs: 20_000 };

/** The part of a client's configuration the commands set; every @aws-sdk client's constructor takes it. */
export interface CliClientConfig {
  readonly region?: string;
  readonly requestHandler: RequestHandlerOptions;
  /** Set only for a write that may not be sent twice (`singleAttempt`). */
  readonly maxAttempts?: 1;
}

export interface CliClientOptions {
  /**
   * One SDK attempt per call, for a write that is not safe to repeat: when an attempt that took effect loses its
   * answer (a TimeoutError, a 5xx), the SDK's standard retry sends it again (TRANSIENT_ERROR_CODES and
   * TRANSIENT_ERROR_STATUS_CODES, @smithy/core@3.41.1 dist-cjs/submodules/retry/index.js:36-37, isTransientError :61-72,
   * up to DEFAULT_MAX_ATTEMPTS = 3 at :477), and a service that refuses the repeat (SageMaker's endpoint is Updating
   * after the first) turns the write's own success into an error that looks like a refusal. With one attempt an error is
   * that attempt's: a 4xx refused it (`refusedOutright`, lib/core/game-day/injection.ts), anything else leaves the
   * outcome unknown. A client's own `maxAttempts` wins over AWS_MAX_ATTEMPTS and the config file (`config?.maxAttempts
   * ?? loadConfig(NODE_MAX_ATTEMPT_CONFIG_OPTIONS)`, @aws-sdk/client-sagemaker@3.1142.0 dist-cjs/index.js:13771), and the
   * standard strategy retries only while attempts < maxAttempts (retry/index.js:558-563 above). @default false
   */
  readonly singleAttempt?: boolean;
}

/** The configuration of every client of the commands; `region` absent: the SDK's own chain (AWS_REGION, the profile). */
export function cliClientConfig(region?: string, timeouts: HttpTimeouts = CLI_HTTP_TIMEOUTS, options: CliClientOptions = {}): CliClientConfig {
  return { ...(region ? { region } : {}), requestHandler: requestHandlerOptions(timeouts), ...(options.singleAttempt ? { maxAttempts: 1 } : {}) };
}
