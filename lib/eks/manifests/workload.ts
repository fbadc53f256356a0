import { ACCELERATOR_TAINTS } from './karpenter';
import {
  type Container,
  type Deployment,
  type Namespace,
  type PodDisruptionBudget,
  type PriorityClass,
  type Probe,
  type Service,
  type ServiceAccount,
} from './types';

/** UID/GID the model server runs as: not root (the namespace enforces the `restricted` Pod Security Standard). */
export const SERVER_UID = 1000;

export function namespace(name: string, labels: Readonly<Record<string, string>>): Namespace {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name,
      labels: {
        ...labels,
        // Pods that do not meet the restricted profile are rejected at admission, not merely warned about.
        'pod-security.kubernetes.io/enforce': 'restricted',
        'pod-security.kubernetes.io/enforce-version': 'latest',
      },
    },
  };
}

/** A service account without a mounted token: model servers do not call the Kubernetes API. */
export function serviceAccount(name: string, ns: string, labels: Readonly<Record<string, string>>): ServiceAccount {
  return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: ns, labels }, automountServiceAccountToken: false };
}

export function priorityClass(name: string, value: number, description: string, labels: Readonly<Record<string, string>>): PriorityClass {
  // Serving pods never preempt others: a fallback class that cannot be placed should wait for capacity, not evict.
  return { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name, labels }, value, preemptionPolicy: 'Never', globalDefault: false, description };
}

/** What readiness means for a model server. */
export interface ReadinessInput {
  /** Path that answers 200 once the process is up (startup and liveness). */
  readonly healthPath: string;
  /** Path that answers 200 once the model is loaded (readiness). */
  readonly readyPath: string;
  /**
   * Optional warm-up: a path that runs a real inference. The probe's timeout is the latency floor, and it must
   * succeed twice in a row before the pod turns Ready, so a replica joins the target group only when it is warm.
   */
  readonly warmup?: { readonly path: string; readonly maxLatencySeconds: number };
  /** Longest the server may take to start and download weights before it is restarted, in seconds. */
  readonly startupTimeoutSeconds: number;
}

export interface DeploymentInput {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Labels that select this Deployment's pods (a subset of labels). */
  readonly selector: Readonly<Record<string, string>>;
  readonly image: string;
  readonly args?: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly port: number;
  readonly acceleratorKind: 'gpu' | 'neuron';
  readonly acceleratorResource: string;
  readonly acceleratorCount: number;
  readonly cpu: string;
  readonly memory: string;
  /** Size of the emptyDir that receives the model weights. */
  readonly modelCacheSize: string;
  readonly nodePoolName: string;
  readonly priorityClassName: string;
  readonly serviceAccountName: string;
  readonly readiness: ReadinessInput;
  /** Seconds the pod keeps serving after it is marked for termination: the target group's deregistration delay. */
  readonly drainSeconds: number;
  /** Seconds in-flight requests may still need after draining (the service deadline). */
  readonly inFlightSeconds: number;
}

const PROBE_PERIOD_SECONDS = 10;

function probe(path: string, overrides: Partial<Probe> = {}): Probe {
  return { httpGet: { path, port: 'http' }, periodSeconds: PROBE_PERIOD_SECONDS, timeoutSeconds: 5, successThreshold: 1, failureThreshold: 3, ...overrides };
}

/**
 * A model-server Deployment pinned to its class's NodePool. No `replicas`: KEDA owns the count. Readiness is "model
 * loaded" (and warm, with a warm-up), never "HTTP up". On termination the pod keeps serving for the target group's
 * deregistration delay (preStop sleep) and then has the service deadline to finish what it holds.
 */
export function deployment(input: DeploymentInput): Deployment {
  const r = input.readiness;
  const readinessProbe = r.warmup
    ? probe(r.warmup.path, {
        timeoutSeconds: Math.max(1, Math.ceil(r.warmup.maxLatencySeconds)),
        successThreshold: 2,
        failureThreshold: 2,
        periodSeconds: 15,
      })
    : probe(r.readyPath, { successThreshold: 1, failureThreshold: 2 });
  const container: Container = {
    name: 'model-server',
    image: input.image,
    imagePullPolicy: 'IfNotPresent',
    ...(input.args && input.args.length > 0 ? { args: [...input.args] } : {}),
    env: Object.entries(input.env)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, value]) => ({ name, value })),
    ports: [{ name: 'http', containerPort: input.port, protocol: 'TCP' }],
    resources: {
      requests: { cpu: input.cpu, memory: input.memory, [input.acceleratorResource]: String(input.acceleratorCount) },
      limits: { memory: input.memory, [input.acceleratorResource]: String(input.acceleratorCount) },
    },
    // Weight download and compilation can take many minutes; liveness must not kill a server that is still loading.
    startupProbe: probe(r.healthPath, { failureThreshold: Math.max(1, Math.ceil(r.startupTimeoutSeconds / PROBE_PERIOD_SECONDS)) }),
    readinessProbe,
    livenessProbe: probe(r.healthPath, { failureThreshold: 6, timeoutSeconds: 10 }),
    lifecycle: { preStop: { sleep: { seconds: input.drainSeconds } } },
    securityContext: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      runAsUser: SERVER_UID,
      runAsGroup: SERVER_UID,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    },
    volumeMounts: [
      { name: 'model-cache', mountPath: '/models' },
      { name: 'tmp', mountPath: '/tmp' },
      { name: 'dshm', mountPath: '/dev/shm' },
    ],
  };
  const taint = ACCELERATOR_TAINTS[input.acceleratorKind];
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: input.name, namespace: input.namespace, labels: input.labels },
    spec: {
      revisionHistoryLimit: 5,
      progressDeadlineSeconds: Math.max(600, r.startupTimeoutSeconds + 300),
      selector: { matchLabels: input.selector },
      // Surge one pod at a time: each new server pulls an image and gigabytes of weights.
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: { labels: input.labels },
        spec: {
          serviceAccountName: input.serviceAccountName,
          automountServiceAccountToken: false,
          priorityClassName: input.priorityClassName,
          nodeSelector: { 'karpenter.sh/nodepool': input.nodePoolName },
          tolerations: [{ key: taint.key, operator: 'Exists', effect: taint.effect }],
          topologySpreadConstraints: [
            { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: input.selector } },
          ],
          terminationGracePeriodSeconds: input.drainSeconds + input.inFlightSeconds,
          securityContext: { runAsNonRoot: true, fsGroup: SERVER_UID, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [container],
          volumes: [
            { name: 'model-cache', emptyDir: { sizeLimit: input.modelCacheSize } },
            { name: 'tmp', emptyDir: { sizeLimit: '2Gi' } },
            { name: 'dshm', emptyDir: { medium: 'Memory', sizeLimit: '2Gi' } },
          ],
        },
      },
    },
  };
}

type Labels = Readonly<Record<string, string>>;

export function service(name: string, ns: string, labels: Labels, selector: Labels, port: number): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: ns, labels },
    spec: { type: 'ClusterIP', selector, ports: [{ name: 'http', port, targetPort: 'http', protocol: 'TCP' }] },
  };
}

/**
 * At most one pod of the class evicted at a time (node drift, upgrades). `maxUnavailable` rather than `minAvailable`,
 * so a single warm-standby replica never blocks a node drain forever; pods that never turned Ready can always go.
 */
export function podDisruptionBudget(name: string, ns: string, labels: Labels, selector: Labels): PodDisruptionBudget {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace: ns, labels },
    spec: { maxUnavailable: 1, selector: { matchLabels: selector }, unhealthyPodEvictionPolicy: 'AlwaysAllow' },
  };
}
