import { type App, CfnWaitConditionHandle, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sagemaker from 'aws-cdk-lib/aws-sagemaker';
import { KubectlV34Layer } from '@aws-cdk/lambda-layer-kubectl-v34';
import { type Construct, type IDependable } from 'constructs';
import { HardwareCatalog } from '../../lib/core/hardware/catalog';
import { type CapacityClass } from '../../lib/core/service/capacity-class';
import { SageMakerCapacityEndpoint } from '../../lib/sagemaker/endpoint';
import { type ClassArtifactGateOptions, type IClassArtifactGate } from '../../lib/trust/gate';
import { EksInferenceService } from '../../lib/eks/inference-service';
import { ACCOUNT, allows, REGION, roleStatements } from '../permissions/iam-policy';
import { FETCHER_IMAGE, LLAMA_CONTRACT, llamaClasses, nagFindings, nistFindings, testStack } from '../util';
import { endpointStack, smClasses, synthError, TWO_VARIANTS } from './fixtures';

/** A gate that records its calls and hands out one CloudFormation resource per class. */
class FakeGate implements IClassArtifactGate {
  public readonly calls: CapacityClass[] = [];
  public readonly options: (ClassArtifactGateOptions | undefined)[] = [];
  gateFor(scope: Construct, cls: CapacityClass, options?: ClassArtifactGateOptions): IDependable {
    this.calls.push(cls);
    this.options.push(options);
    return new CfnWaitConditionHandle(scope, `Gate-${cls.name}`);
  }
}

const modelId = (t: Template, cls: string) => Object.keys(t.findResources('AWS::SageMaker::Model')).find((id) => id.startsWith(`LlamaClass${cls}Model`))!;
const roleId = (t: Template, cls: string) => Object.keys(t.findResources('AWS::IAM::Role')).find((id) => id.startsWith(`LlamaClass${cls}ExecutionRole`))!;
const policyOf = (t: Template, cls: string) => {
  const policies = t.findResources('AWS::IAM::Policy');
  const id = Object.keys(policies).find((k) => k.startsWith(`LlamaClass${cls}ExecutionRoleDefaultPolicy`))!;
  return JSON.stringify(policies[id].Properties.PolicyDocument);
};

describe('SageMakerCapacityEndpoint', () => {
  let template: Template;
  let endpoint: SageMakerCapacityEndpoint;
  let gate: FakeGate;

  beforeAll(() => {
    gate = new FakeGate();
    const built = endpointStack({ artifactGate: gate });
    endpoint = built.endpoint;
    template = Template.fromStack(built.stack);
  });

  describe('models', () => {
    test('one Model per class: image by digest, model data from S3, own execution role, network isolation', () => {
      template.resourceCountIs('AWS::SageMaker::Model', 3);
      for (const cls of smClasses()) {
        template.hasResource('AWS::SageMaker::Model', {
          Properties: {
            ExecutionRoleArn: { 'Fn::GetAtt': [roleId(template, cls.name), 'Arn'] },
            EnableNetworkIsolation: true,
            PrimaryContainer: {
              Image: cls.artifact.image,
              Mode: 'SingleModel',
              ModelDataSource: { S3DataSource: { S3Uri: cls.artifact.modelData!.uri, S3DataType: 'S3Object', CompressionType: 'Gzip' } },
            },
          },
        });
      }
    });

    test('runtime settings and admission limits are container environment, derived per class', () => {
      // l40s: 1200 tok/s / 250 tokens = 4.8 req/s; queue budget min(2000, 30000 - (900 + 250 x 35)) = 2000 ms -> 9 slots + 16.
      template.hasResourceProperties('AWS::SageMaker::Model', {
        PrimaryContainer: {
          Environment: Match.objectEquals({
            // The engine-neutral set (lib/core/runtime/binding.ts), the same names and values as on EKS.
            CAI_SERVICE: 'llama3-chat',
            CAI_CLASS: 'l40s',
            CAI_ENGINE: 'vllm',
            CAI_ENGINE_VERSION: '0.29.0',
            CAI_PORT: '8080',
            CAI_MODEL_PATH: '/opt/ml/model',
            CAI_CACHE_DIR: '/tmp/cai-cache',
            CAI_CONCURRENCY_LIMIT: '16',
            CAI_QUEUE_SLOTS: '9',
            CAI_MAX_CONCURRENT_REQUESTS: '25',
            CAI_MAX_QUEUED_PROMPT_TOKENS: '51555',
            CAI_QUEUE_BUDGET_MS: '2000',
            CAI_DEADLINE_MS: '30000',
            CAI_MAX_CONCURRENT_SEQUENCES: '16',
            CAI_TENSOR_PARALLEL_DEGREE: '1',
            CAI_MAX_SEQUENCE_TOKENS: '8192',
            CAI_MEMORY_UTILIZATION_CAP: '0.9',
            CAI_MODEL_REVISION: 'meta-llama/Meta-Llama-3-8B-Instruct@5f0b02c',
            CAI_MODEL_DATA_URI: `s3://models-bucket/llama3-8b/bf16-${'a'.repeat(64)}.tar.gz`,
            CAI_MODEL_DATA_SHA256: 'a'.repeat(64),
            CAI_MODEL_DATA_VERSION_ID: 'v1',
            // The SageMaker vLLM DLC turns SM_VLLM_<FLAG> into --<flag>.
            SM_VLLM_MODEL: '/opt/ml/model',
            SM_VLLM_MAX_NUM_SEQS: '16',
            SM_VLLM_TENSOR_PARALLEL_SIZE: '1',
            SM_VLLM_MAX_MODEL_LEN: '8192',
            SM_VLLM_GPU_MEMORY_UTILIZATION: '0.9',
            SM_VLLM_MAX_NUM_QUEUED_REQS: '25',
            SM_VLLM_MAX_NUM_QUEUED_TOKENS: '51555',
            // SIGKILL follows SIGTERM by 30 s: in-flight requests finish up to then, less vLLM's 5 s exit margin,
            // instead of being aborted.
            SM_VLLM_SHUTDOWN_TIMEOUT: '25',
            // Writable cache locations (lib/core/runtime/platform.ts SAGEMAKER_CACHE_DIR).
            HOME: '/tmp/cai-cache',
            XDG_CACHE_HOME: '/tmp/cai-cache/.cache',
            VLLM_CACHE_ROOT: '/tmp/cai-cache/.cache/vllm',
            HF_HOME: '/tmp/cai-cache/.cache/huggingface',
          }),
        },
      });
      // The A10G class runs smaller batches than the L40S: its own value, not the preferred class's.
      template.hasResourceProperties('AWS::SageMaker::Model', {
        PrimaryContainer: { Environment: Match.objectLike({ CAI_CLASS: 'a10g', SM_VLLM_MAX_NUM_SEQS: '8', CAI_MAX_CONCURRENT_REQUESTS: '11' }) },
      });
      // DJL LMI NeuronX: the worker takes jobs off the queue into the rolling batch, so the queue holds the rest of the
      // in-flight limit (6 = 4 in the batch + 2 queued).
      template.hasResourceProperties('AWS::SageMaker::Model', {
        PrimaryContainer: {
          Environment: Match.objectLike({ CAI_CLASS: 'inf2', CAI_TENSOR_PARALLEL_DEGREE: '2', CAI_MAX_CONCURRENT_REQUESTS: '6', OPTION_ROLLING_BATCH: 'auto', SERVING_JOB_QUEUE_SIZE: '2' }),
        },
      });
    });

    test('each Model depends on its execution role policy and on the artifact gate of its own class', () => {
      expect(gate.calls.map((c) => [c.name, c.preferenceRank, c.hardware.platform])).toEqual([
        ['l40s', 0, 'sagemaker'],
        ['a10g', 1, 'sagemaker'],
        ['inf2', 2, 'sagemaker'],
      ]);
      // SageMaker reads the model data key without a version id: the gate must prove the approved version is the current one.
      expect(gate.options).toEqual([1, 2, 3].map(() => ({ requireCurrentVersion: true })));
      for (const cls of ['l40s', 'a10g', 'inf2']) {
        const gateId = Object.keys(template.findResources('AWS::CloudFormation::WaitConditionHandle')).find((id) => id.startsWith(`LlamaGate${cls}`))!;
        const deps: string[] = template.toJSON().Resources[modelId(template, cls)].DependsOn;
        expect(deps).toContain(gateId);
        expect(deps).toContain(roleId(template, cls));
        expect(deps.filter((d) => d.startsWith('LlamaGate'))).toEqual([gateId]);
      }
    });
  });

  describe('least-privilege roles', () => {
    test('a role per class, assumed by SageMaker of this account only, with no managed policies', () => {
      template.resourceCountIs('AWS::IAM::Role', 3);
      template.allResourcesProperties('AWS::IAM::Role', {
        AssumeRolePolicyDocument: {
          Statement: [
            { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'sagemaker.amazonaws.com' }, Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } } },
          ],
        },
        ManagedPolicyArns: Match.absent(),
      });
      expect(JSON.stringify(template.toJSON())).not.toMatch(/FullAccess/);
    });

    test('each role pulls only its own image repository and reads only its own model data object', () => {
      const l40s = policyOf(template, 'l40s');
      expect(l40s).toContain(':ecr:us-east-1:123456789012:repository/vllm"');
      expect(l40s).toContain(`:s3:::models-bucket/llama3-8b/bf16-${'a'.repeat(64)}.tar.gz"`);
      expect(l40s).not.toContain('awq-');
      expect(l40s).not.toContain('repository/neuron');
      const inf2 = policyOf(template, 'inf2');
      expect(inf2).toContain(':ecr:us-east-1:123456789012:repository/neuron"');
      expect(inf2).toContain(`:s3:::models-bucket/llama3-8b/neuron-tp2-${'c'.repeat(64)}.tar.gz"`);
      expect(inf2).not.toContain('bf16-');
      // SageMaker reads the current version (CreateModel names no version): no role may read other versions.
      expect(l40s).not.toContain('s3:GetObjectVersion');
      expect(inf2).not.toContain('s3:GetObjectVersion');
    });

    test('model data under a prefix: read objects and list only that prefix; SSE-KMS decrypt only through S3', () => {
      const { stack } = testStack();
      const modelKey = new kms.Key(stack, 'ModelKey', { enableKeyRotation: true });
      const classes = smClasses().map((c) => ({ ...c, artifact: { ...c.artifact, modelData: { ...c.artifact.modelData!, uri: `s3://models-bucket/${c.name}/${c.artifact.modelData!.sha256}/` } } }));
      new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes, variants: TWO_VARIANTS, modelDataEncryptionKey: modelKey });
      const t = Template.fromStack(stack);
      const keyId = Object.keys(t.findResources('AWS::KMS::Key')).find((id) => id.startsWith('ModelKey'))!;
      t.hasResourceProperties('AWS::IAM::Policy', {
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Sid: 'ReadOwnModelData', Action: 's3:GetObject', Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:s3:::models-bucket/inf2/${'c'.repeat(64)}/*`]] } }),
            Match.objectLike({ Sid: 'ListOwnModelData', Action: 's3:ListBucket', Condition: { StringLike: { 's3:prefix': [`inf2/${'c'.repeat(64)}/*`] } } }),
            Match.objectLike({
              Action: 'kms:Decrypt',
              Resource: { 'Fn::GetAtt': [keyId, 'Arn'] },
              Condition: { StringEquals: { 'kms:ViaService': { 'Fn::Join': ['', ['s3.', { 'Fn::Select': [3, { 'Fn::Split': [':', { 'Fn::GetAtt': [keyId, 'Arn'] }] }] }, '.amazonaws.com']] } } },
            }),
          ]),
        },
      });
      t.hasResourceProperties('AWS::SageMaker::Model', {
        PrimaryContainer: Match.objectLike({ ModelDataSource: { S3DataSource: { S3Uri: `s3://models-bucket/inf2/${'c'.repeat(64)}/`, S3DataType: 'S3Prefix', CompressionType: 'None' } } }),
      });
      expect(nagFindings(stack)).toEqual([]);
      expect(nistFindings(stack)).toEqual([]);
    });

    test('logs only to the endpoint log group, each action on its resource type in the documented form (review R249); metrics only to the SageMaker endpoint namespace', () => {
      const group = `:logs:us-east-1:123456789012:log-group:/aws/sagemaker/Endpoints/${endpoint.endpointName}`;
      template.hasResourceProperties('AWS::IAM::Policy', {
        PolicyDocument: {
          Statement: Match.arrayWith([
            // log-group actions (Service Authorization Reference) on the group's ARN with the trailing :* that
            // CloudWatch Logs documents for IAM policies (iam-access-control-overview-cwl); log-stream actions on its streams.
            {
              Sid: 'EndpointLogGroup', Effect: 'Allow', Action: ['logs:CreateLogGroup', 'logs:DescribeLogStreams'],
              Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `${group}:*`]] },
            },
            {
              Sid: 'EndpointLogStreams', Effect: 'Allow', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
              Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `${group}:log-stream:*`]] },
            },
            Match.objectLike({ Sid: 'EndpointInstanceMetrics', Action: 'cloudwatch:PutMetricData', Condition: { StringEquals: { 'cloudwatch:namespace': '/aws/sagemaker/Endpoints' } } }),
          ]),
        },
      });
      template.hasResourceProperties('AWS::Logs::LogGroup', { LogGroupName: `/aws/sagemaker/Endpoints/${endpoint.endpointName}`, RetentionInDays: 90 });
      const statements = roleStatements(template.toJSON(), roleId(template, 'l40s'));
      const arn = (name: string) => `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:${name}`;
      const own = arn(`/aws/sagemaker/Endpoints/${endpoint.endpointName}`);
      const request = (action: string, resource: string) => ({ action, resource, context: {} });
      // The resource a denied CreateLogGroup names (elastic/apm-aws-lambda#526), and the group ARN with the trailing :*.
      for (const resource of [`${own}:log-stream:`, `${own}:*`]) {
        for (const action of ['logs:CreateLogGroup', 'logs:DescribeLogStreams']) expect(allows(statements, request(action, resource))).toBe(true);
      }
      for (const action of ['logs:CreateLogStream', 'logs:PutLogEvents']) {
        expect(allows(statements, request(action, `${own}:log-stream:AllTraffic/i-0123456789abcdef0`))).toBe(true);
        // Not a log group whose name only starts with the endpoint's, not another endpoint's.
        expect(allows(statements, request(action, `${own}-other:log-stream:x`))).toBe(false);
        expect(allows(statements, request(action, `${arn('/aws/sagemaker/Endpoints/other')}:log-stream:x`))).toBe(false);
      }
      // Nothing else on the group: no retention, no deletion.
      expect(allows(statements, request('logs:PutRetentionPolicy', `${own}:*`))).toBe(false);
      expect(allows(statements, request('logs:DeleteLogGroup', `${own}:*`))).toBe(false);
    });
  });

  describe('endpoint configuration', () => {
    test('a variant of several classes uses instance pools in the given order, each naming its class model; one of one class a plain InstanceType', () => {
      const pool = (type: string, priority: number, cls: string) => ({
        InstanceType: type,
        Priority: priority,
        ModelNameOverride: { 'Fn::GetAtt': [modelId(template, cls), 'ModelName'] },
      });
      template.hasResourceProperties('AWS::SageMaker::EndpointConfig', {
        ProductionVariants: [
          Match.objectLike({
            VariantName: 'preferred',
            InstancePools: [pool('ml.g6e.xlarge', 1, 'l40s'), pool('ml.g5.xlarge', 2, 'a10g')],
            ModelName: { 'Fn::GetAtt': [modelId(template, 'l40s'), 'ModelName'] },
            InstanceType: Match.absent(),
            VariantInstanceProvisionTimeoutInSeconds: 900,
            RoutingConfig: { RoutingStrategy: 'LEAST_OUTSTANDING_REQUESTS' },
            ContainerStartupHealthCheckTimeoutInSeconds: 1200,
            ModelDataDownloadTimeoutInSeconds: 1200,
          }),
          // One class, nothing to fall back to: no one-entry pool list, which no AWS page says SageMaker accepts (R209).
          Match.objectLike({
            VariantName: 'fallback',
            InstanceType: 'ml.inf2.xlarge',
            ModelName: { 'Fn::GetAtt': [modelId(template, 'inf2'), 'ModelName'] },
            InstancePools: Match.absent(),
            // Applies without pools too: SageMaker "waits until the timeout expires" (VariantInstanceProvisionTimeoutInSeconds).
            VariantInstanceProvisionTimeoutInSeconds: 900,
            RoutingConfig: { RoutingStrategy: 'LEAST_OUTSTANDING_REQUESTS' },
          }),
        ],
      });
    });

    test('initial counts and weights come from the cost plan: preferred carries the traffic, fallback a warm floor', () => {
      // Planned 20 req/s x 250 tokens x 1.2 = 6000 tok/s: 5 x l40s. The policy's cost plan (the reconciler's first tick):
      // l40s carries it, the inf2 standby (300 tok/s, 5 %) keeps the 2 % warm floor; whole weights summing to 100.
      template.hasResourceProperties('AWS::SageMaker::EndpointConfig', {
        ProductionVariants: [
          Match.objectLike({ VariantName: 'preferred', InitialInstanceCount: 5, InitialVariantWeight: 98 }),
          Match.objectLike({ VariantName: 'fallback', InitialInstanceCount: 1, InitialVariantWeight: 2 }),
        ],
      });
    });

    test('no volume KMS key when a pool type has instance storage (CreateEndpointConfig would reject it)', () => {
      template.hasResourceProperties('AWS::SageMaker::EndpointConfig', { KmsKeyId: Match.absent() });
    });

    test('volumes are encrypted with the key when every pool type is EBS-backed', () => {
      const { stack } = testStack();
      new SageMakerCapacityEndpoint(stack, 'Inf', { contract: LLAMA_CONTRACT, classes: [smClasses()[2]], variants: [{ name: 'only', classes: ['inf2'] }] });
      const t = Template.fromStack(stack);
      const keyId = Object.keys(t.findResources('AWS::KMS::Key')).find((id) => !id.includes('LogKey'))!;
      t.hasResourceProperties('AWS::SageMaker::EndpointConfig', { KmsKeyId: { 'Fn::GetAtt': [keyId, 'Arn'] } });
      t.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    });

    test('a hardware profile that states local instance storage wins over the name (a family the name does not tell)', () => {
      const { stack } = testStack();
      // ml.inf2 has no instance storage by its name; a profile that says it has must keep the key off the volumes.
      const catalog = HardwareCatalog.builtIn();
      const stated = catalog.with({ ...catalog.get('ml.inf2.xlarge'), localInstanceStorage: true });
      new SageMakerCapacityEndpoint(stack, 'Inf', {
        contract: LLAMA_CONTRACT, classes: [smClasses()[2]], variants: [{ name: 'only', classes: ['inf2'] }], catalog: stated,
      });
      Template.fromStack(stack).hasResourceProperties('AWS::SageMaker::EndpointConfig', { KmsKeyId: Match.absent() });
    });

    test('no data key is created when nothing would use it (GPU pools with instance storage, no data capture): only the log group key', () => {
      const { stack } = testStack();
      const e = new SageMakerCapacityEndpoint(stack, 'Gpu', {
        contract: LLAMA_CONTRACT,
        classes: smClasses().slice(0, 2),
        variants: [{ name: 'gpu', classes: ['l40s', 'a10g'] }],
      });
      const t = Template.fromStack(stack);
      t.resourceCountIs('AWS::KMS::Key', 1);
      t.hasResourceProperties('AWS::Logs::LogGroup', { KmsKeyId: { 'Fn::GetAtt': [stack.getLogicalId(e.logEncryptionKey.node.defaultChild as kms.CfnKey), 'Arn'] } });
      expect(e.encryptionKey).toBeUndefined();
      // The volumes take no key on these types, and the NIST finding about it is acknowledged with why.
      expect(nistFindings(stack)).toEqual([]);
    });

    test('the endpoint keeps live weights and instance counts across deployments (the reconciler and autoscaling own them)', () => {
      // No ExcludeRetainedVariantProperties: DataCaptureConfig is "(Not currently supported.)" there (VariantProperty).
      template.hasResource('AWS::SageMaker::Endpoint', {
        Properties: {
          EndpointName: endpoint.endpointName,
          RetainAllVariantProperties: true,
          ExcludeRetainedVariantProperties: Match.absent(),
        },
        DependsOn: [Match.stringLikeRegexp('^LlamaLogs')],
      });
    });

    test('retainVariantPropertiesOnUpdate: false lets deployments reset weights and counts', () => {
      const { stack } = endpointStack({ retainVariantPropertiesOnUpdate: false });
      Template.fromStack(stack).hasResourceProperties('AWS::SageMaker::Endpoint', {
        RetainAllVariantProperties: false,
        ExcludeRetainedVariantProperties: Match.absent(),
      });
    });

    test('data capture is encrypted with the key and written by the class roles under the prefix only', () => {
      const { stack: s2 } = testStack();
      const bucket = s3.Bucket.fromBucketName(s2, 'Capture', 'capture-bucket');
      const e2 = new SageMakerCapacityEndpoint(s2, 'Llama', {
        contract: LLAMA_CONTRACT,
        classes: smClasses(),
        variants: TWO_VARIANTS,
        dataCapture: { bucket, samplingPercentage: 10 },
      });
      const t = Template.fromStack(s2);
      const keyId = Object.keys(t.findResources('AWS::KMS::Key'))[0];
      t.hasResourceProperties('AWS::SageMaker::EndpointConfig', {
        DataCaptureConfig: {
          EnableCapture: true,
          InitialSamplingPercentage: 10,
          DestinationS3Uri: 's3://capture-bucket/data-capture/',
          KmsKeyId: { 'Fn::GetAtt': [keyId, 'Arn'] },
          CaptureOptions: [{ CaptureMode: 'Input' }, { CaptureMode: 'Output' }],
          CaptureContentTypeHeader: { JsonContentTypes: ['application/json'] },
        },
      });
      // Data capture asks nothing of the endpoint's update: excluding DataCaptureConfig from the retained properties is
      // not supported (VariantProperty), with or without retention.
      t.hasResourceProperties('AWS::SageMaker::Endpoint', { RetainAllVariantProperties: true, ExcludeRetainedVariantProperties: Match.absent() });
      const { stack: s3Stack } = testStack();
      new SageMakerCapacityEndpoint(s3Stack, 'Llama', {
        contract: LLAMA_CONTRACT, classes: smClasses(), variants: TWO_VARIANTS, retainVariantPropertiesOnUpdate: false,
        dataCapture: { bucket: s3.Bucket.fromBucketName(s3Stack, 'Capture', 'capture-bucket') },
      });
      Template.fromStack(s3Stack).hasResourceProperties('AWS::SageMaker::Endpoint', {
        RetainAllVariantProperties: false, ExcludeRetainedVariantProperties: Match.absent(),
      });
      t.hasResourceProperties('AWS::IAM::Policy', {
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Sid: 'WriteDataCapture',
              Action: 's3:PutObject',
              Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::capture-bucket/data-capture/*']] },
            }),
          ]),
        },
      });
      expect(nagFindings(s2)).toEqual([]);
      expect(nistFindings(s2)).toEqual([]);
      expect(e2.endpointName).toMatch(/^[a-zA-Z0-9-]+$/);
    });

    test('VPC: models run in the private subnets with their own security group; the role manages interfaces in that VPC only', () => {
      const { stack } = testStack();
      const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 1 });
      new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: smClasses(), variants: TWO_VARIANTS, vpc });
      const t = Template.fromStack(stack);
      const sg = Object.keys(t.findResources('AWS::EC2::SecurityGroup')).find((id) => id.startsWith('LlamaSecurityGroup'))!;
      t.hasResourceProperties('AWS::SageMaker::Model', {
        VpcConfig: { SecurityGroupIds: [{ 'Fn::GetAtt': [sg, 'GroupId'] }], Subnets: [{ Ref: Match.stringLikeRegexp('PrivateSubnet1') }, { Ref: Match.stringLikeRegexp('PrivateSubnet2') }] },
      });
      // Every request SageMaker makes with the role to attach the model's interfaces, with the condition keys the
      // Service Authorization Reference lists for each resource of each action (list_amazonec2.html), is allowed.
      const role = Object.keys(t.findResources('AWS::IAM::Role')).find((id) => id.includes('Classinf2ExecutionRole'))!;
      const statements = roleStatements(t.toJSON(), role);
      // The resolver's made-up physical ids are the logical ids (test/permissions/iam-policy.ts).
      const vpcArn = `arn:aws:ec2:${REGION}:${ACCOUNT}:vpc/${Object.keys(t.findResources('AWS::EC2::VPC'))[0]}`;
      const eni = `arn:aws:ec2:${REGION}:${ACCOUNT}:network-interface/eni-0123456789abcdef0`;
      const subnets = t.findResources('AWS::EC2::Subnet');
      const privateSubnet = Object.keys(subnets).find((id) => id.includes('PrivateSubnet1'))!;
      const publicSubnet = Object.keys(subnets).find((id) => id.includes('PublicSubnet1'))!;
      const create = (resource: string, context: Record<string, string>) => ({ action: 'ec2:CreateNetworkInterface', resource, context });
      expect(allows(statements, create(eni, { 'ec2:NetworkInterfaceID': 'eni-0123456789abcdef0' }))).toBe(true);
      expect(allows(statements, create(`arn:aws:ec2:${REGION}:${ACCOUNT}:subnet/${privateSubnet}`, { 'ec2:Vpc': vpcArn, 'ec2:SubnetID': privateSubnet }))).toBe(true);
      expect(allows(statements, create(`arn:aws:ec2:${REGION}:${ACCOUNT}:security-group/${sg}`, { 'ec2:Vpc': vpcArn, 'ec2:SecurityGroupID': sg }))).toBe(true);
      for (const action of ['ec2:CreateNetworkInterfacePermission', 'ec2:DeleteNetworkInterface', 'ec2:DeleteNetworkInterfacePermission']) {
        expect(allows(statements, { action, resource: eni, context: { 'ec2:Vpc': vpcArn } })).toBe(true);
        expect(allows(statements, { action, resource: eni, context: { 'ec2:Vpc': `arn:aws:ec2:${REGION}:${ACCOUNT}:vpc/vpc-other` } })).toBe(false);
      }
      // Not in a subnet the model was not given, nor with another security group.
      expect(allows(statements, create(`arn:aws:ec2:${REGION}:${ACCOUNT}:subnet/${publicSubnet}`, { 'ec2:Vpc': vpcArn }))).toBe(false);
      expect(allows(statements, create(`arn:aws:ec2:${REGION}:${ACCOUNT}:security-group/sg-other`, { 'ec2:Vpc': vpcArn }))).toBe(false);
    });

    test('fails when ec2:Vpc conditions the network-interface resource of ec2:CreateNetworkInterface (the key is not in that request)', () => {
      // The statement shape before issue 20: one statement, ec2:Vpc on every resource. The evaluator denies it, as IAM does.
      const vpcArn = `arn:aws:ec2:${REGION}:${ACCOUNT}:vpc/vpc-1`;
      const old = [{
        Effect: 'Allow' as const,
        Action: ['ec2:CreateNetworkInterface'],
        Resource: ['network-interface', 'subnet', 'security-group'].map((r) => `arn:aws:ec2:${REGION}:${ACCOUNT}:${r}/*`),
        Condition: { ArnEquals: { 'ec2:Vpc': vpcArn } },
      }];
      const eni = { action: 'ec2:CreateNetworkInterface', resource: `arn:aws:ec2:${REGION}:${ACCOUNT}:network-interface/eni-1`, context: { 'ec2:NetworkInterfaceID': 'eni-1' } };
      expect(allows(old, eni)).toBe(false);
    });
  });

  describe('autoscaling', () => {
    test('one scalable target per variant, range from the capacity plan, through the service-linked role, after the endpoint', () => {
      const endpointId = Object.keys(template.findResources('AWS::SageMaker::Endpoint'))[0];
      const target = (variant: string, min: number, max: number) =>
        template.hasResource('AWS::ApplicationAutoScaling::ScalableTarget', {
          Properties: {
            ServiceNamespace: 'sagemaker',
            ScalableDimension: 'sagemaker:variant:DesiredInstanceCount',
            ResourceId: `endpoint/${endpoint.endpointName}/variant/${variant}`,
            MinCapacity: min,
            MaxCapacity: max,
            RoleARN: {
              'Fn::Join': [
                '',
                [
                  'arn:',
                  { Ref: 'AWS::Partition' },
                  ':iam::123456789012:role/aws-service-role/sagemaker.application-autoscaling.amazonaws.com/AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint',
                ],
              ],
            },
          },
          DependsOn: [endpointId],
        });
      // preferred: min = l40s steady fleet 5; max = a10g needs ceil(6000/400) = 15 (within its quota of 24).
      target('preferred', 5, 15);
      // fallback: warm standby of 1; ceil(6000/300) = 20 inf2 within the quota of 24.
      target('fallback', 1, 20);
    });

    test('target tracking on concurrent requests per model, target from the slowest pool envelope, fast out and slow in', () => {
      const policy = (target: number) =>
        template.hasResourceProperties('AWS::ApplicationAutoScaling::ScalingPolicy', {
          PolicyType: 'TargetTrackingScaling',
          TargetTrackingScalingPolicyConfiguration: {
            PredefinedMetricSpecification: { PredefinedMetricType: 'SageMakerVariantConcurrentRequestsPerModelHighResolution' },
            TargetValue: target,
            ScaleOutCooldown: 60,
            ScaleInCooldown: 900,
          },
        });
      policy(6.67); // min(16, 8) / 1.2
      policy(3.33); // 4 / 1.2
      template.resourceCountIs('AWS::ApplicationAutoScaling::ScalingPolicy', 2);
    });

    test('scaling overrides within the plan are applied', () => {
      const { stack } = endpointStack({
        variants: [{ name: 'preferred', classes: ['l40s', 'a10g'], scaling: { minInstances: 3, maxInstances: 30, targetConcurrencyPerInstance: 5 } }, TWO_VARIANTS[1]],
        scaleOutCooldown: Duration.seconds(30),
      });
      const t = Template.fromStack(stack);
      t.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', { ResourceId: Match.stringLikeRegexp('/variant/preferred$'), MinCapacity: 3, MaxCapacity: 30 });
      t.hasResourceProperties('AWS::ApplicationAutoScaling::ScalingPolicy', {
        TargetTrackingScalingPolicyConfiguration: Match.objectLike({ TargetValue: 5, ScaleOutCooldown: 30 }),
      });
    });

    test('perPoolTargets: the predefined policy at the priority-1 pool\'s target, and metric math holding each type to its own', () => {
      const { stack, endpoint: pooled } = endpointStack({
        variants: [{ name: 'preferred', classes: ['l40s', 'a10g'], scaling: { perPoolTargets: true } }, TWO_VARIANTS[1]],
      });
      const t = Template.fromStack(stack);
      const policies = Object.values(t.findResources('AWS::ApplicationAutoScaling::ScalingPolicy')).map((r) => r.Properties.TargetTrackingScalingPolicyConfiguration);
      expect(policies).toHaveLength(3);
      // l40s: 16 / 1.2; a10g: 8 / 1.2. The fallback variant (one pool) keeps its one policy.
      const predefined = policies.filter((c) => c.PredefinedMetricSpecification).map((c) => c.TargetValue as number);
      expect(predefined.sort((a, b) => a - b)).toEqual([3.33, 13.33]);
      const custom = policies.find((c) => c.CustomizedMetricSpecification)!;
      expect(custom).toMatchObject({ TargetValue: 1, ScaleOutCooldown: 60, ScaleInCooldown: 900 });
      const queries = custom.CustomizedMetricSpecification.Metrics;
      expect(queries.slice(0, 2).map((q: { MetricStat: { Metric: unknown; Stat: string } }) => [q.MetricStat.Metric, q.MetricStat.Stat])).toEqual(
        ['ml.g6e.xlarge', 'ml.g5.xlarge'].map((type) => [{
          Namespace: 'AWS/SageMaker',
          MetricName: 'ConcurrentRequestsPerModel',
          Dimensions: [{ Name: 'EndpointName', Value: pooled.endpointName }, { Name: 'VariantName', Value: 'preferred' }, { Name: 'InstanceType', Value: type }],
        }, 'Average']),
      );
      expect(queries.filter((q: { ReturnData: boolean }) => q.ReturnData)).toEqual([
        expect.objectContaining({ Expression: '((pool1 / 13.33) + (pool2 / 6.67) + ABS((pool1 / 13.33) - (pool2 / 6.67))) / 2' }),
      ]);
      // Both policies act on the same scalable target.
      const scaling = Object.values(t.findResources('AWS::ApplicationAutoScaling::ScalingPolicy')).map((r) => JSON.stringify(r.Properties.ScalingTargetId));
      expect(new Set(scaling).size).toBe(2);
    });

    test('perPoolTargets is refused on one pool, with an explicit target, or when not a boolean', () => {
      const withScaling = (classes: string[], scaling: object) => () => endpointStack({
        variants: [{ name: 'preferred', classes, scaling }, { name: 'fallback', classes: ['inf2', ...(classes.includes('a10g') ? [] : ['a10g'])] }],
      });
      const allowed = 'allowed: true or false; true only on a variant with several pools and without targetConcurrencyPerInstance';
      expect(withScaling(['l40s'], { perPoolTargets: true })).toThrow(/variants\['preferred'\]\.scaling\.perPoolTargets: is true on a variant with one pool \('l40s'\); allowed: true or false; true only/);
      expect(withScaling(['l40s', 'a10g'], { perPoolTargets: true, targetConcurrencyPerInstance: 5 }))
        .toThrow(`perPoolTargets: is true with targetConcurrencyPerInstance 5; ${allowed}`);
      expect(withScaling(['l40s', 'a10g'], { perPoolTargets: 'true' })).toThrow(`perPoolTargets: is "true" (a string); ${allowed}`);
      expect(withScaling(['l40s', 'a10g'], { perPoolTargets: null })).toThrow(`perPoolTargets: is null (null); ${allowed}`);
    });
  });

  describe('routing facts, metrics and grants', () => {
    test('routingFacts names the endpoint, its variants and their classes in pool priority order with envelopes', () => {
      const facts = endpoint.routingFacts();
      expect(facts.kind).toBe('sagemaker');
      expect(facts.endpointName).toBe(endpoint.endpointName);
      expect(facts.variants.map((v) => [v.variantName, v.classes.map((c) => c.name)])).toEqual([
        ['preferred', ['l40s', 'a10g']],
        ['fallback', ['inf2']],
      ]);
      expect(facts.variants[0].classes[1]).toEqual({
        name: 'a10g',
        preferenceRank: 1,
        tokensPerSecondPerReplica: 400,
        safeConcurrency: 8,
        usdPerReplicaHour: 1.4084,
        allowSensitive: true,
        maxReplicas: 24,
        instanceType: 'ml.g5.xlarge',
      });
      expect(facts.endpointArn).toContain(`:sagemaker:us-east-1:123456789012:endpoint/${endpoint.endpointName.toLowerCase()}`);
      // Each variant's scaling maximum, the MaxCapacity of its scalable target (replica floors stay below it).
      const targets = Object.values(template.findResources('AWS::ApplicationAutoScaling::ScalableTarget'));
      for (const v of facts.variants) {
        const target = targets.find((t) => JSON.stringify(t.Properties.ResourceId).includes(`variant/${v.variantName}`));
        expect(v.maxInstances).toBe(target?.Properties.MaxCapacity);
      }
    });

    test('metric helpers: AWS/SageMaker per variant, and per instance type of its pools', () => {
      const m = endpoint.metricConcurrentRequestsPerModel('preferred');
      expect([m.namespace, m.metricName, m.statistic, m.period.toSeconds()]).toEqual(['AWS/SageMaker', 'ConcurrentRequestsPerModel', 'Average', 60]);
      expect(m.dimensions).toEqual({ EndpointName: endpoint.endpointName, VariantName: 'preferred' });
      const perType = endpoint.metricInvocations('preferred', { instanceType: 'ml.g5.xlarge', period: Duration.minutes(5) });
      expect(perType.dimensions).toEqual({ EndpointName: endpoint.endpointName, VariantName: 'preferred', InstanceType: 'ml.g5.xlarge' });
      expect([perType.statistic, perType.period.toMinutes()]).toEqual(['Sum', 5]);
      expect(endpoint.metricModelLatency('fallback').statistic).toBe('p95');
      // 'fallback' has one class, so no pools: SageMaker documents the InstanceType series only for variants with pools.
      expect(() => endpoint.metricInvocations('fallback', { instanceType: 'ml.inf2.xlarge' })).toThrow(
        "metric('Invocations').options.instanceType: is 'ml.inf2.xlarge' on variant 'fallback', which has one class and so no instance pools",
      );
      expect(endpoint.metricInvocation5xxErrors('fallback').metricName).toBe('Invocation5XXErrors');
      expect(endpoint.metricInvocation4xxErrors('fallback').metricName).toBe('Invocation4XXErrors');
      expect(endpoint.metricInvocationsPerInstance('fallback').metricName).toBe('InvocationsPerInstance');
      expect(endpoint.metricOverheadLatency('fallback').metricName).toBe('OverheadLatency');
      // ModelSetupTime is documented for serverless endpoints only: instance variants offer no metric for it.
      expect((endpoint as unknown as Record<string, unknown>).metricModelSetupTime).toBeUndefined();
    });

    test('grantInvoke and grantRouting (the Reconciler\'s: grantUpdateWeights and DescribeScalableTargets) allow exactly their actions', () => {
      const { stack, endpoint: e } = endpointStack();
      const caller = new iam.Role(stack, 'Caller', { assumedBy: new iam.AccountRootPrincipal() });
      const reconciler = new iam.Role(stack, 'Reconciler', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
      e.grantInvoke(caller);
      e.grantRouting(reconciler);
      // The latency trigger watches the contract's end-to-end deadline.
      expect(e.servingDescription().latencySloP95Ms).toBe(LLAMA_CONTRACT.slo.deadlineMs);
      const t = Template.fromStack(stack);
      const arnOf = (name: string) => ({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:sagemaker:us-east-1:123456789012:endpoint/${name}`]] });
      // The generated name has capitals: the ARN SageMaker writes (lower-cased) and the name as written.
      expect(e.endpointName).not.toBe(e.endpointName.toLowerCase());
      const arn = [arnOf(e.endpointName.toLowerCase()), arnOf(e.endpointName)];
      t.hasResourceProperties('AWS::IAM::Policy', {
        Roles: [{ Ref: Match.stringLikeRegexp('^Caller') }],
        PolicyDocument: { Statement: [{ Effect: 'Allow', Action: ['sagemaker:InvokeEndpoint', 'sagemaker:InvokeEndpointWithResponseStream'], Resource: arn }] },
      });
      t.hasResourceProperties('AWS::IAM::Policy', {
        Roles: [{ Ref: Match.stringLikeRegexp('^Reconciler') }],
        PolicyDocument: { Statement: [
          { Effect: 'Allow', Action: ['sagemaker:DescribeEndpoint', 'sagemaker:UpdateEndpointWeightsAndCapacities'], Resource: arn },
          // Each variant's live scaling bounds: the action has no resource type (Service Authorization Reference), so "*".
          { Effect: 'Allow', Action: 'application-autoscaling:DescribeScalableTargets', Resource: '*' },
        ] },
      });
    });
  });

  test('grants name the endpoint by one ARN when its name is lower case already', () => {
    const { stack, endpoint: e } = endpointStack({ endpointName: 'llm-chat' });
    const caller = new iam.Role(stack, 'Caller', { assumedBy: new iam.AccountRootPrincipal() });
    e.grantInvoke(caller);
    Template.fromStack(stack).hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: Match.stringLikeRegexp('^Caller') }],
      PolicyDocument: { Statement: [{
        Effect: 'Allow', Action: ['sagemaker:InvokeEndpoint', 'sagemaker:InvokeEndpointWithResponseStream'],
        Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':sagemaker:us-east-1:123456789012:endpoint/llm-chat']] },
      }] },
    });
  });

  /** The classes with their images in `region` (SageMaker pulls from ECR in the endpoint's own Region). */
  const classesIn = (region: string) => smClasses().map((c) => ({ ...c, artifact: { ...c.artifact, image: c.artifact.image.replace('us-east-1', region) } }));

  test('fails when a second serving construct in the stack serves the same service name (one serving record per name)', () => {
    const { stack } = endpointStack();
    expect(() => new SageMakerCapacityEndpoint(stack, 'Again', { contract: LLAMA_CONTRACT, classes: smClasses(), variants: TWO_VARIANTS }))
      .toThrow("SageMakerCapacityEndpoint 'Test/Again' is invalid (1 problem):\n  - contract.name: is 'llama3-chat', which the serving "
        + "construct at 'Test/Llama' in this stack also serves; allowed: a service name no other serving construct in this stack uses");
    // Another stack keeps its own record (in another Region: one in the same one is the next test's).
    const other = new Stack(stack.node.scope as App, 'Other', { env: { account: '123456789012', region: 'us-west-2' } });
    expect(() => new SageMakerCapacityEndpoint(other, 'Llama', { contract: LLAMA_CONTRACT, classes: classesIn('us-west-2'), variants: TWO_VARIANTS }))
      .not.toThrow();
  });

  test('fails when a serving construct in another stack of the app serves the same service name in the same account and Region', () => {
    const { app } = endpointStack();
    const again = (scope: App, id: string, env?: { account: string; region: string }, name = LLAMA_CONTRACT.name) => () =>
      new SageMakerCapacityEndpoint(new Stack(scope, id, { env }), 'Llama', {
        contract: { ...LLAMA_CONTRACT, name }, classes: classesIn(env?.region ?? 'us-east-1'), variants: TWO_VARIANTS,
      });
    const prodEnv = { account: '123456789012', region: 'us-east-1' };
    // Their metrics share the dimensions [Service, CapacityClass] the control loop reads and writes.
    expect(again(app, 'Staging', prodEnv)).toThrow(
      "SageMakerCapacityEndpoint 'Staging/Llama' is invalid (1 problem):\n  - contract.name: is 'llama3-chat', which the serving construct at "
      + "'Test/Llama' also serves in 123456789012/us-east-1; allowed: a service name no other serving construct of this app uses in the same "
      + 'account and Region (another contract name, or a stack in another account or Region)',
    );
    // An EKS service of that name there is refused too: one concept across platforms.
    const eks = new Stack(app, 'Eks', { env: prodEnv });
    expect(() => new EksInferenceService(eks, 'Llama', { contract: LLAMA_CONTRACT, classes: llamaClasses(), modelDataFetcherImage: FETCHER_IMAGE, kubectlLayer: new KubectlV34Layer(eks, 'Kubectl') }))
      .toThrow("EksInferenceService 'Eks/Llama' is invalid (1 problem):\n  - contract.name: is 'llama3-chat', which the serving construct at 'Test/Llama' also serves in");
    // Another name, another Region or account, a stack deployed wherever the CLI points, another app: accepted (nothing
    // can tell at synth where an environment-agnostic stack or another app deploys).
    expect(again(app, 'Renamed', prodEnv, 'llama3-chat-staging')).not.toThrow();
    expect(again(app, 'West', { ...prodEnv, region: 'us-west-2' })).not.toThrow();
    expect(again(app, 'OtherAccount', { ...prodEnv, account: '210987654321' })).not.toThrow();
    expect(again(app, 'Anywhere')).not.toThrow();
    expect(again(testStack('Unused').app, 'Prod', prodEnv)).not.toThrow();
  });

  describe('as aws-cdk-lib sagemaker.IEndpoint', () => {
    test('is usable wherever CDK takes an endpoint: name, ARN, reference, grantInvoke, stack and env', () => {
      const { stack, endpoint: e } = endpointStack();
      const asCdk: sagemaker.IEndpoint = e;
      expect(asCdk.endpointRef.endpointArn).toBe(e.endpointArn);
      expect([asCdk.stack, asCdk.env.account, asCdk.env.region]).toEqual([stack, '123456789012', 'us-east-1']);
      const caller = new iam.Role(stack, 'Caller', { assumedBy: new iam.AccountRootPrincipal() });
      asCdk.grantInvoke(caller);
      expect(JSON.stringify(Template.fromStack(stack).findResources('AWS::IAM::Policy'))).toContain('sagemaker:InvokeEndpoint');
    });

    test('applyRemovalPolicy reaches what a retained endpoint needs: Models, roles and their policies, scaling (R244)', () => {
      const { stack, endpoint: e } = endpointStack();
      e.applyRemovalPolicy(RemovalPolicy.RETAIN);
      // A grant made after the call is still covered (applied at synth).
      e.roleFor('inf2')!.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: ['arn:aws:s3:::late/*'] }));
      const t = Template.fromStack(stack);
      const counts: Record<string, number> = {};
      for (const type of ['AWS::SageMaker::Endpoint', 'AWS::SageMaker::EndpointConfig', 'AWS::SageMaker::Model', 'AWS::IAM::Role', 'AWS::IAM::Policy',
        'AWS::ApplicationAutoScaling::ScalableTarget', 'AWS::ApplicationAutoScaling::ScalingPolicy']) {
        const resources = Object.values(t.findResources(type));
        counts[type] = resources.length;
        for (const r of resources) expect([type, r.DeletionPolicy, r.UpdateReplacePolicy]).toEqual([type, 'Retain', 'Retain']);
      }
      // Three classes (a role and its policy each), two variants (a scalable target and a target-tracking policy each).
      expect(counts).toEqual({
        'AWS::SageMaker::Endpoint': 1, 'AWS::SageMaker::EndpointConfig': 1, 'AWS::SageMaker::Model': 3, 'AWS::IAM::Role': 3, 'AWS::IAM::Policy': 3,
        'AWS::ApplicationAutoScaling::ScalableTarget': 2, 'AWS::ApplicationAutoScaling::ScalingPolicy': 2,
      });
      // The log group keeps its own policy.
      expect(Object.values(t.findResources('AWS::Logs::LogGroup')).map((r) => r.DeletionPolicy)).toEqual(['Retain']);
    });

    test('applyRemovalPolicy reaches the per-pool scaling policy, and keys keep their own policy (R244)', () => {
      const { stack, endpoint: e } = endpointStack({ variants: [{ ...TWO_VARIANTS[0], scaling: { perPoolTargets: true } }, TWO_VARIANTS[1]] });
      e.applyRemovalPolicy(RemovalPolicy.DESTROY);
      const t = Template.fromStack(stack);
      expect(Object.values(t.findResources('AWS::ApplicationAutoScaling::ScalingPolicy')).map((r) => r.DeletionPolicy)).toEqual(['Delete', 'Delete', 'Delete']);
      const keys = Object.values(t.findResources('AWS::KMS::Key'));
      expect(keys.length).toBeGreaterThan(0);
      for (const k of keys) expect(k.DeletionPolicy).toBe('Retain');
    });

    test('applyRemovalPolicy reaches the security group the construct creates in a VPC (R244)', () => {
      const { stack } = testStack();
      const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 2 });
      const e = new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, classes: smClasses(), variants: TWO_VARIANTS, vpc });
      e.applyRemovalPolicy(RemovalPolicy.RETAIN);
      const groups = Template.fromStack(stack).findResources('AWS::EC2::SecurityGroup');
      const mine = Object.entries(groups).filter(([id]) => id.startsWith('Llama'));
      expect(mine).toHaveLength(1);
      expect([mine[0][1].DeletionPolicy, mine[0][1].UpdateReplacePolicy]).toEqual(['Retain', 'Retain']);
    });
  });

  describe('addClass() and addVariant()', () => {
    test('building with addClass()/addVariant() gives the same template as props', () => {
      const { stack } = testStack();
      const e = new SageMakerCapacityEndpoint(stack, 'Llama', { contract: LLAMA_CONTRACT, artifactGate: new FakeGate(), provisionTimeout: Duration.minutes(15) });
      for (const v of TWO_VARIANTS) e.addVariant(v);
      for (const c of smClasses()) e.addClass(c);
      expect(Template.fromStack(stack).toJSON()).toEqual(template.toJSON());
      expect(e.plannedVariants.map((v) => [v.name, v.role])).toEqual([
        ['preferred', 'preferred'],
        ['fallback', 'fallback'],
      ]);
    });
  });

  describe('cdk-nag', () => {
    test('AwsSolutions and NIST 800-53 rev 5 find nothing unacknowledged', () => {
      const { stack } = endpointStack();
      Template.fromStack(stack); // some acknowledgements are decided at synth, when every class is known
      expect(nagFindings(stack)).toEqual([]);
      expect(nistFindings(stack)).toEqual([]);
    });

    test('acknowledgements are granular: a new wildcard on a class role is still reported', () => {
      const { stack, endpoint: e } = endpointStack();
      e.roleFor('l40s')!.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: ['arn:aws:s3:::other-bucket/*'] }));
      expect(nagFindings(stack)).toEqual([expect.stringContaining('AwsSolutions-IAM5[Resource::arn:aws:s3:::other-bucket/*]')]);
    });
  });

  test('snapshot', () => {
    const json = JSON.stringify(template.toJSON(), null, 1).replace(/[0-9a-f]{64}\.(zip|json)/g, '<asset>');
    expect(JSON.parse(json)).toMatchSnapshot();
  });
});

