/**
 * Can each role make the calls its handler makes, and no more? The probes: every call of the handler on the resource
 * it calls it on (must be allowed), the same calls on a neighbouring resource, and the destructive calls nearest to
 * them (must be denied). Judged on IAM's policy simulator (SimulatePrincipalPolicy,
 * https://docs.aws.amazon.com/IAM/latest/APIReference/API_SimulatePrincipalPolicy.html): the role's identity-based
 * policies, its permissions boundary and the organization's service control policies ("evaluates statements in
 * identity-based policies, service control policies (SCPs) including their condition keys and resource scoping",
 * @aws-sdk/client-iam@3.1169.0 dist-types/commands/SimulatePrincipalPolicyCommand.d.ts:53-57); not resource-based
 * policies such as a KMS key policy ("Simulation of resource-based policies isn't supported for IAM roles",
 * dist-types/models/models_0.d.ts, SimulatePrincipalPolicyRequest.ResourcePolicy).
 */
import { type RoutingFacts } from '../reconciler/routing-facts';
import { routingTarget } from '../reconciler/targets';
import { AwsMetrics } from '../metrics/contract';
import { type CapacityClass, type ModelDataArtifact } from '../service/capacity-class';
import { ecrRepositoryArn, parseEcrImage } from '../trust/image-reference';
import { contextEntries, neighbour, type PermissionProbe } from './probe';
import { type CheckResult } from './result';
import { parseS3Location, parseS3Uri } from '../trust/s3-uri';
import { TOKEN_TEXT } from '../service/serving-record';

/**
 * The reconciler's calls (lambda/reconciler: GetMetricData in reconcile.ts; its target's reads and writes, whose probes
 * each target kind lists: `writerProbes` in lib/core/reconciler/targets/<kind>.ts) and the ones it must not make. It
 * publishes its metrics as EMF in its log, so cloudwatch:PutMetricData is denied.
 */
export function reconcilerProbes(facts: RoutingFacts): PermissionProbe[] {
  return [
    { action: 'cloudwatch:GetMetricData', resource: '*', expect: 'allowed', why: 'reads its signals (no resource-level permissions)' },
    { action: 'cloudwatch:PutMetricData', resource: '*', expect: 'denied', why: 'its metrics are EMF log lines' },
    { action: 'iam:PassRole', resource: '*', expect: 'denied', why: 'it never hands a role to a service' },
    ...routingTarget(facts).writerProbes(facts),
  ];
}

/** The KEDA operator's one call (lib/eks/keda.ts) and its nearest neighbours. */
export function kedaOperatorProbes(): PermissionProbe[] {
  return [
    { action: 'cloudwatch:GetMetricData', resource: '*', expect: 'allowed', why: 'reads the scaling metrics' },
    { action: 'cloudwatch:PutMetricData', resource: '*', expect: 'denied', why: 'it only reads' },
    { action: 'cloudwatch:ListMetrics', resource: '*', expect: 'denied', why: 'not a call KEDA\'s aws-cloudwatch scaler makes' },
  ];
}

/** What the Karpenter controller probes need from the deployed stack. */
export interface KarpenterProbeFacts {
  readonly partition: string;
  readonly region: string;
  readonly account: string;
  readonly clusterName: string;
  /** The node role the controller passes to EC2 (its policy's AllowPassingInstanceRole statement). */
  readonly nodeRoleArn: string;
  /** A NodePool of the service, for the tags a launch carries. */
  readonly nodePool: string;
}

/**
 * The Karpenter controller's calls its policy conditions (lib/eks/karpenter.ts `karpenterControllerStatements`, the
 * upstream reference policy re-expressed): each with the request context the controller sends, so the simulator
 * evaluates the tag, PassRole and region conditions instead of skipping them, and the same call with the context of a
 * request the policy exists to refuse. Tags the controller puts on a launch and finds on its instances: the cluster's
 * `kubernetes.io/cluster/<cluster>` = owned, `eks:eks-cluster-name`, `karpenter.sh/nodepool` (Karpenter's reference
 * policy, the same statements). An instance ARN stands for the launched resources (the statements name instance/*).
 */
