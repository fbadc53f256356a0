import { join } from 'node:path';
import { type Stack, Validations } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { manifestErrors, nagFindings, SCHEMA_DIR, testStack } from '../util';

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'm', namespace: 'serving' },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'm' } },
    template: { metadata: { labels: { app: 'm' } }, spec: { containers: [{ name: 'm', image: 'r@sha256:' + 'a'.repeat(64) }] } },
  },
};

const nodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'l40s' },
  spec: {
    template: {
      spec: {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'l40s' },
        requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['g6e.xlarge'] }],
      },
    },
  },
};

describe('manifest validator (real schemas vendored in test/schemas)', () => {
  test('reads the vendored copies unless CAI_SCHEMAS_DIR overrides them explicitly', () => {
    expect(SCHEMA_DIR).toBe(process.env.CAI_SCHEMAS_DIR || join(__dirname, '..', 'schemas'));
  });

  test('accepts a valid core object and a valid custom resource', () => {
    expect(manifestErrors(deployment)).toEqual([]);
    expect(manifestErrors(nodePool)).toEqual([]);
  });

  test('rejects a misspelled field of a core kind, as the API server would', () => {
    const typo = { ...deployment, spec: { ...deployment.spec, replica: 1 } };
    expect(manifestErrors(typo).join()).toContain('must NOT have additional properties');
  });

  test('rejects a misspelled field of a CRD, which the raw CRD schema would let through', () => {
    const typo = { ...nodePool, spec: { ...nodePool.spec, disruptionn: {} } };
    expect(manifestErrors(typo).join()).toContain('must NOT have additional properties');
  });

  test('rejects a wrong type and a missing required field', () => {
    expect(manifestErrors({ ...deployment, spec: { ...deployment.spec, replicas: 'one' } }).join()).toContain('/spec/replicas');
    expect(manifestErrors({ ...nodePool, spec: { template: { spec: {} } } }).join()).toContain("must have required property 'nodeClassRef'");
  });

  test('fails loudly for a kind it has no schema for', () => {
    expect(() => manifestErrors({ apiVersion: 'example.com/v1', kind: 'Widget' })).toThrow('no schema for example.com/v1 Widget');
  });
});

describe('cdk-nag helper', () => {
  function bucketStack(): Stack {
    const { stack } = testStack();
    new s3.Bucket(stack, 'Bucket'); // no access logs, no TLS-only policy: AwsSolutions-S1 and S10
    return stack;
  }

  test('reports unacknowledged findings', () => {
    const findings = nagFindings(bucketStack());
    expect(findings.some((f) => f.startsWith('AwsSolutions-S1 '))).toBe(true);
    expect(findings.some((f) => f.startsWith('AwsSolutions-S10 '))).toBe(true);
  });

  test('an acknowledgement really suppresses the finding, and only that one', () => {
    const stack = bucketStack();
    Validations.of(stack.node.findChild('Bucket')).acknowledge({ id: 'AwsSolutions-S1', reason: 'test: access logs are not wanted here' });
    const findings = nagFindings(stack);
    expect(findings.some((f) => f.startsWith('AwsSolutions-S1 '))).toBe(false);
    expect(findings.some((f) => f.startsWith('AwsSolutions-S10 '))).toBe(true);
  });
});
