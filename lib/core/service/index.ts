// The service a user declares: its contract, its capacity classes and their checks, and the capacity plan.
export * from './contract';
export * from './capacity-class';
export * from './checks';
export * from './sizing';
export * from './footprints';
