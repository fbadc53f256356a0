/**
 * The pods-Ready check: each capacity class's model-server pods are Ready and run with the flags and environment the
 * library rendered for the class. What was rendered is read from the deployed template: the EKS service applies each
 * class's Deployment as a manifest (its `Workload-<class>` resource), whose containers are the output of the runtime
 * binding (`bindRuntime`, lib/core/runtime/binding.ts) the construct called. Comparing with that, rather than
 * rendering again, checks what this stack deployed even when the library installed here is another version. What the
 * cluster runs is `kubectl get pods -o json` (bin/verify.ts).
 */
import { type CfnTemplate } from '../metrics/template-check';
import { type CheckResult } from './result';

/** The label the EKS service puts on every object of a class (lib/eks/manifests: `capacity-aware-inference/class`). */
export const CLASS_LABEL = 'capacity-aware-inference/class';

/** What a manifest value that was a CloudFormation token is read as (private-use characters, valid inside JSON text): it matches any text. */
const TOKEN = '\uE000token\uE000';

export interface RenderedEnv {
  readonly name: string;
  /** Undefined for `valueFrom` entries (only their presence is compared). */
  readonly value?: string;
}

export interface RenderedContainer {
  readonly name: string;
  readonly args?: readonly string[];
  readonly command?: readonly string[];
  readonly env: readonly RenderedEnv[];
}

export interface RenderedWorkload {
  readonly className: string;
  readonly namespace: string;
  readonly deploymentName: string;
  /** The Deployment's selector as a kubectl label selector (`k=v,k2=v2`). */
  readonly selector: string;
  readonly containers: readonly RenderedContainer[];
  /** The pods' service account (its EKS Pod Identity role, if any, is the class's own). */
  readonly serviceAccountName?: string;
}

type Json = unknown;
type Obj = Record<string, Json>;

/** The manifest text of a template value: a literal, or an Fn::Join whose non-literal parts become TOKEN. */
function manifestText(value: Json): string | undefined {
  if (typeof value === 'string') return value;
  const join = value && typeof value === 'object' ? (value as Obj)['Fn::Join'] : undefined;
  if (Array.isArray(join) && Array.isArray(join[1])) return (join[1] as Json[]).map((v) => manifestText(v) ?? TOKEN).join(String(join[0]));
  return undefined;
}

function containerOf(c: Obj): RenderedContainer {
  const env = ((c.env as Obj[] | undefined) ?? []).map((e) => ({ name: String(e.name), value: typeof e.value === 'string' ? e.value : undefined }));
  return { name: String(c.name), args: c.args as string[] | undefined, command: c.command as string[] | undefined, env };
}

/** The class Deployments the template applies (EKS service manifests), with their rendered containers. */
export function renderedWorkloads(template: CfnTemplate): RenderedWorkload[] {
  const out: RenderedWorkload[] = [];
  for (const r of Object.values(template.Resources ?? {})) {
    if (!r.Type?.startsWith('Custom::AWSCDK-EKS-KubernetesResource')) continue;
    const text = manifestText(r.Properties?.Manifest);
    let objects: Json;
    try {
      objects = text === undefined ? [] : JSON.parse(text);
    } catch {
      continue; // a token outside a JSON string: not a manifest this check can read
    }
    for (const o of Array.isArray(objects) ? (objects as Obj[]) : []) {
      const meta = o.metadata as Obj | undefined;
      const className = (meta?.labels as Obj | undefined)?.[CLASS_LABEL];
      if (o.kind !== 'Deployment' || typeof className !== 'string') continue;
      const spec = o.spec as Obj;
      const labels = ((spec.selector as Obj | undefined)?.matchLabels ?? {}) as Record<string, string>;
      out.push({
        className,
        namespace: String(meta?.namespace ?? 'default'),
        deploymentName: String(meta?.name),
        selector: Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(','),
        containers: (((spec.template as Obj).spec as Obj).containers as Obj[]).map(containerOf),
        ...(typeof ((spec.template as Obj).spec as Obj).serviceAccountName === 'string'
          ? { serviceAccountName: ((spec.template as Obj).spec as Obj).serviceAccountName as string } : {}),
      });
    }
  }
  return out;
}

