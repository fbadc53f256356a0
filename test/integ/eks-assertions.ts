/**
 * What a deployed EksInferenceService must show, for the EKS integ apps (new and imported cluster):
 * - each class's NodePool is Ready (Karpenter accepted it and its EC2NodeClass: subnets, security groups, AMI, role);
 * - each class's ScaledObject has its HPA (KEDA's webhook and controller accepted it: the controller writes
 *   `status.hpaName`, `keda-hpa-<name>` without a custom name, once it created the HPA; kedacore/keda@v2.20.2
 *   controllers/keda/hpa.go:40-69, apis/keda/v1alpha1/scaledobject_webhook.go:680-685);
 * - the listener forwards to each class's target group at the initial weight the construct set.
 * The two Kubernetes reads go through the cluster's kubectl provider: an aws-eks-v2 `KubernetesObjectValue` waits until
 * `kubectl get <type> <name> -o=jsonpath='{<path>}'` prints something (aws-cdk-lib 2.269.0
 * custom-resource-handlers/dist/aws-eks-v2/kubectl-handler/get/__init__.py:41-69), and the assertion compares what it
 * printed. The first non-empty value counts: a NodePool read while its Ready condition is still "Unknown" fails the
 * assertion (not seen live; the read runs after every manifest of the service, minutes after the NodePool's).
 */
import { type CustomResource, Duration, type Stack } from 'aws-cdk-lib';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import { ActualResult, ExpectedResult, type IntegTest, Match } from '@aws-cdk/integ-tests-alpha';
import { CHAT_CONTRACT } from '../../examples/eks-stable-diffusion/chat';
import { type ServiceContract } from '../../lib/core/service/contract';
import { type EksInferenceService } from '../../lib/eks/inference-service';

/**
 * The example's chat contract at 1 request/s: the planner then keeps one replica per class (one g6e.xlarge and one
 * g5.xlarge node) instead of the example's three L40S replicas, which is all these assertions need.
 */
export const EKS_INTEG_CONTRACT: ServiceContract = { ...CHAT_CONTRACT, peakRequestsPerSecond: 1 };

/** The Ready condition's status (kubectl JSONPath filter). */
const READY_STATUS = '.status.conditions[?(@.type=="Ready")].status';

interface ObjectRef { readonly type: string; readonly name: string; readonly namespace?: string; readonly jsonPath: string }

function objectValue(stack: Stack, id: string, service: EksInferenceService, object: ObjectRef): CustomResource {
  const value = new eks.KubernetesObjectValue(stack, id, {
    cluster: service.cluster,
    objectType: object.type,
    objectName: object.name,
    objectNamespace: object.namespace,
    jsonPath: object.jsonPath,
    timeout: Duration.minutes(10),
  });
  // The object is applied by the service; read it only after every manifest of the service is in.
  value.node.addDependency(service);
  return value.node.defaultChild as CustomResource;
}

export function eksServiceAssertions(integ: IntegTest, stack: Stack, service: EksInferenceService): void {
  for (const unit of service.units) {
    const cls = unit.cls.name;
    // The assertion id becomes a CloudFormation output name, which must be alphanumeric (CloudFormation Validate F6004).
    const id = cls.replace(/[^A-Za-z0-9]/g, '');
    const nodePool = objectValue(stack, `NodePoolReady${id}`, service, {
      type: 'nodepool.karpenter.sh', name: unit.nodePoolName, jsonPath: READY_STATUS,
    });
    integ.assertions.expect(`NodePoolReady${id}`, ExpectedResult.exact('True'), ActualResult.fromCustomResource(nodePool, 'Value'));
    const name = unit.objects.scaledObject.metadata.name;
    const scaledObject = objectValue(stack, `ScaledObjectHpa${id}`, service, {
      type: 'scaledobject.keda.sh', name, namespace: service.namespace, jsonPath: '.status.hpaName',
    });
    integ.assertions.expect(`ScaledObjectHpa${id}`, ExpectedResult.exact(`keda-hpa-${name}`), ActualResult.fromCustomResource(scaledObject, 'Value'));

    // One call per class: Match.arrayWith keeps the order of its elements, the listener's order is not promised.
    // Equal calls get distinct ids (@aws-cdk/integ-tests-alpha 2.245.0-alpha.0 lib/assertions/private/deploy-assert.js:85-96).
    const weight = { TargetGroupArn: unit.targetGroup.targetGroupArn, Weight: service.initialWeights[cls] };
    integ.assertions.awsApiCall('ElasticLoadBalancingV2', 'describeListeners', { ListenerArns: [service.listener.listenerArn] })
      .expect(ExpectedResult.objectLike({
        Listeners: Match.arrayWith([Match.objectLike({
          DefaultActions: Match.arrayWith([Match.objectLike({ ForwardConfig: Match.objectLike({ TargetGroups: Match.arrayWith([weight]) }) })]),
        })]),
      }));
  }
}
