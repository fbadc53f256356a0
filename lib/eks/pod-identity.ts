import { Duration } from 'aws-cdk-lib';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct, type IDependable } from 'constructs';
import { KUBECTL_HANDLER_TIMEOUT_SECONDS, MAX_ATOMIC_CHART_TIMEOUT_SECONDS } from '../core/platform/kubectl-handler';
import { throwIfInvalid } from '../core/validation/error';
import { acknowledgeNistRules, acknowledgeWildcardResources } from '../util/nag';
import { type ChartSpec } from './versions';

export interface PodIdentityRoleProps {
  readonly cluster: eks.ICluster;
  readonly namespace: string;
  readonly serviceAccountName: string;
  readonly description: string;
  /** What the pods may do. */
  readonly statements: readonly iam.PolicyStatement[];
  /**
   * Why the statements' wildcard resources (if any) are needed: recorded as the cdk-nag acknowledgement.
   * @default - no wildcard is expected (cdk-nag reports any)
   */
  readonly wildcardReason?: string;
}

/**
 * An IAM role that one Kubernetes service account assumes through EKS Pod Identity, with its policy and association
 * (the service account itself belongs to the Helm chart or manifest that runs the pods). The trust policy admits only
 * the Pod Identity service, with session tags.
 */
export class PodIdentityRole extends Construct {
  public readonly role: iam.Role;
  public readonly policy: iam.Policy;
  public readonly association: eks.CfnPodIdentityAssociation;

  constructor(scope: Construct, id: string, props: PodIdentityRoleProps) {
    super(scope, id);
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.SessionTagsPrincipal(new iam.ServicePrincipal('pods.eks.amazonaws.com')),
      description: props.description,
    });
    this.policy = new iam.Policy(this, 'Policy', { statements: [...props.statements] });
    this.policy.attachToRole(this.role);
    if (props.wildcardReason) acknowledgeWildcardResources(this.policy, props.wildcardReason);
    acknowledgeNistRules(this.policy, {
      IAMNoInlinePolicy: 'The policy of one pod-identity role that only one service account in one namespace of this cluster assumes; ' +
        'its statements are what that controller or pod calls, scoped to this cluster\'s resources where the action has a resource type. ' +
        'A customer managed policy would be a second resource holding the same statements, attachable to other principals.',
    });
    this.association = new eks.CfnPodIdentityAssociation(this, 'Association', {
      clusterName: props.cluster.clusterName,
      namespace: props.namespace,
      serviceAccount: props.serviceAccountName,
      roleArn: this.role.roleArn,
    });
    // A new cluster gets the Pod Identity agent add-on; an imported one must already run it.
    const agent = props.cluster.eksPodIdentityAgent;
    if (agent) this.association.node.addDependency(agent);
  }
}

export interface ControllerChartProps {
  readonly cluster: eks.ICluster;
  readonly chart: ChartSpec;
  readonly release: string;
  readonly namespace: string;
  readonly createNamespace: boolean;
  /**
   * How long Helm waits for the release, at most MAX_ATOMIC_CHART_TIMEOUT_SECONDS (a failed upgrade waits it twice).
   * @default CONTROLLER_CHART_TIMEOUT
   */
  readonly timeout?: Duration;
  readonly values: Record<string, unknown>;
  /** What the controller needs before it starts (its identity, node access). */
  readonly dependsOn: readonly IDependable[];
}

/**
 * How long a controller chart waits for its pods: a system node already runs (the charts follow the node group), so
 * what remains is the image pulls and the controllers' start, minutes at most.
 */
export const CONTROLLER_CHART_TIMEOUT = Duration.minutes(6);

/**
 * A pinned controller chart, installed with `wait` and `atomic` so that dependents see a working controller or nothing.
 * Its timeout fits twice in the kubectl handler's 15 minutes (MAX_ATOMIC_CHART_TIMEOUT_SECONDS), so a failed upgrade
 * has rolled back before the handler dies and CloudFormation's own rollback finds the release deployed.
 */
export function controllerChart(scope: Construct, id: string, props: ControllerChartProps): eks.HelmChart {
  const timeout = props.timeout ?? CONTROLLER_CHART_TIMEOUT;
  if (timeout.toSeconds() > MAX_ATOMIC_CHART_TIMEOUT_SECONDS) {
    throwIfInvalid(scope.constructor.name, scope.node.path, [{
      field: 'timeout',
      message: `is ${timeout.toSeconds()} s for chart '${props.chart.chart}'; allowed: at most ${MAX_ATOMIC_CHART_TIMEOUT_SECONDS} s (an atomic Helm `
        + `upgrade that fails waits its timeout, then rolls back waiting it again, inside the kubectl handler's ${KUBECTL_HANDLER_TIMEOUT_SECONDS} s)`,
    }]);
  }
  const chart = new eks.HelmChart(scope, id, {
    cluster: props.cluster,
    chart: props.chart.chart,
    repository: props.chart.repository,
    version: props.chart.version,
    release: props.release,
    namespace: props.namespace,
    createNamespace: props.createNamespace,
    wait: true,
    atomic: true,
    timeout,
    values: props.values,
  });
  chart.node.addDependency(...props.dependsOn);
  return chart;
}
