import { type TargetGroupBinding } from './types';

/**
 * Binds a Service's pods (by IP) to a target group the CDK app owns. The app opens the ALB-to-pod port itself, so
 * the binding carries no `networking` block and the controller needs no security-group permissions.
 */
export function targetGroupBinding(
  name: string,
  ns: string,
  labels: Readonly<Record<string, string>>,
  input: { readonly targetGroupArn: string; readonly serviceName: string; readonly servicePort: number; readonly vpcId?: string },
): TargetGroupBinding {
  return {
    apiVersion: 'elbv2.k8s.aws/v1beta1',
    kind: 'TargetGroupBinding',
    metadata: { name, namespace: ns, labels },
    spec: {
      targetGroupARN: input.targetGroupArn,
      targetType: 'ip',
      serviceRef: { name: input.serviceName, port: input.servicePort },
      ...(input.vpcId ? { vpcID: input.vpcId } : {}),
    },
  };
}
