/**
 * The game day's other shortage on EKS: AWS FIS `aws:ec2:api-insufficient-instance-capacity-error` against the
 * Karpenter controller's role in chosen zones. A launch Karpenter asks for in one of those zones alone fails with
 * InsufficientInstanceCapacity, whatever its class; one that asks in several zones at once is not supported by the
 * action (below), and Karpenter asks in every zone a NodePool allows, so only the classes whose NodePool is held to
 * one zone are short (bin/game-day.ts refuses unless the class taken away is: lib/core/game-day/fis-zones.ts). A
 * different scenario from the NodePool-limit cap (one class, no capacity error logged): it exercises the
 * capacity-error path (Karpenter's log line, the metric filter, the reconciler's capacity signal), which the cap does not.
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
import {
  CreateExperimentTemplateCommand, type CreateExperimentTemplateCommandOutput, type CreateExperimentTemplateRequest, DeleteExperimentTemplateCommand,
  type Experiment, type FisClient,
  GetExperimentCommand, type ListExperimentsCommandOutput, ListExperimentsCommand, StartExperimentCommand, type StartExperimentCommandOutput,
  StopExperimentCommand,
} from '@aws-sdk/client-fis';
import { setTimeout as delay } from 'node:timers/promises';
import { guardedWrite, refusedOutright } from '../lib/core/game-day/injection';
import { type AuditChange, type Injection } from '../lib/core/game-day/runner';

export const FIS_ICE_ACTION = 'aws:ec2:api-insufficient-instance-capacity-error';
/** The action's name in the template, the key of its state in GetExperiment's `experiment.actions`. */
export const FIS_ACTION_NAME = 'ZonalCapacityShortage';
/** The `created-by` tag of every experiment template the command creates: how one left behind is found. */
export const FIS_TEMPLATE_CREATOR = 'cdk-capacity-game-day';

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

/** CreateExperimentTemplate's input (@aws-sdk/client-fis@3.523.0 CreateExperimentTemplateRequest). */
export function fisTemplate(s: FisShortage): CreateExperimentTemplateRequest {
  return {
    clientToken: s.clientToken,
    description: `cdk-capacity-game-day ${s.stack}: InsufficientInstanceCapacity for Karpenter in ${s.zones.join(', ')}`.slice(0, 512),
    roleArn: s.experimentRoleArn,
    stopConditions: s.stopAlarmArns.map((value) => ({ source: 'aws:cloudwatch:alarm', value })),
    targets: { KarpenterController: { resourceType: 'aws:iam:role', resourceArns: [s.karpenterRoleArn], selectionMode: 'ALL' } },
    actions: {
      [FIS_ACTION_NAME]: {
        actionId: FIS_ICE_ACTION,
        description: 'every launch of the Karpenter controller in these zones fails with InsufficientInstanceCapacity',
        parameters: { duration: isoMinutes(s.durationSeconds), availabilityZoneIdentifiers: s.zones.join(','), percentage: '100' },
        targets: { Roles: 'KarpenterController' },
      },
    },
    tags: { 'created-by': FIS_TEMPLATE_CREATOR, stack: s.stack },
  };
}

/**
 * The experiment states in which FIS injects no more, or soon will not (@aws-sdk/client-fis@3.523.0
 * dist-types/models/models_0.d.ts ExperimentStatus: pending, initiating, running, completed, stopping, stopped,
 * failed; the API reference adds cancelled, API_ExperimentState.html). Any other state, a missing one included, is
 * stopped: the command fails safe towards ending the injection.
 */
const SETTLED = new Set(['completed', 'stopping', 'stopped', 'failed', 'cancelled']);
/**
 * The settled state an experiment reaches only without running (API_ExperimentState.html). `failed` is not one: an
 * experiment whose action fails goes from running to failed, perhaps between two polls.
 */
const NEVER_RAN = new Set(['cancelled']);

/**
 * The action states before the action runs (API_ExperimentActionState.html: pending, initiating, running, completed,
 * cancelled, stopping, stopped, failed, skipped; @aws-sdk/client-fis@3.523.0 ExperimentActionStatus the same). Every
 * state but these and `running` is one in which the action injects no more, or never did.
 */
