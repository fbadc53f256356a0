import * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';

export interface PodIdentityRoleProps {
  readonly cluster: eks.ICluster;
  readonly namespace: string;
  readonly serviceAccountName: string;
  readonly description: string;
}

/**
 * An IAM role that one Kubernetes service account assumes through EKS Pod Identity (the association is created here;
 * the service account itself belongs to the Helm chart or manifest that runs the pods). The trust policy admits only
 * the Pod Identity service, with session tags, from this account.
 */
export class PodIdentityRole extends Construct {
  public readonly role: iam.Role;
  public readonly association: eks.CfnPodIdentityAssociation;

  constructor(scope: Construct, id: string, props: PodIdentityRoleProps) {
    super(scope, id);
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.SessionTagsPrincipal(new iam.ServicePrincipal('pods.eks.amazonaws.com')),
      description: props.description,
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
