import { type Duration } from 'aws-cdk-lib';
import {
  type CapacityClass,
  type CapacityClassSpec,
  Checker,
  type ClassProblem,
  duplicates,
  EKS_RULES,
  type HardwareCatalog,
  isFiniteLiteral,
  isUnresolved,
  memoryBreakdown,
} from '../core';
import { durationSeconds, sizeGibibytes } from '../util/duration';
import { type EksClassOptions } from './class-options';
import { modelVolumeNeedGiB } from './runtime';
import { type ScalingOptions } from './scaling-options';
import { chartVersionProblem } from './versions';

/** The name every EKS object of a class derives from: `<service>-<class>` unless the NodePool name is overridden. */
export function classObjectName(service: string, className: string): string {
  return `${service}-${className}`;
}

export interface EksCheckInput {
  readonly service: string;
  readonly namespace: string;
  readonly specs: readonly CapacityClassSpec[];
  /** The classes that passed the core checks. */
  readonly classes: readonly CapacityClass[];
  readonly catalog: HardwareCatalog;
  readonly classOptions: Readonly<Record<string, EksClassOptions>>;
  readonly chartVersions: Readonly<Record<string, string | undefined>>;
  readonly clusterName: string;
  /** Whether the construct creates the cluster (its name is then ours to check). */
  readonly newCluster?: boolean;
  readonly scaling?: ScalingOptions;
  readonly loadBalancer?: { readonly deregistrationDelay?: Duration; readonly allowedCidrs?: readonly string[] };
  readonly systemNodeCount?: number;
  readonly amiAlias?: string;
}

/** Most target groups one ALB forward action takes (not adjustable): https://docs.aws.amazon.com/elasticloadbalancing/latest/application/load-balancer-limits.html */
export const MAX_TARGET_GROUPS_PER_ACTION = 5;

/** Problems specific to serving on EKS (the core checks run separately). Tokens follow the rules' token policy. */
export function eksProblems(input: EksCheckInput): ClassProblem[] {
  const problems: ClassProblem[] = [];
  const add = (field: string, message: string, className?: string) => problems.push({ className, field, message });
  const rules = new Checker(EKS_RULES);

  rules.check('contract.name', input.service);
  rules.check('namespace', input.namespace);
  if (isUnresolved(input.clusterName)) {
    add('clusterName', 'is a CDK token; pass the literal cluster name (it appears in IAM condition keys and Karpenter discovery tags)');
  } else if (input.newCluster) {
    rules.check('clusterName', input.clusterName);
  }
  rules.cross('classes', input.specs.map((s) => s.name));
  for (const [chart, version] of Object.entries(input.chartVersions)) {
    if (version === undefined) continue;
    const p = chartVersionProblem(version);
    if (p) add(`chartVersions.${chart}`, p);
  }
  checkScaling(input.scaling ?? {}, rules);
  const lb = input.loadBalancer ?? {};
  rules.optional('loadBalancer.deregistrationDelay', durationSeconds(lb.deregistrationDelay));
  (lb.allowedCidrs ?? []).forEach((cidr, i) => rules.cross('loadBalancer.allowedCidrs', cidr, `loadBalancer.allowedCidrs[${i}]`));
  rules.optional('clusterOptions.systemNodeCount', input.systemNodeCount);
  rules.optional('amiAlias', input.amiAlias);
  for (const p of rules.problems) add(p.field, p.message);

  const known = new Set(input.specs.map((s) => s.name));
  for (const name of Object.keys(input.classOptions)) {
    if (!known.has(name)) add(`classOptions.${name}`, `names no declared class; known classes: ${[...known].join(', ')}`);
  }

  const nodePoolNames = input.specs.map((s) => input.classOptions[s.name]?.nodePoolName ?? classObjectName(input.service, s.name));
  for (const name of duplicates(nodePoolNames)) {
    const owners = input.specs.filter((_, i) => nodePoolNames[i] === name).map((s) => s.name);
    add('nodePoolName', `'${name}' is the NodePool of more than one class (${owners.join(', ')}); NodePool names must be unique in the cluster`);
  }
  for (const spec of input.specs) {
    const own = new Checker(EKS_RULES);
    const opts = input.classOptions[spec.name] ?? {};
    const objectName = classObjectName(input.service, spec.name);
    // Only when both parts are valid on their own: otherwise the part's own problem says it better.
    if (isNameLike(input.service) && isNameLike(spec.name)) own.check('class.objectName', objectName, 'name');
    own.optional('classOptions.nodePoolName', opts.nodePoolName);
    checkReplicas(spec, opts, own);
    own.optional('classOptions.targetRequestsPerReplicaPerPeriod', opts.targetRequestsPerReplicaPerPeriod);
    own.optional('classOptions.port', opts.port);
    for (const [field, path] of [['healthPath', opts.healthPath], ['readyPath', opts.readyPath], ['warmup.path', opts.warmup?.path]] as const) {
      if (path !== undefined) own.cross('classOptions.path', path, `classOptions.${field}`);
    }
    if (opts.warmup) own.check('classOptions.warmup.maxLatency', durationSeconds(opts.warmup.maxLatency));
    own.optional('classOptions.startupTimeout', durationSeconds(opts.startupTimeout));
    own.optional('classOptions.modelCacheSize', sizeGibibytes(opts.modelCacheSize));
    own.optional('classOptions.nodeVolumeSize', sizeGibibytes(opts.nodeVolumeSize));
    if (opts.capacityTypes !== undefined) own.cross('classOptions.capacityTypes', opts.capacityTypes);
    for (const p of own.problems) add(p.field, p.message, spec.name);
    const cls = input.classes.find((c) => c.name === spec.name);
    if (cls) checkInstanceTypes(spec, cls, opts, input.catalog, (field, message) => add(field, message, spec.name));
    // The model volume holds the weights and the engine's caches (HOME, XDG_CACHE_HOME and the engine's cache variables).
    const cacheGiB = sizeGibibytes(opts.modelCacheSize);
    if (cls && cacheGiB !== undefined && !isUnresolved(cacheGiB) && !isUnresolved(cls.footprint.weightsGiB) && cacheGiB < modelVolumeNeedGiB(cls)) {
      add('classOptions.modelCacheSize', `is ${cacheGiB} GiB but the model volume holds the weights (${cls.footprint.weightsGiB} GiB) and the engine's caches; allowed: at least ${Math.ceil(modelVolumeNeedGiB(cls))} GiB`, spec.name);
    }
  }
  return problems;
}

