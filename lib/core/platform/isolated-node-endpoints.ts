/**
 * The VPC endpoints a Karpenter node of this library needs in an isolated subnet (no route to a NAT gateway or an
 * internet gateway: `ec2.SubnetType.PRIVATE_ISOLATED`), where it reaches AWS only through endpoints. One list for the
 * synth check (lib/eks/isolated-subnets.ts), the rule text of docs/validation.md (EKS_RULES `nodeSubnets@endpoints`)
 * and the table of docs/eks-inference-cluster.md ("Isolated node subnets", which a test holds to this list). Pure data.
 *
 * What runs on such a node: the DaemonSets of every node (aws-node, kube-proxy, the EKS Pod Identity agent, the
 * amazon-cloudwatch-observability add-on's CloudWatch agent and Fluent Bit, the Neuron device plugin on Neuron nodes)
 * and the class's pods (the model-data init container, the model server). Not the controllers (Karpenter, KEDA, the AWS
 * Load Balancer Controller) nor the scraper: the classes' NodePools carry accelerator taints they do not tolerate
 * (lib/eks/manifests/karpenter.ts ACCELERATOR_TAINTS), and on a cluster the library creates they run on the system node
 * group, whose subnets aws-eks-v2 picks with the VPC's default selection, its private subnets with egress (aws-cdk-lib
 * 2.269.0 aws-eks-v2/lib/managed-nodegroup.js `subnets: this.cluster.vpc.selectSubnets(props.subnets)`; aws-ec2/lib/vpc.js
 * `reifySelectionDefaults`: PRIVATE_WITH_EGRESS when the VPC has any, and lib/eks/cluster.ts puts the control plane
 * there, so a VPC without them fails at synth). The node needs no `eks` endpoint either: Karpenter writes the API server
 * endpoint and CA into the node's NodeConfig (aws/karpenter-provider-aws@v1.14.1 pkg/providers/amifamily/bootstrap/nodeadm.go:70,80);
 * its controller's DescribeCluster (pkg/operator/operator.go:306) runs on the system nodes.
 *
 * Not needed from the node subnets, and so not in the list: `sts` (only pods using IAM roles for service accounts
 * call it, https://docs.aws.amazon.com/eks/latest/userguide/private-clusters.html; the library's pods use EKS Pod
 * Identity), `monitoring` (the add-on's agent publishes Container Insights and the scrape by EMF in CloudWatch Logs,
 * lib/eks/observability-addon.ts `agentStatements`), `kms` (model data is decrypted by S3 on the pod's behalf, the only
 * way its role may use the key: `kms:ViaService` s3, lib/trust/model-data-key.ts), and what only the controllers call
 * (Karpenter: ec2, ssm, sqs, eks, iam and pricing; KEDA: monitoring; the Load Balancer Controller: elasticloadbalancing
 * and ec2), which matters only where the controllers run in isolated subnets, as on an imported cluster may be
 * (docs/eks-inference-cluster.md lists them).
 */

/** How isolated node subnets reach the AWS services their nodes call (`ClusterSettings.isolatedSubnetEndpoints`). */
export type IsolatedSubnetEndpoints = 'in-vpc' | 'elsewhere';
export const ISOLATED_SUBNET_ENDPOINTS: readonly IsolatedSubnetEndpoints[] = ['in-vpc', 'elsewhere'];

/**
 * `join`: without it no node turns Ready (synth fails); `feature`: nodes join, but something the library runs on them
 * fails (synth warns: it is not certain, e.g. a service without model data needs no credentials for the fetch).
 */
export type EndpointNeed = 'join' | 'feature';

export interface NodeSubnetEndpoint {
  /** The service part of the endpoint's service name, `com.amazonaws.<region>.<service>`. */
  readonly service: string;
  readonly need: EndpointNeed;
  /** Whether a gateway endpoint serves it too (only S3 here; the others are interface endpoints). */
  readonly gateway: boolean;
  /** The aws-cdk-lib constant that names the service. */
  readonly cdk: string;
  /** What on the node calls it, and what fails without it. */
  readonly why: string;
  /** Where that is written. */
  readonly source: string;
}

const PRIVATE_CLUSTERS = 'https://docs.aws.amazon.com/eks/latest/userguide/private-clusters.html (awsdocs/amazon-eks-user-guide@4d52b4d '
  + 'latest/ug/clusters/private-clusters.adoc:69-97, the table of endpoints)';

