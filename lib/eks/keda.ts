import type * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { KEDA_OPERATOR_SERVICE_ACCOUNT } from '../core/platform/service-accounts';
import { controllerChart, PodIdentityRole } from './pod-identity';
import { type ChartSpec, KEDA_CHART } from './versions';

export const KEDA_NAMESPACE = 'keda';

export interface KedaProps {
  readonly cluster: eks.ICluster;
  /** @default KEDA_CHART */
  readonly chart?: ChartSpec;
}

/** KEDA (pinned chart) whose operator can call exactly one AWS API: `cloudwatch:GetMetricData`. */
export class Keda extends Construct {
  public readonly operatorRole: iam.Role;
  /** Installs the ScaledObject and TriggerAuthentication CRDs. */
  public readonly chart: eks.HelmChart;

  constructor(scope: Construct, id: string, props: KedaProps) {
    super(scope, id);
    const identity = new PodIdentityRole(this, 'Operator', {
      cluster: props.cluster,
      namespace: KEDA_NAMESPACE,
      serviceAccountName: KEDA_OPERATOR_SERVICE_ACCOUNT,
      description: 'KEDA operator: reads CloudWatch metrics for ScaledObjects',
      statements: [new iam.PolicyStatement({ sid: 'ReadScalingMetrics', actions: ['cloudwatch:GetMetricData'], resources: ['*'] })],
      wildcardReason: 'cloudwatch:GetMetricData has no resource type for metrics (only the optional dataset type, which names no metric); ' +
        'it is the only action the KEDA operator may call.',
    });
    this.operatorRole = identity.role;
    this.chart = controllerChart(this, 'Chart', {
      cluster: props.cluster,
      chart: props.chart ?? KEDA_CHART,
      release: 'keda',
      namespace: KEDA_NAMESPACE,
      createNamespace: true,
      values: { podIdentity: { aws: { irsa: { enabled: false } } } },
      dependsOn: [identity],
    });
  }
}