function isNameLike(value: string): boolean {
  return typeof value === 'string' && !isUnresolved(value) && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(value);
}

type Add = (field: string, message: string) => void;

function checkScaling(s: ScalingOptions, rules: Checker<typeof EKS_RULES>): void {
  const period = durationSeconds(s.metricPeriod);
  const periodOk = rules.optional('scaling.metricPeriod', period);
  const collection = durationSeconds(s.metricCollectionTime);
  if (rules.optional('scaling.metricCollectionTime', collection) && collection !== undefined && periodOk && isFiniteLiteral(collection)) {
    rules.cross('scaling.metricCollectionTime%period', { collectionSeconds: collection, periodSeconds: period ?? 60 }, 'scaling.metricCollectionTime');
  }
  rules.optional('scaling.scaleDownStabilization', durationSeconds(s.scaleDownStabilization));
  rules.optional('scaling.maxScaleUpPods', s.maxScaleUpPods);
  rules.optional('scaling.scaleUpPeriod', durationSeconds(s.scaleUpPeriod));
  rules.optional('scaling.pollingInterval', durationSeconds(s.pollingInterval));
}

function checkReplicas(spec: CapacityClassSpec, opts: EksClassOptions, rules: Checker<typeof EKS_RULES>): void {
  const quota = spec.maxReplicas;
  const { minReplicas: min, maxReplicas: max } = opts;
  const maxOk = rules.optional('classOptions.maxReplicas', max);
  const minOk = rules.optional('classOptions.minReplicas', min);
  const range = { min: minOk ? min : undefined, max: maxOk ? max : undefined, quota: isFiniteLiteral(quota) ? quota : undefined };
  rules.cross('classOptions.replicaRange', { prop: 'maxReplicas', ...range }, 'classOptions.maxReplicas');
  rules.cross('classOptions.replicaRange', { prop: 'minReplicas', ...range }, 'classOptions.minReplicas');
}

function checkInstanceTypes(spec: CapacityClassSpec, cls: CapacityClass, opts: EksClassOptions, catalog: HardwareCatalog, add: Add): void {
  const target = spec.footprint.acceleratorTarget;
  for (const type of opts.additionalInstanceTypes ?? []) {
    const hw = catalog.find(type);
    const field = 'classOptions.additionalInstanceTypes';
    if (!hw) {
      add(field, `'${type}' is not in the hardware catalog, so it has no known accelerator; the class's artifact needs a ${target} accelerator`);
      continue;
    }
    if (hw.platform !== 'ec2') {
      add(field, `'${type}' is a SageMaker type; EKS nodes need EC2 instance types`);
      continue;
    }
    if (hw.acceleratorTarget !== target) {
      add(field, `'${type}' carries ${hw.acceleratorName} (${hw.acceleratorTarget}) but the artifact targets '${target}'; it has no accelerator of the artifact's kind`);
      continue;
    }
    if (hw.kubernetesResourceName !== cls.hardware.kubernetesResourceName) {
      add(field, `'${type}' exposes ${hw.kubernetesResourceName}, not ${cls.hardware.kubernetesResourceName} like ${cls.instanceType}`);
      continue;
    }
    const tp = spec.footprint.tensorParallelDegree;
    if (hw.tensorParallelUnits < tp) {
      add(field, `'${type}' has ${hw.tensorParallelUnits} tensor-parallel units; one replica needs ${tp}`);
      continue;
    }
    const m = memoryBreakdown(spec, hw);
    if (m.shortfallGiB > 0) add(field, `'${type}' cannot hold the model: needs ${m.requiredGiB.toFixed(1)} GiB, ${m.usableGiB.toFixed(1)} GiB usable`);
  }
}
