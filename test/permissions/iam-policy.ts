/**
 * IAM for the permissions tests: what each captured AWS call asks IAM for (action, resource ARN, request context), per
 * the Service Authorization Reference, and whether the statements of a synthesized role allow it.
 *
 * The evaluation is the subset the library's policies use: Allow / Deny statements with Action and Resource
 * wildcards and the condition operators StringEquals, StringLike, ArnEquals and ArnLike (with IfExists). As in IAM,
 * a condition on a key the request does not carry is false (true with IfExists). Anything else throws, so a policy
 * this evaluator cannot judge fails the test instead of passing it.
 */
import { type CapturedCall, type Reply } from './aws-endpoint';

export const ACCOUNT = '123456789012';
export const REGION = 'us-east-1';

/** One authorization IAM makes for a call. */
export interface IamRequest {
  readonly action: string;
  readonly resource: string;
  /** Condition keys the request carries, with their values. */
  readonly context: Readonly<Record<string, string>>;
}

const SAR = 'https://docs.aws.amazon.com/service-authorization/latest/reference/';

/**
 * The authorizations of one call. Sources (SAR pages, read from the stored copy, see /work/notes/I-facts.md):
 * list_amazoncloudwatch.html (GetMetricData: no resource type), list_amazonsagemaker.html (endpoint*),
 * list_awsapplicationautoscaling.html (DescribeScalableTargets: no resource type),
 * list_elasticloadbalancingv2.html (DescribeListeners, DescribeRules, DescribeTargetHealth: none; ModifyListener: listener/app*; ModifyRule:
 * listener-rule/app*),
 * list_amazonelasticcontainerregistry.html (repository*), list_awssigner.html (GetSigningProfile: signing-profile*;
 * GetRevocationStatus: signing-job* and signing-profile*), list_awskeymanagementservice.html (key*, kms:ViaService),
 * list_amazons3.html (object; the *Version* actions with s3:versionid) and the S3 API reference (a GetObject or
 * HeadObject of a version needs s3:GetObjectVersion instead of s3:GetObject; GetObjectTagging / PutObjectTagging of a
 * version "also" need s3:GetObjectVersionTagging / s3:PutObjectVersionTagging, read as both being required, the
 * reading that cannot under-grant; HeadObject with ChecksumMode ENABLED on an SSE-KMS
 * object needs kms:Decrypt, which S3 asks on the caller's behalf: kms:ViaService s3.<region>.amazonaws.com).
 */
