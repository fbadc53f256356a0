/**
 * The one validation layer every construct and `defineCapacityClasses` share: numbers (finite, range, integer), names
 * (each platform's own rule), CDK tokens (one policy) and the messages they produce. Pure (no aws-cdk-lib), so the
 * Lambda bundles and the simulator can use it too. `docs/validation.md` is generated from the same rules
 * (`validationMatrixMarkdown()` over `VALIDATION_MATRIX`, lib/core/validation/doc.ts), and a test fails when the document drifts from the code.
 *
 * Token policy, per prop:
 * - `reject`: the value feeds arithmetic at synth (a plan, a scaling target, a derived name); a token's encoded
 *   number (about -1.9e289) would be planned as if it were real, so a token is an error that says so;
 * - `carry`: the value is copied verbatim into CloudFormation or a manifest and never computed with; a token is
 *   carried through unchanged and resolved at deploy time.
 */
import { ECR_REPOSITORY_PATTERN } from '../trust/image-reference';
import { type Problem } from './error';
import { isUnresolved } from './tokens';

/** What a prop that holds a CDK token gets. */
export type TokenPolicy = 'reject' | 'carry';

/** A numeric rule: finite always; optional bounds (inclusive `min`/`max`, exclusive `above`/`below`), whole numbers, step. */
export interface NumberRule {
  readonly kind: 'number';
  readonly min?: number;
  readonly above?: number;
  readonly max?: number;
  readonly below?: number;
  readonly integer?: boolean;
  /** The value must be a multiple of this (e.g. 60 for whole minutes in seconds). */
  readonly multipleOf?: number;
  /** Unit shown after the bounds (`ms`, `s`, `USD per instance-hour`). */
  readonly unit?: string;
  readonly tokens: TokenPolicy;
  /** Why the bounds are what they are (a platform limit, with its source). */
  readonly why?: string;
}

/** The name formats the platforms impose. */
export type NameFormat =
  | 'dns1035Label'
  | 'dns1123Label'
  | 'dns1123Subdomain'
  | 'labelValue'
  | 'sageMakerName'
  | 'ecrRepository'
  | 'signerProfile'
  | 'eksClusterName'
  | 'cloudWatchDashboard'
  | 'cloudWatchDimension'
  | 'availabilityZone'
  | 'karpenterAmiAlias';

export interface NameRule {
  readonly kind: 'name';
  readonly format: NameFormat;
  readonly tokens: TokenPolicy;
  readonly why?: string;
}

/**
 * A rule between props or against a platform quota. It carries its own check, so the table holds both the code and
 * the text: `check(input)` says what was found when the rule is broken (the start of the message) and `allowed` says
 * what is allowed (its end, and the documented rule), so the two cannot say different things.
 */
export interface CrossRule<I = never> {
  readonly kind: 'cross';
  readonly allowed: string;
  readonly why?: string;
  /** What was found when `input` breaks the rule (e.g. `is 40000 ms, not below the deadline of 30000 ms`), else undefined. */
  readonly check: (input: I) => string | undefined;
}

export type Rule = NumberRule | NameRule | CrossRule;

// ---------------------------------------------------------------------------------------------------------------
// Rule builders
// ---------------------------------------------------------------------------------------------------------------

type NumberBounds = Omit<NumberRule, 'kind' | 'tokens'> & { readonly tokens?: TokenPolicy };

/** A finite number with the given bounds; tokens are rejected unless `tokens: 'carry'`. */
export function numberRule(bounds: NumberBounds = {}): NumberRule {
  return { kind: 'number', tokens: 'reject', ...bounds };
}

export function nameRule(format: NameFormat, options: { tokens?: TokenPolicy; why?: string } = {}): NameRule {
  return { kind: 'name', format, tokens: options.tokens ?? 'reject', ...(options.why ? { why: options.why } : {}) };
}

/** A rule between props: `check(input)` describes what breaks it, `allowed` what is allowed. */
export function crossRule<I>(allowed: string, check: (input: I) => string | undefined, why?: string): CrossRule<I> {
  return { kind: 'cross', allowed, check, ...(why ? { why } : {}) };
}

// ---------------------------------------------------------------------------------------------------------------
// Descriptions (shared by the messages and the generated matrix)
// ---------------------------------------------------------------------------------------------------------------

function fmt(n: number): string {
  return Number.isInteger(n) && Math.abs(n) >= 10_000 ? n.toLocaleString('en-US').replace(/,/g, '_') : String(n);
}

