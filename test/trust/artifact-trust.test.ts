import { App, CfnResource, Duration, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as eks from 'aws-cdk-lib/aws-eks-v2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { type CapacityClass, type CapacityClassSpec } from '../../lib/core/service/capacity-class';
import { defineCapacityClasses } from '../../lib/core/service/checks';
import { ApprovedImagesAdmission } from '../../lib/trust/admission-policy';
import { ArtifactTrust } from '../../lib/trust/artifact-trust';
import { LLAMA_CONTRACT, imageRef, llamaClasses, nagFindings, nistFindings, testStack, UNIT_TEST_APP_PROPS } from '../util';

/** The fixture classes with every model version pinned (the gate requires it by default). */
function pinnedClasses(edit: (spec: CapacityClassSpec) => CapacityClassSpec = (s) => s): CapacityClass[] {
  const specs = llamaClasses().map((c) => ({
    ...c,
    artifact: { ...c.artifact, modelData: c.artifact.modelData && { versionId: `${c.name}-v1`, ...c.artifact.modelData } },
  }));
  return defineCapacityClasses(specs.map(edit), { contract: LLAMA_CONTRACT });
}

function gatedStack(id = 'Test') {
  const { app, stack } = testStack(id);
  const ci = new iam.Role(stack, 'CiRole', { assumedBy: new iam.AccountRootPrincipal() });
  const trust = new ArtifactTrust(stack, 'Trust', { repositoryNames: ['vllm', 'neuron'], publishers: [ci] });
  const classes = pinnedClasses();
  // A stand-in for a serving construct's Model: it must wait for the gate.
  const models = classes.map((cls) => {
    const model = new CfnResource(stack, `Model-${cls.name}`, { type: 'AWS::SageMaker::Model', properties: {} });
    model.node.addDependency(trust.gateFor(stack, cls));
    return model;
  });
  return { app, stack, trust, classes, models, ci };
}

describe('ArtifactTrust', () => {
  const { stack, trust, classes, ci } = gatedStack();
  const template = Template.fromStack(stack);
  const verifications = template.findResources('Custom::ClassArtifactVerification');

  test('repositories have immutable tags, scan on push and customer-managed KMS encryption', () => {
    template.resourceCountIs('AWS::ECR::Repository', 2);
    for (const name of ['vllm', 'neuron']) {
      template.hasResourceProperties('AWS::ECR::Repository', {
        RepositoryName: name,
        ImageTagMutability: 'IMMUTABLE',
        ImageScanningConfiguration: { ScanOnPush: true },
        EncryptionConfiguration: { EncryptionType: 'KMS', KmsKey: { 'Fn::GetAtt': [Match.stringLikeRegexp('TrustRepositoryKey'), 'Arn'] } },
      });
    }
    template.hasResourceProperties('AWS::KMS::Key', { Description: Match.stringLikeRegexp('ECR repositories'), EnableKeyRotation: true });
  });

  test('repositories and keys outlive the stack, but not a rollback of the deployment that created them', () => {
    // A first deployment fails its checks on empty repositories; retained, named repositories would block the next.
    const kept = [...Object.values(template.findResources('AWS::ECR::Repository')), ...Object.values(template.findResources('AWS::KMS::Key'))
      .filter((k) => !/log/i.test(JSON.stringify(k.Properties.Description ?? '')))];
    expect(kept.length).toBeGreaterThanOrEqual(4);
    for (const r of kept) expect([r.DeletionPolicy, r.UpdateReplacePolicy]).toEqual(['RetainExceptOnCreate', 'Retain']);
  });

  test('a Notation signing profile signs the class repositories on push', () => {
    template.hasResourceProperties('AWS::Signer::SigningProfile', { PlatformId: 'Notation-OCI-SHA384-ECDSA' });
    template.hasResourceProperties('AWS::ECR::SigningConfiguration', {
      Rules: [
        {
          SigningProfileArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('TrustSigningProfile'), 'Arn'] },
          RepositoryFilters: [
            { Filter: 'vllm', FilterType: 'WILDCARD_MATCH' },
            { Filter: 'neuron', FilterType: 'WILDCARD_MATCH' },
          ],
        },
      ],
    });
  });

  test('model digests are signed with an asymmetric P-256 key', () => {
    template.hasResourceProperties('AWS::KMS::Key', { KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' });
  });

  test('one verification per class binds image digest, signer, model digest and object version', () => {
    expect(Object.keys(verifications)).toHaveLength(3);
    template.hasResourceProperties('Custom::ClassArtifactVerification', {
      ServiceToken: { 'Fn::GetAtt': [Match.stringLikeRegexp('TrustVerifier'), 'Arn'] },
      Record: {
        className: 'l40s',
        image: imageRef('vllm', 'a'),
        signingProfileArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('TrustSigningProfile'), 'Arn'] },
        modelData: { bucket: 'models-bucket', key: 'llama3-8b/bf16.tar', versionId: 'v1', sha256: 'a'.repeat(64) },
      },
      ModelSigningKeyArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('TrustModelSigningKey'), 'Arn'] },
      MultipartDigest: 'metadata',
      MaxAttempts: '5',
      BaseDelayMs: '500',
      MaxDelayMs: '8000',
      Nonce: Match.absent(),
      RequireCurrentVersion: Match.absent(),
    });
    expect([...trust.records.keys()]).toEqual(['l40s', 'a10g', 'inf2']);
    expect(trust.approvedImages).toEqual(classes.map((c) => c.artifact.image));
  });

  test('approvedImages lists an image two classes share once, so the documented admission wiring accepts it', () => {
    const { stack: s2 } = testStack('Shared');
    const shared = new ArtifactTrust(s2, 'Trust', { repositoryNames: ['vllm', 'neuron'] });
    // One engine image on two GPU types: the common case.
    const twins = pinnedClasses((spec) => (spec.name === 'a10g' ? { ...spec, artifact: { ...spec.artifact, image: imageRef('vllm', 'a') } } : spec));
    for (const cls of twins) shared.gateFor(s2, cls);
    expect(shared.approvedImages).toEqual([imageRef('vllm', 'a'), imageRef('neuron', 'c')]);
    const cluster = eks.Cluster.fromClusterAttributes(s2, 'Cluster', {
      clusterName: 'c',
      kubectlProvider: eks.KubectlProvider.fromKubectlProviderAttributes(s2, 'Kubectl', { serviceToken: 'arn:aws:lambda:us-east-1:123456789012:function:k' }),
    });
    expect(() => new ApprovedImagesAdmission(s2, 'Admission', { cluster, namespace: 'llama3-chat', images: shared.approvedImages })).not.toThrow();
  });

  test('fails when an image is listed twice in ApprovedImagesAdmission (it refuses duplicates it is given directly)', () => {
    const { stack: s2 } = testStack('Dup');
    const cluster = eks.Cluster.fromClusterAttributes(s2, 'Cluster', {
      clusterName: 'c',
      kubectlProvider: eks.KubectlProvider.fromKubectlProviderAttributes(s2, 'Kubectl', { serviceToken: 'arn:aws:lambda:us-east-1:123456789012:function:k' }),
    });
    const image = imageRef('vllm', 'a');
    expect(() => new ApprovedImagesAdmission(s2, 'Admission', { cluster, namespace: 'llama3-chat', images: [image, image] })).toThrow(`images: '${image}' is listed twice`);
  });

  test("each class's Model depends on its own verification", () => {
    for (const cls of classes) {
      const [logicalId] = Object.entries(verifications).find(([, r]) => r.Properties.Record.className === cls.name)!;
      const model = Object.values(template.findResources('AWS::SageMaker::Model')).find((r) => r.DependsOn?.includes(logicalId));
      expect(model).toBeDefined();
    }
  });

  test('gating the same class twice returns the same verification', () => {
    expect(trust.gateFor(stack, classes[0])).toBe(trust.gateFor(stack, classes[0]));
  });

  test('the verifier reads only the class repositories, profile, model objects and key', () => {
    const policies = template.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: Match.stringLikeRegexp('TrustVerifierRole') }] } });
    const statements = Object.values(policies).flatMap((p) => p.Properties.PolicyDocument.Statement);
    const byAction = (action: string) => statements.filter((s) => [s.Action].flat().includes(action)).map((s) => s.Resource);
    // Each class's repository, and every repository the trust creates (a rollback may read a class's earlier one).
    expect(byAction('ecr:DescribeImageSigningStatus')).toEqual([
      { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':ecr:us-east-1:123456789012:repository/vllm']] },
      [{ 'Fn::GetAtt': [expect.stringMatching(/TrustRepository0/), 'Arn'] }, { 'Fn::GetAtt': [expect.stringMatching(/TrustRepository1/), 'Arn'] }],
      { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':ecr:us-east-1:123456789012:repository/neuron']] },
    ]);
    // Without modelDataLocations, each model object exactly.
    expect(byAction('s3:GetObjectVersion')).toHaveLength(3);
    expect(JSON.stringify(byAction('s3:GetObjectVersion'))).toContain(':s3:::models-bucket/llama3-8b/neuron-tp2.tar');
    expect(JSON.stringify(statements)).not.toMatch(/s3:::[^"]*\*/);
    expect(byAction('kms:Verify')).toEqual([{ 'Fn::GetAtt': [expect.stringMatching(/TrustModelSigningKey/), 'Arn'] }]);
    // Scoped to the approved profile, its versions and the signing jobs of its account and region (list_awssigner.html).
    const profile = { 'Fn::GetAtt': [expect.stringMatching(/TrustSigningProfile/), 'Arn'] };
    expect(byAction('signer:GetRevocationStatus')).toEqual([[
      profile,
      { 'Fn::Join': ['', [profile, '/*']] },
      { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':signer:us-east-1:123456789012:/signing-jobs/*']] },
    ]]);
    expect(template.findResources('AWS::IAM::Policy', { Properties: { PolicyName: Match.stringLikeRegexp('Revocation') } })).toEqual({});
    const actions = statements.flatMap((s) => [s.Action].flat());
    expect(actions.filter((a: string) => a.endsWith('*'))).toEqual([]);
    expect(actions).not.toContain('kms:Sign');
    expect(actions).not.toContain('kms:Decrypt');
    // Without a consumer that reads the key without a version (SageMaker), the current version is never asked for.
    expect(byAction('s3:GetObject')).toEqual([]);
  });

  test('a consumer that reads the key without a version (SageMaker) makes the shared gate check the current version too', () => {
    const { stack: s2 } = testStack('Current');
    const t = new ArtifactTrust(s2, 'Trust', { repositoryNames: ['vllm', 'neuron'] });
    const [l40s, a10g] = pinnedClasses();
    const eksScope = new Construct(s2, 'Eks');
    const sageMakerScope = new Construct(s2, 'SageMaker');
    // EKS first, then SageMaker on the same record: one verification, asked for the current version.
    const eksGate = t.gateFor(eksScope, l40s);
    expect(t.gateFor(sageMakerScope, l40s, { requireCurrentVersion: true })).toBe(eksGate);
    t.gateFor(sageMakerScope, l40s, { requireCurrentVersion: true });
    t.gateFor(eksScope, a10g);
    const tpl = Template.fromStack(s2);
    const byClass = Object.fromEntries(Object.values(tpl.findResources('Custom::ClassArtifactVerification'))
      .map((r) => [r.Properties.Record.className, r.Properties.RequireCurrentVersion]));
    expect(byClass).toEqual({ l40s: 'true', a10g: undefined });
    // HeadObject without a version id is authorized by s3:GetObject on the object (the pinned one by s3:GetObjectVersion): once, for l40s only.
    const statements = Object.values(tpl.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: Match.stringLikeRegexp('TrustVerifierRole') }] } }))
      .flatMap((p) => p.Properties.PolicyDocument.Statement);
    const getObject = statements.filter((st) => [st.Action].flat().includes('s3:GetObject'));
    expect(getObject).toEqual([{
      Action: 's3:GetObject', Effect: 'Allow',
      Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::models-bucket/llama3-8b/bf16.tar']] },
    }]);
  });

  test('CloudFormation waits at most the verifier timeout plus a minute for an answer, not an hour', () => {
    for (const v of Object.values(verifications)) expect(v.Properties.ServiceTimeout).toBe('360');
    const { stack: s } = testStack('Timeout');
    const t = new ArtifactTrust(s, 'Trust', { verifierTimeout: Duration.minutes(10) });
    t.gateFor(s, classes[0]);
    Template.fromStack(s).hasResourceProperties('Custom::ClassArtifactVerification', { ServiceTimeout: '660' });
  });

  test('publishers may push, have images signed and sign model digests', () => {
    const policy = Object.values(template.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: stack.getLogicalId(ci.node.defaultChild as CfnResource) }] } }))[0];
    const statements = policy.Properties.PolicyDocument.Statement;
    expect(statements).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Action: 'signer:SignPayload', Resource: { 'Fn::GetAtt': [expect.stringMatching(/TrustSigningProfile/), 'Arn'] } }),
        // sign-model calls kms:Sign only.
        expect.objectContaining({ Action: 'kms:Sign' }),
        expect.objectContaining({ Action: expect.arrayContaining(['ecr:PutImage']) }),
      ]),
    );
    // ECR managed signing's prerequisites list signer:SignPayload as the pusher's only Signer permission (managed-signing.html).
    const signerActions = (statements as { Action: string | string[] }[]).flatMap((st) => [st.Action].flat()).filter((a) => a.startsWith('signer:'));
    expect(signerActions).toEqual(['signer:SignPayload']);
  });

  test('repositories added after a publisher was granted are granted to it too', () => {
    const { stack: s } = testStack('Late');
    const role = new iam.Role(s, 'Ci', { assumedBy: new iam.AccountRootPrincipal() });
    const late = new ArtifactTrust(s, 'Trust', { publishers: [role] });
    late.addRepository('triton');
    const statements = Object.values(Template.fromStack(s).findResources('AWS::IAM::Policy')).flatMap((p) => p.Properties.PolicyDocument.Statement);
    expect(statements).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Action: expect.arrayContaining(['ecr:PutImage']), Resource: { 'Fn::GetAtt': [expect.stringMatching(/TrustRepository0/), 'Arn'] } }),
      ]),
    );
  });

  test('the verifier runs on the newest Node.js runtime with an explicit log group', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Timeout: 300,
      LoggingConfig: { LogGroup: { Ref: Match.stringLikeRegexp('TrustVerifierLogs') } },
    });
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 365 });
  });

  test('cdk-nag finds nothing once the CI role acknowledges ecr:GetAuthorizationToken', () => {
    const { app, stack: s, ci: role } = gatedStack('Nag');
    app.synth(); // the verifier's wildcard acknowledgements are computed from the resolved template
    // The acknowledgement really suppresses: the finding is there before it and gone after it.
    expect(nagFindings(s)).toEqual([expect.stringMatching(/^AwsSolutions-IAM5\[Resource::\*\]/)]);
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'ecr:GetAuthorizationToken has no resource-level permissions; pushes stay scoped to the class repositories',
    }, { id: 'NIST.800.53.R5-IAMNoInlinePolicy', reason: 'The CI role of this test holds its grants in its own policy.' });
    expect(nagFindings(s)).toEqual([]);
    expect(nistFindings(s)).toEqual([]);
  });
});

