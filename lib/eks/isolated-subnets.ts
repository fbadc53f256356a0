import { Annotations, Stack, Token } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { type IConstruct } from 'constructs';
import {
  describeNodeEndpoints, endpointServiceName, GATEWAY_NODE_ENDPOINTS, missingNodeEndpoints, type NodeSubnetEndpoint, parseEndpointServiceName,
} from '../core/platform/isolated-node-endpoints';
import { type ClassProblem } from '../core/service/checks';
import { ECR_IMAGE_FORM } from '../core/trust/image-reference';
import { Checker } from '../core/validation/checker';
import { quoted } from '../core/validation/names';
import { EKS_RULES } from '../core/validation/rules';

// Its values are EKS_RULES' (`isolatedSubnetEndpoints`), so the type lives beside the endpoints in lib/core.
export { type IsolatedSubnetEndpoints } from '../core/platform/isolated-node-endpoints';

/** The synth warning for endpoints only a feature needs (and for a check that could not decide). */
export const ISOLATED_SUBNET_ENDPOINTS_WARNING = 'cdk-capacity-aware-inference:eks-isolated-subnet-endpoints';

/**
 * The node subnets that are isolated subnets of a VPC defined in this app (an `ec2.Vpc`), the only ones whose endpoints
 * can be judged at synth. An imported VPC (`Vpc.fromLookup`, `fromVpcAttributes`) is not an `ec2.Vpc`: its endpoints
 * exist outside the app, and `fromVpcAttributes` does not even know which subnets are isolated.
 */
export function isolatedNodeSubnets(vpc: ec2.IVpc, nodeSubnets: readonly ec2.ISubnet[]): ec2.ISubnet[] {
  if (!(vpc instanceof ec2.Vpc)) return [];
  return nodeSubnets.filter((s) => vpc.isolatedSubnets.includes(s));
}

/** `nodeSubnets` selecting isolated subnets of a cluster whose API server has no private endpoint (known at construction). */
export function endpointAccessProblems(isolated: readonly ec2.ISubnet[], privateAccess: boolean): ClassProblem[] {
  if (privateAccess) return [];
  const rules = new Checker(EKS_RULES);
  rules.cross('clusterOptions.endpointAccess@nodeSubnets', { subnets: isolated.map((s) => s.node.path) }, 'clusterOptions.endpointAccess');
  return rules.problems;
}

/** The synth warning for a public-only API endpoint with isolated node subnets under isolatedSubnetEndpoints: 'elsewhere'. */
export const ISOLATED_SUBNET_PUBLIC_ENDPOINT_WARNING = 'cdk-capacity-aware-inference:eks-isolated-subnet-public-endpoint';

/**
 * Under isolatedSubnetEndpoints: 'elsewhere' a public-only API endpoint is not refused: subnets CDK calls isolated may
 * reach the internet outside the VPC (a Transit Gateway route to an egress VPC), so the nodes may register through it.
 */
export function warnPublicEndpoint(scope: IConstruct, isolated: readonly ec2.ISubnet[]): void {
  if (isolated.length === 0) return;
  Annotations.of(scope).addWarningV2(ISOLATED_SUBNET_PUBLIC_ENDPOINT_WARNING,
    `clusterOptions.endpointAccess is eks.EndpointAccess.PUBLIC and nodeSubnets selects isolated subnets (${quoted(isolated.map((s) => s.node.path))}`
    + '): '
    + 'their nodes register with the API server through its public endpoint, so they join only if the subnets reach the internet outside '
    + "the VPC (isolatedSubnetEndpoints: 'elsewhere'). Otherwise use eks.EndpointAccess.PRIVATE or PUBLIC_AND_PRIVATE "
    + '(https://docs.aws.amazon.com/eks/latest/userguide/private-clusters.html).');
}

/** The synth warning for the Neuron device plugin the library installs on a cluster with isolated node subnets. */
export const ISOLATED_SUBNET_NEURON_PLUGIN_WARNING = 'cdk-capacity-aware-inference:eks-isolated-subnet-neuron-device-plugin';

/**
 * The Neuron device plugin's image is on ECR Public (`public.ecr.aws`), which no VPC endpoint serves: "VPC endpoints
 * currently don't support Amazon ECR Public repositories. Consider using a pull through cache rule to host the public
 * image in a private repository" (https://docs.aws.amazon.com/AmazonECR/latest/userguide/vpc-endpoints.html; the page's
 * later wording adds the ECR Public API in us-east-1 only, not the registry the images are pulled from), and a cluster
 * without outbound internet access "must pull images from a container registry that's in your VPC"
 * (https://docs.aws.amazon.com/eks/latest/userguide/private-clusters.html). So on isolated node subnets the plugin never
 * starts and Neuron nodes never advertise aws.amazon.com/neuroncore. A warning, not an error: synth cannot see a proxy
 * or registry mirror the nodes may be given. The caller skips it under isolatedSubnetEndpoints: 'elsewhere': no endpoint
 * elsewhere serves ECR Public either, but subnets CDK calls isolated may reach the internet outside the VPC (a Transit
 * Gateway route to an egress VPC, as warnPublicEndpoint assumes), which synth cannot see.
 *
 * `mirrored` (`neuronDevicePluginImage`, a private ECR image, the fix the message names): not warned. The nodes pull it
 * through the ECR endpoints the isolated-subnet check requires (ecr.api, ecr.dkr, s3); a mirror in another region than
 * the VPC's endpoints is the user's to route, as the endpoint check counts the region's endpoints only.
 */