/** What a rule allows, in words: `a whole number from 1 to 5`, `a finite number above 0 ms`. */
export function describeRule(rule: Rule): string {
  if (rule.kind === 'cross') return rule.allowed;
  if (rule.kind === 'name') return NAME_FORMATS[rule.format].allowed;
  const what = rule.integer ? 'a whole number' : 'a finite number';
  const unit = rule.unit ? ` ${rule.unit}` : '';
  const bound = (inclusive: number | undefined, exclusive: number | undefined) =>
    inclusive !== undefined ? { text: fmt(inclusive), incl: true } : exclusive !== undefined ? { text: fmt(exclusive), incl: false } : undefined;
  const lower = bound(rule.min, rule.above);
  const upper = bound(rule.max, rule.below);
  const parts = [
    ...(lower ? [lower.incl ? `at least ${lower.text}` : `above ${lower.text}`] : []),
    ...(upper ? [upper.incl ? `at most ${upper.text}` : `below ${upper.text}`] : []),
  ];
  const range = lower?.incl && upper?.incl ? ` from ${lower.text} to ${upper.text}` : parts.length > 0 ? ` ${parts.join(' and ')}` : '';
  const step = rule.multipleOf !== undefined ? `, a multiple of ${fmt(rule.multipleOf)}` : '';
  return `${what}${range}${unit}${step}`;
}

/** What a rule does with a CDK token, in words. */
export function describeTokens(rule: Rule): string {
  if (rule.kind === 'cross') return '-';
  return rule.tokens === 'carry' ? 'carried through to deploy time' : 'rejected (a literal value is needed at synth)';
}

function show(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'number') return Object.is(value, -0) ? '0' : String(value);
  return String(value);
}

/** The message of a token where a literal is needed. */
export function tokenMessage(rule: Rule): string {
  return `is a CDK token, which is only resolved at deploy time; allowed: a literal value at synth (${describeRule(rule)}), ` +
    'because the construct computes with it (resolve it in your app, e.g. from context, or pass a literal)';
}

