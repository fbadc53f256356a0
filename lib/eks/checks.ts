import {
  type CapacityClass,
  type CapacityClassSpec,
  type ClassProblem,
  duplicates,
  type HardwareCatalog,
  isUnresolved,
  memoryBreakdown,
  rfc1123LabelProblem,
} from '../core';
import { type EksClassOptions } from './class-options';
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
}

/** Problems specific to serving on EKS (the core checks run separately). Tokens are skipped. */
export function eksProblems(input: EksCheckInput): ClassProblem[] {
  const problems: ClassProblem[] = [];
  const add = (field: string, message: string, className?: string) => problems.push({ className, field, message });

  for (const [field, value] of [
    ['contract.name', input.service],
    ['namespace', input.namespace],
  ] as const) {
    const p = rfc1123LabelProblem(value);
    if (p) add(field, `'${value}' ${p} (it names Kubernetes objects)`);
  }
  if (isUnresolved(input.clusterName)) {
    add('clusterName', 'is a CDK token; pass the literal cluster name (it appears in IAM condition keys and Karpenter discovery tags)');
  }
  for (const [chart, version] of Object.entries(input.chartVersions)) {
    if (version === undefined) continue;
    const p = chartVersionProblem(version);
    if (p) add(`chartVersions.${chart}`, p);
  }
  const known = new Set(input.specs.map((s) => s.name));
  for (const name of Object.keys(input.classOptions)) {
    if (!known.has(name)) add(`classOptions.${name}`, `names no declared class; known classes: ${[...known].join(', ')}`);
  }

  const nodePoolNames = input.specs.map((s) => input.classOptions[s.name]?.nodePoolName ?? classObjectName(input.service, s.name));
  for (const name of duplicates(nodePoolNames)) {
    const owners = input.specs.filter((_, i) => nodePoolNames[i] === name).map((s) => s.name);
    add('nodePoolName', `'${name}' is the NodePool of more than one class (${owners.join(', ')}); NodePool names must be unique in the cluster`);
  }
  input.specs.forEach((spec, i) => {
    const own = (field: string, message: string) => add(field, message, spec.name);
    const opts = input.classOptions[spec.name] ?? {};
    const objectName = classObjectName(input.service, spec.name);
    const p = rfc1123LabelProblem(objectName);
    if (p && !rfc1123LabelProblem(spec.name)) own('name', `the derived object name '${objectName}' ${p}; shorten the service or class name`);
    if (opts.nodePoolName !== undefined) {
      const np = rfc1123LabelProblem(nodePoolNames[i]);
      if (np) own('classOptions.nodePoolName', `'${nodePoolNames[i]}' ${np}`);
    }
    const cls = input.classes.find((c) => c.name === spec.name);
    checkReplicas(spec, opts, own);
    if (opts.targetRequestsPerReplicaPerPeriod !== undefined && !isUnresolved(opts.targetRequestsPerReplicaPerPeriod)) {
      const t = opts.targetRequestsPerReplicaPerPeriod;
      if (!(Number.isFinite(t) && t > 0)) own('classOptions.targetRequestsPerReplicaPerPeriod', `is ${t}; the KEDA target must be a positive number of requests`);
    }
    if (opts.port !== undefined && !(Number.isInteger(opts.port) && opts.port >= 1024 && opts.port <= 65535)) {
      own('classOptions.port', `is ${opts.port}; allowed: a whole number from 1024 to 65535 (the server runs as non-root)`);
    }
    for (const field of ['healthPath', 'readyPath'] as const) {
      const path = opts[field];
      if (path !== undefined && !path.startsWith('/')) own(`classOptions.${field}`, `'${path}' must start with '/'`);
    }
    if (cls) checkInstanceTypes(spec, cls, opts, input.catalog, own);
  });
  return problems;
}

type Add = (field: string, message: string) => void;

function checkReplicas(spec: CapacityClassSpec, opts: EksClassOptions, add: Add): void {
  const quota = spec.maxReplicas;
  const { minReplicas: min, maxReplicas: max } = opts;
  if (max !== undefined && !isUnresolved(max)) {
    if (!(Number.isInteger(max) && max >= 1)) add('classOptions.maxReplicas', `is ${max}; it must be a whole number of at least 1`);
    else if (!isUnresolved(quota) && max > quota) add('classOptions.maxReplicas', `${max} is above the class quota of ${quota} replicas (maxReplicas of the class)`);
  }
  if (min !== undefined && !isUnresolved(min)) {
    if (!(Number.isInteger(min) && min >= 1)) add('classOptions.minReplicas', `is ${min}; it must be a whole number of at least 1 (a warm replica keeps the class routable)`);
    else if (max !== undefined && min > max) add('classOptions.minReplicas', `${min} is above classOptions.maxReplicas ${max}`);
    else if (!isUnresolved(quota) && min > quota) add('classOptions.minReplicas', `${min} is above the class quota of ${quota} replicas`);
  }
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
