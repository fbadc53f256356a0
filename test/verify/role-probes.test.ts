/**
 * verify's IAM probes against the policies the library really synthesizes: each probe's context (ContextEntries) makes
 * the tag, PassRole, region, version and kms:ViaService conditions evaluate, and each probe's expectation is what those
 * statements decide. Judged by the permissions tests' evaluator (test/permissions/iam-policy.ts `allows`, which reads
 * the conditions), so a policy change that breaks a probe, or a probe that no longer matches the policy, fails here.
 */
import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
import { GetTemplateCommand, ListStackResourcesCommand } from '@aws-sdk/client-cloudformation';
import { ListMetricsCommand } from '@aws-sdk/client-cloudwatch';
import { GetRoleCommand, SimulatePrincipalPolicyCommand } from '@aws-sdk/client-iam';
import { GetFunctionConfigurationCommand } from '@aws-sdk/client-lambda';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import { EksStableDiffusionStack } from '../../examples/eks-stable-diffusion';
import { SageMakerLlmStack } from '../../examples/sagemaker-llm/stack';
import { KARPENTER_SERVICE_ACCOUNT } from '../../lib/core/platform/service-accounts';
import { RECONCILER_CONFIG_ENV, type ReconcilerConfig } from '../../lib/core/reconciler/config';
import { servingRecords, TOKEN_TEXT } from '../../lib/core/service/serving-record';
import { karpenterControllerProbes, modelDataReaderProbes, modelDataSkipped, modelDataUnnamed, reconcilerProbes, sageMakerExecutionProbes } from '../../lib/core/verify/permissions';
import { type PermissionProbe } from '../../lib/core/verify/probe';
import { podIdentityRole } from '../../lib/core/verify/template';
import { EksInferenceService } from '../../lib/eks/inference-service';
import { SageMakerCapacityEndpoint } from '../../lib/sagemaker/endpoint';
import { smClasses } from '../sagemaker/fixtures';
import { ACCOUNT, allows, REGION, resolver, roleStatements, type Statement, type Template as Json } from '../permissions/iam-policy';
import { FETCHER_IMAGE, LLAMA_CONTRACT, llamaClasses, testStack } from '../util';
import { clients, runVerify } from '../../bin/verify';
import { cfn, contextOf, cw, iam, lambda, resetAccount, simulator } from './account';

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

