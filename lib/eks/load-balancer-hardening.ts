import { Duration, Token } from 'aws-cdk-lib';
import type * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { type Construct } from 'constructs';
import { acknowledgeNistRules, acknowledgeRule } from '../util/nag';

/**
 * What the library does for an ALB it creates beyond routing, and why each cdk-nag NIST 800-53 rev 5 finding it
 * leaves is acknowledged: only what the library's own defaults justify. A choice that weakens them (internet-facing
 * without a web ACL, plain HTTP facing the internet) stays a finding for the user to fix or acknowledge.
 */
export interface LoadBalancerSecurity {
  readonly internetFacing: boolean;
  /** The listener serves HTTPS with a certificate. */
  readonly https: boolean;
  /** Client CIDRs the user gave (undefined: the VPC CIDR when internal). */
  readonly allowedCidrs?: readonly string[];
  /** A WAFv2 web ACL (REGIONAL) to associate with the ALB. */
  readonly webAclArn?: string;
  readonly deletionProtection?: boolean;
}

/** ALB access logs are kept this long (and a replaced object version as long again). */
export const ACCESS_LOG_RETENTION = Duration.days(90);

/**
 * Web ACL, deletion protection and the acknowledgements of one ALB and its listener. The association is created in
 * `scope` with id `WebAcl` (a child of the service, as the ALB).
 */
export function secureLoadBalancer(
  scope: Construct,
  loadBalancer: elbv2.ApplicationLoadBalancer,
  listener: elbv2.ApplicationListener,
  o: LoadBalancerSecurity,
): void {
  if (o.webAclArn !== undefined) {
    new wafv2.CfnWebACLAssociation(scope, 'WebAcl', { resourceArn: loadBalancer.loadBalancerArn, webAclArn: o.webAclArn });
  }
  if (o.deletionProtection) {
    loadBalancer.setAttribute('deletion_protection.enabled', 'true');
  } else {
    acknowledgeNistRules(loadBalancer, {
      ELBDeletionProtectionEnabled: 'The ALB holds no data and belongs to this stack: CloudFormation recreates it from the template, and its ' +
        'access logs stay in their bucket (retained on stack deletion). Deletion protection would also block every replacement and stack ' +
        'deletion; set loadBalancer.deletionProtection to guard it against deletion outside CloudFormation.',
    });
  }
  if (o.webAclArn === undefined && !o.internetFacing) {
    acknowledgeNistRules(loadBalancer, {
      ALBWAFEnabled: 'Internal ALB, not reachable from the internet: its security group admits only the VPC CIDR or loadBalancer.allowedCidrs, ' +
        'so only callers inside the network reach it. Set loadBalancer.webAclArn to associate a WAFv2 web ACL.',
    });
  }
  if (!o.https && !o.internetFacing) {
    const reason = 'Internal ALB serving HTTP: clients reach it only from the VPC CIDR or loadBalancer.allowedCidrs (its security group), ' +
      'so requests cross only the private network. Set loadBalancer.certificate to serve HTTPS on 443 with an ACM certificate.';
    acknowledgeNistRules(listener, { ALBHttpToHttpsRedirection: reason, ELBv2ACMCertificateRequired: reason });
  }
  // cdk-nag cannot resolve a CIDR that is a token (the VPC CIDR of an internal ALB by default: a GetAtt) and reports
  // the rules it could not evaluate.
  const unresolvedCidrs = o.allowedCidrs === undefined ? !o.internetFacing : o.allowedCidrs.some((c) => Token.isUnresolved(c));
  if (unresolvedCidrs) {
    const reason = 'The ingress rules admit client CIDRs resolved at deploy time (by default the VPC CIDR, a GetAtt of the VPC\'s CidrBlock), ' +
      'which cdk-nag cannot evaluate, on the listener port only (80 or 443); no SSH or other common port is open.';
    acknowledgeNistRules(loadBalancer, { EC2RestrictedSSH: reason, EC2RestrictedCommonPorts: reason });
  }
}

/**
 * The bucket of a service's ALB access logs when the user brings none: SSE-S3 (the only server-side encryption ALB log
 * delivery supports, https://docs.aws.amazon.com/elasticloadbalancing/latest/application/enable-access-logging.html),
 * TLS only, no public access, versioned (a log object cannot be silently overwritten or deleted), objects expire
 * after ACCESS_LOG_RETENTION. Retained when the stack is deleted (the bucket's default removal policy).
 */
export function newAccessLogBucket(scope: Construct): s3.Bucket {
  const bucket = new s3.Bucket(scope, 'AccessLogs', {
    encryption: s3.BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    versioned: true,
    lifecycleRules: [{ expiration: ACCESS_LOG_RETENTION, noncurrentVersionExpiration: ACCESS_LOG_RETENTION }],
  });
  const selfLogging = 'This bucket receives ALB access logs; logging access to the log bucket itself would need another bucket without end.';
  acknowledgeRule(bucket, 'AwsSolutions-S1', selfLogging);
  acknowledgeNistRules(bucket, {
    S3BucketLoggingEnabled: selfLogging,
    S3DefaultEncryptionKMS: 'ALB access log delivery supports only SSE-S3 ("The only server-side encryption option that\'s supported is ' +
      'Amazon S3-managed keys (SSE-S3)", Elastic Load Balancing user guide, enable-access-logging); bring a bucket of your own with ' +
      'loadBalancer.accessLogBucket for other controls.',
    S3BucketReplicationEnabled: `Operational records kept ${ACCESS_LOG_RETENTION.toDays()} days, versioned and retained on stack deletion; ` +
      'a replica would need a second bucket and a replication role per ALB. Bring a replicated bucket with loadBalancer.accessLogBucket.',
  });
  return bucket;
}