export function karpenterControllerProbes(f: KarpenterProbeFacts): PermissionProbe[] {
  const instance = `arn:${f.partition}:ec2:${f.region}:${f.account}:instance/i-0000000000verify`;
  const clusterArn = `arn:${f.partition}:eks:${f.region}:${f.account}:cluster/${f.clusterName}`;
  const owned = `kubernetes.io/cluster/${f.clusterName}`;
  const launchTags = {
    [`aws:RequestTag/${owned}`]: 'owned', 'aws:RequestTag/eks:eks-cluster-name': f.clusterName, 'aws:RequestTag/karpenter.sh/nodepool': f.nodePool,
  };
  const { ['aws:RequestTag/karpenter.sh/nodepool']: _pool, ...launchTagsWithoutPool } = launchTags;
  const otherRegion = f.region === 'us-east-1' ? 'us-west-2' : 'us-east-1';
  return [
    { action: 'eks:DescribeCluster', resource: clusterArn, expect: 'allowed', why: 'discovers the API server endpoint' },
    { action: 'ec2:RunInstances', resource: instance, expect: 'allowed', why: 'launches a node tagged for its cluster and NodePool', context: launchTags },
    { action: 'ec2:RunInstances', resource: instance, expect: 'denied', why: 'an instance no NodePool claims', context: launchTagsWithoutPool },
    {
      action: 'ec2:TerminateInstances', resource: instance, expect: 'allowed', why: 'terminates a node of its cluster\'s NodePools',
      context: { [`aws:ResourceTag/${owned}`]: 'owned', 'aws:ResourceTag/karpenter.sh/nodepool': f.nodePool },
    },
    {
      action: 'ec2:TerminateInstances', resource: instance, expect: 'denied', why: 'an instance of another cluster',
      context: { 'aws:ResourceTag/kubernetes.io/cluster/another-cluster': 'owned', 'aws:ResourceTag/karpenter.sh/nodepool': f.nodePool },
    },
    { action: 'iam:PassRole', resource: f.nodeRoleArn, expect: 'allowed', why: 'hands the node role to EC2', context: { 'iam:PassedToService': 'ec2.amazonaws.com' } },
    { action: 'iam:PassRole', resource: f.nodeRoleArn, expect: 'denied', why: 'the node role to another service', context: { 'iam:PassedToService': 'lambda.amazonaws.com' } },
    { action: 'ec2:DescribeInstances', resource: '*', expect: 'allowed', why: 'reads its region\'s instances', context: { 'aws:RequestedRegion': f.region } },
    { action: 'ec2:DescribeInstances', resource: '*', expect: 'denied', why: 'another region', context: { 'aws:RequestedRegion': otherRegion } },
  ];
}

/**
 * A class's model-data reader (the EKS model-data pod identity, lib/eks/inference-service.ts `modelDataIdentity`): its
 * pinned object (GetObjectVersion bound by s3:VersionId when a version is pinned, else GetObject) and, with an SSE-KMS
 * key, kms:Decrypt only when S3 asks on its behalf (kms:ViaService = s3.<key region>.amazonaws.com,
 * lib/trust/model-data-key.ts). Denied: another version, another object, writing, and decrypting outside S3.
 */
export function modelDataReaderProbes(modelData: ModelDataArtifact, partition: string, keyArn?: string): PermissionProbe[] {
  const location = parseS3Uri(modelData.uri);
  if (!location || modelDataUnnamed(modelData)) return [];
  const object = `arn:${partition}:s3:::${location.bucket}/${location.key}`;
  const v = modelData.versionId;
  return [
    ...(v === undefined
      ? [{ action: 's3:GetObject', resource: object, expect: 'allowed' as const, why: 'reads its model data' }]
      : [
        { action: 's3:GetObjectVersion', resource: object, expect: 'allowed' as const, why: 'reads its pinned version', context: { 's3:VersionId': v } },
        { action: 's3:GetObjectVersion', resource: object, expect: 'denied' as const, why: 'another version', context: { 's3:VersionId': `${v}-not-pinned` } },
      ]),
    { action: 's3:GetObject', resource: neighbour(object), expect: 'denied', why: 'another object' },
    { action: 's3:PutObject', resource: object, expect: 'denied', why: 'it only reads' },
    ...decryptThroughS3Probes(keyArn),
  ];
}