export function warnNeuronDevicePluginImage(
  scope: IConstruct, isolated: readonly ec2.ISubnet[], classes: readonly string[], image: string, mirrored: boolean,
): void {
  if (isolated.length === 0 || classes.length === 0 || mirrored) return;
  Annotations.of(scope).addWarningV2(ISOLATED_SUBNET_NEURON_PLUGIN_WARNING,
    `The cluster ${scope.node.path} installs the Neuron device plugin for the Neuron classes ${classes.join(', ')} with the image ${image}, `
    + `but nodeSubnets selects isolated subnets (${quoted(isolated.map((s) => s.node.path))}) and no VPC endpoint serves ECR Public `
    + '(public.ecr.aws): the plugin never starts on their Neuron nodes, which never advertise aws.amazon.com/neuroncore, so the classes\' pods '
    + 'stay Pending while the nodes are billed. Mirror the image into a private ECR repository of the region (an ECR Public pull through '
    + `cache rule) and set neuronDevicePluginImage to it, pinned by digest (${ECR_IMAGE_FORM}); `
    + "or give the node subnets egress (PRIVATE_WITH_EGRESS, or a route to an egress VPC with isolatedSubnetEndpoints: 'elsewhere') "
    + '(https://docs.aws.amazon.com/AmazonECR/latest/userguide/vpc-endpoints.html).');
}

interface VpcEndpoint {
  /** The service, or undefined when its name is not known at synth. */
  readonly service?: string;
  /**
   * The subnets it serves: every one for an interface endpoint (for S3 only with DNS for all resolvers), those whose
   * route table it is on for a gateway endpoint.
   */
  readonly serves: (subnet: ec2.ISubnet) => boolean;
}

/**
 * Every VPC endpoint of `vpc` in the app, read from its CloudFormation resource (AWS::EC2::VPCEndpoint): the L2
 * constructs keep neither the service nor the route tables (aws-cdk-lib 2.269.0 aws-ec2/lib/vpc-endpoint.js hands
 * `serviceName`, `routeTableIds`, `privateDnsEnabled` and `vpcId` to CfnVPCEndpoint only). Endpoints in any stack count.
 */
function vpcEndpoints(vpc: ec2.Vpc, region: string): VpcEndpoint[] {
  const cfns = vpc.node.root.node.findAll().filter((c): c is ec2.CfnVPCEndpoint => c instanceof ec2.CfnVPCEndpoint && c.vpcId === vpc.vpcId);
  return cfns.flatMap((cfn): VpcEndpoint[] => {
    const name = templateString(Stack.of(cfn).resolve(cfn.serviceName));
    const parsed = name === undefined ? undefined : parseEndpointServiceName(name);
    // Not an AWS service's endpoint (an endpoint service of an account), or one of another region (cross-region
    // PrivateLink), which the services' regional names do not resolve to: none of the list.
    if (name !== undefined && (!parsed || (parsed.region !== '*' && !Token.isUnresolved(region) && parsed.region !== region))) return [];
    if ((cfn.vpcEndpointType ?? 'Gateway') === 'Gateway') {
      const tables = cfn.routeTableIds;
      const known = Array.isArray(tables) && tables.every((t) => typeof t === 'string');
      return [{ service: parsed?.service, serves: (s) => !known || (tables as string[]).includes(s.routeTable.routeTableId) }];
    }
    // Without private DNS the endpoint does not answer the services' default names, which the kubelet, the VPC CNI and
    // the SDKs call (the EKS guide asks for it: private-clusters.html, "enable private DNS names").
    if (cfn.privateDnsEnabled === false) return [];
    // An interface endpoint of a service that has gateway endpoints too (S3) answers its names inside the VPC only with
    // PrivateDnsOnlyForInboundResolverEndpoint AllResolvers: OnlyInboundResolver "routes traffic that originates from
    // the VPC to the gateway endpoint"
    // (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-properties-ec2-vpcendpoint-dnsoptionsspecification.html;
    // aws-cdk-lib 2.269.0 aws-ec2/lib/vpc-endpoint.d.ts:132-146, VpcEndpointPrivateDnsOnlyForInboundResolverEndpoint).
    // The value AWS applies when the template leaves it out is not confirmed here (the S3 guide's private DNS section
    // describes inbound-only as the console's choice): fail safe, only an explicit AllResolvers counts.
    if (parsed && GATEWAY_NODE_ENDPOINTS.includes(parsed.service) && !allResolvers(Stack.of(cfn).resolve(cfn.dnsOptions))) return [];
    return [{ service: parsed?.service, serves: () => true }];
  });
}

