import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as fc from 'fast-check';
import { checkCapacityClasses, defineCapacityClasses } from '../../lib/core/service/checks';
import { serviceContractProblems } from '../../lib/core/service/contract';
import { amiFamily, isName, nameProblem, numberProblem, numberRule } from '../../lib/core/validation/checker';
import { validationMatrixMarkdown } from '../../lib/core/validation/doc';
import { CLASS_RULES, CONTRACT_RULES } from '../../lib/core/validation/rules';
import { LLAMA_CONTRACT, llamaClasses } from '../util';

const TOKEN = -1.8881545897087626e289;

describe('validation matrix document', () => {
  // Regenerate with: node scripts/gen-validation-doc.mjs
  test('docs/validation.md is generated from the rule tables the checks read', () => {
    const committed = readFileSync(join(__dirname, '..', '..', 'docs', 'validation.md'), 'utf8');
    expect(committed).toBe(validationMatrixMarkdown());
  });

  test('every table row appears in the document with its rule', () => {
    const doc = validationMatrixMarkdown();
    for (const prop of [...Object.keys(CONTRACT_RULES), ...Object.keys(CLASS_RULES)]) expect(doc).toContain(`| \`${prop}\` |`);
    expect(doc).toContain('| `classes` | 1 to 5 classes (each class is one target group of the ALB listener');
  });
});

describe('number rules', () => {
  const rule = numberRule({ integer: true, min: 1, max: 5 });
  test.each([1, 5, 3])('accepts %p (both bounds included)', (v) => expect(numberProblem(rule, v)).toBeUndefined());
  test.each([0, 6, 2.5, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -1])('rejects %p with the value and what is allowed', (v) => {
    expect(numberProblem(rule, v)).toBe(`is ${v}; allowed: a whole number from 1 to 5`);
  });
  test('rejects a token unless the rule carries tokens', () => {
    expect(numberProblem(rule, TOKEN)).toMatch(/^is a CDK token, which is only resolved at deploy time; allowed: a literal value at synth/);
    expect(numberProblem(numberRule({ min: 0, tokens: 'carry' }), TOKEN)).toBeUndefined();
  });
  test('property: a finite value is accepted exactly when it is inside the bounds', () => {
    fc.assert(fc.property(fc.double({ noNaN: false }), (v) => {
      const ok = Number.isFinite(v) && Number.isInteger(v) && v >= 1 && v <= 5;
      expect(numberProblem(rule, v) === undefined).toBe(ok);
    }));
  });
});

describe('name rules', () => {
  test.each([
    ['dns1035Label', 'chat-7b', true], ['dns1035Label', '7b-chat', false], ['dns1123Label', '7b-chat', true], ['dns1123Label', 'a'.repeat(64), false],
    ['labelValue', 'A_b.c-1', true], ['labelValue', '-a', false], ['sageMakerName', 'Fall-Back1', true], ['sageMakerName', 'fall_back', false],
    ['ecrRepository', 'team/vllm-server', true], ['ecrRepository', 'Team/vllm', false], ['ecrRepository', 'a', false],
    ['signerProfile', 'release_signing', true], ['signerProfile', 'release-signing', false],
    ['availabilityZone', 'us-east-1a', true], ['availabilityZone', 'us-west-2-lax-1a', true], ['availabilityZone', 'use1-az1', false],
    ['karpenterAmiAlias', 'bottlerocket@v1.30.0', true], ['karpenterAmiAlias', 'al2023@v20260801', true], ['karpenterAmiAlias', 'windows2022@latest', false],
    ['karpenterAmiAlias', 'al2@latest', false], ['karpenterAmiAlias', 'ubuntu@latest', false], ['karpenterAmiAlias', 'al2023@', false],
    ['karpenterAmiAlias', `bottlerocket@${'1'.repeat(17)}`, true], ['karpenterAmiAlias', `bottlerocket@${'1'.repeat(18)}`, false],
    ['eksClusterName', 'prod_cluster-1', true], ['eksClusterName', '-prod', false], ['cloudWatchDashboard', 'llm-chat_1', true], ['cloudWatchDashboard', 'llm chat', false],
  ] as const)('%s %p: %p', (format, value, ok) => {
    expect(isName(format, value)).toBe(ok);
  });
  test.each([
    ['bottlerocket@latest', 'bottlerocket'], ['al2023@v20260801', 'al2023'], ['al2@latest', undefined], ['al2023', undefined], ['AL2023@latest', undefined],
  ] as const)('amiFamily(%p) is %p: the family the node volumes, the root snapshot and the device plugin warning read', (alias, family) => {
    expect(amiFamily(alias)).toBe(family);
  });
  test('a string token follows the rule: rejected by default, carried when the rule says so', () => {
    expect(nameProblem({ kind: 'name', format: 'sageMakerName', tokens: 'reject' }, '${Token[X.1]}')).toContain('is a CDK token');
    expect(nameProblem({ kind: 'name', format: 'sageMakerName', tokens: 'carry' }, '${Token[X.1]}')).toBeUndefined();
  });
});