/**
 * Model data whose URI or version id held a CloudFormation token at synth (a bucket of the app, a version read from a
 * parameter): the serving record keeps only TOKEN_TEXT for it (lib/control/serving-record.ts), so no probe can name the
 * object or its version.
 */
export function modelDataUnnamed(modelData: ModelDataArtifact | undefined): boolean {
  // A version id given as a token is recorded so too, and the pinned-version probe would then ask for `{token}` (R224).
  return modelData !== undefined && (modelData.uri.includes(TOKEN_TEXT) || (modelData.versionId?.includes(TOKEN_TEXT) ?? false));
}

/** The check in place of a role's model-data probes when `modelDataUnnamed`: skipped, and why, never a false failure. */
export function modelDataSkipped(roleLabel: string): CheckResult {
  return {
    id: `iam:${roleLabel}:model-data`,
    status: 'skip',
    settles: `${roleLabel} reads its model data and nothing else`,
    detail: 'the model data\'s URI or version id was a CloudFormation reference at synth, which the serving record does not '
      + 'keep, so no probe can name the object; read the role\'s s3 statement in the console or the template',
  };
}

/**
 * The model-data key (lib/trust/model-data-key.ts): kms:Decrypt when S3 asks on the reader's behalf
 * (kms:ViaService = s3.<key region>.amazonaws.com), not through another service. None without a key.
 */
function decryptThroughS3Probes(keyArn: string | undefined): PermissionProbe[] {
  const region = keyArn?.split(':')[3];
  if (!keyArn || !region) return [];
  return [
    { action: 'kms:Decrypt', resource: keyArn, expect: 'allowed', why: 'decrypts through S3', context: { 'kms:ViaService': `s3.${region}.amazonaws.com` } },
    { action: 'kms:Decrypt', resource: keyArn, expect: 'denied', why: 'decrypts outside S3', context: { 'kms:ViaService': `sqs.${region}.amazonaws.com` } },
  ];
}

/**
 * A SageMaker class's execution role (lib/sagemaker/class-model.ts): pull its own image's repository, read its model
 * data (the current version of its object: CreateModel's S3DataSource names no version; under a prefix, the objects
 * under it and ListBucket bound by s3:prefix), decrypt it through S3, and publish instance metrics only in SageMaker's
 * namespace (cloudwatch:namespace). Denied: another repository, pushing, another object or prefix, other namespaces.
 */
export function sageMakerExecutionProbes(cls: CapacityClass, partition: string, keyArn?: string): PermissionProbe[] {
  const image = parseEcrImage(cls.artifact.image);
  const repo = image && ecrRepositoryArn(image, partition);
  const namespace = AwsMetrics.sageMakerEndpointInstances.namespace;
  return [
    ...(repo ? [
      { action: 'ecr:BatchGetImage', resource: repo, expect: 'allowed' as const, why: 'pulls its image' },
      { action: 'ecr:BatchGetImage', resource: neighbour(repo), expect: 'denied' as const, why: 'another repository' },
      { action: 'ecr:PutImage', resource: repo, expect: 'denied' as const, why: 'it only pulls' },
    ] : []),
    ...sageMakerModelDataProbes(cls.artifact.modelData, partition),
    ...(cls.artifact.modelData ? decryptThroughS3Probes(keyArn) : []),
    { action: 'cloudwatch:PutMetricData', resource: '*', expect: 'allowed', why: 'publishes instance metrics', context: { 'cloudwatch:namespace': namespace } },
    { action: 'cloudwatch:PutMetricData', resource: '*', expect: 'denied', why: 'another namespace', context: { 'cloudwatch:namespace': `${namespace}-not-granted` } },
  ];
}