/** The reconciler function of a synthesized template: its role's logical id and its resolved configuration. */
function reconcilerOf(template: Json & { Resources: Resources }): { roleId: string; config: ReconcilerConfig } {
  const fn = Object.values(template.Resources).find((r) => r.Type === 'AWS::Lambda::Function'
    && (r.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables?.[RECONCILER_CONFIG_ENV])!;
  const raw = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables[RECONCILER_CONFIG_ENV];
  return {
    roleId: (fn.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0],
    config: JSON.parse(String(resolver(template)(raw))) as ReconcilerConfig,
  };
}

/** What the evaluator decides for each probe, beside what the probe expects. */
function judged(statements: readonly Statement[], probes: readonly PermissionProbe[], withContext = true) {
  return probes.map((p) => ({
    probe: `${p.action} ${p.resource} ${JSON.stringify(p.context ?? {})}`,
    expect: p.expect,
    decided: allows(statements, { action: p.action, resource: p.resource, context: withContext ? (p.context ?? {}) as Record<string, string> : {} })
      ? 'allowed' : 'denied',
  }));
}

describe('the Karpenter controller role of examples/eks-stable-diffusion', () => {
  const stack = new EksStableDiffusionStack(new App(), 'EksStableDiffusion', { env: { account: ACCOUNT, region: REGION } });
  const template = Template.fromStack(stack).toJSON() as Json & { Resources: Resources };
  const roleId = podIdentityRole(template as never, KARPENTER_SERVICE_ACCOUNT)!;
  const statements = roleStatements(template, roleId);
  const { config } = reconcilerOf(template);
  const nodePool = (config.facts as unknown as { targets: Array<{ nodePoolName: string }> }).targets[0].nodePoolName;
  const nodeRoleArn = String([statements.find((s) => s.Sid === 'AllowPassingInstanceRole')!.Resource].flat()[0]);
  const probes = karpenterControllerProbes({ partition: 'aws', region: REGION, account: ACCOUNT, clusterName: config.clusterName!, nodeRoleArn, nodePool });

  test('every probe decides as it expects, with the context the controller sends', () => {
    expect(probes.filter((p) => p.context)).toHaveLength(probes.length - 1);
    expect(judged(statements, probes).filter((j) => j.expect !== j.decided)).toEqual([]);
  });

  test('without the context the conditional calls it needs would read as denied: the context is what the check rests on', () => {
    const conditional = probes.filter((p) => p.expect === 'allowed' && p.context);
    expect(conditional.map((p) => p.action)).toEqual(['ec2:RunInstances', 'ec2:TerminateInstances', 'iam:PassRole', 'ec2:DescribeInstances']);
    expect(judged(statements, conditional, false).map((j) => j.decided)).toEqual(['denied', 'denied', 'denied', 'denied']);
  });
});

describe('examples/sagemaker-llm', () => {
  const template = Template.fromStack(new SageMakerLlmStack(new App(), 'SageMakerLlm', { env: { account: ACCOUNT, region: REGION } })).toJSON() as Json & { Resources: Resources };

  test('the reconciler role decides each reconciler probe as it expects (DescribeScalableTargets included)', () => {
    const { roleId, config } = reconcilerOf(template);
    const probes = reconcilerProbes(config.facts);
    expect(probes.map((p) => p.action)).toContain('application-autoscaling:DescribeScalableTargets');
    expect(judged(roleStatements(template, roleId), probes).filter((j) => j.expect !== j.decided)).toEqual([]);
  });

  test('each class\'s execution role decides each probe as it expects: its image, model data, key and metric namespace', () => {
    const classes = Object.values(servingRecords(template as never)).flatMap((r) => r.classes);
    const models = Object.values(template.Resources).filter((r) => r.Type === 'AWS::SageMaker::Model');
    expect(models).toHaveLength(classes.length);
    for (const m of models) {
      const env = (m.Properties.PrimaryContainer as { Environment: Record<string, string> }).Environment;
      const cls = classes.find((c) => c.name === env.CAI_CLASS)!;
      const roleId = (m.Properties.ExecutionRoleArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      const statements = roleStatements(template, roleId);
      const decrypt = statements.find((st) => [st.Action].flat().includes('kms:Decrypt'));
      const probes = sageMakerExecutionProbes(cls, 'aws', decrypt && String([decrypt.Resource].flat()[0]));
      expect(probes.map((p) => p.action)).toEqual(expect.arrayContaining([
        'ecr:BatchGetImage', 'cloudwatch:PutMetricData', ...(cls.artifact.modelData ? ['s3:GetObject'] : []), ...(decrypt ? ['kms:Decrypt'] : []),
      ]));
      expect(judged(statements, probes).filter((j) => j.expect !== j.decided)).toEqual([]);
    }
  });
});

describe('a SageMaker execution role with its model data at a prefix, the bucket root included', () => {
  const SHA = 'c'.repeat(64);
  /** The execution role's S3 statements and recorded class for model data at `uri` (synthesized by the library). */
  function synthesized(uri: string) {
    const { stack } = testStack('Prefixed');
    const cls = smClasses()[2];
    const spec = { ...cls, artifact: { ...cls.artifact, modelData: { ...cls.artifact.modelData!, uri } } };
    new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: [spec], variants: [{ name: 'only', classes: [spec.name] }] });
    const template = Template.fromStack(stack).toJSON() as Json & { Resources: Resources };
    const model = Object.values(template.Resources).find((r) => r.Type === 'AWS::SageMaker::Model')!;
    const roleId = (model.Properties.ExecutionRoleArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const recorded = Object.values(servingRecords(template as never)).flatMap((r) => r.classes).find((c) => c.name === spec.name)!;
    return { statements: roleStatements(template, roleId), cls: recorded };
  }
  const s3Probes = (cls: Parameters<typeof sageMakerExecutionProbes>[0]) => sageMakerExecutionProbes(cls, 'aws').filter((p) => p.action.startsWith('s3:'));

  test.each([`s3://models-bucket/llama3-8b/${SHA}/`, `s3://models-bucket/llama3-8b/neuron-${SHA}.tar.gz`])('model data %s: every probe decides as it expects', (uri) => {
    const { statements, cls } = synthesized(uri);
    expect(s3Probes(cls).filter((p) => p.expect === 'denied').length).toBeGreaterThan(0);
    expect(judged(statements, s3Probes(cls)).filter((j) => j.expect !== j.decided)).toEqual([]);
  });

  test('model data at the bucket root (s3://bucket/, a hand-written serving record: the constructs refuse it): a healthy role passes, '
    + 'the denied probes use another bucket', () => {
    // What lib/sagemaker/class-model.ts grants for a prefix, with the prefix '' (the bucket root).
    const statements: Statement[] = [
      { Effect: 'Allow', Action: 's3:GetObject', Resource: 'arn:aws:s3:::models-bucket/*' },
      { Effect: 'Allow', Action: 's3:ListBucket', Resource: 'arn:aws:s3:::models-bucket', Condition: { StringLike: { 's3:prefix': ['*'] } } },
    ];
    const { cls } = synthesized(`s3://models-bucket/llama3-8b/${SHA}/`);
    const rooted = { ...cls, artifact: { ...cls.artifact, modelData: { ...cls.artifact.modelData!, uri: 's3://models-bucket/' } } };
    const probes = s3Probes(rooted);
    expect(probes.map((p) => [p.action, p.resource, p.expect])).toEqual([
      ['s3:GetObject', 'arn:aws:s3:::models-bucket/model.safetensors', 'allowed'],
      ['s3:GetObject', 'arn:aws:s3:::models-bucket-not-granted/not-granted/model.safetensors', 'denied'],
      ['s3:ListBucket', 'arn:aws:s3:::models-bucket', 'allowed'],
      ['s3:ListBucket', 'arn:aws:s3:::models-bucket-not-granted', 'denied'],
    ]);
    expect(judged(statements, probes).filter((j) => j.expect !== j.decided)).toEqual([]);
  });
});

describe('the model-data pod identities of an EKS service with a model-data key', () => {
  const { stack } = testStack('Keyed');
  const key = new kms.Key(stack, 'ModelKey', { enableKeyRotation: true });
  new EksInferenceService(stack, 'Llama', {
    contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(stack, 'Kubectl'), modelDataEncryptionKey: key,
  });
  const template = Template.fromStack(stack).toJSON() as Json & { Resources: Resources };
  const keyArn = String(resolver(template)({ 'Fn::GetAtt': [Object.keys(template.Resources).find((id) => id.startsWith('ModelKey'))!, 'Arn'] }));

  test.each(llamaClasses().map((c) => [c.name, c] as const))('class %s: its pinned object and version, its key through S3 only', (name, cls) => {
    const roleId = podIdentityRole(template as never, `llama3-chat-${name}`)!;
    const probes = modelDataReaderProbes(cls.artifact.modelData!, 'aws', keyArn);
    // A pinned version adds the version probes (allowed and denied), the key adds the two kms:ViaService probes.
    expect(probes).toHaveLength((cls.artifact.modelData!.versionId ? 4 : 3) + 2);
    const statements = roleStatements(template, roleId);
    expect(judged(statements, probes).filter((j) => j.expect !== j.decided)).toEqual([]);
    // The allowed conditional calls (the pinned version, the decrypt through S3) read as denied without their context.
    const conditional = probes.filter((p) => p.expect === 'allowed' && p.context);
    expect(conditional).toHaveLength(cls.artifact.modelData!.versionId ? 2 : 1);
    expect(judged(statements, conditional, false).map((j) => j.decided)).toEqual(conditional.map(() => 'denied'));
  });
});

describe('model data whose URI was a CloudFormation reference at synth (review R223)', () => {
  test('no probe names an object the serving record does not keep; the check is skipped, with why, on both platforms', () => {
    const [l40s] = llamaClasses();
    const unnamed = { ...l40s.artifact.modelData!, uri: TOKEN_TEXT };
    expect(modelDataUnnamed(unnamed)).toBe(true);
    expect(modelDataUnnamed(l40s.artifact.modelData)).toBe(false);
    // A version id given as a token (review R224): the pinned-version probe would ask for '{token}'.
    expect(modelDataUnnamed({ uri: 's3://models/llama.tar', sha256: 'a'.repeat(64), versionId: TOKEN_TEXT })).toBe(true);
    expect(modelDataReaderProbes(unnamed, 'aws')).toEqual([]);
    const execution = sageMakerExecutionProbes({ ...l40s, artifact: { ...l40s.artifact, modelData: unnamed } } as never, 'aws');
    expect(execution.filter((p) => p.action.startsWith('s3:'))).toEqual([]);
    expect(modelDataSkipped('model-data role r (class l40s)')).toMatchObject({ status: 'skip', id: 'iam:model-data role r (class l40s):model-data' });
  });
});

describe('verify against the SageMaker example as deployed (every call mocked, IAM judged on its synthesized policies)', () => {
  beforeEach(resetAccount);

  test('every role check passes: the reconciler\'s and each class\'s execution role, conditioned calls with their context', async () => {
    const template = Template.fromStack(new SageMakerLlmStack(new App(), 'SageMakerLlm', { env: { account: ACCOUNT, region: REGION } })).toJSON() as Json & { Resources: Resources };
    const resolve = resolver(template);
    const physical = (id: string) => String(resolve({ Ref: id }));
    cfn.on(ListStackResourcesCommand).resolves({
      StackResourceSummaries: Object.entries(template.Resources).map(([id, r]) => ({
        LogicalResourceId: id, PhysicalResourceId: physical(id), ResourceType: r.Type, ResourceStatus: 'CREATE_COMPLETE', LastUpdatedTimestamp: new Date(0),
      })),
    });
    cfn.on(GetTemplateCommand).resolves({ TemplateBody: JSON.stringify(template) });
    lambda.on(GetFunctionConfigurationCommand).callsFake((input: { FunctionName: string }) => {
      const fn = template.Resources[input.FunctionName];
      const variables = (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
      const resolved = Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, String(resolve(v))]));
      return { Role: String(resolve(fn.Properties.Role)), Environment: { Variables: resolved } };
    });
    cw.on(ListMetricsCommand).resolves({ Metrics: [] });
    iam.on(GetRoleCommand).callsFake((input: { RoleName: string }) => ({
      Role: { Arn: `arn:aws:iam::${ACCOUNT}:role/${input.RoleName}`, RoleName: input.RoleName, Path: '/', RoleId: 'x', CreateDate: new Date(0) },
    }));
    iam.on(SimulatePrincipalPolicyCommand).callsFake(simulator((input, a) =>
      allows(roleStatements(template, input.PolicySourceArn!.split('/')[1]), { action: a, resource: input.ResourceArns![0], context: contextOf(input) })));
    const checks = (await runVerify('SageMakerLlm', clients(REGION))).filter((r) => r.id.startsWith('iam:'));
    expect(checks.filter((r) => r.status !== 'pass')).toEqual([]);
    const roles = [...new Set(checks.map((r) => r.id.split(':')[1]))];
    expect(roles.filter((r) => r.startsWith('execution role'))).toHaveLength(3);
    expect(roles.filter((r) => r.startsWith('reconciler role'))).toHaveLength(1);
    // The reconciler is found in the template as synthesized (its Environment.Variables) and read alone (R250).
    const read = lambda.commandCalls(GetFunctionConfigurationCommand).map((c) => c.args[0].input.FunctionName);
    expect(read).toHaveLength(1);
    expect(template.Resources[read[0]!].Properties.Environment).toHaveProperty(['Variables', RECONCILER_CONFIG_ENV]);
    // The namespace condition was evaluated with the context the probe sent.
    expect(iam.commandCalls(SimulatePrincipalPolicyCommand).some((c) => c.args[0].input.ContextEntries?.[0]?.ContextKeyName === 'cloudwatch:namespace')).toBe(true);
  });
});
