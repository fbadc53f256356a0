// The control loop's parameters as the serving constructs deploy them by default (one source for the constructs and
// the simulator's platform models).
export * from './control-loop';
