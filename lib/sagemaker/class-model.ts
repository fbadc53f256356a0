import { Annotations, Aws, Stack } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as sagemaker from 'aws-cdk-lib/aws-sagemaker';
import { Construct } from 'constructs';
import { AwsMetrics } from '../core/metrics/contract';
import { bindRuntime, type RuntimeBinding } from '../core/runtime/binding';
import { SAGEMAKER_PORT } from '../core/runtime/platform';
import { type CapacityClass } from '../core/service/capacity-class';
import { type ServiceContract } from '../core/service/contract';
import { parseS3Uri } from '../core/trust/s3-uri';
import { ecrRepositoryArn, parseEcrImage } from '../core/trust/image-reference';
import { isUnresolved } from '../core/validation/tokens';
import { type ClassProblem } from '../core/service/checks';
import { type ModelDataLanding, modelDataArchiveNote, modelDataLandingProblem, modelDataShape } from '../core/service/model-archive';
import { modelDataDecryptStatement } from '../trust/model-data-key';
import { logGroupArns } from '../util/log-arns';
import { acknowledgeNistRules, acknowledgeRule, nagRendering, NIST_ONE_ROLE_POLICY } from '../util/nag';

/**
 * The class's model server on SageMaker: the engine's own variables (no arguments: SageMaker starts the entrypoint), and
 * what SageMaker cannot do with its model data.
 */
export function sageMakerRuntime(cls: CapacityClass, contract: ServiceContract): RuntimeBinding {
  const binding = bindRuntime(cls, contract, SAGEMAKER_TARGET);
  return {
    ...binding,
    problems: [...binding.problems, ...sageMakerModelDataProblems(cls), ...sageMakerEnvironmentProblems(cls, contract, binding.env)],
  };
}

const SAGEMAKER_TARGET = { platform: 'sagemaker', port: SAGEMAKER_PORT } as const;

/**
 * CreateModel's limits on ContainerDefinition.Environment: "The maximum length of each key and value in the
 * Environment map is 1024 bytes. The maximum length of all keys and values in the map, combined, is 32 KB"
 * (@aws-sdk/client-sagemaker 3.1142.0 dist-types/models/models_1.d.ts:461), and the shapes EnvironmentMap (at most 100
 * entries), EnvironmentKey (pattern [a-zA-Z_][a-zA-Z0-9_]*, at most 1024) and EnvironmentValue (at most 1024)
 * (boto/botocore@1.43.67 botocore/data/sagemaker/2017-07-24/service-2.json:25197-25253). CloudFormation passes the map
 * through (AWS::SageMaker::Model ContainerDefinition Environment is Json), so CreateModel refuses it at deploy time.
 */
export const SAGEMAKER_ENVIRONMENT_LIMITS = {
  maxEntries: 100,
  maxKeyBytes: 1024,
  maxValueBytes: 1024,
  // Whether "32 KB" means 32,000 or 32,768 bytes is not said: the smaller is used, so nothing CreateModel could refuse passes synth.
  maxTotalBytes: 32_000,
  keyPattern: /^[a-zA-Z_][a-zA-Z0-9_]*$/,
} as const;

/**
 * The class's final SageMaker container environment (what the binding derived, with runtime.env and the runtime.args
 * SageMaker receives as variables) against CreateModel's limits, each problem under the field the variable came from
 * when it can be told. A key or value that contains a token is not measured: its length is known only at deploy time
 * (the encoding's length says nothing about it).
 */