export function iamRequests(call: CapturedCall, reply: Reply): IamRequest[] {
  const i = call.input as Record<string, string>;
  const arn = (service: string, resource: string, region = call.region, account = ACCOUNT) => `arn:aws:${service}:${region}:${account}:${resource}`;
  const req = (action: string, resource: string, context: Record<string, string> = {}): IamRequest => ({ action, resource, context });
  switch (`${call.service}:${call.operation}`) {
    case 'monitoring:GetMetricData':
      return [req('cloudwatch:GetMetricData', '*')];
    case 'sagemaker:DescribeEndpoint':
    case 'sagemaker:UpdateEndpointWeightsAndCapacities':
      // SageMaker lower-cases names in ARNs.
      return [req(`sagemaker:${call.operation}`, arn('sagemaker', `endpoint/${i.EndpointName.toLowerCase()}`))];
    case 'application-autoscaling:DescribeScalableTargets':
      // No resource type and no condition key in its row (list_awsapplicationautoscaling.html).
      return [req('application-autoscaling:DescribeScalableTargets', '*')];
    case 'elasticloadbalancing:DescribeListeners':
      return [req('elasticloadbalancing:DescribeListeners', '*')];
    case 'elasticloadbalancing:DescribeTargetHealth':
      return [req('elasticloadbalancing:DescribeTargetHealth', '*')];
    case 'elasticloadbalancing:ModifyListener':
    case 'elasticloadbalancing:ModifyRule': {
      // An authenticate-cognito action written back (a listener's DefaultActions, a rule's Actions): Elastic Load
      // Balancing checks cognito-idp:DescribeUserPoolClient on its user pool with the caller's permissions
      // (lib/eks/listener-authentication.ts).
      const listener = call.operation === 'ModifyListener';
      const poolKey = new RegExp(`^${listener ? 'DefaultActions' : 'Actions'}\\.member\\.\\d+\\.AuthenticateCognitoConfig\\.UserPoolArn$`);
      const pools = Object.entries(i).filter(([k]) => poolKey.test(k)).map(([, v]) => v);
      const own = listener ? req('elasticloadbalancing:ModifyListener', i.ListenerArn) : req('elasticloadbalancing:ModifyRule', i.RuleArn);
      return [own, ...pools.map((pool) => req('cognito-idp:DescribeUserPoolClient', pool))];
    }
    case 'elasticloadbalancing:DescribeRules':
      return [req('elasticloadbalancing:DescribeRules', '*')];
    case 'ecr:DescribeImageSigningStatus':
    case 'ecr:BatchGetImage':
    case 'ecr:GetDownloadUrlForLayer':
    case 'ecr:ListImageReferrers': {
      // ListImageReferrers has no action of its own in the reference; ECR authorizes it with ecr:BatchGetImage.
      const action = call.operation === 'ListImageReferrers' ? 'ecr:BatchGetImage' : `ecr:${call.operation}`;
      return [req(action, arn('ecr', `repository/${i.repositoryName}`, call.region, i.registryId ?? ACCOUNT))];
    }
    case 'signer:GetSigningProfile':
      return [req('signer:GetSigningProfile', arn('signer', `/signing-profiles/${i.profileName}`, call.region, i.profileOwner ?? ACCOUNT))];
    case 'signer:GetRevocationStatus':
      return [req('signer:GetRevocationStatus', i.profileVersionArn), req('signer:GetRevocationStatus', i.jobArn)];
    case 'kms:Verify':
    case 'kms:Sign':
      return [req(`kms:${call.operation}`, i.KeyId, { 'kms:SigningAlgorithm': i.SigningAlgorithm, 'kms:MessageType': i.MessageType })];
    case 's3:HeadObject':
    case 's3:GetObject': {
      const object = `arn:aws:s3:::${i.Bucket}/${i.Key}`;
      const version: Record<string, string> = i.VersionId ? { 's3:versionid': i.VersionId } : {};
      // "If you include a versionId ... you must have the s3:GetObjectVersion permission ... The s3:GetObject permission
      // is not required in this scenario" (GetObject); a HEAD "has the same options as a GET".
      const out = [req(i.VersionId ? 's3:GetObjectVersion' : 's3:GetObject', object, version)];
      const key = 'headers' in reply ? reply.headers?.['x-amz-server-side-encryption-aws-kms-key-id'] : undefined;
      const reads = call.operation === 'GetObject' || i.ChecksumMode === 'ENABLED';
      if (key && reads) out.push(req('kms:Decrypt', key, { 'kms:ViaService': `s3.${call.region}.amazonaws.com` }));
      return out;
    }
    case 's3:GetObjectTagging':
    case 's3:PutObjectTagging': {
      const object = `arn:aws:s3:::${i.Bucket}/${i.Key}`;
      const verb = call.operation.startsWith('Get') ? 'Get' : 'Put';
      const version: Record<string, string> = i.VersionId ? { 's3:versionid': i.VersionId } : {};
      return [
        req(`s3:${verb}ObjectTagging`, object, version),
        ...(i.VersionId ? [req(`s3:${verb}ObjectVersionTagging`, object, version)] : []),
      ];
    }
    default:
      throw new Error(`no IAM mapping for ${call.service}:${call.operation} (add it from ${SAR})`);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Synthesized policies
// ---------------------------------------------------------------------------------------------------------------

export interface Statement {
  readonly Sid?: string;
  readonly Effect: 'Allow' | 'Deny';
  readonly Action: string | string[];
  readonly Resource: string | string[];
  readonly Condition?: Record<string, Record<string, string | string[]>>;
}

/** A synthesized template (`Template.toJSON()`). */
export type Template = { [key: string]: unknown };
type Resources = Record<string, { Type: string; Properties?: Record<string, unknown> }>;
const resourcesOf = (t: Template) => (t.Resources ?? {}) as Resources;

/**
 * Resolves the intrinsic functions of a template value the way a deployment in ACCOUNT / REGION would, with made-up
 * but stable physical ids, so that a handler's inputs (its environment, a custom resource's properties) and its role's
 * ARNs come from the same resolution.
 */
export function resolver(template: Template): (value: unknown) => unknown {
  const resources = resourcesOf(template);
  const physical = (id: string): string => {
    const r = resources[id];
    if (!r) throw new Error(`Ref to unknown resource ${id}`);
    const p = r.Properties ?? {};
    switch (r.Type) {
      case 'AWS::SageMaker::Endpoint': return String(p.EndpointName ?? id);
      case 'AWS::ElasticLoadBalancingV2::Listener': return `arn:aws:elasticloadbalancing:${REGION}:${ACCOUNT}:listener/app/lb-${id}/0123456789abcdef/${id}`;
      // arn:...:listener-rule/app/<lb name>/<lb id>/<listener id>/<rule id> (SAR resource type listener-rule/app).
      case 'AWS::ElasticLoadBalancingV2::ListenerRule': return `arn:aws:elasticloadbalancing:${REGION}:${ACCOUNT}:listener-rule/app/lb-x/0123456789abcdef/x/${id}`;
      case 'AWS::ElasticLoadBalancingV2::TargetGroup': return `arn:aws:elasticloadbalancing:${REGION}:${ACCOUNT}:targetgroup/${id}/0123456789abcdef`;
      case 'AWS::Logs::LogGroup': return String(p.LogGroupName ?? `/generated/${id}`);
      case 'AWS::KMS::Key': return `key-${id}`;
      // A named repository is the one an image reference names (`<registry>/<name>@...`).
      case 'AWS::ECR::Repository': return String(p.RepositoryName ?? id);
      default: return id;
    }
  };
  const attribute = (id: string, attr: string): string => {
    const r = resources[id];
    if (!r) throw new Error(`GetAtt of unknown resource ${id}`);
    const name = physical(id);
    switch (`${r.Type}.${attr}`) {
      case 'AWS::KMS::Key.Arn': return `arn:aws:kms:${REGION}:${ACCOUNT}:key/${name}`;
      case 'AWS::Logs::LogGroup.Arn': return `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:${name}:*`;
      case 'AWS::Signer::SigningProfile.Arn': return `arn:aws:signer:${REGION}:${ACCOUNT}:/signing-profiles/${id}`;
      case 'AWS::Signer::SigningProfile.ProfileVersionArn': return `arn:aws:signer:${REGION}:${ACCOUNT}:/signing-profiles/${id}/v1`;
      case 'AWS::ECR::Repository.Arn': return `arn:aws:ecr:${REGION}:${ACCOUNT}:repository/${name}`;
      case 'AWS::SNS::Topic.TopicArn': return `arn:aws:sns:${REGION}:${ACCOUNT}:${id}`;
      case 'AWS::SQS::Queue.Arn': return `arn:aws:sqs:${REGION}:${ACCOUNT}:${id}`;
      case 'AWS::S3::Bucket.Arn': return `arn:aws:s3:::${String(resources[id].Properties?.BucketName ?? id).toLowerCase()}`;
      case 'AWS::Lambda::Function.Arn': return `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${id}`;
      case 'AWS::IAM::Role.Arn': return `arn:aws:iam::${ACCOUNT}:role/${id}`;
      case 'AWS::CloudWatch::Alarm.Arn': return `arn:aws:cloudwatch:${REGION}:${ACCOUNT}:alarm:${id}`;
      case 'AWS::EC2::SecurityGroup.GroupId': return id;
      case 'AWS::ElasticLoadBalancingV2::TargetGroup.TargetGroupFullName': return `targetgroup/${id}/0123456789abcdef`;
      case 'AWS::ElasticLoadBalancingV2::TargetGroup.TargetGroupName': return id;
      case 'AWS::ElasticLoadBalancingV2::LoadBalancer.LoadBalancerFullName': return `app/lb-${id}/0123456789abcdef`;
      case 'AWS::SageMaker::Model.ModelName': return id.toLowerCase();
      case 'AWS::SageMaker::EndpointConfig.EndpointConfigName': return id.toLowerCase();
      default: throw new Error(`no made-up value for ${r.Type}.${attr}`);
    }
  };
  const pseudo: Record<string, string> = {
    'AWS::Partition': 'aws', 'AWS::Region': REGION, 'AWS::AccountId': ACCOUNT, 'AWS::URLSuffix': 'amazonaws.com', 'AWS::StackName': 'Test',
  };
  const resolve = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(resolve);
    if (v === null || typeof v !== 'object') return v;
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o);
    if (keys.length === 1) {
      const [k] = keys;
      const arg = o[k];
      if (k === 'Ref') return pseudo[arg as string] ?? physical(arg as string);
      if (k === 'Fn::GetAtt') {
        const [id, attr] = Array.isArray(arg) ? (arg as string[]) : String(arg).split('.');
        return attribute(id, attr);
      }
      if (k === 'Fn::Join') {
        const [sep, items] = arg as [string, unknown[]];
        return (resolve(items) as unknown[]).map(String).join(sep);
      }
      if (k === 'Fn::Select') {
        const [index, list] = arg as [number, unknown];
        return (resolve(list) as unknown[])[Number(resolve(index))];
      }
      if (k === 'Fn::Split') {
        const [sep, s] = arg as [string, unknown];
        return String(resolve(s)).split(sep);
      }
      if (k === 'Fn::Sub') {
        const [text, vars] = Array.isArray(arg) ? (arg as [string, Record<string, unknown>]) : [arg as string, {}];
        return text.replace(/\$\{([^}]+)\}/g, (_, name: string) => {
          if (name in vars) return String(resolve(vars[name]));
          if (pseudo[name]) return pseudo[name];
          const [id, attr] = name.split('.');
          return attr ? attribute(id, attr) : physical(id);
        });
      }
      if (k.startsWith('Fn::')) throw new Error(`unsupported intrinsic ${k}`);
    }
    return Object.fromEntries(keys.map((key) => [key, resolve(o[key])]));
  };
  return resolve;
}

