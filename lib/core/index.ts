// The pure domain logic (no aws-cdk-lib, no AWS SDK), one folder per concept.

// ---- service: contract, capacity classes, checks, capacity plan
export * from './service';
// ---- hardware: instance profiles and the catalog
export * from './hardware';
// ---- runtime: engines, runtime binding, admission, engine metrics
export * from './runtime';
// ---- metrics: the metric contract and where each metric comes from
export * from './metrics';
// ---- policy: decide()
export * from './policy';
// ---- reconciler: serving description, routing facts, configuration, signal plan, faults
export * from './reconciler';
// ---- trust: image and model-data rules
export * from './trust';
// ---- validation: the shared checker and rule tables
export * from './validation';
