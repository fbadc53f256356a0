import { Duration, Stack } from 'aws-cdk-lib';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { KARPENTER_SERVICE_ACCOUNT } from '../core/platform/service-accounts';
import { KARPENTER_CONTROLLER } from '../core/platform/system-nodes';
import { acknowledgeManagedPolicies, acknowledgeRule } from '../util/nag';
import { controllerChart, PodIdentityRole } from './pod-identity';
import { type ChartSpec, KARPENTER_CHART } from './versions';

/**
 * The EventBridge events Karpenter handles from its interruption queue (upstream reference: karpenter-provider-aws
 * `getting-started-with-karpenter/cloudformation.yaml`). Each becomes one rule.
 */
export const KARPENTER_INTERRUPTION_EVENTS = [
  { id: 'ScheduledChangeRule', source: 'aws.health', detailType: 'AWS Health Event' },
  { id: 'SpotInterruptionRule', source: 'aws.ec2', detailType: 'EC2 Spot Instance Interruption Warning' },
  { id: 'RebalanceRule', source: 'aws.ec2', detailType: 'EC2 Instance Rebalance Recommendation' },
  { id: 'InstanceStateChangeRule', source: 'aws.ec2', detailType: 'EC2 Instance State-change Notification' },
  { id: 'CapacityReservationInterruptionRule', source: 'aws.ec2', detailType: 'EC2 Capacity Reservation Instance Interruption Warning' },
] as const;

/** Where Karpenter's controller runs (chart default, stated once); its service account is KARPENTER_SERVICE_ACCOUNT. */
export const KARPENTER_NAMESPACE = 'kube-system';

export interface KarpenterProps {
  readonly cluster: eks.ICluster;
  /** Literal cluster name: it appears in IAM condition keys and Karpenter's settings. */
  readonly clusterName: string;
  /** @default KARPENTER_CHART */
  readonly chart?: ChartSpec;
}

/**
 * Karpenter v1 on an EKS cluster: its controller role (least privilege, scoped like the upstream reference), the node
 * role and its access entry, the interruption queue with the five EventBridge rules, and the pinned Helm chart.
 */
export class Karpenter extends Construct {
  /** Role of the nodes Karpenter launches. */
  public readonly nodeRole: iam.Role;
  public readonly nodeAccessEntry: eks.AccessEntry;
  public readonly controllerRole: iam.Role;
  public readonly interruptionQueue: sqs.Queue;
  public readonly interruptionRules: events.Rule[];
  /** Installs the NodePool and EC2NodeClass CRDs: NodePools and EC2NodeClasses depend on it. */
  public readonly chart: eks.HelmChart;
  /** The controller's policy: the chart, and so every NodePool, waits for it. */
  private readonly controllerPolicy: iam.Policy;
  private spotAllowed = false;