/** The parts of `kubectl get pods -o json` the check reads. */
export interface PodList {
  readonly items?: ReadonlyArray<{
    readonly metadata?: { readonly name?: string; readonly deletionTimestamp?: string };
    readonly spec?: {
      readonly containers?: ReadonlyArray<{ name?: string; args?: string[]; command?: string[]; env?: Array<{ name?: string; value?: string }> }>;
    };
    readonly status?: { readonly phase?: string; readonly conditions?: ReadonlyArray<{ readonly type?: string; readonly status?: string }> };
  }>;
}

function matches(rendered: string, actual: string | undefined): boolean {
  if (actual === undefined) return false;
  if (!rendered.includes(TOKEN)) return rendered === actual;
  const pattern = rendered.split(TOKEN).map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*');
  return new RegExp(`^${pattern}$`, 's').test(actual);
}

function listDiffers(what: string, rendered: readonly string[] | undefined, actual: readonly string[] | undefined): string[] {
  const r = rendered ?? [];
  const a = actual ?? [];
  if (r.length === a.length && r.every((x, i) => matches(x, a[i]))) return [];
  return [`${what} are ${JSON.stringify(a)}, rendered ${JSON.stringify(r.map((x) => x.replaceAll(TOKEN, '{token}')))}`];
}

/** How one pod's containers differ from the rendered ones (empty when they agree). Extra variables are allowed. */
export function containerDifferences(rendered: readonly RenderedContainer[], pod: NonNullable<PodList['items']>[number]): string[] {
  const problems: string[] = [];
  for (const r of rendered) {
    const c = pod.spec?.containers?.find((x) => x.name === r.name);
    if (!c) {
      problems.push(`no container ${r.name}`);
      continue;
    }
    problems.push(...listDiffers(`${r.name} args`, r.args, c.args), ...listDiffers(`${r.name} command`, r.command, c.command));
    for (const e of r.env) {
      const actual = c.env?.find((x) => x.name === e.name);
      if (!actual) problems.push(`${r.name} has no ${e.name}`);
      else if (e.value !== undefined && !matches(e.value, actual.value)) problems.push(`${r.name} ${e.name}=${JSON.stringify(actual.value)}, rendered ${JSON.stringify(e.value.replaceAll(TOKEN, '{token}'))}`);
    }
  }
  return problems;
}

/**
 * One check per class: its pods Ready, each with the rendered args and environment. Pods that have ended (phase
 * Failed or Succeeded: a pod the kubelet evicted stays listed, Failed, until it is garbage-collected) or are being
 * deleted (an old ReplicaSet's, `deletionTimestamp` set) are not the class's serving pods and are not judged.
 */
export function podsReadyCheck(w: RenderedWorkload, pods: PodList): CheckResult {
  const id = `pods:${w.namespace}/${w.deploymentName}`;
  const settles = `class ${w.className}'s pods (${w.namespace}/${w.deploymentName}) are Ready with the flags and environment the library rendered`;
  const items = (pods.items ?? []).filter((p) => p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded' && !p.metadata?.deletionTimestamp);
  if (items.length === 0) {
    const ended = (pods.items ?? []).length;
    const why = ended > 0 ? `${ended} ended or terminating, none serving` : 'the class is scaled to zero';
    return { id, status: 'skip', settles, detail: `no pods match ${w.selector} (${why}): nothing to compare` };
  }
  const problems: string[] = [];
  for (const p of items) {
    const name = p.metadata?.name ?? '?';
    const ready = p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
    if (!ready) problems.push(`${name} is not Ready`);
    problems.push(...containerDifferences(w.containers, p).map((d) => `${name}: ${d}`));
  }
  return problems.length === 0
    ? { id, status: 'pass', settles, detail: `${items.length} pod(s) Ready, args and ${w.containers.reduce((n, c) => n + c.env.length, 0)} rendered variables as rendered` }
    : { id, status: 'fail', settles, detail: problems.join('; ') };
}
