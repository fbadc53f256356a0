import { Names, Stack } from 'aws-cdk-lib';
import type * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { acknowledgeNistRules } from '../util/nag';
import { MANAGED_BY_LABELS } from './manifests/workload';
import { controllerChart, PodIdentityRole } from './pod-identity';
import { type ChartSpec, LOAD_BALANCER_CONTROLLER_CHART } from './versions';

export const LOAD_BALANCER_CONTROLLER_NAMESPACE = 'kube-system';

/**
 * The chart values of the pod webhook that injects the ALB readiness gate (`mpod.elbv2.k8s.aws`), for the pods of the
 * library's serving namespaces (labelled `elbv2.k8s.aws/pod-readiness-gate-inject: enabled`, inference-service.ts
 * `addNamespace`).
 *
 * `failurePolicy: Fail`. The chart's default is Ignore (aws/eks-charts@5239609 stable/aws-load-balancer-controller/
 * values.yaml:511-514, rendered on the webhook at templates/webhook.yaml:22-23): a pod created while the controller's
 * webhook does not answer is then created without the gate, and a pod without it counts as ready on its own probes
 * alone (kubernetes-sigs/aws-load-balancer-controller@v3.5.0 pkg/targetgroupbinding/resource_manager.go:516-518,
 * calculateReadinessGateTransition: no gate, ConditionTrue). A rollout (maxUnavailable 0) then removes an old pod
 * that is registered for a new one the ALB does not route to yet: 503s from the ALB for a one-replica class. Fail
 * refuses the pod instead; its ReplicaSet retries, so the pod is created once the controller answers (a scale-out or a
 * rollout waits for it; the old pods keep serving). Upstream: "For optimal reliability & availability, it is
 * recommended to use `failurePolicy: Fail` combined with an explicit Object Selector"
 * (aws-load-balancer-controller@v3.5.0 docs/deploy/pod_readiness_gate.md:50-63).
 *
 * `objectSelector`: only the library's pods, which carry `app.kubernetes.io/managed-by` (MANAGED_BY_LABELS; the chart
 * renders the selector on the webhook together with its own exclusion of the controller's pods,
 * templates/webhook.yaml:36-48), so that Fail blocks no pod of a user's in a namespace the user labels for injection.
 * Such pods get no gate from this controller either (the same selector); this controller registers targets only in
 * the library's target groups anyway (its policy, `targetRegistrationStatement`). Nothing the controller needs runs in
 * the serving namespaces: it runs in kube-system on the system nodes, so a refused serving pod cannot hold it back.
 * The chart renders the same selector on its QUIC server-id webhook (templates/webhook.yaml:81-93), which serves only
 * namespaces labelled `elbv2.k8s.aws/quic-server-id-inject` (none of the library's).
 */
export const READINESS_GATE_WEBHOOK_VALUES = {
  podMutatorWebhookConfig: { failurePolicy: 'Fail' },
  objectSelector: { matchLabels: { ...MANAGED_BY_LABELS } },
} as const;
export const LOAD_BALANCER_CONTROLLER_SERVICE_ACCOUNT = 'aws-load-balancer-controller';

export interface LoadBalancerControllerProps {
  readonly cluster: eks.ICluster;
  readonly clusterName: string;
  readonly vpcId: string;
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
    this.chart = controllerChart(this, 'Chart', {
      cluster: props.cluster,
      chart: props.chart ?? LOAD_BALANCER_CONTROLLER_CHART,
      release: 'aws-load-balancer-controller',
      namespace: LOAD_BALANCER_CONTROLLER_NAMESPACE,
      createNamespace: false,
      values: {
        clusterName: props.clusterName,
        region: Stack.of(this).region,
        vpcId: props.vpcId,
        serviceAccount: { create: true, name: LOAD_BALANCER_CONTROLLER_SERVICE_ACCOUNT },
        // Only TargetGroupBindings are used: no Service of type LoadBalancer is mutated into an NLB.
        enableServiceMutatorWebhook: false,
        ...READINESS_GATE_WEBHOOK_VALUES,
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

  /**
   * The policy (`LoadBalancerControllerTargets-<id>`, in `scope`) that lets the controller's `role` register and
   * deregister pods in one target group: one policy per target group, never a statement shared by several. A
   * TargetGroupBinding that depends on it is deleted before it, and the controller keeps the binding's finalizer until
   * it has deregistered the binding's targets: only TargetGroupNotFound or an invalid ARN count as done, an AccessDenied
   * keeps it (kubernetes-sigs/aws-load-balancer-controller@v3.5.0 pkg/targetgroupbinding/resource_manager.go:385-408
   * cleanupTargets; controllers/elbv2/targetgroupbinding_controller.go:174-182), and aws-eks-v2's manifest delete is a
   * plain `kubectl delete`, which waits for the finalizer (aws-cdk-lib 2.269.0 custom-resource-handlers/dist/aws-eks-v2/
   * kubectl-handler/apply/__init__.py:68-72). An ARN dropped from a shared policy is revoked when CloudFormation updates
   * that policy, before it removes the binding in the cleanup phase: the delete then waits past the handler's 15
   * minutes, the stack waits an hour and fails. A policy of its own is removed in the cleanup phase, after its binding.
   */
  public static targetGroupPolicy(scope: Construct, id: string, role: iam.IRole, targetGroupArn: string): iam.Policy {
    const policy = new iam.Policy(scope, `LoadBalancerControllerTargets-${id}`, {
      roles: [role],
      statements: [LoadBalancerController.targetRegistrationStatement([targetGroupArn])],
    });
    // An inline policy's name is unique per role only, and iam.Policy names it from its stack-relative logical ID: two
    // service stacks with the same construct paths on one cluster would write the same name on the controller's role,
    // each replacing the other's grant (review R101). The construct's whole path, stack included, is unique in the app.
    (policy.node.defaultChild as iam.CfnPolicy).policyName = Names.uniqueResourceName(policy, { maxLength: 128 });
    acknowledgeNistRules(policy, {
      IAMNoInlinePolicy: "Target registration in one target group, attached to the Load Balancer Controller's role only: a policy of "
        + 'its own per target group so that it is removed after the TargetGroupBinding that needs it; a customer managed policy would be '
        + 'a second resource per target group holding the same statement.',
    });
    return policy;
  }

  /**
   * Lets the controller register pods in one target group, by a policy of its own in `scope` (`targetGroupPolicy`):
   * the TargetGroupBinding of that target group should depend on it.
   */
  public allowTargetGroup(scope: Construct, id: string, targetGroupArn: string): iam.Policy {
    return LoadBalancerController.targetGroupPolicy(scope, id, this.role, targetGroupArn);
  }
}