function sageMakerModelDataProbes(modelData: ModelDataArtifact | undefined, partition: string): PermissionProbe[] {
  // The service checks refuse the bucket root `s3://bucket/` (key ''); the branch for it below is defensive.
  const location = modelData && !modelDataUnnamed(modelData) ? parseS3Location(modelData.uri) : undefined;
  if (!location) return [];
  const { bucket, key } = location;
  const object = `arn:${partition}:s3:::${bucket}/${key}`;
  const bucketArn = `arn:${partition}:s3:::${bucket}`;
  // A prefix by the rule the execution role is granted by (lib/sagemaker/class-model.ts: the URI ends with '/'), the
  // bucket root `s3://bucket/` (key '') included.
  if (!location.prefix) {
    return [
      { action: 's3:GetObject', resource: object, expect: 'allowed', why: 'reads its model data' },
      { action: 's3:GetObject', resource: neighbour(object), expect: 'denied', why: 'another object' },
      { action: 's3:PutObject', resource: object, expect: 'denied', why: 'it only reads' },
    ];
  }
  // At the bucket root the whole bucket is granted: no key in it lies outside, so the denied probes use another bucket.
  const outside = key === '' ? neighbour(bucketArn) : bucketArn;
  const where = key === '' ? 'another bucket (its prefix is the bucket root)' : 'another prefix';
  return [
    { action: 's3:GetObject', resource: `${object}model.safetensors`, expect: 'allowed', why: 'reads an object under its model-data prefix' },
    { action: 's3:GetObject', resource: `${outside}/not-granted/model.safetensors`, expect: 'denied', why: `an object under ${where}` },
    { action: 's3:ListBucket', resource: bucketArn, expect: 'allowed', why: 'lists its prefix', context: { 's3:prefix': key } },
    { action: 's3:ListBucket', resource: outside, expect: 'denied', why: `lists ${where}`, context: { 's3:prefix': 'not-granted/' } },
  ];
}

/**
 * SimulatePrincipalPolicy's answer for one action (EvaluationResult), plain data shaped like the SDK's. The simulator
 * returns one per action, whatever the number of resources: the top-level fields are the aggregate over the requested
 * resources, EvalResourceName is the ARN template of the resource type (not the ARN asked about), and the decision and
 * missing context keys for a given ARN are in ResourceSpecificResults (@aws-sdk/client-iam@3.1169.0
 * dist-types/models/models_0.d.ts:8259-8275 "The simulator now returns a single EvaluationResult per action", :8282-8290,
 * :8224-8233). Earlier answers held one result per action and resource, the ARN in EvalResourceName: both are read.
 */
export interface SimulatedDecision {
  readonly EvalActionName?: string;
  readonly EvalResourceName?: string;
  readonly EvalDecision?: string;
  /**
   * "A list of context keys that are required by the included input policies but that were not provided by one of the
   * input parameters" (https://docs.aws.amazon.com/IAM/latest/APIReference/API_EvaluationResult.html); for a call that
   * names resource ARNs, listed under ResourceSpecificResults instead.
   */
  readonly MissingContextValues?: readonly string[];
  readonly ResourceSpecificResults?: ReadonlyArray<{
    readonly EvalResourceName?: string;
    readonly EvalResourceDecision?: string;
    readonly MissingContextValues?: readonly string[];
  }>;
  /** "Specifies whether the simulated operation is allowed by the Organizations service control policies" (models_0.d.ts:8171-8177). */
  readonly OrganizationsDecisionDetail?: { readonly AllowedByOrganizations?: boolean };
}