describe('ArtifactTrust: what a rollback of a serving stack reads again stays granted (review R228)', () => {
  // A rollback after this check passed and another resource failed is an Update with the old properties: the verifier
  // checks the earlier record with the grants of the trust stack as deployed, which name only the current records.
  const verifierStatements = (tpl: Template) => Object.values(tpl.findResources('AWS::IAM::Policy', {
    Properties: { Roles: [{ Ref: Match.stringLikeRegexp('TrustVerifierRole') }] },
  })).flatMap((p) => p.Properties.PolicyDocument.Statement);
  const arn = (rest: string) => ({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, rest]] });
  const resourcesOf = (statements: Array<{ Action: unknown; Resource: unknown }>, action: string) =>
    statements.filter((st) => [st.Action].flat().includes(action)).flatMap((st) => [st.Resource].flat());

  function located(id: string, modelDataLocations: string[]) {
    const { app, stack } = testStack(id);
    const ci = new iam.Role(stack, 'CiRole', { assumedBy: new iam.AccountRootPrincipal() });
    const trust = new ArtifactTrust(stack, 'Trust', { repositoryNames: ['vllm', 'neuron'], publishers: [ci], modelDataLocations });
    return { app, stack, trust, ci };
  }

  test('model data under a modelDataLocations entry: the verifier reads the objects under it, with the same actions', () => {
    const { stack, trust } = located('Located', ['s3://models-bucket/llama3-8b/', 's3://other-bucket/']);
    const [l40s, a10g, inf2] = pinnedClasses();
    trust.gateFor(stack, l40s);
    trust.gateFor(stack, a10g);
    // SageMaker's gate reads the current version too: s3:GetObject, on the location as well.
    trust.gateFor(new Construct(stack, 'SageMaker'), inf2, { requireCurrentVersion: true });
    const statements = verifierStatements(Template.fromStack(stack));
    const location = arn(':s3:::models-bucket/llama3-8b/*');
    for (const action of ['s3:GetObjectVersion', 's3:GetObjectTagging', 's3:GetObjectVersionTagging', 's3:GetObject']) {
      expect(resourcesOf(statements, action)).toEqual([location]);
    }
    // Only the location that holds the model data: not every location of the trust.
    expect(JSON.stringify(statements)).not.toContain('other-bucket');
    expect(JSON.stringify(statements)).not.toContain('bf16.tar');
  });

  test('model data outside every modelDataLocations entry keeps the exact-object grant', () => {
    const { stack, trust } = located('Outside', ['s3://models-bucket/mistral/', 's3://other-bucket/']);
    trust.gateFor(stack, pinnedClasses()[0]);
    const statements = verifierStatements(Template.fromStack(stack));
    expect(resourcesOf(statements, 's3:GetObjectVersion')).toEqual([arn(':s3:::models-bucket/llama3-8b/bf16.tar')]);
  });

  test('a bucket given as a reference matches a location that names the same reference', () => {
    const { stack } = testStack('TokenBucket');
    const bucket = new s3.Bucket(stack, 'Models');
    const trust = new ArtifactTrust(stack, 'Trust', { repositoryNames: ['vllm'], modelDataLocations: [`s3://${bucket.bucketName}/llama3-8b/`] });
    const [cls] = pinnedClasses((spec) => ({
      ...spec, artifact: { ...spec.artifact, modelData: { ...spec.artifact.modelData!, uri: `s3://${bucket.bucketName}/llama3-8b/bf16.tar` } },
    }));
    trust.gateFor(stack, cls);
    const statements = verifierStatements(Template.fromStack(stack));
    expect(resourcesOf(statements, 's3:GetObjectVersion')).toEqual([
      { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::', { Ref: expect.stringMatching(/^Models/) }, '/llama3-8b/*']] },
    ]);
  });

  test('every repository the trust creates is readable, one added after the gates too; an image elsewhere adds only its own', () => {
    const { stack, trust } = located('Repos', []);
    const [l40s] = pinnedClasses();
    trust.gateFor(stack, l40s);
    const triton = trust.addRepository('triton');
    const statements = verifierStatements(Template.fromStack(stack));
    const managed = statements.find((st) => Array.isArray(st.Resource) && st.Resource.some((r: unknown) => JSON.stringify(r).includes('TrustRepository0')));
    expect(managed.Action).toEqual(['ecr:DescribeImageSigningStatus', 'ecr:BatchGetImage', 'ecr:GetDownloadUrlForLayer']);
    expect(managed.Resource).toEqual([
      { 'Fn::GetAtt': [expect.stringMatching(/TrustRepository0/), 'Arn'] },
      { 'Fn::GetAtt': [expect.stringMatching(/TrustRepository1/), 'Arn'] },
      { 'Fn::GetAtt': [stack.getLogicalId(triton.node.defaultChild as CfnResource), 'Arn'] },
    ]);
    // A trust without repositories grants only each record's repository.
    const { stack: bare } = testStack('NoRepos');
    const none = new ArtifactTrust(bare, 'Trust');
    none.gateFor(bare, l40s);
    expect(resourcesOf(verifierStatements(Template.fromStack(bare)), 'ecr:BatchGetImage')).toEqual([arn(':ecr:us-east-1:123456789012:repository/vllm')]);
  });

  test('cdk-nag: the location wildcard is acknowledged with its reason, and nothing else is', () => {
    const { app, stack, trust, ci } = located('LocatedNag', ['s3://models-bucket/llama3-8b/']);
    for (const cls of pinnedClasses()) trust.gateFor(stack, cls);
    app.synth();
    Validations.of(ci).acknowledge({ id: 'AwsSolutions-IAM5[Resource::*]', reason: 'ecr:GetAuthorizationToken has no resource-level permissions' });
    expect(JSON.stringify(verifierStatements(Template.fromStack(stack)))).toContain(':s3:::models-bucket/llama3-8b/*');
    expect(nagFindings(stack)).toEqual([]);
    // The acknowledgement names the locations only: another S3 wildcard on the same role is still reported.
    const { app: app2, stack: s2 } = testStack('LocatedNagProbe');
    const t2 = new ArtifactTrust(s2, 'Trust', { repositoryNames: ['vllm', 'neuron'], modelDataLocations: ['s3://models-bucket/llama3-8b/'] });
    for (const cls of pinnedClasses()) t2.gateFor(s2, cls);
    t2.verifier.role!.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObjectVersion'], resources: ['arn:aws:s3:::models-bucket/other/*'] }));
    app2.synth();
    expect(nagFindings(s2)).toEqual([expect.stringMatching(/^AwsSolutions-IAM5\[Resource::arn:aws:s3:::models-bucket\/other\/\*\]/)]);
  });
});

describe('ArtifactTrust previousSigningProfileArns (the transition after the profile is replaced)', () => {
  const OLD = 'arn:aws:signer:us-east-1:123456789012:/signing-profiles/release_2025';
  const OTHER_ACCOUNT = 'arn:aws:signer:us-east-1:210987654321:/signing-profiles/release_2024';

  function transition(id = 'Test') {
    const { app, stack } = testStack(id);
    const ci = new iam.Role(stack, 'CiRole', { assumedBy: new iam.AccountRootPrincipal() });
    const trust = new ArtifactTrust(stack, 'Trust', {
      repositoryNames: ['vllm', 'neuron'], publishers: [ci], signingProfileName: 'release_2026', previousSigningProfileArns: [OLD, OTHER_ACCOUNT],
    });
    // l40s on the construct's profile, inf2 on a profile of its own.
    const classes = pinnedClasses((s) => (s.name === 'inf2' ? { ...s, artifact: { ...s.artifact, signingProfileName: 'isolated' } } : s));
    for (const cls of classes) trust.gateFor(stack, cls);
    return { app, stack, trust, ci, template: Template.fromStack(stack) };
  }

  test("only the classes on the construct's profile accept the previous profiles", () => {
    const { trust } = transition();
    expect(trust.records.get('l40s')?.previousSigningProfileArns).toEqual([OLD, OTHER_ACCOUNT]);
    expect(trust.records.get('inf2')).not.toHaveProperty('previousSigningProfileArns');
  });

  test('the verifier may read the previous profiles, their versions and their signing jobs, and nothing else of Signer', () => {
    const { template } = transition();
    const policies = template.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: Match.stringLikeRegexp('TrustVerifierRole') }] } });
    const statements = Object.values(policies).flatMap((p) => p.Properties.PolicyDocument.Statement);
    const resourcesOf = (action: string) => statements.filter((s) => [s.Action].flat().includes(action)).flatMap((s) => [s.Resource].flat());
    const literal = (r: unknown) => (typeof r === 'string' ? [r] : []);
    expect(resourcesOf('signer:GetSigningProfile').flatMap(literal).sort()).toEqual([OLD, OTHER_ACCOUNT].sort());
    const revocation = resourcesOf('signer:GetRevocationStatus').flatMap(literal);
    expect(new Set(revocation)).toEqual(new Set([OLD, `${OLD}/*`, OTHER_ACCOUNT, `${OTHER_ACCOUNT}/*`]));
    const jobs = JSON.stringify(resourcesOf('signer:GetRevocationStatus'));
    expect(jobs).toContain(':signer:us-east-1:123456789012:/signing-jobs/*');
    expect(jobs).toContain(':signer:us-east-1:210987654321:/signing-jobs/*');
    // The class on its own profile is granted nothing of the previous ones: its statement names only its profile.
    const isolated = statements.filter((s) => JSON.stringify(s.Resource).includes('/signing-profiles/isolated'));
    expect(isolated.length).toBeGreaterThan(0);
    for (const s of isolated) expect(JSON.stringify(s.Resource)).not.toContain('release_2025');
  });

  test('cdk-nag finds nothing new: the previous profiles\' wildcards are the acknowledged Signer ones', () => {
    const { app, stack, ci } = transition('Nag');
    app.synth();
    Validations.of(ci).acknowledge({ id: 'AwsSolutions-IAM5[Resource::*]', reason: 'ecr:GetAuthorizationToken has no resource-level permissions' },
      { id: 'NIST.800.53.R5-IAMNoInlinePolicy', reason: 'The CI role of this test holds its grants in its own policy.' });
    expect(nagFindings(stack)).toEqual([]);
    expect(nistFindings(stack)).toEqual([]);
  });

  test('fails at synth on anything but literal Signer profile ARNs of the stack region, duplicates and its own profile', () => {
    const { stack } = testStack();
    const token = Stack.of(stack).formatArn({ service: 'signer', resource: '', resourceName: 'signing-profiles/x' });
    const build = (previousSigningProfileArns: string[], id: string) => () =>
      new ArtifactTrust(stack, id, { signingProfileName: 'release_2026', previousSigningProfileArns });
    const allowed = "allowed: literal AWS Signer profile ARNs (arn:<partition>:signer:<region>:<account>:/signing-profiles/<name>) in the stack's region";
    expect(build(['arn:aws:signer:us-east-1:123456789012:/signing-profiles/release-2025'], 'Hyphen'))
      .toThrow(`ArtifactTrust 'Test/Hyphen' is invalid (1 problem):\n  - previousSigningProfileArns: [0] 'arn:aws:signer:us-east-1:123456789012:/signing-profiles/release-2025' is not a signing profile ARN; ${allowed}`);
    expect(build([`${OLD}/v1abc`], 'Version')).toThrow(`[0] '${OLD}/v1abc' is not a signing profile ARN`);
    expect(build([token], 'Token')).toThrow('[0] is a CDK token');
    expect(build([OLD.replace('us-east-1', 'eu-west-1')], 'Region')).toThrow(/\[0\] '.*' is in eu-west-1, the stack in us-east-1/);
    expect(build([OLD, OLD], 'Twice')).toThrow(`'${OLD}' is listed twice`);
    expect(build(['arn:aws:signer:us-east-1:123456789012:/signing-profiles/release_2026'], 'Own'))
      .toThrow("is the construct's own profile (signingProfileName 'release_2026')");
    // The same name in another account is another profile.
    expect(build(['arn:aws:signer:us-east-1:210987654321:/signing-profiles/release_2026'], 'Elsewhere')).not.toThrow();
  });
});

describe('ArtifactTrust options', () => {
  test('a class naming its own signing profile is verified against that profile', () => {
    const { stack } = testStack();
    const trust = new ArtifactTrust(stack, 'Trust');
    const [cls] = pinnedClasses((s) => ({ ...s, artifact: { ...s.artifact, signingProfileName: 'fallback_account_profile' } }));
    trust.gateFor(stack, cls);
    Template.fromStack(stack).hasResourceProperties('Custom::ClassArtifactVerification', {
      Record: { signingProfileArn: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':signer:us-east-1:123456789012:/signing-profiles/fallback_account_profile']] } },
    });
    // Without repositories, the construct does not take over the registry's signing configuration.
    Template.fromStack(stack).resourceCountIs('AWS::ECR::SigningConfiguration', 0);
  });

  test.each([
    ['without the feature flag', {}],
    ['with @aws-cdk/aws-signer:signingProfileNamePassedToCfn', { '@aws-cdk/aws-signer:signingProfileNamePassedToCfn': true }],
    ['with the flag explicitly off', { '@aws-cdk/aws-signer:signingProfileNamePassedToCfn': false }],
  ])('a named profile is deployed with that name and approved by its own ARN attribute, %s', (_, context) => {
    const app = new App({ ...UNIT_TEST_APP_PROPS, context });
    const stack = new Stack(app, 'Test', { env: { account: '123456789012', region: 'us-east-1' } });
    const trust = new ArtifactTrust(stack, 'Trust', { signingProfileName: 'release_signing' });
    // One class names the trust's own profile explicitly, one relies on the default.
    const [l40s, a10g] = pinnedClasses((s) => (s.name === 'l40s' ? { ...s, artifact: { ...s.artifact, signingProfileName: 'release_signing' } } : s));
    trust.gateFor(stack, l40s);
    trust.gateFor(stack, a10g);
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::Signer::SigningProfile', { ProfileName: 'release_signing' });
    const profileId = Object.keys(template.findResources('AWS::Signer::SigningProfile'))[0];
    // Both records point at the profile this stack deploys (its Arn attribute), never at an ARN rebuilt from a name.
    const records = Object.values(template.findResources('Custom::ClassArtifactVerification')).map((r) => r.Properties.Record.signingProfileArn);
    expect(records).toEqual([{ 'Fn::GetAtt': [profileId, 'Arn'] }, { 'Fn::GetAtt': [profileId, 'Arn'] }]);
  });

  test('retry, multipart policy and version requirement are configurable', () => {
    const { app, stack } = testStack();
    const trust = new ArtifactTrust(stack, 'Trust', {
      requireModelVersion: false,
      multipartModelDigest: 'reject',
      verifierRetry: { maxAttempts: 3, baseDelay: Duration.millis(200), maxDelay: Duration.seconds(2) },
      verificationNonce: 'release-42',
    });
    const [cls] = defineCapacityClasses(llamaClasses().slice(2), { contract: LLAMA_CONTRACT }); // inf2: no versionId
    trust.gateFor(stack, cls);
    app.synth();
    Template.fromStack(stack).hasResourceProperties('Custom::ClassArtifactVerification', {
      Record: { modelData: { versionId: '' } },
      MultipartDigest: 'reject',
      MaxAttempts: '3',
      BaseDelayMs: '200',
      MaxDelayMs: '2000',
      Nonce: 'release-42',
    });
    // Without a version the verifier reads the current object: no version action is granted.
    Template.fromStack(stack).hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: ['s3:GetObject', 's3:GetObjectTagging'] })]) },
    });
  });

  test('fails when a publisher of two trusts with two model-data keys gets repeated statement ids (IAM rejects them)', () => {
    const { app, stack } = testStack('TwoKeys');
    const ci = new iam.Role(stack, 'Ci', { assumedBy: new iam.AccountRootPrincipal() });
    for (const name of ['A', 'B']) {
      new ArtifactTrust(stack, `Trust${name}`, {
        publishers: [ci], modelDataLocations: [`s3://models-${name.toLowerCase()}/`],
        modelDataEncryptionKey: new kms.Key(stack, `Key${name}`, { enableKeyRotation: true }),
      });
    }
    app.synth();
    const statements = Object.values(Template.fromStack(stack).findResources('AWS::IAM::Policy', {
      Properties: { Roles: [{ Ref: stack.getLogicalId(ci.node.defaultChild as CfnResource) }] },
    })).flatMap((p) => p.Properties.PolicyDocument.Statement as Array<{ Sid?: string; Action: unknown }>);
    expect(statements.filter((st) => st.Action === 'kms:Decrypt')).toHaveLength(2);
    const sids = statements.flatMap((st) => (st.Sid ? [st.Sid] : []));
    expect(sids).toEqual([...new Set(sids)]);
  });

  test('publishers with modelDataLocations read and tag object versions there and decrypt through S3 with the model-data key', () => {
    const { app, stack } = testStack('Publish');
    const ci = new iam.Role(stack, 'Ci', { assumedBy: new iam.AccountRootPrincipal() });
    const modelKey = new kms.Key(stack, 'ModelKey', { enableKeyRotation: true });
    new ArtifactTrust(stack, 'Trust', { publishers: [ci], modelDataLocations: ['s3://models-bucket/llama3-8b/', 's3://other-bucket'], modelDataEncryptionKey: modelKey });
    app.synth();
    const t = Template.fromStack(stack);
    const keyId = Object.keys(t.findResources('AWS::KMS::Key')).find((id) => id.startsWith('ModelKey'))!;
    const statements = Object.values(t.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: stack.getLogicalId(ci.node.defaultChild as CfnResource) }] } }))
      .flatMap((p) => p.Properties.PolicyDocument.Statement);
    expect(statements).toEqual(expect.arrayContaining([
      expect.objectContaining({
        Action: ['s3:GetObject', 's3:GetObjectVersion', 's3:GetObjectTagging', 's3:GetObjectVersionTagging', 's3:PutObjectTagging', 's3:PutObjectVersionTagging'],
        Resource: [
          { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::models-bucket/llama3-8b/*']] },
          { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::other-bucket/*']] },
        ],
      }),
      expect.objectContaining({ Action: 'kms:Decrypt', Resource: { 'Fn::GetAtt': [keyId, 'Arn'] } }),
    ]));
    // The verifier decrypts through S3 too (HeadObject with checksum mode of an SSE-KMS object).
    const verifier = Object.values(t.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: Match.stringLikeRegexp('TrustVerifierRole') }] } }))
      .flatMap((p) => p.Properties.PolicyDocument.Statement);
    expect(verifier).toEqual(expect.arrayContaining([
      expect.objectContaining({ Action: 'kms:Decrypt', Condition: { StringEquals: { 'kms:ViaService': expect.anything() } } }),
    ]));
    // The location wildcards are acknowledged on the publisher's role (only ecr:GetAuthorizationToken's "*" is left to the user).
    expect(nagFindings(stack).filter((f) => f.includes(':s3:::'))).toEqual([]);
  });

  test('a modelDataLocations bucket given as a reference (a bucket of the app) is granted like a literal one (review R223)', () => {
    const { app, stack } = testStack('PublishRef');
    const ci = new iam.Role(stack, 'Ci', { assumedBy: new iam.AccountRootPrincipal() });
    const bucket = new s3.Bucket(stack, 'Models', { enforceSSL: true });
    new ArtifactTrust(stack, 'Trust', { publishers: [ci], modelDataLocations: [`s3://${bucket.bucketName}/llama3-8b/`, `s3://${bucket.bucketName}`] });
    app.synth();
    const t = Template.fromStack(stack);
    const bucketId = stack.getLogicalId(bucket.node.defaultChild as CfnResource);
    const statements = Object.values(t.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: stack.getLogicalId(ci.node.defaultChild as CfnResource) }] } }))
      .flatMap((p) => p.Properties.PolicyDocument.Statement);
    expect(statements).toEqual(expect.arrayContaining([
      expect.objectContaining({
        Resource: [
          { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::', { Ref: bucketId }, '/llama3-8b/*']] },
          { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::', { Ref: bucketId }, '/*']] },
        ],
      }),
    ]));
  });

  test("fails when signatureValidity passes AWS Signer's 135 months (counted as 4,050 days)", () => {
    const { stack } = testStack();
    new ArtifactTrust(stack, 'Trust', { signatureValidity: Duration.days(4050) });
    Template.fromStack(stack).hasResourceProperties('AWS::Signer::SigningProfile', { SignatureValidityPeriod: { Type: 'DAYS', Value: 4050 } });
    const { stack: s2 } = testStack('T2');
    expect(() => new ArtifactTrust(s2, 'Trust', { signatureValidity: Duration.days(4051) }))
      .toThrow(/signatureValidity: is 4051 days; allowed: a whole number from 1 to 4050 days \(AWS Signer's maximum is 135 months\)/);
  });

  test('fails when a modelDataLocations entry is not an S3 location', () => {
    const { stack } = testStack();
    const build = () => new ArtifactTrust(stack, 'Trust', { modelDataLocations: ['models-bucket/llama', 's3://models-bucket/llama/*'] });
    expect(build).toThrow(
      /modelDataLocations\[0\]: 'models-bucket\/llama' is not an S3 location; allowed: s3:\/\/<bucket>\/ or s3:\/\/<bucket>\/<key prefix>/,
    );
    const { stack: s2 } = testStack('T2');
    expect(() => new ArtifactTrust(s2, 'Trust', { modelDataLocations: ['models-bucket/llama', 's3://models-bucket/llama/*'] }))
      .toThrow(/modelDataLocations\[1\]: 's3:\/\/models-bucket\/llama\/\*' is not an S3 location/);
    // `?` is IAM's one-character wildcard (review R224).
    const { stack: s4 } = testStack('T3');
    expect(() => new ArtifactTrust(s4, 'Trust', { modelDataLocations: ['s3://models-bucket/llama?/'] }))
      .toThrow(/modelDataLocations\[0\]: 's3:\/\/models-bucket\/llama\?\/' is not an S3 location/);
  });

  test('fails when modelDataEncryptionKey is an alias (a grant on the alias ARN is no grant on its key), with the other problems', () => {
    const { stack } = testStack();
    const key = new kms.Key(stack, 'Key', { enableKeyRotation: true });
    const aliasArn = 'arn:aws:kms:us-east-1:123456789012:alias/models';
    const allowed = "allowed: a KMS key, not an alias (a kms.Key, or kms.Key.fromKeyArn with the key's ARN";
    expect(() => new ArtifactTrust(stack, 'New', { modelDataEncryptionKey: new kms.Alias(stack, 'Alias', { aliasName: 'alias/models', targetKey: key }), signingProfileName: 'a-b' }))
      .toThrow(new RegExp(`ArtifactTrust 'Test/New' is invalid \\(2 problems\\):[^]*modelDataEncryptionKey: is the alias 'Test/Alias'; ${escape(allowed)}`));
    expect(() => new ArtifactTrust(stack, 'ByName', { modelDataEncryptionKey: kms.Alias.fromAliasName(stack, 'ByNameAlias', 'alias/models') }))
      .toThrow("modelDataEncryptionKey: is the alias 'Test/ByNameAlias'");
    expect(() => new ArtifactTrust(stack, 'ByArn', { modelDataEncryptionKey: kms.Key.fromKeyArn(stack, 'AliasArn', aliasArn) }))
      .toThrow(`modelDataEncryptionKey: is '${aliasArn}', an alias ARN; ${allowed}`);
    const keyArn = 'arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
    expect(() => new ArtifactTrust(stack, 'ByKeyArn', { modelDataEncryptionKey: kms.Key.fromKeyArn(stack, 'KeyArn', keyArn) })).not.toThrow();
    expect(() => new ArtifactTrust(stack, 'Created', { modelDataEncryptionKey: key })).not.toThrow();
  });

  test('fails when class artifacts cannot be pinned, listing every problem with the construct path', () => {
    const { stack } = testStack();
    // The props at construction, every problem at once.
    expect(() => new ArtifactTrust(stack, 'Bad', { signingProfileName: 'has-hyphens', verifierRetry: { maxAttempts: 0 }, verifierTimeout: Duration.minutes(20) }))
      .toThrow([
        "ArtifactTrust 'Test/Bad' is invalid (3 problems):",
        "  - signingProfileName: is 'has-hyphens'; allowed: an AWS Signer profile name: 2 to 64 of [A-Za-z0-9_] (no hyphens)",
        '  - verifierRetry.maxAttempts: is 0; allowed: a whole number from 1 to 10',
        '  - verifierTimeout: is 1200 s; allowed: a whole number from 60 to 900 s',
      ].join('\n'));
    // Each class when it is gated (by the serving construct that declares it), with the trust construct's path.
    const trust = new ArtifactTrust(stack, 'Trust');
    const [l40s, a10g, inf2] = pinnedClasses();
    expect(() => trust.gateFor(stack, { ...l40s, artifact: { ...l40s.artifact, image: 'ghcr.io/vllm/vllm@sha256:' + 'a'.repeat(64) } }))
      .toThrow("ArtifactTrust 'Test/Trust' is invalid (1 problem):\n  - class 'l40s' artifact.image: 'ghcr.io/vllm/vllm@sha256:aaaa");
    const { stack: s2 } = testStack('T2');
    const t2 = new ArtifactTrust(s2, 'Trust');
    const message = ((): string => {
      try {
        t2.gateFor(s2, { ...a10g, artifact: { ...a10g.artifact, modelData: { uri: 's3://models-bucket/llama3-8b/', sha256: 'B'.repeat(64), versionId: 'v1' } } });
      } catch (e) {
        return (e as Error).message;
      }
      return '';
    })();
    expect(message).toContain("class 'a10g' artifact.modelData.uri: 's3://models-bucket/llama3-8b/' is not one S3 object");
    expect(message).toContain("class 'a10g' artifact.modelData.sha256: 'BBBB");
    const { stack: s3s } = testStack('T3');
    const t3 = new ArtifactTrust(s3s, 'Trust');
    expect(() => t3.gateFor(s3s, { ...inf2, artifact: { ...inf2.artifact, signingProfileName: 'x', modelData: { uri: 's3://models-bucket/m.tar', sha256: 'c'.repeat(64) } } }))
      .toThrow(/class 'inf2' artifact.signingProfileName: 'x' is not an AWS Signer[\s\S]*class 'inf2' artifact.modelData.versionId: is missing/);
  });

  test('a model bucket given as a token stays a token in the record and the verifier policy', () => {
    const { stack } = testStack();
    const bucket = new s3.Bucket(stack, 'Models', { versioned: true });
    const trust = new ArtifactTrust(stack, 'Trust');
    const [l40s] = pinnedClasses();
    const cls = { ...l40s, artifact: { ...l40s.artifact, modelData: { uri: `s3://${bucket.bucketName}/m.tar`, sha256: 'a'.repeat(64), versionId: 'v1' } } };
    trust.gateFor(stack, cls);
    const template = Template.fromStack(stack);
    template.hasResourceProperties('Custom::ClassArtifactVerification', { Record: { modelData: { bucket: { Ref: Match.stringLikeRegexp('Models') }, key: 'm.tar' } } });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: ['s3:GetObjectVersion', 's3:GetObjectTagging', 's3:GetObjectVersionTagging'],
            Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::', { Ref: Match.stringLikeRegexp('Models') }, '/m.tar']] },
          }),
        ]),
      },
    });
  });

  test('fails when one class name is gated with two different artifacts', () => {
    const { stack } = testStack();
    const trust = new ArtifactTrust(stack, 'Trust');
    const [l40s] = pinnedClasses();
    trust.gateFor(stack, l40s);
    expect(() => trust.gateFor(stack, { ...l40s, artifact: { ...l40s.artifact, image: imageRef('vllm', 'f') } }))
      .toThrow(/class 'l40s' artifact: was gated twice by 'Test' with different artifacts/);
  });

  test('two services sharing it may each have a class of the same name: one gate per set of artifacts, the first keeps its id', () => {
    const { stack } = testStack();
    const trust = new ArtifactTrust(stack, 'Trust');
    const [l40s] = pinnedClasses();
    const first = new Construct(stack, 'Llama');
    const second = new Construct(stack, 'Mistral');
    const third = new Construct(stack, 'Third');
    const a = trust.gateFor(first, l40s);
    const b = trust.gateFor(second, { ...l40s, artifact: { ...l40s.artifact, image: imageRef('vllm', 'f') } });
    // The same artifacts under the same name: the one verification serves both.
    expect(trust.gateFor(third, l40s)).toBe(a);
    expect(b).not.toBe(a);
    expect((a as Construct).node.id).toBe('Verify-l40s');
    expect((b as Construct).node.id).toBe(`Verify-l40s-${second.node.addr.slice(0, 8)}`);
    expect([...trust.records.keys()]).toEqual(['l40s', 'Test/Mistral/l40s']);
    expect(trust.approvedImages).toHaveLength(2);
    Template.fromStack(stack).resourceCountIs('Custom::ClassArtifactVerification', 2);
  });

  test("a serving construct in another stack gets its checks in its own stack, which deploys after the trust's", () => {
    // The trust's stack creates the repositories, which are empty until it has deployed and the images are pushed: a
    // check there would fail that stack's first deployment, and its rollback would delete the repositories.
    const app = new App(UNIT_TEST_APP_PROPS);
    const env = { account: '123456789012', region: 'us-east-1' };
    const trustStack = new Stack(app, 'Trust', { env });
    const servingStack = new Stack(app, 'Serving', { env });
    const trust = new ArtifactTrust(trustStack, 'Trust', { repositoryNames: ['vllm', 'neuron'] });
    const serving = new Construct(servingStack, 'Llama');
    const other = new Construct(servingStack, 'Other');
    const [l40s, a10g] = pinnedClasses();
    const gate = trust.gateFor(serving, l40s) as Construct;
    trust.gateFor(serving, a10g);
    expect(gate.node.path).toBe('Serving/Llama/Verify-l40s');
    // Shared within the consumer's stack as before.
    expect(trust.gateFor(other, l40s)).toBe(gate);

    const inTrust = Template.fromStack(trustStack);
    const inServing = Template.fromStack(servingStack);
    inTrust.resourceCountIs('Custom::ClassArtifactVerification', 0);
    inTrust.resourceCountIs('AWS::ECR::Repository', 2);
    inServing.resourceCountIs('Custom::ClassArtifactVerification', 2);
    inServing.resourceCountIs('AWS::ECR::Repository', 0);
    // The verifier, the model signing key and the profile are the trust's, imported.
    const check = Object.values(inServing.findResources('Custom::ClassArtifactVerification'))[0].Properties;
    expect(check.ServiceToken).toEqual({ 'Fn::ImportValue': expect.stringMatching(/^Trust:ExportsOutputFnGetAttTrustVerifier/) });
    expect(check.ModelSigningKeyArn).toEqual({ 'Fn::ImportValue': expect.stringMatching(/^Trust:ExportsOutputFnGetAttTrustModelSigningKey/) });
    expect(JSON.stringify(check.Record)).toMatch(/"Fn::ImportValue":"Trust:ExportsOutputFnGetAttTrustSigningProfile/);
    expect(servingStack.dependencies).toEqual([trustStack]);
    // The verifier's read grants for the class stay on its role, in the trust's stack.
    expect(JSON.stringify(inTrust.findResources('AWS::IAM::Policy'))).toContain('models-bucket/llama3-8b/bf16.tar');
    expect(inServing.findResources('AWS::IAM::Policy')).toEqual({});
  });
});

// GIVEN several ArtifactTrust in one app, THEN at most one per account and Region manages the registry's signing
// configuration: AWS::ECR::SigningConfiguration creates or overwrites the registry's one configuration (its primary
// identifier is RegistryId), so a second would replace the first's rules and deleting either stack deletes it for both.
describe("ArtifactTrust: the registry's signing configuration, one per account and Region", () => {
  const ENV = { account: '123456789012', region: 'us-east-1' };
  const twoStacks = (second: { region?: string; env?: false } = {}) => {
    const app = new App(UNIT_TEST_APP_PROPS);
    const a = new Stack(app, 'SageMakerTrust', { env: ENV });
    const b = new Stack(app, 'EksTrust', second.env === false ? {} : { env: { ...ENV, region: second.region ?? ENV.region } });
    return { app, a, b };
  };
  const allowed = 'allowed: one ArtifactTrust per account and Region of the app managing the registry signing configuration: it signs the '
    + 'repositories of the others with their own profiles (signRepositoriesOf(other)), and the others set manageRegistrySigningConfiguration: false';

  test('fails when two manage it in one account and Region, naming both paths, the account and Region, and what is allowed', () => {
    const { a, b } = twoStacks();
    new ArtifactTrust(a, 'Registry', { repositoryNames: ['vllm'] });
    expect(() => new ArtifactTrust(b, 'Eks', { repositoryNames: ['sd21'] })).toThrow([
      "ArtifactTrust 'EksTrust/Eks' is invalid (1 problem):",
      '  - manageRegistrySigningConfiguration: is unset (true, since the construct creates repositories), and the ArtifactTrust at '
        + `'SageMakerTrust/Registry' also manages the registry signing configuration in 123456789012/us-east-1; ${allowed} (a registry`,
    ].join('\n'));
    // Explicitly, without repositories (its rule would sign every repository), and in the same stack.
    expect(() => new ArtifactTrust(b, 'Explicit', { manageRegistrySigningConfiguration: true }))
      .toThrow("manageRegistrySigningConfiguration: is true, and the ArtifactTrust at 'SageMakerTrust/Registry' also manages");
    expect(() => new ArtifactTrust(a, 'Same', { repositoryNames: ['tgi'] })).toThrow("ArtifactTrust 'SageMakerTrust/Same' is invalid");
  });

  test.each([
    ['in another Region', () => twoStacks({ region: 'us-west-2' }), {}],
    ['when the other sets manageRegistrySigningConfiguration: false', () => twoStacks(), { manageRegistrySigningConfiguration: false }],
    // An environment-agnostic stack deploys wherever the CLI points: which others share its registry is unknown at synth.
    ['in an environment-agnostic stack (cannot be checked)', () => twoStacks({ env: false }), {}],
  ])('a second is allowed %s', (_, build, props) => {
    const { a, b } = build();
    new ArtifactTrust(a, 'Registry', { repositoryNames: ['vllm'] });
    expect(() => new ArtifactTrust(b, 'Eks', { repositoryNames: ['sd21'], ...props })).not.toThrow();
  });

  test('a second is allowed in another app (separate apps cannot be checked) and after a construct that failed', () => {
    for (const id of ['One', 'Two']) new ArtifactTrust(testStack(id).stack, 'Trust', { repositoryNames: ['vllm'] });
    const { a, b } = twoStacks();
    expect(() => new ArtifactTrust(a, 'Bad', { repositoryNames: ['vllm'], signingProfileName: 'has-hyphens' })).toThrow('signingProfileName');
    expect(() => new ArtifactTrust(b, 'Eks', { repositoryNames: ['sd21'] })).not.toThrow();
  });

  test("signRepositoriesOf() adds a rule with the other's profile and its repositories, so that the other's checks pass", () => {
    const { a, b } = twoStacks();
    const registry = new ArtifactTrust(a, 'Registry', { repositoryNames: ['vllm', 'neuron'] });
    const eksTrust = new ArtifactTrust(b, 'Eks', { repositoryNames: ['sd21/triton'], manageRegistrySigningConfiguration: false });
    registry.signRepositoriesOf(eksTrust);
    registry.signRepositoriesOf(eksTrust); // once
    eksTrust.addRepository('chat/vllm'); // added later: still in the rule
    const [cls] = pinnedClasses((spec) => ({ ...spec, artifact: { ...spec.artifact, image: imageRef('sd21/triton') } }));
    eksTrust.gateFor(b, cls);
    const inA = Template.fromStack(a);
    inA.resourceCountIs('AWS::ECR::SigningConfiguration', 1);
    const rules = Object.values(inA.findResources('AWS::ECR::SigningConfiguration'))[0].Properties.Rules;
    expect(rules).toEqual([
      {
        SigningProfileArn: { 'Fn::GetAtt': [expect.stringMatching(/^RegistrySigningProfile/), 'Arn'] },
        RepositoryFilters: [{ Filter: 'vllm', FilterType: 'WILDCARD_MATCH' }, { Filter: 'neuron', FilterType: 'WILDCARD_MATCH' }],
      },
      {
        SigningProfileArn: { 'Fn::ImportValue': expect.stringMatching(/^EksTrust:ExportsOutputFnGetAttEksSigningProfile[0-9A-F]{8}Arn/) },
        RepositoryFilters: [{ Filter: 'sd21/triton', FilterType: 'WILDCARD_MATCH' }, { Filter: 'chat/vllm', FilterType: 'WILDCARD_MATCH' }],
      },
    ]);
    Template.fromStack(b).resourceCountIs('AWS::ECR::SigningConfiguration', 0);
    // The managing stack reads the other's profile, so it deploys after it.
    expect(a.dependencies).toEqual([b]);
    // The other's check requires a signature by the profile its rule names: its own (the export of the same attribute).
    const record = Object.values(Template.fromStack(b).findResources('Custom::ClassArtifactVerification'))[0].Properties.Record;
    const exported = rules[1].SigningProfileArn['Fn::ImportValue'] as string;
    expect(record.signingProfileArn).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^EksSigningProfile/), 'Arn'] });
    expect(exported).toContain(`OutputFnGetAtt${record.signingProfileArn['Fn::GetAtt'][0]}Arn`);
  });

  test('signRepositoriesOf() fails unless called on the managing construct with another trust of its account and Region', () => {
    const { a, b } = twoStacks();
    const registry = new ArtifactTrust(a, 'Registry', { repositoryNames: ['vllm'] });
    const eksTrust = new ArtifactTrust(b, 'Eks', { repositoryNames: ['sd21'], manageRegistrySigningConfiguration: false });
    const empty = new ArtifactTrust(b, 'Empty');
    const ruleAllowed = 'allowed: another ArtifactTrust of the same account and Region, with repositories and manageRegistrySigningConfiguration: '
      + 'false, given to the ArtifactTrust that manages the registry signing configuration, with at most 100 repositories; at most 10 rules in all';
    expect(() => eksTrust.signRepositoriesOf(registry)).toThrow([
      "ArtifactTrust 'EksTrust/Eks' is invalid (1 problem):",
      "  - signRepositoriesOf: is 'SageMakerTrust/Registry', and this construct does not manage the registry signing configuration "
        + `(manageRegistrySigningConfiguration false, or unset without repositories); ${ruleAllowed}`,
    ].join('\n'));
    expect(() => registry.signRepositoriesOf(registry)).toThrow('signRepositoriesOf: is this construct, whose own rule signs its repositories');
    expect(() => registry.signRepositoriesOf(empty)).toThrow(
      "signRepositoriesOf: is 'EksTrust/Empty', which has no repositories (a rule without repository filters signs every repository of the registry)");

    const west = twoStacks({ region: 'us-west-2' });
    const east = new ArtifactTrust(west.a, 'Registry', { repositoryNames: ['vllm'] });
    const managing = new ArtifactTrust(west.b, 'Eks', { repositoryNames: ['sd21'] });
    expect(() => east.signRepositoriesOf(managing)).toThrow(
      "signRepositoriesOf: is 'EksTrust/Eks', which manages a registry signing configuration of its own, is in 123456789012/us-west-2, "
        + 'this construct in 123456789012/us-east-1');
  });

  test('signRepositoriesOf() fails past the 10 rules and 100 repository filters ECR\'s PutSigningConfiguration takes', () => {
    const { stack } = testStack();
    const registry = new ArtifactTrust(stack, 'Registry', { repositoryNames: ['own'] });
    const others = Array.from({ length: 10 }, (_, i) =>
      new ArtifactTrust(stack, `T${i}`, { repositoryNames: [`repo${i}`], manageRegistrySigningConfiguration: false }));
    for (const other of others.slice(0, 9)) registry.signRepositoriesOf(other);
    expect(() => registry.signRepositoriesOf(others[9])).toThrow("signRepositoriesOf: is 'Test/T9', which would be rule 11 of the configuration");
    const [configuration] = Object.values(Template.fromStack(stack).findResources('AWS::ECR::SigningConfiguration'));
    expect(configuration.Properties.Rules).toHaveLength(10);

    const { stack: other } = testStack();
    const manager = new ArtifactTrust(other, 'Registry', { repositoryNames: ['own'] });
    const large = new ArtifactTrust(other, 'Large', {
      repositoryNames: Array.from({ length: 101 }, (_, i) => `repo${i}`), manageRegistrySigningConfiguration: false,
    });
    expect(() => manager.signRepositoriesOf(large)).toThrow(
      "signRepositoriesOf: is 'Test/Large', which has 101 repositories, more than a rule's 100 repository filters");
  });

  test('a rule past 100 repository filters fails at synth, whoever added the repositories after the checks at the calls', () => {
    const synthError = (stack: Stack) => {
      try {
        Template.fromStack(stack);
        return '';
      } catch (e) {
        return (e as Error).message;
      }
    };
    const build = (grow: boolean) => {
      const { stack } = testStack();
      const manager = new ArtifactTrust(stack, 'Registry', { repositoryNames: Array.from({ length: 100 }, (_, i) => `own${i}`) });
      const other = new ArtifactTrust(stack, 'Other', { repositoryNames: ['other'], manageRegistrySigningConfiguration: false });
      manager.signRepositoriesOf(other);
      if (grow) {
        manager.addRepository('own100');
        for (let i = 0; i < 100; i++) other.addRepository(`other${i}`);
      }
      return stack;
    };
    expect(synthError(build(false))).toBe('');
    const message = synthError(build(true));
    expect(message).toContain("ArtifactTrust 'Test/Registry' is invalid (2 problems)");
    expect(message).toContain("repositoryNames: this construct has 101 repositories, more than a rule's 100 repository filters");
    expect(message).toContain("signRepositoriesOf: the ArtifactTrust at 'Test/Other' (signRepositoriesOf) has 101 repositories");
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('ArtifactTrust repository names (review R231, R230)', () => {
  test('a name listed twice fails at synth', () => {
    const { stack } = testStack('Repos');
    expect(() => new ArtifactTrust(stack, 'Trust', { repositoryNames: ['inference/vllm', 'inference/vllm'] }))
      .toThrow("repositoryNames[1]: 'inference/vllm' is listed twice; allowed: each repository name once");
  });

  test('a name another ArtifactTrust of the app creates in the same account and Region fails; another Region passes', () => {
    const { app, stack } = testStack('First');
    new ArtifactTrust(stack, 'Trust', { repositoryNames: ['inference/vllm'] });
    const second = new Stack(app, 'Second', { env: { account: '123456789012', region: 'us-east-1' } });
    expect(() => new ArtifactTrust(second, 'Trust', { repositoryNames: ['inference/vllm'], manageRegistrySigningConfiguration: false }))
      .toThrow("repositoryNames[0]: 'inference/vllm' is created by the ArtifactTrust at 'First/Trust' in 123456789012/us-east-1 too");
    const elsewhere = new Stack(app, 'Elsewhere', { env: { account: '123456789012', region: 'eu-west-1' } });
    expect(() => new ArtifactTrust(elsewhere, 'Trust', { repositoryNames: ['inference/vllm'] })).not.toThrow();
  });
});

describe("ArtifactTrust: a class image of another Region's registry (review R255)", () => {
  const westImage = `123456789012.dkr.ecr.us-west-2.amazonaws.com/vllm@sha256:${'a'.repeat(64)}`;
  const westClass = () => pinnedClasses((s) => ({ ...s, artifact: { ...s.artifact, image: westImage } }))[0];

  test('fails at synth where both Regions are literal, naming the trust, the class, the image, both Regions and why', () => {
    const { stack } = testStack();
    const trust = new ArtifactTrust(stack, 'Trust', { repositoryNames: ['vllm'] });
    const serving = new Construct(stack, 'Serving');
    expect(() => trust.gateFor(serving, westClass())).toThrow([
      "ArtifactTrust 'Test/Trust' is invalid (1 problem):",
      `  - class 'l40s' artifact.image: '${westImage}' (gated by 'Test/Serving') is in us-west-2, and the ArtifactTrust's stack in us-east-1; `
        + "allowed: a private ECR image of the ArtifactTrust's own Region (checked where the image and the trust's stack name literal Regions) "
        + "(ECR managed signing signs an image only with a profile of its registry's Region (\"Cross-region signing is not supported\")",
    ].join('\n'));
    // The same image in the trust's Region is gated.
    expect(() => trust.gateFor(serving, pinnedClasses()[0])).not.toThrow();
  });

  test('is not checked where the Region is known only deployed (an environment-agnostic trust stack): the verifier fails closed there', () => {
    const app = new App(UNIT_TEST_APP_PROPS);
    const stack = new Stack(app, 'Agnostic');
    const trust = new ArtifactTrust(stack, 'Trust', { repositoryNames: ['vllm'] });
    expect(() => trust.gateFor(stack, westClass())).not.toThrow();
  });
});

describe('ArtifactTrust: a class on a profile of its own, the working recipe (docs/artifact-trust.md "Placement", review R255)', () => {
  function recipe() {
    const { stack } = testStack('Trusts');
    const main = new ArtifactTrust(stack, 'Trust', { repositoryNames: ['vllm'] });
    const isolated = new ArtifactTrust(stack, 'IsolatedTrust', {
      repositoryNames: ['vllm-isolated'],
      signingProfileName: 'isolated_fallback',
      manageRegistrySigningConfiguration: false,
    });
    main.signRepositoriesOf(isolated);
    return { stack, main, isolated };
  }
  const isolatedClass = (profile?: string) => pinnedClasses((s) => ({
    ...s, artifact: { ...s.artifact, image: imageRef('vllm-isolated'), ...(profile ? { signingProfileName: profile } : {}) },
  }))[0];
  const rulesOf = (t: Template) => Object.values(t.findResources('AWS::ECR::SigningConfiguration'))[0].Properties.Rules;
  const recordsOf = (t: Template) => Object.values(t.findResources('Custom::ClassArtifactVerification')).map((r) => r.Properties.Record);

  test("the registry's one configuration signs the second trust's repository with the second trust's profile", () => {
    const { stack, isolated } = recipe();
    isolated.gateFor(stack, isolatedClass());
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::ECR::SigningConfiguration', 1);
    const isolatedProfile = { 'Fn::GetAtt': [expect.stringMatching(/^IsolatedTrustSigningProfile/), 'Arn'] };
    expect(rulesOf(template)).toEqual([
      { SigningProfileArn: { 'Fn::GetAtt': [expect.stringMatching(/^TrustSigningProfile/), 'Arn'] }, RepositoryFilters: [{ Filter: 'vllm', FilterType: 'WILDCARD_MATCH' }] },
      { SigningProfileArn: isolatedProfile, RepositoryFilters: [{ Filter: 'vllm-isolated', FilterType: 'WILDCARD_MATCH' }] },
    ]);
    // Gated on the second trust, the class's check requires the profile of that rule.
    template.hasResourceProperties('AWS::Signer::SigningProfile', { ProfileName: 'isolated_fallback' });
    expect(recordsOf(template)).toEqual([expect.objectContaining({ signingProfileArn: isolatedProfile })]);
  });

  test("in a service gated on the main trust, the class names the second trust's profile, with none of the main profile's predecessors", () => {
    const { stack, main } = recipe();
    main.gateFor(stack, isolatedClass('isolated_fallback'));
    const [record] = recordsOf(Template.fromStack(stack));
    expect(record.signingProfileArn).toEqual({
      'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':signer:us-east-1:123456789012:/signing-profiles/isolated_fallback']],
    });
    expect(record.previousSigningProfileArns).toBeUndefined();
  });
});
