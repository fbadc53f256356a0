// The model servers: what each engine reads (engines.ts), the binding of a checked class to flags and variables,
// the admission limits, and which engine metrics become which metric of the contract.
export * from './engines';
export * from './binding';
export * from './admission';
export * from './engine-metrics';