describe('service contract', () => {
  test('the fixture contract is valid', () => expect(serviceContractProblems(LLAMA_CONTRACT)).toEqual([]));

  test('fails when the peak is 0 or the mean output is 0 (it would plan one instance, or render Infinity)', () => {
    const zero = { ...LLAMA_CONTRACT, peakRequestsPerSecond: 0, requestShape: { meanPromptTokens: 10, meanOutputTokens: 0 } };
    const problems = serviceContractProblems(zero);
    expect(problems.map((p) => `${p.field}: ${p.message}`)).toEqual([
      'contract.requestShape.meanOutputTokens: is 0 tokens; allowed: a finite number above 0 tokens (demand in tokens/s and admission ' +
        'limits divide by it; count 1 per request for models that do not generate tokens)',
      'contract.peakRequestsPerSecond: is 0 requests/s; allowed: a finite number above 0 requests/s (the fleet is planned for it)',
    ]);
  });

  test('fails when the deadline is not above the first-token SLO', () => {
    expect(serviceContractProblems({ ...LLAMA_CONTRACT, slo: { ttftP95Ms: 1500, deadlineMs: 1500 } })[0].message).toBe(
      'is 1500 ms, not above slo.ttftP95Ms 1500 ms; allowed: a deadline above the p95 time to first token (a request cannot be answered before its first token)',
    );
  });

  test('defineCapacityClasses checks the contract it is given', () => {
    expect(() => defineCapacityClasses(llamaClasses(), { contract: { ...LLAMA_CONTRACT, headroom: Number.POSITIVE_INFINITY } })).toThrow(
      /contract.headroom: is Infinity; allowed: a finite number from 0 to 4/,
    );
  });

  test('property: NaN, Infinity, negatives and tokens in any contract number are rejected, naming the field', () => {
    const fields = [
      'peakRequestsPerSecond', 'headroom', 'slo.ttftP95Ms', 'slo.deadlineMs', 'slo.itlP95Ms', 'requestShape.meanOutputTokens', 'requestShape.meanPromptTokens',
    ];
    const bad = fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -1, TOKEN);
    fc.assert(fc.property(fc.constantFrom(...fields), bad, (field, value) => {
      const [a, b] = field.split('.');
      const contract = b === undefined
        ? { ...LLAMA_CONTRACT, [a]: value }
        : { ...LLAMA_CONTRACT, [a]: { ...(LLAMA_CONTRACT as unknown as Record<string, object>)[a], [b]: value } };
      const problems = serviceContractProblems(contract);
      expect(problems.map((p) => p.field)).toContain(`contract.${field}`);
      expect(problems.find((p) => p.field === `contract.${field}`)!.message).toMatch(/allowed: /);
    }));
  });
});

describe('capacity classes across platforms', () => {
  test('placement zones are checked on EKS and refused on SageMaker, where they would be ignored', () => {
    const zoned = llamaClasses().map((c, i) => (i === 0 ? { ...c, placement: { zones: ['us-east-1a', 'use1-az1'] } } : c));
    expect(checkCapacityClasses(zoned, { platform: 'ec2' }).problems.map((p) => p.field + ': ' + p.message)).toEqual([
      "placement.zones[1]: is 'use1-az1'; allowed: an availability zone name such as 'us-east-1a' (or a Local Zone such as 'us-west-2-lax-1a')",
    ]);
    const sm = llamaClasses('ml.').map((c, i) => (i === 0 ? { ...c, placement: { zones: ['us-east-1a'] } } : c));
    expect(checkCapacityClasses(sm, { platform: 'sagemaker' }).problems[0].message).toBe(
      'is [us-east-1a]; allowed: no zones on SageMaker (omit placement.zones) (SageMaker places endpoint instances itself and has no zone ' +
        'setting: the zones would be silently ignored)',
    );
  });

  test('the deadline rule is the same on both platforms: a mean request must fit the deadline on an idle replica', () => {
    const contract = { ...LLAMA_CONTRACT, slo: { ...LLAMA_CONTRACT.slo, deadlineMs: 9000 } };
    // l40s: 900 + 250 x 35 = 9650 ms > 9000 ms.
    for (const [prefix, platform] of [['', 'ec2'], ['ml.', 'sagemaker']] as const) {
      const { problems } = checkCapacityClasses(llamaClasses(prefix), { contract, platform });
      expect(problems.find((p) => p.className === 'l40s' && p.field === 'envelope')?.message).toContain(
        'a mean request needs 9650 ms on this class (p95 TTFT 900 ms + 250 tokens x p95 ITL 35 ms), not below the service deadline of 9000 ms',
      );
    }
  });

  test('Infinity as a price is rejected, not planned as an infinite cost', () => {
    const specs = llamaClasses().map((c, i) => (i === 1 ? { ...c, usdPerHour: Number.POSITIVE_INFINITY } : c));
    expect(checkCapacityClasses(specs).problems.map((p) => `${p.className} ${p.field}: ${p.message}`)).toEqual([
      'a10g usdPerHour: is Infinity; allowed: a finite number above 0 USD per instance-hour',
    ]);
  });
});
