import { Annotations, Duration } from 'aws-cdk-lib';
import type * as acm from 'aws-cdk-lib/aws-certificatemanager';
import type * as cognito from 'aws-cdk-lib/aws-cognito';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { type Construct } from 'constructs';
import { type CapacityClass } from '../core/service/capacity-class';
import { acknowledgeRule } from '../util/nag';
import { newAccessLogBucket, secureLoadBalancer } from './load-balancer-hardening';

/** The ALB in front of the classes. */
export interface LoadBalancerOptions {
  /** @default false (internal) */
  readonly internetFacing?: boolean;
  /** Serve HTTPS on 443 with this certificate. @default - HTTP on port 80 */
  readonly certificate?: acm.ICertificate;
  /** Client CIDRs the ALB accepts. @default - the VPC CIDR when internal, anywhere when internet-facing */
  readonly allowedCidrs?: readonly string[];
  /**
   * How long a deregistering pod keeps receiving in-flight traffic. Also each pod's preStop drain.
   * @default Duration.seconds(30)
   */
  readonly deregistrationDelay?: Duration;
  /**
   * Bucket for ALB access logs (SSE-S3 only: ALB log delivery supports no other server-side encryption).
   * @default - a new bucket: SSE-S3, TLS only, versioned, objects expire after 90 days, retained on stack deletion
   */
  readonly accessLogBucket?: s3.IBucket;
  /**
   * ARN of a WAFv2 web ACL (scope REGIONAL) to associate with the ALB.
   * @default - none (an internal ALB's cdk-nag NIST finding is acknowledged; an internet-facing one's is left to you)
   */
  readonly webAclArn?: string;
  /** Refuse deletion of the ALB outside CloudFormation (and block stack deletion until it is turned off). @default false */
  readonly deletionProtection?: boolean;
  /**
   * User pools of `authenticate-cognito` actions you put on the listener. The reconciler writes every listener action
   * back with its weights, and Elastic Load Balancing checks cognito-idp:DescribeUserPoolClient on an
   * authenticate-cognito action's user pool with the writer's permissions: the reconciler's role gets it on these pools.
   * @default - none (a listener with an authenticate-cognito action would refuse the reconciler's writes)
   */
  readonly cognitoUserPools?: readonly cognito.IUserPool[];
}

/** One class as the ALB sees it: where its pods listen and which path says they are ready. */
export interface RoutedClass {
  readonly cls: CapacityClass;
  readonly port: number;
  readonly readyPath: string;
  /** Initial listener weight. */
  readonly weight: number;
}

export interface AlbRoutingInput {
  readonly vpc: ec2.IVpc;
  readonly cluster: eks.ICluster;
  readonly options: LoadBalancerOptions;
  readonly classes: readonly RoutedClass[];
}

/** A service's own ALB: one listener whose default action forwards to one weighted target group per class. */
export interface AlbRouting {
  readonly loadBalancer: elbv2.ApplicationLoadBalancer;
  readonly listener: elbv2.ApplicationListener;
  /** In class order. */
  readonly targetGroups: readonly elbv2.ApplicationTargetGroup[];
  readonly deregistrationDelay: Duration;
}

/**
 * The service's ALB, created in the service's scope (the ids `LoadBalancer`, `AccessLogs`, `TargetGroup-<class>` and
 * `Listener` are the logical ids of deployed stacks): internal by default, access logs on, invalid headers dropped,
 * clients limited to the VPC or the given CIDRs, and ALB -> pod traffic opened to the cluster security group.
 */
export function albRouting(scope: Construct, input: AlbRoutingInput): AlbRouting {
  const o = input.options;
  const deregistrationDelay = o.deregistrationDelay ?? Duration.seconds(30);
  const loadBalancer = new elbv2.ApplicationLoadBalancer(scope, 'LoadBalancer', {
    vpc: input.vpc,
    internetFacing: o.internetFacing ?? false,
    vpcSubnets: { subnetType: o.internetFacing ? ec2.SubnetType.PUBLIC : ec2.SubnetType.PRIVATE_WITH_EGRESS },
    dropInvalidHeaderFields: true,
  });
  loadBalancer.logAccessLogs(o.accessLogBucket ?? newAccessLogBucket(scope));
  acknowledgeRule(
    loadBalancer,
    'AwsSolutions-EC23',
    o.internetFacing
      ? 'An internet-facing inference endpoint is the user\'s explicit choice (loadBalancer.internetFacing); loadBalancer.allowedCidrs narrows it.'
      : 'Internal ALB: ingress is limited to the VPC CIDR (a token at synth, which cdk-nag cannot verify) or to loadBalancer.allowedCidrs.',
  );
  const targetGroups = input.classes.map((c) => new elbv2.ApplicationTargetGroup(scope, `TargetGroup-${c.cls.name}`, {
    vpc: input.vpc,
    targetType: elbv2.TargetType.IP,
    protocol: elbv2.ApplicationProtocol.HTTP,
    port: c.port,
    deregistrationDelay,
    loadBalancingAlgorithmType: elbv2.TargetGroupLoadBalancingAlgorithmType.LEAST_OUTSTANDING_REQUESTS,
    healthCheck: {
      path: c.readyPath,
      healthyHttpCodes: '200',
      interval: Duration.seconds(10),
      timeout: Duration.seconds(5),
      healthyThresholdCount: 2,
      unhealthyThresholdCount: 2,
    },
  }));
  const listener = loadBalancer.addListener('Listener', {
    ...(o.certificate
      ? { protocol: elbv2.ApplicationProtocol.HTTPS, port: 443, certificates: [o.certificate], sslPolicy: elbv2.SslPolicy.RECOMMENDED_TLS }
      : { protocol: elbv2.ApplicationProtocol.HTTP, port: 80 }),
    open: false,
    defaultAction: elbv2.ListenerAction.weightedForward(input.classes.map((c, i) => ({ targetGroup: targetGroups[i], weight: c.weight }))),
  });
  openClientAccess(scope, loadBalancer, input.vpc, o);
  secureLoadBalancer(scope, loadBalancer, listener, {
    internetFacing: o.internetFacing ?? false, https: o.certificate !== undefined, allowedCidrs: o.allowedCidrs,
    webAclArn: o.webAclArn, deletionProtection: o.deletionProtection,
  });
  // The app opens ALB -> pod ports itself, so the load balancer controller needs no security-group permissions.
  for (const port of new Set(input.classes.map((c) => c.port))) {
    loadBalancer.connections.allowTo(input.cluster.clusterSecurityGroup, ec2.Port.tcp(port), 'ALB to model servers');
  }
  return { loadBalancer, listener, targetGroups, deregistrationDelay };
}

function openClientAccess(scope: Construct, loadBalancer: elbv2.ApplicationLoadBalancer, vpc: ec2.IVpc, o: LoadBalancerOptions): void {
  const clientCidrs = o.allowedCidrs ?? (o.internetFacing ? ['0.0.0.0/0'] : [vpc.vpcCidrBlock]);
  for (const cidr of clientCidrs) {
    loadBalancer.connections.allowFrom(ec2.Peer.ipv4(cidr), ec2.Port.tcp(o.certificate ? 443 : 80), 'Clients of the inference service');
  }
  if (o.internetFacing && !o.certificate) {
    Annotations.of(scope).addWarningV2(
      'cdk-capacity-aware-inference:eks-plain-http',
      'The internet-facing ALB serves plain HTTP; set loadBalancer.certificate to serve HTTPS.',
    );
  }
}
