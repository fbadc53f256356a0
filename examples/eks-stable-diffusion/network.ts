/**
 * The example's VPC (ids `Vpc`, `FlowLogs` and `FlowLogKey` in the stack, so a deployed example keeps its VPC): the
 * zones are given explicitly so that the synth needs no AWS call. Public subnets carry the NAT gateway (and an
 * internet-facing ALB, if you choose one) and assign no public IP on launch; nodes run in the private subnets; flow
 * logs of all traffic go to a log group encrypted with its own key; the default security group has no rules. Its cdk-nag
 * NIST 800-53 rev 5 acknowledgements are the ones of the VPC EksInferenceCluster creates when given none.
 */
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as logs from 'aws-cdk-lib/aws-logs';
import { type Construct } from 'constructs';
import { acknowledgeVpcFindings } from '../../lib/eks/cluster-vpc';
import { newLogGroupKey } from '../../lib/util/log-encryption';

export function exampleVpc(scope: Construct, zones: readonly string[]): ec2.Vpc {
  const flowLogs = new logs.LogGroup(scope, 'FlowLogs', {
    retention: logs.RetentionDays.THREE_MONTHS,
    encryptionKey: newLogGroupKey(scope, 'FlowLogKey', 'Flow logs of the example VPC'),
  });
  const vpc = new ec2.Vpc(scope, 'Vpc', {
    availabilityZones: [...zones],
    natGateways: 1,
    subnetConfiguration: [
      { name: 'public', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24, mapPublicIpOnLaunch: false },
      { name: 'nodes', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 18 },
    ],
    restrictDefaultSecurityGroup: true,
    flowLogs: { all: { destination: ec2.FlowLogDestination.toCloudWatchLogs(flowLogs) } },
  });
  acknowledgeVpcFindings(vpc);
  return vpc;
}
