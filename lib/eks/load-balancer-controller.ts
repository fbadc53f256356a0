import { Duration, Stack } from 'aws-cdk-lib';
import type * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { controllerChart, PodIdentityRole } from './pod-identity';
import { type ChartSpec, LOAD_BALANCER_CONTROLLER_CHART } from './versions';

export const LOAD_BALANCER_CONTROLLER_NAMESPACE = 'kube-system';
export const LOAD_BALANCER_CONTROLLER_SERVICE_ACCOUNT = 'aws-load-balancer-controller';

export interface LoadBalancerControllerProps {
  readonly cluster: eks.ICluster;
  readonly clusterName: string;
  readonly vpcId: string;
  /**
   * The target groups the controller may register pods in (and no others). Services on a shared cluster add theirs
   * with `allowTargetGroups`.
   * @default - none yet
   */
  readonly targetGroupArns?: readonly string[];
  /** @default LOAD_BALANCER_CONTROLLER_CHART */
  readonly chart?: ChartSpec;
}

/**
 * The AWS Load Balancer Controller (pinned chart), used here only for TargetGroupBindings to target groups the CDK app
 * owns. Its policy is therefore narrower than the upstream one: it reads ELB and EC2 state and registers targets only in
 * the target groups it is given. It cannot create load balancers or change security groups.
 */
export class LoadBalancerController extends Construct {
  public readonly role: iam.Role;
  public readonly policy: iam.Policy;
  /** Installs the TargetGroupBinding CRD. */
  public readonly chart: eks.HelmChart;
  private registration?: iam.PolicyStatement;

  constructor(scope: Construct, id: string, props: LoadBalancerControllerProps) {
    super(scope, id);
    const identity = new PodIdentityRole(this, 'Controller', {
      cluster: props.cluster,
      namespace: LOAD_BALANCER_CONTROLLER_NAMESPACE,
      serviceAccountName: LOAD_BALANCER_CONTROLLER_SERVICE_ACCOUNT,
      description: 'AWS Load Balancer Controller: registers pods in CDK-owned target groups',
      statements: [LoadBalancerController.readStatement(Stack.of(this).region)],
      wildcardReason:
        'ELB and EC2 Describe* actions have no resource-level permissions (restricted to this region); target registration is scoped to ' +
        "the service's own target group ARNs.",
    });
    this.role = identity.role;
    this.policy = identity.policy;
    if (props.targetGroupArns && props.targetGroupArns.length > 0) this.allowTargetGroups(props.targetGroupArns);
    this.chart = controllerChart(this, 'Chart', {
      cluster: props.cluster,
      chart: props.chart ?? LOAD_BALANCER_CONTROLLER_CHART,
      release: 'aws-load-balancer-controller',
      namespace: LOAD_BALANCER_CONTROLLER_NAMESPACE,
      createNamespace: false,
      timeout: Duration.minutes(10),
      values: {
        clusterName: props.clusterName,
        region: Stack.of(this).region,
        vpcId: props.vpcId,
        serviceAccount: { create: true, name: LOAD_BALANCER_CONTROLLER_SERVICE_ACCOUNT },
        // Only TargetGroupBindings are used: no Service of type LoadBalancer is mutated into an NLB.
        enableServiceMutatorWebhook: false,
      },
      dependsOn: [identity],
    });
  }

  /** What the controller reads to keep TargetGroupBindings in step (no resource-level permissions: held to one region). */
  public static readStatement(region: string): iam.PolicyStatement {
    return new iam.PolicyStatement({
      sid: 'ReadLoadBalancingAndNetworkState',
      actions: [
        'elasticloadbalancing:DescribeLoadBalancers',
        'elasticloadbalancing:DescribeListeners',
        'elasticloadbalancing:DescribeRules',
        'elasticloadbalancing:DescribeTags',
        'elasticloadbalancing:DescribeTargetGroups',
        'elasticloadbalancing:DescribeTargetGroupAttributes',
        'elasticloadbalancing:DescribeTargetHealth',
        'ec2:DescribeAvailabilityZones',
        'ec2:DescribeInstances',
        'ec2:DescribeNetworkInterfaces',
        'ec2:DescribeSecurityGroups',
        'ec2:DescribeSubnets',
        'ec2:DescribeVpcs',
      ],
      resources: ['*'],
      conditions: { StringEquals: { 'aws:RequestedRegion': region } },
    });
  }

  /** Register and deregister pods in exactly these target groups (also for a controller this construct did not install). */
  public static targetRegistrationStatement(targetGroupArns: readonly string[]): iam.PolicyStatement {
    return new iam.PolicyStatement({
      sid: 'RegisterPodsInOwnedTargetGroups',
      actions: ['elasticloadbalancing:RegisterTargets', 'elasticloadbalancing:DeregisterTargets'],
      resources: [...targetGroupArns],
    });
  }

  /** Lets the controller register pods in these target groups (one statement for all services on the cluster). */
  public allowTargetGroups(targetGroupArns: readonly string[]): void {
    if (this.registration) {
      this.registration.addResources(...targetGroupArns);
      return;
    }
    this.registration = LoadBalancerController.targetRegistrationStatement(targetGroupArns);
    this.policy.addStatements(this.registration);
  }
}
