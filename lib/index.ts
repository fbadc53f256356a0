export * from './core';
export * from './trust';
