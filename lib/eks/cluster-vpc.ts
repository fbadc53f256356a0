import { RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as logs from 'aws-cdk-lib/aws-logs';
import { type Construct } from 'constructs';
import { newLogGroupKey } from '../util/log-encryption';
import { acknowledgeNistRules } from '../util/nag';

/**
 * The VPC of a new cluster when the user brings none (ids `Vpc`, `VpcFlowLogs`, `VpcFlowLogKey` in the cluster's
 * scope): three zones, one NAT gateway, public subnets for the NAT gateway and internet-facing ALBs, private subnets
 * for the nodes; flow logs of all traffic to a log group encrypted with its own key; the default security group
 * without rules; no public IP assigned to anything launched in a public subnet.
 */
export function newClusterVpc(scope: Construct): ec2.Vpc {
  const vpc = new ec2.Vpc(scope, 'Vpc', {
    maxAzs: 3,
    natGateways: 1,
    subnetConfiguration: [
      // Nothing the library runs needs a public IP: the NAT gateway has its Elastic IP, an internet-facing ALB its own addresses.
      { name: 'public', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24, mapPublicIpOnLaunch: false },
      { name: 'nodes', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 18 },
    ],
    // Removes the default security group's rules (a custom resource of aws-cdk-lib): nothing here uses that group.
    restrictDefaultSecurityGroup: true,
  });
  const logGroup = new logs.LogGroup(scope, 'VpcFlowLogs', {
    retention: logs.RetentionDays.THREE_MONTHS,
    removalPolicy: RemovalPolicy.DESTROY,
    encryptionKey: newLogGroupKey(scope, 'VpcFlowLogKey', `Flow logs of the VPC of ${scope.node.path}`),
  });
  vpc.addFlowLog('FlowLog', { destination: ec2.FlowLogDestination.toCloudWatchLogs(logGroup) });
  acknowledgeVpcFindings(vpc);
  return vpc;
}

/**
 * The NIST 800-53 rev 5 findings a VPC with public subnets keeps by design, and the inline policy aws-cdk-lib writes
 * for its flow-log role. For the VPC this library creates (and the examples' own).
 */
export function acknowledgeVpcFindings(vpc: ec2.Vpc): void {
  for (const subnet of vpc.publicSubnets) {
    acknowledgeNistRules(subnet, {
      VPCNoUnrestrictedRouteToIGW: 'A public subnet: its default route to the internet gateway carries the NAT gateway\'s egress for the ' +
        'private node subnets and an internet-facing ALB, if one is chosen. Nodes and pods run only in the private subnets, and nothing in ' +
        'a public subnet gets a public IP on launch.',
    });
  }
  acknowledgeNistRules(vpc, {
    IAMNoInlinePolicy: 'The flow-log delivery role aws-cdk-lib creates for this VPC: its one policy lets VPC Flow Logs create streams in, ' +
      'describe and write to this VPC\'s one flow-log group; it is attached to no other principal.',
  });
}
