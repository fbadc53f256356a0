export * from './core';
export * from './trust';
export * from './sim';
