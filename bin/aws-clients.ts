/**
 * What the commands' AWS clients share besides their configuration, which lib/core/sdk-client-profiles.ts owns
 * (cliClientConfig, beside the Lambda functions' profile; it says why the two differ).
 */

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