  constructor(scope: Construct, id: string, props: KarpenterProps) {
    super(scope, id);
    const { cluster, clusterName } = props;

    this.nodeRole = new iam.Role(this, 'NodeRole', {
      assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com'),
      description: `Nodes launched by Karpenter in EKS cluster ${clusterName}`,
      managedPolicies: ['AmazonEKSWorkerNodePolicy', 'AmazonEKS_CNI_Policy', 'AmazonEC2ContainerRegistryPullOnly'].map((n) =>
        iam.ManagedPolicy.fromAwsManagedPolicyName(n),
      ),
    });
    this.nodeAccessEntry = new eks.AccessEntry(this, 'NodeAccessEntry', {
      cluster,
      principal: this.nodeRole.roleArn,
      accessEntryType: eks.AccessEntryType.EC2_LINUX,
      accessPolicies: [],
    });

    this.interruptionQueue = new sqs.Queue(this, 'InterruptionQueue', {
      retentionPeriod: Duration.minutes(5),
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    this.interruptionRules = KARPENTER_INTERRUPTION_EVENTS.map(
      (e) =>
        new events.Rule(this, e.id, {
          description: `Karpenter interruption handling (${clusterName}): ${e.detailType}`,
          eventPattern: { source: [e.source], detailType: [e.detailType] },
          targets: [new targets.SqsQueue(this.interruptionQueue)],
        }),
    );

    const identity = new PodIdentityRole(this, 'Controller', {
      cluster,
      namespace: KARPENTER_NAMESPACE,
      serviceAccountName: KARPENTER_SERVICE_ACCOUNT,
      description: `Karpenter controller of EKS cluster ${clusterName}`,
      statements: karpenterControllerStatements(Stack.of(this), clusterName, this.nodeRole, this.interruptionQueue),
      wildcardReason:
        'Karpenter creates and terminates instances, fleets, launch templates, volumes, network interfaces and instance profiles whose ids do ' +
        'not exist before launch: every statement on them is conditioned on the cluster-owned and karpenter.sh/nodepool (or ec2nodeclass) tags, ' +
        'as in the upstream reference. EC2 Describe* (restricted to this region), pricing:GetProducts and iam:ListInstanceProfiles have no ' +
        'resource-level permissions; AMI, snapshot and SSM public-parameter ARNs are AWS-owned. RunInstances and CreateFleet also name the ' +
        'subnets, security groups, capacity reservations and placement groups a launch may use, unconditioned as upstream: which ones is the ' +
        "EC2NodeClass's selection, resolved at run time, and these actions only create what the tag-conditioned statements allow.",
    });
    this.controllerRole = identity.role;
    this.controllerPolicy = identity.policy;
    acknowledgeManagedPolicies(
      this.nodeRole,
      'Karpenter nodes are EKS worker nodes: AmazonEKSWorkerNodePolicy (kubelet), AmazonEKS_CNI_Policy (the VPC CNI assigns pod IPs ' +
        'from the node) and AmazonEC2ContainerRegistryPullOnly (image pulls) are the AWS-maintained minimum of a node, as in the Karpenter reference.',
    );
    acknowledgeRule(
      this.interruptionQueue,
      'AwsSolutions-SQS3',
      'Interruption notices are only useful within minutes (5-minute retention); Karpenter deletes what it handles. A dead-letter queue ' +
        'would keep stale notices nobody acts on.',
    );

    this.chart = controllerChart(this, 'Chart', {
      cluster,
      chart: props.chart ?? KARPENTER_CHART,
      release: 'karpenter',
      namespace: KARPENTER_NAMESPACE,
      createNamespace: false,
      values: {
        settings: { clusterName, interruptionQueue: this.interruptionQueue.queueName },
        serviceAccount: { create: true, name: KARPENTER_SERVICE_ACCOUNT },
        // What the system node group is sized for (lib/core/platform/system-nodes.ts).
        replicas: KARPENTER_CONTROLLER.replicas,
        controller: { resources: KARPENTER_CONTROLLER.resources },
      },
      // Credentials and node access must exist before the controller starts launching nodes.
      dependsOn: [identity, this.nodeAccessEntry],
    });
  }

  /**
   * Called when a class that may run spot attaches: the controller may then create the EC2 Spot service-linked role
   * (spotServiceLinkedRoleStatement). Added to the controller's own policy, which the chart and every NodePool wait
   * for. Idempotent; a cluster with no spot class never gets it.
   */
  public allowSpotCapacity(): void {
    if (this.spotAllowed) return;
    this.spotAllowed = true;
    this.controllerPolicy.addStatements(spotServiceLinkedRoleStatement(Stack.of(this)));
  }
}

/**
 * Lets the controller create the EC2 Spot service-linked role, which a spot launch needs. Karpenter: "Unless your AWS
 * account has already onboarded to EC2 Spot, you will need to create the service linked role to avoid
 * `ServiceLinkedRoleCreationNotPermitted`" (aws/karpenter-provider-aws@v1.14.1
 * website/content/en/docs/troubleshooting.md:27-36), and on that CreateFleet error it marks spot unavailable
 * (pkg/providers/instance/instance.go:644-647), which reads as a capacity shortage. EC2: "If you use the AWS CLI or
 * an API to request a Spot Instance, you must first ensure that this role exists"
 * (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/service-linked-roles-spot-instance-requests.html). Scoped as the
 * IAM user guide's "allow an IAM entity to create a specific service-linked role": the role's ARN,
 * `aws-service-role/<service principal>/<role name>`, and the `iam:AWSServiceName` condition key
 * (awsdocs/iam-user-guide doc_source/using-service-linked-roles.md; the Service Authorization Reference,
 * list_awsidentityandaccessmanagementiam.html: CreateServiceLinkedRole on resource type `role`, condition key
 * `iam:AWSServiceName`). Only the Spot role: the upstream reference grants no service-linked role at all.
 */
export function spotServiceLinkedRoleStatement(stack: Stack): iam.PolicyStatement {
  return new iam.PolicyStatement({
    sid: 'AllowSpotServiceLinkedRoleCreation',
    actions: ['iam:CreateServiceLinkedRole'],
    resources: [`arn:${stack.partition}:iam::${stack.account}:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot`],
    conditions: { StringEquals: { 'iam:AWSServiceName': 'spot.amazonaws.com' } },
  });
}

/** The controller's permissions: the upstream reference's statements, re-expressed with ARNs of this stack. */
export function karpenterControllerStatements(stack: Stack, clusterName: string, nodeRole: iam.IRole, queue: sqs.IQueue): iam.PolicyStatement[] {
  const ec2 = (resource: string, account = '*') => `arn:${stack.partition}:ec2:${stack.region}:${account}:${resource}`;
  const owned = { [`aws:ResourceTag/kubernetes.io/cluster/${clusterName}`]: 'owned' };
  const requestOwned = { [`aws:RequestTag/kubernetes.io/cluster/${clusterName}`]: 'owned', 'aws:RequestTag/eks:eks-cluster-name': clusterName };
  const nodepoolTagged = { 'aws:ResourceTag/karpenter.sh/nodepool': '*' };
  const requestNodepool = { 'aws:RequestTag/karpenter.sh/nodepool': '*' };
  const launched = ['fleet/*', 'instance/*', 'volume/*', 'network-interface/*', 'launch-template/*', 'spot-instances-request/*'].map((r) => ec2(r));
  const instanceProfiles = `arn:${stack.partition}:iam::${stack.account}:instance-profile/*`;
  const region = { 'aws:RequestTag/topology.kubernetes.io/region': stack.region };
  return [
    new iam.PolicyStatement({
      sid: 'AllowScopedEC2InstanceAccessActions',
      actions: ['ec2:RunInstances', 'ec2:CreateFleet'],
      resources: [
        `arn:${stack.partition}:ec2:${stack.region}::image/*`,
        `arn:${stack.partition}:ec2:${stack.region}::snapshot/*`,
        ec2('security-group/*'),
        ec2('subnet/*'),
        ec2('capacity-reservation/*'),
        ec2('placement-group/*'),
      ],
    }),
    new iam.PolicyStatement({
      sid: 'AllowScopedEC2LaunchTemplateAccessActions',
      actions: ['ec2:RunInstances', 'ec2:CreateFleet'],
      resources: [ec2('launch-template/*')],
      conditions: { StringEquals: owned, StringLike: nodepoolTagged },
    }),
    new iam.PolicyStatement({
      sid: 'AllowScopedEC2InstanceActionsWithTags',
      actions: ['ec2:RunInstances', 'ec2:CreateFleet', 'ec2:CreateLaunchTemplate'],
      resources: launched,
      conditions: { StringEquals: requestOwned, StringLike: requestNodepool },
    }),
    new iam.PolicyStatement({
      sid: 'AllowScopedResourceCreationTagging',
      actions: ['ec2:CreateTags'],
      resources: launched,
      conditions: {
        StringEquals: { ...requestOwned, 'ec2:CreateAction': ['RunInstances', 'CreateFleet', 'CreateLaunchTemplate'] },
        StringLike: requestNodepool,
      },
    }),
    new iam.PolicyStatement({
      sid: 'AllowScopedResourceTagging',
      actions: ['ec2:CreateTags'],
      resources: [ec2('instance/*')],
      conditions: {
        StringEquals: owned,
        StringLike: nodepoolTagged,
        StringEqualsIfExists: { 'aws:RequestTag/eks:eks-cluster-name': clusterName },
        'ForAllValues:StringEquals': { 'aws:TagKeys': ['eks:eks-cluster-name', 'karpenter.sh/nodeclaim', 'Name'] },
      },
    }),
    new iam.PolicyStatement({
      sid: 'AllowScopedDeletion',
      actions: ['ec2:TerminateInstances', 'ec2:DeleteLaunchTemplate'],
      resources: [ec2('instance/*'), ec2('launch-template/*')],
      conditions: { StringEquals: owned, StringLike: nodepoolTagged },
    }),
    new iam.PolicyStatement({
      sid: 'AllowPassingInstanceRole',
      actions: ['iam:PassRole'],
      resources: [nodeRole.roleArn],
      conditions: { StringEquals: { 'iam:PassedToService': ['ec2.amazonaws.com', 'ec2.amazonaws.com.cn'] } },
    }),
    new iam.PolicyStatement({
      sid: 'AllowScopedInstanceProfileCreationActions',
      actions: ['iam:CreateInstanceProfile'],
      resources: [instanceProfiles],
      conditions: { StringEquals: { ...requestOwned, ...region }, StringLike: { 'aws:RequestTag/karpenter.k8s.aws/ec2nodeclass': '*' } },
    }),
    new iam.PolicyStatement({
      sid: 'AllowScopedInstanceProfileTagActions',
      actions: ['iam:TagInstanceProfile'],
      resources: [instanceProfiles],
      conditions: {
        StringEquals: { ...owned, 'aws:ResourceTag/topology.kubernetes.io/region': stack.region, ...requestOwned, ...region },
        StringLike: { 'aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass': '*', 'aws:RequestTag/karpenter.k8s.aws/ec2nodeclass': '*' },
      },
    }),
    new iam.PolicyStatement({
      sid: 'AllowScopedInstanceProfileActions',
      actions: ['iam:AddRoleToInstanceProfile', 'iam:RemoveRoleFromInstanceProfile', 'iam:DeleteInstanceProfile'],
      resources: [instanceProfiles],
      conditions: {
        StringEquals: { ...owned, 'aws:ResourceTag/topology.kubernetes.io/region': stack.region },
        StringLike: { 'aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass': '*' },
      },
    }),
    ...karpenterReadStatements(stack, clusterName, queue),
  ];
}

/** What the controller reads and consumes: the API endpoint, its interruption queue, regional EC2 state, AMI ids and prices. */
function karpenterReadStatements(stack: Stack, clusterName: string, queue: sqs.IQueue): iam.PolicyStatement[] {
  const instanceProfiles = `arn:${stack.partition}:iam::${stack.account}:instance-profile/*`;
  const clusterArn = `arn:${stack.partition}:eks:${stack.region}:${stack.account}:cluster/${clusterName}`;
  return [
    new iam.PolicyStatement({ sid: 'AllowAPIServerEndpointDiscovery', actions: ['eks:DescribeCluster'], resources: [clusterArn] }),
    new iam.PolicyStatement({
      sid: 'AllowInterruptionQueueActions',
      actions: ['sqs:DeleteMessage', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'],
      resources: [queue.queueArn],
    }),
    new iam.PolicyStatement({
      sid: 'AllowRegionalReadActions',
      actions: [
        'ec2:DescribeCapacityReservations',
        'ec2:DescribeImages',
        'ec2:DescribeInstances',
        'ec2:DescribeInstanceStatus',
        'ec2:DescribeInstanceTypeOfferings',
        'ec2:DescribeInstanceTypes',
        'ec2:DescribeLaunchTemplates',
        'ec2:DescribePlacementGroups',
        'ec2:DescribeSecurityGroups',
        'ec2:DescribeSpotPriceHistory',
        'ec2:DescribeSubnets',
      ],
      resources: ['*'],
      conditions: { StringEquals: { 'aws:RequestedRegion': stack.region } },
    }),
    new iam.PolicyStatement({
      sid: 'AllowSSMReadActions',
      actions: ['ssm:GetParameter'],
      resources: [`arn:${stack.partition}:ssm:${stack.region}::parameter/aws/service/*`],
    }),
    new iam.PolicyStatement({ sid: 'AllowPricingReadActions', actions: ['pricing:GetProducts'], resources: ['*'] }),
    new iam.PolicyStatement({ sid: 'AllowUnscopedInstanceProfileListAction', actions: ['iam:ListInstanceProfiles'], resources: ['*'] }),
    new iam.PolicyStatement({ sid: 'AllowInstanceProfileReadActions', actions: ['iam:GetInstanceProfile'], resources: [instanceProfiles] }),
  ];
}