export function sageMakerEnvironmentProblems(cls: CapacityClass, contract: ServiceContract, env: Readonly<Record<string, string>>): ClassProblem[] {
  const limits = SAGEMAKER_ENVIRONMENT_LIMITS;
  const problems: ClassProblem[] = [];
  const sourceOf = environmentSources(cls, contract, env);
  const add = (field: string, message: string) => problems.push({ className: cls.name, field, message });
  const bytes = (v: string) => Buffer.byteLength(v, 'utf8');
  let knownBytes = 0;
  for (const [key, value] of Object.entries(env)) {
    const field = sourceOf(key);
    if (!isUnresolved(key)) {
      const keyBytes = bytes(key);
      knownBytes += keyBytes;
      if (!limits.keyPattern.test(key)) {
        add(field, `'${key}' is not a name SageMaker takes for a container variable; allowed: [a-zA-Z_][a-zA-Z0-9_]*`);
      } else if (keyBytes > limits.maxKeyBytes) {
        add(field, `is a variable name of ${keyBytes} bytes; CreateModel allows at most ${limits.maxKeyBytes} bytes per key`);
      }
    }
    if (isUnresolved(value)) continue;
    const valueBytes = bytes(value);
    knownBytes += valueBytes;
    if (valueBytes > limits.maxValueBytes) {
      add(field, `sets the SageMaker container variable ${key} to a value of ${valueBytes} bytes; CreateModel allows at most ` +
        `${limits.maxValueBytes} bytes per value${field === 'runtime.args' ? ' (SageMaker starts the image without arguments, so the library passes them as variables)' : ''}`);
    }
  }
  const userEnv = Object.keys(cls.runtime.env ?? {}).length;
  const userField = userEnv > 0 ? 'runtime.env' : (cls.runtime.args ?? []).length > 0 ? 'runtime.args' : 'runtime';
  if (knownBytes > limits.maxTotalBytes) {
    const largest = Object.entries(env).filter(([, v]) => !isUnresolved(v)).sort(([, a], [, b]) => bytes(b) - bytes(a)).slice(0, 3)
      .map(([k, v]) => `${k} (${bytes(v)} bytes, ${sourceOf(k)})`);
    add(userField, `the SageMaker container environment is ${knownBytes} bytes (keys and values); CreateModel allows at most 32 KB, counted as ` +
      `${limits.maxTotalBytes} bytes; the largest: ${largest.join(', ')}`);
  }
  const entries = Object.keys(env).length;
  if (entries > limits.maxEntries) {
    add(userField, `the SageMaker container environment has ${entries} variables (${userEnv} from runtime.env); CreateModel allows at most ` +
      `${limits.maxEntries}, and the library sets ${entries - userEnv}`);
  }
  return problems;
}

/**
 * Which field of the class a variable of its environment came from: `runtime.env.<key>` for the user's own,
 * `runtime.args` for what SageMaker receives of the arguments as variables (found by binding the class without
 * them), else `runtime` (derived by the library from the class's settings).
 */
function environmentSources(cls: CapacityClass, contract: ServiceContract, env: Readonly<Record<string, string>>): (key: string) => string {
  let withoutArgs: Readonly<Record<string, string>> | undefined;
  return (key) => {
    const own = cls.runtime.env ?? {};
    if (Object.prototype.hasOwnProperty.call(own, key) && own[key] === env[key]) return `runtime.env.${key}`;
    if ((cls.runtime.args ?? []).length > 0) {
      withoutArgs ??= bindRuntime({ ...cls, runtime: { ...cls.runtime, args: undefined } }, contract, SAGEMAKER_TARGET).env;
      if (withoutArgs[key] !== env[key]) return 'runtime.args';
    }
    return 'runtime';
  };
}

/**
 * SageMaker model data must be immutable by construction. SageMaker downloads the current object at the key at every
 * scale-out: S3ModelDataSource has no VersionId (boto/botocore@1.43.67 botocore/data/sagemaker/2017-07-24/service-2.json;
 * its ETag member is not in CloudFormation and not documented as enforced; fact sagemaker.behaviour.model-data-version).
 * A pinned `versionId` therefore pins what the artifact gate verifies, not what SageMaker serves (the gate also checks
 * that it is the key's current version, but only at deploy time: `requireCurrentVersion`); what makes the served
 * bytes the verified ones is a key that names its content (contains the SHA-256 the gate verifies), so a new model is a
 * new key and a new SageMaker Model, never an overwrite. A key that does not name its content is refused.
 */
