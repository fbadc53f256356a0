import { Annotations, Duration, Fn, Token } from 'aws-cdk-lib';
import type * as acm from 'aws-cdk-lib/aws-certificatemanager';
import type * as cognito from 'aws-cdk-lib/aws-cognito';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { type Construct } from 'constructs';
import { ALB_MAX_IDLE_TIMEOUT_SECONDS, albIdleTimeoutSeconds, wantedAlbIdleSeconds } from '../core/platform/alb-connection';
import { defaultDeregistrationDelaySeconds } from '../core/platform/control-loop';
import { type CapacityClass } from '../core/service/capacity-class';
import { type ClassProblem } from '../core/service/checks';
import { Checker, numberRule } from '../core/validation/checker';
import { EKS_RULES } from '../core/validation/rules';
import { durationSeconds } from '../util/duration';
import { acknowledgeRule } from '../util/nag';
import { knownZones, selectSubnetsOf, subnetZones } from '../util/subnet-zones';
import { newAccessLogBucket, secureLoadBalancer } from './load-balancer-hardening';

/** The ALB in front of the classes. */
export interface LoadBalancerOptions {
  /** @default false (internal) */
  readonly internetFacing?: boolean;
  /** Serve HTTPS on 443 with this certificate. @default - HTTP on port 80 */
  readonly certificate?: acm.ICertificate;
  /**
   * Subnets of the ALB. An ALB takes "only one subnet per Availability Zone" (ELB CreateLoadBalancer, Subnets), so the
   * first of each zone is taken from whatever this selects (when the zones are known at synth).
   * @default - the VPC's private subnets with egress (public when internet-facing), one per zone
   */
  readonly vpcSubnets?: ec2.SubnetSelection;
  /** Client CIDRs the ALB accepts. @default - the VPC CIDR when internal, anywhere when internet-facing */
  readonly allowedCidrs?: readonly string[];
  /**
   * How long a deregistering pod keeps receiving in-flight traffic. Also each pod's preStop drain. Below the contract's
   * `slo.deadlineMs` a synth warning says that a request admitted just before the pod leaves may be cut off.
   * @default - the contract's `slo.deadlineMs` in whole seconds, at least 30 s and at most 3600 s
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

/**
 * Routing by a rule on a listener shared with other services (an ALB of the user's, or another service's listener)
 * instead of an ALB of the service's own: the service adds one rule forwarding to its classes' target groups, and its
 * reconciler re-weights that rule's forward action only (ModifyRule on the rule's ARN). A request the rule matches runs
 * the rule's actions only, never the listener's default action: authentication the listener's owner put there does
 * not cover the service (use `authenticate`).
 */
export interface ListenerRuleOptions {
  /**
   * The shared listener. Its load balancer's security groups are opened to the pods' ports on the cluster security
   * group, so an imported listener must carry its security group
   * (`ApplicationListener.fromApplicationListenerAttributes({ listenerArn, securityGroup })`). Clients' access to the
   * listener is its owner's business.
   */
  readonly listener: elbv2.IApplicationListener;
  /** The rule's priority on the listener: 1..50000, unique on the listener (lower is evaluated first). */
  readonly priority: number;
  /** Host header values (e.g. `chat.example.com`, wildcards `*` and `?`), any of which matches. @default - any host */
  readonly hostHeaders?: readonly string[];
  /** Path patterns (e.g. `/chat/*`), any of which matches. @default - any path */
  readonly pathPatterns?: readonly string[];
  /**
   * How long a deregistering pod keeps receiving in-flight traffic. Also each pod's preStop drain. Below the contract's
   * `slo.deadlineMs` a synth warning says that a request admitted just before the pod leaves may be cut off.
   * @default - the contract's `slo.deadlineMs` in whole seconds, at least 30 s and at most 3600 s
   */
  readonly deregistrationDelay?: Duration;
  /**
   * Authentication in front of the rule's forward: given the forward action, returns the rule's action chain, e.g.
   * `(forward) => elbv2.ListenerAction.authenticateOidc({ ..., next: forward })` or
   * `(forward) => new AuthenticateCognitoAction({ userPool, userPoolClient, userPoolDomain, next: forward })`
   * (aws-elasticloadbalancingv2-actions). **A request this rule matches runs the rule's actions only: the listener's
   * default action, and an authenticate-oidc or authenticate-cognito action in it, does not run for it.** A listener
   * whose default action authenticates its clients therefore needs the same authentication here. The reconciler writes
   * the rule's actions back as read with its weights (an authenticate-oidc client secret kept with
   * `UseExistingClientSecret`).
   * @default - none: the rule forwards the requests it matches without authentication
   */
  readonly authenticate?: (forward: elbv2.ListenerAction) => elbv2.ListenerAction;
  /**
   * User pools of an `authenticate-cognito` action in `authenticate` (or added to the rule otherwise): Elastic Load
   * Balancing checks cognito-idp:DescribeUserPoolClient on its user pool with the ModifyRule caller's permissions, so
   * the reconciler's role gets it on these pools (as `loadBalancer.cognitoUserPools` does for a listener).
   * @default - none (a rule with an authenticate-cognito action would refuse the reconciler's writes)
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
  /** The contract's end-to-end deadline of one request (`slo.deadlineMs`): the ALB waits at least this long for an answer. */
  readonly requestDeadlineMs: number;
}

/** The ALB's idle timeout for a request deadline (`albIdleTimeoutSeconds`: 60 s, or the deadline and 5 s, at most 4000 s). */
export function albIdleTimeout(requestDeadlineMs: number): Duration {
  return Duration.seconds(albIdleTimeoutSeconds(requestDeadlineMs));
}

/** A deadline no ALB idle timeout covers: the answers near it are cut off with a 504, whatever the library sets. */
function warnIdleTimeoutCap(scope: Construct, requestDeadlineMs: number): void {
  if (wantedAlbIdleSeconds(requestDeadlineMs) <= ALB_MAX_IDLE_TIMEOUT_SECONDS) return;
  Annotations.of(scope).addWarningV2('cdk-capacity-aware-inference:alb-idle-timeout',
    `slo.deadlineMs is ${requestDeadlineMs}: with 5 s of margin, longer than an ALB waits for a byte (${ALB_MAX_IDLE_TIMEOUT_SECONDS} s at most): `
    + 'a non-streamed answer near the deadline is cut off with a 504; stream the answers, or shorten the deadline');
}

/**
 * The request deadline of every service an ALB of a service carries, by the ALB: its own service's (`albRouting`),
 * then those of the services routed by rules on its listener (`ruleRouting`). The idle timeout is a load balancer
 * attribute, so one ALB serves every rule with one value: the longest deadline's (review R230).
 */
const DEADLINES_ON = new WeakMap<elbv2.IApplicationLoadBalancer, Array<{ readonly path: string; readonly deadlineMs: number }>>();

/**
 * A service's routing: its own ALB, one listener whose default action forwards to one weighted target group per
 * class; or one rule on a shared listener forwarding to them.
 */
export interface AlbRouting {
  /** The service's own ALB; undefined when it routes by a rule on a shared listener. */
  readonly loadBalancer?: elbv2.ApplicationLoadBalancer;
  readonly listener: elbv2.IApplicationListener;
  /** The service's rule on the shared listener. */
  readonly rule?: elbv2.ApplicationListenerRule;
  /** The zones the service's own ALB is enabled in, when known at synth; undefined on a shared listener. */
  readonly zones?: readonly string[];
  /** `app/<name>/<id>`: the `LoadBalancer` dimension of the ALB's metrics. */
  readonly loadBalancerFullName: string;
  /** In class order. */
  readonly targetGroups: readonly elbv2.ApplicationTargetGroup[];
  readonly deregistrationDelay: Duration;
}

export interface RuleRoutingInput {
  readonly vpc: ec2.IVpc;
  readonly cluster: eks.ICluster;
  readonly options: ListenerRuleOptions;
  readonly classes: readonly RoutedClass[];
  /** The contract's `slo.deadlineMs`: the shared ALB must wait at least this long for an answer. */
  readonly requestDeadlineMs: number;
}

/**
 * How long the target groups let a deregistered pod finish: the option, else the default the simulator models too
 * (`defaultDeregistrationDelaySeconds`: at least the request deadline). A delay set below the deadline is valid, and
 * warned about (`warnShortDeregistrationDelay`).
 */
function deregistrationDelayOf(scope: Construct, o: { readonly deregistrationDelay?: Duration }, requestDeadlineMs: number,
  routingProp: 'loadBalancer' | 'listenerRule'): Duration {
  // The default is capped at the ALB's 3600 s, so a longer deadline gets the warning too (review R243).
  const delay = o.deregistrationDelay ?? Duration.seconds(defaultDeregistrationDelaySeconds(requestDeadlineMs / 1000));
  warnShortDeregistrationDelay(scope, delay, requestDeadlineMs, routingProp, o.deregistrationDelay === undefined);
  return delay;
}

/**
 * A deregistration delay shorter than the request deadline: a request admitted just before its pod is deregistered
 * may still be running when the delay ends, and what the ALB then does with it is not documented for an ALB
 * (`defaultDeregistrationDelaySeconds` says what is): it may be cut off. The pod itself keeps serving the deadline
 * after the delay (its grace), so only the ALB's side is in doubt. Valid (a user may know that the ALB waits, or
 * prefer faster drains), so a warning, as for the other drain settings (`eks-drain-exceeds-delete`).
 */
function warnShortDeregistrationDelay(
  scope: Construct, delay: Duration, requestDeadlineMs: number, routingProp: 'loadBalancer' | 'listenerRule', defaulted: boolean,
): void {
  if (delay.isUnresolved() || delay.toSeconds() * 1000 >= requestDeadlineMs) return;
  Annotations.of(scope).addWarningV2('cdk-capacity-aware-inference:eks-deregistration-below-deadline',
    `${routingProp}.deregistrationDelay is ${delay.toSeconds()} s${defaulted ? ' (the default, at most the ALB\'s 3600 s)' : ''}, `
    + `shorter than contract.slo.deadlineMs ${requestDeadlineMs} ms: `
    + 'a request admitted just before its pod is deregistered may still run when the delay ends, and AWS does not document what an ALB '
    + 'does with it then (the Classic Load Balancer closes such connections): it may fail. '
    + (defaulted ? 'Lower the deadline to at most 3600 s' : 'Leave it unset (the default is the deadline, at least 30 s), or set it to at least the deadline')
    + ' (docs/eks-inference-service.md, "Architecture", the preStop hook).');
}

/**
 * The first subnet of each zone of `selection`. A VPC with two private subnet groups (an app tier and a data tier) has
 * two private subnets per zone, aws-cdk-lib selects every subnet of a type, and CreateLoadBalancer takes "only one
 * subnet per Availability Zone". Done here rather than with `onePerAz`, which aws-cdk-lib 2.269.0 skips for a
 * `subnets` selection, pushes into the caller's own `subnetFilters` array, and applies to zones that are tokens (an
 * imported VPC's list-token zones all read alike: it would keep one subnet). Zones not known at synth: every subnet,
 * as selected.
 */
function oneSubnetPerZone(vpc: ec2.IVpc, selection: ec2.SubnetSelection): ec2.SubnetSelection {
  const { subnets } = selectSubnetsOf(vpc, selection);
  const zones = subnetZones(subnets);
  return { subnets: zones ? subnets.filter((_, i) => zones.indexOf(zones[i]) === i) : subnets };
}

/**
 * The service's ALB, created in the service's scope (the ids `LoadBalancer`, `AccessLogs`, `TargetGroup-<class>` and
 * `Listener` are the logical ids of deployed stacks): internal by default, access logs on, invalid headers dropped,
 * clients limited to the VPC or the given CIDRs, and ALB -> pod traffic opened to the cluster security group.
 */
export function albRouting(scope: Construct, input: AlbRoutingInput): AlbRouting {
  const o = input.options;
  const deregistrationDelay = deregistrationDelayOf(scope, o, input.requestDeadlineMs, 'loadBalancer');
  const vpcSubnets = oneSubnetPerZone(input.vpc, o.vpcSubnets ?? {
    subnetType: o.internetFacing ? ec2.SubnetType.PUBLIC : ec2.SubnetType.PRIVATE_WITH_EGRESS,
  });
  const loadBalancer = new elbv2.ApplicationLoadBalancer(scope, 'LoadBalancer', {
    vpc: input.vpc,
    internetFacing: o.internetFacing ?? false,
    vpcSubnets,
    dropInvalidHeaderFields: true,
    idleTimeout: albIdleTimeout(input.requestDeadlineMs),
  });
  DEADLINES_ON.set(loadBalancer, [{ path: scope.node.path, deadlineMs: input.requestDeadlineMs }]);
  warnIdleTimeoutCap(loadBalancer, input.requestDeadlineMs);
  loadBalancer.logAccessLogs(o.accessLogBucket ?? newAccessLogBucket(scope));
  acknowledgeRule(
    loadBalancer,
    'AwsSolutions-EC23',
    o.internetFacing
      ? 'An internet-facing inference endpoint is the user\'s explicit choice (loadBalancer.internetFacing); loadBalancer.allowedCidrs narrows it.'
      : 'Internal ALB: ingress is limited to the VPC CIDR (a token at synth, which cdk-nag cannot verify) or to loadBalancer.allowedCidrs.',
  );
  const targetGroups = classTargetGroups(scope, input.vpc, input.classes, deregistrationDelay);
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
  openPodPorts(loadBalancer, input.cluster, input.classes);
  const zones = knownZones(vpcSubnets.subnets ?? []);
  return {
    loadBalancer, listener, loadBalancerFullName: loadBalancer.loadBalancerFullName, targetGroups, deregistrationDelay, ...(zones ? { zones } : {}),
  };
}

/**
 * The service's rule on a shared listener (ids `TargetGroup-<class>` and `ListenerRule`): forwards the requests its
 * conditions match to the classes' target groups with the initial weights. The listener's load balancer is opened to
 * the pods' ports; everything else about the listener (clients, TLS, access logs) is its owner's.
 */
export function ruleRouting(scope: Construct, input: RuleRoutingInput): AlbRouting {
  const o = input.options;
  const deregistrationDelay = deregistrationDelayOf(scope, o, input.requestDeadlineMs, 'listenerRule');
  const targetGroups = classTargetGroups(scope, input.vpc, input.classes, deregistrationDelay);
  const conditions = [
    ...(o.hostHeaders?.length ? [elbv2.ListenerCondition.hostHeaders([...o.hostHeaders])] : []),
    ...(o.pathPatterns?.length ? [elbv2.ListenerCondition.pathPatterns([...o.pathPatterns])] : []),
  ];
  const forward = elbv2.ListenerAction.weightedForward(input.classes.map((c, i) => ({ targetGroup: targetGroups[i], weight: c.weight })));
  const rule = new elbv2.ApplicationListenerRule(scope, 'ListenerRule', {
    listener: o.listener,
    priority: o.priority,
    conditions,
    action: o.authenticate ? o.authenticate(forward) : forward,
  });
  openPodPorts(o.listener, input.cluster, input.classes);
  warnImportedEgress(scope, o.listener);
  coverDeadline(scope, o.listener, input.requestDeadlineMs);
  return { listener: o.listener, rule, loadBalancerFullName: loadBalancerFullNameOf(o.listener.listenerArn), targetGroups, deregistrationDelay };
}

/**
 * `app/<name>/<id>` from a listener ARN `arn:<partition>:elasticloadbalancing:<region>:<account>:listener/app/<name>/<id>/<listener id>`
 * (Service Authorization Reference, list_elasticloadbalancingv2, resource type listener/app): the 2nd to 4th
 * '/'-separated parts. A token (a listener of this app) is split by CloudFormation.
 */
export function loadBalancerFullNameOf(listenerArn: string): string {
  if (!Token.isUnresolved(listenerArn)) return listenerArn.split('/').slice(1, 4).join('/');
  const parts = Fn.split('/', listenerArn);
  return Fn.join('/', [Fn.select(1, parts), Fn.select(2, parts), Fn.select(3, parts)]);
}

/**
 * The idle timeout of the rule's load balancer covers the rule's service's deadline too: the load balancer closes a
 * connection on which no byte has passed for that long (https://docs.aws.amazon.com/elasticloadbalancing/latest/application/edit-load-balancer-attributes.html,
 * "Connection idle timeout"), so a rule whose service answers slower than the owner's would get 504s. On the ALB of a
 * service of this app it is raised to the longest deadline of the services it carries (`albIdleTimeout`: 60 to 4000 s).
 * The owner's model servers must keep idle connections longer still, which the library's engine settings do for any
 * ALB (lib/core/runtime/binding.ts `idleConnectionSettings`: vLLM above 4000 s; TGI, DJL and Triton never close one;
 * a custom image is warned to outlast it). Any other listener's load balancer is its owner's to set, and unseen here:
 * a warning says what it needs.
 */
function coverDeadline(scope: Construct, listener: elbv2.IApplicationListener, requestDeadlineMs: number): void {
  warnIdleTimeoutCap(scope, requestDeadlineMs);
  const owner = listener instanceof elbv2.ApplicationListener ? listener.loadBalancer : undefined;
  const carried = owner && DEADLINES_ON.get(owner);
  if (owner instanceof elbv2.ApplicationLoadBalancer && carried) {
    carried.push({ path: scope.node.path, deadlineMs: requestDeadlineMs });
    const longest = Math.max(...carried.map((c) => c.deadlineMs));
    // Set again on each rule: the last value set is the one the template carries (BaseLoadBalancer.setAttribute).
    owner.setAttribute('idle_timeout.timeout_seconds', albIdleTimeout(longest).toSeconds().toString());
    return;
  }
  Annotations.of(scope).addWarningV2('cdk-capacity-aware-inference:listener-idle-timeout',
    'listenerRule.listener is on a load balancer no EksInferenceService of this app created, whose idle timeout '
    + '(idle_timeout.timeout_seconds, 60 s unless its owner set it) this construct can neither read nor set: the load balancer closes a '
    + 'connection idle that long, so a non-streamed answer slower than it is cut off with a 504. Make it at least '
    + `${albIdleTimeout(requestDeadlineMs).toSeconds()} s (slo.deadlineMs ${requestDeadlineMs} ms + 5 s, at least 60 s).`);
}

/**
 * `connections.allowTo` adds the egress rule on an imported load balancer security group only when it was imported
 * with `allowAllOutbound: false` (and not `mutable: false`): aws-cdk-lib 2.269.0 aws-ec2/lib/security-group.js,
 * `fromSecurityGroupId` MutableImport.addEgressRule (`options.allowAllOutbound===!1&&super.addEgressRule(...)`,
 * default `allowAllOutbound = options.allowAllOutbound ?? true`), ImmutableImport.addEgressRule adds nothing.
 * For a listener of another app nothing here
 * knows what the real group allows: say what it must allow.
 */
function warnImportedEgress(scope: Construct, listener: elbv2.IApplicationListener): void {
  if (listener instanceof elbv2.ApplicationListener) return;
  const groups = listener.connections.securityGroups.filter((g) => g !== undefined);
  if (groups.length === 0 || !groups.every((g) => g.allowAllOutbound)) return;
  Annotations.of(scope).addWarningV2(
    'cdk-capacity-aware-inference:imported-listener-egress',
    'listenerRule.listener is imported with a security group that allows all outbound traffic (the default of '
    + 'SecurityGroup.fromSecurityGroupId), so no egress rule to the cluster security group was added: the real group must '
    + "allow egress to the cluster security group on the pods' ports, or import it with allowAllOutbound: false to have "
    + 'the rule added.',
  );
}

/**
 * The service's target groups are created in the cluster's VPC, and an ALB forwards only to target groups of its own
 * VPC. Checked where both VPCs are known: a listener of this app whose load balancer is in another VPC construct, or
 * two literal VPC ids that differ (an imported listener's VPC is unknown: not checked).
 */
export function listenerVpcProblems(rule: ListenerRuleOptions | undefined, vpc: ec2.IVpc): ClassProblem[] {
  if (!rule || !(rule.listener instanceof elbv2.ApplicationListener)) return [];
  const albVpc = rule.listener.loadBalancer.vpc;
  if (albVpc === undefined || albVpc === vpc) return [];
  const literal = (v: ec2.IVpc) => !Token.isUnresolved(v.vpcId);
  const differ = literal(albVpc) && literal(vpc) ? albVpc.vpcId !== vpc.vpcId : albVpc instanceof ec2.Vpc && vpc instanceof ec2.Vpc;
  return differ
    ? [{ field: 'listenerRule.listener', message: `is on a load balancer in VPC ${albVpc.node.path}, not the cluster's VPC ${vpc.node.path}; allowed: a listener of a load balancer in the cluster's VPC (its target groups are there)` }]
    : [];
}

/** The app opens ALB -> pod ports itself, so the load balancer controller needs no security-group permissions. */
function openPodPorts(alb: ec2.IConnectable, cluster: eks.ICluster, classes: readonly RoutedClass[]): void {
  for (const port of new Set(classes.map((c) => c.port))) {
    alb.connections.allowTo(cluster.clusterSecurityGroup, ec2.Port.tcp(port), 'ALB to model servers');
  }
}

/** One IP target group per class (the TargetGroupBinding registers the pods), health-checked on its ready path. */
function classTargetGroups(
  scope: Construct, vpc: ec2.IVpc, classes: readonly RoutedClass[], deregistrationDelay: Duration,
): elbv2.ApplicationTargetGroup[] {
  return classes.map((c) => new elbv2.ApplicationTargetGroup(scope, `TargetGroup-${c.cls.name}`, {
    vpc,
    targetType: elbv2.TargetType.IP,
    protocol: elbv2.ApplicationProtocol.HTTP,
    port: c.port,
    deregistrationDelay,
    loadBalancingAlgorithmType: elbv2.TargetGroupLoadBalancingAlgorithmType.LEAST_OUTSTANDING_REQUESTS,
    // Two misses of 5 s take a target out, like the pod's readiness probe (manifests/workload.ts says why not longer).
    healthCheck: {
      path: c.readyPath,
      healthyHttpCodes: '200',
      interval: Duration.seconds(10),
      timeout: Duration.seconds(5),
      healthyThresholdCount: 2,
      unhealthyThresholdCount: 2,
    },
  }));
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

/**
 * Limits of an ALB rule's conditions: "You can specify up to three match evaluations per condition", "up to five match
 * evaluations per rule", "a maximum of five wildcards per rule" (Application Load Balancer guide, rule-condition-types.html,
 * condition basics; the quotas page load-balancer-limits.html lists Condition Values per Rule 5, Condition Wildcards
 * per Rule 5, not adjustable). Host names and path patterns are at most 128 characters; a host name needs a '.' and
 * only letters after the last one (ELBv2 API HostHeaderConditionConfig, RuleCondition Values).
 */
const RULE_CONDITIONS = { valuesPerCondition: 3, valuesPerRule: 5, wildcardsPerRule: 5, valueLength: 128 } as const;
const HOST_VALUE = /^[A-Za-z0-9.*?-]+\.[A-Za-z*?]+$/;
const PATH_VALUE = /^[A-Za-z0-9_\-.$/~"'@:+&*?]+$/;

const RULE_RULES = {
  ...EKS_RULES,
  // ELBv2 CreateRule: "Priority: Valid Range: Minimum value of 1. Maximum value of 50000."
  'listenerRule.priority': numberRule({ integer: true, min: 1, max: 50_000, why: 'the priority range of an ALB listener rule' }),
};

/** Problems of routing by a rule on a shared listener (none without `listenerRule`). */
export function listenerRuleProblems(rule: ListenerRuleOptions | undefined, loadBalancer: LoadBalancerOptions | undefined): ClassProblem[] {
  if (!rule) return [];
  const rules = new Checker(RULE_RULES);
  if (loadBalancer !== undefined) {
    rules.add('loadBalancer', 'is set together with listenerRule; allowed: one of them (an ALB of the service\'s own, or a rule on a shared listener)');
  }
  rules.check('listenerRule.priority', rule.priority);
  rules.optional('loadBalancer.deregistrationDelay', durationSeconds(rule.deregistrationDelay), 'listenerRule.deregistrationDelay');
  const hosts = rule.hostHeaders ?? [];
  const paths = rule.pathPatterns ?? [];
  if (hosts.length + paths.length === 0) {
    rules.add('listenerRule', 'has no hostHeaders and no pathPatterns; allowed: at least one value (a rule without a condition would take every request of the shared listener)');
  }
  const values = (field: string, list: readonly string[], pattern: RegExp, what: string) => {
    if (list.length > RULE_CONDITIONS.valuesPerCondition) {
      rules.add(`listenerRule.${field}`, `has ${list.length} values; allowed: at most ${RULE_CONDITIONS.valuesPerCondition} per condition (ALB match evaluations per condition)`);
    }
    list.forEach((v, i) => {
      if (Token.isUnresolved(v)) return;
      if (v.length === 0 || v.length > RULE_CONDITIONS.valueLength || !pattern.test(v)) {
        rules.add(`listenerRule.${field}[${i}]`, `is ${JSON.stringify(v)}; allowed: ${what} of 1..${RULE_CONDITIONS.valueLength} characters`);
      }
    });
  };
  values('hostHeaders', hosts, HOST_VALUE, 'a host name (letters, digits, \'-\', \'.\', wildcards * and ?) with a \'.\' and only letters after the last \'.\'');
  values('pathPatterns', paths, PATH_VALUE, 'a path pattern of A-Z a-z 0-9 _ - . $ / ~ " \' @ : + & and wildcards * and ?');
  if (hosts.length + paths.length > RULE_CONDITIONS.valuesPerRule) {
    rules.add('listenerRule', `has ${hosts.length + paths.length} condition values; allowed: at most ${RULE_CONDITIONS.valuesPerRule} per rule (ALB match evaluations per rule)`);
  }
  const wildcards = [...hosts, ...paths].filter((v) => !Token.isUnresolved(v)).join('').replace(/[^*?]/g, '').length;
  if (wildcards > RULE_CONDITIONS.wildcardsPerRule) {
    rules.add('listenerRule', `has ${wildcards} wildcards (* and ?) in its values; allowed: at most ${RULE_CONDITIONS.wildcardsPerRule} per rule`);
  }
  // An imported listener without `securityGroup` holds an undefined one (aws-cdk-lib ImportedApplicationListener).
  if (rule.listener.connections.securityGroups.filter((g) => g !== undefined).length === 0) {
    rules.add('listenerRule.listener', 'has no security group, so the pods\' ports cannot be opened to its load balancer; allowed: a listener of this app, or one imported with `securityGroup`');
  }
  return rules.problems;
}

/** Priorities taken on each listener of an app, by the rule's service path (a listener of this app by object, an imported one by ARN). */
const TAKEN_PRIORITIES = new WeakMap<object, Map<unknown, Map<number, string>>>();

/**
 * Takes `priority` on the rule's listener for the service at `path`; returns the path of the service that already
 * holds it in this app (two rules of one priority on one listener fail at deploy), or undefined.
 */
export function takeListenerPriority(scope: Construct, rule: ListenerRuleOptions, path: string): string | undefined {
  const root = scope.node.root;
  const listeners = TAKEN_PRIORITIES.get(root) ?? new Map<unknown, Map<number, string>>();
  TAKEN_PRIORITIES.set(root, listeners);
  const key: unknown = Token.isUnresolved(rule.listener.listenerArn) ? rule.listener : rule.listener.listenerArn;
  const taken = listeners.get(key) ?? new Map<number, string>();
  listeners.set(key, taken);
  const holder = taken.get(rule.priority);
  if (holder !== undefined && holder !== path) return holder;
  taken.set(rule.priority, path);
  return undefined;
}