/** The simulator's decision for one probe, from the result for its action and, within it, its resource. */
export interface ProbeDecision {
  /** `allowed`, `implicitDeny` or `explicitDeny`. */
  readonly decision: string;
  /** Context keys the policies test that the probe did not give (top-level and per-resource, once each). */
  readonly missingContext: readonly string[];
  /** The organization's service control policies deny it (the simulator evaluates them). */
  readonly deniedByOrganizations: boolean;
}

/** One SimulatePrincipalPolicy call: the actions of the probes that share a resource and a context. */
export interface SimulationGroup {
  readonly resource: string;
  readonly context: ReturnType<typeof contextEntries>;
  readonly actions: string[];
}

/**
 * The probes as simulator calls: ResourceArns and ContextEntries apply to every action of a call, so one call per
 * resource and context (a probe allowed with one s3:VersionId and denied with another takes two).
 */
export function simulationGroups(probes: readonly PermissionProbe[]): SimulationGroup[] {
  const groups = new Map<string, SimulationGroup>();
  for (const p of probes) {
    const context = contextEntries(p);
    const key = JSON.stringify([p.resource, context]);
    const g = groups.get(key) ?? { resource: p.resource, context, actions: [] };
    if (!g.actions.includes(p.action)) g.actions.push(p.action);
    groups.set(key, g);
  }
  return [...groups.values()];
}

/**
 * The decision for one probe among the answers to its group's call. Each call names one resource, so the result for
 * the probe's action is the probe's: its ResourceSpecificResults entry for the probe's ARN where there is one, else
 * the top-level decision, which aggregates that one resource (or is the old shape's per-resource result).
 */
export function decisionFor(
  probe: PermissionProbe, answers: ReadonlyArray<{ group: SimulationGroup; results: readonly SimulatedDecision[] }>,
): ProbeDecision | undefined {
  const key = JSON.stringify([probe.resource, contextEntries(probe)]);
  const answer = answers.find((a) => JSON.stringify([a.group.resource, a.group.context]) === key);
  const result = answer?.results.find((x) => x.EvalActionName === probe.action);
  const specific = result?.ResourceSpecificResults?.find((r) => r.EvalResourceName === probe.resource);
  const decision = specific?.EvalResourceDecision ?? result?.EvalDecision;
  if (!result || decision === undefined) return undefined;
  return {
    decision,
    missingContext: [...new Set([...result.MissingContextValues ?? [], ...specific?.MissingContextValues ?? []])],
    deniedByOrganizations: result.OrganizationsDecisionDetail?.AllowedByOrganizations === false,
  };
}

/** One result per probe, from the simulator's decision for each (`decisions[i]` answers `probes[i]`). */
export function permissionChecks(
  roleName: string,
  roleArn: string,
  probes: readonly PermissionProbe[],
  decisions: ReadonlyArray<ProbeDecision | undefined>,
): CheckResult[] {
  return probes.map((p, i) => {
    const d = decisions[i]?.decision;
    const allowed = d === 'allowed';
    const ok = d !== undefined && allowed === (p.expect === 'allowed');
    const context = Object.entries(p.context ?? {}).map(([k, v]) => `${k}=${[v].flat().join(',')}`);
    const missing = decisions[i]?.missingContext ?? [];
    const scp = decisions[i]?.deniedByOrganizations ? "; your organization's service control policies deny it" : '';
    return {
      id: `iam:${roleName}:${p.action}:${p.resource}${context.length > 0 ? `:${context.join(';')}` : ''}`,
      status: ok ? 'pass' : 'fail',
      settles: `${roleName} ${p.expect === 'allowed' ? 'can' : 'cannot'} call ${p.action} on ${p.resource}` +
        `${context.length > 0 ? ` with ${context.join(', ')}` : ''} (${p.why})`,
      detail: d === undefined
        ? 'the simulator returned no decision for it'
        : `SimulatePrincipalPolicy(${roleArn}): ${d}${scp}`
          + `${missing.length > 0 ? `; context keys the policies test but the probe does not give: ${missing.join(', ')}` : ''}`,
    };
  });
}