export function sageMakerModelDataProblems(cls: CapacityClass): ClassProblem[] {
  const data = cls.artifact.modelData;
  if (!data) return [];
  const problems = unpackProblems(cls, data.uri);
  // A literal URI that is not one is the class checks' to report; one holding a token is read here, or the role would read nothing.
  if (isUnresolved(data.uri) && !parseS3Uri(data.uri)) {
    problems.push({
      className: cls.name,
      field: 'artifact.modelData.uri',
      message: `'${data.uri}' holds a CDK token but is not s3://<bucket>/<key> around it, so the execution role's read of it cannot be scoped; ` +
        'allowed: s3://<bucket>/<key or prefix/> where the bucket may be a token (e.g. s3://${bucket.bucketName}/model.tar.gz)',
    });
  }
  // The rule is checked at synth, so the digest must be literal (one resolved at deploy time, a parameter, cannot be
  // compared with the key), and so must the part of the key that contains it.
  if (isUnresolved(data.sha256)) {
    return [...problems, {
      className: cls.name,
      field: 'artifact.modelData.sha256',
      message: `'${data.sha256}' is a CDK token, which is only resolved at deploy time; allowed on SageMaker: a literal SHA-256 (64 lower-case hex) ` +
        'that the S3 key contains, because SageMaker downloads whatever the key holds at each scale-out (S3ModelDataSource has no VersionId), ' +
        'so the key must name its content and the library checks that at synth; a digest known only at deploy time cannot be checked against the ' +
        'key (EKS takes one: its init container verifies the fetched object against it)',
    }];
  }
  const key = parseS3Uri(data.uri)?.key;
  if (key === undefined || key.toLowerCase().includes(data.sha256.toLowerCase())) return problems;
  if (isUnresolved(key)) {
    return [...problems, {
      className: cls.name,
      field: 'artifact.modelData.uri',
      message: `'${data.uri}' has a CDK token in its key and its literal part does not contain the model data's SHA-256 (${data.sha256}); ` +
        'allowed on SageMaker: a key whose literal part contains the SHA-256 (e.g. s3://${bucket.bucketName}/<model>/<sha256>.tar.gz), ' +
        'because SageMaker downloads whatever the key holds at each scale-out and the library checks at synth that the key names its content',
    }];
  }
  return [...problems, {
    className: cls.name,
    field: 'artifact.modelData.uri',
    message:
      `'${data.uri}' does not contain the model data's SHA-256 (${data.sha256}); SageMaker cannot pin an S3 object version ` +
      '(S3ModelDataSource has no VersionId) and downloads whatever the key holds at each scale-out, so the key must name its content ' +
      `(a versionId${data.versionId === undefined ? '' : ` such as '${data.versionId}'`} only pins what the artifact gate verifies); ` +
      'allowed: a key that contains the SHA-256, e.g. s3://<bucket>/<model>/<sha256>.tar.gz, never overwritten, or EKS, which fetches and verifies the pinned version',
  }];
}

/**
 * How SageMaker lands model data in /opt/ml/model. It untars an S3Object only with CompressionType Gzip; with None it
 * places the object as one file named after the last part of its key (S3ModelDataSource.CompressionType,
 * @aws-sdk/client-sagemaker 3.1142.0 dist-types/models/models_0.d.ts:226; botocore@1.43.67 the same text). A `.tar`
 * would then reach the engine as /opt/ml/model/<name>.tar and it would never load a model (EKS does unpack `.tar`:
 * lib/eks/manifests/workload.ts, so a class moved from EKS hits this), nor would a `.zip` or a `.tar.xz` (which only a
 * custom image may unpack itself: `sageMakerModelDataNote`). The literal tail of a URI with a token bucket decides as
 * well.
 */
const SAGEMAKER_MODEL_DATA_LANDING: ModelDataLanding = {
  platform: 'SageMaker',
  serves: ['prefix', 'tar.gz', 'file'],
  unpacks: 'it unpacks an S3Object only with CompressionType Gzip, which the library sets for .tar.gz and .tgz',
  modelDirectory: '/opt/ml/model',
  consequence: 'the endpoint would never become healthy',
  allowed: 'a gzip-compressed tar archive ending in .tar.gz or .tgz, an s3://<bucket>/<prefix>/ of uncompressed files, ' +
    'or one non-archive file (placed as /opt/ml/model/<its name>)',
};

