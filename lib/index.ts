export * from './core';
export * from './trust';
export * from './control';
export * from './sagemaker';
export * from './eks';
