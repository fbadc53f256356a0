import { Annotations, Tags, Token } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { type Construct } from 'constructs';
import { selectSubnetsOf } from '../util/subnet-zones';
import { type SelectorTerm } from './manifests/types';

/**
 * The subnet tag of Karpenter's getting-started guide, `karpenter.sh/discovery=<cluster name>`. A subnet holds one
 * value per key, and CDK keeps the last one added (aws-cdk-lib 2.269.0 core/lib/tag-manager.js `_setTag`), so on a VPC
 * shared by two clusters it names one of them only. The construct still writes it (other node classes may select by
 * it) and its EC2NodeClasses still select by it (subnets tagged by hand, as earlier releases asked), but beside the key
 * of the cluster's own, CLUSTER_DISCOVERY_TAG_PREFIX.
 */
export const DISCOVERY_TAG = 'karpenter.sh/discovery';

/**
 * `karpenter.sh/discovery/<cluster name>`: one key per cluster, so that clusters sharing a VPC each find its subnets
 * (Karpenter's own example of a per-cluster key, aws/karpenter-provider-aws@v1.14.1
 * website/content/en/docs/concepts/nodeclasses.md:591-597, "Select all with a specified tag key"). At most 23 + 100
 * characters (an EKS cluster name is at most 100): within EC2's 128 for a tag key.
 */
export function clusterDiscoveryTag(clusterName: string): string {
  return `${DISCOVERY_TAG}/${clusterName}`;
}

/** The value the construct writes under the cluster's own key (any value is selected: see nodeSubnetSelectorTerms). */
export const CLUSTER_DISCOVERY_TAG_VALUE = '1';

/**
 * The EC2NodeClass `subnetSelectorTerms` of a cluster's nodes: the cluster's own key with any value, or the shared key
 * with the cluster's name. Terms are ORed, each a DescribeSubnets of its own, the results merged; a value of '*' is a
 * `tag-key` filter, which matches the key with any value (aws/karpenter-provider-aws@v1.14.1
 * pkg/providers/subnet/subnet.go:81-127 `List` and :267-295 `getFilterSets`; the CRD: "Specifying '*' for a value
 * selects all values for a given tag key", pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml:686).
 */
export function nodeSubnetSelectorTerms(clusterName: string): SelectorTerm[] {
  return [{ tags: { [clusterDiscoveryTag(clusterName)]: '*' } }, { tags: { [DISCOVERY_TAG]: clusterName } }];
}

/**
 * The subnets a cluster's nodes go to, which the construct tags: the `nodeSubnets` selection, or the VPC's private
 * subnets (with egress). In a VPC with several private tiers that default tags them all, and Karpenter takes, of the
 * selected subnets of a zone, the one with the most free IP addresses (aws/karpenter-provider-aws@v1.14.1
 * pkg/providers/subnet/subnet.go:129-162 `ZonalSubnetsForLaunch`): nodes land in whichever tier is emptiest, a data
 * tier too, unless the selection names the tier. The caller's selection is left as it was (`selectSubnetsOf`).
 */
export function nodeSubnets(
  vpc: ec2.IVpc, selection: ec2.SubnetSelection | undefined,
): { readonly subnets: readonly ec2.ISubnet[]; readonly isPendingLookup: boolean } {
  if (selection === undefined) return { subnets: vpc.privateSubnets, isPendingLookup: false };
  const { subnets, isPendingLookup } = selectSubnetsOf(vpc, selection);
  return { subnets, isPendingLookup: isPendingLookup ?? false };
}

/**
 * Tags the cluster's node subnets, or warns for each subnet the construct cannot tag (an imported one). No
 * `kubernetes.io/cluster/<name>` tag: the AWS Load Balancer Controller drops from its subnet discovery a subnet tagged
 * for other clusters but not its own (kubernetes-sigs/aws-load-balancer-controller@v3.5.0 docs/deploy/subnet_discovery.md,
 * "Cluster Tag Check"), so such a tag would change where the controllers of other clusters on the VPC put load
 * balancers; the keys written here are not read by it.
 */
export function tagNodeSubnets(scope: Construct, subnets: readonly ec2.ISubnet[], clusterName: string): void {
  const own = clusterDiscoveryTag(clusterName);
  for (const subnet of subnets) {
    if (subnet instanceof ec2.Subnet) {
      Tags.of(subnet).add(own, CLUSTER_DISCOVERY_TAG_VALUE);
      Tags.of(subnet).add(DISCOVERY_TAG, clusterName);
    } else {
      Annotations.of(scope).addWarningV2(
        'cdk-capacity-aware-inference:eks-untagged-subnet',
        `Tag the node subnet ${Token.isUnresolved(subnet.subnetId) ? '' : subnet.subnetId} with the key ${own} (any value; or `
          + `${DISCOVERY_TAG}=${clusterName}, which a subnet holds for one cluster only): Karpenter selects node subnets by either tag.`,
      );
    }
  }
}