function unpackProblems(cls: CapacityClass, uri: string): ClassProblem[] {
  const message = modelDataLandingProblem(uri, SAGEMAKER_MODEL_DATA_LANDING, cls.runtime.engine);
  return message === undefined ? [] : [{ className: cls.name, field: 'artifact.modelData.uri', message }];
}

/** A custom image's model data that SageMaker places as one archive file, for the image to unpack: a synth warning. */
export function sageMakerModelDataNote(cls: CapacityClass): string | undefined {
  const uri = cls.artifact.modelData?.uri;
  const note = uri === undefined ? undefined : modelDataArchiveNote(uri, SAGEMAKER_MODEL_DATA_LANDING, cls.runtime.engine);
  return note === undefined ? undefined : `class '${cls.name}': ${note}`;
}

/** Reason for statements whose actions support no resource-level permission or are bound by a condition key instead. */
const WILDCARD_ONLY =
  'Resource * only where IAM offers nothing narrower: ecr:GetAuthorizationToken and ec2:Describe* support no resource-level permissions; ' +
  `cloudwatch:PutMetricData is bound to the ${AwsMetrics.sageMakerEndpointInstances.namespace} namespace by the cloudwatch:namespace condition.`;

/** How SageMaker should fetch model data from `uri`: a prefix of uncompressed files, a .tar.gz or .tgz archive (any case), or one object. */
export function modelDataSource(uri: string): sagemaker.CfnModel.S3DataSourceProperty {
  const shape = modelDataShape(uri);
  if (shape === 'prefix') return { s3Uri: uri, s3DataType: 'S3Prefix', compressionType: 'None' };
  return { s3Uri: uri, s3DataType: 'S3Object', compressionType: shape === 'tar.gz' ? 'Gzip' : 'None' };
}

export interface ClassModelProps {
  readonly capacityClass: CapacityClass;
  readonly environment: Record<string, string>;
  /**
   * Consequences the user accepted for this class's runtime (e.g. an unbounded queue) and what its image must do that
   * the library cannot check, shown as synth warnings. @default - none
   */
  readonly warnings?: readonly string[];
  /** Name of the endpoint: its log group is the only one the model may write to. */
  readonly endpointName: string;
  readonly networkIsolation: boolean;
  readonly vpc?: ec2.IVpc;
  readonly subnetIds?: string[];
  readonly securityGroupIds?: string[];
  readonly modelDataEncryptionKey?: kms.IKey;
  readonly dataCapture?: { readonly bucket: s3.IBucket; readonly prefix: string; readonly key?: kms.IKey };
}

/**
 * One capacity class as a SageMaker Model with its own execution role: it may pull only its own image and read
 * only its own model data.
 */
export class ClassModel extends Construct {
  public readonly role: iam.Role;
  public readonly model: sagemaker.CfnModel;

