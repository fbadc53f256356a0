/**
 * The configuration every AWS SDK client of the post-deploy commands (verify, game-day) is built with: the region, and
 * an HTTP handler that gives up on a call that stalls. Without it a call to an endpoint that accepts the connection
 * and never answers waits for ever: @smithy/node-http-handler's DEFAULT_REQUEST_TIMEOUT is 0, "no timeout"
 * (@smithy/node-http-handler@4.14.2 dist-types/node-http-handler.d.ts:6-11), and the clients pinned here pass it no
 * socket timeout of their own (client-application-auto-scaling@3.1141.0, client-sagemaker@3.1142.0 and
 * client-lambda@3.1164.0 set no `defaultSocketTimeout`; the 3.1169.0 ones set 900 s of socket inactivity), so a game
 * day could outlast --max-duration by as long as a stalled call lasts.
 *
 * The options are given as an object, not as a handler instance: each client builds its own handler from it
 * (`NodeHttpHandler.create(config?.requestHandler ?? ...)` in each client's runtime config, e.g.
 * @aws-sdk/client-sagemaker@3.1142.0 dist-cjs/index.js:13773, @aws-sdk/client-fis@3.523.0 dist-cjs/runtimeConfig.js:37),
 * so the package needs no import of @smithy/node-http-handler, and a client bundling an older handler (client-fis's
 * @smithy/node-http-handler@2.5.0) reads the same options in its own way.
 */

/** How long one attempt of one call may take, in milliseconds. */
export interface CliHttpTimeouts {
  /** TCP connect ("did not establish a connection with the server within the configured timeout"). */
  readonly connectionTimeoutMs: number;
  /** From the request's start to the response's headers (the TLS handshake and the service's work included). */
  readonly requestTimeoutMs: number;
  /** Inactivity of the socket, which goes on covering the response's body once its headers have come. */
  readonly socketTimeoutMs: number;
}

/**
 * The control-plane calls the commands make (DescribeAlarms, GetExperiment, RegisterScalableTarget, GetMetricData,
 * SimulatePrincipalPolicy, ...) answer in well under a second to a few seconds; 20 s is several times that, short
 * enough that a stalled call cannot hold a game day for long. The SDK retries a timed-out attempt (TimeoutError is
 * transient to its standard retry strategy; 3 attempts unless AWS_MAX_ATTEMPTS or the config file say otherwise), so a
 * call that never answers fails after about a minute.
 */
export const CLI_HTTP_TIMEOUTS: CliHttpTimeouts = { connectionTimeoutMs: 5_000, requestTimeoutMs: 20_000, socketTimeoutMs: 20_000 };

/** The part of a client's configuration the commands set; every @aws-sdk client's constructor takes it. */
export interface CliClientConfig {
  readonly region?: string;
  readonly requestHandler: {
    readonly connectionTimeout: number;
    readonly requestTimeout: number;
    readonly socketTimeout: number;
    readonly throwOnRequestTimeout: true;
  };
}

/** The configuration of every client of verify and game-day; `region` absent: the SDK's own chain (AWS_REGION, the profile). */
export function cliClientConfig(region?: string, timeouts: CliHttpTimeouts = CLI_HTTP_TIMEOUTS): CliClientConfig {
  return {
    ...(region ? { region } : {}),
    requestHandler: {
      connectionTimeout: timeouts.connectionTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs,
      socketTimeout: timeouts.socketTimeoutMs,
      // A request past requestTimeout only logs a warning unless this is set ("If exceeded, a warning will be emitted
      // unless throwOnRequestTimeout=true, in which case a TimeoutError will be thrown": @smithy/types@4.20.0
      // dist-types/http/httpHandlerInitialization.d.ts:30-42; setRequestTimeout, @smithy/node-http-handler@4.14.2
      // dist-cjs/index.js:84-103). The 2.5.0 handler in client-fis has no such option and treats requestTimeout as
      // socket inactivity (its dist-cjs/index.js:215-220, :311).
      throwOnRequestTimeout: true,
    },
  };
}

/**
 * The region the clients call, read before the first call. Without one every call fails with the SDK's bare "Region
 * is missing", which says neither where a region comes from nor how to give one: the SDK reads AWS_REGION, then the
 * profile's `region` (REGION_ENV_NAME, REGION_INI_NAME and the throw at @smithy/core@3.41.1
 * dist-cjs/submodules/config/index.js:583-593).
 */
export async function clientRegion(client: { readonly config: { readonly region: () => Promise<string> } }): Promise<string> {
  try {
    return await client.config.region();
  } catch (e) {
    throw new Error(`no AWS region (${e instanceof Error ? e.message : String(e)}): pass --region <region>, or set AWS_REGION or a region `
      + 'in your AWS profile', { cause: e });
  }
}