/** Whether resolved DnsOptions of an AWS::EC2::VPCEndpoint send every resolver's queries to the interface endpoint. */
function allResolvers(dnsOptions: unknown): boolean {
  const o = dnsOptions as { privateDnsOnlyForInboundResolverEndpoint?: unknown; PrivateDnsOnlyForInboundResolverEndpoint?: unknown } | undefined;
  const value = o?.privateDnsOnlyForInboundResolverEndpoint ?? o?.PrivateDnsOnlyForInboundResolverEndpoint;
  return value === ec2.VpcEndpointPrivateDnsOnlyForInboundResolverEndpoint.ALL_RESOLVERS;
}

/** A resolved service name as a string, `*` for each part not known at synth (a region reference); undefined otherwise. */
function templateString(value: unknown): string | undefined {
  if (typeof value === 'string') return Token.isUnresolved(value) ? undefined : value;
  const join = (value as { 'Fn::Join'?: unknown } | undefined)?.['Fn::Join'];
  if (Array.isArray(join) && typeof join[0] === 'string' && Array.isArray(join[1])) {
    return (join[1] as unknown[]).map((p) => (typeof p === 'string' ? p : '*')).join(join[0]);
  }
  const sub = (value as { 'Fn::Sub'?: unknown } | undefined)?.['Fn::Sub'];
  return typeof sub === 'string' ? sub.replace(/\$\{[^}]*\}/g, '*') : undefined;
}

/**
 * At synth (an endpoint may be added to the VPC after the cluster): the node subnets of `scope` that are isolated
 * subnets of the in-app `vpc` (`isolatedNodeSubnets`), against the endpoints of that VPC. An endpoint the nodes need to join missing is an error
 * (returned, naming the subnets, the VPC and every missing endpoint); one only a feature needs is a warning
 * (ISOLATED_SUBNET_ENDPOINTS_WARNING). When an endpoint's service is not known at synth, the missing ones only warn:
 * that endpoint may be one of them.
 */
export function isolatedSubnetEndpointProblems(scope: IConstruct, vpc: ec2.IVpc, isolated: readonly ec2.ISubnet[]): ClassProblem[] {
  if (isolated.length === 0) return [];
  const region = Stack.of(scope).region;
  const endpoints = vpcEndpoints(vpc as ec2.Vpc, region);
  const undecided = endpoints.some((e) => e.service === undefined);
  const byMissing = new Map<string, { subnets: string[]; join: NodeSubnetEndpoint[]; feature: NodeSubnetEndpoint[] }>();
  for (const subnet of isolated) {
    const present = new Set(endpoints.filter((e) => e.service !== undefined && e.serves(subnet)).map((e) => e.service!));
    const join = missingNodeEndpoints(present, 'join');
    const feature = missingNodeEndpoints(present, 'feature');
    if (join.length === 0 && feature.length === 0) continue;
    const key = [...join, ...feature].map((e) => e.service).join(',');
    const entry = byMissing.get(key) ?? { subnets: [], join, feature };
    entry.subnets.push(subnet.node.path);
    byMissing.set(key, entry);
  }
  const rules = new Checker(EKS_RULES);
  const literalRegion = Token.isUnresolved(region) ? undefined : region;
  const name = (e: NodeSubnetEndpoint) => endpointServiceName(e.service, literalRegion);
  for (const { subnets, join, feature } of byMissing.values()) {
    if (join.length > 0 && !undecided) {
      rules.cross('nodeSubnets@endpoints', { subnets, vpc: vpc.node.path, missing: join.map(name) }, 'nodeSubnets');
    }
    const warn = undecided ? [...join, ...feature] : feature;
    if (warn.length === 0) continue;
    Annotations.of(scope).addWarningV2(ISOLATED_SUBNET_ENDPOINTS_WARNING,
      `The isolated node subnets ${quoted(subnets)} of the VPC ${vpc.node.path} reach AWS only through VPC endpoints, and synth finds `
      + `none in the VPC they can reach for ${quoted(warn.map(name))}. ${warn.map((e) => `${e.service}: ${e.why}.`).join(' ')}`
      + (undecided ? ' (The VPC has an endpoint whose service is not known at synth, so the nodes\' own needs, '
        + `${describeNodeEndpoints('join', literalRegion)}, are not checked.)` : '')
      + ` Add them (${warn.map((e) => e.cdk).join(', ')}), or set isolatedSubnetEndpoints: 'elsewhere' when the subnets reach them outside the VPC.`);
  }
  return rules.problems;
}