/** The statements of every identity policy of a role (its inline policies and the AWS::IAM::Policy resources attached to it). */
export function roleStatements(template: Template, roleLogicalId: string): Statement[] {
  const resolve = resolver(template);
  const resources = resourcesOf(template);
  const role = resources[roleLogicalId];
  if (role?.Type !== 'AWS::IAM::Role') throw new Error(`${roleLogicalId} is not a role`);
  if (((role.Properties?.ManagedPolicyArns as unknown[]) ?? []).length > 0) throw new Error(`${roleLogicalId} has managed policies: judge them too`);
  const docs: unknown[] = ((role.Properties?.Policies as Array<{ PolicyDocument: unknown }>) ?? []).map((p) => p.PolicyDocument);
  for (const r of Object.values(resources)) {
    if (r.Type !== 'AWS::IAM::Policy') continue;
    const roles = (r.Properties?.Roles as unknown[]) ?? [];
    if (roles.some((x) => (x as { Ref?: string }).Ref === roleLogicalId)) docs.push(r.Properties!.PolicyDocument);
  }
  return docs.flatMap((d) => (resolve(d) as { Statement: Statement[] }).Statement);
}

const list = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

function glob(pattern: string, value: string, caseInsensitive = false): boolean {
  const re = new RegExp(`^${pattern.split('*').map((p) => p.split('?').map((q) => q.replace(/[.+^${}()|[\]\\]/g, '\\$&')).join('.')).join('.*')}$`,
    caseInsensitive ? 'i' : '');
  return re.test(value);
}

