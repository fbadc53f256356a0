/**
 * The game day's other shortage on EKS: AWS FIS `aws:ec2:api-insufficient-instance-capacity-error` against the
 * Karpenter controller's role in chosen zones. Every launch Karpenter asks for in those zones fails with
 * InsufficientInstanceCapacity, whatever its class: a zonal shortage of EVERY class, a different scenario from the
 * NodePool-limit cap (one class, no capacity error logged). It exercises the capacity-error path (Karpenter's log
 * line, the metric filter, the reconciler's capacity signal), which the cap does not.
 *
 * The action (https://docs.aws.amazon.com/fis/latest/userguide/fis-actions-reference.html#api-ice): resource type
 * aws:iam:role (targets by ARN only: "doesn't support defining targets using resource tags, filters, or parameters");
 * parameters duration (ISO 8601), availabilityZoneIdentifiers (comma-separated zone IDs or names), percentage
 * (1-100); injects on RunInstances, CreateCapacityReservation, StartInstances and CreateFleet (Karpenter launches with
 * CreateFleet), "requests that include capacity asks in multiple Availability Zones are not supported". The experiment
 * role needs ec2:InjectApiError with ec2:FisActionId = the action and ec2:FisTargetArns = the target role.
 * The experiment template carries the user's stop alarms as FIS stop conditions (source aws:cloudwatch:alarm), so FIS
 * itself stops the injection when one fires, even if this command is gone; the command stops it (StopExperiment) on
 * every other way out and deletes the template it created.
 */
import { type AuditChange, type Injection } from '../lib/core/game-day/runner';

export const FIS_ICE_ACTION = 'aws:ec2:api-insufficient-instance-capacity-error';

/** What the game day asks of AWS FIS (the real one is `fisApi`; tests pass a fake). */
export interface FisApi {
  createExperimentTemplate(input: FisTemplateInput): Promise<{ readonly id: string }>;
  startExperiment(experimentTemplateId: string, clientToken: string): Promise<{ readonly id: string }>;
  /** status: pending | initiating | running | completed | stopping | stopped | failed | cancelled. */
  getExperiment(id: string): Promise<{ readonly status: string; readonly reason?: string }>;
  stopExperiment(id: string): Promise<void>;
  deleteExperimentTemplate(id: string): Promise<void>;
}

export interface FisAction {
  readonly actionId: string;
  readonly description: string;
  readonly parameters: Record<string, string>;
  readonly targets: Record<string, string>;
}

/** CreateExperimentTemplate's input, as the FIS API takes it. */
export interface FisTemplateInput {
  readonly clientToken: string;
  readonly description: string;
  readonly roleArn: string;
  readonly stopConditions: ReadonlyArray<{ readonly source: string; readonly value?: string }>;
  readonly targets: Readonly<Record<string, { resourceType: string; resourceArns: string[]; selectionMode: string }>>;
  readonly actions: Readonly<Record<string, FisAction>>;
  readonly tags: Readonly<Record<string, string>>;
}

export interface FisShortage {
  /** The Karpenter controller's role: the launches that fail are the ones it makes. */
  readonly karpenterRoleArn: string;
  /** The role FIS assumes to inject (ec2:InjectApiError on the action and the target role). */
  readonly experimentRoleArn: string;
  /** Zone IDs (use1-az1) or names (us-east-1a). */
  readonly zones: readonly string[];
  /** The action's duration: the game day's maximum, so FIS ends it even if this command cannot. */
  readonly durationSeconds: number;
  /** The stop alarms, by ARN: FIS stop conditions. */
  readonly stopAlarmArns: readonly string[];
  readonly stack: string;
  readonly clientToken: string;
}

/** ISO 8601 duration of whole minutes, at least one (the FIS actions take PT1M upwards). */
export function isoMinutes(seconds: number): string {
  return `PT${Math.max(1, Math.ceil(seconds / 60))}M`;
}