const ACTION_NOT_YET = new Set(['pending', 'initiating']);

/** `status (reason)`, or `in no state` when FIS gives none. */
function said(state: { status?: string; reason?: string } | undefined): string {
  return state?.status ? `${state.status}${state.reason ? ` (${state.reason})` : ''}` : 'in no state';
}

/**
 * Why the shortage is not in force in one GetExperiment answer, or undefined when it is: only an experiment that is
 * `running` with its action `running` injects. The experiment's state alone does not say so: its action can fail, or
 * still be pending, while the experiment shows `running` (the experiment's and each action's state are apart in
 * GetExperiment: API_Experiment.html `state` and `actions`, API_ExperimentAction.html `state`).
 */
export function shortageNotInForce(experiment: Experiment | undefined, experimentId: string): string | undefined {
  const status = experiment?.state?.status;
  const action = experiment?.actions?.[FIS_ACTION_NAME]?.state;
  if (status === 'running' && action?.status === 'running') return undefined;
  return `AWS FIS experiment ${experimentId} is ${said(experiment?.state)}, its action ${FIS_ACTION_NAME} ${said(action)}`;
}

/**
 * StartExperiment answers `initiating`; the injection runs only once the experiment and its action are `running`, and
 * one that fails to start (the experiment role may not inject, a target is gone) goes to `failed` instead. The command
 * waits for both this long, asking every `START_POLL_MS`, before it counts the game day as started.
 */
export const START_TIMEOUT_MS = 180_000;
export const START_POLL_MS = 5_000;

/** A pause that an abort ends early (and quietly: the caller looks at the signal). */
async function wait(ms: number, signal?: AbortSignal): Promise<void> {
  await delay(ms, undefined, { signal }).catch(() => undefined);
}

/**
 * How to find and delete a template CreateExperimentTemplate may have made though its answer was lost: by its tags
 * (ListExperimentTemplates answers each template's id and tags, @aws-sdk/client-fis@3.523.0
 * dist-types/models/models_0.d.ts ExperimentTemplateSummary :1140-1166, ListExperimentTemplatesResponse :1507-1518).
 */
function templateLeftBehind(stack: string): string {
  return `aws fis list-experiment-templates --query "experimentTemplates[?tags.\\"created-by\\"=='${FIS_TEMPLATE_CREATOR}' && tags.stack=='${stack}']`
    + '.[id,creationTime]" --output text, then aws fis delete-experiment-template --id <id> for the one created at this run\'s start';
}

/** The id FIS answered with; without one the command cannot stop or delete what it made, so it says so. */
function required(id: string | undefined, what: string): string {
  if (!id) throw new Error(`AWS FIS answered ${what} without an id`);
  return id;
}

/** ListExperiments' largest page (API_ListExperiments.html: maxResults "Minimum value of 1. Maximum value of 100"). */
const LIST_PAGE = 100;

/**
 * The experiments started from `templateId` that FIS does not report settled, by id and state: every page of
 * ListExperiments (its input at @aws-sdk/client-fis@3.523.0 is maxResults and nextToken only, no template filter:
 * dist-types/models/models_0.d.ts ListExperimentsRequest; each ExperimentSummary carries experimentTemplateId and state).
 * A summary without a state is taken as running: the command fails safe towards ending the injection.
 */
export async function unsettledExperimentsOf(fis: FisClient, templateId: string): Promise<Array<{ id: string; status: string }>> {
  const found: Array<{ id: string; status: string }> = [];
  let nextToken: string | undefined;
  do {
    const page: ListExperimentsCommandOutput = await fis.send(new ListExperimentsCommand({ maxResults: LIST_PAGE, nextToken }));
    for (const e of page.experiments ?? []) {
      const status = e.state?.status;
      if (e.experimentTemplateId === templateId && e.id && !SETTLED.has(status ?? '')) found.push({ id: e.id, status: status ?? 'in no state' });
    }
    nextToken = page.nextToken || undefined;
  } while (nextToken);
  return found;
}