describe('deployment guardrail (R117)', () => {
  const alarmIn = (scope: Construct, id: string) => new cloudwatch.Alarm(scope, id, {
    metric: new cloudwatch.Metric({ namespace: 'AWS/SageMaker', metricName: 'Invocation5XXErrors' }), threshold: 1, evaluationPeriods: 1,
  });

  test('without deployment the endpoint keeps SageMaker\'s default update (no DeploymentConfig)', () => {
    const { stack } = endpointStack();
    Template.fromStack(stack).hasResourceProperties('AWS::SageMaker::Endpoint', { DeploymentConfig: Match.absent() });
  });

  test('deployment renders an all-at-once blue/green with the bake as TerminationWait, the alarms, and keeps the retained properties', () => {
    const { stack, endpoint } = endpointStack({ deployment: { bakeTime: Duration.minutes(10), maximumExecutionTimeout: Duration.hours(2) } });
    const late = alarmIn(stack, 'Late');
    endpoint.addRollbackAlarm(late);
    const t = Template.fromStack(stack);
    t.hasResourceProperties('AWS::SageMaker::Endpoint', {
      RetainAllVariantProperties: true,
      ExcludeRetainedVariantProperties: Match.absent(),
      DeploymentConfig: {
        BlueGreenUpdatePolicy: {
          TrafficRoutingConfiguration: { Type: 'ALL_AT_ONCE', WaitIntervalInSeconds: 0 },
          TerminationWaitInSeconds: 600,
          MaximumExecutionTimeoutInSeconds: 7200,
        },
        AutoRollbackConfiguration: { Alarms: [{ AlarmName: { Ref: Match.stringLikeRegexp('^Late') } }] },
      },
    });
    // Every class's role may describe the alarm, whichever SageMaker uses.
    const policies = t.findResources('AWS::IAM::Policy');
    const describing = Object.values(policies).filter((p) => JSON.stringify(p).includes('cloudwatch:DescribeAlarms'));
    expect(describing).toHaveLength(endpoint.plannedVariants.flatMap((v) => v.pools).length);
    expect(JSON.stringify(describing[0])).toContain('"Fn::GetAtt":["Late');
  });

  test('alarms given in props and a class added after them: every role may describe every alarm', () => {
    const { stack } = testStack();
    const a = alarmIn(stack, 'A');
    const [first, ...rest] = smClasses();
    const e = new SageMakerCapacityEndpoint(stack, 'Llama', {
      contract: LLAMA_CONTRACT, classes: [first], deployment: { bakeTime: Duration.minutes(5), rollbackAlarms: [a] },
    });
    for (const c of rest) e.addClass(c);
    for (const v of TWO_VARIANTS) e.addVariant(v);
    const policies = Object.values(Template.fromStack(stack).findResources('AWS::IAM::Policy'))
      .filter((p) => JSON.stringify(p).includes('cloudwatch:DescribeAlarms'));
    expect(policies).toHaveLength(smClasses().length);
  });

  test('bad deployment values fail synth naming the construct, the value and what is allowed', () => {
    expect(() => endpointStack({ deployment: { bakeTime: Duration.seconds(30) } }))
      .toThrow(/SageMakerCapacityEndpoint 'Test\/Llama' is invalid[^]*deployment\.bakeTime: is 30 s; allowed: a whole number from 60 to 3600 s/);
    expect(() => endpointStack({ deployment: { bakeTime: Duration.hours(2) } })).toThrow(/deployment\.bakeTime: is 7200 s/);
    expect(() => endpointStack({ deployment: { bakeTime: Duration.minutes(20), maximumExecutionTimeout: Duration.minutes(15) } }))
      .toThrow("deployment.maximumExecutionTimeout: is 900 s, below the 4500 s the deployment's steps may take: variant 'preferred' "
        + 'provisionTimeout 900 s + modelDataDownloadTimeout 1200 s + containerStartupHealthCheckTimeout 1200 s, then bakeTime 1200 s');
    expect(() => endpointStack({ deployment: { bakeTime: Duration.minutes(5), maximumExecutionTimeout: Duration.hours(9) } }))
      .toThrow(/deployment\.maximumExecutionTimeout: is 32400 s/);
  });

  describe('maximumExecutionTimeout covers the steps the deployment runs (provisioning, download, start-up, bake)', () => {
    // fallback's own provisionTimeout makes it the longest variant: 1800 + 300 + 600 s of fleet, then a 600 s bake.
    const steps = (maximumExecutionTimeout?: Duration) => endpointStack({
      variants: [TWO_VARIANTS[0], { ...TWO_VARIANTS[1], provisionTimeout: Duration.minutes(30) }],
      modelDataDownloadTimeout: Duration.minutes(5),
      containerStartupHealthCheckTimeout: Duration.minutes(10),
      deployment: { bakeTime: Duration.minutes(10), maximumExecutionTimeout },
    });
    const rendered = (built: ReturnType<typeof endpointStack>) => {
      built.endpoint.addRollbackAlarm(alarmIn(built.stack, 'A'));
      const endpoints = Template.fromStack(built.stack).findResources('AWS::SageMaker::Endpoint');
      return Object.values(endpoints)[0].Properties.DeploymentConfig.BlueGreenUpdatePolicy.MaximumExecutionTimeoutInSeconds;
    };

    test('shorter than the longest variant\'s steps plus the bake is refused, naming the construct, the value and the components', () => {
      expect(() => steps(Duration.seconds(3299))).toThrow(new RegExp(
        "SageMakerCapacityEndpoint 'Test/Llama' is invalid[^]*deployment\\.maximumExecutionTimeout: is 3299 s, below the 3300 s the "
        + "deployment's steps may take: variant 'fallback' provisionTimeout 1800 s \\+ modelDataDownloadTimeout 300 s \\+ "
        + 'containerStartupHealthCheckTimeout 600 s, then bakeTime 600 s; allowed: at least what the deployment\'s own steps may take',
      ));
    });

    test('exactly the sum is accepted and rendered as given', () => {
      expect(rendered(steps(Duration.seconds(3300)))).toBe(3300);
    });

    test('unset, none is rendered and SageMaker\'s own default applies (the floor is a lower bound, not an estimate), whatever the steps', () => {
      const renderedPolicy = (built: ReturnType<typeof endpointStack>) => {
        built.endpoint.addRollbackAlarm(alarmIn(built.stack, 'A'));
        const endpoints = Template.fromStack(built.stack).findResources('AWS::SageMaker::Endpoint');
        return Object.values(endpoints)[0].Properties.DeploymentConfig.BlueGreenUpdatePolicy;
      };
      const policy = renderedPolicy(steps());
      expect(policy).not.toHaveProperty('MaximumExecutionTimeoutInSeconds');
      expect(policy).toEqual({ TrafficRoutingConfiguration: { Type: 'ALL_AT_ONCE', WaitIntervalInSeconds: 0 }, TerminationWaitInSeconds: 600 });
      // Steps at their maximum (3600 s each) with a one-hour bake: still nothing refused and nothing rendered.
      const long = endpointStack({
        provisionTimeout: Duration.hours(1), modelDataDownloadTimeout: Duration.hours(1), containerStartupHealthCheckTimeout: Duration.hours(1),
        deployment: { bakeTime: Duration.hours(1) },
      });
      expect(renderedPolicy(long)).not.toHaveProperty('MaximumExecutionTimeoutInSeconds');
    });

    test('refused where it deployed before: 900 s with a 300 s bake (longer than the bake, short of the 3300 s of fleet steps)', () => {
      expect(() => endpointStack({ deployment: { bakeTime: Duration.minutes(5), maximumExecutionTimeout: Duration.minutes(15) } }))
        .toThrow("deployment.maximumExecutionTimeout: is 900 s, below the 3600 s the deployment's steps may take: variant 'preferred' "
          + 'provisionTimeout 900 s + modelDataDownloadTimeout 1200 s + containerStartupHealthCheckTimeout 1200 s, then bakeTime 300 s');
    });

    test('a step limit that fails its own rule is reported by it alone', () => {
      const msg = ((): string => {
        try {
          endpointStack({
            modelDataDownloadTimeout: Duration.hours(2),
            deployment: { bakeTime: Duration.minutes(10), maximumExecutionTimeout: Duration.hours(1) },
          });
        } catch (e) {
          return (e as Error).message;
        }
        return '';
      })();
      expect(msg).toContain('modelDataDownloadTimeout: is 7200 s; allowed: a whole number from 60 to 3600 s');
      expect(msg).not.toContain('deployment.maximumExecutionTimeout');
    });
  });

  test('a deployment without any rollback alarm fails at synth; more than 10 fail when added', () => {
    const { stack, endpoint } = endpointStack({ deployment: { bakeTime: Duration.minutes(5) } });
    expect(synthError(stack)).toMatch(/deployment\.rollbackAlarms: has 0 alarms; allowed: 1 to 10 alarms/);
    for (let i = 0; i < 10; i++) endpoint.addRollbackAlarm(alarmIn(stack, `A${i}`));
    expect(synthError(stack)).toBe('');
    expect(() => endpoint.addRollbackAlarm(alarmIn(stack, 'A10'))).toThrow(/deployment\.rollbackAlarms: has 11 alarms/);
  });

  test('a composite rollback alarm is refused (DescribeAlarms returns one only to a permission scoped to *)', () => {
    const { stack, endpoint } = endpointStack({ deployment: { bakeTime: Duration.minutes(5) } });
    const alarmRule = cloudwatch.AlarmRule.fromAlarm(alarmIn(stack, 'M'), cloudwatch.AlarmState.ALARM);
    const composite = new cloudwatch.CompositeAlarm(stack, 'Composite', { alarmRule });
    expect(() => endpoint.addRollbackAlarm(composite))
      .toThrow(/deployment\.rollbackAlarms: got composite alarm 'Test\/Composite'; allowed: metric alarms/);
  });

  test('addRollbackAlarm without deployment is refused', () => {
    const { stack, endpoint } = endpointStack();
    expect(() => endpoint.addRollbackAlarm(alarmIn(stack, 'A'))).toThrow(/addRollbackAlarm\(\): got alarm 'Test\/A' but deployment is not set/);
  });

  test('an Inf1 pool is refused with a deployment (SageMaker would skip the bake and the rollback)', () => {
    const [first, ...rest] = smClasses();
    expect(() => endpointStack({
      classes: [{ ...first, instanceType: 'ml.inf1.xlarge' }, ...rest],
      deployment: { bakeTime: Duration.minutes(5) },
    })).toThrow(/deployment: has pool type 'ml\.inf1\.xlarge'; allowed: no ml\.inf1 pool type while deployment is set/);
  });
});
