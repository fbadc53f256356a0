// The game day's control flow and its shortage injections, without AWS or Kubernetes clients (bin/game-day.ts has
// them). Not part of the package's public API (the command is).
export * from './injection';
export * from './runner';
export * from './observed';
