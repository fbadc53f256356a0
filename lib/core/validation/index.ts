// The validation layer every construct shares: CDK tokens, the checker and its messages, the rule tables, name rules
// and the generated docs/validation.md.
export * from './tokens';
export * from './checker';
export * from './rules';
export * from './names';
export * from './doc';
export * from './error';
