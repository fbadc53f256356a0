/**
 * Renders `docs/validation.md` from `VALIDATION_MATRIX`, the tables the checks read: the document cannot say anything
 * the code does not enforce. `test/core/validation-doc.test.ts` fails when the committed file differs; regenerate it
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
    '<!-- Generated from lib/core/validation/rules.ts by scripts/gen-validation-doc.mjs; do not edit by hand. -->',
    '',
    'Every prop the constructs check, the rule it must satisfy and the message a broken rule produces. Every construct',
    'collects all problems and reports them at once, each line as `<construct path>: <field>: <message>`. Numbers must',
    'always be finite (NaN and Infinity are rejected everywhere).',
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