function conditionHolds(condition: Statement['Condition'], context: Readonly<Record<string, string>>): boolean {
  for (const [operator, entries] of Object.entries(condition ?? {})) {
    const ifExists = operator.endsWith('IfExists');
    const op = ifExists ? operator.slice(0, -'IfExists'.length) : operator;
    for (const [key, expected] of Object.entries(entries)) {
      const actual = Object.entries(context).find(([k]) => k.toLowerCase() === key.toLowerCase())?.[1];
      if (actual === undefined) {
        if (ifExists) continue;
        return false;
      }
      const values = list(expected);
      const match = op === 'StringEquals' || op === 'ArnEquals' ? values.includes(actual)
        : op === 'StringLike' || op === 'ArnLike' ? values.some((p) => glob(p, actual))
          : undefined;
      if (match === undefined) throw new Error(`condition operator ${operator} is not judged by this evaluator`);
      if (!match) return false;
    }
  }
  return true;
}

function statementMatches(s: Statement, r: IamRequest): boolean {
  return list(s.Action).some((a) => glob(a, r.action, true))
    && list(s.Resource).some((p) => glob(p, r.resource))
    && conditionHolds(s.Condition, r.context);
}

/** Whether the statements allow the request (an explicit Deny wins). */
export function allows(statements: readonly Statement[], r: IamRequest): boolean {
  if (statements.some((s) => s.Effect === 'Deny' && statementMatches(s, r))) return false;
  return statements.some((s) => s.Effect === 'Allow' && statementMatches(s, r));
}

/** Every action an Allow statement names (wildcards as written). */
export function grantedActions(statements: readonly Statement[]): string[] {
  return [...new Set(statements.filter((s) => s.Effect === 'Allow').flatMap((s) => list(s.Action)))].sort();
}