  constructor(scope: Construct, id: string, props: ClassModelProps) {
    super(scope, id);
    const cls = props.capacityClass;
    for (const warning of props.warnings ?? []) Annotations.of(this).addWarningV2('cdk-capacity-aware-inference:runtime', warning);
    this.role = new iam.Role(this, 'ExecutionRole', {
      assumedBy: new iam.ServicePrincipal('sagemaker.amazonaws.com', { conditions: { StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID } } }),
      description: `SageMaker execution role of capacity class ${cls.name}: pulls its image and reads its model data only`,
    });
    acknowledgeNistRules(this.role, { IAMNoInlinePolicy: NIST_ONE_ROLE_POLICY });
    this.grantImagePull(cls.artifact.image);
    if (cls.artifact.modelData) this.grantModelDataRead(cls.artifact.modelData.uri, props.modelDataEncryptionKey);
    const logs = logGroupArns(this, `/aws/sagemaker/Endpoints/${props.endpointName}`);
    this.allow(
      { sid: 'EndpointLogGroup', actions: ['logs:CreateLogGroup', 'logs:DescribeLogStreams'], resources: [logs.group] },
      "The endpoint's own log group, in the form CloudWatch Logs documents for IAM policies (its ARN with a trailing :*); " +
        'a log group name has no colon, so it names no other group.',
    );
    this.allow(
      { sid: 'EndpointLogStreams', actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logs.streams] },
      "Log streams of the endpoint's own log group: SageMaker names one stream per instance at run time.",
    );
    this.allow(
      {
        sid: 'EndpointInstanceMetrics',
        actions: ['cloudwatch:PutMetricData'],
        resources: ['*'],
        conditions: { StringEquals: { 'cloudwatch:namespace': AwsMetrics.sageMakerEndpointInstances.namespace } },
      },
      WILDCARD_ONLY,
    );
    if (props.dataCapture) this.grantDataCaptureWrite(props.dataCapture);
    if (props.vpc) this.grantVpcAccess(props.vpc, props.subnetIds ?? [], props.securityGroupIds ?? []);

    const data = cls.artifact.modelData;
    this.model = new sagemaker.CfnModel(this, 'Model', {
      executionRoleArn: this.role.roleArn,
      enableNetworkIsolation: props.networkIsolation,
      primaryContainer: {
        image: cls.artifact.image,
        mode: 'SingleModel',
        environment: props.environment,
        modelDataSource: data ? { s3DataSource: modelDataSource(data.uri) } : undefined,
      },
      vpcConfig: props.vpc ? { subnets: props.subnetIds ?? [], securityGroupIds: props.securityGroupIds ?? [] } : undefined,
    });
    // SageMaker checks the role when it creates the model: the policies must exist first.
    this.model.node.addDependency(this.role);
  }

  /**
   * Adds a statement; every wildcard resource in it is acknowledged for cdk-nag (AwsSolutions-IAM5) with `why`, one
   * granular finding id per resource, so that a wildcard added later without a reason still fails the nag check.
   */
  private allow(statement: iam.PolicyStatementProps, why?: string): void {
    const st = new iam.PolicyStatement(statement);
    this.role.addToPolicy(st);
    for (const resource of statement.resources ?? []) {
      const rendered = nagRendering(Stack.of(this).resolve(resource));
      if (!rendered.includes('*')) continue;
      if (!why) throw new Error(`internal: wildcard resource ${resource} in statement ${statement.sid} needs a reason`);
      acknowledgeRule(this.role, `AwsSolutions-IAM5[Resource::${rendered}]`, why);
    }
  }

  private grantImagePull(image: string): void {
    const repo = isUnresolved(image) ? undefined : parseEcrImage(image);
    // An image given as a token (e.g. from an asset) is in this account and region; its repository name is not known here.
    const repositoryArn = repo
      ? ecrRepositoryArn(repo, Aws.PARTITION)
      : Stack.of(this).formatArn({ service: 'ecr', resource: 'repository', resourceName: '*' });
    this.allow(
      { sid: 'PullOwnImage', actions: ['ecr:BatchGetImage', 'ecr:GetDownloadUrlForLayer', 'ecr:BatchCheckLayerAvailability'], resources: [repositoryArn] },
      "The class's image is a CDK token (e.g. an asset), so its repository name is unknown at synth; the pull stays in this account and region.",
    );
    this.allow({ sid: 'EcrLogin', actions: ['ecr:GetAuthorizationToken'], resources: ['*'] }, WILDCARD_ONLY);
  }

  private grantModelDataRead(uri: string, key: kms.IKey | undefined): void {
    const location = parseS3Uri(uri);
    if (!location) return; // reported: a literal URI by the class checks, one holding a token by sageMakerModelDataProblems
    const { bucket, key: objectKey } = location;
    const bucketArn = `arn:${Aws.PARTITION}:s3:::${bucket}`;
    if (location.prefix) {
      const why = "Objects under the class's own model-data prefix (uncompressed weights are many files).";
      this.allow({ sid: 'ReadOwnModelData', actions: ['s3:GetObject'], resources: [`${bucketArn}/${objectKey}*`] }, why);
      this.allow({ sid: 'ListOwnModelData', actions: ['s3:ListBucket'], resources: [bucketArn], conditions: { StringLike: { 's3:prefix': [`${objectKey}*`] } } });
    } else {
      // s3:GetObject only: CreateModel's S3DataSource names no object version (S3Uri, S3DataType, CompressionType, ...
      // in the SageMaker API model), so SageMaker reads the current version and never asks for s3:GetObjectVersion.
      // ArtifactTrust's verifier checks at deploy time that the approved version is the key's current one (the endpoint's
      // gate asks requireCurrentVersion); an upload to the key after that is served at the next instance launch: only a
      // bucket policy denying s3:PutObject on the key, or S3 Object Lock, keeps it (docs/artifact-trust.md).
      this.allow({ sid: 'ReadOwnModelData', actions: ['s3:GetObject'], resources: [`${bucketArn}/${objectKey}`] });
    }
    if (key) this.role.addToPolicy(modelDataDecryptStatement(this, key));
  }

  private grantDataCaptureWrite(capture: NonNullable<ClassModelProps['dataCapture']>): void {
    this.allow(
      { sid: 'WriteDataCapture', actions: ['s3:PutObject'], resources: [capture.bucket.arnForObjects(`${capture.prefix}*`)] },
      "Objects under the endpoint's own data-capture prefix: SageMaker names them by time and instance.",
    );
    if (capture.key) this.allow({ sid: 'EncryptDataCapture', actions: ['kms:GenerateDataKey', 'kms:Encrypt'], resources: [capture.key.keyArn] });
  }

  private grantVpcAccess(vpc: ec2.IVpc, subnetIds: readonly string[], securityGroupIds: readonly string[]): void {
    // SageMaker attaches the model's network interfaces with the execution role (CreateModel VpcConfig). Each resource
    // of each action is scoped only with the condition keys the Service Authorization Reference lists for it
    // (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonec2.html): for
    // ec2:CreateNetworkInterface the network-interface resource carries aws:RequestTag, aws:TagKeys and
    // ec2:NetworkInterfaceID only (no ec2:Vpc), the subnet and security-group resources carry ec2:Vpc; the permission and
    // delete actions carry ec2:Vpc on the network interface. A condition on a key the request lacks denies it.
    // DeleteNetworkInterfacePermission lists network-interface as its (optional) resource, with ec2:Vpc; that the
    // request is authorized against the interface is what AWS's own AmazonSageMakerInferenceServiceRolePolicy (v2,
    // statement DeleteENIPermissionTagScoped) relies on: it grants the action on network-interface/* under
    // aws:ResourceTag conditions, keys only an interface in the request context carries (iann0036/iam-dataset@6256c5a
    // aws/managedpolicies/AmazonSageMakerInferenceServiceRolePolicy.json).
    this.allow(
      {
        sid: 'DescribeNetwork',
        actions: ['ec2:DescribeVpcs', 'ec2:DescribeSubnets', 'ec2:DescribeSecurityGroups', 'ec2:DescribeNetworkInterfaces', 'ec2:DescribeDhcpOptions'],
        resources: ['*'],
      },
      WILDCARD_ONLY,
    );
    const stack = Stack.of(this);
    const arn = (resource: string, resourceName: string) => stack.formatArn({ service: 'ec2', resource, resourceName });
    this.allow(
      { sid: 'CreateNetworkInterfaces', actions: ['ec2:CreateNetworkInterface'], resources: [arn('network-interface', '*')] },
      'The network interface SageMaker creates has no id before it exists; where it is created is bound by the subnet and ' +
        'security-group resources of the same action (statement CreateNetworkInterfacesInOwnSubnets).',
    );
    this.allow({
      sid: 'CreateNetworkInterfacesInOwnSubnets',
      actions: ['ec2:CreateNetworkInterface'],
      resources: [...subnetIds.map((id) => arn('subnet', id)), ...securityGroupIds.map((id) => arn('security-group', id))],
    });
    this.allow(
      {
        sid: 'ManageOwnNetworkInterfaces',
        actions: ['ec2:CreateNetworkInterfacePermission', 'ec2:DeleteNetworkInterface', 'ec2:DeleteNetworkInterfacePermission'],
        resources: [arn('network-interface', '*')],
        conditions: { ArnEquals: { 'ec2:Vpc': arn('vpc', vpc.vpcId) } },
      },
      "Network interfaces SageMaker creates at run time for the model's instances, bound to the endpoint's own VPC by the ec2:Vpc condition.",
    );
  }
}
