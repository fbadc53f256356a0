/**
 * Renders `docs/validation.md` from `VALIDATION_MATRIX`, the tables the checks read: the document cannot say anything
 * the code does not enforce. `test/core/validation.test.ts` fails when the committed file differs; regenerate it
 * with `node scripts/gen-validation-doc.mjs`.
 */
import { describeRule, describeTokens, type Rule } from './checker';
import { VALIDATION_MATRIX } from './rules';

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

/** The message a broken rule produces, with `<value>` standing for the value received. */
function messageOf(rule: Rule): string {
  const why = rule.why ? ` (${rule.why})` : '';
  if (rule.kind === 'cross') return `<what was found>; allowed: ${describeRule(rule)}${why}`;
  const unit = rule.kind === 'number' && rule.unit ? ` ${rule.unit}` : '';
  return `is <value>${unit}; allowed: ${describeRule(rule)}${why}`;
}

export function validationMatrixMarkdown(): string {
  const lines = [
    '# Validation matrix',
    '',
    '<!-- Generated from lib/core/validation/*-rules.ts and rules.ts by scripts/gen-validation-doc.mjs; do not edit by hand. -->',
    '',
    'Every prop the constructs check, the rule it must satisfy and the message a broken rule produces. Numbers must',
    'always be finite (NaN and Infinity are rejected everywhere). A rule between props carries its own check in the rule',
    'table (lib/core/validation/rules.ts; the service contract\'s and the capacity classes\' in service-rules.ts and a SageMaker',
    'variant\'s scaling targets in sagemaker-scaling-rules.ts, which the simulator evaluates too; the Reconciler\'s in',
    'reconciler-rules.ts and the routing facts\' in routing-facts-rules.ts, which the reconciler Lambda bundles), so the text below',
    'is the text of the code that enforces it.',
    '',
    '## One error',
    '',
    'Every construct (and `defineCapacityClasses`) throws one error type, `ConstructValidationError`: the construct\'s',
    'class, its path and every problem at once (`problems`: the field, and a message naming the value and what is',
    'allowed). Its message is the construct and path, then one line per problem:',
    '',
    '```text',
    "SageMakerCapacityEndpoint 'App/Chat/Endpoint' is invalid (2 problems):",
    "  - class 'l40s' runtime.maxQueueDelayMs: is 40000 ms, not below the service deadline of 30000 ms; ...; allowed: ...",
    '  - standbyInstances: is 0; allowed: a whole number at least 1 (SageMaker variants cannot scale to 0)',
    '```',
    '',
    '## When input is checked: when it is given',
    '',
    'Construction, not synth. A construct checks its props in its constructor and throws before it builds anything from',
    'them; input given later is checked at the call that gives it (`SageMakerCapacityEndpoint.addClass()` and',
    '`addVariant()`, `ArtifactTrust.addRepository()` and `gateFor()`, the metric methods\' variant names). Why:',
    '',
    '- the error points at the line of the app that gave the bad value (a stack trace into the user\'s code), and a typed',
    '  error reaches the caller: at synth, CDK collects `addValidation` messages into its own error',
    '  (`ValidationFailedWithErrors`) and the library\'s type is lost;',
    '- nothing is built from invalid input: the members a user reads right after construction (`cluster`, `units`,',
    '  `servingDescription()`) are never half-built, so no later line fails with a TypeError in place of the real problem;',
    '- it is aws-cdk\'s own model for constructs built in steps (aws-sagemaker-alpha `EndpointConfig`: variant props are',
    '  checked by `addInstanceProductionVariant()`, "at least 1 production variant" when the configuration is rendered).',
    '',
    'The one thing construction cannot know is whether a construct built in steps is complete (a SageMaker endpoint\'s',
    'variants may be added after its classes, and the other way round): no class or no variant, a class in no variant, a',
    'variant naming an undeclared class, a peak no class quota carries. Those are checked when the construct is first',
    'read (`servingDescription()`, `routingFacts()`) and, when nothing reads it, at synth, with the same error and message.',
    'So a control construct (Reconciler, InferenceObservability, InferenceAlarms, InferenceDashboard) never reports the',
    'facts an invalid serving construct would produce: reading the serving description throws the serving construct\'s',
    'own error (an endpoint without variants says `variants: no variants are declared`, not "no capacity classes").',
    'The endpoint\'s own rules cover what those constructs check of its facts (a variant named after another class), so',
    'an endpoint that synthesizes alone is accepted by them too. A read is final: each of them reads the variants once,',
    'when it is created, so `addClass()` and `addVariant()` after a successful read throw (`addClass()/addVariant()@read`)',
    'instead of adding a class that would be deployed but never routed, charted or alarmed.',
    '',
    'CDK tokens: a prop marked *rejected* feeds arithmetic at synth (a capacity plan, a scaling target, a derived name),',
    'so a token there (`Lazy.number`, `CfnParameter.valueAsNumber`, a token `Duration`) is an error that says so; a prop',
    'marked *carried through* is copied verbatim into CloudFormation and resolved at deploy time. A token is never',
    'computed with.',
    '',
  ];
  for (const [construct, rules] of Object.entries(VALIDATION_MATRIX)) {
    lines.push(`## ${construct}`, '', '| Prop | Rule | Tokens | Message |', '|---|---|---|---|');
    for (const [prop, rule] of Object.entries(rules as Record<string, Rule>)) {
      lines.push(`| \`${cell(prop)}\` | ${cell(describeRule(rule))}${rule.why ? ` (${cell(rule.why)})` : ''} | ${describeTokens(rule)} | \`${cell(messageOf(rule))}\` |`);
    }
    lines.push('');
  }
  return lines.join('\n');
}