/** The message for a value that breaks `rule`. */
export function ruleMessage(rule: Rule, value: unknown, detail?: string): string {
  const why = rule.why ? ` (${rule.why})` : '';
  const unit = rule.kind === 'number' && rule.unit && typeof value === 'number' && Number.isFinite(value) ? ` ${rule.unit}` : '';
  return `is ${show(value)}${unit}${detail ? ` (${detail})` : ''}; allowed: ${describeRule(rule)}${why}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------------------------------

/** Why `value` breaks a number rule, or undefined when it holds (or is a carried token). */
export function numberProblem(rule: NumberRule, value: unknown): string | undefined {
  if (isUnresolved(value)) return rule.tokens === 'carry' ? undefined : tokenMessage(rule);
  if (typeof value !== 'number' || !Number.isFinite(value)) return ruleMessage(rule, value);
  const bad =
    (rule.integer && !Number.isInteger(value)) ||
    (rule.min !== undefined && value < rule.min) ||
    (rule.above !== undefined && !(value > rule.above)) ||
    (rule.max !== undefined && value > rule.max) ||
    (rule.below !== undefined && !(value < rule.below)) ||
    (rule.multipleOf !== undefined && Math.abs(value / rule.multipleOf - Math.round(value / rule.multipleOf)) > 1e-9);
  return bad ? ruleMessage(rule, value) : undefined;
}

/** Whether a value of hand-editable input (a configuration file, JavaScript, routing facts) is an object: not null, not a number or string. */
export function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

/** Whether a number is a literal usable in arithmetic (not a token, finite). */
export function isFiniteLiteral(value: unknown): value is number {
  return typeof value === 'number' && !isUnresolved(value) && Number.isFinite(value);
}

interface NameFormatSpec {
  readonly allowed: string;
  readonly test: (value: string) => boolean;
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const SAGEMAKER_NAME = /^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$/;
const ECR_REPOSITORY = new RegExp(`^${ECR_REPOSITORY_PATTERN}$`);

/**
 * The AMI families a Karpenter alias (`amiAlias`) may name: Bottlerocket and AL2023 (the reasons of the others' refusal
 * are the amiAlias rule's, lib/core/validation/rules.ts). One list for the format and for what the family decides
 * (the node's block devices, the AL2023 root snapshot, the NVIDIA device plugin warning).
 */
export const KARPENTER_AMI_FAMILIES = ['bottlerocket', 'al2023'] as const;
export type KarpenterAmiFamily = (typeof KARPENTER_AMI_FAMILIES)[number];

/** The family a Karpenter AMI alias names (`al2023@v20260801` -> 'al2023'), or undefined for an alias of no family the library runs. */
export function amiFamily(alias: string): KarpenterAmiFamily | undefined {
  return KARPENTER_AMI_FAMILIES.find((family) => alias.startsWith(`${family}@`));
}

/**
 * Name rules, each from its platform's own definition:
 * - DNS-1123 label/subdomain, DNS-1035 label, label values: Kubernetes apimachinery `pkg/util/validation/validation.go`
 *   (IsDNS1123Label, IsDNS1123Subdomain, IsDNS1035Label, IsValidLabelValue); Service names are DNS-1035 labels
 *   (https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#rfc-1035-label-names).
 * - SageMaker EndpointName/VariantName/ModelName: `^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}` (SageMaker API reference).
 * - ECR repositoryName: 2..256 characters, lower-case segments separated by '.', '_', '-' and '/' (pattern
 *   ECR_REPOSITORY above; ECR CreateRepository API reference).
 * - Signer profileName: `^[a-zA-Z0-9_]{2,64}$` (AWS Signer PutSigningProfile API reference).
 * - EKS cluster name: 1..100 characters, `^[0-9A-Za-z][A-Za-z0-9\-_]*` (EKS CreateCluster API reference).
 * - CloudWatch DashboardName: up to 255 of `A-Za-z0-9_-` (PutDashboard API reference).
 * - CloudWatch dimension value: ASCII, no control characters, at least one non-blank character, 1..1024 characters
 *   (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_Dimension.html); the AWS::CloudWatch::Alarm
 *   Dimension page says 1..255 in its text (and 1024 in its schema line): the alarms carry it, so 255.
 * - Karpenter alias: `family@version`, at most 30 characters (karpenter v1.14 `karpenter.k8s.aws_ec2nodeclasses.yaml`,
 *   amiSelectorTerms.alias), of the two families the library's nodes can run: not the CRD's Windows families (their
 *   nodes are `kubernetes.io/os: windows`, aws/karpenter-provider-aws@v1.14.1 pkg/providers/amifamily/windows.go:65,
 *   and every NodePool requires linux), nor al2 (EKS stopped publishing AL2 AMIs on 2025-11-26 and has none for
 *   Kubernetes 1.33 and later, https://docs.aws.amazon.com/eks/latest/userguide/eks-ami-deprecation-faqs.html).
 */
const NAME_FORMATS: Record<NameFormat, NameFormatSpec> = {
  dns1123Label: {
    allowed: 'a DNS-1123 label: 1 to 63 lower-case letters, digits and "-", starting and ending with a letter or digit',
    test: (v) => v.length <= 63 && DNS1123_LABEL.test(v),
  },
  dns1035Label: {
    allowed: 'a DNS-1035 label: 1 to 63 lower-case letters, digits and "-", starting with a letter and ending with a letter or digit',
    test: (v) => v.length <= 63 && DNS1035_LABEL.test(v),
  },
  dns1123Subdomain: {
    allowed: 'a DNS-1123 subdomain: at most 253 characters, dot-separated DNS-1123 labels',
    test: (v) => v.length >= 1 && v.length <= 253 && v.split('.').every((l) => DNS1123_LABEL.test(l)),
  },
  labelValue: {
    allowed: 'a Kubernetes label value: at most 63 letters, digits, "-", "_" and ".", starting and ending with a letter or digit',
    test: (v) => v.length <= 63 && LABEL_VALUE.test(v),
  },
  sageMakerName: {
    allowed: "a SageMaker name: 1 to 63 letters, digits and '-', starting and ending with a letter or digit",
    test: (v) => SAGEMAKER_NAME.test(v),
  },
  ecrRepository: {
    allowed: 'an ECR repository name: 2 to 256 characters, lower-case [a-z0-9] segments joined by ".", "_", "-" and "/"',
    test: (v) => v.length >= 2 && v.length <= 256 && ECR_REPOSITORY.test(v),
  },
  signerProfile: {
    allowed: 'an AWS Signer profile name: 2 to 64 of [A-Za-z0-9_] (no hyphens)',
    test: (v) => /^[a-zA-Z0-9_]{2,64}$/.test(v),
  },
  eksClusterName: {
    allowed: 'an EKS cluster name: 1 to 100 letters, digits, "-" and "_", starting with a letter or digit',
    test: (v) => /^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$/.test(v),
  },
  cloudWatchDashboard: {
    allowed: 'a CloudWatch dashboard name: 1 to 255 of [A-Za-z0-9_-]',
    test: (v) => /^[A-Za-z0-9_-]{1,255}$/.test(v),
  },
  cloudWatchDimension: {
    allowed: 'a CloudWatch dimension value: 1 to 255 printable ASCII characters, not all blank',
    test: (v) => v.length <= 255 && /^[\x20-\x7e]+$/.test(v) && v.trim().length > 0,
  },
  availabilityZone: {
    allowed: "an availability zone name such as 'us-east-1a' (or a Local Zone such as 'us-west-2-lax-1a')",
    test: (v) => /^[a-z]{2}(-[a-z]+)+-\d+([a-z]|-[a-z]+-\d+[a-z])$/.test(v),
  },
  karpenterAmiAlias: {
    allowed: `a Karpenter AMI alias 'family@version' of at most 30 characters, family ${KARPENTER_AMI_FAMILIES.join(' or ')}`,
    test: (v) => {
      const family = amiFamily(v);
      return v.length <= 30 && family !== undefined && v.length > `${family}@`.length;
    },
  },
};

/** Why `value` breaks a name rule, or undefined when it holds (or is a carried token). */
export function nameProblem(rule: NameRule, value: unknown): string | undefined {
  if (isUnresolved(value)) return rule.tokens === 'carry' ? undefined : tokenMessage(rule);
  if (typeof value !== 'string') return ruleMessage(rule, value);
  if (value.length === 0) return ruleMessage(rule, value, 'empty');
  if (NAME_FORMATS[rule.format].test(value)) return undefined;
  return ruleMessage(rule, value, value.length > 63 ? `${value.length} characters` : undefined);
}

/** Whether `value` satisfies a name format (tokens excluded). */
export function isName(format: NameFormat, value: string): boolean {
  return !isUnresolved(value) && NAME_FORMATS[format].test(value);
}

/** The problem of `value` under any rule (a cross rule has no single value: its caller decides). */
export function ruleProblem(rule: NumberRule | NameRule, value: unknown): string | undefined {
  return rule.kind === 'number' ? numberProblem(rule, value) : nameProblem(rule, value);
}

type CrossKey<T> = { [K in keyof T]: T[K] extends CrossRule<infer _I> ? K : never }[keyof T] & string;
type CrossInput<R> = R extends CrossRule<infer I> ? I : never;
type ValueKey<T> = { [K in keyof T]: T[K] extends CrossRule<infer _I> ? never : K }[keyof T] & string;

/**
 * A collector bound to a rule table: `check('field', value)` looks up the field's rule and `cross('rule', input)` runs
 * a cross rule's own check, so a check without a documented rule does not compile. `optional` skips undefined values
 * (props with defaults). Every problem is filed under `prefix + path` and, when given, the class it is about.
 */
export class Checker<T extends Readonly<Record<string, Rule>>> {
  public readonly problems: Problem[] = [];
  constructor(
    private readonly rules: T,
    private readonly prefix = '',
    private readonly className?: string,
  ) {}

  /** Checks a value that must be present. */
  public check(field: ValueKey<T>, value: unknown, path: string = field): boolean {
    const rule = this.rules[field];
    if (rule.kind === 'cross') throw new Error(`internal: ${field} is a cross rule; use cross()`);
    const problem = ruleProblem(rule, value);
    if (problem) this.add(path, problem);
    return problem === undefined;
  }

  /** Checks a value that may be undefined (it then keeps its default). */
  public optional(field: ValueKey<T>, value: unknown, path: string = field): boolean {
    return value === undefined ? true : this.check(field, value, path);
  }

  /** Runs a cross rule's check on `input`; a broken rule is filed under `path` with what was found and what is allowed. */
  public cross<K extends CrossKey<T>>(field: K, input: CrossInput<T[K]>, path: string = field): boolean {
    const rule = this.rules[field] as unknown as CrossRule<CrossInput<T[K]>>;
    const found = rule.check(input);
    if (found !== undefined) this.add(path, `${found}; allowed: ${describeRule(rule)}${rule.why ? ` (${rule.why})` : ''}`);
    return found === undefined;
  }

  /** Files a problem the tables cannot express (e.g. an unknown instance type); the message says what is allowed. */
  public add(path: string, message: string): void {
    this.problems.push({ ...(this.className === undefined ? {} : { className: this.className }), field: this.prefix + path, message });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Durations (the constructs convert a Duration to seconds with `durationSeconds` in lib/util before checking)
// ---------------------------------------------------------------------------------------------------------------

/** Stands for a Duration that is a token: `isUnresolved` recognises it like any number token. */
export const UNRESOLVED_DURATION = -1.8881545897087626e289;