export function fisTemplate(s: FisShortage): FisTemplateInput {
  return {
    clientToken: s.clientToken,
    description: `cdk-capacity-game-day ${s.stack}: InsufficientInstanceCapacity for Karpenter in ${s.zones.join(', ')}`.slice(0, 512),
    roleArn: s.experimentRoleArn,
    stopConditions: s.stopAlarmArns.map((value) => ({ source: 'aws:cloudwatch:alarm', value })),
    targets: { KarpenterController: { resourceType: 'aws:iam:role', resourceArns: [s.karpenterRoleArn], selectionMode: 'ALL' } },
    actions: {
      ZonalCapacityShortage: {
        actionId: FIS_ICE_ACTION,
        description: 'every launch of the Karpenter controller in these zones fails with InsufficientInstanceCapacity',
        parameters: { duration: isoMinutes(s.durationSeconds), availabilityZoneIdentifiers: s.zones.join(','), percentage: '100' },
        targets: { Roles: 'KarpenterController' },
      },
    },
    tags: { 'created-by': 'cdk-capacity-game-day', stack: s.stack },
  };
}

const ACTIVE = new Set(['pending', 'initiating', 'running']);

/** The zonal shortage as a game-day injection: start the experiment; restore = stop it (unless FIS already did) and delete the template. */
export function fisInjection(api: FisApi, s: FisShortage): Injection {
  let templateId: string | undefined;
  let experimentId: string | undefined;
  const target = `FIS ${FIS_ICE_ACTION} on ${s.karpenterRoleArn} in ${s.zones.join(', ')}`;
  return {
    description: `inject InsufficientInstanceCapacity on the Karpenter controller's launches in ${s.zones.join(', ')} with AWS FIS `
      + '(a zonal shortage of every class: a different scenario from the NodePool-limit cap)',
    get manualRestore() {
      return experimentId ? `aws fis stop-experiment --id ${experimentId}; aws fis delete-experiment-template --id ${templateId}`
        : templateId ? `aws fis delete-experiment-template --id ${templateId}` : '(nothing was changed)';
    },
    async inject(): Promise<AuditChange> {
      templateId = (await api.createExperimentTemplate(fisTemplate(s))).id;
      experimentId = (await api.startExperiment(templateId, `${s.clientToken}-start`)).id;
      const after = { experimentTemplateId: templateId, experimentId, zones: s.zones, duration: isoMinutes(s.durationSeconds) };
      return { target, before: null, after };
    },
    async restore(): Promise<AuditChange> {
      if (!templateId) return { target, before: null, after: null };
      let state = 'not started';
      if (experimentId) {
        const e = await api.getExperiment(experimentId);
        state = `${e.status}${e.reason ? ` (${e.reason})` : ''}`;
        if (ACTIVE.has(e.status)) {
          await api.stopExperiment(experimentId);
          state = `${state}, stopped by the game day`;
        }
      }
      await api.deleteExperimentTemplate(templateId);
      const restored = { target, before: { experimentId, experimentTemplateId: templateId }, after: { experiment: state, template: 'deleted' } };
      experimentId = undefined;
      templateId = undefined;
      return restored;
    },
  };
}

/** The module is loaded when the FIS scenario runs (not a dependency of the other commands). */
const FIS_MODULE = '@aws-sdk/client-fis';

/** The real FIS, through @aws-sdk/client-fis. */
export function fisApi(region?: string): FisApi {
  let sdk: Record<string, new (input?: unknown) => unknown>;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    sdk = require(FIS_MODULE) as typeof sdk;
  } catch {
    throw new Error(`the FIS scenario needs ${FIS_MODULE}: install it beside this package `
      + `(npm install ${FIS_MODULE}, the version of your other @aws-sdk clients)`);
  }
  type Answer = Record<string, Record<string, unknown> | undefined>;
  const client = new sdk.FisClient(region ? { region } : {}) as { send(command: unknown): Promise<Answer> };
  const send = (name: string, input: unknown) => client.send(new sdk[name](input));
  return {
    createExperimentTemplate: async (input) => ({ id: String((await send('CreateExperimentTemplateCommand', input)).experimentTemplate?.id) }),
    startExperiment: async (experimentTemplateId, clientToken) => ({
      id: String((await send('StartExperimentCommand', { experimentTemplateId, clientToken })).experiment?.id),
    }),
    getExperiment: async (id) => {
      const state = (await send('GetExperimentCommand', { id })).experiment?.state as { status?: string; reason?: string } | undefined;
      return { status: state?.status ?? 'unknown', reason: state?.reason };
    },
    stopExperiment: async (id) => {
      await send('StopExperimentCommand', { id });
    },
    deleteExperimentTemplate: async (id) => {
      await send('DeleteExperimentTemplateCommand', { id });
    },
  };
}