/**
 * The zonal shortage as a game-day injection: start the experiment and wait until it and its action run (one that
 * ends before is an error: nothing is injected); while held, the runner asks `inForce` at every poll; restore = stop it
 * (unless FIS already did) and delete the template.
 */
export function fisInjection(
  fis: FisClient, s: FisShortage, pause: (ms: number, signal?: AbortSignal) => Promise<void> = wait,
): Injection & { preview(): Promise<string> } {
  let templateId: string | undefined;
  let experimentId: string | undefined;
  // Whether StartExperiment may have started one though no id came back: not when it was refused outright (a 4xx on its
  // only attempt), so a plain refusal needs no ListExperiments scan, nor fis:ListExperiments (review R246).
  let mayHaveStarted = false;
  // Whether CreateExperimentTemplate may have made a template though no id came back (not when refused outright): the
  // restore cannot delete one it has no id of, so the operator is told how to find it.
  let mayHaveCreated = false;
  const leftBehind = () => (mayHaveCreated && !templateId
    ? `an AWS FIS experiment template may exist though CreateExperimentTemplate gave no answer (nothing was started from it): ${templateLeftBehind(s.stack)}`
    : undefined);
  const target = `FIS ${FIS_ICE_ACTION} on ${s.karpenterRoleArn} in ${s.zones.join(', ')}`;
  return {
    description: `inject InsufficientInstanceCapacity on the Karpenter controller's launches in ${s.zones.join(', ')} with AWS FIS `
      + '(a zonal shortage of the classes held to those zones: a different scenario from the NodePool-limit cap)',
    get manualRestore() {
      // No experiment id: StartExperiment may still have started one whose answer was lost; list the template's.
      return experimentId ? `aws fis stop-experiment --id ${experimentId}; aws fis delete-experiment-template --id ${templateId}`
        : templateId ? `aws fis list-experiments --query "experiments[?experimentTemplateId=='${templateId}'].[id,state.status]" --output text, `
          + 'then aws fis stop-experiment --id <id> for each one listed that is not completed, stopping, stopped, failed or cancelled; '
          + `aws fis delete-experiment-template --id ${templateId}`
        : leftBehind() ?? '(nothing was changed)';
    },
    get notRestorable() {
      return leftBehind();
    },
    preview: async () => `would create the AWS FIS experiment template ${JSON.stringify(fisTemplate(s))}, start it, and on the way out stop `
      + 'the experiment and delete the template',
    async inject(_step, signal): Promise<AuditChange> {
      let created: CreateExperimentTemplateCommandOutput | undefined;
      try {
        await guardedWrite(async () => {
          created = await fis.send(new CreateExperimentTemplateCommand(fisTemplate(s)));
        }, refusedOutright, () => {
          mayHaveCreated = true;
        });
      } catch (e) {
        if (!mayHaveCreated) throw e;
        throw new Error(`CreateExperimentTemplate got no answer (${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}): AWS FIS may `
          + `have created the experiment template all the same, tagged created-by=${FIS_TEMPLATE_CREATOR} and stack=${s.stack}; nothing was `
          + `started from it. Find and delete it: ${templateLeftBehind(s.stack)}`, { cause: e });
      }
      templateId = required(created?.experimentTemplate?.id, 'CreateExperimentTemplate');
      let started: StartExperimentCommandOutput | undefined;
      await guardedWrite(async () => {
        started = await fis.send(new StartExperimentCommand({ experimentTemplateId: templateId, clientToken: `${s.clientToken}-start` }));
      }, refusedOutright, () => {
        mayHaveStarted = true;
      });
      experimentId = required(started?.experiment?.id, 'StartExperiment');
      // An interrupt ends the wait: the runner then restores (stops the experiment, deletes the template).
      // The reads of the wait take the signal too (the create and the start do not: their answer holds the ids the
      // restore needs).
      for (let waited = 0; !signal?.aborted; waited += START_POLL_MS) {
        const experiment = (await fis.send(new GetExperimentCommand({ id: experimentId }), { abortSignal: signal })).experiment;
        const state = experiment?.state;
        const action = experiment?.actions?.[FIS_ACTION_NAME]?.state;
        if (state?.status === 'running' && action?.status === 'running') break;
        // The experiment runs but its action has ended, or never started: a failing action (the role may not inject on
        // that target) shows here before the experiment itself turns `failed`.
        if (state?.status === 'running' && action?.status !== undefined && !ACTION_NOT_YET.has(action.status)) {
          throw new Error(`AWS FIS experiment ${experimentId} is running but its action ${FIS_ACTION_NAME} is ${said(action)} before the game day `
            + 'saw it running: the shortage is not in force');
        }
        if (SETTLED.has(state?.status ?? '')) {
          // cancelled never ran; the others may have, briefly (a stop-condition alarm already in ALARM stops an
          // experiment as soon as it starts, a failing action fails it): either way no shortage holds now.
          const status = `${state!.status}${state!.reason ? ` (${state!.reason})` : ''}`;
          throw new Error(`AWS FIS experiment ${experimentId} is ${status} before the game day saw it running: ${NEVER_RAN.has(state!.status!)
            ? 'nothing was injected' : 'the shortage is not in force (a stop condition already in ALARM ends an experiment at once; a role that may not '
            + 'inject fails it)'}`);
        }
        if (waited >= START_TIMEOUT_MS) {
          throw new Error(`AWS FIS experiment ${experimentId} is still ${state?.status ?? 'in no state'} (its action ${FIS_ACTION_NAME} ${said(action)}) `
            + `after ${START_TIMEOUT_MS / 1000} s`);
        }
        await pause(START_POLL_MS, signal);
      }
      const after = { experimentTemplateId: templateId, experimentId, zones: s.zones, duration: isoMinutes(s.durationSeconds) };
      return { target, before: null, after };
    },
    async inForce(): Promise<string | undefined> {
      // FIS ends the injection itself on a stop alarm (which may clear before the runner's next poll of the alarms), on
      // a failing action, or at the action's duration: none of it shows in the alarms, so the experiment is asked.
      if (!experimentId) return 'no AWS FIS experiment was started';
      return shortageNotInForce((await fis.send(new GetExperimentCommand({ id: experimentId }))).experiment, experimentId);
    },
    async restore(): Promise<AuditChange> {
      if (!templateId) return { target, before: null, after: null };
      let state = 'not started';
      let stopped: string[] = [];
      if (experimentId) {
        const e = (await fis.send(new GetExperimentCommand({ id: experimentId }))).experiment?.state;
        const status = e?.status ?? 'unknown';
        state = `${status}${e?.reason ? ` (${e.reason})` : ''}`;
        if (!SETTLED.has(status)) {
          await fis.send(new StopExperimentCommand({ id: experimentId }));
          state = `${state}, stopped by the game day`;
        }
      } else if (mayHaveStarted) {
        // The template exists and no experiment id is known: StartExperiment failed, or started one and every attempt
        // lost the answer (a timeout). An experiment outlives its template's deletion only up to the action's duration
        // (--max-duration) and the stop alarms FIS holds, but it is stopped here rather than left to run that long.
        // Whether ListExperiments shows an experiment the moment StartExperiment started it was not confirmed.
        const running = await unsettledExperimentsOf(fis, templateId);
        for (const e of running) await fis.send(new StopExperimentCommand({ id: e.id }));
        stopped = running.map((e) => e.id);
        if (running.length > 0) {
          state = `started without an answer: ${running.map((e) => `${e.id} (${e.status})`).join(', ')} stopped by the game day`;
        }
      }
      await fis.send(new DeleteExperimentTemplateCommand({ id: templateId }));
      const after = { experiment: state, ...(stopped.length > 0 ? { stopped } : {}), template: 'deleted' };
      const restored = { target, before: { experimentId, experimentTemplateId: templateId }, after };
      experimentId = undefined;
      templateId = undefined;
      return restored;
    },
  };
}