export const ISOLATED_NODE_SUBNET_ENDPOINTS: readonly NodeSubnetEndpoint[] = [
  {
    service: 'ec2',
    need: 'join',
    gateway: false,
    cdk: 'ec2.InterfaceVpcEndpointAwsService.EC2',
    why: 'the VPC CNI (aws-node) reads and tags the node\'s network interfaces through EC2 before it starts, and the kubelet reports '
      + 'the node Ready only once the CNI has started',
    source: `${PRIVATE_CLUSTERS}; aws/amazon-vpc-cni-k8s@v1.22.4 pkg/ipamd/ipamd.go:448,482-487 (nodeInit: DescribeAllENIs, "ipamd init: `
      + 'failed to retrieve attached ENIs info") and cmd/aws-vpc-cni/main.go:14-35 (the CNI configuration is written only after ipamd started)',
  },
  {
    service: 'ecr.api',
    need: 'join',
    gateway: false,
    cdk: 'ec2.InterfaceVpcEndpointAwsService.ECR',
    why: 'the kubelet gets its registry token from the ECR API for every image pull, aws-node\'s own (EKS add-on images are in EKS\'s '
      + 'private ECR repositories) among them',
    source: `${PRIVATE_CLUSTERS}; https://docs.aws.amazon.com/eks/latest/userguide/add-ons-images.html (add-ons-images.adoc:11)`,
  },
  {
    service: 'ecr.dkr',
    need: 'join',
    gateway: false,
    cdk: 'ec2.InterfaceVpcEndpointAwsService.ECR_DOCKER',
    why: 'image manifests are pulled from the ECR registry',
    source: PRIVATE_CLUSTERS,
  },
  {
    service: 's3',
    need: 'join',
    gateway: true,
    cdk: 'ec2.GatewayVpcEndpointAwsService.S3',
    why: 'ECR serves image layers from S3 (GetDownloadUrlForLayer answers a pre-signed S3 URL), and the model-data init container reads '
      + 'the model data from S3',
    source: `${PRIVATE_CLUSTERS}; https://docs.aws.amazon.com/AmazonECR/latest/APIReference/API_GetDownloadUrlForLayer.html`,
  },
  {
    service: 'eks-auth',
    need: 'feature',
    gateway: false,
    cdk: 'ec2.InterfaceVpcEndpointAwsService.EKS_AUTH',
    why: 'the EKS Pod Identity agent gets every pod identity credential from it: without it the model-data init container has no '
      + 'credentials (a class with model data never starts) and the CloudWatch agent and Fluent Bit publish nothing',
    source: 'https://docs.aws.amazon.com/eks/latest/userguide/pod-id-agent-setup.html ("For private clusters, the eks-auth endpoint in AWS '
      + 'PrivateLink is required", service-accounts.adoc:377)',
  },
  {
    service: 'logs',
    need: 'feature',
    gateway: false,
    cdk: 'ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_LOGS',
    why: 'the CloudWatch agent and Fluent Bit on the node write Container Insights (by EMF) and the container logs: the signals of the '
      + 'model-server pods there stop',
    source: `${PRIVATE_CLUSTERS}; lib/eks/observability-addon.ts agentStatements`,
  },
];

/**
 * The regions whose interface endpoint service names of this list's services have another prefix than `com.amazonaws`,
 * from aws-cdk-lib 2.269.0 aws-ec2/lib/vpc-endpoint.js InterfaceVpcEndpointAwsService.getDefaultEndpointPrefix (its
 * table cut to this list's services). S3 is left out: its gateway endpoint, the one the messages ask for first, keeps
 * `com.amazonaws` there (GatewayVpcEndpointAwsService: `${prefix||"com.amazonaws"}`). The ISO regions' prefixes
 * (gov.ic.c2s, ...) are not here: parseEndpointServiceName does not read them either.
 */
const CHINA = { prefix: 'cn.com.amazonaws', services: ['ec2', 'ecr.api', 'ecr.dkr'] };
const REGION_PREFIXES: Readonly<Record<string, { readonly prefix: string; readonly services: readonly string[] }>> = {
  'cn-north-1': CHINA,
  'cn-northwest-1': CHINA,
  'eusc-de-east-1': { prefix: 'eu.amazonaws', services: ['ecr.api', 'ecr.dkr'] },
};

/** `com.amazonaws.<region>.<service>`, the service name of an AWS endpoint (`cn.com.amazonaws.` for ec2 and ECR in China). */
export function endpointServiceName(service: string, region = '<region>'): string {
  const other = REGION_PREFIXES[region];
  return `${other?.services.includes(service) ? other.prefix : 'com.amazonaws'}.${region}.${service}`;
}

/**
 * The region and service of an endpoint's service name (`com.amazonaws.us-east-1.ecr.api`, `cn.com.amazonaws.cn-north-1.s3`),
 * the region `*` when it is not known at synth (a region token); undefined for any other name (an endpoint service of
 * an account, `com.amazonaws.vpce.<region>.vpce-svc-...`).
 */
export function parseEndpointServiceName(name: string): { readonly region: string; readonly service: string } | undefined {
  // Region codes of two to four letters first: `eusc-de-east-1` (aws-cdk-lib 2.269.0 region-info/lib/aws-entities.js).
  const m = /^(?:[a-z]+\.)*amazonaws\.(\*|[a-z]{2,4}(?:-[a-z]+)+-\d+)\.(.+)$/.exec(name);
  return m ? { region: m[1], service: m[2] } : undefined;
}

/** The endpoints of `need` not in `present` (services), in the list's order. */
export function missingNodeEndpoints(present: ReadonlySet<string>, need: EndpointNeed): NodeSubnetEndpoint[] {
  return ISOLATED_NODE_SUBNET_ENDPOINTS.filter((e) => e.need === need && !present.has(e.service));
}

/**
 * The endpoints of `need` in words: `com.amazonaws.<region>.ec2, ... and com.amazonaws.<region>.s3`; without a region,
 * with the China partition's prefix of those that have it.
 */
export function describeNodeEndpoints(need: EndpointNeed, region?: string): string {
  const services = ISOLATED_NODE_SUBNET_ENDPOINTS.filter((e) => e.need === need).map((e) => e.service);
  const names = services.map((service) => endpointServiceName(service, region));
  const text = names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
  const china = services.filter((service) => CHINA.services.includes(service));
  if (region !== undefined || china.length === 0) return text;
  return `${text} (${CHINA.prefix}.<region>.${china.length === 1 ? china[0] : `{${china.join(',')}}`} in China)`;
}

/** The services of the list a gateway endpoint serves too (S3). */
export const GATEWAY_NODE_ENDPOINTS: readonly string[] = ISOLATED_NODE_SUBNET_ENDPOINTS.filter((e) => e.gateway).map((e) => e.service);
