// The judging half of the post-deploy conformance command (bin/verify.ts): what a deployed stack must show, from the
// answers of read-only AWS calls. Not part of the package's public API (the command is).
export * from './result';
export * from './metric-presence';
export * from './log-lines';
export * from './metric-filter';
export * from './permissions';
export * from './addon';
export * from './template';
export * from './pods';
export * from './burst';
