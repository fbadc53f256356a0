/**
 * Is the observability add-on's version known to EKS, does its configuration satisfy that version's schema, and is the
 * installed add-on active with that configuration? The schema is EKS's own (DescribeAddonConfiguration: "a JSON schema
 * that's used to validate the configuration values you provide when an add-on is created or updated",
 * https://docs.aws.amazon.com/eks/latest/APIReference/API_DescribeAddonConfiguration.html); the validator is passed
 * in (the CLI uses Ajv) so this module stays dependency-free.
 */
import { type CheckResult } from './result';

/** The add-on as the stack declares it. */
export interface DeclaredAddon {
  readonly clusterName: string;
  readonly addonName: string;
  readonly addonVersion: string;
  /**
   * The JSON `ConfigurationValues` of the template, when it holds no CloudFormation token; absent otherwise (the
   * installed add-on's resolved values are then validated and not compared).
   */
  readonly configurationValues?: string;
}

/** DescribeAddon's answer (the installed add-on), when the call succeeded. */
export interface InstalledAddon {
  readonly status?: string;
  readonly addonVersion?: string;
  readonly configurationValues?: string;
  readonly health?: { readonly issues?: ReadonlyArray<{ readonly code?: string; readonly message?: string }> };
}

export type SchemaValidator = (schema: object, value: unknown) => string[];

export function addonChecks(
  declared: DeclaredAddon,
  configurationSchema: string | undefined,
  installed: InstalledAddon | undefined,
  validate: SchemaValidator,
): CheckResult[] {
  const at = `${declared.addonName} ${declared.addonVersion}`;
  const results: CheckResult[] = [];
  const schemaSettles = `EKS knows ${at} and its configuration schema accepts the library's configuration`;
  if (configurationSchema === undefined) {
    results.push({ id: `addon:${declared.addonName}:schema`, status: 'fail', settles: schemaSettles, detail: 'DescribeAddonConfiguration returned no schema for this version' });
  } else {
    let problems: string[];
    try {
      const text = installed?.configurationValues ?? declared.configurationValues;
      const value = text === undefined || text === '' ? {} : JSON.parse(text);
      problems = validate(JSON.parse(configurationSchema) as object, value);
    } catch (e) {
      problems = [`not JSON: ${(e as Error).message}`];
    }
    results.push({
      id: `addon:${declared.addonName}:schema`,
      status: problems.length === 0 ? 'pass' : 'fail',
      settles: schemaSettles,
      detail: problems.length === 0 ? 'the configuration validates against DescribeAddonConfiguration\'s schema' : problems.join('; '),
    });
  }
  const installedSettles = `${at} is installed and ACTIVE on ${declared.clusterName} with that configuration`;
  if (!installed) {
    results.push({ id: `addon:${declared.addonName}:installed`, status: 'fail', settles: installedSettles, detail: 'DescribeAddon found no such add-on' });
    return results;
  }
  const issues = (installed.health?.issues ?? []).map((i) => `${i.code}: ${i.message}`);
  const sameConfig = declared.configurationValues === undefined || safeEqualJson(installed.configurationValues, declared.configurationValues);
  const problems = [
    ...(installed.status === 'ACTIVE' ? [] : [`status ${installed.status}`]),
    ...(installed.addonVersion === declared.addonVersion ? [] : [`version ${installed.addonVersion}`]),
    ...(sameConfig ? [] : ['its configurationValues differ from the stack\'s']),
    ...issues,
  ];
  results.push({
    id: `addon:${declared.addonName}:installed`,
    status: problems.length === 0 ? 'pass' : 'fail',
    settles: installedSettles,
    detail: problems.length === 0 ? 'DescribeAddon: ACTIVE, no health issues' : `DescribeAddon: ${problems.join('; ')}`,
  });
  return results;
}

function safeEqualJson(a: string | undefined, b: string | undefined): boolean {
  try {
    return JSON.stringify(JSON.parse(a ?? '{}')) === JSON.stringify(JSON.parse(b ?? '{}'));
  } catch {
    return false;
  }
}
