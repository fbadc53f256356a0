// What a reconciler run needs besides decide(): the serving description and routing facts a serving construct hands
// it, its configuration, where each signal comes from, the GetMetricData query and records, faults and retries.
export * from './routing-facts';
export * from './serving';
export * from './from-facts';
export * from './config';
export * from './signal-sources';
export * from './io';
export * from './faults';
export * from './retry';
